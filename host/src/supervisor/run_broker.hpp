#pragma once
// The run's credential broker, from its Policy and plan (docs/broker.md):
// made before the seal, or the run does not start (every secret is read and
// checked first: a run never starts half-brokered). It gives the command's
// environment (the trust variables and the placeholders), the files the
// seal shows in the view only (the run's CA bundle over the system bundle,
// files that hold a secret with the placeholder in its place), and the
// broker the proxy terminates through.
//
// Unsealed, nothing confines the run: it could read every secret's source
// itself. No broker is made then; the credentials' variables get their
// secrets as before, and a notice says that neither the broker nor the
// request rules apply.
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "broker/broker.hpp"
#include "common/error.hpp"
#include "run/notice.hpp"
#include "run/plan.hpp"
#include "run/record.hpp"

namespace px::supervisor {

struct RunBroker {
  std::shared_ptr<broker::Broker> broker;  // null: nothing to broker, or unsealed
  backend::EnvMap env;                     // set over the command's environment
  std::vector<backend::ViewFile> view_files;
  std::vector<run::Notice> notices;
  std::filesystem::path request_log;  // <run>/requests.jsonl, when there is a broker
  // Secret -> what the run sees instead (its placeholder), to clean the
  // command's whole environment of a secret a keep pattern let through.
  std::vector<std::pair<std::string, std::string>> masks;
  // Model servers on this machine a credential goes to (its base URL named
  // one): the broker sits in front of their ports.
  std::vector<broker::BrokerConfig::LocalServer> local_servers;
};

// `run_dir` is the run's record folder, made when its id was claimed
// (requests.jsonl goes there).
Result<RunBroker> start_run_broker(const run::RunPlan& plan, const std::filesystem::path& run_dir);

// Every secret in `env` replaced by its placeholder: a variable the policy
// keeps (ANTHROPIC_*) may hold a brokered secret under another name.
void mask_secrets(const RunBroker& broker, backend::EnvMap& env);

// The end of the run: the record's `broker` entry and the notices (requests
// per host, exfiltration attempts, connections refused).
void record_broker_report(const RunBroker& broker, run::RunRecord& record);

// The broker as one service of the run (supervisor/run.cpp):
//   start()      before the seal: every secret read and checked, the run's CA
//                made; a failure stops the run there (nothing runs half-brokered);
//   add_to()     the command's environment: the broker's variables over what
//                the environment rules kept, and no brokered secret in any other;
//   stop()       the record's `broker` entry and its notices.
class CredentialBroker {
 public:
  using Say = std::function<void(const run::Notice&)>;
  Status start(const run::RunPlan& plan, const std::filesystem::path& run_dir, const Say& say,
               run::RunRecord& record);
  void add_to(backend::EnvMap& env) const;
  const RunBroker& parts() const { return parts_; }
  void stop(run::RunRecord& record) const { record_broker_report(parts_, record); }

 private:
  RunBroker parts_;
};

}  // namespace px::supervisor
