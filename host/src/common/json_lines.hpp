#pragma once
// The run's logs (proxy.jsonl, requests.jsonl): one JSON object per line,
// appended as the run goes, read back by reports. One writer and one reader, so
// every log is opened, written and parsed the same way.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace px {

class JsonLinesWriter {
 public:
  JsonLinesWriter() = default;  // writes nowhere
  // Creates the file (0600) or appends to it; never follows a link at its
  // name. `what` names the log in the error ("the proxy log").
  static Result<JsonLinesWriter> open(const std::filesystem::path& path, const std::string& what);
  // One write(2) of the whole line on an O_APPEND descriptor, so lines from
  // several threads never interleave. A full disk loses lines, not the work
  // they describe: the error is not reported. Strings with invalid UTF-8 are
  // written with U+FFFD, never thrown on.
  void append(const nlohmann::ordered_json& line) const;
  explicit operator bool() const { return static_cast<bool>(fd_); }

 private:
  UniqueFd fd_;
};

struct JsonLinesCount {
  std::uint64_t lines = 0;  // non-empty lines
  std::uint64_t bad = 0;    // not a JSON object, or refused by the caller
};

// Calls `each` for every non-empty line of `path` that is a JSON object; `each`
// returns false for an object that is not one of the log's lines (counted as
// bad). Errors: not_found when the file does not exist, io when it cannot be
// read.
Result<JsonLinesCount> read_json_lines(const std::filesystem::path& path,
                                       const std::function<bool(const nlohmann::json&)>& each);

}  // namespace px
