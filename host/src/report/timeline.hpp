#pragma once
// One run on one time axis (docs/ui.md, the report's timeline): the commands
// and file changes its sessions recorded with a time, and the events its
// record holds (network requests, files moved aside, questions...), oldest
// first; and its requests counted per host. What the page's report draws.
#include <vector>

#include "report/model.hpp"

namespace px::report {

struct Timeline {
  // [{t, kind: command|file|network, text, detail}]. A command's detail has
  // its index in the run's "activity.commands" ("command") and the files it
  // changed; a file change's, the index of the command that made it (or null).
  Json items = Json::array();
  Json hosts = Json::array();  // [{host, requests}], by name
};

// `run`: one run of build_report's document; `events`: read_run_events' of it.
// A command or change without a time is in the run's lists, not on the axis.
Timeline run_timeline(const Json& run, const std::vector<Json>& events);

}  // namespace px::report
