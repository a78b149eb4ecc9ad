// The mount table as the kernel writes it: a hybrid cgroup layout's lines,
// optional fields of any number, paths with the kernel's octal escapes, and
// lines that are not mount entries.
#include "common/mountinfo.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace px {
namespace {

namespace fs = std::filesystem;

TEST(Mountinfo, ReadsEachEntryWithItsFilesystemAndUnescapedPaths) {
  char dir[] = "/tmp/px-mountinfo-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const fs::path file = fs::path(dir) / "mountinfo";
  std::ofstream(file)
      << "22 1 0:21 / /sys/fs/cgroup rw,nosuid shared:9 - tmpfs tmpfs ro,mode=755\n"
         "23 22 0:22 / /sys/fs/cgroup/unified rw,nosuid shared:10 master:2 - cgroup2 cgroup2 rw,nsdelegate\n"
         "31 22 0:30 /parallex /sys/fs/cgroup/pids rw shared:17 - cgroup cgroup rw,pids\n"
         "40 1 8:1 /home/a\\040b /mnt/with\\040space\\134x rw - ext4 /dev/sda1 rw\n"
         "not a mount line\n";
  const auto mounts = read_mountinfo(file);
  ASSERT_EQ(mounts.size(), 4u);
  EXPECT_EQ(mounts[0].fstype, "tmpfs");
  EXPECT_EQ(mounts[1].fstype, "cgroup2");
  EXPECT_EQ(mounts[1].mountpoint, "/sys/fs/cgroup/unified");
  EXPECT_EQ(mounts[2].root, "/parallex");
  EXPECT_TRUE(mounts[2].has_super_option("pids"));
  EXPECT_FALSE(mounts[2].has_super_option("pid"));
  EXPECT_FALSE(mounts[1].has_super_option("pids"));
  EXPECT_EQ(mounts[3].root, "/home/a b");
  EXPECT_EQ(mounts[3].mountpoint, "/mnt/with space\\x");
  EXPECT_EQ(mounts[3].source, "/dev/sda1");
  EXPECT_TRUE(read_mountinfo(fs::path(dir) / "missing").empty());
  fs::remove_all(dir);
}

TEST(Mountinfo, ThisProcessHasARoot) {
  bool root = false;
  for (const auto& m : read_mountinfo()) root |= m.mountpoint == "/";
  EXPECT_TRUE(root);
}

}  // namespace
}  // namespace px
