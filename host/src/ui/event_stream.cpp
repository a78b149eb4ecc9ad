#include "ui/event_stream.hpp"

#include "common/json_io.hpp"
#include "run/runs_folders.hpp"

namespace px::ui {

namespace {
constexpr auto kKeepAlive = std::chrono::seconds(15);
}

EventStream::EventStream(std::optional<std::int64_t> since_ms)
    : follower_([] { return run::every_runs_folder(); }, "", since_ms),
      last_sent_(std::chrono::steady_clock::now()) {}

std::string sse_message(const nlohmann::ordered_json& e) {
  std::string type = e.contains("type") && e["type"].is_string() ? e["type"].get<std::string>() : "event";
  for (char& c : type)
    if (c == '\n' || c == '\r') c = ' ';
  return "event: " + type + "\ndata: " + to_json_text(e) + "\n\n";
}

std::string EventStream::next() {
  std::string out;
  for (const auto& e : follower_.poll()) out += sse_message(e);
  const auto now = std::chrono::steady_clock::now();
  if (out.empty() && now - last_sent_ >= kKeepAlive) out = ": keep-alive\n\n";
  if (!out.empty()) last_sent_ = now;
  return out;
}

}  // namespace px::ui
