// SPDX-License-Identifier: GPL-2.0
/*
 * rthog CPU SECONDS: spin on CPU as a SCHED_FIFO task for SECONDS.  With
 * the kernel's real-time throttling off (sched_rt_runtime_us -1), no
 * SCHED_OTHER task runs on that CPU meanwhile: testpmu.sh keeps a kdamond
 * from draining its rings this way, as a kdamond that is preempted for
 * long would be.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sched_param param = { .sched_priority = 1 };
	double end;
	cpu_set_t set;

	if (argc != 3) {
		fprintf(stderr, "usage: %s CPU SECONDS\n", argv[0]);
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(atoi(argv[1]), &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		return 1;
	}
	if (sched_setscheduler(0, SCHED_FIFO, &param)) {
		perror("sched_setscheduler");
		return 1;
	}
	end = now() + atof(argv[2]);
	while (now() < end)
		;
	return 0;
}
