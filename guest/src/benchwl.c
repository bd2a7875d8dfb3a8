// SPDX-License-Identifier: GPL-2.0
/*
 * benchwl: the workload of make bench.
 *
 * One anonymous mapping of the working set, populated once, cut into
 * windows of the hot size.  What is written depends on the pattern (-p):
 *
 *	window	one window is hot (every page written on every pass), one is
 *		warm (written on every eighth pass), the rest stay cold.  With
 *		-M the hot window moves to another window every so many
 *		seconds, and the warm one with it, so that a monitor has to
 *		find it again.
 *	ranges	three hot ranges of 4, 2 and 1 windows, apart, all written on
 *		every pass; the rest stays cold.  They never move.
 *	zipf	every window may be written: each pass writes one, picked with
 *		probability proportional to 1 / (rank + 1)^0.8 (Zipf-like),
 *		where the windows' ranks are a fixed shuffle of their order.
 *		In the long run the hot ones are those written at least half
 *		as often as the hottest: ranks 0 and 1 (1 and 0.57 of rank
 *		0's rate; rank 2 is at 0.42, so that none sits on the line).
 *		A span of some passes is a draw from that, so the passes are
 *		logged (-g), for a monitor's span to be scored against the
 *		passes made in it.  -r paces the passes, so that a window is
 *		not written more often than a monitor checks it, and the
 *		touch and fault modes make the same.
 *	threads	THREADS threads (-T, default 4), each writing a window of its
 *		own, spread over the working set, on every one of its passes.
 *
 * In "fault" mode each written window is dropped with MADV_DONTNEED after
 * the pass, so that every access is also a page fault: the software
 * page-fault event sees it as well as the Accessed bits do.
 *
 * Files it writes:
 *	-i INFO		once, when the working set exists:
 *			"ws START END", "pid PID", "cur ADDRESS" (the variable
 *			holding the page being written, for the test PMU;
 *			with threads, whichever thread wrote last), and
 *			"hot START END" for each hot range of a pattern that
 *			stays put
 *	-g TIMELINE	window: a line per hot window, when it starts:
 *			"NS HOT_START HOT_END WARM_START WARM_END"; zipf: a
 *			line about every 10 ms, "NS PASSES...", the passes so
 *			far of each window, in the order of their addresses.
 *			NS from CLOCK_MONOTONIC (trace_clock "mono" in tracefs)
 *	-c COUNT	rewritten about every 50 ms: "PAGES NS", the pages
 *			written so far and when
 * Addresses are hexadecimal, ends exclusive.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MB (1024UL * 1024UL)
#define WARM_EVERY 8
#define MAX_THREADS 16
#define ZIPF_S 0.8
/* how often zipf logs its windows' passes */
#define ZIPF_LOG_NS 10000000ULL

enum pattern { P_WINDOW, P_RANGES, P_ZIPF, P_THREADS };

static const char * const pattern_names[] = {
	[P_WINDOW] = "window", [P_RANGES] = "ranges", [P_ZIPF] = "zipf",
	[P_THREADS] = "threads",
};

/* The address being written now; stored atomically, so never elided. */
static unsigned long cur;

/* Pages written so far, by every thread. */
static unsigned long long pages;

static unsigned long page, win_bytes;
static int fault, cfd = -1;
static unsigned long long end_ns;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static unsigned long long max_ull(unsigned long long a, unsigned long long b)
{
	return a > b ? a : b;
}

