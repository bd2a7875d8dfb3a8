// SPDX-License-Identifier: GPL-2.0
/*
 * benchwl: the workload of make bench.
 *
 * One anonymous mapping of the working set, populated once, cut into
 * windows of the hot size.  One window is hot (every page written on every
 * pass), one is warm (written on every eighth pass), the rest stay cold.
 * With -M the hot window moves to another window every so many seconds, and
 * the warm one with it, so that a monitor has to find it again.
 *
 * In "fault" mode each written window is dropped with MADV_DONTNEED after
 * the pass, so that every access is also a page fault: the software
 * page-fault event sees it as well as the Accessed bits do.
 *
 * Files it writes:
 *	-i INFO		once, when the working set exists:
 *			"ws START END", "pid PID", "cur ADDRESS" (the variable
 *			holding the page being written, for the test PMU)
 *	-g TIMELINE	a line per hot window, when it starts:
 *			"NS HOT_START HOT_END WARM_START WARM_END", NS from
 *			CLOCK_MONOTONIC (trace_clock "mono" in tracefs)
 *	-c COUNT	rewritten about every 50 ms: "PAGES NS", the pages
 *			written so far and when
 * Addresses are hexadecimal, ends exclusive.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MB (1024UL * 1024UL)
#define WARM_EVERY 8

/* The address being written now; stored atomically, so never elided. */
static unsigned long cur;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int usage(const char *prog, int rc)
{
	fprintf(rc ? stderr : stdout,
		"Usage: %s [-w ws_mb] [-H hot_mb] [-m touch|fault] [-M move_s] [-s seconds]\n"
		"          [-i info] [-g timeline] [-c count]\n"
		"  -w  working set in MiB (default 64)\n"
		"  -H  hot (and warm) window in MiB, dividing -w (default 8)\n"
		"  -m  touch: write pages; fault: write and drop them (default touch)\n"
		"  -M  move the hot window every this many seconds (default 0: never)\n"
		"  -s  run time in seconds, 0 for until killed (default 0)\n",
		prog);
	return rc;
}

static FILE *open_or_die(const char *path, const char *mode)
{
	FILE *f = fopen(path, mode);

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		exit(1);
	}
	return f;
}

int main(int argc, char **argv)
{
	unsigned long ws_mb = 64, hot_mb = 8, nwin, page, i;
	unsigned long long start, end = 0, move_ns = 0, next_move = 0;
	unsigned long long pages = 0, next_count = 0, phase = 0;
	const char *info = NULL, *timeline = NULL, *count = NULL;
	char *ws, *hot, *warm, tmp[4096], line[64];
	double seconds = 0, move = 0;
	int fault = 0, opt, cfd = -1;
	unsigned int pass = 0;
	FILE *tl = NULL, *f;

	while ((opt = getopt(argc, argv, "w:H:m:M:s:i:g:c:h")) != -1) {
		switch (opt) {
		case 'w':
			ws_mb = strtoul(optarg, NULL, 0);
			break;
		case 'H':
			hot_mb = strtoul(optarg, NULL, 0);
			break;
		case 'm':
			if (!strcmp(optarg, "fault"))
				fault = 1;
			else if (strcmp(optarg, "touch"))
				return usage(argv[0], 2);
			break;
		case 'M':
			move = strtod(optarg, NULL);
			break;
		case 's':
			seconds = strtod(optarg, NULL);
			break;
		case 'i':
			info = optarg;
			break;
		case 'g':
			timeline = optarg;
			break;
		case 'c':
			count = optarg;
			break;
		case 'h':
			return usage(argv[0], 0);
		default:
			return usage(argv[0], 2);
		}
	}
	if (!hot_mb || ws_mb < 2 * hot_mb || ws_mb % hot_mb || move < 0 ||
	    seconds < 0)
		return usage(argv[0], 2);
	nwin = ws_mb / hot_mb;
	page = sysconf(_SC_PAGESIZE);

	ws = mmap(NULL, ws_mb * MB, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ws == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(ws, 1, ws_mb * MB);
	__atomic_store_n(&cur, (unsigned long)ws, __ATOMIC_RELAXED);

	if (count) {
		cfd = open(count, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (cfd < 0) {
			fprintf(stderr, "%s: %s\n", count, strerror(errno));
			return 1;
		}
	}
	if (timeline)
		tl = open_or_die(timeline, "w");
	/* Written to a temporary name and renamed, so readers never see half. */
	if (info) {
		snprintf(tmp, sizeof(tmp), "%s.tmp", info);
		f = open_or_die(tmp, "w");
		fprintf(f, "ws %lx %lx\npid %d\ncur %lx\n", (unsigned long)ws,
			(unsigned long)ws + ws_mb * MB, getpid(),
			(unsigned long)&cur);
		if (fclose(f) || rename(tmp, info)) {
			fprintf(stderr, "%s: %s\n", info, strerror(errno));
			return 1;
		}
	}

	start = now_ns();
	if (seconds)
		end = start + (unsigned long long)(seconds * 1e9);
	if (move)
		move_ns = (unsigned long long)(move * 1e9);
	next_move = start;
	hot = warm = ws;
	for (;;) {
		unsigned long long t = now_ns();

		if (end && t >= end)
			break;
		if (t >= next_move) {
			/* three windows on, to land away from the last one */
			unsigned long h = (phase * 3) % nwin;

			hot = ws + h * hot_mb * MB;
			warm = ws + ((h + nwin / 2) % nwin) * hot_mb * MB;
			if (tl) {
				fprintf(tl, "%llu %lx %lx %lx %lx\n", t,
					(unsigned long)hot,
					(unsigned long)hot + hot_mb * MB,
					(unsigned long)warm,
					(unsigned long)warm + hot_mb * MB);
				fflush(tl);
			}
			phase++;
			next_move = move_ns ? t + move_ns : ~0ULL;
		}
		for (i = 0; i < hot_mb * MB; i += page) {
			__atomic_store_n(&cur, (unsigned long)&hot[i],
					 __ATOMIC_RELAXED);
			hot[i] += 1;
			if (!(++pages & 63) && cfd >= 0 &&
			    (t = now_ns()) >= next_count) {
				int n = snprintf(line, sizeof(line),
						 "%20llu %20llu\n", pages, t);

				if (pwrite(cfd, line, n, 0) != n) {
					perror("pwrite");
					return 1;
				}
				next_count = t + 50000000ULL;
			}
		}
		if (fault && madvise(hot, hot_mb * MB, MADV_DONTNEED)) {
			perror("madvise");
			return 1;
		}
		if (++pass % WARM_EVERY)
			continue;
		for (i = 0; i < hot_mb * MB; i += page) {
			__atomic_store_n(&cur, (unsigned long)&warm[i],
					 __ATOMIC_RELAXED);
			warm[i] += 1;
			pages++;
		}
		if (fault && madvise(warm, hot_mb * MB, MADV_DONTNEED)) {
			perror("madvise");
			return 1;
		}
	}
	return 0;
}
