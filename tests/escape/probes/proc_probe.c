/* Other processes and this one. Usage: proc_probe kill PID | ptrace PID |
 *   mem PID (open /proc/PID/mem) | fds (count fds other than 0-2) | nnp |
 *   ptrace_child (ptrace our own child: allowed or refused?) */
#include "probe.h"
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const char* op = argv[1];
  if (!strcmp(op, "kill") && argc > 2) return px_errno_result(kill(atoi(argv[2]), SIGCONT));
  if (!strcmp(op, "ptrace") && argc > 2) return px_errno_result(ptrace(PTRACE_ATTACH, atoi(argv[2]), 0, 0));
  if (!strcmp(op, "mem") && argc > 2) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%s/mem", argv[2]);
    return px_errno_result(open(path, O_RDONLY));
  }
  if (!strcmp(op, "fds")) {
    DIR* d = opendir("/proc/self/fd");
    if (!d) return px_errno_result(-1);
    int self = dirfd(d), extra = 0;
    char list[512] = "";
    struct dirent* e;
    while ((e = readdir(d))) {
      if (e->d_name[0] == '.') continue;
      int fd = atoi(e->d_name);
      if (fd > 2 && fd != self) {
        extra++;
        strncat(list, e->d_name, sizeof list - strlen(list) - 2);
        strcat(list, ",");
      }
    }
    printf("RESULT %s %d %s\n", extra ? "OPEN" : "NONE", extra, list);
    fflush(stdout);
    return 0;
  }
  if (!strcmp(op, "nnp")) {
    FILE* f = fopen("/proc/self/status", "r");
    if (!f) return px_errno_result(-1);
    char line[256];
    while (fgets(line, sizeof line, f))
      if (!strncmp(line, "NoNewPrivs:", 11)) return px_result(strstr(line, "1") ? "NNP1" : "NNP0");
    return px_result("E?");
  }
  return 2;
}
