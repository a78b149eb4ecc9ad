// Agent workspaces against real parts: the real `parallex` executable, real
// git (CLI and libgit2), real ssh-keygen, real processes racing for one name.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "agents/credential.hpp"
#include "agents/git_config.hpp"
#include "agents/names.hpp"
#include "agents/repo.hpp"
#include "agents/ssh_key.hpp"
#include "agents/store.hpp"
#include "agents/token.hpp"
#include "agents_fixture.hpp"

namespace fs = std::filesystem;
using namespace px::agents;

using namespace px_agents_test;

// ---- names, emails, pure helpers ------------------------------------------

TEST(AgentNames, AcceptsAndRefuses) {
  for (const char* good : {"reviewer", "a", "0", "bot-1", "my_agent.v2"})
    EXPECT_TRUE(check_name(good)) << good;
  for (const std::string& bad :
       {std::string(), std::string("a/b"), std::string(".."), std::string("."), std::string(".hidden"),
        std::string("Upper"), std::string("-x"), std::string("a b"), std::string(65, 'a'),
        std::string("a\nb"), std::string("é")})
    EXPECT_FALSE(check_name(bad)) << bad;
  EXPECT_TRUE(check_name(std::string(64, 'a')));
}

TEST(AgentNames, Emails) {
  EXPECT_TRUE(check_email("reviewer@example.com"));
  for (const char* bad :
       {"", "no-at", "@example.com", "a@b", "a@@b.com", "a b@c.com", "a@b.com>", "a@.com", "a@b."})
    EXPECT_FALSE(check_email(bad)) << bad;
}

TEST(AgentToken, Shapes) {
  EXPECT_TRUE(check_token_shape(kToken));
  EXPECT_TRUE(check_token_shape("github_pat_" + std::string(82, 'b')));
  for (const std::string& bad : {std::string(), std::string("ghp_short"), std::string("hunter2hunter2"),
                                 "ghp_" + std::string(35, 'A') + "!", std::string("github_pat_x")}) {
    auto s = check_token_shape(bad);
    ASSERT_FALSE(s) << bad;
    if (!bad.empty()) {
      EXPECT_EQ(s.error().message.find(bad), std::string::npos) << "the message shows the value";
    }
  }
}

TEST(AgentToken, PageUrlCarriesTheFields) {
  AgentConfig c;
  c.name = "reviewer";
  c.email = "r@example.com";
  c.repos = {"acme/api"};
  const auto url = token_page_url(c, 30);
  EXPECT_EQ(url.rfind("https://github.com/settings/personal-access-tokens/new?", 0), 0u) << url;
  for (const char* part : {"name=parallex%20reviewer", "target_name=acme", "expires_in=30", "contents=write",
                           "pull_requests=write", "metadata=read", "description="})
    EXPECT_NE(url.find(part), std::string::npos) << part << " in " << url;
}

TEST(AgentCredential, AnswersOnlyGithubOverHttps) {
  const std::optional<std::string> token = kToken;
  const auto own = github_own_hosts();
  EXPECT_EQ(credential_answer("get", "protocol=https\nhost=github.com\n\n", token, own),
            "username=x-access-token\npassword=" + kToken + "\n");
  EXPECT_EQ(credential_answer("get", "protocol=https\nhost=GitHub.com\npath=a/b.git\n", token, own),
            "username=x-access-token\npassword=" + kToken + "\n");
  EXPECT_EQ(credential_answer("get", "protocol=https\nhost=github.com:443\n", token, own),
            "username=x-access-token\npassword=" + kToken + "\n");
  EXPECT_EQ(credential_answer("get", "protocol=https\nhost=github.com.evil.example\n", token, own), "");
  EXPECT_EQ(credential_answer("get", "protocol=https\nhost=evil.github.com\n", token, own), "");
  EXPECT_EQ(credential_answer("get", "protocol=https\nhost=gitlab.com\n", token, own), "");
  EXPECT_EQ(credential_answer("get", "protocol=http\nhost=github.com\n", token, own), "");
  EXPECT_EQ(credential_answer("get", "protocol=https\nhost=github.com:x\n", token, own), "");
  EXPECT_EQ(credential_answer("get", "protocol=https\nhost=[::1]:443\n", token, own), "");
  EXPECT_EQ(credential_answer("store", "protocol=https\nhost=github.com\npassword=x\n", token, own), "");
  EXPECT_EQ(credential_answer("erase", "protocol=https\nhost=github.com\n", token, own), "");
  EXPECT_EQ(credential_answer("get", "protocol=https\nhost=github.com\n", std::nullopt, own), "quit=1\n");
}

TEST(AgentCredential, AnswersForEveryHostTheTokenIsBoundTo) {
  const std::optional<std::string> token = kToken;
  const std::vector<std::string> bound{"ghe.corp.example", "github.com"};
  for (const char* host : {"ghe.corp.example", "GHE.corp.example:8443", "github.com"})
    EXPECT_EQ(credential_answer("get", std::string("protocol=https\nhost=") + host + "\n", token, bound),
              "username=x-access-token\npassword=" + kToken + "\n")
        << host;
  for (const char* host : {"api.github.com", "corp.example", "x.ghe.corp.example", "ghe.corp.example.evil"})
    EXPECT_EQ(credential_answer("get", std::string("protocol=https\nhost=") + host + "\n", token, bound), "")
        << host;
  EXPECT_EQ(credential_answer("get", "protocol=https\nhost=ghe.corp.example\n", std::nullopt, bound),
            "quit=1\n");
  EXPECT_EQ(credential_answer("get", "protocol=https\nhost=github.com\n", token, {}), "");
}

