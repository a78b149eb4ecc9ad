#pragma once
// What a run tells its user, as data: the kind says who cares (the CLI prints
// by kind, reports show them, workspaces turn them into events), the text is
// one sentence in the user's words.
#include <string>
#include <vector>

namespace px::run {

enum class NoticeKind {
  weaker_seal,   // the seal lacks a guarantee the user accepted to go without
  unsealed,      // no seal at all (the user chose it)
  seal,          // something the seal left out or did for the run (a grant skipped, state kept)
  alert,         // the run did something the user must hear of (a decoy opened, a new .git, refusals)
  network,       // what the network rule refused
  kill_switch,   // paused, resumed, killed; how the run is tracked
  environment,   // a variable the run did not get, and why
  timing,        // PARALLEX_SEAL_TIMING=1: how long each step of the seal took
  open_request,  // a page the run asked to open, not opened (supervisor/run_opener.hpp)
};

struct Notice {
  NoticeKind kind = NoticeKind::seal;
  std::string text;
};

const char* to_string(NoticeKind kind);
NoticeKind notice_kind_from_string(const std::string& text);  // unknown names read as `seal`

// The kinds printed on the terminal whatever the verbosity; the others (how
// the run is tracked, timings) are printed with -v. All are kept in the record.
bool printed_by_default(NoticeKind kind);

}  // namespace px::run
