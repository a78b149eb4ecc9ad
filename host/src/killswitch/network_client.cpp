#include "killswitch/network_client.hpp"

#include "common/host_rule.hpp"
#include "killswitch/control_socket.hpp"
#include "killswitch/kill_switch_client.hpp"

namespace px::killswitch {
namespace {

Status refuse_answer_inside_run() {
  if (auto why = client_inside_run_reason())
    return Error::policy("refused: " + *why +
                         "; only you, outside every run, answer its questions and change its rules.");
  return ok();
}

// One request to one run; its error, or the reply's, as an Error.
Result<nlohmann::json> ask_run(const RunEntry& run, nlohmann::json request) {
  request["v"] = kControlProtocolVersion;
  PX_TRY_ASSIGN(auto reply, send_request(run.socket, request));
  if (!reply.value("ok", false)) {
    const std::string why = reply.value("error", std::string("the run's supervisor refused it"));
    return Error::invalid("run " + run.id + ": " + why);
  }
  return reply;
}

Result<RunEntry> one_run(const fs::path& runtime_dir, const std::string& run) {
  if (run.empty()) return Error::invalid("say which run: --run RUN-ID (see `parallex runs`).");
  PX_TRY_ASSIGN(auto runs, select_runs(runtime_dir, RunSelection{false, run}));
  if (runs.size() != 1) {
    std::string ids;
    for (const auto& r : runs) ids += (ids.empty() ? "" : ", ") + r.id;
    return Error::invalid("'" + run + "' names " + std::to_string(runs.size()) + " runs (" + ids +
                          "); give one run id.");
  }
  return runs.front();
}

}  // namespace

Result<std::vector<OpenQuestion>> open_questions(const fs::path& runtime_dir, const std::string& run) {
  PX_TRY(refuse_answer_inside_run());
  std::vector<RunEntry> runs;
  if (run.empty()) {
    runs = list_runs(runtime_dir).live;
  } else {
    PX_TRY_ASSIGN(auto picked, select_runs(runtime_dir, RunSelection{false, run}));
    runs = std::move(picked);
  }
  std::vector<OpenQuestion> out;
  for (const auto& r : runs) {
    auto reply = ask_run(r, {{"op", "questions"}});
    if (!reply) continue;  // ended meanwhile, or a supervisor of an older parallex
    for (const auto& q : reply.value().value("questions", nlohmann::json::array())) out.push_back({r, q});
  }
  return out;
}

Result<Answered> answer_question(const fs::path& runtime_dir, const std::string& run, std::uint64_t id,
                                 bool allow, const std::string& scope, const std::string& by) {
  PX_TRY(refuse_answer_inside_run());
  RunEntry target;
  if (!run.empty()) {
    PX_TRY_ASSIGN(target, one_run(runtime_dir, run));
  } else {
    PX_TRY_ASSIGN(auto open, open_questions(runtime_dir));
    std::vector<RunEntry> with;
    for (const auto& q : open)
      if (q.question.value("question", std::uint64_t{0}) == id) with.push_back(q.run);
    if (with.empty())
      return Error::not_found(
          "no run has an open question " + std::to_string(id) +
          " (answered, timed out, or its run ended); `parallex approve` lists the open ones.");
    if (with.size() > 1) {
      std::string ids;
      for (const auto& r : with) ids += (ids.empty() ? "" : ", ") + r.id;
      return Error::invalid("runs " + ids + " each have a question " + std::to_string(id) +
                            ": add --run RUN-ID.");
    }
    target = with.front();
  }
  PX_TRY_ASSIGN(
      auto reply,
      ask_run(target, {{"op", "answer"}, {"question", id}, {"allow", allow}, {"for", scope}, {"by", by}}));
  return Answered{target, std::move(reply)};
}

Result<Answered> change_run_rule(const fs::path& runtime_dir, const std::string& run, bool allow,
                                 const std::string& rule, const std::string& by) {
  PX_TRY(refuse_answer_inside_run());
  // Checked here too, so a bad rule is named before any run is looked for.
  PX_TRY(parse_host_rule(rule));
  PX_TRY_ASSIGN(auto target, one_run(runtime_dir, run));
  PX_TRY_ASSIGN(auto reply, ask_run(target, {{"op", allow ? "allow" : "deny"}, {"rule", rule}, {"by", by}}));
  return Answered{target, std::move(reply)};
}

}  // namespace px::killswitch