TEST(AgentCredential, TheTokensHostsComeFromAgentYaml) {
  AgentConfig c;
  EXPECT_EQ(github_token_hosts(c), github_own_hosts());
  EXPECT_EQ(github_token_hosts_text(c), "github.com, api.github.com and uploads.github.com");
  px::policy::CredentialSection amended;
  amended.spec.name = "github";
  amended.amends = true;
  amended.given = {"env"};
  amended.spec.env = {"GH_TOKEN"};
  c.broker.credentials.push_back(amended);
  EXPECT_EQ(github_token_hosts(c), github_own_hosts()) << "an amendment without hosts keeps GitHub's own";
  c.broker.credentials.back().given = {"hosts"};
  c.broker.credentials.back().spec.hosts = {"GHE.Corp.Example", "github.com", "not a host"};
  EXPECT_EQ(github_token_hosts(c), (std::vector<std::string>{"ghe.corp.example", "github.com"}));
  EXPECT_EQ(github_token_hosts_text(c), "ghe.corp.example and github.com");
  c.broker.credentials.back().off = true;
  EXPECT_EQ(github_token_hosts(c), github_own_hosts()) << "off: not brokered, the helper answers as before";
  EXPECT_TRUE(is_github_enterprise_host("ghe.corp.example"));
  EXPECT_TRUE(is_github_enterprise_host("notgithub.com"));
  EXPECT_FALSE(is_github_enterprise_host("github.com"));
  EXPECT_FALSE(is_github_enterprise_host("api.github.com"));
}

TEST(AgentRepo, UrlCredentials) {
  EXPECT_TRUE(url_holds_credentials("https://user:secret@github.com/o/r"));
  EXPECT_TRUE(url_holds_credentials("https://" + kToken + "@github.com/o/r"));
  EXPECT_TRUE(url_holds_credentials("https://x-access-token:abc@github.com/o/r"));
  EXPECT_FALSE(url_holds_credentials("https://github.com/o/r"));
  EXPECT_FALSE(url_holds_credentials("https://git@github.com/o/r"));
  EXPECT_FALSE(url_holds_credentials("git@github.com:o/r"));
}

// ---- the signing key ------------------------------------------------------

TEST_F(AgentsTest, KeyIsOpenSshEd25519) {
  if (!have("ssh-keygen")) GTEST_SKIP() << "ssh-keygen is not installed (apt-get install openssh-client)";
  auto key = generate_ed25519("t (agent) <t@example.com>");
  ASSERT_TRUE(key);
  const fs::path priv = root_ / "id", pub = root_ / "id.pub";
  spit(priv, key.value().private_key);
  spit(pub, key.value().public_key);
  fs::permissions(priv, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  auto derived = sh("ssh-keygen -y -f " + q(priv.string()));
  ASSERT_EQ(derived.status, 0) << derived.err;
  const auto first_two = [](const std::string& line) {
    return line.substr(0, line.find(' ', line.find(' ') + 1));
  };
  EXPECT_EQ(first_two(derived.out), first_two(key.value().public_key));
  auto listed = sh("ssh-keygen -l -f " + q(pub.string()));
  ASSERT_EQ(listed.status, 0) << listed.err;
  EXPECT_NE(listed.out.find(key.value().fingerprint), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("(ED25519)"), std::string::npos);
  auto fp = ssh_fingerprint(key.value().public_key);
  ASSERT_TRUE(fp);
  EXPECT_EQ(fp.value(), key.value().fingerprint);
  // Two keys are two keys.
  EXPECT_NE(generate_ed25519("x").value().public_key, key.value().public_key);
}

// ---- lifecycle through the CLI ---------------------------------------------

TEST_F(AgentsTest, Lifecycle) {
  make_agent("reviewer", "--repo acme/api --allow github.com --allow api.anthropic.com");
  const auto p = paths("reviewer");
  EXPECT_EQ(mode_of(p.root), 0700u);
  EXPECT_EQ(mode_of(p.keys()), 0700u);
  EXPECT_EQ(mode_of(p.gh()), 0700u);
  EXPECT_EQ(mode_of(p.home()), 0700u);
  EXPECT_EQ(mode_of(p.private_key()), 0600u);
  EXPECT_EQ(mode_of(p.hosts_yml()), 0600u);
  EXPECT_EQ(mode_of(p.config()), 0600u);
  EXPECT_TRUE(fs::is_directory(p.snapshots()));
  EXPECT_TRUE(fs::is_directory(p.runs()));
  EXPECT_TRUE(fs::is_empty(p.no_hooks()));

  auto config = load_config(p);
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config.value().network, px::policy::NetworkMode::allowlist);
  EXPECT_EQ(config.value().allow, (std::vector<std::string>{"github.com", "api.anthropic.com"}));
  EXPECT_FALSE(config.value().local_servers) << "Local servers is off unless the user turns it on";
  EXPECT_EQ(config.value().repos, std::vector<std::string>{"acme/api"});

  auto list = px("agent list --json");
  ASSERT_EQ(list.status, 0) << list.err;
  auto j = nlohmann::json::parse(list.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["name"], "reviewer");
  EXPECT_EQ(j[0]["github_token"], "none");

  auto show = px("agent show reviewer --json");
  ASSERT_EQ(show.status, 0) << show.err;
  auto s = nlohmann::json::parse(show.out);
  EXPECT_EQ(s["key_fingerprint"], ssh_fingerprint(slurp(p.public_key())).value());
  EXPECT_EQ(s["network"]["mode"], "allowlist");

  auto set = px("agent set reviewer --offline --email other@example.com");
  ASSERT_EQ(set.status, 0) << set.err;
  config = load_config(p);
  EXPECT_EQ(config.value().network, px::policy::NetworkMode::offline);
  EXPECT_FALSE(config.value().local_servers);
  EXPECT_TRUE(config.value().allow.empty());
  EXPECT_NE(slurp(p.gitconfig()).find("other@example.com"), std::string::npos);

  // Local servers on an offline agent: an allowlist of no host, said with the word
  // `agent list`, reports and the MCP server use (it said "offline").
  ASSERT_EQ(px("agent set reviewer --local-servers").status, 0);
  auto shown = px("agent show reviewer");
  ASSERT_EQ(shown.status, 0) << shown.err;
  EXPECT_NE(shown.out.find("Network      allowlist of no host"), std::string::npos) << shown.out;
  EXPECT_EQ(shown.out.find("offline"), std::string::npos) << shown.out;
  ASSERT_EQ(px("agent set reviewer --offline").status, 0);

  auto key = px("agent key reviewer");
  ASSERT_EQ(key.status, 0);
  EXPECT_EQ(key.out, slurp(p.public_key()));
  EXPECT_NE(key.err.find("Signing Key"), std::string::npos);

  auto refused = px("agent delete reviewer");  // no terminal, no --yes
  EXPECT_NE(refused.status, 0);
  EXPECT_TRUE(fs::exists(p.root));
  auto del = px("agent delete reviewer --yes");
  ASSERT_EQ(del.status, 0) << del.err;
  EXPECT_NE(del.out.find("https://github.com/settings/keys"), std::string::npos);
  EXPECT_FALSE(fs::exists(p.root));
  EXPECT_TRUE(fs::is_empty(agents_root()));
  auto gone = px("agent show reviewer");
  EXPECT_EQ(gone.status, 3);
  EXPECT_NE(gone.err.find("no agent named 'reviewer'"), std::string::npos) << gone.err;
}

