#include "run/lost_questions.hpp"

#include <map>

#include "common/json_lines.hpp"
#include "run/events.hpp"

namespace px::run {

LostQuestions lost_questions(const std::filesystem::path& run_dir, const std::string& ended_at) {
  std::map<std::uint64_t, AskedQuestion> open;
  std::vector<std::uint64_t> order;
  LostQuestions out;
  // A run without events.jsonl (an older one, or one that asked nothing) has none.
  (void)read_json_lines(run_dir / kEventsFile, [&](const nlohmann::json& e) {
    const std::string type = e.value("type", "");
    if (!e.contains("question") || !e["question"].is_number_unsigned()) return true;
    const auto id = e["question"].get<std::uint64_t>();
    if (type == event::network_asked) {
      AskedQuestion q;
      q.question = id;
      q.host = e.value("host", "");
      q.port = e.value("port", std::uint16_t{0});
      q.rule_reason = e.value("reason", "");
      q.asked_at = e.value("time", "");
      q.outcome = "lost";
      q.answered_at = ended_at;
      if (!open.count(id)) order.push_back(id);
      open[id] = q;
      if (const auto s = e.value("seconds", std::uint64_t{0}); s > 0) out.ask_seconds = s;
    } else if (type == event::network_answered) {
      open.erase(id);
    }
    return true;
  });
  for (const auto id : order)
    if (const auto it = open.find(id); it != open.end()) out.questions.push_back(it->second);
  return out;
}

void close_lost_questions(const std::filesystem::path& run_dir, const std::string& run_id,
                          const std::string& agent, const LostQuestions& lost, const std::string& ended_at) {
  if (lost.questions.empty()) return;
  auto log = EventLog::open(run_dir, run_id, agent);
  if (!log) return;  // the record says it all the same
  for (const auto& q : lost.questions)
    log.value().emit_at(
        ended_at, event::network_answered,
        {{"question", q.question}, {"host", q.host}, {"port", q.port}, {"answer", q.outcome}});
}

}  // namespace px::run
