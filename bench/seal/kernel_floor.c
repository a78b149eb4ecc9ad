// The kernel's share of a sealed run, and nothing else: what `parallex run --
// /bin/true` asks of the kernel, made by the smallest program that can ask it,
// so that bench/seal/run.sh can show how much of a run is the guarantees
// themselves and how much is Parallex's own work around them.
//
// It makes the bench's bwrap row (user, mount, pid, network, IPC, UTS and
// cgroup namespaces; /usr and /etc read-only, bin/lib symlinks, a private
// /tmp, the work folder writable, a fresh /proc and a minimal /dev, a new
// session, death with the parent) and adds what bwrap has no part of:
//   - a cgroup of the run's own, the process born into it (clone3 with
//     CLONE_INTO_CGROUP) and removed at the end: the kill switch's handle;
//   - a Landlock ruleset (reads everywhere, writes in the work folder, /tmp
//     and /dev) and a seccomp filter (a few refused calls), after no_new_privs;
//   - the command forked by an init that is the pid namespace's first process.
// It records nothing, proxies nothing, watches nothing: Parallex's record,
// kill switch socket, watchdog, protected files and plugins are the rest.
//
//   cc -O2 -o kernel_floor bench/seal/kernel_floor.c
//   kernel_floor CGROUP_PARENT WORK_DIR TMP_DIR /bin/true
//
// CGROUP_PARENT is a cgroup v2 directory this user may make children in
// (root: the cgroup2 mount; a user: a delegated scope). Linux, x86_64 or
// aarch64; exits 125 naming the step that failed.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char* step) {
  fprintf(stderr, "kernel_floor: %s: %s\n", step, strerror(errno));
  _exit(125);
}

static void write_file(const char* path, const char* text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) die(path);
  close(fd);
}

static void bind(const char* from, const char* to, int read_only) {
  if (mount(from, to, NULL, MS_BIND | MS_REC, NULL) != 0) die(to);
  if (read_only && mount(NULL, to, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0)
    die(to);
}

static void make_dir(const char* path) {
  if (mkdir(path, 0755) != 0 && errno != EEXIST) die(path);
}

static void make_file(const char* path) {
  int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) die(path);
  close(fd);
}

