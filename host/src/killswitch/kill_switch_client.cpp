#include "killswitch/kill_switch_client.hpp"

#include <thread>

#include "killswitch/control_socket.hpp"
#include "killswitch/direct_control.hpp"
#include "killswitch/global_pause.hpp"

namespace px::killswitch {
namespace {

Status refuse_inside_run() {
  if (auto why = client_inside_run_reason()) return Error::policy("refused: " + *why + ".");
  return ok();
}

std::string describe_all(const std::vector<RunEntry>& runs) {
  if (runs.empty()) return "no run is going";
  std::string s;
  for (const auto& r : runs)
    s += (s.empty() ? "" : ", ") + r.id + (r.agent.empty() ? "" : " (" + r.agent + ")");
  return "the live runs are " + s;
}

}  // namespace

Result<std::vector<RunEntry>> select_runs(const fs::path& runtime_dir, const RunSelection& selection) {
  auto live = list_runs(runtime_dir).live;
  if (selection.all) return live;
  if (selection.target.empty()) return Error::invalid("name a run id or an agent, or give --all.");
  for (const auto& r : live)
    if (r.id == selection.target) return std::vector<RunEntry>{r};
  std::vector<RunEntry> by_prefix, by_agent;
  for (const auto& r : live) {
    if (r.id.rfind(selection.target, 0) == 0) by_prefix.push_back(r);
    if (r.agent == selection.target) by_agent.push_back(r);
  }
  if (by_prefix.size() == 1) return by_prefix;
  if (by_prefix.size() > 1)
    return Error::invalid("'" + selection.target + "' starts " + std::to_string(by_prefix.size()) +
                          " run ids; give more of the id (" + describe_all(by_prefix) + ").");
  if (!by_agent.empty()) return by_agent;
  return Error::not_found("no live run has the id or agent '" + selection.target + "'; " +
                          describe_all(live) + " (see `parallex runs`).");
}

std::vector<RunOpOutcome> request_runs(const std::vector<RunEntry>& runs, const std::string& op,
                                       const std::string& by, std::chrono::milliseconds answer_within) {
  std::vector<RunOpOutcome> out(runs.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    out[i].run = runs[i];
    threads.emplace_back([&, i] {
      const RunEntry& run = runs[i];
      // The user's "stop everything" does not wait on the process it stops.
      const auto direct = [&](const std::string& why) {
        auto done = act_directly(run.socket.parent_path(), run, op, by, why);
        if (done) {
          out[i].ok = true;
          out[i].direct = done.value();
          out[i].reply = {{"ok", true},
                          {"run",
                           {{"id", run.id},
                            {"state", pending_direct_state(run.socket.parent_path(), run.id).value_or("")}}}};
        } else {
          out[i].error =
              "its supervisor " + why + ", and acting on the run without it failed: " + done.error().message;
        }
      };
      if (const auto stopped = supervisor_cannot_answer(run)) return direct(*stopped);
      auto reply =
          send_request(run.socket, {{"v", kControlProtocolVersion}, {"op", op}, {"by", by}}, answer_within);
      if (!reply && reply.error().kind == ErrorKind::conflict && process_alive(run.pid, run.pid_start))
        return direct("did not answer within " + std::to_string(answer_within.count()) + " ms");
      if (!reply) {
        out[i].error = reply.error().message;
        return;
      }
      out[i].reply = reply.value();
      out[i].ok = out[i].reply.value("ok", false);
      if (!out[i].ok) out[i].error = out[i].reply.value("error", "the supervisor refused without a reason");
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

Result<std::vector<RunOpOutcome>> pause_runs(const fs::path& runtime_dir, const RunSelection& selection) {
  PX_TRY(refuse_inside_run());
  // The file first: a run starting now either sees it or is in the registry
  // by the time we list it (it registers before it checks the file).
  if (selection.all) PX_TRY(set_global_pause(runtime_dir, "parallex pause --all"));
  PX_TRY_ASSIGN(auto runs, select_runs(runtime_dir, selection));
  return request_runs(runs, "pause",
                      selection.all ? "parallex pause --all" : "parallex pause " + selection.target);
}

Result<std::vector<RunOpOutcome>> resume_runs(const fs::path& runtime_dir, const RunSelection& selection) {
  PX_TRY(refuse_inside_run());
  if (selection.all) clear_global_pause(runtime_dir);
  PX_TRY_ASSIGN(auto runs, select_runs(runtime_dir, selection));
  return request_runs(runs, "resume",
                      selection.all ? "parallex resume --all" : "parallex resume " + selection.target);
}

Result<std::vector<RunOpOutcome>> kill_runs(const fs::path& runtime_dir, const RunSelection& selection) {
  PX_TRY(refuse_inside_run());
  PX_TRY_ASSIGN(auto runs, select_runs(runtime_dir, selection));
  return request_runs(runs, "kill",
                      "parallex kill " + (selection.all ? std::string("--all") : selection.target));
}

}  // namespace px::killswitch

namespace px::killswitch {

Result<KillSwitchDone> kill_switch_act(const fs::path& runtime_dir, const std::string& op,
                                       const RunSelection& selection) {
  Result<std::vector<RunOpOutcome>> result = Error::invalid("unknown kill switch operation " + op);
  if (op == "pause") result = pause_runs(runtime_dir, selection);
  if (op == "resume") result = resume_runs(runtime_dir, selection);
  if (op == "kill") result = kill_runs(runtime_dir, selection);
  if (!result) return result.error();
  KillSwitchDone done;
  done.outcomes = std::move(result).value();
  if (op == "pause" && selection.all) {
    done.note = done.outcomes.empty() ? "no run is going; " : "";
    done.note += "new runs start paused until `parallex resume --all`; the network of paused runs is cut";
  }
  if (op == "resume" && !selection.all && global_pause_since(runtime_dir))
    done.note = "a global pause is still on: new runs start paused until `parallex resume --all`";
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : done.outcomes) {
    if (!r.ok) done.all_ok = false;
    rows.push_back({{"id", r.run.id},
                    {"agent", r.run.agent},
                    {"ok", r.ok},
                    {"error", r.error},
                    {"state", r.reply.contains("run") ? r.reply["run"].value("state", "") : ""},
                    {"direct", r.direct}});
  }
  done.json = {{"runs", rows}, {"note", done.note}};
  return done;
}

}  // namespace px::killswitch
