// Seatbelt behind the Backend seam. macOS runs a sealed command as
// `/usr/bin/sandbox-exec -p PROFILE -D ... -- CMD`; that program exists only
// on macOS, so on this platform the backend can write the profile (`parallex
// policy show --format sbpl`) and says plainly that it cannot run it. A macOS
// build plugs its launch in here.
#include "backend/backend.hpp"
#include "backend/seatbelt/seatbelt.hpp"

namespace px::backend {

namespace {

class SeatbeltBackend final : public Backend {
 public:
  const char* name() const override { return "seatbelt"; }
  std::string platform() const override { return "macOS Seatbelt"; }

  std::vector<Guarantee> guarantees(Probe) const override {
#if defined(__APPLE__)
    const bool here = true;
#else
    const bool here = false;
#endif
    return {{"seatbelt.sandbox_exec", "macOS Seatbelt (sandbox-exec) confines the run", here, true,
             here ? "sandbox-exec is part of macOS"
                  : "sandbox-exec exists only on macOS; here the profile can be written, not run"}};
  }

  Result<WrittenSeal> write_seal(const policy::Policy& policy, std::uint16_t proxy_port,
                                 const std::vector<std::string>& command) const override {
    PX_TRY_ASSIGN(auto profile, seatbelt::write_seatbelt_profile(policy, proxy_port));
    auto argv = seatbelt::sandbox_exec_argv(profile, command);
    return WrittenSeal{std::move(profile.text), std::move(profile.params), std::move(argv)};
  }

  Result<LaunchResult> launch(const LaunchRequest& request) override {
    if (!request.policy) return Error::internal("the Seatbelt backend was given no policy");
    // The profile is written either way, so a broken one fails here, on any platform.
    PX_TRY(seatbelt::write_seatbelt_profile(*request.policy, 1));
    return Error::unsupported(
        "Seatbelt runs only on macOS (sandbox-exec); on this machine `parallex policy show --format sbpl` "
        "writes the profile it would run under");
  }
};

}  // namespace

Backend& seatbelt_backend() {
  static SeatbeltBackend backend;
  return backend;
}

}  // namespace px::backend