// The view, as the bench's bwrap row has it, made the way bwrap makes it: a
// tmpfs over /tmp (private to the new mount namespace, so nothing appears in
// the host's /tmp) becomes the root for a moment, the old root is reached as
// /oldroot, the new root is built in /newroot and pivoted into.
static void build_view(const char* work, const char* tmp) {
  char path[4096], from[4096];
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) die("make / private");
  if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) die("base tmpfs");
  make_dir("/tmp/newroot");
  make_dir("/tmp/oldroot");
  if (mount("/tmp/newroot", "/tmp/newroot", NULL, MS_BIND | MS_REC, NULL) != 0) die("newroot mount point");
  if (syscall(SYS_pivot_root, "/tmp", "/tmp/oldroot") != 0) die("pivot_root to the base");
  if (chdir("/") != 0) die("chdir /");
  static const char* const dirs[] = {"usr", "etc", "tmp", "proc", "dev"};
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs; ++i) {
    snprintf(path, sizeof path, "/newroot/%s", dirs[i]);
    make_dir(path);
  }
  static const char* const links[][2] = {
      {"usr/bin", "bin"}, {"usr/lib", "lib"}, {"usr/lib64", "lib64"}, {"usr/sbin", "sbin"}};
  for (size_t i = 0; i < sizeof links / sizeof *links; ++i) {
    snprintf(path, sizeof path, "/newroot/%s", links[i][1]);
    if (symlink(links[i][0], path) != 0) die(path);
  }
  bind("/oldroot/usr", "/newroot/usr", 1);
  bind("/oldroot/etc", "/newroot/etc", 1);
  snprintf(from, sizeof from, "/oldroot%s", tmp);
  bind(from, "/newroot/tmp", 0);
  // The work folder at its own path.
  snprintf(path, sizeof path, "/newroot%s", work);
  for (char* p = path + strlen("/newroot") + 1; *p; ++p)
    if (*p == '/') {
      *p = 0;
      make_dir(path);
      *p = '/';
    }
  make_dir(path);
  snprintf(from, sizeof from, "/oldroot%s", work);
  bind(from, path, 0);
  // A minimal /dev: a tmpfs with the usual nodes bound from the host's.
  if (mount("tmpfs", "/newroot/dev", "tmpfs", MS_NOSUID, "mode=0755") != 0) die("dev tmpfs");
  static const char* const nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
  for (size_t i = 0; i < sizeof nodes / sizeof *nodes; ++i) {
    snprintf(from, sizeof from, "/oldroot/dev/%s", nodes[i]);
    snprintf(path, sizeof path, "/newroot/dev/%s", nodes[i]);
    make_file(path);
    bind(from, path, 0);
  }
  make_dir("/newroot/dev/shm");
  if (mount("tmpfs", "/newroot/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, NULL) != 0) die("dev/shm");
  make_dir("/newroot/dev/pts");
  if (mount("devpts", "/newroot/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
            "newinstance,ptmxmode=0666,mode=620") != 0)
    die("dev/pts");
  if (symlink("pts/ptmx", "/newroot/dev/ptmx") != 0) die("dev/ptmx");
  if (mount("proc", "/newroot/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) die("proc");
  if (umount2("/oldroot", MNT_DETACH) != 0) die("umount the old root");
  if (chdir("/newroot") != 0) die("chdir /newroot");
  if (syscall(SYS_pivot_root, ".", ".") != 0) die("pivot_root to the view");
  if (umount2(".", MNT_DETACH) != 0) die("umount the base");
  if (chdir(work) != 0) die("chdir work");
}

static void restrict_with_landlock(const char* work) {
  struct landlock_ruleset_attr attr = {0};
  const int abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 1) die("landlock (not offered)");
  attr.handled_access_fs =
      LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
      LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
      LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
      LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
      LANDLOCK_ACCESS_FS_MAKE_SYM;
  const int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (ruleset < 0) die("landlock ruleset");
  const __u64 read = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
  const char* const writable[] = {work, "/tmp", "/dev"};
  struct landlock_path_beneath_attr rule = {.allowed_access = read};
  rule.parent_fd = open("/", O_PATH | O_CLOEXEC);
  if (rule.parent_fd < 0 ||
      syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
    die("landlock rule /");
  close(rule.parent_fd);
  for (size_t i = 0; i < sizeof writable / sizeof *writable; ++i) {
    rule.allowed_access = attr.handled_access_fs;
    rule.parent_fd = open(writable[i], O_PATH | O_CLOEXEC);
    if (rule.parent_fd < 0 ||
        syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
      die("landlock rule");
    close(rule.parent_fd);
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
  if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) die("landlock restrict_self");
  close(ruleset);
}

// A few refused calls (EPERM), the rest allowed: the size of the filter
// barely matters to its load; what is timed is installing one.
static void restrict_with_seccomp(void) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 5, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mount, 4, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 3, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_bpf, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_keyctl, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
  };
  struct sock_fprog prog = {.len = sizeof f / sizeof *f, .filter = f};
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) die("seccomp");
}

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: kernel_floor CGROUP_PARENT WORK_DIR TMP_DIR COMMAND [ARGS...]\n");
    return 2;
  }
  char cgroup[4096];
  snprintf(cgroup, sizeof cgroup, "%s/floor-%d", argv[1], (int)getpid());
  if (mkdir(cgroup, 0755) != 0) die("make the run's cgroup");
  const int cgroup_fd = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cgroup_fd < 0) die("open the run's cgroup");
  int go[2];
  if (pipe2(go, O_CLOEXEC) != 0) die("pipe");
  const uid_t uid = getuid();
  const gid_t gid = getgid();

  struct clone_args args = {0};
  args.flags = CLONE_INTO_CGROUP | CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
               CLONE_NEWUTS | CLONE_NEWCGROUP;
  args.exit_signal = SIGCHLD;
  args.cgroup = (uint64_t)cgroup_fd;
  const long child = syscall(SYS_clone3, &args, sizeof args);
  if (child < 0) die("clone3 into the cgroup");
  if (child == 0) {
    // The namespaces' first process: waits for its identity, builds the
    // view, restricts itself, then forks the command and reaps.
    close(go[1]);
    char byte;
    if (read(go[0], &byte, 1) != 1) _exit(125);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) die("die with the parent");
    if (setsid() < 0) die("new session");
    build_view(argv[2], argv[3]);
    restrict_with_landlock(argv[2]);
    restrict_with_seccomp();
    const pid_t command = fork();
    if (command < 0) die("fork the command");
    if (command == 0) {
      execv(argv[4], argv + 4);
      die(argv[4]);
    }
    int status = 0;
    for (;;) {
      const pid_t pid = wait(&status);
      if (pid == command) break;
      if (pid < 0 && errno != EINTR) die("wait");
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  close(go[0]);
  char path[64], map[64];
  snprintf(path, sizeof path, "/proc/%ld/setgroups", child);
  write_file(path, "deny");
  snprintf(path, sizeof path, "/proc/%ld/uid_map", child);
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
  write_file(path, map);
  snprintf(path, sizeof path, "/proc/%ld/gid_map", child);
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
  write_file(path, map);
  if (write(go[1], "g", 1) != 1) die("go-ahead");
  close(go[1]);
  int status = 0;
  while (waitpid((pid_t)child, &status, 0) < 0)
    if (errno != EINTR) die("wait for the seal");
  close(cgroup_fd);
  if (rmdir(cgroup) != 0) die("remove the run's cgroup");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
