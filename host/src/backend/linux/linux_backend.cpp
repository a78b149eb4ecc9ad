// The Linux seal behind the Backend seam: its guarantees are the kernel's
// (capabilities.cpp), its launch is launch.cpp's spawn and wait.
#include <sys/utsname.h>

#include "backend/backend.hpp"
#include "backend/linux/landlock.hpp"
#include "backend/linux/capabilities.hpp"
#include "backend/linux/launch.hpp"

namespace px::backend {

namespace {

class LinuxBackend final : public Backend {
 public:
  const char* name() const override { return "linux"; }
  std::vector<Guarantee> guarantees(Probe probe) const override {
    return seal::detect_guarantees(probe == Probe::thorough);
  }
  std::vector<Guarantee> refusal_recording() const override { return seal::detect_refusal_recording(); }
  std::string platform() const override {
    utsname u{};
    ::uname(&u);
    return std::string("Linux ") + u.release + ", Landlock ABI " + std::to_string(seal::landlock::abi_version());
  }
  Result<LaunchResult> launch(const LaunchRequest& request) override {
    PX_TRY_ASSIGN(auto process, seal::spawn(request));
    if (request.on_started) request.on_started(process.pid, request.cgroup_fd >= 0);
    return seal::wait(process);
  }
};

}  // namespace

Backend& linux_backend() {
  static LinuxBackend backend;
  return backend;
}

}  // namespace px::backend
