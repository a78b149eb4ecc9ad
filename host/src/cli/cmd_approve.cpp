// Deciding with the user while a run goes on (docs/ask.md):
//   parallex approve                       the open questions of every run
//   parallex approve N [--run ID] [--for once|run|always]
//   parallex deny N [--run ID] [--for once|run]
//   parallex allow --run ID HOST[:PORT]... / parallex deny --run ID HOST...
// A number is a question of ask mode; a host is a live change of the run's
// rule. "always" also writes the host to the agent's rules (agent.yaml), so
// its next runs are not asked; `agent set NAME --disallow HOST:PORT` undoes it.
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "common/host_rule.hpp"
#include "common/paths.hpp"
#include "common/shown.hpp"
#include "killswitch/network_client.hpp"
#include "run/network_decisions.hpp"

namespace px::cli {
namespace {

struct DecideOptions {
  std::vector<std::string> targets;  // a question number, or hosts
  std::string run;
  std::string scope = "once";
  bool json = false;
};

std::string who(const char* verb) {
  return std::string("parallex ") + verb + " (uid " + std::to_string(::getuid()) + ")";
}

bool is_question_number(const std::string& s) {
  return !s.empty() && s.size() <= 12 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int list_questions(const DecideOptions& o) {
  if (o.json) {
    auto listed = run::open_questions_json(o.run);
    if (!listed) return report_error(listed.error());
    print_json(listed.value());
    return 0;
  }
  auto open = killswitch::open_questions(parallex_runtime_dir(), o.run);
  if (!open) return report_error(open.error());
  if (open.value().empty()) {
    std::printf(
        "no run is asking anything now (ask mode: --ask on a run, or network.ask in a profile or agent)\n");
    return 0;
  }
  for (const auto& q : open.value()) {
    const auto& j = q.question;
    std::printf("%-4s run %s%s asks for %s:%u (%s, %llds left)\n",
                std::to_string(j.value("question", std::uint64_t{0})).c_str(), shown(q.run.id).c_str(),
                q.run.agent.empty() ? "" : (" (" + shown(q.run.agent) + ")").c_str(),
                shown(j.value("host", "")).c_str(), j.value("port", 0u),
                shown(j.value("rule_reason", "")).c_str(),
                static_cast<long long>(j.value("seconds_left", 0)));
    if (j.contains("process")) std::printf("     by %s\n", shown(j.value("process", "")).c_str());
  }
  std::printf("answer: parallex approve N [--for once|run|always], or parallex deny N [--for once|run]\n");
  return 0;
}

int answer(const DecideOptions& o, bool allow) {
  if (o.targets.size() != 1)
    return report_error(Error::invalid("answer one question at a time: parallex " +
                                       std::string(allow ? "approve" : "deny") + " N"));
  const std::uint64_t id = std::stoull(o.targets.front());
  std::vector<std::string> said;
  auto done = run::answer_question_json(o.run, id, allow, o.scope, who(allow ? "approve" : "deny"), said);
  if (!done) return report_error(done.error());
  for (const auto& line : said) say(line);
  if (o.json) {
    print_json(done.value());
    return 0;
  }
  const std::string remembered = done.value().value("agent_rule", std::string());
  std::printf("%s question %llu of run %s (%s)\n", allow ? "allowed" : "denied",
              static_cast<unsigned long long>(id), shown(done.value().value("run", "")).c_str(),
              o.scope == "once"  ? "this time"
              : o.scope == "run" ? "for the rest of the run"
                                 : "always");
  if (!remembered.empty()) std::printf("%s\n", remembered.c_str());
  return 0;
}

int change_rules(const DecideOptions& o, bool allow) {
  if (o.run.empty())
    return report_error(Error::invalid(std::string("say which run: parallex ") + (allow ? "allow" : "deny") +
                                       " --run RUN-ID HOST (see `parallex runs`)"));
  if (o.targets.empty())
    return report_error(Error::invalid(std::string("name a host: parallex ") + (allow ? "allow" : "deny") +
                                       " --run " + o.run + " HOST[:PORT]"));
  int status = 0;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& rule : o.targets) {
    std::string run_id;
    auto done = run::change_run_rule_json(run_id, o.run, allow, rule, who(allow ? "allow" : "deny"));
    if (!done) {
      status = report_error(done.error());
      continue;
    }
    rows.push_back(done.value());
    if (!o.json)
      std::printf("run %s now %s %s\n", shown(run_id).c_str(), allow ? "allows" : "refuses",
                  shown(rule).c_str());
  }
  if (o.json) print_json({{"changes", rows}});
  return status;
}

int approve(const DecideOptions& o) {
  if (o.targets.empty()) return list_questions(o);
  if (!is_question_number(o.targets.front()))
    return report_error(
        Error::invalid("approve " + o.targets.front() +
                       ": give a question's number (`parallex approve` lists them); to allow a host "
                       "in a running run: parallex allow --run RUN-ID HOST"));
  return answer(o, true);
}

int deny(const DecideOptions& o) {
  if (o.targets.empty()) return list_questions(o);
  if (is_question_number(o.targets.front())) {
    if (o.scope == "always")
      return report_error(Error::invalid("--for always is for an allow; a deny holds --for run or once"));
    return answer(o, false);
  }
  return change_rules(o, false);
}

int allow(const DecideOptions& o) {
  return change_rules(o, true);
}

Action setup_approve(CLI::App& app, GlobalOptions&) {
  auto o = std::make_shared<DecideOptions>();
  app.add_option("question", o->targets, "The question's number; none: list the open questions");
  app.add_option("--run", o->run,
                 "The run (its id, the start of one, or its agent); needed when two runs ask");
  app.add_option("--for", o->scope,
                 "once (default), run (the rest of this run), always (written to the agent's rules)")
      ->check(CLI::IsMember({"once", "run", "always"}));
  app.add_flag("--json", o->json, "Print JSON");
  return [o] { return approve(*o); };
}

Action setup_deny(CLI::App& app, GlobalOptions&) {
  auto o = std::make_shared<DecideOptions>();
  app.add_option("target", o->targets,
                 "A question's number, or (with --run) hosts to refuse in that run from now on");
  app.add_option("--run", o->run, "The run (its id, the start of one, or its agent)");
  app.add_option("--for", o->scope,
                 "For a question: once (default) or run (refuse the host for the rest of the run)")
      ->check(CLI::IsMember({"once", "run"}));
  app.add_flag("--json", o->json, "Print JSON");
  return [o] { return deny(*o); };
}

Action setup_allow(CLI::App& app, GlobalOptions&) {
  auto o = std::make_shared<DecideOptions>();
  app.add_option("host", o->targets, "HOST (80 and 443), HOST:PORT, or *.HOST (its subdomains)")->required();
  app.add_option("--run", o->run, "The run (its id, the start of one, or its agent)")->required();
  app.add_flag("--json", o->json, "Print JSON");
  return [o] { return allow(*o); };
}

}  // namespace

PARALLEX_COMMAND("approve", "Answer yes to a run's question (ask mode); with no number, list the open ones",
                 34, setup_approve);
PARALLEX_COMMAND("deny", "Answer no to a run's question, or refuse a host in a running run (--run)", 35,
                 setup_deny);
PARALLEX_COMMAND("allow", "Allow a host in a running run at once (--run ID HOST[:PORT])", 36, setup_allow);

}  // namespace px::cli
