/* Reads a file (a secret; or /proc/PID/environ of an outside process).
 * Usage: read_file PATH */
#include "probe.h"
#include <fcntl.h>
#include <unistd.h>
int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
  if (fd < 0) return px_errno_result(-1);
  char buf[256];
  ssize_t n = read(fd, buf, sizeof buf);
  if (n < 0 && errno == EISDIR) return px_result("OPEN"); /* a directory, opened for listing */
  if (n < 0) return px_errno_result(-1);
  return px_result(n == 0 ? "EMPTY" : "OPEN");
}
