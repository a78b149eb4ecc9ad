#pragma once
// The seal's control socket (SOCK_SEQPACKET, one message per event) between
// the supervisor and the seal's own processes, in one place: every message is
// a kind byte and a payload.
//
//   from the seal                             to the seal
//   error     ErrorKind name '\n' message     proxy_env   k=v '\0' k=v ...
//   notice    NoticeKind name '\n' text       proxy_fail  message
//   weakened  text: a required guarantee is missing (the user accepted it)
//   proxy     port, + the listening socket    go          the seccomp program
//   exec_failed  errno ' ' message
//   exec      + the seccomp listener (or none)
//   uncollected  what of the refusals will not be recorded, and why
//   exited    the command's raw wait status (from the seal's init)
//   limits    the process limit's mechanisms the seal set, ids joined by ','
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "run/notice.hpp"

namespace px::seal {

enum class SealMessage : char {
  error = 'E',        // set-up failed; the seal exits 125
  notice = 'N',       // something left out, not enforced, or timed
  weakened = 'K',     // a required guarantee is missing, accepted: the run's seal is weaker
  proxy = 'P',        // the proxy's listening socket is passed
  proxy_env = 'V',    // the supervisor's answer: the proxy's variables
  proxy_fail = 'F',   // the supervisor's answer: the proxy could not start
  exec_failed = 'X',  // execve failed
  exec = 'S',         // the command is about to exec (with the seccomp listener)
  uncollected = 'R',  // refusals that will not be recorded, and why
  exited = 'W',       // the command's wait status
  limits = 'L',       // which of its own process limit's mechanisms the seal set
  go = 'G',           // the supervisor's answer: its own set-up is done, the command may start
};

// Is `c` one of the kinds above (a message from a newer or broken peer is not)?
bool is_seal_message(char c);

// "policy\nthe message"; parse_error reads it back (an unknown kind reads as internal).
std::string encode_error(const Error& error);
Error decode_error(std::string_view payload);
std::string encode_notice(const run::Notice& notice);
run::Notice decode_notice(std::string_view payload);

}  // namespace px::seal