TEST_F(AgentsTest, BadInput) {
  const std::string too_long(65, 'x');
  for (const std::string& bad : {std::string("'a/b'"), std::string("'..'"), std::string("Caps"), too_long}) {
    auto r = px("agent new " + bad + " --email a@example.com");
    EXPECT_EQ(r.status, 2) << bad << ": " << r.err;
  }
  auto email = px("agent new ok --email not-an-email");
  EXPECT_EQ(email.status, 2);
  EXPECT_NE(email.err.find("not-an-email"), std::string::npos);
  EXPECT_FALSE(fs::exists(paths("ok").root));
  EXPECT_EQ(px("agent new ok --email a@example.com --online --offline").status, 2);
  EXPECT_EQ(px("agent new ok --email a@example.com --grant /does/not/exist").status, 2);
  EXPECT_EQ(px("agent new ok --email a@example.com --repo notarepo").status, 2);

  make_agent("ok");
  const std::string key_before = slurp(paths("ok").private_key());
  auto dup = px("agent new ok --email b@example.com");
  EXPECT_EQ(dup.status, 5) << dup.err;
  EXPECT_NE(dup.err.find("already exists"), std::string::npos);
  EXPECT_EQ(slurp(paths("ok").private_key()), key_before) << "a duplicate must not touch the agent";
  EXPECT_EQ(load_config(paths("ok")).value().email, "ok@example.com");

  // A run command that cannot start exits 125, apart from any status of the command's own.
  auto notdir = px("agent run ok --unsealed --in " + q((root_ / "nope").string()) + " -- true");
  EXPECT_EQ(notdir.status, 125) << notdir.err;
  EXPECT_NE(notdir.err.find("is not a directory"), std::string::npos) << notdir.err;
  auto ghost = px("agent run ghost --unsealed -- true");
  EXPECT_EQ(ghost.status, 125);
  EXPECT_NE(ghost.err.find("ghost"), std::string::npos) << ghost.err;
}

TEST_F(AgentsTest, CorruptOrMissingStoreFilesAreNamedNotRecreated) {
  make_agent("broken");
  const auto p = paths("broken");
  spit(p.config(), "version: 1\nname: [unclosed\n");
  auto r = px("agent show broken");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find(p.config().string()), std::string::npos) << r.err;
  EXPECT_EQ(slurp(p.config()), "version: 1\nname: [unclosed\n") << "never overwritten";
  EXPECT_NE(px("agent run broken --unsealed -- true").status, 0);

  fs::remove(p.config());
  r = px("agent show broken");
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.err.find(p.config().string()), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(p.config())) << "never silently recreated";
  // A damaged agent does not hide the others, and can still be deleted.
  make_agent("fine");
  auto list = px("agent list --json");
  EXPECT_NE(list.out.find("fine"), std::string::npos);
  EXPECT_EQ(px("agent delete broken --yes").status, 0);

  make_agent("nokey");
  fs::remove(paths("nokey").private_key());
  r = px("agent run nokey --unsealed -- true");
  EXPECT_EQ(r.status, 125);
  EXPECT_NE(r.err.find("id_ed25519"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(paths("nokey").private_key()));
}

// agent.yaml is strict: a misspelt key or a key given twice is named with its
// line, never ignored (a misspelt `grants` would silently drop the rule).
TEST_F(AgentsTest, AnUnknownOrRepeatedKeyInTheRulesIsNamed) {
  make_agent("strict");
  const auto p = paths("strict");
  const std::string good = slurp(p.config());
  spit(p.config(), good + "grant: []\n");
  auto r = px("agent show strict");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("unknown key 'grant'"), std::string::npos) << r.err;
  spit(p.config(), good + "decoys: false\n");
  r = px("agent show strict");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("'decoys' is given twice"), std::string::npos) << r.err;
  spit(p.config(), good);
  EXPECT_EQ(px("agent show strict").status, 0);
}

