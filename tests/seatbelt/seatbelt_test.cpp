// Seatbelt profiles cannot be run here (no macOS), so they are checked three
// ways: golden files (any change is a reviewed diff), what must and must not
// appear in the text, and the SBPL evaluator deciding real operations.
#include "backend/seatbelt/seatbelt.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "policy/compose.hpp"
#include "policy/policy_builder.hpp"
#include "sbpl_eval.hpp"
#include "test_paths.hpp"

namespace px::seatbelt {
namespace {

namespace fs = std::filesystem;
using policy::Access;
using policy::NetworkMode;
using policy::Origin;
using policy::Policy;
using policy::PolicyBuilder;
using sbpl::Decision;
using sbpl::Query;

constexpr std::uint16_t kProxyPort = 41234;
const fs::path kHome = "/Users/alice";
const fs::path kRun = "/Users/alice/src/app";
const fs::path kTemp = "/var/folders/zz/T/parallex-run-1";

struct Setup {
  fs::path run = kRun;
  NetworkMode mode = NetworkMode::offline;
  bool local_servers = false;
};

// A fixed Policy, built by hand so that the golden file changes only when the
// writer does.
Policy fixed_policy(const Setup& s = {}) {
  const Origin o = Origin::profile("test.yaml", 1);
  PolicyBuilder b;
  b.run_folder(s.run).user_home(kHome).temp_dir(kTemp);
  b.allow("/usr", Access::read, "system programs", o);
  b.allow("/etc", Access::read, "system configuration", o);
  b.allow(kHome / ".gitconfig", Access::read, "git settings", o);
  b.allow(kHome / ".nvm", Access::read, "node", o);
  b.allow(s.run, Access::write, "the run folder", o);
  b.allow(kTemp, Access::write, "temp", o);
  b.deny(kHome / ".ssh", "SSH keys", o);
  b.deny(kHome / ".config/gh/hosts.yml", "gh tokens", o);
  b.deny("/etc/shadow", "password hashes", o);
  b.read_only(s.run / ".git/hooks", "hooks", o);
  b.read_only(s.run / ".git/config", "git config", o);
  b.forbid_new_git(true, o);
  b.network(s.mode, o);
  if (s.mode == NetworkMode::allowlist) b.allow_host("github.com", o);
  b.local_servers(s.local_servers, o);
  auto p = b.build();
  EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().message);
  return std::move(p.value());
}

SeatbeltProfile generate(const Policy& p, std::uint16_t port = kProxyPort) {
  auto r = write_seatbelt_profile(p, port);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? r.value() : SeatbeltProfile{};
}

sbpl::Profile evaluator(const SeatbeltProfile& sp) {
  std::string error;
  auto p = sbpl::Profile::load(sp.text, sp.params, &error);
  EXPECT_TRUE(p.has_value()) << error;
  return p ? *p : sbpl::Profile{};
}

// The part of the text the Policy produced (the base rules are fixed text).
std::string policy_part(const std::string& text) {
  const auto at = text.find("; ===== the run's Policy =====");
  EXPECT_NE(at, std::string::npos);
  return at == std::string::npos ? text : text.substr(at);
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Compares with tests/seatbelt/golden/NAME.{sbpl,params}; PARALLEX_UPDATE_GOLDEN=1 rewrites them.
void check_golden(const std::string& name, const SeatbeltProfile& sp) {
  const fs::path dir = fs::path(PARALLEX_SOURCE_DIR) / "tests/seatbelt/golden";
  std::string params;
  for (const auto& [k, v] : sp.params) params += k + "=" + v + "\n";
  const char* update = std::getenv("PARALLEX_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    fs::create_directories(dir);
    std::ofstream(dir / (name + ".sbpl"), std::ios::binary) << sp.text;
    std::ofstream(dir / (name + ".params"), std::ios::binary) << params;
    GTEST_SKIP() << "rewrote golden files for " << name;
  }
  ASSERT_TRUE(fs::exists(dir / (name + ".sbpl")))
      << "no golden file " << (dir / (name + ".sbpl")) << "; run with PARALLEX_UPDATE_GOLDEN=1 and review it";
  EXPECT_EQ(read_file(dir / (name + ".sbpl")), sp.text)
      << "the profile for " << name
      << " changed; if intended, rerun with PARALLEX_UPDATE_GOLDEN=1 and review the diff";
  EXPECT_EQ(read_file(dir / (name + ".params")), params) << "the parameters for " << name << " changed";
}

TEST(SeatbeltGolden, Offline) {
  check_golden("offline", generate(fixed_policy()));
}

TEST(SeatbeltGolden, AllowlistWithLocalServers) {
  check_golden("allowlist_local_servers", generate(fixed_policy({kRun, NetworkMode::allowlist, true})));
}

TEST(SeatbeltGolden, DefaultProfileAgentRun) {
  auto profile = policy::load_profile("default");
  ASSERT_TRUE(profile.has_value()) << profile.error().message;
  policy::ComposeInputs in;
  in.platform = policy::Platform::macos;
  in.user_home = kHome;
  in.run_folder = kRun;
  in.temp_dir = kTemp;
  in.profiles = {profile.value()};
  in.agent = policy::AgentInputs{};
  in.agent->name = "reviewer";
  in.agent->home = "/Users/alice/Library/Application Support/parallex/agents/reviewer/home";
  in.network.allow = {"github.com"};
  auto p = policy::compose(in);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  check_golden("default_profile_agent", generate(p.value()));
}

TEST(SeatbeltProfileText, StartsClosed) {
  const auto sp = generate(fixed_policy());
  EXPECT_EQ(sp.text.rfind("(version 1)\n", 0), 0u);
  EXPECT_TRUE(evaluator(sp).has_deny_default_first());
  EXPECT_EQ(sp.text.find("(allow default"), std::string::npos);
}

TEST(SeatbeltProfileText, NoUserPathIsWrittenIntoTheText) {
  const auto sp = generate(fixed_policy({kRun, NetworkMode::allowlist, true}));
  const std::string ours = policy_part(sp.text);
  ASSERT_FALSE(sp.params.empty());
  for (const auto& [name, value] : sp.params) {
    EXPECT_EQ(ours.find("\"" + value + "\""), std::string::npos) << name << "=" << value << " is spliced";
    EXPECT_EQ(ours.find("\"" + value + "/"), std::string::npos) << name << "=" << value << " is spliced";
  }
  for (const char* marker : {"alice", "/Users", "parallex-run-1", "src/app", "hosts.yml", ".ssh"})
    EXPECT_EQ(sp.text.find(marker), std::string::npos) << marker;
  // Reasons and origins are user text too (a profile's reason could hold a newline).
  for (const char* marker : {"SSH keys", "test.yaml", "gh tokens"})
    EXPECT_EQ(sp.text.find(marker), std::string::npos);
}

TEST(SeatbeltProfileText, QuotesAndParensInAPathDoNotChangeTheProfile) {
  // As deep as kRun, so only the text of the path differs.
  const fs::path evil = "/Users/alice/src/x\") (allow default) (allow file-read* (subpath \"";
  const auto plain = generate(fixed_policy());
  const auto hostile = generate(fixed_policy({evil}));
  EXPECT_EQ(plain.text, hostile.text);
  const auto eval = evaluator(hostile);
  EXPECT_EQ(eval.decide(Query::file("file-read-data", "/Users/alice/Documents/x")), Decision::deny);
  EXPECT_EQ(eval.decide(Query::file("file-write-data", evil.string() + "/main.c")), Decision::allow);
  EXPECT_EQ(eval.decide(Query::file("file-write-data", evil.string() + "/.git/hooks/pre-commit")),
            Decision::deny);
  bool bound = false;
  for (const auto& [k, v] : hostile.params) bound = bound || (k == "RUN_FOLDER" && v == evil.string());
  EXPECT_TRUE(bound);
}

TEST(SeatbeltProfileText, DeniesComeAfterEveryAllowOfThePolicy) {
  const auto sp = generate(fixed_policy({kRun, NetworkMode::allowlist, true}));
  const std::string ours = policy_part(sp.text);
  const auto last_file_allow = ours.rfind("(allow file-");
  const auto first_deny = ours.find("(deny ");
  ASSERT_NE(first_deny, std::string::npos);
  EXPECT_LT(last_file_allow, first_deny);
}

TEST(SeatbeltProfileText, NetworkOnlyToTheProxyUnlessLocalServers) {
  const auto offline = generate(fixed_policy());
  EXPECT_EQ(offline.text.find("(allow network"), std::string::npos);
  EXPECT_EQ(offline.text.find("41234"), std::string::npos);

  const auto allow = generate(fixed_policy({kRun, NetworkMode::allowlist, false}));
  EXPECT_NE(allow.text.find("(allow network-outbound (remote ip \"localhost:41234\"))"), std::string::npos);
  EXPECT_EQ(allow.text.find("localhost:*"), std::string::npos);
  EXPECT_EQ(allow.text.find("network-bind"), std::string::npos);
  EXPECT_EQ(allow.text.find("(allow network*"), std::string::npos);
  EXPECT_EQ(allow.text.find("DNSConfiguration"), std::string::npos);
  EXPECT_EQ(allow.text.find("mDNSResponder"), std::string::npos);

  const auto local = generate(fixed_policy({kRun, NetworkMode::allowlist, true}));
  EXPECT_NE(local.text.find("(allow network-outbound (remote ip \"localhost:*\"))"), std::string::npos);
  EXPECT_NE(local.text.find("(allow network-bind (local ip \"*:*\"))"), std::string::npos);

  const auto e = evaluator(allow);
  EXPECT_EQ(e.decide(Query::connect("localhost", kProxyPort)), Decision::allow);
  EXPECT_EQ(e.decide(Query::connect("localhost", 5432)), Decision::deny);
  EXPECT_EQ(e.decide(Query::connect("140.82.112.3", 443)), Decision::deny);
  EXPECT_EQ(e.decide(Query::bind("0.0.0.0", 8080)), Decision::deny);
  const auto l = evaluator(local);
  EXPECT_EQ(l.decide(Query::connect("localhost", 5432)), Decision::allow);
  EXPECT_EQ(l.decide(Query::connect("140.82.112.3", 443)), Decision::deny);
  EXPECT_EQ(l.decide(Query::bind("0.0.0.0", 8080)), Decision::allow);
  const auto o = evaluator(offline);
  EXPECT_EQ(o.decide(Query::connect("localhost", kProxyPort)), Decision::deny);
}

TEST(SeatbeltProfileText, BaseRulesAreTheCommentedDataFile) {
  const std::string base(base_rules());
  EXPECT_NE(base.find("; "), std::string::npos);
  const auto sp = generate(fixed_policy());
  EXPECT_NE(sp.text.find(base), std::string::npos);
  for (const char* forbidden : {"(allow default", "(allow file-read*)", "(allow file-write*",
                                "(allow network", "(allow mach-lookup)", "(param", "(deny default"})
    EXPECT_EQ(base.find(forbidden), std::string::npos) << forbidden;
}

TEST(SeatbeltEvaluation, FilesystemFollowsThePolicy) {
  const auto e = evaluator(generate(fixed_policy()));
  auto read = [&](const std::string& p) { return e.decide(Query::file("file-read-data", p)); };
  auto write = [&](const std::string& p) { return e.decide(Query::file("file-write-data", p)); };
  auto create = [&](const std::string& p) { return e.decide(Query::file("file-write-create", p)); };
  EXPECT_EQ(read("/Users/alice/src/app/main.c"), Decision::allow);
  EXPECT_EQ(write("/Users/alice/src/app/main.c"), Decision::allow);
  EXPECT_EQ(read("/Users/alice/Documents/taxes.pdf"), Decision::deny);
  EXPECT_EQ(read("/Users/alice/src/other/main.c"), Decision::deny);
  EXPECT_EQ(read("/Users/alice/src/app2/x"), Decision::deny);
  EXPECT_EQ(read("/Users/alice/.ssh/id_ed25519"), Decision::deny);
  EXPECT_EQ(read("/Users/alice/.gitconfig"), Decision::allow);
  EXPECT_EQ(write("/Users/alice/.gitconfig"), Decision::deny);
  EXPECT_EQ(read("/usr/bin/env"), Decision::allow);
  EXPECT_EQ(write("/usr/bin/env"), Decision::deny);
  // /etc is a link to /private/etc on macOS: both spellings follow the rule.
  EXPECT_EQ(read("/private/etc/hosts"), Decision::allow);
  EXPECT_EQ(read("/etc/shadow"), Decision::deny);
  EXPECT_EQ(read("/private/etc/shadow"), Decision::deny);
  EXPECT_EQ(write("/private/var/folders/zz/T/parallex-run-1/x"), Decision::allow);
  EXPECT_EQ(write("/Users/alice/src/app/.git/objects/ab/cd"), Decision::allow);
  EXPECT_EQ(write("/Users/alice/src/app/.git/hooks/pre-commit"), Decision::deny);
  EXPECT_EQ(create("/Users/alice/src/app/.git/hooks/post-checkout"), Decision::deny);
  EXPECT_EQ(write("/Users/alice/src/app/.git/config"), Decision::deny);
  EXPECT_EQ(read("/Users/alice/src/app/.git/config"), Decision::allow);
  EXPECT_EQ(create("/Users/alice/src/app/vendor/lib/.git"), Decision::deny);
  EXPECT_EQ(create("/Users/alice/src/app/.Git"), Decision::deny);
  EXPECT_EQ(create("/Users/alice/src/app/.gitignore"), Decision::allow);
  EXPECT_EQ(create("/private/var/folders/zz/T/parallex-run-1/repo/.git"), Decision::allow);
  // Stat of the folders above a grant, not their contents.
  EXPECT_EQ(e.decide(Query::file("file-read-metadata", "/Users/alice")), Decision::allow);
  EXPECT_EQ(read("/Users/alice"), Decision::deny);
  EXPECT_EQ(e.decide(Query::file("file-read-metadata", "/Users/alice/Documents")), Decision::deny);
}

TEST(SeatbeltEvaluation, ProtectedPathsCannotBeRenamedAwayOrHardLinked) {
  const auto e = evaluator(generate(fixed_policy()));
  EXPECT_EQ(e.decide(Query::file("file-write-unlink", "/Users/alice/src/app/.git")), Decision::deny);
  EXPECT_EQ(e.decide(Query::file("file-write-unlink", "/Users/alice/src/app/.git/hooks")), Decision::deny);
  EXPECT_EQ(e.decide(Query::file("file-write-unlink", "/Users/alice/src/app/src")), Decision::allow);
  EXPECT_EQ(e.decide(Query::file("file-link", "/Users/alice/.ssh/id_ed25519")), Decision::deny);
  EXPECT_EQ(e.decide(Query::file("file-link", "/Users/alice/src/app/.git/config")), Decision::deny);
}

TEST(SeatbeltEvaluation, MachServicesAreAShortAllowlist) {
  const auto e = evaluator(generate(fixed_policy({kRun, NetworkMode::online, false})));
  EXPECT_TRUE(e.allows(Query::named("mach-lookup", "com.apple.system.opendirectoryd.libinfo")));
  EXPECT_TRUE(e.allows(Query::named("mach-lookup", "com.apple.trustd.agent")));
  for (const char* service :
       {"com.apple.pasteboard.1", "com.apple.coreservices.launchservicesd", "com.apple.SecurityServer",
        "com.apple.securityd.xpc", "com.apple.windowserver.active",
        "com.apple.SystemConfiguration.DNSConfiguration", "com.apple.mDNSResponder",
        "com.apple.coreservices.appleevents"})
    EXPECT_EQ(e.decide(Query::named("mach-lookup", service)), Decision::deny) << service;
  EXPECT_TRUE(e.allows(Query::named("sysctl-read", "hw.ncpu")));
  EXPECT_FALSE(e.allows(Query::named("sysctl-write", "kern.hostname")));
  EXPECT_TRUE(e.allows(Query::file("file-read-data", "/System/Library/Frameworks/x")));
  EXPECT_TRUE(e.allows(Query::file("file-read-data", "/dev/urandom")));
  EXPECT_FALSE(e.allows(Query::file("file-read-data", "/dev/disk0")));
}

TEST(SeatbeltErrors, ProxyPortIsRequiredWhenTheNetworkIsOn) {
  auto r = write_seatbelt_profile(fixed_policy({kRun, NetworkMode::online, false}), 0);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("proxy port"), std::string::npos);
  EXPECT_TRUE(write_seatbelt_profile(fixed_policy(), 0).has_value());
}

TEST(SeatbeltErrors, APathWithANulByteFailsClosed) {
  auto r = write_seatbelt_profile(fixed_policy({fs::path(std::string("/Users/alice/a\0b", 16))}), kProxyPort);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("NUL"), std::string::npos);
}

