/* One filesystem operation that could undo a carve-in or reach around it.
 * Usage: fs_op rename A B | unlink P | mkdir P | rmdir P | link SRC DST |
 *              symlink_read TARGET LINK FILE (make LINK -> TARGET, read LINK/FILE) */
#include "probe.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const char* op = argv[1];
  if (!strcmp(op, "rename") && argc > 3) return px_errno_result(rename(argv[2], argv[3]));
  if (!strcmp(op, "unlink")) return px_errno_result(unlink(argv[2]));
  if (!strcmp(op, "mkdir")) {
    px_make_parents(argv[2]);
    return px_errno_result(mkdir(argv[2], 0755));
  }
  if (!strcmp(op, "rmdir")) return px_errno_result(rmdir(argv[2]));
  if (!strcmp(op, "link") && argc > 3) return px_errno_result(link(argv[2], argv[3]));
  if (!strcmp(op, "symlink_read") && argc > 4) {
    if (symlink(argv[2], argv[3]) != 0) return px_errno_result(-1);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", argv[3], argv[4]);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return px_errno_result(-1);
    char buf[64];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) return px_errno_result(-1);
    return px_result(n == 0 ? "EMPTY" : "OPEN");
  }
  return 2;
}
