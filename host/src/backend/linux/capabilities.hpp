#pragma once
// What this kernel lets the seal enforce, as a list of guarantees: each one
// enforced, or missing and why. `parallex check` prints them; `parallex run`
// refuses when a required one is missing, unless the user accepted a weaker
// seal (--allow-weaker-seal).
#include <optional>
#include <string>
#include <vector>

namespace px::seal {

struct Guarantee {
  std::string id;    // stable key for --json, e.g. "landlock.scopes"
  std::string name;  // what the user gets, in words
  bool enforced = false;
  bool required = false;  // a missing required guarantee makes `run` refuse
  std::string detail;     // how it was detected, or why it is missing
};

// Probes the kernel for real (forks a short-lived child to try the namespaces).
std::vector<Guarantee> detect_guarantees();
// The user namespace guarantee, missing, when Ubuntu's AppArmor restriction
// takes it away from this executable; nullopt otherwise. Cheap (no fork): a
// run command calls it before anything else.
std::optional<Guarantee> userns_restricted();
// What `run` prints when it refuses for a missing required guarantee, in the
// words `parallex check` prints for it.
std::string refusal_message(const Guarantee& missing);

// What a run records of what the seal refused (seccomp, Landlock): not part of
// the seal's strength, so never a reason to call it weaker. `enforced` means recorded.
std::vector<Guarantee> detect_refusal_recording();

}  // namespace px::seal
