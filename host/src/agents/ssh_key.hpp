#pragma once
// The agent's signing key: ed25519 made with OpenSSL and written in OpenSSH's
// own formats (openssh-key-v1 for the private key, "ssh-ed25519 AAAA... comment"
// for the public key), so ssh-keygen and git's ssh signing read it directly.
#include <string>

#include "common/error.hpp"

namespace px::agents {

struct SshKeyPair {
  std::string private_key;  // "-----BEGIN OPENSSH PRIVATE KEY-----..."; keep 0600
  std::string public_key;   // "ssh-ed25519 AAAA... comment\n"
  std::string fingerprint;  // "SHA256:..." as `ssh-keygen -l` prints it
};

Result<SshKeyPair> generate_ed25519(const std::string& comment);

// "SHA256:<base64 without padding>" of a public key line's blob.
Result<std::string> ssh_fingerprint(const std::string& public_key_line);

}  // namespace px::agents
