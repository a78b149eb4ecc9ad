#pragma once
// Ask mode and live rules, for one run: what the proxy holds while the user
// is asked, the answers and rule changes that come over the run's control
// socket (`parallex approve`, `deny`, `allow --run`), and the record of them.
//
// The question never reaches the run's terminal: a harness's TUI owns it. It
// is listed by `parallex approve` (every run's open questions, with the
// process that asked) and, where the session has a desktop, shown by a
// notification (notify-send). The control socket refuses every request from
// inside a run, so a run cannot answer its own question.
//
// Threads: the proxy's hooks run on its io thread and must not block; handle()
// on the control socket's; record() on the run's. Calls into the proxy are
// made without `mu_` held (the proxy's calls wait for its io thread, whose
// hooks take `mu_`).
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "proxy/proxy.hpp"
#include "run/events.hpp"
#include "run/record_parts.hpp"

namespace px::supervisor {

struct RunQuestionsOptions {
  std::string run_id;
  std::string agent;                  // empty for an ad-hoc run ("always" needs an agent)
  std::chrono::seconds ask{0};        // the policy's; zero: ask mode is off (live rules still work)
  bool desktop_notifications = true;  // notify-send where DBUS_SESSION_BUS_ADDRESS is set
  // The run's event stream (run/events.hpp): each question asked and closed,
  // each rule change, as it happens. Outlives this object; null: none.
  const run::EventLog* events = nullptr;
};

class RunQuestions {
 public:
  explicit RunQuestions(RunQuestionsOptions options);
  ~RunQuestions();
  RunQuestions(const RunQuestions&) = delete;
  RunQuestions& operator=(const RunQuestions&) = delete;

  // For the proxy's config (proxy::ProxyConfig::ask_hooks).
  proxy::AskHooks hooks();
  // The run's proxy once it serves, with the run's processes (all in the
  // run's network namespace): the process that asked is found among them.
  // Null: detached, before the proxy stops (its rule changes are kept for the record).
  void attach(proxy::ProxyServer* proxy, std::function<std::vector<pid_t>()> processes);

  // A control request. Ops: "questions" (the open ones), "answer" {"question":
  // N, "allow": bool, "for": "once"|"run"|"always"}, "allow" / "deny"
  // {"rule": "HOST[:PORT]"}, "rules" (the changes so far). nullopt for
  // another op. `by` says who, for the record.
  std::optional<nlohmann::json> handle(const nlohmann::json& request, const std::string& by);

  // For run.json's `network_live`; nullopt when ask mode is off and nothing
  // was asked or changed.
  std::optional<run::NetworkLive> record() const;

 private:
  nlohmann::json describe(const proxy::Question& q);
  nlohmann::json answer(const nlohmann::json& request, const std::string& by);
  nlohmann::json change_rule(const nlohmann::json& request, bool allow, const std::string& by);
  void notify(const proxy::Question& q);

  RunQuestionsOptions options_;
  mutable std::mutex mu_;
  proxy::ProxyServer* proxy_ = nullptr;  // under mu_
  std::function<std::vector<pid_t>()> processes_;
  std::map<std::uint64_t, std::string> asked_by_;  // question id -> the process that asked (found once)
  std::vector<run::AskedQuestion> closed_;         // under mu_: the record's questions, in order
  std::map<std::uint64_t, std::string> scope_;     // question id -> "always" while its answer is applied
  std::vector<run::LiveRuleChange> changes_;       // under mu_: the live rule changes, once detached
};

}  // namespace px::supervisor
