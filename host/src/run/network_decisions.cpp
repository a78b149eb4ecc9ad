#include "run/network_decisions.hpp"

#include <algorithm>

#include "agents/store.hpp"
#include "common/paths.hpp"
#include "killswitch/network_client.hpp"

namespace px::run {
namespace {

// "always": the agent's own rules get the host, so its next runs go there unasked.
Status remember_for_agent(const std::string& agent, const std::string& rule, std::string& said) {
  PX_TRY_ASSIGN(auto paths, agents::find_agent(agents::default_agents_root(), agent));
  PX_TRY_ASSIGN(auto config, agents::load_config(paths));
  if (std::find(config.allow.begin(), config.allow.end(), rule) == config.allow.end()) {
    if (config.network == policy::NetworkMode::offline) config.network = policy::NetworkMode::allowlist;
    if (config.network == policy::NetworkMode::allowlist) config.allow.push_back(rule);
    PX_TRY(agents::save_config(paths, config));
  }
  said = "agent " + agent + " allows " + rule + " from now on (parallex agent show " + agent +
         "; undo: parallex agent set " + agent + " --disallow " + rule + ")";
  return ok();
}

}  // namespace

Result<nlohmann::json> open_questions_json(const std::string& run) {
  PX_TRY_ASSIGN(auto open, killswitch::open_questions(parallex_runtime_dir(), run));
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& q : open) {
    nlohmann::json row = q.question;
    row["run"] = q.run.id;
    row["agent"] = q.run.agent;
    rows.push_back(std::move(row));
  }
  return nlohmann::json{{"questions", rows}};
}

Result<nlohmann::json> answer_question_json(const std::string& run, std::uint64_t id, bool allow,
                                            const std::string& scope, const std::string& by,
                                            std::vector<std::string>& said) {
  if (scope != "once" && scope != "run" && scope != "always")
    return Error::invalid("--for " + scope + ": give once, run or always");
  if (!allow && scope == "always")
    return Error::invalid("--for always is for an allow; a deny holds --for run or once");
  PX_TRY_ASSIGN(auto done, killswitch::answer_question(parallex_runtime_dir(), run, id, allow, scope, by));
  const auto& reply = done.reply;
  std::string remembered;
  if (allow && scope == "always") {
    // The run holds the answer for itself already; the agent's file is ours to write.
    const auto open_host = reply.value("host", std::string());
    const auto rule = reply.value("rule", std::string());
    if (auto s = remember_for_agent(done.run.agent, rule.empty() ? open_host : rule, remembered); !s)
      said.push_back("the run goes on with the answer, but the agent's rules were not changed: " +
                     s.error().message);
  }
  nlohmann::json j = reply;
  j["run"] = done.run.id;
  if (!remembered.empty()) j["agent_rule"] = remembered;
  return j;
}

Result<nlohmann::json> change_run_rule_json(std::string& run_id, const std::string& run, bool allow,
                                            const std::string& rule, const std::string& by) {
  PX_TRY_ASSIGN(auto done, killswitch::change_run_rule(parallex_runtime_dir(), run, allow, rule, by));
  run_id = done.run.id;
  return done.reply.value("change", nlohmann::json::object());
}

}  // namespace px::run
