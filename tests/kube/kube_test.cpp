// `parallex kube` as a user runs it: the real executable renders manifests
// for a profile or an agent; each rendering is compared with its golden file
// (one per policy feature's mapping; UPDATE_GOLDEN=1 rewrites them) and
// validated strictly against the Kubernetes schemas (tests/kube/validator).
#include <gtest/gtest.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/network_v4.hpp>
#include <boost/asio/ip/network_v6.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kube/pod_settings.hpp"
#include "proxy/host_rules.hpp"
#include "spawn.hpp"
#include "test_paths.hpp"

namespace fs = std::filesystem;
using px::test::Outcome;

namespace {

const fs::path kTestDir = fs::path(PARALLEX_SOURCE_DIR) / "tests/kube";

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

class KubeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/px-kube-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    tmp_ = tmpl;
    fs::create_directories(tmp_ / "project");
    fs::create_directories(tmp_ / "home");
    fs::create_directories(tmp_ / "out");
  }
  void TearDown() override { fs::remove_all(tmp_); }

  // Runs parallex with its own home and state under the test's folder.
  Outcome parallex(std::vector<std::string> args, const std::string& input = {}) {
    args.insert(args.begin(), PARALLEX_EXE);
    return px::test::spawn_and_wait(
        args,
        {"PARALLEX_HOME=" + (tmp_ / "px").string(), "HOME=" + (tmp_ / "home").string(),
         "XDG_RUNTIME_DIR=" + (tmp_ / "run").string()},
        tmp_ / "out", std::chrono::seconds(60), input);
  }

  // `parallex kube ARGS --in PROJECT --format json -- make test`.
  Outcome kube(std::vector<std::string> args) {
    std::vector<std::string> argv{"kube"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--in", (tmp_ / "project").string(), "--format", "json", "--", "make", "test"});
    return parallex(argv);
  }

  // What stays the same from one machine to the next: the test's folder as $TMP.
  std::string stable(std::string s) {
    replace_all(s, tmp_.string(), "$TMP");
    return s;
  }

  // The rendering against tests/kube/golden/NAME.json and NAME.stderr.
  void expect_golden(const std::string& name, const Outcome& o) {
    ASSERT_EQ(o.status, 0) << o.err;
    const std::string out = stable(nlohmann::json::parse(o.out).dump(2) + "\n");
    const std::string err = stable(o.err);
    const fs::path golden = kTestDir / "golden" / name;
    if (const char* u = std::getenv("UPDATE_GOLDEN"); u && std::string(u) == "1") {
      std::ofstream(golden.string() + ".json") << out;
      std::ofstream(golden.string() + ".stderr") << err;
    }
    EXPECT_EQ(out, px::test::slurp(golden.string() + ".json"))
        << "rendering differs from " << golden << ".json";
    EXPECT_EQ(err, px::test::slurp(golden.string() + ".stderr"))
        << "notes differ from " << golden << ".stderr";
  }

  // The validator's verdict on a v1 List: its problems, one a line.
  Outcome validate(const std::string& list) {
    return px::test::spawn_and_wait({"node", (kTestDir / "validator/validate.mjs").string()}, {},
                                    tmp_ / "out", std::chrono::seconds(60), list);
  }
  void expect_valid(const Outcome& o) {
    if (!px::test::have("node") || !fs::exists(kTestDir / "validator/node_modules/kubernetes-models"))
      GTEST_SKIP() << "the schemas are not installed: PARALLEX_WITH_TEST_TOOLS=1 scripts/install-deps.sh";
    const auto v = validate(o.out);
    EXPECT_EQ(v.status, 0) << v.out << v.err;
  }

  void make_agent(const std::string& name, const std::vector<std::string>& rules) {
    std::vector<std::string> argv{"agent", "new", name, "--email", name + "@example.com"};
    argv.insert(argv.end(), rules.begin(), rules.end());
    const auto made = parallex(argv);
    ASSERT_EQ(made.status, 0) << made.err;
  }

  fs::path tmp_;
};

nlohmann::json item(const Outcome& o, const std::string& kind) {
  const auto list = nlohmann::json::parse(o.out);
  for (const auto& i : list["items"])
    if (i["kind"] == kind) return i;
  return nullptr;
}

