// The Linux seal behind the Backend seam: its guarantees are the kernel's
// (capabilities.cpp), its launch is launch.cpp's spawn and wait.
#include <sys/utsname.h>

#include "backend/backend.hpp"
#include "backend/seal/capabilities.hpp"
#include "backend/seal/host_environment.hpp"
#include "backend/seal/landlock.hpp"
#include "backend/seal/launch.hpp"
#include "backend/seal/process_limit.hpp"
#include "backend/seal/seccomp.hpp"
#include "common/paths.hpp"

namespace px::backend {

namespace {

class LinuxBackend final : public Backend {
 public:
  const char* name() const override { return "linux"; }
  std::vector<Guarantee> guarantees(Probe probe) const override {
    return seal::detect_guarantees(probe == Probe::thorough);
  }
  std::optional<std::vector<ProcessLimitMechanism>> process_limit_mechanisms(Probe probe) const override {
    return seal::process_limit::available(probe == Probe::thorough);
  }
  std::vector<Guarantee> refusal_recording() const override { return seal::detect_refusal_recording(); }
  std::string platform() const override {
    utsname u{};
    ::uname(&u);
    return std::string("Linux ") + u.release + ", Landlock ABI " +
           std::to_string(seal::landlock::abi_version());
  }
  std::string build_features() const override {
    return "Landlock ABI " + std::to_string(seal::landlock::kHighestAbi) +
           " (the highest this build uses; `parallex check` says what this kernel offers)";
  }
  Environment environment(const std::vector<Guarantee>& found) const override {
    auto enforced = [&](const char* id) {
      for (const auto& g : found)
        if (g.id == id) return g.enforced;
      return false;
    };
    auto e = seal::detect_environment(enforced("namespaces.mount"), seal::landlock::abi_version(),
                                      enforced("cgroup2"));
    return {std::move(e.kind), std::move(e.name), std::move(e.costs), e.supported};
  }
  std::string security_module_profile() const override {
    return seal::apparmor_profile_for(parallex_executable());
  }
  std::string container_seccomp_profile() const override { return seal::seccomp::container_profile(); }
  Result<LaunchResult> launch(const LaunchRequest& request) override {
    PX_TRY_ASSIGN(auto process, seal::spawn(request));
    // The supervisor's own set-up runs while the seal builds its view, on
    // the other core; the command waits for both.
    if (request.on_started)
      if (auto ready = request.on_started(process.pid, request.cgroup_fd >= 0); !ready) {
        seal::abandon(process);
        return ready.error();
      }
    PX_TRY(seal::release(process));
    return seal::wait(process);
  }
};

}  // namespace

Backend& linux_backend() {
  static LinuxBackend backend;
  return backend;
}

}  // namespace px::backend
