#pragma once
// Reading runs' events (run/events.hpp) from their record folders, whole or
// as they grow: events.jsonl, proxy.jsonl and requests.jsonl of each run,
// each mapped to the events schema and merged by time, each file's order
// kept. Only files are read: a reader, however slow or stopped, never holds
// up the run that writes them.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/unique_fd.hpp"

namespace px::report {

namespace fs = std::filesystem;

// An append-only JSON-lines file read as it grows: complete lines only (a
// line still being written is read once its newline is there).
class GrowingFile {
 public:
  explicit GrowingFile(fs::path path) : path_(std::move(path)) {}
  // Starts after what the file holds now (a file that does not exist yet is
  // read from its start once it does).
  void skip_to_end();
  // The lines appended since the last call.
  std::vector<std::string> read_new();
  bool exists() const { return static_cast<bool>(fd_); }

 private:
  bool open();
  fs::path path_;
  UniqueFd fd_;
  std::uint64_t offset_ = 0;
  std::string partial_;
  bool skip_when_opened_ = false;
};

// A run's record folder and the agent whose runs folder holds it ("" for an ad-hoc run).
struct RunSource {
  std::string id;
  fs::path dir;
  std::string agent;
};

// One run's events, read as its files grow.
class RunEvents {
 public:
  // `from_start` false: only what the run writes from now on.
  RunEvents(RunSource source, bool from_start);
  // The events written since the last call, in order.
  std::vector<nlohmann::ordered_json> poll();
  // run.end was read: the run writes nothing more.
  bool ended() const { return ended_; }
  // Lines that are not events (a damaged file), skipped.
  std::uint64_t skipped() const { return skipped_; }
  const RunSource& source() const { return source_; }

 private:
  RunSource source_;
  GrowingFile events_, proxy_, requests_;
  bool ended_ = false;
  std::uint64_t skipped_ = 0;
};

// A run's events, all of them: a record written before events.jsonl existed
// gives its start, end and what it recorded, with its proxy's and broker's.
std::vector<nlohmann::ordered_json> read_run_events(const RunSource& source);

// Sequences of events merged into one by time, each sequence's order kept
// (two events of one run never swap, even when a clock stepped back).
std::vector<nlohmann::ordered_json> merge_by_time(std::vector<std::vector<nlohmann::ordered_json>> sequences);

// A runs folder and whose it is ("" for the ad-hoc runs).
struct RunsFolder {
  fs::path dir;
  std::string agent;
};

// The run record folders in `folders` (RUN-ID/ with run.json or one of the
// logs), each id once (the first folder that holds it), oldest id first.
// `skip` (when given) leaves out ids before anything of their folder is
// looked at: a follower's known runs, another run than the one asked for.
std::vector<RunSource> list_run_sources(const std::vector<RunsFolder>& folders,
                                        const std::function<bool(const std::string&)>& skip = {});

}  // namespace px::report
