// SPDX-License-Identifier: GPL-2.0-only
/*
 * The host's cost of tbench_srv's `waitpid(-1, NULL, WNOHANG)` with k live children
 * (dbench's tbench_srv.c listener() calls it before every accept(), with SIGCHLD
 * ignored). do_wait() walks the caller's whole children list (kernel/exit.c
 * do_wait_thread() -> wait_consider_task()) under tasklist_lock and finds nothing to
 * reap, so the call costs a fixed part plus a look at each child: the costs
 * waitpid_nohang and wait_scan_child (src/machine/costs.def).
 *
 * Build and run (not part of the CMake build: a host measurement):
 *   cc -O2 -o waitpid_scan bench/waitpid_scan.c && setsid ./waitpid_scan
 * It forks children that pause(), and at 1, 256, ..., 2048 of them prints the best of 5
 * means over 2000 calls; it ends by killing its process group (hence setsid).
 */
#define _DEFAULT_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(void)
{
	static const int marks[] = { 1, 256, 512, 768, 1024, 1536, 2048 };
	const int reps = 2000;
	int k = 0;

	signal(SIGCHLD, SIG_IGN);
	for (unsigned m = 0; m < sizeof(marks) / sizeof(marks[0]); m++) {
		while (k < marks[m]) {
			pid_t p = fork();

			if (p < 0) {
				perror("fork");
				kill(0, SIGTERM);
				return 1;
			}
			if (p == 0) {
				pause();
				_exit(0);
			}
			k++;
		}
		usleep(200000);
		double best = 1e18;
		for (int r = 0; r < 5; r++) {
			double t0 = now_ns();
			for (int i = 0; i < reps; i++)
				waitpid(-1, NULL, WNOHANG);
			double d = (now_ns() - t0) / reps;
			if (d < best)
				best = d;
		}
		printf("children %5d  waitpid(WNOHANG) %8.0f ns\n", k, best);
		fflush(stdout);
	}
	kill(0, SIGTERM);
	return 0;
}
