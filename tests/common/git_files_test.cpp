// What in a git dir makes git run a program (common/git_files.hpp): the
// config allowlist, attributes that select drivers, submodule URLs.
#include "common/git_files.hpp"

#include <gtest/gtest.h>

namespace px {
namespace {

TEST(GitFiles, WhatGitWritesWhenItClonesIsSafe) {
  EXPECT_TRUE(unsafe_git_config("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
                                "\tlogallrefupdates = true\n\tworktree = ../../../lib\n"
                                "[remote \"origin\"]\n\turl = https://github.com/o/r.git\n"
                                "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
                                "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n"
                                "[submodule \"lib\"]\n\turl = ../lib\n\tactive = true\n")
                  .empty());
}

TEST(GitFiles, KeysThatNameProgramsAreUnsafe) {
  for (const char* config : {"[core]\n\tfsmonitor = id\n",
                             "[core]\n\thooksPath = /tmp/h\n",
                             "[core]\n\tsshCommand = id\n",
                             "[core]\n\teditor = id\n",
                             "[core]\n\tpager = id\n",
                             "[filter \"x\"]\n\tclean = id\n",
                             "[diff \"x\"]\n\ttextconv = id\n",
                             "[merge \"x\"]\n\tdriver = id\n",
                             "[credential]\n\thelper = !id\n",
                             "[alias]\n\tst = !id\n",
                             "[include]\n\tpath = /tmp/c\n",
                             "[includeIf \"gitdir:/\"]\n\tpath = /tmp/c\n",
                             "[submodule \"s\"]\n\tupdate = !id\n",
                             "[remote \"o\"]\n\turl = ext::sh -c id\n",
                             "[remote \"o\"]\n\tuploadpack = id\n",
                             "[gpg]\n\tprogram = id\n",
                             "[sequence]\n\teditor = id\n",
                             "[core]\nfsmonitor=id",
                             "[core.x]\n\tfsmonitor = id\n",
                             "[CORE]\n\tFSMONITOR = id\n",
                             "fsmonitor = id\n",
                             "[core]\n\tfsmonitor = \\\nid\n"}) {
    SCOPED_TRACE(config);
    EXPECT_FALSE(unsafe_git_config(config).empty());
  }
  const auto found = unsafe_git_config("[core]\n\tbare = false\n\tfsmonitor = id\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found.front(), "core.fsmonitor (line 3)");
}

TEST(GitFiles, AttributesThatSelectDriversAreUnsafe) {
  EXPECT_TRUE(
      unsafe_git_attributes("*.c diff=cpp\n*.bin binary\n*.txt text eol=lf\n*.md merge=union\n").empty());
  EXPECT_EQ(unsafe_git_attributes("* filter=evil\n").size(), 1u);
  EXPECT_EQ(unsafe_git_attributes("*.c diff=mine\n").size(), 1u);
  EXPECT_EQ(unsafe_git_attributes("# x\n*.c merge=mine text\n").front(), "merge=mine (line 2)");
}

TEST(GitFiles, SubmoduleUrlsResolveAsGitDoes) {
  EXPECT_EQ(resolve_submodule_url("../lib", "/tmp/gt/main"), "/tmp/gt/lib");
  EXPECT_EQ(resolve_submodule_url("../lib.git", "https://github.com/o/r.git"),
            "https://github.com/o/lib.git");
  EXPECT_EQ(resolve_submodule_url("../../x/lib", "https://github.com/o/r"), "https://github.com/x/lib");
  EXPECT_EQ(resolve_submodule_url("../lib.git", "git@github.com:o/r.git"), "git@github.com:o/lib.git");
  EXPECT_EQ(resolve_submodule_url("./sub", "/srv/r/"), "/srv/r/sub");
  EXPECT_EQ(resolve_submodule_url("https://h/x.git", "/srv/r"), "https://h/x.git");
}

}  // namespace
}  // namespace px