TEST(SeatbeltArgv, AbsoluteSandboxExecThenParamsThenCommand) {
  const auto sp = generate(fixed_policy());
  const auto argv = sandbox_exec_argv(sp, {"claude", "--print", "-D", "x"});
  ASSERT_GE(argv.size(), 3 + 2 * sp.params.size() + 5);
  EXPECT_EQ(argv[0], "/usr/bin/sandbox-exec");
  EXPECT_EQ(argv[1], "-p");
  EXPECT_EQ(argv[2], sp.text);
  for (std::size_t i = 0; i < sp.params.size(); ++i) {
    EXPECT_EQ(argv[3 + 2 * i], "-D");
    EXPECT_EQ(argv[4 + 2 * i], sp.params[i].first + "=" + sp.params[i].second);
  }
  const std::size_t cmd = 3 + 2 * sp.params.size();
  EXPECT_EQ(argv[cmd], "--");
  EXPECT_EQ(std::vector<std::string>(argv.begin() + static_cast<long>(cmd) + 1, argv.end()),
            (std::vector<std::string>{"claude", "--print", "-D", "x"}));
}

TEST(SeatbeltArgv, EveryParamHasAReasonForDisplay) {
  const auto sp = generate(fixed_policy());
  for (const auto& [name, value] : sp.params) {
    EXPECT_FALSE(sp.reasons.at(name).empty()) << name;
    EXPECT_EQ(name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace px::seatbelt
