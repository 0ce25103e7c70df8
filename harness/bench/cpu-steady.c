/* futuredisk — bench: how steady this machine's CPU is by itself.
 *
 * think=cpu charges the checker's CPU time, so it can repeat no better
 * than the CPU time of identical work does.  This runs the same
 * register-only loop (no memory traffic, no system calls inside it)
 * BLOCKS times on one CPU and prints each block's thread CPU time in
 * nanoseconds, one per line: with nothing else on the machine, any
 * spread is the processor's (or the hypervisor's), not the program's.
 * Two of these on two CPUs at once tell whether the machine as a whole
 * speeds up and slows down (bench_think.py --host).
 *
 * Usage: bench-cpu-steady CPU BLOCKS [ITERATIONS]
 *        (ITERATIONS per block, default 50,000,000: about 0.1 s)
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int64_t
thread_ns (void)
{
  struct timespec t;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static long
number (const char *what, const char *s, long min)
{
  char *end;
  long v;

  errno = 0;
  v = strtol (s, &end, 10);
  if (errno || end == s || *end || v < min) {
    fprintf (stderr, "bench-cpu-steady: bad %s '%s' (a whole number >= %ld)\n",
             what, s, min);
    exit (2);
  }
  return v;
}

int
main (int argc, char **argv)
{
  cpu_set_t set;
  long cpu, blocks, iterations = 50000000;
  /* volatile: the compiler may not fold the loop away or hoist it. */
  volatile uint64_t seed = 1;

  if (argc < 3 || argc > 4) {
    fprintf (stderr, "Usage: bench-cpu-steady CPU BLOCKS [ITERATIONS]\n");
    return 2;
  }
  cpu = number ("CPU", argv[1], 0);
  blocks = number ("BLOCKS", argv[2], 1);
  if (argc == 4)
    iterations = number ("ITERATIONS", argv[3], 1);
  CPU_ZERO (&set);
  if (cpu >= CPU_SETSIZE) {
    fprintf (stderr, "bench-cpu-steady: bad CPU '%s'\n", argv[1]);
    return 2;
  }
  CPU_SET (cpu, &set);
  if (sched_setaffinity (0, sizeof set, &set) == -1) {
    perror ("bench-cpu-steady: sched_setaffinity");
    return 1;
  }
  for (long b = 0; b < blocks; b++) {
    int64_t t0 = thread_ns ();
    uint64_t x = seed;

    for (long i = 0; i < iterations; i++) {
      x = x * 6364136223846793005u + 1442695040888963407u;
      x ^= x >> 17;
    }
    seed = x;
    printf ("%" PRId64 "\n", thread_ns () - t0);
  }
  return 0;
}
