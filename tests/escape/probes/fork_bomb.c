/* A fork bomb that stops itself: forks children that wait (each holds one
 * process slot) until fork fails or CAP children exist, then lets them all go.
 * Prints "RESULT <errno name> <children>" (EAGAIN: the run's process limit
 * stopped it), or "RESULT UNBOUNDED <children>" when it reached CAP, which
 * the caller sets well above the limit so that a missing limit cannot take
 * the machine down with it.
 * Usage: fork_bomb CAP */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe.h"
int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const long cap = strtol(argv[1], NULL, 10);
  int hold[2];
  if (pipe(hold) != 0) return 3;
  signal(SIGPIPE, SIG_IGN);
  long made = 0;
  int err = 0;
  while (made < cap) {
    const pid_t child = fork();
    if (child < 0) {
      err = errno;
      break;
    }
    if (child == 0) {
      char b;
      close(hold[1]);
      /* EOF when the bomb closes its end (or dies): then go. */
      while (read(hold[0], &b, 1) < 0 && errno == EINTR) {
      }
      _exit(0);
    }
    ++made;
  }
  printf("RESULT %s %ld\n", made >= cap ? "UNBOUNDED" : px_errno_name(err), made);
  fflush(stdout);
  close(hold[1]);
  while (wait(NULL) > 0 || errno == EINTR) {
  }
  return 0;
}
