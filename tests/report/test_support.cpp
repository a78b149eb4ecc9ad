#include "test_support.hpp"

#include <stdlib.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/paths.hpp"
#include "test_paths.hpp"

namespace px_test {

std::string Secrets::all_in_one_text() const {
  return "token " + github + " pat " + github_pat + " anthropic " + anthropic + " openai " + openai + " aws " +
         aws_access + " aws_secret_access_key=" + aws_secret + " url https://bot:" + url_password +
         "@git.example.com/r.git proxy " + proxy_password;
}

Scratch::Scratch() {
  std::string tmpl = (fs::temp_directory_path() / "px-report-test-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp");
  root = tmpl;
}

Scratch::~Scratch() {
  std::error_code ec;
  sh("chmod -R u+rwx '" + root.string() + "' 2>/dev/null");
  fs::remove_all(root, ec);
}

int sh(const std::string& command) {
  const int rc = std::system(command.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string sh_output(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return out;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  ::pclose(p);
  return out;
}

void write_text(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string find_tool(const std::vector<std::string>& names) {
  const char* path = std::getenv("PATH");
  for (const auto& n : names)
    if (auto found = px::find_executable(n, path ? path : "/usr/bin:/bin")) return found->string();
  return "";
}

namespace {

std::string claude_line(const std::string& type, const std::string& uuid, const std::string& time,
                        const nlohmann::json& message, const nlohmann::json& extra = nlohmann::json::object()) {
  nlohmann::json j{{"type", type},           {"uuid", uuid},        {"parentUuid", nullptr},
                   {"isSidechain", false},   {"sessionId", "5e55a0b1-0000-4000-8000-00000000beef"},
                   {"timestamp", time},      {"cwd", "/work/planted"}, {"version", "2.1.197"},
                   {"message", message}};
  for (auto& [k, v] : extra.items()) j[k] = v;
  return j.dump() + "\n";
}

}  // namespace

void SyntheticRun::build(const fs::path& root, const Secrets& secrets) {
  runs_dir = root / "agent" / "runs";
  home = root / "agent" / "home";
  keys = root / "agent" / "keys";
  repo = root / "repo";
  fs::create_directories(runs_dir / kRunId);
  fs::create_directories(keys);
  // The fixture transcripts, where each harness keeps them under a home.
  const fs::path fixtures = fs::path(PARALLEX_SOURCE_DIR) / "tests/fixtures/transcripts";
  fs::create_directories(home / ".local/share");
  fs::copy(fixtures / "claude-code", home / ".claude", fs::copy_options::recursive);
  fs::copy(fixtures / "codex", home / ".codex", fs::copy_options::recursive);
  fs::copy(fixtures / "opencode", home / ".local/share/opencode", fs::copy_options::recursive);
  // One more Claude Code session in the window whose command holds every secret.
  const std::string planted = secrets.all_in_one_text();
  std::string jsonl;
  jsonl += claude_line("user", "u1", "2026-11-20T10:04:00.000Z", {{"role", "user"}, {"content", "go"}});
  jsonl += claude_line(
      "assistant", "a1", "2026-11-20T10:04:01.000Z",
      {{"id", "msg_planted"},
       {"model", "claude-test"},
       {"role", "assistant"},
       {"content",
        {{{"type", "tool_use"},
          {"id", "toolu_planted"},
          {"name", "Bash"},
          {"input", {{"command", "echo " + planted + " <script>alert(1)</script> \x1b]0;pwned\x07"}}}}}},
       {"usage", {{"input_tokens", 1}, {"output_tokens", 1}}}},
      {{"requestId", "req_planted"}});
  jsonl += claude_line("user", "u2", "2026-11-20T10:04:02.000Z",
                       {{"role", "user"},
                        {"content", {{{"type", "tool_result"}, {"tool_use_id", "toolu_planted"}, {"content", "ok"}}}}},
                       {{"toolUseResult", {{"stdout", "ok"}, {"stderr", ""}, {"interrupted", false}}}});
  write_text(home / ".claude/projects/-work-planted/5e55a0b1-0000-4000-8000-00000000beef.jsonl", jsonl);

  // A real repository: one commit before the run, then the run's commits.
  const std::string git = "git -C '" + repo.string() + "' -c user.name='reviewer (agent)' -c user.email=reviewer@example.com ";
  fs::create_directories(repo);
  sh(git + "init -q -b main");
  write_text(repo / "README.md", "hello\n");
  sh(git + "add README.md && " + git + "commit -q -m 'before the run'");
  const std::string start_oid = sh_output(git + "rev-parse HEAD").substr(0, 40);
  write_text(repo / "src/app.txt", "app\n");
  sh(git + "add src/app.txt && " + git + "commit -q -m 'add app' -m '" + planted + "'");
  const std::string keygen = find_tool({"ssh-keygen"});
  if (!keygen.empty()) {
    sh("'" + keygen + "' -q -t ed25519 -N '' -C reviewer -f '" + (keys / "id_ed25519").string() + "'");
    const std::string pub = read_text(keys / "id_ed25519.pub");
    allowed_signers = keys / "allowed_signers";
    write_text(allowed_signers, "reviewer@example.com namespaces=\"git\" " + pub);
    write_text(repo / "README.md", "hello, signed\n");
    signed_commit = sh(git + "-c gpg.format=ssh -c user.signingkey='" + (keys / "id_ed25519.pub").string() +
                       "' commit -q -S -am 'signed change'") == 0;
  }
  nlohmann::json refs_start{{"refs/heads/main", start_oid}};
  // A finished agent run records the refs at its end too: the commits are
  // those between the two, whatever their dates.
  const std::string end_oid = sh_output(git + "rev-parse HEAD").substr(0, 40);
  nlohmann::json refs_end{{"refs/heads/main", end_oid}};

  record = {{"id", kRunId},
            {"agent", "reviewer"},
            {"command", "claude -p 'use " + secrets.github + "'"},
            {"argv", {"claude", "-p", "use " + secrets.github}},
            {"harness", "claude-code"},
            {"run_folder", repo.string()},
            {"sealed", true},
            {"network", "allowlist"},
            {"policy", {{"run_home", home.string()}}},
            {"started_at", kStart},
            {"ended_at", kEnd},
            {"exit_status", 0},
            {"proxy_log", (runs_dir / kRunId / "proxy.jsonl").string()},
            {"refused_hosts", {"evil.example.com:443"}},
            {"notices",
             {"proxy password " + secrets.proxy_password + " in a notice",
              "key -----BEGIN OPENSSH PRIVATE KEY-----\n" + secrets.private_key_body +
                  "\n-----END OPENSSH PRIVATE KEY----- leaked"}},
            {"repository", repo.string()},
            {"refs_start", refs_start},
            {"head_start", start_oid},
            {"refs_end", refs_end},
            {"head_end", end_oid}};
  write_record();
  std::string log;
  log += R"({"time":"2026-11-20T10:00:01.000Z","method":"CONNECT","host":"api.anthropic.com","port":443,"verdict":"allowed","reason":"host-allowed","status":200,"bytes_up":1000,"bytes_down":5000,"duration_ms":10})" "\n";
  log += R"({"time":"2026-11-20T10:00:02.000Z","method":"CONNECT","host":"api.anthropic.com","port":443,"verdict":"allowed","reason":"host-allowed","status":200,"bytes_up":24,"bytes_down":120,"duration_ms":10})" "\n";
  log += "this is not json\n";
  log += R"({"time":"2026-11-20T10:00:03.000Z","method":"CONNECT","host":"evil.example.com","port":443,"verdict":"denied","reason":"host-not-allowed","status":403,"bytes_up":0,"bytes_down":0,"duration_ms":0})" "\n";
  log += "{\"time\":\"2026-11-20T10:00:04.000Z\",\"method\":\"GET\",\"host\":\"" + secrets.github +
         ".example.com\",\"port\":80,\"verdict\":\"denied\",\"reason\":\"host-not-allowed\",\"status\":403,"
         "\"bytes_up\":0,\"bytes_down\":0,\"duration_ms\":0}\n";
  log += R"({"time":"2026-11-20T10:00:05.000Z","method":"CONNECT","host":"registry.npmjs.org","port":443,"verdict":"failed","reason":"upstream-unreachable","status":502,"bytes_up":0,"bytes_down":0,"duration_ms":3})" "\n";
  write_text(runs_dir / kRunId / "proxy.jsonl", log);
}

void SyntheticRun::write_record() const { write_text(runs_dir / kRunId / "run.json", record.dump(2)); }

}  // namespace px_test
