#pragma once
// User namespace: the seal's privileges (mounting its view, bringing up lo)
// exist only inside a namespace of its own, and its processes cannot use them
// on anything the host owns.
#include "common/error.hpp"

namespace px::seal::userns {

enum class Mode {
  user_namespace,  // a new user namespace, the caller's uid and gid mapped to themselves
  root_only,       // root where user namespaces are off: namespaces without one, capabilities dropped
  none,            // no namespaces at all (a weaker seal the user accepted)
};

// Unshares a user namespace together with a pid namespace (the caller's next
// child is its pid 1). Root without user namespaces unshares the pid namespace
// alone. Fails with ErrorKind::unsupported when neither is possible.
Result<Mode> enter();

// Before execve: empties the bounding, ambient and inheritable sets, so that
// even uid 0 gains no capability from exec (harmless for other uids).
Status drop_capabilities();

}  // namespace px::seal::userns
