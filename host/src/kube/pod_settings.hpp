#pragma once
// What a pod that runs Parallex needs, in one place: the container image's
// paths and user, the two security contexts (the full seal, the seal without
// namespaces), the volumes, the cluster's resolver and the address ranges the
// outer NetworkPolicy refuses. `parallex kube` (manifests.cpp) renders from
// these; docs/containers.md explains each one. Change them here, and the
// golden files under tests/kube/golden follow (UPDATE_GOLDEN=1).
#include <array>
#include <cstdint>
#include <string_view>

namespace px::kube {

// The image packaging/container/build-image.sh builds from the Containerfile,
// under the name podman gives it (`--image` names another). It is in no
// registry: it is loaded onto the nodes (`podman save` and the node runtime's
// import keep this name), so its pods never pull it (kDefaultImagePullPolicy).
// A short `parallex:latest` would be docker.io/library/parallex:latest to a
// node, pulled from Docker Hub at every start (`:latest`'s default policy).
inline constexpr std::string_view kDefaultImage = "localhost/parallex:latest";
// A node without the default image says so (ErrImageNeverPull) instead of
// asking whatever answers as `localhost` for it. An image given with
// `--image` keeps Kubernetes' own pull policy.
inline constexpr std::string_view kDefaultImagePullPolicy = "Never";
// The image's user: the supervisor runs unprivileged, in the pod as on a laptop.
inline constexpr std::int64_t kUser = 1000;
inline constexpr std::int64_t kGroup = 1000;

// Inside the container.
inline constexpr std::string_view kParallexHome = "/var/lib/parallex";  // PARALLEX_HOME: data, state, config
inline constexpr std::string_view kProjectPath = "/work/project";       // the run folder (--in)
inline constexpr std::string_view kHomePath = "/home/parallex";         // the image user's $HOME
inline constexpr std::string_view kProfilesDir =
    "/var/lib/parallex/profiles";  // a profile file, as a ConfigMap
// The agent's token: one key of a Secret, mounted as the file the agent's
// store keeps it in (agents/NAME/gh/hosts.yml), readable by the pod's group
// only. The supervisor reads it; the sealed run sees a placeholder there.
inline constexpr std::string_view kTokenKey = "hosts.yml";
inline constexpr std::int32_t kTokenMode = 0440;

// The full seal (user, mount, network and PID namespaces) in a pod: the pod's
// own user namespace, a seccomp profile that lets Parallex make namespaces
// (installed on the node under the kubelet's seccomp folder), and /proc
// unmasked so that the seal can mount a /proc of its own PID namespace.
inline constexpr std::string_view kFullSealSeccompProfile = "profiles/parallex.json";
inline constexpr std::string_view kFullSealProcMount = "Unmasked";

// The seal without namespaces runs under the runtime's default restrictions
// (RuntimeDefault seccomp, no capabilities); the image's user accepts it once
// with this setting, instead of a flag on every command.
inline constexpr std::string_view kNamespaceLessSettingName = "PARALLEX_ALLOW_WEAKER_SEAL";
inline constexpr std::string_view kNamespaceLessSettingValue = "1";

// Resources when the user gives none (the Policy holds no memory or CPU limit).
inline constexpr std::string_view kDefaultMemory = "4Gi";
inline constexpr std::string_view kDefaultCpu = "2";

// A SandboxTemplate gives each sandbox a project volume and a state volume
// (its run records) of its own, made by agent-sandbox from these claims.
inline constexpr std::string_view kProjectStorage = "10Gi";
inline constexpr std::string_view kStateStorage = "1Gi";

// The cluster's DNS resolver: kube-dns / CoreDNS in kube-system, as kubeadm,
// GKE, EKS and AKS label it.
inline constexpr std::string_view kDnsNamespace = "kube-system";
inline constexpr std::string_view kDnsPodLabel = "k8s-app";
inline constexpr std::string_view kDnsPodLabelValue = "kube-dns";

// Every address that is not a public one, as the proxy classifies addresses
// (proxy/host_rules.hpp, `classify`; a test checks the two agree): refused by
// the NetworkPolicy, whatever the policy allows. 169.254.169.254 (the cloud
// metadata service) is in 169.254.0.0/16.
inline constexpr std::array<std::string_view, 11> kRefusedV4{
    "0.0.0.0/8",    "10.0.0.0/8",     "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
    "192.0.0.0/24", "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4",
};
inline constexpr std::array<std::string_view, 9> kRefusedV6{
    "::/96",    "::ffff:0:0/96", "64:ff9b::/96", "2001:db8::/32", "2002::/16",
    "fc00::/7", "fe80::/10",     "fec0::/10",    "ff00::/8",
};

// The labels every rendered resource carries; the NetworkPolicy selects by them.
inline constexpr std::string_view kNameLabel = "app.kubernetes.io/name";
inline constexpr std::string_view kInstanceLabel = "app.kubernetes.io/instance";

}  // namespace px::kube
