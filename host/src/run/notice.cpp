#include "run/notice.hpp"

#include <array>
#include <utility>

namespace px::run {

namespace {

constexpr std::array<std::pair<NoticeKind, const char*>, 9> kNoticeNames{{
    {NoticeKind::weaker_seal, "weaker-seal"},
    {NoticeKind::unsealed, "unsealed"},
    {NoticeKind::seal, "seal"},
    {NoticeKind::alert, "alert"},
    {NoticeKind::network, "network"},
    {NoticeKind::kill_switch, "kill-switch"},
    {NoticeKind::environment, "environment"},
    {NoticeKind::timing, "timing"},
    {NoticeKind::open_request, "open-request"},
}};

}  // namespace

const char* to_string(NoticeKind kind) {
  for (const auto& [k, name] : kNoticeNames)
    if (k == kind) return name;
  return "seal";
}

NoticeKind notice_kind_from_string(const std::string& text) {
  for (const auto& [k, name] : kNoticeNames)
    if (text == name) return k;
  return NoticeKind::seal;
}

bool printed_by_default(NoticeKind kind) {
  switch (kind) {
    case NoticeKind::weaker_seal:
    case NoticeKind::unsealed:
    case NoticeKind::alert:
    case NoticeKind::network:
    case NoticeKind::environment:
    case NoticeKind::seal:
    case NoticeKind::open_request:
      return true;
    case NoticeKind::kill_switch:
    case NoticeKind::timing:
      return false;
  }
  return true;
}

}  // namespace px::run
