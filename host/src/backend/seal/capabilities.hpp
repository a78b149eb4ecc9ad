#pragma once
// What this kernel lets the seal enforce, as a list of guarantees: each one
// enforced, or missing and why. `parallex check` prints them; `parallex run`
// refuses when a required one is missing, unless the user accepted a weaker
// seal (--allow-weaker-seal).
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.hpp"

namespace px::seal {

using backend::Guarantee;

// Probes the kernel for real (forks a short-lived child to try the namespaces).
// `probe_namespaces` false: the namespace rows are not tried (a run's start:
// the launch fails closed on a missing one, naming it) and read as enforced.
std::vector<Guarantee> detect_guarantees(bool probe_namespaces = true);
// The user namespace guarantee, missing, when Ubuntu's AppArmor restriction
// takes it away from this executable; nullopt otherwise. Cheap (no fork).
std::optional<Guarantee> userns_restricted();

// What a run records of what the seal refused (seccomp, Landlock): not part of
// the seal's strength, so never a reason to call it weaker. `enforced` means recorded.
std::vector<Guarantee> detect_refusal_recording();

}  // namespace px::seal