// `agent set --processes` sets the agent's process limit (kept in agent.yaml,
// shown by `agent show`, which `policy show` of its runs would print), an
// out-of-range value is refused naming the range, `default` drops it.
TEST_F(AgentsTest, TheProcessLimitIsSetShownAndDropped) {
  make_agent("builder");
  const auto p = paths("builder");
  auto r = px("agent set builder --processes 8192");
  ASSERT_EQ(r.status, 0) << r.err;
  auto config = load_config(p);
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config.value().processes, 8192u);
  EXPECT_NE(slurp(p.config()).find("processes: 8192"), std::string::npos) << slurp(p.config());
  auto show = px("agent show builder --json");
  ASSERT_EQ(show.status, 0) << show.err;
  EXPECT_EQ(nlohmann::json::parse(show.out)["limits"]["processes"], 8192);
  r = px("agent set builder --processes 5");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--processes 5 is out of range: give 32 to 4000000"), std::string::npos) << r.err;
  r = px("agent set builder --processes many");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--processes many"), std::string::npos) << r.err;
  EXPECT_EQ(load_config(p).value().processes, 8192u) << "a refused value changes nothing";
  ASSERT_EQ(px("agent set builder --processes default").status, 0);
  EXPECT_FALSE(load_config(p).value().processes.has_value());
  EXPECT_EQ(slurp(p.config()).find("processes"), std::string::npos);
}

TEST_F(AgentsTest, ConcurrentNewOneWins) {
  for (int round = 0; round < 5; ++round) {
    const std::string name = "race" + std::to_string(round);
    int go[2];
    ASSERT_EQ(::pipe(go), 0);
    pid_t kids[2];
    for (pid_t& kid : kids) {
      kid = ::fork();
      ASSERT_GE(kid, 0);
      if (kid == 0) {
        ::close(go[1]);
        char c;
        (void)::read(go[0], &c, 1);  // both start together
        AgentConfig c2;
        c2.name = name;
        c2.email = name + "@example.com";
        auto r = create_agent(agents_root(), c2, "/usr/bin/parallex");
        _exit(r ? 0 : (r.error().kind == px::ErrorKind::conflict ? 5 : 1));
      }
    }
    ::close(go[0]);
    ::close(go[1]);  // EOF releases both
    int codes[2];
    for (int i = 0; i < 2; ++i) {
      int st = 0;
      ::waitpid(kids[i], &st, 0);
      codes[i] = WEXITSTATUS(st);
    }
    EXPECT_TRUE((codes[0] == 0 && codes[1] == 5) || (codes[0] == 5 && codes[1] == 0))
        << codes[0] << " " << codes[1];
    ASSERT_TRUE(load_config(paths(name))) << "the winner is complete";
    EXPECT_TRUE(check_layout(paths(name)));
  }
  for (const auto& e : fs::directory_iterator(agents_root()))
    EXPECT_EQ(e.path().filename().string().rfind(".new-", 0), std::string::npos) << "leftover " << e.path();
}

// ---- its git --------------------------------------------------------------

TEST_F(AgentsTest, GitConfigIsItsOwn) {
  make_agent("gitbot");
  const auto p = paths("gitbot");
  auto get = [&](const std::string& key) {
    auto r = sh("git config --global --get-all " + key, "", agent_git_env("gitbot"));
    EXPECT_EQ(r.err, "") << key;
    return r.out;
  };
  EXPECT_EQ(get("user.name"), "gitbot (agent)\n");
  EXPECT_EQ(get("user.email"), "gitbot@example.com\n");
  EXPECT_EQ(get("gpg.format"), "ssh\n");
  EXPECT_EQ(get("user.signingkey"), p.private_key().string() + "\n");
  EXPECT_EQ(get("commit.gpgsign"), "true\n");
  EXPECT_EQ(get("tag.gpgsign"), "true\n");
  EXPECT_EQ(get("core.hooksPath"), p.no_hooks().string() + "\n");
  // Its own key only, its own known hosts (first use trusted), nothing of the user's.
  EXPECT_EQ(get("core.sshCommand"), "ssh -F /dev/null -o IdentitiesOnly=yes -o IdentityAgent=none -i " +
                                        p.private_key().string() + " -o UserKnownHostsFile=" +
                                        p.known_hosts().string() + " -o StrictHostKeyChecking=accept-new\n");
  const std::string helpers = get("credential.helper");
  EXPECT_EQ(helpers.rfind("\n!", 0), 0u) << "the empty helper comes first: " << helpers;
  EXPECT_NE(helpers.find(" agent credential --store "), std::string::npos) << helpers;
  // The hosts its token is bound to (GitHub's own by default) travel with it:
  // its runs cannot read agent.yaml.
  EXPECT_NE(helpers.find(" --host 'github.com' --host 'api.github.com' --host 'uploads.github.com' gitbot\n"),
            std::string::npos)
      << helpers;
  auto rewritten = sh("git ls-remote --get-url git@github.com:acme/api.git", "", agent_git_env("gitbot"));
  EXPECT_EQ(rewritten.out, "https://github.com/acme/api.git\n");
  rewritten = sh("git ls-remote --get-url ssh://git@github.com/acme/api.git", "", agent_git_env("gitbot"));
  EXPECT_EQ(rewritten.out, "https://github.com/acme/api.git\n");
}