// The NetworkPolicy refuses exactly what the proxy calls not public: each
// refused range's first and last address is not global, and the addresses
// just outside the private ranges are.
TEST(KubeRanges, RefusedRangesAreWhatTheProxyRefuses) {
  using namespace boost::asio::ip;
  for (auto cidr : px::kube::kRefusedV4) {
    const auto net = make_network_v4(std::string(cidr));
    EXPECT_NE(px::proxy::classify(net.network()), px::proxy::AddressClass::global) << cidr;
    EXPECT_NE(px::proxy::classify(net.broadcast()), px::proxy::AddressClass::global) << cidr;
  }
  for (auto cidr : px::kube::kRefusedV6) {
    const auto net = make_network_v6(std::string(cidr));
    EXPECT_NE(px::proxy::classify(net.network()), px::proxy::AddressClass::global) << cidr;
  }
  for (const char* a : {"169.254.169.254", "10.1.2.3", "100.100.100.200", "172.31.255.255", "192.168.1.1",
                        "127.0.0.1", "fd00:ec2::254", "::ffff:10.0.0.1"}) {
    const auto addr = make_address(a);
    bool refused = false;
    for (auto cidr : px::kube::kRefusedV4) {
      const auto net = make_network_v4(std::string(cidr));
      if (addr.is_v4() && make_network_v4(addr.to_v4(), net.prefix_length()).canonical() == net)
        refused = true;
    }
    for (auto cidr : px::kube::kRefusedV6) {
      const auto net = make_network_v6(std::string(cidr));
      if (addr.is_v6() && make_network_v6(addr.to_v6(), net.prefix_length()).canonical() == net)
        refused = true;
    }
    EXPECT_TRUE(refused) << a << " is not refused by the NetworkPolicy";
  }
  for (const char* a : {"11.0.0.0", "100.128.0.0", "172.32.0.0", "192.169.0.0", "1.1.1.1", "2606:4700::1111"})
    EXPECT_EQ(px::proxy::classify(make_address(a)), px::proxy::AddressClass::global) << a;
}

// The default profile: an allowlist with no host is offline, so nothing
// leaves the pod; the full seal's pod settings.
TEST_F(KubeTest, DefaultProfileFullSeal) {
  const auto o = kube({});
  expect_golden("default-full", o);
  const auto pod = item(o, "Pod");
  EXPECT_EQ(pod["spec"]["hostUsers"], false);
  EXPECT_EQ(pod["spec"]["automountServiceAccountToken"], false);
  EXPECT_EQ(pod["spec"]["securityContext"]["seccompProfile"]["type"], "Localhost");
  EXPECT_EQ(pod["spec"]["containers"][0]["securityContext"]["procMount"], "Unmasked");
  EXPECT_TRUE(item(o, "NetworkPolicy")["spec"]["egress"].empty());
  expect_valid(o);
}

