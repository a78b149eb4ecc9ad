#pragma once
// The pieces a report is built from. The report itself is one JSON document
// (nlohmann::ordered_json, so that --json keeps a stable key order); each view
// renders that document, so the three views cannot disagree.
#include <string>

#include <nlohmann/json.hpp>

namespace px::report {

using Json = nlohmann::ordered_json;

// One source of the report and what it cannot show. status: "used", "partial"
// (used, with problems), "missing" (could not be read) or "none" (does not apply
// to this run, e.g. a run folder that is not a git repository).
struct Source {
  std::string name;      // "run record", "transcripts (claude-code)", "proxy log", "git"
  std::string location;  // the file or folder read
  std::string status = "used";
  std::string message;     // why it is missing or partial; empty when used as is
  std::string cannot_show;  // what this source can never show

  Json to_json() const {
    return Json{{"name", name},       {"location", location},       {"status", status},
                {"message", message}, {"cannot_show", cannot_show}};
  }
};

}  // namespace px::report