TEST_F(AgentsTest, GithubOverSshWhenItsRulesOpenPort22) {
  make_agent("sshbot", "--allow github.com --allow github.com:22");
  // The rewrite to HTTPS is rebuilt away once its rules open GitHub's SSH port.
  ASSERT_EQ(px("agent set sshbot --allow github.com:22").status, 0);
  auto url = sh("git ls-remote --get-url git@github.com:acme/api.git", "", agent_git_env("sshbot"));
  EXPECT_EQ(url.out, "git@github.com:acme/api.git\n");
  // The one validator: a bare public suffix or a misplaced wildcard is refused when given.
  auto bad = px("agent set sshbot --allow com");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("public suffix"), std::string::npos) << bad.err;
  bad = px("agent set sshbot --allow github.com:0");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("between 1 and 65535"), std::string::npos) << bad.err;
  EXPECT_EQ(px("agent set sshbot --allow '*.github.com'").status, 0)
      << "wildcards are rules the proxy takes too";
}

TEST_F(AgentsTest, SignedCommitVerifies) {
  if (!have("ssh-keygen")) GTEST_SKIP() << "ssh-keygen is not installed (apt-get install openssh-client)";
  make_agent("signer");
  const fs::path repo = make_repo("work");
  // A hook that would fail the commit: its git runs no hooks.
  spit(repo / ".git/hooks/pre-commit", "#!/bin/sh\nexit 1\n");
  fs::permissions(repo / ".git/hooks/pre-commit", fs::perms::owner_all);
  const std::string env = agent_git_env("signer");
  auto commit = sh(
      "cd " + q(repo.string()) + " && echo hi > f && git add f && git commit -q -S -m 'agent work'", "", env);
  ASSERT_EQ(commit.status, 0) << commit.err;
  auto verify = sh("cd " + q(repo.string()) + " && git verify-commit HEAD", "", env);
  EXPECT_EQ(verify.status, 0) << verify.err;
  EXPECT_NE(verify.err.find("Good \"git\" signature for signer@example.com"), std::string::npos)
      << verify.err;
  auto author = sh("cd " + q(repo.string()) + " && git log -1 --format='%an <%ae>|%G?'", "", env);
  EXPECT_EQ(author.out, "signer (agent) <signer@example.com>|G\n");
  // Verified against an allowed-signers file of the verifier's own, too.
  const fs::path allowed = root_ / "allowed";
  spit(allowed, render_allowed_signers("signer@example.com", slurp(paths("signer").public_key())));
  auto independent =
      sh("cd " + q(repo.string()) + " && git -c gpg.ssh.allowedSignersFile=" + q(allowed.string()) +
         " verify-commit HEAD");
  EXPECT_EQ(independent.status, 0) << independent.err;
}

TEST_F(AgentsTest, SignedCommitInsideAgentRun) {
  if (!have("ssh-keygen")) GTEST_SKIP() << "ssh-keygen is not installed";
  make_agent("runner");
  const fs::path repo = make_repo("work");
  auto run = px("agent run runner --unsealed --in " + q(repo.string()) +
                " -- sh -c 'echo x > g && git add g && git commit -q -m from-run'");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.err.find("UNSEALED"), std::string::npos);
  const fs::path allowed = root_ / "allowed";
  spit(allowed, render_allowed_signers("runner@example.com", slurp(paths("runner").public_key())));
  auto verify = sh("cd " + q(repo.string()) + " && git -c gpg.ssh.allowedSignersFile=" + q(allowed.string()) +
                   " verify-commit HEAD");
  EXPECT_EQ(verify.status, 0) << verify.err;
  auto author = sh("cd " + q(repo.string()) + " && git log -1 --format=%an");
  EXPECT_EQ(author.out, "runner (agent)\n");

  // The run record: the refs at start and end.
  std::vector<fs::path> records;
  for (const auto& e : fs::directory_iterator(paths("runner").runs()))
    records.push_back(e.path() / "run.json");
  ASSERT_EQ(records.size(), 1u);
  auto rec = nlohmann::json::parse(slurp(records[0]));
  EXPECT_EQ(rec["agent"], "runner");
  EXPECT_EQ(rec["exit_status"], 0);
  ASSERT_TRUE(rec.contains("refs_start")) << rec.dump(2);
  ASSERT_TRUE(rec.contains("refs_end"));
  EXPECT_NE(rec["refs_start"]["refs/heads/main"], rec["refs_end"]["refs/heads/main"]);
  EXPECT_EQ(rec["refs_end"]["refs/heads/main"], rec["head_end"]);
  EXPECT_FALSE(rec["policy_digest"].get<std::string>().empty());
}

// ---- the token and the credential helper ----------------------------------

