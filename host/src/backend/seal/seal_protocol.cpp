#include "backend/seal/seal_protocol.hpp"

namespace px::seal {

bool is_seal_message(char c) {
  switch (static_cast<SealMessage>(c)) {
    case SealMessage::error:
    case SealMessage::notice:
    case SealMessage::weakened:
    case SealMessage::proxy:
    case SealMessage::proxy_env:
    case SealMessage::proxy_fail:
    case SealMessage::exec_failed:
    case SealMessage::exec:
    case SealMessage::go:
    case SealMessage::uncollected:
    case SealMessage::exited:
    case SealMessage::limits:
      return true;
  }
  return false;
}

std::string encode_error(const Error& error) {
  return std::string(to_string(error.kind)) + "\n" + error.message;
}

Error decode_error(std::string_view payload) {
  const auto nl = payload.find('\n');
  if (nl == std::string_view::npos) return Error::internal(std::string(payload));
  return Error{error_kind_from_string(payload.substr(0, nl)), std::string(payload.substr(nl + 1))};
}

std::string encode_notice(const run::Notice& notice) {
  return std::string(run::to_string(notice.kind)) + "\n" + notice.text;
}

run::Notice decode_notice(std::string_view payload) {
  const auto nl = payload.find('\n');
  if (nl == std::string_view::npos) return {run::NoticeKind::seal, std::string(payload)};
  return {run::notice_kind_from_string(std::string(payload.substr(0, nl))),
          std::string(payload.substr(nl + 1))};
}

}  // namespace px::seal
