// Runs commands in alternation, N rounds (the first of each round rotating),
// and prints each one's median, quartiles and median CPU (user + system of it
// and of the children it waited for). On a VM whose speed drifts by a third
// within minutes, alternation is what makes two builds comparable: both see
// the same drift. Commands are split on spaces; stdout and stderr go to
// /dev/null.
//
//   cc -O2 -o alternate bench/seal/alternate.c
//   ./alternate 300 'old/parallex run -- /bin/true' 'new/parallex run -- /bin/true'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kMaxCommands = 16, kMaxArgs = 64, kWarmUp = 5 };

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// One run of `argv`: its wall time, and its CPU in `cpu`.
static double run_once(char** argv, int devnull, double* cpu) {
  const double start = now_ms();
  const pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    exit(2);
  }
  if (pid == 0) {
    dup2(devnull, 1);
    dup2(devnull, 2);
    execv(argv[0], argv);
    _exit(127);
  }
  int status = 0;
  struct rusage used;
  if (wait4(pid, &status, 0, &used) != pid) {
    perror("wait4");
    exit(2);
  }
  const double wall = now_ms() - start;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "alternate: %s failed (status %d)\n", argv[0], status);
    exit(1);
  }
  *cpu = (double)(used.ru_utime.tv_sec + used.ru_stime.tv_sec) * 1e3 +
         (double)(used.ru_utime.tv_usec + used.ru_stime.tv_usec) / 1e3;
  return wall;
}

int main(int argc, char** argv) {
  if (argc < 3 || argc - 2 > kMaxCommands || atoi(argv[1]) < 4) {
    fprintf(stderr, "usage: alternate ROUNDS(>=4) 'COMMAND ARGS' ['COMMAND ARGS' ...] (at most %d)\n",
            kMaxCommands);
    return 2;
  }
  const int rounds = atoi(argv[1]), count = argc - 2;
  char* args[kMaxCommands][kMaxArgs + 1];
  for (int c = 0; c < count; ++c) {
    int n = 0;
    for (char* word = strtok(strdup(argv[c + 2]), " "); word && n < kMaxArgs; word = strtok(NULL, " "))
      args[c][n++] = word;
    args[c][n] = NULL;
    if (n == 0 || args[c][0][0] != '/') {
      fprintf(stderr, "alternate: give each command by its absolute path: %s\n", argv[c + 2]);
      return 2;
    }
  }
  const int devnull = open("/dev/null", O_WRONLY);
  double* wall = calloc((size_t)(rounds * count), sizeof(double));
  double* cpu = calloc((size_t)(rounds * count), sizeof(double));
  double ignored;
  for (int w = 0; w < kWarmUp; ++w)
    for (int c = 0; c < count; ++c) run_once(args[c], devnull, &ignored);
  for (int r = 0; r < rounds; ++r)
    for (int i = 0; i < count; ++i) {
      const int c = (i + r) % count;
      wall[c * rounds + r] = run_once(args[c], devnull, &cpu[c * rounds + r]);
    }
  printf("| command | median | p25 | p75 | CPU (median) | rounds |\n|---|---|---|---|---|---|\n");
  for (int c = 0; c < count; ++c) {
    double* w = wall + c * rounds;
    double* u = cpu + c * rounds;
    qsort(w, (size_t)rounds, sizeof(double), by_value);
    qsort(u, (size_t)rounds, sizeof(double), by_value);
    printf("| %s | %.2f ms | %.2f | %.2f | %.2f ms | %d |\n", argv[c + 2], w[rounds / 2], w[rounds / 4],
           w[3 * rounds / 4], u[rounds / 2], rounds);
  }
  return 0;
}