TEST_F(AgentsTest, GithubTokenAndCredentialHelper) {
  make_agent("tok", "--repo acme/api");
  const auto p = paths("tok");
  const std::string env = agent_git_env("tok");
  const std::string fill =
      "printf 'protocol=https\\nhost=github.com\\npath=acme/api.git\\n\\n' | git credential fill";

  // No token: git gets nothing and stops (no prompt, no other helper).
  auto none = sh(fill, "", env);
  EXPECT_NE(none.status, 0);
  EXPECT_EQ(none.out.find("password="), std::string::npos) << none.out;

  auto wrong = px("agent github tok --no-open", "ghp_tooshort\n");
  EXPECT_EQ(wrong.status, 2);
  EXPECT_EQ((wrong.out + wrong.err).find("ghp_tooshort"), std::string::npos)
      << "the pasted value is never echoed";

  auto stored = px("agent github tok --no-open", kToken + "\n");
  ASSERT_EQ(stored.status, 0) << stored.err;
  EXPECT_NE(stored.out.find("target_name=acme"), std::string::npos);
  EXPECT_NE(stored.out.find("repositories"), std::string::npos);
  EXPECT_EQ((stored.out + stored.err).find(kToken), std::string::npos) << "the token is never printed";
  EXPECT_EQ(mode_of(p.hosts_yml()), 0600u);
  auto loaded = load_token(p.gh());
  ASSERT_TRUE(loaded && loaded.value());
  EXPECT_EQ(*loaded.value(), kToken);

  auto got = sh(fill, "", env);
  ASSERT_EQ(got.status, 0) << got.err;
  EXPECT_NE(got.out.find("username=x-access-token\n"), std::string::npos) << got.out;
  EXPECT_NE(got.out.find("password=" + kToken + "\n"), std::string::npos);

  // Another host: nothing from the agent's helper, and no prompt.
  auto other = sh("printf 'protocol=https\\nhost=gitlab.com\\n\\n' | git credential fill", "", env);
  EXPECT_NE(other.status, 0);
  EXPECT_EQ(other.out.find(kToken), std::string::npos);

  // The user's own helpers (from their git config) are never consulted.
  spit(user_home_ / ".gitconfig", "[credential]\n\thelper = \"!echo password=USERSECRET; :\"\n");
  auto user_helper = sh("printf 'protocol=https\\nhost=gitlab.com\\n\\n' | git credential fill", "", env);
  EXPECT_EQ(user_helper.out.find("USERSECRET"), std::string::npos);

  auto show = px("agent show tok --json");
  EXPECT_EQ(nlohmann::json::parse(show.out)["github_token"], "present");
  EXPECT_EQ(show.out.find(kToken), std::string::npos);
}

// ---- the environment of an agent run --------------------------------------

