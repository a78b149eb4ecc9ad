/* Creates (with its parent dirs) or appends to a file and writes a byte.
 * Usage: write_file PATH [trunc] */
#include "probe.h"
#include <fcntl.h>
#include <unistd.h>
int main(int argc, char** argv) {
  if (argc < 2) return 2;
  px_make_parents(argv[1]);
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (argc > 2 ? O_TRUNC : O_APPEND);
  int fd = open(argv[1], flags, 0644);
  if (fd < 0) return px_errno_result(-1);
  return px_errno_result(write(fd, "x", 1));
}