static int usage(const char *prog, int rc)
{
	fprintf(rc ? stderr : stdout,
		"Usage: %s [-w ws_mb] [-H hot_mb] [-m touch|fault] [-p pattern] [-T threads]\n"
		"          [-M move_s] [-r rate] [-s seconds] [-i info] [-g timeline]\n"
		"          [-c count]\n"
		"  -w  working set in MiB (default 64)\n"
		"  -H  window in MiB, dividing -w (default 8)\n"
		"  -m  touch: write pages; fault: write and drop them (default touch)\n"
		"  -p  window, ranges, zipf or threads (default window)\n"
		"  -T  threads of the threads pattern, 1 to %d (default 4)\n"
		"  -M  move the hot window every this many seconds (default 0: never)\n"
		"  -r  zipf: passes a second, 0 for as many as it makes (default 0)\n"
		"  -s  run time in seconds, 0 for until killed (default 0)\n",
		prog, MAX_THREADS);
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

/* Rewrite the count file with PAGES, if it is due. */
static int write_count(unsigned long long n)
{
	static unsigned long long next_count;
	unsigned long long t;
	char line[64];
	int len;

	if (cfd < 0 || (t = now_ns()) < next_count)
		return 0;
	len = snprintf(line, sizeof(line), "%20llu %20llu\n", n, t);
	if (pwrite(cfd, line, len, 0) != len) {
		perror("pwrite");
		return -1;
	}
	next_count = t + 50000000ULL;
	return 0;
}

/*
 * Write every page of the window at W, dropping it after in fault mode;
 * COUNT says whether this thread keeps the count file.
 */
static int write_window(char *w, int count)
{
	unsigned long i, n;

	for (i = 0; i < win_bytes; i += page) {
		__atomic_store_n(&cur, (unsigned long)&w[i], __ATOMIC_RELAXED);
		w[i] += 1;
		/* the shared count is updated once in 64 pages */
		if ((i / page + 1) % 64)
			continue;
		n = __atomic_add_fetch(&pages, 64, __ATOMIC_RELAXED);
		if (count && write_count(n))
			return -1;
	}
	if (fault && madvise(w, win_bytes, MADV_DONTNEED)) {
		perror("madvise");
		return -1;
	}
	return 0;
}

static int running(void)
{
	return !end_ns || now_ns() < end_ns;
}

/* A thread of the threads pattern: its window, over and over. */
static void *writer(void *w)
{
	while (running()) {
		if (write_window(w, 0))
			exit(1);
	}
	return NULL;
}

/* A random number in [0, 1), from a fixed seed: runs compare. */
static double rnd(void)
{
	static unsigned long long x = 88172645463325252ULL;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return (x >> 11) * (1.0 / 9007199254740992.0);
}

int main(int argc, char **argv)
{
	unsigned long ws_mb = 64, hot_mb = 8, nwin, i, nhot = 0;
	unsigned long long start, move_ns = 0, next_move = 0, phase = 0;
	const char *info = NULL, *timeline = NULL, *count = NULL;
	unsigned long hot_at[MAX_THREADS], hot_len[MAX_THREADS];
	unsigned long order[4096], passes[4096] = { 0 }, k;
	unsigned long long next_log = 0, next_pass = 0, pass_ns = 0;
	double weight[4096];
	enum pattern pat = P_WINDOW;
	char *ws, *hot, *warm, tmp[4096];
	double seconds = 0, move = 0, zsum = 0, rate = 0;
	pthread_t tid[MAX_THREADS];
	int opt, threads = 4;
	unsigned int pass = 0;
	FILE *tl = NULL, *f;

	while ((opt = getopt(argc, argv, "w:H:m:p:T:M:r:s:i:g:c:h")) != -1) {
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
		case 'p':
			for (i = 0; i <= P_THREADS; i++) {
				if (!strcmp(optarg, pattern_names[i]))
					break;
			}
			if (i > P_THREADS)
				return usage(argv[0], 2);
			pat = i;
			break;
		case 'T':
			threads = atoi(optarg);
			break;
		case 'M':
			move = strtod(optarg, NULL);
			break;
		case 'r':
			rate = strtod(optarg, NULL);
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
	    seconds < 0 || rate < 0 || threads < 1 || threads > MAX_THREADS)
		return usage(argv[0], 2);
	nwin = ws_mb / hot_mb;
	/* the ranges must fit apart; the threads' windows must too */
	if ((pat == P_RANGES && nwin < 16) ||
	    (pat == P_ZIPF && nwin > sizeof(order) / sizeof(order[0])) ||
	    (pat == P_THREADS && nwin < 2 * (unsigned long)threads))
		return usage(argv[0], 2);
	page = sysconf(_SC_PAGESIZE);
	win_bytes = hot_mb * MB;

	ws = mmap(NULL, ws_mb * MB, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ws == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(ws, 1, ws_mb * MB);
	__atomic_store_n(&cur, (unsigned long)ws, __ATOMIC_RELAXED);

	/* the hot ranges of the patterns that stay put, in windows */
	switch (pat) {
	case P_RANGES:
		hot_at[0] = nwin / 8;
		hot_len[0] = 4;
		hot_at[1] = nwin / 2;
		hot_len[1] = 2;
		hot_at[2] = nwin * 13 / 16;
		hot_len[2] = 1;
		nhot = 3;
		break;
	case P_ZIPF:
		/* a fixed shuffle: order[rank] is the window of that rank */
		for (i = 0; i < nwin; i++)
			order[i] = i;
		for (i = nwin - 1; i > 0; i--) {
			unsigned long j = (unsigned long)(rnd() * (i + 1));
			unsigned long t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (i = 0; i < nwin; i++) {
			weight[i] = pow(i + 1, -ZIPF_S);
			zsum += weight[i];
		}
		for (i = 0; i < MAX_THREADS && weight[i] * 2 >= weight[0];
		     i++) {
			hot_at[i] = order[i];
			hot_len[i] = 1;
		}
		nhot = i;
		break;
	case P_THREADS:
		for (i = 0; i < (unsigned long)threads; i++) {
			hot_at[i] = i * nwin / threads + 1;
			hot_len[i] = 1;
		}
		nhot = threads;
		break;
	case P_WINDOW:
		break;
	}

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
		for (i = 0; i < nhot; i++)
			fprintf(f, "hot %lx %lx\n",
				(unsigned long)ws + hot_at[i] * win_bytes,
				(unsigned long)ws +
				(hot_at[i] + hot_len[i]) * win_bytes);
		if (fclose(f) || rename(tmp, info)) {
			fprintf(stderr, "%s: %s\n", info, strerror(errno));
			return 1;
		}
	}

	start = now_ns();
	if (seconds)
		end_ns = start + (unsigned long long)(seconds * 1e9);

	if (pat == P_THREADS) {
		for (i = 0; i < (unsigned long)threads; i++) {
			errno = pthread_create(&tid[i], NULL, writer,
					       ws + hot_at[i] * win_bytes);
			if (errno) {
				perror("pthread_create");
				return 1;
			}
		}
		/* this thread keeps the count */
		while (running()) {
			if (write_count(__atomic_load_n(&pages,
							__ATOMIC_RELAXED)))
				return 1;
			usleep(10000);
		}
		for (i = 0; i < (unsigned long)threads; i++)
			pthread_join(tid[i], NULL);
		return 0;
	}

	if (move)
		move_ns = (unsigned long long)(move * 1e9);
	if (rate)
		pass_ns = (unsigned long long)(1e9 / rate);
	next_move = start;
	hot = warm = ws;
	for (;;) {
		/* one clock read a pass, for the end and the window's move */
		unsigned long long t = now_ns();

		if (end_ns && t >= end_ns)
			break;
		if (pat == P_RANGES) {
			unsigned long r, k;

			for (r = 0; r < nhot; r++) {
				for (k = 0; k < hot_len[r]; k++) {
					if (write_window(ws + (hot_at[r] + k) *
							 win_bytes, 1))
						return 1;
				}
			}
			continue;
		}
		if (pat == P_ZIPF) {
			double x;

			if (rate && t < next_pass) {
				struct timespec ts = {
					.tv_sec = next_pass / 1000000000ULL,
					.tv_nsec = next_pass % 1000000000ULL,
				};

				clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
						&ts, NULL);
				continue;
			}
			/* behind the rate, as in fault mode it may be: no burst */
			next_pass = max_ull(next_pass + pass_ns, t);
			x = rnd() * zsum;
			for (i = 0; i < nwin - 1; i++) {
				x -= weight[i];
				if (x < 0)
					break;
			}
			if (tl && t >= next_log) {
				/* the passes of each window so far */
				fprintf(tl, "%llu", t);
				for (k = 0; k < nwin; k++)
					fprintf(tl, " %lu", passes[k]);
				fputc('\n', tl);
				fflush(tl);
				next_log = t + ZIPF_LOG_NS;
			}
			passes[order[i]]++;
			if (write_window(ws + order[i] * win_bytes, 1))
				return 1;
			continue;
		}
		if (t >= next_move) {
			/* three windows on, to land away from the last one */
			unsigned long h = (phase * 3) % nwin;

			hot = ws + h * win_bytes;
			warm = ws + ((h + nwin / 2) % nwin) * win_bytes;
			if (tl) {
				fprintf(tl, "%llu %lx %lx %lx %lx\n", t,
					(unsigned long)hot,
					(unsigned long)hot + win_bytes,
					(unsigned long)warm,
					(unsigned long)warm + win_bytes);
				fflush(tl);
			}
			phase++;
			next_move = move_ns ? t + move_ns : ~0ULL;
		}
		if (write_window(hot, 1))
			return 1;
		if (++pass % WARM_EVERY)
			continue;
		if (write_window(warm, 1))
			return 1;
	}
	return 0;
}