// The seal without namespaces: the runtime's defaults, and the setting that accepts it.
TEST_F(KubeTest, WithoutNamespaces) {
  const auto o = kube({"--seal", "without-namespaces"});
  expect_golden("without-namespaces", o);
  const auto pod = item(o, "Pod");
  EXPECT_FALSE(pod["spec"].contains("hostUsers"));
  EXPECT_EQ(pod["spec"]["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
  EXPECT_FALSE(pod["spec"]["containers"][0]["securityContext"].contains("procMount"));
  expect_valid(o);
}

// Host names: public addresses on the ports they open (a host's own port
// too), and a note that the names stay the proxy's.
TEST_F(KubeTest, AllowedHostsBecomePublicAddressesOnTheirPorts) {
  const auto o = kube({"--allow", "github.com", "--allow", "registry.example.com:8443"});
  expect_golden("allow-hosts", o);
  EXPECT_NE(o.err.find("a NetworkPolicy has no host names"), std::string::npos) << o.err;
  expect_valid(o);
}

TEST_F(KubeTest, OnlineAndOffline) {
  const auto online = kube({"--online"});
  expect_golden("online", online);
  expect_valid(online);
  const auto offline = kube({"--offline"});
  expect_golden("offline", offline);
  EXPECT_TRUE(item(offline, "NetworkPolicy")["spec"]["egress"].empty());
  expect_valid(offline);
}

// What names this machine is said, never dropped: a grant, a variable of the
// shell, a published port, Local servers.
TEST_F(KubeTest, WhatThePodCannotHaveIsSaid) {
  fs::create_directories(tmp_ / "data");
  const auto o = kube({"--grant", (tmp_ / "data").string(), "--env", "SOME_VAR", "--env", "MODE=ci",
                       "--publish", "8080", "--local-servers=3000"});
  expect_golden("machine-bound", o);
  for (const char* said :
       {"--grant $TMP/data", "--env SOME_VAR", "--publish 8080", "Local servers", "process limit"})
    EXPECT_NE(stable(o.err).find(said), std::string::npos) << said << " not said in:\n" << o.err;
  const auto command = item(o, "Pod")["spec"]["containers"][0]["command"];
  EXPECT_NE(std::find(command.begin(), command.end(), "MODE=ci"), command.end());
  EXPECT_EQ(std::find(command.begin(), command.end(), "--grant"), command.end());
  expect_valid(o);
}

// A profile file travels as a ConfigMap; its credential's secret source is said.
TEST_F(KubeTest, ProfileFileAsConfigMap) {
  std::ofstream(tmp_ / "ci.yaml")
      << "network:\n  allow: [api.example.com]\ncredentials:\n  example:\n    secret: {env: "
         "EXAMPLE_TOKEN}\n    hosts: [api.example.com]\nlimits:\n  processes: 512\n";
  const auto o = kube({"--profile", (tmp_ / "ci.yaml").string(), "--memory", "8Gi", "--cpu", "500m",
                       "--image", "registry.example.com/parallex:1.0"});
  expect_golden("profile-file", o);
  const auto cm = item(o, "ConfigMap");
  ASSERT_FALSE(cm.is_null());
  EXPECT_EQ(cm["metadata"]["name"], "parallex-ci-profile");
  EXPECT_NE(o.err.find("credential example"), std::string::npos) << o.err;
  // The profile's process limit, not the default, is the one Parallex holds in the pod.
  EXPECT_NE(o.err.find("process limit 512:"), std::string::npos) << o.err;
  expect_valid(o);
}

// An agent: its store and its token (a Secret, mounted as the file the
// supervisor reads) as volumes; as a SandboxTemplate too.
TEST_F(KubeTest, AgentPodAndSandboxTemplate) {
  fs::create_directories(tmp_ / "data");
  make_agent("reviewer", {"--allow", "github.com", "--grant", (tmp_ / "data").string()});
  const auto token =
      parallex({"agent", "github", "reviewer", "--no-open"},
               "github_pat_11AAAAAAA0abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ012345\n");
  ASSERT_EQ(token.status, 0) << token.err;
  const auto pod = kube({"--agent", "reviewer"});
  expect_golden("agent-pod", pod);
  EXPECT_EQ(pod.out.find("github_pat_"), std::string::npos) << "the token is in the manifest";
  EXPECT_EQ(pod.err.find("github_pat_"), std::string::npos);
  // Its own grant is of this machine and said; its store is its volume and is not.
  EXPECT_NE(stable(pod.err).find("grant $TMP/data (agent reviewer)"), std::string::npos) << pod.err;
  EXPECT_EQ(stable(pod.err).find("grant $TMP/px/agents"), std::string::npos) << pod.err;
  expect_valid(pod);
  const auto sandbox =
      kube({"--agent", "reviewer", "--kind", "sandbox-template", "--seal", "without-namespaces"});
  expect_golden("agent-sandbox-template", sandbox);
  expect_valid(sandbox);
}

// The validator can fail: an unknown field, a wrong type, a SandboxTemplate
// field its CRD does not have are each refused.
TEST_F(KubeTest, ValidatorRefusesWhatTheSchemasDoNotHave) {
  if (!px::test::have("node") || !fs::exists(kTestDir / "validator/node_modules/kubernetes-models"))
    GTEST_SKIP() << "the schemas are not installed: PARALLEX_WITH_TEST_TOOLS=1 scripts/install-deps.sh";
  const auto o = kube({});
  ASSERT_EQ(o.status, 0) << o.err;
  auto list = nlohmann::json::parse(o.out);
  auto unknown = list;
  unknown["items"][0]["spec"]["containers"][0]["securityContext"]["procMounts"] = "Unmasked";
  auto v = validate(unknown.dump());
  EXPECT_NE(v.status, 0);
  EXPECT_NE(v.out.find("procMounts: unknown field"), std::string::npos) << v.out;
  auto wrong = list;
  wrong["items"][0]["spec"]["hostUsers"] = "false";
  v = validate(wrong.dump());
  EXPECT_NE(v.status, 0) << v.out;

  make_agent("builder", {});
  const auto t = kube({"--agent", "builder", "--kind", "sandbox-template"});
  ASSERT_EQ(t.status, 0) << t.err;
  auto templ = nlohmann::json::parse(t.out);
  templ["items"][0]["spec"]["replicas"] = 3;
  templ["items"][0]["spec"]["networkPolicyManagement"] = "Auto";
  v = validate(templ.dump());
  EXPECT_NE(v.status, 0);
  EXPECT_NE(v.out.find("spec/replicas: unknown field"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("\"Auto\" is not one of"), std::string::npos) << v.out;
}

// Bad input names itself and renders nothing.
TEST_F(KubeTest, BadInputIsNamed) {
  struct Case {
    std::vector<std::string> args;
    std::string said;
  };
  for (const Case& c : std::vector<Case>{
           {{"--agent", "nosuch"}, "nosuch"},
           {{"--profile", "nosuch-profile"}, "nosuch-profile"},
           {{"--seal", "half"}, "half"},
           {{"--kind", "deployment"}, "deployment"},
           {{"--memory", "lots"}, "--memory \"lots\""},
           {{"--cpu", "0"}, "--cpu \"0\""},
           {{"--name", "Bad_Name"}, "--name \"Bad_Name\""},
           {{"--name", "bad\x01name"}, "--name \"bad\\u0001name\""},
       }) {
    const auto o = kube(c.args);
    EXPECT_NE(o.status, 0) << c.said;
    EXPECT_TRUE(o.out.empty()) << o.out;
    EXPECT_NE(o.err.find(c.said), std::string::npos) << c.said << " not named in: " << o.err;
  }
  const auto none = parallex({"kube", "--in", (tmp_ / "project").string()});
  EXPECT_NE(none.status, 0);
  EXPECT_NE(none.err.find("after `--`"), std::string::npos) << none.err;
}

// YAML, the default: one document per resource, what kubectl reads, with a
// port a number and a quantity a string.
TEST_F(KubeTest, YamlIsTheSameDocuments) {
  const auto yaml =
      parallex({"kube", "--in", (tmp_ / "project").string(), "--allow", "github.com", "--", "make"});
  ASSERT_EQ(yaml.status, 0) << yaml.err;
  EXPECT_EQ(yaml.out.rfind("---\n", 0), 0u);
  EXPECT_NE(yaml.out.find("kind: Pod"), std::string::npos);
  EXPECT_NE(yaml.out.find("kind: NetworkPolicy"), std::string::npos);
  EXPECT_NE(yaml.out.find("port: 443"), std::string::npos) << "a port must stay a number";
  EXPECT_NE(yaml.out.find("hostUsers: false"), std::string::npos);
  EXPECT_NE(yaml.out.find("cpu: \"2\""), std::string::npos) << "a quantity must stay a string";
  // Read as kubectl reads it (YAML 1.1, where yes and on are booleans), it is the JSON rendering.
  if (!px::test::have("python3") ||
      px::test::spawn_and_wait({"python3", "-c", "import yaml"}, {}, tmp_ / "out").status != 0)
    GTEST_SKIP() << "python3-yaml is not installed";
  const auto json = parallex({"kube", "--in", (tmp_ / "project").string(), "--allow", "github.com",
                              "--format", "json", "--", "make"});
  ASSERT_EQ(json.status, 0) << json.err;
  std::ofstream(tmp_ / "out.yaml") << yaml.out;
  std::ofstream(tmp_ / "out.json") << json.out;
  const auto same = px::test::spawn_and_wait({"python3", "-c",
                                              "import json, sys, yaml\n"
                                              "docs = list(yaml.safe_load_all(open(sys.argv[1])))\n"
                                              "items = json.load(open(sys.argv[2]))['items']\n"
                                              "sys.exit(0 if docs == items else 1)\n",
                                              (tmp_ / "out.yaml").string(), (tmp_ / "out.json").string()},
                                             {}, tmp_ / "out");
  EXPECT_EQ(same.status, 0) << "the YAML does not read back as the JSON documents: " << same.err;
}

}  // namespace
