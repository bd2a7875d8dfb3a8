// SPDX-License-Identifier: GPL-2.0
/*
 * damon_perf_hotcold: a workload with one hot and one cold anonymous range.
 *
 * The cold range is populated once and then never touched again.  The hot
 * range is accessed in a loop, either by writing every page ("touch", seen
 * by Accessed-bit monitoring) or by writing every page and then dropping it
 * with MADV_DONTNEED so that the next pass page-faults again ("fault", seen
 * by the software page-fault perf event).
 *
 * Once both ranges exist it writes their bounds to the info file as
 *	hot <start> <end>
 *	cold <start> <end>
 *	pid <pid>
 *	cur <address>
 * (hexadecimal addresses, end exclusive), then runs for the given time.
 * The last line gives the address of a variable that holds the address of
 * the page being accessed: a test PMU reads it to sample what this process
 * really touches.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MB (1024UL * 1024UL)

/* The address being accessed now; stored atomically, so never elided. */
static unsigned long cur;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void print_usage(const char *prog)
{
	fprintf(stderr,
		"Usage: %s [-m touch|fault] [-H hot_mb] [-C cold_mb] [-s seconds] [-i info_file]\n"
		"  -m  how the hot range is accessed (default touch)\n"
		"  -H  hot range size in MiB (default 4)\n"
		"  -C  cold range size in MiB (default 32)\n"
		"  -s  run time in seconds, 0 for until killed (default 30)\n"
		"  -i  where to write the ranges (default stdout)\n",
		prog);
}

static char *map(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	unsigned long hot_mb = 4, cold_mb = 32, pages, i;
	long page = sysconf(_SC_PAGESIZE);
	const char *info = NULL;
	double seconds = 30, end;
	int fault = 0, opt;
	char *hot, *cold, *gap;
	FILE *out = stdout;
	char tmp[4096];

	while ((opt = getopt(argc, argv, "m:H:C:s:i:h")) != -1) {
		switch (opt) {
		case 'm':
			if (!strcmp(optarg, "fault"))
				fault = 1;
			else if (strcmp(optarg, "touch"))
				return print_usage(argv[0]), 2;
			break;
		case 'H':
			hot_mb = strtoul(optarg, NULL, 0);
			break;
		case 'C':
			cold_mb = strtoul(optarg, NULL, 0);
			break;
		case 's':
			seconds = strtod(optarg, NULL);
			break;
		case 'i':
			info = optarg;
			break;
		default:
			print_usage(argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (!hot_mb || !cold_mb) {
		print_usage(argv[0]);
		return 2;
	}

	/*
	 * Map cold, a guard gap and hot in one go so the two ranges are
	 * adjacent in the address space but never share a VMA.
	 */
	cold = map(cold_mb * MB + MB + hot_mb * MB);
	gap = cold + cold_mb * MB;
	hot = gap + MB;
	if (munmap(gap, MB)) {
		perror("munmap");
		return 1;
	}
	memset(cold, 1, cold_mb * MB);
	memset(hot, 1, hot_mb * MB);

	/* Written to a temporary name and renamed, so readers never see half. */
	if (info) {
		snprintf(tmp, sizeof(tmp), "%s.tmp", info);
		out = fopen(tmp, "w");
		if (!out) {
			fprintf(stderr, "%s: %s\n", tmp, strerror(errno));
			return 1;
		}
	}
	__atomic_store_n(&cur, (unsigned long)hot, __ATOMIC_RELAXED);
	fprintf(out, "hot %lx %lx\ncold %lx %lx\npid %d\ncur %lx\n",
		(unsigned long)hot, (unsigned long)hot + hot_mb * MB,
		(unsigned long)cold, (unsigned long)cold + cold_mb * MB,
		getpid(), (unsigned long)&cur);
	fflush(out);
	if (out != stdout && (fclose(out) || rename(tmp, info))) {
		fprintf(stderr, "%s: %s\n", info, strerror(errno));
		return 1;
	}

	pages = hot_mb * MB / page;
	end = now() + seconds;
	while (!seconds || now() < end) {
		for (i = 0; i < pages; i++) {
			__atomic_store_n(&cur, (unsigned long)&hot[i * page],
					 __ATOMIC_RELAXED);
			hot[i * page] += 1;
		}
		if (fault && madvise(hot, hot_mb * MB, MADV_DONTNEED)) {
			perror("madvise");
			return 1;
		}
	}
	return 0;
}