TEST_F(AgentsTest, RunEnvironmentHoldsNoUserCredential) {
  make_agent("envbot");
  const fs::path repo = make_repo("work");
  const std::string user_env =
      "SSH_AUTH_SOCK=/tmp/user-agent.sock GH_TOKEN=ghp_USERUSERUSERUSERUSERUSERUSERUSERUSER "
      "GITHUB_TOKEN=user-github-token AWS_SECRET_ACCESS_KEY=user-aws-secret "
      "GIT_ASKPASS=/usr/bin/user-askpass "
      "GIT_CONFIG_GLOBAL=/home/user/.gitconfig";
  auto r = px("agent run envbot --unsealed --in " + q(repo.string()) + " -- env", "", user_env);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* leak : {"SSH_AUTH_SOCK", "ghp_USER", "user-github-token", "user-aws-secret",
                           "user-askpass", "/home/user/.gitconfig", user_home_.c_str()})
    EXPECT_EQ(r.out.find(leak), std::string::npos) << leak << " reached the run:\n" << r.out;
  const auto p = paths("envbot");
  EXPECT_NE(r.out.find("HOME=" + p.home().string() + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GIT_CONFIG_GLOBAL=" + p.gitconfig().string() + "\n"), std::string::npos);
  EXPECT_NE(r.out.find("GIT_CONFIG_NOSYSTEM=1\n"), std::string::npos);
  EXPECT_NE(r.out.find("GH_CONFIG_DIR=" + p.gh().string() + "\n"), std::string::npos);
  EXPECT_NE(r.out.find("GH_TOKEN=" + std::string(placeholder_token) + "\n"), std::string::npos)
      << "the placeholder";

  // Its git reads only its own config, not the user's.
  auto name = px("agent run envbot --unsealed --in " + q(repo.string()) + " -- git config user.name");
  EXPECT_EQ(name.out, "envbot (agent)\n");

  // With a token: GH_TOKEN is its own.
  ASSERT_EQ(px("agent github envbot --no-open", kToken + "\n").status, 0);
  auto with = px("agent run envbot --unsealed --in " + q(repo.string()) + " -- env");
  EXPECT_NE(with.out.find("GH_TOKEN=" + kToken + "\n"), std::string::npos);
  // ... and it never reaches a run record.
  for (const auto& e : fs::recursive_directory_iterator(p.runs()))
    if (e.is_regular_file()) {
      EXPECT_EQ(slurp(e.path()).find(kToken), std::string::npos) << e.path();
    }

  // The exit status is the command's.
  EXPECT_EQ(px("agent run envbot --unsealed --in " + q(repo.string()) + " -- sh -c 'exit 7'").status, 7);
}

TEST_F(AgentsTest, WarnsAboutTokenInRemoteUrl) {
  make_agent("warner");
  const fs::path repo = make_repo("work");
  ASSERT_EQ(
      sh("cd " + q(repo.string()) + " && git remote add origin https://me:s3cretvalue@github.com/o/r.git")
          .status,
      0);
  auto r = px("agent run warner --unsealed --in " + q(repo.string()) + " -- true");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("remote.origin.url"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("s3cretvalue"), std::string::npos);
  auto keys = config_keys_with_tokens(repo);
  ASSERT_TRUE(keys);
  EXPECT_EQ(keys.value(), std::vector<std::string>{"remote.origin.url"});
  auto refs = repository_refs(repo);
  ASSERT_TRUE(refs && refs.value());
  EXPECT_TRUE((*refs.value())["refs"].contains("refs/heads/main"));
  EXPECT_FALSE(repository_refs(root_ / "user").value().has_value());
}

// An agent's offline run lists the names it asked for, and the fix names the
// agent it ran as (not "NAME"), for its later runs too.
TEST_F(AgentsTest, AnOfflineAgentRunListsTheNamesWithTheAgentsOwnFix) {
  make_agent("quiet");
  const fs::path repo = make_repo("work");
  auto probe = px("agent run quiet --in " + q(repo.string()) + " -- true");
  if (probe.status != 0) GTEST_SKIP() << "the seal does not run here: " << probe.err;
  auto r = px("agent run quiet --in " + q(repo.string()) + " -- sh -c 'getent hosts example.test; true'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("network-offline: example.test (DNS query)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("run again with --allow example.test (or --online)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("`parallex agent set quiet --allow example.test`"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("agent set NAME"), std::string::npos) << r.err;
}

// The sealed variant: the same checks through the Linux seal, where it works here.
TEST_F(AgentsTest, SealedRunEnvironmentAndSignedCommit) {
  if (!have("ssh-keygen")) GTEST_SKIP() << "ssh-keygen is not installed";
  make_agent("sealed");
  const fs::path repo = make_repo("work");
  auto probe = px("agent run sealed --in " + q(repo.string()) + " -- true");
  if (probe.status != 0) GTEST_SKIP() << "the seal does not run here: " << probe.err;
  auto r = px("agent run sealed --in " + q(repo.string()) + " -- env", "",
              "SSH_AUTH_SOCK=/tmp/user-agent.sock GH_TOKEN=ghp_USERUSERUSERUSERUSERUSERUSERUSERUSER");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("SSH_AUTH_SOCK"), std::string::npos);
  EXPECT_EQ(r.out.find("ghp_USER"), std::string::npos);
  EXPECT_NE(r.out.find("GH_TOKEN=" + std::string(placeholder_token)), std::string::npos);
  // The user's files are out of reach; its own key is readable, not writable.
  spit(user_home_ / "notes.txt", "private\n");
  EXPECT_NE(
      px("agent run sealed --in " + q(repo.string()) + " -- cat " + q((user_home_ / "notes.txt").string()))
          .status,
      0);
  EXPECT_EQ(
      px("agent run sealed --in " + q(repo.string()) + " -- cat " + q(paths("sealed").public_key().string()))
          .status,
      0);
  EXPECT_NE(px("agent run sealed --in " + q(repo.string()) + " -- sh -c 'echo x >> " +
               paths("sealed").public_key().string() + "'")
                .status,
            0);
  // Its credential helper (the parallex executable) works inside the seal.
  ASSERT_EQ(px("agent github sealed --no-open", kToken + "\n").status, 0);
  auto fill = px("agent run sealed --in " + q(repo.string()) +
                 " -- sh -c \"printf 'protocol=https\\nhost=github.com\\n\\n' | git credential fill\"");
  EXPECT_EQ(fill.status, 0) << fill.err;
  // Sealed, the token is brokered: the helper answers with a placeholder of
  // its shape (docs/broker.md), which the run's proxy swaps for the token.
  const std::size_t at = fill.out.find("password=");
  ASSERT_NE(at, std::string::npos) << fill.out << fill.err;
  const std::string given = fill.out.substr(at + 9, fill.out.find('\n', at) - at - 9);
  EXPECT_EQ(given.size(), kToken.size()) << fill.out;
  EXPECT_EQ(given.substr(0, 4), kToken.substr(0, 4)) << fill.out;
  EXPECT_EQ(fill.out.find(kToken), std::string::npos) << "the token itself never reaches the run";
  auto commit = px("agent run sealed --in " + q(repo.string()) +
                   " -- sh -c 'echo x > g && git add g && git commit -q -m sealed'");
  ASSERT_EQ(commit.status, 0) << commit.err;
  const fs::path allowed = root_ / "allowed";
  spit(allowed, render_allowed_signers("sealed@example.com", slurp(paths("sealed").public_key())));
  auto verify = sh("cd " + q(repo.string()) + " && git -c gpg.ssh.allowedSignersFile=" + q(allowed.string()) +
                   " verify-commit HEAD");
  EXPECT_EQ(verify.status, 0) << verify.err;
}

// ---- harness config and sign-in ----------------------------------------------

TEST_F(AgentsTest, ShareHarnessConfigLinksReadOnlyFilesAndKeepsTheAgentsOwn) {
  fs::create_directories(user_home_ / ".claude/skills");
  spit(user_home_ / ".claude/CLAUDE.md", "be nice\n");
  make_agent("sharer", "--share-harness-config");
  const fs::path mine = paths("sharer").home() / ".claude";
  EXPECT_TRUE(fs::is_symlink(mine / "CLAUDE.md"));
  EXPECT_EQ(fs::read_symlink(mine / "skills"), user_home_ / ".claude/skills");
  auto show = nlohmann::json::parse(px("agent show sharer --json").out);
  EXPECT_EQ(show["shared_harness_files"].size(), 2u);
  ASSERT_EQ(px("agent set sharer --share-harness-config off").status, 0);
  EXPECT_FALSE(fs::exists(fs::symlink_status(mine / "CLAUDE.md")));
  EXPECT_TRUE(fs::exists(user_home_ / ".claude/CLAUDE.md")) << "the user's own file stays";
  // The agent's own file is never replaced by a link.
  spit(mine / "CLAUDE.md", "agent's own\n");
  ASSERT_EQ(px("agent set sharer --share-harness-config on").status, 0);
  EXPECT_EQ(slurp(mine / "CLAUDE.md"), "agent's own\n");
}

TEST_F(AgentsTest, SignInIsCopiedOnlyAfterAgreement) {
  make_agent("signee");
  fs::create_directories(user_home_ / ".claude");
  spit(user_home_ / ".claude/.credentials.json", "{\"claudeAiOauth\":{}}\n");
  auto asked = px("agent sign-in signee --harness claude-code");
  if (asked.err.find("claude-code") != std::string::npos && asked.status != 0)
    GTEST_SKIP() << "the claude-code plugin is not built here: " << asked.err;
  const fs::path copy = paths("signee").home() / ".claude/.credentials.json";
  EXPECT_FALSE(fs::exists(copy)) << "no terminal to ask and no --yes: nothing is copied";
  auto yes = px("agent sign-in signee --harness claude-code --yes");
  ASSERT_EQ(yes.status, 0) << yes.err;
  ASSERT_TRUE(fs::exists(copy)) << yes.out;
  EXPECT_EQ(mode_of(copy), 0600u);
  EXPECT_EQ(slurp(copy), slurp(user_home_ / ".claude/.credentials.json"));
  spit(copy, "agent's own sign-in\n");
  ASSERT_EQ(px("agent sign-in signee --harness claude-code --yes").status, 0);
  EXPECT_EQ(slurp(copy), "agent's own sign-in\n") << "kept without --replace";
  ASSERT_EQ(px("agent delete signee --yes").status, 0);
  EXPECT_FALSE(fs::exists(copy)) << "deleting the agent removes its sign-ins";
}

// An agent's own sessions run what is in Codex's scratch folders (the links it
// puts first on its commands' PATH, its shell snapshots): a sealed run of the
// agent has its own there, dropped at its end, so an unsealed session of the
// agent (beside it or next) never runs what a sealed one wrote; and what
// unsealed sessions leave there is not named before each unsealed run.
TEST_F(AgentsTest, ASealedRunsScratchIsItsOwnAndUnsealedRunsAreNotWarnedOfIt) {
  make_agent("scratchy");
  const fs::path repo = make_repo("work");
  auto probe = px("agent run scratchy --in " + q(repo.string()) + " -- true");
  if (probe.status != 0) GTEST_SKIP() << "the seal does not run here: " << probe.err;
  const fs::path codex = paths("scratchy").home() / ".codex";
  fs::create_directories(codex / "tmp" / "arg0-linux" / "codex-arg0Live01");
  const std::string plant =
      "import os\n"
      "d = os.path.expanduser('~/.codex/tmp/arg0-linux/codex-arg0Live01')\n"
      "open(d + '/git', 'w').write('#!/bin/sh\\necho PLANTED\\n')\n"
      "os.chmod(d + '/git', 0o755)\n"
      "print('WROTE', os.path.exists(d + '/git'))\n";
  auto sealed =
      px("agent run scratchy --harness codex --in " + q(repo.string()) + " -- /usr/bin/python3 -c " + q(plant));
  ASSERT_EQ(sealed.status, 0) << sealed.err;
  EXPECT_NE(sealed.out.find("WROTE True"), std::string::npos) << sealed.out << sealed.err;
  EXPECT_FALSE(fs::exists(codex / "tmp" / "arg0-linux" / "codex-arg0Live01" / "git"))
      << "what a sealed run wrote in the agent's scratch folder stayed for its next session";
  EXPECT_TRUE(fs::is_directory(codex / "tmp" / "arg0-linux" / "codex-arg0Live01"));
  // An unsealed session's own links, then the next unsealed run: nothing to warn of.
  auto own = px("agent run scratchy --unsealed --in " + q(repo.string()) +
                " -- sh -c 'ln -s /bin/true \"$HOME/.codex/tmp/arg0-linux/codex-arg0Live01/apply_patch\"'");
  ASSERT_EQ(own.status, 0) << own.err;
  auto next = px("agent run scratchy --unsealed --in " + q(repo.string()) + " -- true");
  EXPECT_EQ(next.status, 0) << next.err;
  EXPECT_EQ(next.err.find(".codex/tmp"), std::string::npos) << next.err;
}

TEST_F(AgentsTest, UnsealedRunNamesHarnessSettingsThatRunCommands) {
  make_agent("hooked");
  const fs::path repo = make_repo("work");
  auto quiet = px("agent run hooked --unsealed --in " + q(repo.string()) + " -- true");
  EXPECT_EQ(quiet.err.find("settings.json"), std::string::npos) << quiet.err;
  fs::create_directories(paths("hooked").home() / ".claude");
  spit(paths("hooked").home() / ".claude/settings.json", R"({"hooks": {"Stop": [{"command": "id"}]}})");
  auto warned = px("agent run hooked --unsealed --in " + q(repo.string()) + " -- true");
  EXPECT_EQ(warned.status, 0) << warned.err;
  EXPECT_NE(warned.err.find(".claude/settings.json: hooks can make the harness run commands"),
            std::string::npos)
      << warned.err;
  // The same declarations the seal of a run in your home uses: keys inside
  // Claude Code's state and Codex's TOML config, data beside them unnamed.
  spit(paths("hooked").home() / ".claude/.claude.json",
       R"({"numStartups": 3, "mcpServers": {"x": {"command": "sh"}}})");
  fs::create_directories(paths("hooked").home() / ".codex");
  spit(paths("hooked").home() / ".codex/config.toml", "model = \"gpt-5\"\nnotify = [\"sh\"]\n");
  auto keys = px("agent run hooked --unsealed --in " + q(repo.string()) + " -- true");
  EXPECT_NE(keys.err.find(".claude/.claude.json: mcpServers can make"), std::string::npos) << keys.err;
  EXPECT_NE(keys.err.find(".codex/config.toml: notify can make"), std::string::npos) << keys.err;
  EXPECT_EQ(keys.err.find("numStartups"), std::string::npos) << keys.err;
  EXPECT_EQ(keys.err.find("model"), std::string::npos) << keys.err;
}
