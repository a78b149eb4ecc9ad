// The check of loose objects a run wrote (protect/git_reads.hpp), on
// objects real git wrote and on files forged with zlib as a hostile run
// would: an object git wrote reads through and matches its name, one copied
// under another's name is caught, what git could not read is never taken as
// checked, and a small file that inflates past the bound is not read through.
#include "protect/git_reads.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/unique_fd.hpp"
#include "spawn.hpp"

namespace {

namespace fs = std::filesystem;
using px::UniqueFd;
using px::protect::check_loose_object;
using px::protect::ObjectCheck;

constexpr std::uint64_t kBound = 64u << 20;

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A shell command's output without its last newlines.
std::string output_of(const std::string& cmd) {
  std::string out = px::test::shell_output(cmd);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

class GitReads : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "px-git-reads-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    ASSERT_EQ(std::system(("git init -q " + quote(dir_.string())).c_str()), 0);
    objects_ = UniqueFd(::open((dir_ / ".git/objects").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(objects_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // The id of `text` written as a blob by git.
  std::string git_blob(const std::string& text) {
    return output_of("printf %s " + quote(text) + " | git -C " + quote(dir_.string()) +
                     " hash-object -w --stdin");
  }
  fs::path file_of(const std::string& id) const {
    return dir_ / ".git/objects" / id.substr(0, 2) / id.substr(2);
  }
  // A loose object file holding `python` (a Python bytes expression),
  // deflated with zlib, at the name `id`.
  void forge(const std::string& id, const std::string& python) {
    fs::create_directories(file_of(id).parent_path());
    const std::string script =
        "import sys, zlib; open(sys.argv[1], 'wb').write(zlib.compress(" + python + "))";
    ASSERT_EQ(std::system(("python3 -c " + quote(script) + " " + quote(file_of(id).string())).c_str()), 0);
  }
  ObjectCheck check(const std::string& id, std::uint64_t bound = kBound) {
    return check_loose_object(objects_.get(), id, bound);
  }

  fs::path dir_;
  UniqueFd objects_;
};

TEST_F(GitReads, AnObjectGitWroteReadsThroughAndMatchesItsName) {
  const std::string id = git_blob("hello\n");
  ASSERT_EQ(id.size(), 40u);
  const ObjectCheck c = check(id);
  EXPECT_TRUE(c.checked) << c.problem;
  EXPECT_TRUE(c.mismatched.empty()) << c.mismatched.front();
  EXPECT_EQ(c.read, 6u);
  // A tree and a commit too.
  const std::string commit =
      output_of("cd " + quote(dir_.string()) +
                " && git add -A && git -c user.name=a -c user.email=a@example.com commit -qm m "
                "--allow-empty && git rev-parse HEAD");
  ASSERT_EQ(commit.size(), 40u);
  EXPECT_TRUE(check(commit).checked) << check(commit).problem;
}

TEST_F(GitReads, AnObjectCopiedUnderAnothersNameIsCaught) {
  const std::string good = git_blob("the user's\n");
  const std::string evil = git_blob("evil\n");
  fs::remove(file_of(good));
  fs::copy_file(file_of(evil), file_of(good));
  const ObjectCheck c = check(good);
  ASSERT_EQ(c.mismatched.size(), 1u) << c.problem;
  EXPECT_NE(c.mismatched.front().find(evil), std::string::npos) << c.mismatched.front();
}

TEST_F(GitReads, WhatGitCouldNotReadIsNeverTakenAsChecked) {
  const std::string id = git_blob("hello\n");
  const std::string name = "0123456789abcdef0123456789abcdef01234567";
  const auto unreadable = [&](const std::string& why) {
    const ObjectCheck c = check(name);
    EXPECT_FALSE(c.checked) << why;
    EXPECT_TRUE(c.mismatched.empty()) << why;
    EXPECT_NE(c.problem, "") << why;
    return c.problem;
  };
  forge(name, "b'blob 100\\x00only a little'");
  EXPECT_NE(unreadable("less than declared").find("less than"), std::string::npos);
  forge(name, "b'blob 2\\x00more than two'");
  EXPECT_NE(unreadable("more than declared").find("more than"), std::string::npos);
  forge(name, "b'script 4\\x00true'");
  EXPECT_NE(unreadable("an unknown type").find("header"), std::string::npos);
  forge(name, "b'blob 4true'");
  unreadable("no end of header");
  // Cut short: the first half of git's own file.
  {
    std::ifstream in(file_of(id), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    const std::string whole = s.str();
    fs::remove(file_of(name));
    std::ofstream(file_of(name), std::ios::binary) << whole.substr(0, whole.size() / 2);
  }
  unreadable("cut short");
  // Not a file: a link to git's own object (never followed), a FIFO (never waited on).
  fs::remove(file_of(name));
  fs::create_symlink(file_of(id), file_of(name));
  unreadable("a link");
  fs::remove(file_of(name));
  ASSERT_EQ(::mkfifo(file_of(name).c_str(), 0600), 0);
  unreadable("a FIFO");
  // Not an object's name.
  EXPECT_FALSE(check("../../etc/passwd").checked);
  EXPECT_FALSE(check(id.substr(0, 39) + "G").checked);
}

TEST_F(GitReads, ASmallFileThatInflatesPastTheBoundIsNotReadThrough) {
  const std::string name = "89abcdef0123456789abcdef0123456789abcdef";
  // Declares 1 GiB: refused at the header, having read next to nothing.
  forge(name, "b'blob 1073741824\\x00' + bytes(4 << 20)");
  ASSERT_LT(fs::file_size(file_of(name)), 64u << 10) << "zlib did not make a small file";
  const auto start = std::chrono::steady_clock::now();
  ObjectCheck c = check(name);
  EXPECT_TRUE(c.too_large) << c.problem;
  EXPECT_FALSE(c.checked);
  EXPECT_LT(c.read, 1u << 20);
  // Declares a little and holds 64 MiB: stops where the declared size ends.
  forge(name, "b'blob 10\\x00' + bytes(64 << 20)");
  c = check(name);
  EXPECT_FALSE(c.checked);
  EXPECT_FALSE(c.too_large);
  EXPECT_NE(c.problem.find("more than"), std::string::npos) << c.problem;
  // Within its bound, the same object reads through.
  forge(name, "b'blob 2097152\\x00' + bytes(2 << 20)");
  c = check(name, 4u << 20);
  EXPECT_TRUE(c.checked) << c.problem;
  EXPECT_EQ(c.mismatched.size(), 1u) << "a forged name holds another object";
  EXPECT_EQ(c.read, 2u << 20);
  c = check(name, 1u << 20);
  EXPECT_TRUE(c.too_large);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

}  // namespace
