#pragma once
// A synthetic agent run for the report tests: a runs folder with one run record
// and proxy log, a home holding the fixture transcripts, and a real git
// repository with commits made after the refs recorded at the start.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace px_test {

namespace fs = std::filesystem;

// Every planted secret, one per shape the redactor knows, and the literal
// registered as the run's proxy password.
struct Secrets {
  std::string github = "ghp_" + std::string(36, 'A');
  std::string github_pat = "github_pat_11ABCDEFG0" + std::string(40, 'b');
  std::string anthropic = "sk-ant-api03-" + std::string(40, 'c');
  std::string openai = "sk-proj-" + std::string(40, 'd');
  std::string aws_access = "AKIAIOSFODNN7EXAMPLE";
  std::string aws_secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  std::string private_key_body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB";
  std::string url_password = "hunter2-url-secret";
  std::string proxy_password = "pxpw-0123456789abcdef";
  std::vector<std::string> raw() const {
    return {github, github_pat, anthropic, openai, aws_access, aws_secret, private_key_body, url_password,
            proxy_password};
  }
  std::string all_in_one_text() const;
};

struct Scratch {
  fs::path root;
  Scratch();
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

// Runs a shell command (test set-up only); returns its exit status.
int sh(const std::string& command);
std::string sh_output(const std::string& command);
void write_text(const fs::path& file, const std::string& text);
std::string read_text(const fs::path& file);
std::string find_tool(const std::vector<std::string>& names);

inline constexpr const char* kRunId = "20261120-100000-abcd";
inline constexpr const char* kStart = "2026-11-20T10:00:00.000Z";
inline constexpr const char* kEnd = "2026-11-20T10:05:00.000Z";

struct SyntheticRun {
  fs::path runs_dir, home, repo, keys;
  fs::path allowed_signers;
  bool signed_commit = false;  // ssh-keygen was there to sign one
  nlohmann::json record;
  // Builds it all under `root`; `secrets` are planted in every source.
  void build(const fs::path& root, const Secrets& secrets);
  void write_record() const;
};

}  // namespace px_test
