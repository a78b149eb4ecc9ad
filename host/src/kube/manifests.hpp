#pragma once
// A Policy as Kubernetes manifests: a Pod (or an agent-sandbox
// SandboxTemplate) that runs Parallex as its entrypoint with the policy's
// run, and an egress NetworkPolicy as the outer layer at L3/L4 (public
// addresses on the ports the policy opens; every private range refused). The
// proxy inside the pod stays the one that knows host names.
//
// Rendered only: nothing here talks to a cluster. What the policy holds that
// Kubernetes cannot express, or that does not reach the pod, is returned in
// `not_expressed`, one sentence each, never dropped silently.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "policy/policy.hpp"
#include "run/options.hpp"

namespace px::kube {

enum class Seal {
  full,                // user, mount, network and PID namespaces: the pod settings that allow them
  without_namespaces,  // Landlock, seccomp and the proxy under the runtime's defaults
};

enum class Kind {
  pod,               // a Pod and its NetworkPolicy
  sandbox_template,  // an agent-sandbox SandboxTemplate (its NetworkPolicy inside)
};

// A profile given as a file: its text goes into a ConfigMap the pod mounts.
struct ProfileFile {
  std::string name;  // the file's name, e.g. "ci.yaml"
  std::string text;
};

struct Request {
  std::string name;  // the resources' name (a DNS label)
  Seal seal = Seal::full;
  Kind kind = Kind::pod;
  std::string image;
  std::string memory;  // Kubernetes quantities
  std::string cpu;
  std::optional<std::string> agent;  // an agent's run; else `parallex run`
  run::RunOptions options;           // the run options given (what reaches the pod is passed on)
  std::optional<ProfileFile> profile_file;
  std::vector<std::string> command;            // after `--`
  std::optional<std::uint64_t> process_limit;  // the run's process limit
  // This machine's parallex, which an agent's git runs as its credential
  // helper: the image has its own.
  std::filesystem::path parallex_exe;
};

struct Rendered {
  std::vector<nlohmann::json> documents;
  std::vector<std::string> not_expressed;
};

// The resources' name from an agent's or a profile's (lowercase, '_' and '.'
// as '-'); "" when none can be made.
std::string resource_name(const std::string& from);
// "" when `name` is a DNS label (RFC 1123, at most 63 characters), else why not.
std::string check_resource_name(const std::string& name);
// "" when `q` is a plain Kubernetes quantity ("4Gi", "500m", "2"), else why not.
std::string check_quantity(const std::string& q);

Result<Rendered> render(const policy::Policy& policy, const Request& request);

}  // namespace px::kube
