#pragma once
// Helpers shared by the three parsers: time stamps, shell quoting, paths, file discovery,
// and the session object every parser emits.
#include <string.h>  // memmem (GNU)

#include <atomic>
#include <cstdint>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

#include "common/json_dom.hpp"
#include "parallex_transcripts/result.hpp"

namespace parallex::transcripts {

// ISO-8601 ("2026-11-20T10:00:01.6Z", "...+02:00", no fraction) to epoch ms.
std::optional<std::int64_t> parse_iso8601_ms(std::string_view s);
// A JSON string's time stamp, as parse_iso8601_ms (read in place: no copy a line).
std::optional<std::int64_t> timestamp_ms(const jsonl::Value& v);
// Epoch ms to "YYYY-MM-DDTHH:MM:SS.mmmZ".
std::string format_iso8601_ms(std::int64_t ms);

// Whether `needle` occurs in `haystack`: memmem, which skips ahead far faster than
// string_view::find stopping at each occurrence of the needle's first character.
inline bool contains(std::string_view haystack, std::string_view needle) {
  return ::memmem(haystack.data(), haystack.size(), needle.data(), needle.size()) != nullptr;
}

// POSIX shell quoting (as Python's shlex.quote): bare when only safe characters.
std::string shell_quote(std::string_view s);
// argv [sh|bash|zsh, -c|-lc, S] gives S; any other argv its quoted join.
std::string command_from_argv(const std::vector<std::string>& argv);

// Absolute paths are kept as written; relative ones are joined to `cwd` and normalized.
std::string resolve_path(std::string_view cwd, std::string_view path);

// A `file://` URL (Codex writes a code-mode command's cwd as one: file:///home/me/x%20y) as
// the local path it names, percent escapes decoded; anything else is returned as it is.
std::string path_from_file_url(std::string_view s);

// Regular files under `root` (recursively) whose name ends with `suffix`, sorted.
// A missing/unreadable root adds a warning and returns nothing.
std::vector<std::string> list_files(const std::string& root, std::string_view suffix,
                                    std::vector<Warning>& warnings, bool recursive = true);

bool is_directory(const std::string& path);
bool is_regular_file(const std::string& path);
bool path_exists(const std::string& path);

// Unique strings in first-occurrence order.
class UniqueList {
 public:
  void add(const std::string& s) {
    if (s.empty() || !seen_.insert(s).second) return;
    items_.push_back(s);
  }
  nlohmann::json to_json() const { return nlohmann::json(items_); }
  nlohmann::json take_json() {
    seen_.clear();
    return nlohmann::json(std::move(items_));
  }
  const std::vector<std::string>& items() const { return items_; }

 private:
  std::vector<std::string> items_;
  std::unordered_set<std::string> seen_;
};

struct Command {
  std::string command;
  std::string cwd;
  std::optional<std::int64_t> exit_code;
  std::string status = "unknown";  // success | error | unknown
  std::string tool;
  std::optional<std::vector<std::string>> argv;
  std::optional<std::int64_t> at;  // epoch ms of the record holding the call, when it has one
  // Moves the strings into the object: a session's commands are the bulk of its report.
  nlohmann::json to_json() &&;
};

// What a session (or a Claude sidechain) did, in the contract's list shapes.
class Activity {
 public:
  void read(const std::string& path) { files_read_.add(path); }
  // `at`: epoch ms of the record holding the change; a repeated change keeps its first time.
  // `path` and `from` are taken by value: a resolved path is made for the call and moved in.
  void change(std::string path, const std::string& tool, const std::string& action,
              std::optional<std::int64_t> at, std::string from = {});
  void command(Command c) { commands_.push_back(std::move(c)); }
  void url(const std::string& u) { urls_.add(u); }
  void search(const std::string& q) { searches_.add(q); }
  // Whether `write` adds the actions' times (`action_times`, below): a session does; a Claude
  // sidechain, whose lists repeat part of its session's, does not.
  enum class Times { with, without };
  // Adds files_read, files_changed, commands, urls, web_searches to `out`, moving them out of
  // this Activity (which is left empty): called once, when the session's report is built.
  // The times go beside those lists, not into their entries, so the entries keep exactly the
  // extraction contract's fields (docs/transcripts.md): `action_times` is
  // {"commands": [...], "files_changed": [...]}, one ISO-8601 time (or null) per entry, in order.
  void write(nlohmann::json& out, Times times = Times::with);

 private:
  // A change as plain strings until `write`: its JSON object is made once, there, from moved
  // strings (not a map built, copied and moved per change).
  struct Change {
    std::string path, tool, action, from;
  };
  UniqueList files_read_;
  std::vector<Change> changes_;
  std::vector<std::optional<std::int64_t>> change_times_;  // one per changes_ entry
  std::unordered_set<std::string> change_keys_;
  std::vector<Command> commands_;
  UniqueList urls_;
  UniqueList searches_;
};

// Replaces invalid UTF-8 in every string of `j` (file names and SQLite text can hold any bytes),
// so that dump() never throws.
void sanitize_strings(nlohmann::json& j);

// A session as a parser's worker thread finishes it: its strings made valid UTF-8
// (sanitize_strings), what finish_sessions orders and filters it by, and the session in the
// form asked for (its object let go once its text is written).
struct Finished {
  std::optional<std::string> started_at, ended_at;
  std::string session_id;
  nlohmann::json session;  // Form::object
  std::string text;        // Form::text
};
Finished finished(nlohmann::json&& session, Form form);

// Drops the sessions outside `w`, sorts the rest by started_at (none last), then session_id,
// and moves them into `into` (its sessions or its texts, as `form` says).
void finish_sessions(std::vector<Finished>&& sessions, Window w, Form form, ParseResult& into);

// Threads for parsing `files` files of `bytes` in total: 1 for small inputs, else up to the
// cores (at most 8). PARALLEX_TRANSCRIPT_THREADS overrides it (benchmarks, debugging).
unsigned worker_count(const std::vector<std::string>& files);

// Runs fn(state, i) for every i in [0, n) on `threads` threads, each thread with one State of
// its own that every fn it runs reuses (read buffers and parsers: made, and their pages faulted
// in, once per thread rather than once per file); fn must not throw.
template <class State, class F>
void parallel_for_with(std::size_t n, unsigned threads, F&& fn) {
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    State state;
    for (std::size_t i = next++; i < n; i = next++) fn(state, i);
  };
  if (threads <= 1 || n <= 1) {
    work();
    return;
  }
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads && t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

// Runs fn(i) for every i in [0, n) on `threads` threads; fn must not throw.
template <class F>
void parallel_for(std::size_t n, unsigned threads, F&& fn) {
  struct None {};
  parallel_for_with<None>(n, threads, [&](None&, std::size_t i) { fn(i); });
}

// Rounds a money amount so sums of decimal costs compare equal to their decimal value.
double round_cost(double v);

}  // namespace parallex::transcripts
