#include "report/run_events.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <utility>

#include "run/events.hpp"
#include "run/record.hpp"

namespace px::report {

using ojson = nlohmann::ordered_json;

namespace {

// A line longer than this is no line any log writes (the proxy cuts hosts at
// 256 bytes, the broker paths at 512): it is skipped, not kept growing.
constexpr std::size_t kMaxLine = 1 << 20;
constexpr std::size_t kReadChunk = 1 << 16;

}  // namespace

bool GrowingFile::open() {
  if (fd_) return true;
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);  // a FIFO or a folder at a log's name is nothing to wait on
    return false;
  }
  fd_.reset(fd);
  offset_ = skip_when_opened_ ? static_cast<std::uint64_t>(st.st_size) : 0;
  return true;
}

void GrowingFile::skip_to_end() {
  skip_when_opened_ = true;
  if (open()) return;
  skip_when_opened_ = false;  // made later: every line of it is new
}

std::vector<std::string> GrowingFile::read_new() {
  std::vector<std::string> lines;
  if (!open()) return lines;
  char buf[kReadChunk];
  for (;;) {
    const ssize_t n = ::pread(fd_.get(), buf, sizeof buf, static_cast<off_t>(offset_));
    if (n <= 0) break;
    offset_ += static_cast<std::uint64_t>(n);
    std::size_t start = 0;
    for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
      if (buf[i] != '\n') continue;
      partial_.append(buf + start, i - start);
      if (partial_.size() <= kMaxLine && !partial_.empty()) lines.push_back(std::move(partial_));
      partial_.clear();
      start = i + 1;
    }
    partial_.append(buf + start, static_cast<std::size_t>(n) - start);
    if (partial_.size() > kMaxLine) partial_.resize(kMaxLine + 1);  // skipped at its newline
  }
  return lines;
}

RunEvents::RunEvents(RunSource source, bool from_start)
    : source_(std::move(source)),
      events_(source_.dir / run::kEventsFile),
      proxy_(source_.dir / "proxy.jsonl"),
      requests_(source_.dir / "requests.jsonl") {
  if (!from_start) {
    events_.skip_to_end();
    proxy_.skip_to_end();
    requests_.skip_to_end();
  }
}

std::vector<ojson> RunEvents::poll() {
  if (ended_) return {};
  // events.jsonl first: its run.end is written after the proxy and the broker
  // stopped, so once it is read, their logs read next are whole.
  std::vector<std::vector<ojson>> from(3);
  bool saw_end = false;
  auto parse = [this](const std::string& text) -> nlohmann::json {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      ++skipped_;
      return nullptr;
    }
    return j;
  };
  for (const auto& text : events_.read_new()) {
    const auto line = parse(text);
    if (line.is_null()) continue;
    auto e = run::event_from_event_line(line);
    if (!e) {
      ++skipped_;
      continue;
    }
    if ((*e)["type"] == run::event::run_end) saw_end = true;
    from[0].push_back(std::move(*e));
  }
  for (const auto& text : proxy_.read_new()) {
    const auto line = parse(text);
    if (line.is_null()) continue;
    if (auto e = run::event_from_proxy_line(line, source_.id, source_.agent))
      from[1].push_back(std::move(*e));
    else
      ++skipped_;
  }
  for (const auto& text : requests_.read_new()) {
    const auto line = parse(text);
    if (line.is_null()) continue;
    if (auto e = run::event_from_request_line(line, source_.id, source_.agent))
      from[2].push_back(std::move(*e));
    else
      ++skipped_;
  }
  // A record of an older Parallex (no events.jsonl), or of a run whose
  // events could not be written: its start, end and what it recorded come
  // from run.json once it has ended.
  if (!events_.exists() && run::record_ended(source_.dir)) {
    if (auto record = run::read_record(source_.dir); record && record.value().ended_at) {
      from[0] = run::events_of_old_record(record.value());
      saw_end = true;
    }
  }
  if (saw_end) ended_ = true;
  return merge_by_time(std::move(from));
}

std::vector<ojson> read_run_events(const RunSource& source) {
  RunEvents events(source, true);
  return events.poll();
}

std::vector<ojson> merge_by_time(std::vector<std::vector<ojson>> sequences) {
  // A heap of each sequence's next event, by (time, sequence): equal times
  // come in the order of the sequences given.
  using Head = std::pair<std::int64_t, std::size_t>;
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  std::vector<std::size_t> next(sequences.size(), 0);
  std::size_t total = 0;
  for (std::size_t i = 0; i < sequences.size(); ++i) {
    total += sequences[i].size();
    if (!sequences[i].empty()) heads.emplace(run::event_time_ms(sequences[i][0]), i);
  }
  std::vector<ojson> out;
  out.reserve(total);
  while (!heads.empty()) {
    const std::size_t i = heads.top().second;
    heads.pop();
    out.push_back(std::move(sequences[i][next[i]++]));
    if (next[i] < sequences[i].size()) heads.emplace(run::event_time_ms(sequences[i][next[i]]), i);
  }
  return out;
}

std::vector<RunSource> list_run_sources(const std::vector<RunsFolder>& folders,
                                        const std::function<bool(const std::string&)>& skip) {
  std::map<std::string, RunSource> by_id;
  for (const auto& folder : folders) {
    std::error_code ec;
    for (fs::directory_iterator it(folder.dir, ec), end; !ec && it != end; it.increment(ec)) {
      // A record folder is a folder, not a link to one somewhere else.
      if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
      const std::string id = it->path().filename().string();
      if (id.empty() || id.front() == '.' || by_id.count(id) || (skip && skip(id))) continue;
      std::error_code e2;
      if (!fs::exists(it->path() / "run.json", e2) && !fs::exists(it->path() / run::kEventsFile, e2) &&
          !fs::exists(it->path() / "proxy.jsonl", e2))
        continue;
      by_id.emplace(id, RunSource{id, it->path(), folder.agent});
    }
  }
  std::vector<RunSource> out;
  for (auto& [id, s] : by_id) out.push_back(std::move(s));
  return out;
}

}  // namespace px::report
