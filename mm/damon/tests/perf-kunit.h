/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for DAMON's perf event access checks.
 */

#ifdef CONFIG_DAMON_PERF_EVENTS_KUNIT_TEST

#ifndef _DAMON_PERF_TEST_H
#define _DAMON_PERF_TEST_H

#include <kunit/test.h>
#include <linux/prandom.h>
#include <linux/unaligned.h>
#include <trace/events/damon.h>

static void damon_perf_test_classify(struct kunit *test)
{
	void *page = (void *)__get_free_page(GFP_KERNEL);
	u64 user = 0x7f0000001000ull, paddr;

	KUNIT_ASSERT_NOT_NULL(test, page);
	paddr = __pa(page);

	KUNIT_EXPECT_EQ(test, DAMON_PERF_SAMPLE_VALID,
			damon_perf_classify(user, 0, false));
	KUNIT_EXPECT_EQ(test, DAMON_PERF_SAMPLE_ADDR_ZERO,
			damon_perf_classify(0, 0, false));
	KUNIT_EXPECT_EQ(test, DAMON_PERF_SAMPLE_KERNEL,
			damon_perf_classify((unsigned long)page, 0, false));
	KUNIT_EXPECT_EQ(test, DAMON_PERF_SAMPLE_KERNEL,
			damon_perf_classify(TASK_SIZE_MAX, 0, false));
	KUNIT_EXPECT_EQ(test, DAMON_PERF_SAMPLE_VALID,
			damon_perf_classify(TASK_SIZE_MAX - 1, 0, false));

	/* physical address space monitoring */
	KUNIT_EXPECT_EQ(test, DAMON_PERF_SAMPLE_VALID,
			damon_perf_classify(user, paddr, true));
	KUNIT_EXPECT_EQ(test, DAMON_PERF_SAMPLE_VALID,
			damon_perf_classify(0, paddr, true));
	KUNIT_EXPECT_EQ(test, DAMON_PERF_SAMPLE_ADDR_ZERO,
			damon_perf_classify(0, 0, true));
	KUNIT_EXPECT_EQ(test, DAMON_PERF_SAMPLE_INV_PHYS,
			damon_perf_classify(user, 0, true));
	KUNIT_EXPECT_EQ(test, DAMON_PERF_SAMPLE_INV_PHYS,
			damon_perf_classify(user, 1ull << 62, true));
	free_page((unsigned long)page);
}

/*
 * Regions [10, 20), [20, 30) and [40, 50), and a lone [100, 200), held by a
 * target that damon_destroy_target() frees them with, and their ranges in
 * @ranges.
 */
static struct damon_target *
damon_perf_test_regions(struct kunit *test, struct damon_region **r,
			struct damon_addr_range *ranges)
{
	static const unsigned long bounds[][2] = {
		{10, 20}, {20, 30}, {40, 50}, {100, 200},
	};
	struct damon_target *t = damon_new_target();
	int i;

	KUNIT_ASSERT_NOT_NULL(test, t);
	for (i = 0; i < ARRAY_SIZE(bounds); i++) {
		r[i] = damon_new_region(bounds[i][0], bounds[i][1]);
		KUNIT_ASSERT_NOT_NULL(test, r[i]);
		damon_add_region(r[i], t);
		ranges[i] = r[i]->ar;
	}
	return t;
}

/* What damon_perf_find_region() and damon_perf_match() return for @miss. */
#define DAMON_PERF_TEST_MISS(miss)	(-((int)(miss) + 1))

/*
 * The range an address falls in, or its miss, by a look at each of @nr
 * @ranges: what damon_perf_find_region() answers, by other means.
 */
static int damon_perf_test_find_linear(const struct damon_addr_range *ranges,
				       unsigned int nr, unsigned long addr)
{
	unsigned int i;

	if (!nr || addr < ranges[0].start || addr >= ranges[nr - 1].end)
		return DAMON_PERF_TEST_MISS(DAMON_PERF_MISS_BOUND);
	for (i = 0; i < nr; i++) {
		if (addr >= ranges[i].start && addr < ranges[i].end)
			return i;
	}
	return DAMON_PERF_TEST_MISS(DAMON_PERF_MISS_REGION);
}

/*
 * A lookup of @addr in @nr @ranges from the hint at @hint, carried on:
 * whether it found what a look at each range finds.
 */
static bool damon_perf_test_hint(struct kunit *test,
				 const struct damon_addr_range *ranges,
				 unsigned int nr, unsigned long addr,
				 unsigned int *hint)
{
	int want = damon_perf_test_find_linear(ranges, nr, addr);
	unsigned int before = *hint;
	int idx = damon_perf_find_region(ranges, nr, addr, hint);

	KUNIT_EXPECT_EQ_MSG(test, want, idx, "%lu from hint %u", addr, before);
	return idx == want;
}

/*
 * damon_perf_find_region() from every hint, and from one past the ranges:
 * what a look at each range finds, from each, with the hint left at the
 * range found, or as it was after a miss.  Returns the answer, or INT_MIN
 * if a lookup found something else.
 */
static int damon_perf_test_find(struct kunit *test,
				const struct damon_addr_range *ranges,
				unsigned int nr, unsigned long addr)
{
	int want = damon_perf_test_find_linear(ranges, nr, addr);
	unsigned int h, start, hint;

	for (h = 0; h <= nr + 1; h++) {
		start = h <= nr ? h : UINT_MAX;
		hint = start;
		if (!damon_perf_test_hint(test, ranges, nr, addr, &hint))
			return INT_MIN;
		KUNIT_EXPECT_EQ(test, want < 0 ? start : (unsigned int)want,
				hint);
	}
	return want;
}

static void damon_perf_test_find_region(struct kunit *test)
{
	const int gap = DAMON_PERF_TEST_MISS(DAMON_PERF_MISS_REGION);
	const int out = DAMON_PERF_TEST_MISS(DAMON_PERF_MISS_BOUND);
	enum { NR = 64, LOOKUPS = 10000 };
	struct damon_addr_range *many;
	struct damon_region *r[4];
	struct damon_addr_range ranges[4];
	struct damon_target *t = damon_perf_test_regions(test, r, ranges);
	unsigned int i, hint = 0, before, nr_next = 0;
	unsigned long addr, last;
	struct rnd_state rnd;

	/* first, middle and last regions, at their edges */
	KUNIT_EXPECT_EQ(test, 0, damon_perf_test_find(test, ranges, 3, 10));
	KUNIT_EXPECT_EQ(test, 0, damon_perf_test_find(test, ranges, 3, 19));
	KUNIT_EXPECT_EQ(test, 1, damon_perf_test_find(test, ranges, 3, 20));
	KUNIT_EXPECT_EQ(test, 2, damon_perf_test_find(test, ranges, 3, 40));
	KUNIT_EXPECT_EQ(test, 2, damon_perf_test_find(test, ranges, 3, 49));

	/* the gap between regions */
	KUNIT_EXPECT_EQ(test, gap, damon_perf_test_find(test, ranges, 3, 30));
	KUNIT_EXPECT_EQ(test, gap, damon_perf_test_find(test, ranges, 3, 39));

	/* outside the bounds */
	KUNIT_EXPECT_EQ(test, out, damon_perf_test_find(test, ranges, 3, 9));
	KUNIT_EXPECT_EQ(test, out, damon_perf_test_find(test, ranges, 3, 50));
	KUNIT_EXPECT_EQ(test, out, damon_perf_test_find(test, ranges, 0, 15));

	/* a single region */
	KUNIT_EXPECT_EQ(test, 0, damon_perf_test_find(test, &ranges[3], 1,
						      100));
	KUNIT_EXPECT_EQ(test, 0, damon_perf_test_find(test, &ranges[3], 1,
						      199));
	KUNIT_EXPECT_EQ(test, out, damon_perf_test_find(test, &ranges[3], 1,
							200));
	damon_destroy_target(t);

	/*
	 * Random ranges, some with gaps between them, and a hint carried
	 * from lookup to lookup, as the drain carries it: every address in
	 * order, as a sequential writer's, then random ones.
	 */
	many = kunit_kcalloc(test, NR, sizeof(*many), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, many);
	prandom_seed_state(&rnd, 30);
	addr = 1000;
	for (i = 0; i < NR; i++) {
		if (prandom_u32_state(&rnd) % 4 == 0)
			addr += 1 + prandom_u32_state(&rnd) % 50;
		many[i].start = addr;
		addr += 1 + prandom_u32_state(&rnd) % 50;
		many[i].end = addr;
	}
	last = addr + 2;
	for (addr = many[0].start - 2; addr < last; addr++) {
		before = hint;
		if (!damon_perf_test_hint(test, many, NR, addr, &hint))
			break;
		if (hint == before + 1)
			nr_next++;
	}
	/* the hint followed the walk, from each range to the next */
	KUNIT_EXPECT_EQ(test, NR - 1, nr_next);
	for (i = 0; i < LOOKUPS; i++) {
		addr = many[0].start - 2 + prandom_u32_state(&rnd) %
			(last - many[0].start + 2);
		if (!damon_perf_test_hint(test, many, NR, addr, &hint))
			break;
	}
}

static void damon_perf_test_match(struct kunit *test)
{
	struct damon_perf_target targets[2] = {
		{ .tgid = 42, .first = 0, .nr = 3 },
		{ .tgid = 0, .first = 3, .nr = 1 },	/* its process is gone */
	};
	struct damon_perf perf = {
		.targets = targets,
		.nr_targets = 2,
	};
	struct damon_perf_record rec = { .tgid = 42, .addr = 25 };
	struct damon_region *r[4];
	struct damon_addr_range ranges[4];
	struct damon_target *t = damon_perf_test_regions(test, r, ranges);

	perf.ranges = ranges;
	KUNIT_EXPECT_EQ(test, 1, damon_perf_match(&perf, &rec));

	/* an access by another process */
	rec.tgid = 43;
	KUNIT_EXPECT_EQ(test, DAMON_PERF_TEST_MISS(DAMON_PERF_MISS_TGID),
			damon_perf_match(&perf, &rec));

	/* a target whose process is gone matches nothing */
	rec.tgid = 0;
	rec.addr = 150;
	KUNIT_EXPECT_EQ(test, DAMON_PERF_TEST_MISS(DAMON_PERF_MISS_TGID),
			damon_perf_match(&perf, &rec));

	/* the right process, outside its regions */
	rec.tgid = 42;
	KUNIT_EXPECT_EQ(test, DAMON_PERF_TEST_MISS(DAMON_PERF_MISS_BOUND),
			damon_perf_match(&perf, &rec));

	/* physical: the one target, by physical address, whatever the tgid */
	perf.phys = true;
	rec.tgid = 0;
	rec.addr = 45;
	KUNIT_EXPECT_EQ(test, 2, damon_perf_match(&perf, &rec));
	damon_destroy_target(t);
}

/*
 * A drain counts the samples of the regions its records hit only when it is
 * the access check's: the drains of a pause and a stop match the records, so
 * that they are accounted for, but update no region.
 */
static void damon_perf_test_drain_modes(struct kunit *test)
{
	struct damon_perf_target target = { .tgid = 42, .first = 0, .nr = 4 };
	struct damon_perf perf = {
		.targets = &target,
		.nr_targets = 1,
	};
	/* in [20, 30) and [100, 200), and one outside the regions */
	static const u64 addrs[] = { 25, 150, 300 };
	enum damon_perf_drain_mode mode;
	struct damon_perf_record rec;
	struct damon_region *r[4];
	struct damon_addr_range ranges[4];
	struct damon_target *t = damon_perf_test_regions(test, r, ranges);
	unsigned int cpu, i, n;

	perf.ranges = ranges;
	perf.hit = kunit_kcalloc(test, ARRAY_SIZE(r), sizeof(*perf.hit),
				 GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, perf.hit);
	perf.est = kunit_kcalloc(test, ARRAY_SIZE(r), sizeof(*perf.est),
				 GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, perf.est);
	for (i = 0; i < ARRAY_SIZE(r); i++)
		perf.est[i].region = r[i];
	KUNIT_ASSERT_EQ(test, 0, damon_perf_obs_init(&perf.obs));
	perf.rings = damon_perf_rings_alloc(&perf.obs,
					    DAMON_PERF_RING_ORDER);
	KUNIT_ASSERT_TRUE(test, perf.rings);

	for (mode = DAMON_PERF_DRAIN_UPDATE; mode <= DAMON_PERF_DRAIN_NO_VIEW;
	     mode++) {
		perf.nr_hit = 0;
		for (i = 0; i < ARRAY_SIZE(r); i++)
			perf.est[i].samples = 0;
		migrate_disable();
		cpu = smp_processor_id();
		preempt_disable();
		for (i = 0; i < ARRAY_SIZE(addrs); i++)
			KUNIT_EXPECT_TRUE(test, damon_perf_ring_push(perf.rings,
								     addrs[i],
								     42));
		preempt_enable();
		damon_perf_drain_cpu(&perf, cpu, mode);
		migrate_enable();
		KUNIT_EXPECT_EQ(test, mode == DAMON_PERF_DRAIN_UPDATE ? 1 : 0,
				perf.est[1].samples);
		KUNIT_EXPECT_EQ(test, mode == DAMON_PERF_DRAIN_UPDATE ? 1 : 0,
				perf.est[3].samples);
		/* and lists them, in the order of their first records */
		KUNIT_EXPECT_EQ(test, mode == DAMON_PERF_DRAIN_UPDATE ? 2 : 0,
				perf.nr_hit);
		if (mode == DAMON_PERF_DRAIN_UPDATE) {
			KUNIT_EXPECT_EQ(test, 1, perf.hit[0]);
			KUNIT_EXPECT_EQ(test, 3, perf.hit[1]);
		}
		/* whatever the mode, the ring is empty afterwards */
		n = damon_perf_ring_consume(perf.rings, cpu, &rec, 1);
		KUNIT_EXPECT_EQ(test, 0, n);
	}

	damon_perf_rings_free(perf.rings);
	damon_perf_obs_exit(&perf.obs);
	damon_destroy_target(t);
}

/*
 * The lazy update of the access rates leaves every region, and its credit,
 * as updating each region at every interval does, wherever DAMON core reads
 * them: over a random history of samples worth up to 3.5 intervals,
 * aggregations and reads; and regions laid out again keep their credits.
 */
static void damon_perf_test_lazy_update(struct kunit *test)
{
	enum { NR = 16, PAGES = 4, INTERVALS = 4000, AGGR = 20 };
	struct damon_attrs attrs = {
		.sample_interval = 5000,
		.aggr_interval = 5000 * AGGR,
	};
	unsigned int i, k, n, p, max_eager, max_lazy, nr_reads = 0;
	u64 credit_max = (u64)AGGR << DAMON_PERF_EST_SHIFT, c;
	struct damon_region *r, *eager;
	struct damon_perf *perf;
	struct damon_target *t;
	struct damon_ctx *ctx;
	struct rnd_state rnd;
	bool ok, warm[NR];
	u32 *credit;

	prandom_seed_state(&rnd, 42);
	eager = kunit_kcalloc(test, NR, sizeof(*eager), GFP_KERNEL);
	credit = kunit_kcalloc(test, NR, sizeof(*credit), GFP_KERNEL);
	perf = kunit_kzalloc(test, sizeof(*perf), GFP_KERNEL);
	ctx = damon_new_ctx();
	t = damon_new_target();
	KUNIT_ASSERT_TRUE(test, eager && credit && perf && ctx && t);
	damon_add_target(ctx, t);
	for (i = 0; i < NR; i++) {
		r = damon_new_region(i * PAGES * PAGE_SIZE,
				     (i + 1) * PAGES * PAGE_SIZE);
		KUNIT_ASSERT_NOT_NULL(test, r);
		r->last_nr_accesses = prandom_u32_state(&rnd) % (AGGR + 1);
		r->nr_accesses_bp = r->last_nr_accesses * 10000;
		damon_add_region(r, t);
		eager[i] = *r;
	}
	perf->ctx = ctx;
	/*
	 * 3.5 pages a sample, kept as set (@exact: not learnt), so that a
	 * share may be worth up to 3.5 intervals and the credit carries over
	 */
	perf->exact = true;
	perf->weight = DAMON_PERF_EST_ONE * 7 / 2;
	KUNIT_ASSERT_EQ(test, NR, damon_perf_view(perf));
	for (i = 0; i < NR; i++)
		credit[i] = perf->est[i].credit;

	for (k = 1; k <= INTERVALS; k++) {
		max_eager = 0;
		i = 0;
		damon_for_each_region(r, t) {
			/* region i gets 1 to PAGES samples in i of NR intervals */
			n = prandom_u32_state(&rnd) % NR < i ?
				1 + prandom_u32_state(&rnd) % PAGES : 0;

			/* the model: every interval, as if none were lazy */
			c = min(credit[i] + div64_u64(n * perf->weight, PAGES),
				credit_max);
			damon_update_region_access_rate(&eager[i], c >=
							DAMON_PERF_EST_ONE,
							&attrs);
			if (c >= DAMON_PERF_EST_ONE)
				c -= DAMON_PERF_EST_ONE;
			credit[i] = c;
			max_eager = max(eager[i].nr_accesses, max_eager);
			/* a record on the page of the one before it counts once */
			for (p = 0; p < n; p++) {
				damon_perf_count(perf, i, r->ar.start +
						 p * PAGE_SIZE);
				damon_perf_count(perf, i, r->ar.start +
						 p * PAGE_SIZE);
			}
			i++;
		}
		damon_perf_update_hit(perf, &attrs);
		KUNIT_EXPECT_EQ(test, k, perf->now);

		/* DAMON core reads at each aggregation, and at random */
		if (k % AGGR && prandom_u32_state(&rnd) % 7)
			continue;
		nr_reads++;
		max_lazy = damon_perf_sync(perf, &attrs);
		KUNIT_EXPECT_TRUE(test, perf->view_check);
		KUNIT_EXPECT_EQ(test, max_eager, max_lazy);
		i = 0;
		ok = true;
		damon_for_each_region(r, t) {
			ok &= r->nr_accesses == eager[i].nr_accesses &&
				r->nr_accesses_bp == eager[i].nr_accesses_bp &&
				perf->est[i].credit == credit[i];
			i++;
		}
		KUNIT_EXPECT_TRUE_MSG(test, ok, "interval %u", k);
		if (!ok)
			break;
		/*
		 * every region DAMON core's reset would change is in the warm
		 * list, which damon_perf_walk_busy() walks
		 */
		memset(warm, 0, sizeof(warm));
		for (i = 0; i < perf->nr_warm; i++)
			warm[perf->warm[i]] = true;
		for (i = 0; i < NR; i++)
			ok &= warm[i] || (!perf->est[i].region->nr_accesses &&
					  !perf->est[i].region->last_nr_accesses);
		KUNIT_EXPECT_TRUE_MSG(test, ok, "warm, interval %u", k);
		if (!(k % AGGR)) {
			/* as kdamond_reset_aggregated() does */
			i = 0;
			damon_for_each_region(r, t) {
				r->last_nr_accesses = r->nr_accesses;
				r->nr_accesses = 0;
				eager[i].last_nr_accesses = eager[i].nr_accesses;
				eager[i++].nr_accesses = 0;
			}
		}
		/*
		 * the same regions keep their credits, whether the view is
		 * kept or, as if DAMON core had changed them, laid out again
		 */
		if (nr_reads % 2)
			t->regions_gen++;
		KUNIT_ASSERT_EQ(test, NR, damon_perf_view(perf));
		for (i = 0; i < NR; i++)
			ok &= perf->est[i].credit == credit[i];
		KUNIT_EXPECT_TRUE_MSG(test, ok, "credits, interval %u", k);
		if (!ok)
			break;
	}
	KUNIT_EXPECT_GT(test, nr_reads, INTERVALS / AGGR);
	damon_perf_free_view(perf);
	kfree(perf->targets);
	damon_destroy_ctx(ctx);
}

/*
 * A context of one target whose regions are @nr, of @pages[i] pages each, in
 * a row from address 0, and its view; the regions' credits start at zero, so
 * that the counts are known.
 */
static struct damon_perf *damon_perf_test_est_ctx(struct kunit *test,
						  const unsigned long *pages,
						  unsigned int nr, bool exact)
{
	struct damon_perf *perf;
	struct damon_target *t;
	struct damon_region *r;
	unsigned long start = 0;
	unsigned int i;

	perf = kunit_kzalloc(test, sizeof(*perf), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, perf);
	perf->ctx = damon_new_ctx();
	t = damon_new_target();
	KUNIT_ASSERT_TRUE(test, perf->ctx && t);
	damon_add_target(perf->ctx, t);
	for (i = 0; i < nr; i++) {
		r = damon_new_region(start, start + pages[i] * PAGE_SIZE);
		KUNIT_ASSERT_NOT_NULL(test, r);
		damon_add_region(r, t);
		start = r->ar.end;
	}
	perf->exact = exact;
	perf->weight = DAMON_PERF_EST_ONE;
	KUNIT_ASSERT_EQ(test, nr, damon_perf_view(perf));
	for (i = 0; i < nr; i++)
		perf->est[i].credit = 0;
	return perf;
}

static void damon_perf_test_est_free(struct damon_perf *perf)
{
	damon_perf_free_view(perf);
	kfree(perf->targets);
	damon_destroy_ctx(perf->ctx);
}

/*
 * The view is kept after a sync while DAMON core leaves the regions alone,
 * and laid out anew, with the new address ranges, once it changes them.  A
 * mark in the view's copy of the first region's start tells which: a kept
 * view keeps it, and one laid out anew copies the region's start again.
 * Laid out anew, a region inherits the credit its range had.
 */
static void damon_perf_test_view_kept(struct kunit *test)
{
	struct damon_attrs attrs = {
		.sample_interval = 5000,
		.aggr_interval = 100000,
	};
	struct damon_addr_range range = { 0, 12 * PAGE_SIZE };
	const u32 mark = DAMON_PERF_EST_ONE / 3;
	static const unsigned long pages[] = { 4, 4, 4 };
	struct damon_perf_record rec = {};
	struct damon_region *r, *next;
	struct damon_perf *perf;
	struct damon_target *t;
	struct damon_ctx *ctx;
	unsigned int i;

	perf = damon_perf_test_est_ctx(test, pages, ARRAY_SIZE(pages), true);
	ctx = perf->ctx;
	t = list_first_entry(&ctx->adaptive_targets, struct damon_target,
			     list);
	/* one target, whose process the records need not match */
	perf->phys = true;

	/* the ranges the regions have already: kept */
	damon_perf_sync(perf, &attrs);
	damon_set_regions(t, &range, 1);
	perf->ranges[0].start = 1;
	KUNIT_EXPECT_EQ(test, 3, damon_perf_view(perf));
	KUNIT_EXPECT_EQ(test, 1UL, perf->ranges[0].start);
	perf->ranges[0].start = 0;

	/* the last region grows: laid out anew, its new end found */
	damon_perf_sync(perf, &attrs);
	range.end = 16 * PAGE_SIZE;
	damon_set_regions(t, &range, 1);
	perf->ranges[0].start = 1;
	perf->est[2].credit = mark;
	KUNIT_EXPECT_EQ(test, 3, damon_perf_view(perf));
	KUNIT_EXPECT_EQ(test, 0UL, perf->ranges[0].start);
	KUNIT_EXPECT_EQ(test, mark, perf->est[2].credit);
	rec.addr = 14 * PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, 2, damon_perf_match(perf, &rec));

	/* a region split in two, as DAMON core splits one: laid out anew */
	damon_perf_sync(perf, &attrs);
	r = damon_first_region(t);
	next = damon_new_region(2 * PAGE_SIZE, r->ar.end);
	KUNIT_ASSERT_NOT_NULL(test, next);
	r->ar.end = next->ar.start;
	damon_insert_region(next, r, damon_next_region(r), t);
	/* accessed in the last aggregation, so that syncs would age it */
	next->last_nr_accesses = 1;
	KUNIT_EXPECT_EQ(test, 4, damon_perf_view(perf));
	rec.addr = 3 * PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, 1, damon_perf_match(perf, &rec));

	/*
	 * two merged into one: laid out anew; a sync before that, as of a
	 * commit after DAMON core merged them, reads no region (the view still
	 * names the freed one) and finds none accessed
	 */
	damon_perf_sync(perf, &attrs);
	r->ar.end = next->ar.end;
	r->nr_accesses = 7;
	damon_destroy_region(next, t);
	KUNIT_EXPECT_EQ(test, 0, damon_perf_sync(perf, &attrs));
	r->nr_accesses = 0;
	KUNIT_EXPECT_EQ(test, 3, damon_perf_view(perf));
	KUNIT_EXPECT_EQ(test, 0, damon_perf_match(perf, &rec));

	/* a commit may change the targets: laid out anew, without credits */
	for (i = 0; i < 3; i++)
		perf->est[i].credit = 5 << DAMON_PERF_EST_SHIFT;
	ctx->perf = perf;
	damon_perf_sync_regions(ctx);
	ctx->perf = NULL;
	KUNIT_EXPECT_EQ(test, 3, damon_perf_view(perf));
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_LT(test, perf->est[i].credit, DAMON_PERF_EST_ONE);

	damon_perf_test_est_free(perf);
}

/* As kdamond_reset_aggregated() does at the end of an aggregation. */
static void damon_perf_test_reset_aggregated(struct damon_target *t)
{
	struct damon_region *r;

	damon_for_each_region(r, t) {
		r->last_nr_accesses = r->nr_accesses;
		r->nr_accesses = 0;
	}
}

/*
 * DAMON core ends an aggregation, and the next one's @nr intervals pass
 * without samples, up to the sync at its end.
 */
static void damon_perf_test_idle_aggr(struct kunit *test,
				      struct damon_perf *perf,
				      struct damon_target *t,
				      struct damon_attrs *attrs,
				      unsigned int nr)
{
	unsigned int k;

	damon_perf_test_reset_aggregated(t);
	KUNIT_ASSERT_EQ(test, (int)perf->nr_regions, damon_perf_view(perf));
	for (k = 0; k < nr; k++)
		damon_perf_update_hit(perf, attrs);
	damon_perf_sync(perf, attrs);
}

struct damon_perf_test_walk {
	struct damon_region *last;
	unsigned int nr;
};

/* Counts the calls of damon_perf_walk_busy()'s function, in @arg. */
static void damon_perf_test_busy(struct damon_region *r, void *arg)
{
	struct damon_perf_test_walk *walk = arg;

	walk->last = r;
	walk->nr++;
}

/*
 * A sync walks the warm regions only: those sampled since the last, those
 * with a credit worth an interval, and those whose last_nr_accesses or
 * nr_accesses is not zero.  A region leaves them once neither is, and
 * counts from where it was when sampled again, aggregations later.
 */
static void damon_perf_test_warm(struct kunit *test)
{
	enum { NR = 8, AGGR = 20 };
	struct damon_attrs attrs = {
		.sample_interval = 5000,
		.aggr_interval = 5000 * AGGR,
	};
	struct damon_perf_test_walk walk = {};
	struct damon_perf *perf;
	struct damon_region *r;
	struct damon_target *t;
	struct damon_ctx *ctx;
	unsigned int i, k;

	perf = kunit_kzalloc(test, sizeof(*perf), GFP_KERNEL);
	ctx = damon_new_ctx();
	t = damon_new_target();
	KUNIT_ASSERT_TRUE(test, perf && ctx && t);
	damon_add_target(ctx, t);
	for (i = 0; i < NR; i++) {
		r = damon_new_region(i * PAGE_SIZE, (i + 1) * PAGE_SIZE);
		KUNIT_ASSERT_NOT_NULL(test, r);
		if (i == 3) {
			r->last_nr_accesses = 5;
			r->nr_accesses_bp = 50000;
		}
		damon_add_region(r, t);
	}
	perf->ctx = ctx;
	perf->exact = true;
	perf->weight = DAMON_PERF_EST_ONE;
	KUNIT_ASSERT_EQ(test, NR, damon_perf_view(perf));
	for (i = 0; i < NR; i++)
		perf->est[i].credit = 0;
	KUNIT_EXPECT_EQ(test, 1U, perf->nr_warm);

	/* region 5 sampled in each of 10 intervals */
	for (k = 0; k < 10; k++) {
		damon_perf_count(perf, 5, perf->ranges[5].start);
		damon_perf_update_hit(perf, &attrs);
	}
	KUNIT_EXPECT_EQ(test, 2U, perf->nr_warm);
	KUNIT_EXPECT_EQ(test, 10U, damon_perf_sync(perf, &attrs));
	/* 50000 less 10 intervals of 5 * 10000 / 20 */
	KUNIT_EXPECT_EQ(test, 25000U, perf->est[3].region->nr_accesses_bp);
	KUNIT_EXPECT_EQ(test, 100000U, perf->est[5].region->nr_accesses_bp);
	KUNIT_EXPECT_EQ(test, 2U, perf->nr_warm);

	/* an aggregation without samples: region 3 cools, 5 stays warm */
	damon_perf_test_idle_aggr(test, perf, t, &attrs, AGGR);
	KUNIT_EXPECT_EQ(test, 1U, perf->nr_warm);
	KUNIT_EXPECT_EQ(test, 0U, perf->est[5].region->nr_accesses_bp);
	KUNIT_EXPECT_EQ(test, 25000U, perf->est[3].region->nr_accesses_bp);

	/* DAMON core's walk at the aggregation's end visits region 5 */
	ctx->perf = perf;
	KUNIT_EXPECT_TRUE(test, damon_perf_walk_busy(ctx, damon_perf_test_busy,
						     &walk));
	KUNIT_EXPECT_PTR_EQ(test, perf->est[5].region, walk.last);
	KUNIT_EXPECT_EQ(test, 1U, walk.nr);
	/* and none once the regions may have changed */
	t->regions_gen++;
	KUNIT_EXPECT_FALSE(test, damon_perf_walk_busy(ctx, damon_perf_test_busy,
						      &walk));
	KUNIT_EXPECT_EQ(test, 1U, walk.nr);
	t->regions_gen--;
	ctx->perf = NULL;

	/* and another: none is warm */
	damon_perf_test_idle_aggr(test, perf, t, &attrs, AGGR);
	KUNIT_EXPECT_EQ(test, 0U, perf->nr_warm);

	/* region 3 sampled again: its moving sum goes on from 25000 */
	damon_perf_test_reset_aggregated(t);
	KUNIT_ASSERT_EQ(test, NR, damon_perf_view(perf));
	damon_perf_count(perf, 3, perf->ranges[3].start);
	KUNIT_EXPECT_EQ(test, 1U, damon_perf_update_hit(perf, &attrs));
	KUNIT_EXPECT_EQ(test, 35000U, perf->est[3].region->nr_accesses_bp);
	KUNIT_EXPECT_EQ(test, 1U, perf->nr_warm);

	damon_perf_test_est_free(perf);
}

/* @n samples on distinct pages of region @idx, from its first page on */
static void damon_perf_test_est_samples(struct damon_perf *perf,
					unsigned int idx, unsigned int n)
{
	unsigned long start = perf->est[idx].region->ar.start;
	unsigned int i;

	for (i = 0; i < n; i++)
		damon_perf_count(perf, idx, start + i * PAGE_SIZE);
}

/* The regions of @perf were counted as accessed @expect[i] times each. */
static void damon_perf_test_est_expect(struct kunit *test,
				       struct damon_perf *perf,
				       const unsigned int *expect,
				       unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ_MSG(test, expect[i],
				    perf->est[i].region->nr_accesses,
				    "region %u", i);
}

/*
 * With every event sampled, a region counts as accessed in the share of the
 * intervals that its sampled pages are of its pages, as the Accessed bit
 * check of one random page of it does in expectation; samples on the page of
 * the one before them count once.
 */
static void damon_perf_test_estimate_exact(struct kunit *test)
{
	enum { INTERVALS = 40 };
	/*
	 * a quarter, a page, idle, one page sampled again and again, and
	 * five eighths (not rounded down to one interval in two)
	 */
	static const unsigned long pages[] = { 100, 1, 100, 100, 128 };
	static const unsigned int expect[] = { 10, 40, 0, 0, 25 };
	struct damon_attrs attrs = {
		.sample_interval = 5000,
		.aggr_interval = 5000 * INTERVALS,
	};
	struct damon_perf *perf;
	unsigned int i, k;

	perf = damon_perf_test_est_ctx(test, pages, ARRAY_SIZE(pages), true);
	for (k = 0; k < INTERVALS; k++) {
		damon_perf_test_est_samples(perf, 0, 25);
		damon_perf_test_est_samples(perf, 1, 1);
		for (i = 0; i < 50; i++)
			damon_perf_count(perf, 3, perf->est[3].region->ar.start);
		damon_perf_test_est_samples(perf, 4, 80);
		damon_perf_update_hit(perf, &attrs);
	}
	KUNIT_EXPECT_EQ(test, DAMON_PERF_EST_ONE, perf->weight);
	KUNIT_EXPECT_EQ(test, 40, damon_perf_sync(perf, &attrs));
	damon_perf_test_est_expect(test, perf, expect, ARRAY_SIZE(pages));
	damon_perf_test_est_free(perf);
}

/*
 * A sparse sampler's share may be worth more than an interval: the region
 * then counts as accessed in as many of its next intervals, samples or not,
 * up to an aggregation's intervals.  With 20 pages a sample (kept as set):
 */
static void damon_perf_test_estimate_sparse(struct kunit *test)
{
	enum { INTERVALS = 20 };
	/* wholly accessed, half, bursts, a twentieth, one page */
	static const unsigned long pages[] = { 1000, 80, 8, 4000, 1 };
	/*
	 * 50 * 20 / 1000 = 1 an interval, 2 * 20 / 80 = 0.5, 1 * 20 / 8 =
	 * 2.5 in every fourth interval, which counts in 12 of 20 (a share of
	 * one interval at most would count 5), 9 * 20 / 4000 = 0.045, and
	 * 20 / 1 = 20 in each, credit up to 24 intervals
	 */
	static const unsigned int expect[] = { 20, 10, 12, 0, 20 };
	struct damon_attrs attrs = {
		.sample_interval = 5000,
		.aggr_interval = 5000 * (INTERVALS + 4),
	};
	struct damon_perf *perf;
	unsigned int k;

	perf = damon_perf_test_est_ctx(test, pages, ARRAY_SIZE(pages), true);
	perf->weight = 20ULL << DAMON_PERF_EST_SHIFT;
	for (k = 0; k < INTERVALS; k++) {
		damon_perf_test_est_samples(perf, 0, 50);
		damon_perf_test_est_samples(perf, 1, 2);
		if (!(k % 4))
			damon_perf_test_est_samples(perf, 2, 1);
		damon_perf_test_est_samples(perf, 3, 9);
		damon_perf_test_est_samples(perf, 4, 1);
		damon_perf_update_hit(perf, &attrs);
	}
	KUNIT_EXPECT_EQ(test, 20, damon_perf_sync(perf, &attrs));
	damon_perf_test_est_expect(test, perf, expect, ARRAY_SIZE(pages));
	/* the one page's credit, 23 intervals, is spent on the next four */
	KUNIT_EXPECT_EQ(test, 23U << DAMON_PERF_EST_SHIFT,
			perf->est[4].credit);
	KUNIT_ASSERT_EQ(test, ARRAY_SIZE(pages), damon_perf_view(perf));
	for (k = 0; k < 4; k++)
		damon_perf_update_hit(perf, &attrs);
	damon_perf_sync(perf, &attrs);
	KUNIT_EXPECT_EQ(test, 24, perf->est[4].region->nr_accesses);
	KUNIT_EXPECT_EQ(test, 19U << DAMON_PERF_EST_SHIFT,
			perf->est[4].credit);
	/* without samples, the others count their credits' whole intervals */
	KUNIT_EXPECT_EQ(test, 20, perf->est[0].region->nr_accesses);
	damon_perf_test_est_free(perf);
}

/* @weight is @pages pages, to within a thousandth. */
static bool damon_perf_test_weight_near(u64 weight, u64 pages)
{
	u64 want = pages << DAMON_PERF_EST_SHIFT;

	return weight >= want - want / 1000 && weight <= want + want / 1000;
}

/*
 * A sparse sampler's weight is learnt from every sampled region: T times
 * their samples over the sum of S * (S - 1) / pages of each; the sums
 * before a sync weigh half as much after it; one page a sample at least,
 * and kept while no region has two samples.
 */
static void damon_perf_test_weigh(struct kunit *test)
{
	/* wholly accessed, half, a twentieth */
	static const unsigned long pages[] = { 999, 80, 4000 };
	static const unsigned long two[] = { 2 };
	struct damon_attrs attrs = {
		.sample_interval = 5000,
		.aggr_interval = 5000 * 20,
	};
	struct damon_perf *perf;
	unsigned int k;

	/* 20 * 1000 / (1000 * 999 / 999): 20 pages a sample */
	perf = damon_perf_test_est_ctx(test, pages, 1, false);
	for (k = 0; k < 20; k++) {
		damon_perf_test_est_samples(perf, 0, 50);
		damon_perf_update_hit(perf, &attrs);
	}
	KUNIT_EXPECT_TRUE_MSG(test,
			      damon_perf_test_weight_near(perf->weight, 20),
			      "weight %llu", perf->weight);
	/*
	 * after a sync, 40 intervals of 25: (20000 / 2 + 40 * 1000) /
	 * (1000 / 2 + 1000), 33.3 pages a sample
	 */
	damon_perf_sync(perf, &attrs);
	KUNIT_ASSERT_EQ(test, 1, damon_perf_view(perf));
	for (k = 0; k < 40; k++) {
		damon_perf_test_est_samples(perf, 0, 25);
		damon_perf_update_hit(perf, &attrs);
	}
	KUNIT_EXPECT_TRUE_MSG(test, perf->weight >= (33ULL << 16) &&
			      perf->weight <= (34ULL << 16),
			      "weight %llu", perf->weight);
	damon_perf_test_est_free(perf);

	/*
	 * partly accessed regions beside it raise the weight by the samples'
	 * mean share accessed: 20 * 1220 / (1000 + 40 * 39 / 80 + 180 * 179 /
	 * 4000), 23.7 pages a sample
	 */
	perf = damon_perf_test_est_ctx(test, pages, ARRAY_SIZE(pages), false);
	for (k = 0; k < 20; k++) {
		damon_perf_test_est_samples(perf, 0, 50);
		damon_perf_test_est_samples(perf, 1, 2);
		damon_perf_test_est_samples(perf, 2, 9);
		damon_perf_update_hit(perf, &attrs);
	}
	KUNIT_EXPECT_TRUE_MSG(test, perf->weight >= (237ULL << 16) / 10 &&
			      perf->weight <= (238ULL << 16) / 10,
			      "weight %llu", perf->weight);
	damon_perf_test_est_free(perf);

	/*
	 * a sample in each of 20 intervals, a sync after each, so that no
	 * region has two: the weight stays at one page
	 */
	perf = damon_perf_test_est_ctx(test, pages, ARRAY_SIZE(pages), false);
	for (k = 0; k < 20; k++) {
		damon_perf_test_est_samples(perf, k % 3, 1);
		damon_perf_update_hit(perf, &attrs);
		KUNIT_EXPECT_EQ(test, DAMON_PERF_EST_ONE, perf->weight);
		damon_perf_sync(perf, &attrs);
		KUNIT_ASSERT_EQ(test, 3, damon_perf_view(perf));
	}
	damon_perf_test_est_free(perf);

	/* denser than a sample a page: a sample is one page still */
	perf = damon_perf_test_est_ctx(test, two, 1, false);
	for (k = 0; k < 16; k++)
		damon_perf_count(perf, 0, (k % 2) * PAGE_SIZE);
	damon_perf_update_hit(perf, &attrs);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_EST_ONE, perf->weight);
	damon_perf_test_est_free(perf);
}

/*
 * Laid out anew, a region inherits the mean of the credits of the regions of
 * the last layout it overlaps, weighed by the overlaps, those of its own
 * target only; a region that overlaps none inherits nothing.
 */
static void damon_perf_test_inherit(struct kunit *test)
{
	static const struct damon_perf_carry carry[] = {
		{ { 0, 8 * PAGE_SIZE }, 0, 10 << DAMON_PERF_EST_SHIFT },
		{ { 8 * PAGE_SIZE, 12 * PAGE_SIZE }, 0,
		  8 << DAMON_PERF_EST_SHIFT },
		{ { 12 * PAGE_SIZE, 24 * PAGE_SIZE }, 0, 0 },
		{ { 0, 8 * PAGE_SIZE }, 1, 3 << DAMON_PERF_EST_SHIFT },
	};
	struct damon_region r;
	unsigned int cursor = 0;
	u32 credit = 0;

	/* half of a split region: its credit */
	r.ar = (struct damon_addr_range){ 0, 4 * PAGE_SIZE };
	KUNIT_EXPECT_TRUE(test, damon_perf_inherit(carry, ARRAY_SIZE(carry),
						   0, &r, &cursor, &credit));
	KUNIT_EXPECT_EQ(test, 10U << DAMON_PERF_EST_SHIFT, credit);
	/* the other half, and a page of the next: (4 * 10 + 8) / 5 */
	r.ar = (struct damon_addr_range){ 4 * PAGE_SIZE, 9 * PAGE_SIZE };
	KUNIT_EXPECT_TRUE(test, damon_perf_inherit(carry, ARRAY_SIZE(carry),
						   0, &r, &cursor, &credit));
	KUNIT_EXPECT_EQ(test, (48U << DAMON_PERF_EST_SHIFT) / 5, credit);
	/* the rest of the second merged with the third: 3 * 8 / 15 */
	r.ar = (struct damon_addr_range){ 9 * PAGE_SIZE, 24 * PAGE_SIZE };
	KUNIT_EXPECT_TRUE(test, damon_perf_inherit(carry, ARRAY_SIZE(carry),
						   0, &r, &cursor, &credit));
	KUNIT_EXPECT_EQ(test, (24U << DAMON_PERF_EST_SHIFT) / 15, credit);
	/* beyond the last layout's regions of the target: none */
	credit = 7;
	r.ar = (struct damon_addr_range){ 24 * PAGE_SIZE, 30 * PAGE_SIZE };
	KUNIT_EXPECT_FALSE(test, damon_perf_inherit(carry, ARRAY_SIZE(carry),
						    0, &r, &cursor, &credit));
	KUNIT_EXPECT_EQ(test, 7U, credit);
	/* the next target's region at the same addresses: its own credit */
	r.ar = (struct damon_addr_range){ 0, 8 * PAGE_SIZE };
	KUNIT_EXPECT_TRUE(test, damon_perf_inherit(carry, ARRAY_SIZE(carry),
						   1, &r, &cursor, &credit));
	KUNIT_EXPECT_EQ(test, 3U << DAMON_PERF_EST_SHIFT, credit);
}

/*
 * A context's rings hold four sampling intervals of samples at its highest
 * sample rate, within the smallest and the largest capacity.
 */
static void damon_perf_test_ring_order(struct kunit *test)
{
	/* perf's default cap, 5 ms: 2,000 records */
	KUNIT_EXPECT_EQ(test, 11, damon_perf_ring_order(100000, 5000));
	/* the page fault event's assumed rate: 8,000 */
	KUNIT_EXPECT_EQ(test, 13,
			damon_perf_ring_order(DAMON_PERF_RING_UNCAPPED_RATE,
					      5000));
	/* 2,048 exactly, and one more */
	KUNIT_EXPECT_EQ(test, 11, damon_perf_ring_order(102400, 5000));
	KUNIT_EXPECT_EQ(test, 12, damon_perf_ring_order(102401, 5000));
	/* a lowered cap and a short interval: the smallest ring */
	KUNIT_EXPECT_EQ(test, DAMON_PERF_RING_ORDER,
			damon_perf_ring_order(1000, 1000));
	KUNIT_EXPECT_EQ(test, DAMON_PERF_RING_ORDER,
			damon_perf_ring_order(1, 0));
	/* a second's interval, and the largest values: the largest ring */
	KUNIT_EXPECT_EQ(test, DAMON_PERF_RING_MAX_ORDER,
			damon_perf_ring_order(100000, 1000000));
	KUNIT_EXPECT_EQ(test, DAMON_PERF_RING_MAX_ORDER,
			damon_perf_ring_order(U64_MAX, ULONG_MAX));
}

/*
 * DAMON core reads or changes the regions after an access check at the end
 * of an aggregation, an operations update or a scheme's apply interval, and
 * after a commit.
 */
static void damon_perf_test_core_reads(struct kunit *test)
{
	struct damon_perf perf = {};
	struct damon_ctx *ctx = damon_new_ctx();
	struct damos *s;

	KUNIT_ASSERT_NOT_NULL(test, ctx);
	ctx->perf = &perf;
	ctx->passed_sample_intervals = 10;
	ctx->next_aggregation_sis = 20;
	ctx->next_ops_update_sis = 200;
	KUNIT_EXPECT_FALSE(test, damon_perf_core_reads(ctx));
	perf.commit_seen = true;
	KUNIT_EXPECT_TRUE(test, damon_perf_core_reads(ctx));
	perf.commit_seen = false;
	ctx->passed_sample_intervals = 20;
	KUNIT_EXPECT_TRUE(test, damon_perf_core_reads(ctx));
	ctx->next_aggregation_sis = 40;
	KUNIT_EXPECT_FALSE(test, damon_perf_core_reads(ctx));
	ctx->next_ops_update_sis = 20;
	KUNIT_EXPECT_TRUE(test, damon_perf_core_reads(ctx));
	ctx->next_ops_update_sis = 200;

	s = damon_new_scheme(&(struct damos_access_pattern){}, DAMOS_STAT, 0,
			     &(struct damos_quota){}, &(struct damos_watermarks){},
			     NUMA_NO_NODE);
	KUNIT_ASSERT_NOT_NULL(test, s);
	damon_add_scheme(ctx, s);
	s->next_apply_sis = 30;
	KUNIT_EXPECT_FALSE(test, damon_perf_core_reads(ctx));
	s->next_apply_sis = 20;
	KUNIT_EXPECT_TRUE(test, damon_perf_core_reads(ctx));
	ctx->perf = NULL;
	damon_destroy_ctx(ctx);
}

/*
 * A PMU that takes one event per CPU at a time, like some hardware PMUs do,
 * and never samples.
 */
static int damon_perf_test_pmu_init(struct perf_event *event)
{
	return event->attr.type == event->pmu->type ? 0 : -ENOENT;
}

static int damon_perf_test_pmu_add(struct perf_event *event, int flags)
{
	return 0;
}

static void damon_perf_test_pmu_nop(struct perf_event *event, int flags)
{
}

static void damon_perf_test_pmu_read(struct perf_event *event)
{
}

static struct pmu damon_perf_test_pmu = {
	.task_ctx_nr = perf_invalid_context,
	.capabilities = PERF_PMU_CAP_EXCLUSIVE | PERF_PMU_CAP_NO_EXCLUDE,
	.event_init = damon_perf_test_pmu_init,
	.add = damon_perf_test_pmu_add,
	.del = damon_perf_test_pmu_nop,
	.start = damon_perf_test_pmu_nop,
	.stop = damon_perf_test_pmu_nop,
	.read = damon_perf_test_pmu_read,
};

/*
 * A copy of damon_perf_test_pmu, for one test to adjust and register:
 * perf_pmu_unregister() frees a PMU's device but leaves its pointer, so a
 * struct pmu cannot be registered a second time.
 */
static struct pmu *damon_perf_test_pmu_copy(struct kunit *test)
{
	struct pmu *pmu = kunit_kmalloc(test, sizeof(*pmu), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, pmu);
	*pmu = damon_perf_test_pmu;
	return pmu;
}

/* Refuse exclude_kernel, as a PMU that can exclude privilege levels may */
static int damon_perf_test_pmu_init_kernel(struct perf_event *event)
{
	if (event->attr.type != event->pmu->type)
		return -ENOENT;
	return event->attr.exclude_kernel ? -EINVAL : 0;
}

/*
 * An event that a PMU refuses with exclude flags is tried without them only
 * if the PMU cannot exclude privilege levels (the perf core then refuses any
 * flag); for another PMU, -EINVAL stands and the flags stay as asked.
 */
static void damon_perf_test_exclude_retry(struct kunit *test)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	struct perf_event *event;
	struct pmu *pmu, *kernel;
	unsigned int cpu;
	int err;

	pmu = damon_perf_test_pmu_copy(test);
	KUNIT_ASSERT_EQ(test, 0, perf_pmu_register(pmu, "damon_perf_test", -1));
	kernel = damon_perf_test_pmu_copy(test);
	kernel->capabilities = 0;
	kernel->event_init = damon_perf_test_pmu_init_kernel;
	err = perf_pmu_register(kernel, "damon_perf_test_kernel", -1);
	KUNIT_ASSERT_EQ(test, 0, err);
	cpu = get_cpu();
	put_cpu();

	attr.type = kernel->type;
	event = damon_perf_create_event(&attr, 0, cpu, NULL, false);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR_OR_ZERO(event));
	if (!IS_ERR(event))
		perf_event_release_kernel(event);
	KUNIT_EXPECT_TRUE(test, attr.exclude_kernel);
	KUNIT_EXPECT_TRUE(test, attr.exclude_hv);

	attr.type = pmu->type;
	event = damon_perf_create_event(&attr, 0, cpu, NULL, false);
	KUNIT_EXPECT_EQ(test, 0, PTR_ERR_OR_ZERO(event));
	if (!IS_ERR(event))
		perf_event_release_kernel(event);
	KUNIT_EXPECT_FALSE(test, attr.exclude_kernel);
	KUNIT_EXPECT_FALSE(test, attr.exclude_hv);

	perf_pmu_unregister(kernel);
	perf_pmu_unregister(pmu);
}

static struct damon_ctx *damon_perf_test_ctx(struct kunit *test, u32 type)
{
	struct damon_perf_event_attr attr = {
		.type = type,
		.sample_period = 1,
	};
	struct damon_ctx *ctx = damon_new_ctx();

	KUNIT_ASSERT_NOT_NULL(test, ctx);
	ctx->ops.id = DAMON_OPS_VADDR;
	KUNIT_ASSERT_EQ(test, 0, damon_set_perf_events(ctx, &attr, 1));
	return ctx;
}

/*
 * A second context on a PMU that takes one user per CPU fails its start with
 * -EBUSY and keeps nothing; the first one is not disturbed.  Validating a
 * commit to the running one tries only events that change.
 */
static void damon_perf_test_exclusive_pmu(struct kunit *test)
{
	struct damon_ctx *a, *b;
	struct pmu *pmu;
	unsigned int cpu;

	pmu = damon_perf_test_pmu_copy(test);
	KUNIT_ASSERT_EQ(test, 0, perf_pmu_register(pmu, "damon_perf_test", -1));
	a = damon_perf_test_ctx(test, pmu->type);
	b = damon_perf_test_ctx(test, pmu->type);

	KUNIT_EXPECT_EQ(test, 0, damon_perf_start(a));
	KUNIT_ASSERT_NOT_NULL(test, a->perf);
	KUNIT_EXPECT_EQ(test, -EBUSY, damon_perf_start(b));
	KUNIT_EXPECT_NULL(test, b->perf);
	KUNIT_EXPECT_EQ(test, -EBUSY, damon_perf_validate(b, NULL));
	/* committing the running events again needs no trial... */
	KUNIT_EXPECT_EQ(test, 0, damon_perf_validate(b, a));
	/* ...but changed ones do, and the PMU is taken */
	b->perf_events[0].config++;
	KUNIT_EXPECT_EQ(test, -EBUSY, damon_perf_validate(b, a));
	b->perf_events[0].config--;

	cpus_read_lock();
	for_each_online_cpu(cpu)
		KUNIT_EXPECT_NOT_NULL(test,
				      *damon_perf_event_slot(a->perf, cpu, 0));
	cpus_read_unlock();

	damon_perf_stop(a);
	KUNIT_EXPECT_NULL(test, a->perf);
	/* with the PMU free again, the second context can start */
	KUNIT_EXPECT_EQ(test, 0, damon_perf_start(b));
	damon_perf_stop(b);

	damon_destroy_ctx(a);
	damon_destroy_ctx(b);
	perf_pmu_unregister(pmu);
}

/* The pages of the AUX area the tests' AUX PMU was last given. */
static void **damon_perf_test_aux_pages;

static void *damon_perf_test_aux_setup(struct perf_event *event, void **pages,
				       int nr_pages, bool overwrite)
{
	damon_perf_test_aux_pages = pages;
	return &damon_perf_test_aux_pages;
}

/*
 * As damon_perf_test_aux_setup(), but with the first two pages swapped if
 * the second follows the first in memory, which a test of what runs from
 * one page onto the next needs not to happen.
 */
static void *damon_perf_test_aux_setup_apart(struct perf_event *event,
					     void **pages, int nr_pages,
					     bool overwrite)
{
	if (nr_pages >= 2 && pages[1] == pages[0] + PAGE_SIZE)
		swap(pages[0], pages[1]);
	return damon_perf_test_aux_setup(event, pages, nr_pages, overwrite);
}

static void damon_perf_test_aux_free(void *aux)
{
	damon_perf_test_aux_pages = NULL;
}

/*
 * Register a PMU with an AUX area, per CPU or per task as arm_spe_pmu's,
 * whose setup_aux() is @setup_aux.
 */
static struct pmu *damon_perf_test_aux_pmu(struct kunit *test,
					   void *(*setup_aux)(struct perf_event *,
							      void **, int,
							      bool))
{
	struct pmu *aux = damon_perf_test_pmu_copy(test);

	aux->task_ctx_nr = perf_sw_context;
	aux->capabilities = PERF_PMU_CAP_NO_EXCLUDE;
	aux->setup_aux = setup_aux;
	aux->free_aux = damon_perf_test_aux_free;
	KUNIT_ASSERT_EQ(test, 0,
			perf_pmu_register(aux, "damon_perf_test_aux", -1));
	return aux;
}

static struct perf_event *damon_perf_test_aux_event(struct kunit *test,
						    u32 type, int cpu,
						    bool disabled, bool inherit)
{
	struct perf_event_attr attr = {
		.type = type,
		.size = sizeof(attr),
		.disabled = disabled,
		.inherit = inherit,
	};
	struct perf_event *event;

	event = perf_event_create_kernel_counter(&attr, cpu,
						 cpu < 0 ? current : NULL,
						 NULL, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(event));
	return event;
}

/*
 * Write @len bytes of @src, or of @c if @src is NULL, as the PMU driver
 * would, in one AUX transaction on this CPU, into an area of two pages;
 * return the room perf_aux_output_begin() gave, 0 if none.
 */
static unsigned long damon_perf_test_aux_put(struct perf_event *event,
					     const u8 *src, unsigned long len,
					     u8 c)
{
	unsigned long flags, off, n, done, room = 0;
	struct perf_output_handle handle;
	u8 *page;

	local_irq_save(flags);
	if (perf_aux_output_begin(&handle, event)) {
		room = handle.size;
		/* page by page, as the test's pages need not be contiguous */
		for (done = 0; done < len; done += n) {
			off = (handle.head + done) % (2 * PAGE_SIZE);
			n = min(len - done, PAGE_SIZE - offset_in_page(off));
			page = damon_perf_test_aux_pages[off >> PAGE_SHIFT];
			if (src)
				memcpy(page + offset_in_page(off), src + done,
				       n);
			else
				memset(page + offset_in_page(off), c, n);
		}
		perf_aux_output_end(&handle, len);
	}
	local_irq_restore(flags);
	return room;
}

static unsigned long damon_perf_test_aux_write(struct perf_event *event,
					       unsigned long len, u8 c)
{
	return damon_perf_test_aux_put(event, NULL, len, c);
}

/*
 * The perf core's AUX area of a kernel counter, which the AUX drain reads:
 * what perf_event_alloc_kernel_aux() refuses, that a read or a consume
 * never goes past what the driver wrote, whatever length it is given, and
 * that a peek gives the data in place, no further than its page unless the
 * next page follows it in memory.
 */
static void damon_perf_test_kernel_aux(struct kunit *test)
{
	const unsigned long size = 2 * PAGE_SIZE;
	struct perf_event *event, *other;
	unsigned long offset, run;
	struct pmu *aux, *pmu;
	const void *data;
	unsigned int cpu;
	u64 flags;
	u8 *buf;

	buf = kunit_kzalloc(test, size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	aux = damon_perf_test_aux_pmu(test, damon_perf_test_aux_setup);
	pmu = damon_perf_test_pmu_copy(test);
	KUNIT_ASSERT_EQ(test, 0, perf_pmu_register(pmu, "damon_perf_test", -1));
	cpu = get_cpu();
	put_cpu();

	/* a PMU without an AUX area */
	other = damon_perf_test_aux_event(test, pmu->type, cpu, true, false);
	KUNIT_EXPECT_EQ(test, -EOPNOTSUPP,
			perf_event_alloc_kernel_aux(other, 2));
	perf_event_release_kernel(other);
	/* an inherited per-task counter: its children would share the area */
	other = damon_perf_test_aux_event(test, aux->type, -1, true, true);
	KUNIT_EXPECT_EQ(test, -EINVAL, perf_event_alloc_kernel_aux(other, 2));
	KUNIT_EXPECT_NULL(test, damon_perf_test_aux_pages);
	perf_event_release_kernel(other);
	/* an enabled counter may have started without an area */
	other = damon_perf_test_aux_event(test, aux->type, cpu, false, false);
	KUNIT_EXPECT_EQ(test, -EBUSY, perf_event_alloc_kernel_aux(other, 2));
	KUNIT_EXPECT_NULL(test, damon_perf_test_aux_pages);
	perf_event_release_kernel(other);

	event = damon_perf_test_aux_event(test, aux->type, cpu, true, false);
	KUNIT_EXPECT_EQ(test, -EINVAL, perf_event_alloc_kernel_aux(event, 3));
	KUNIT_ASSERT_EQ(test, 0, perf_event_alloc_kernel_aux(event, 2));
	KUNIT_ASSERT_NOT_NULL(test, damon_perf_test_aux_pages);
	KUNIT_EXPECT_EQ(test, -EBUSY, perf_event_alloc_kernel_aux(event, 2));

	/* the whole area is free (one byte short, as CIRC_SPACE() counts) */
	KUNIT_EXPECT_EQ(test, size - 1,
			damon_perf_test_aux_write(event, 100, 0xa5));
	KUNIT_EXPECT_EQ(test, 100UL,
			perf_event_peek_kernel_aux(event, &data, &flags,
						   &offset));
	KUNIT_EXPECT_PTR_EQ(test, data, damon_perf_test_aux_pages[0]);
	KUNIT_EXPECT_EQ(test, 0ULL, flags);
	KUNIT_EXPECT_EQ(test, 0UL, offset);
	KUNIT_EXPECT_EQ(test, 100UL,
			perf_event_read_kernel_aux(event, buf, size, &flags,
						   &offset));
	KUNIT_EXPECT_EQ(test, 0ULL, flags);
	KUNIT_EXPECT_EQ(test, 0UL, offset);
	KUNIT_EXPECT_EQ(test, 0xa5, buf[0]);
	KUNIT_EXPECT_EQ(test, 0xa5, buf[99]);
	KUNIT_EXPECT_EQ(test, 0, buf[100]);
	/* a consume of more than was written frees what was written */
	perf_event_consume_kernel_aux(event, size);
	KUNIT_EXPECT_EQ(test, 0UL,
			perf_event_read_kernel_aux(event, buf, size, &flags,
						   &offset));
	/* the next data will be read from where the last ended */
	KUNIT_EXPECT_EQ(test, 100UL, offset);
	/* and leaves the driver the whole area again, not none */
	KUNIT_EXPECT_EQ(test, size - 1, damon_perf_test_aux_write(event, 0, 0));

	/* data across the page boundary: a peek stops there, a read does not */
	damon_perf_test_aux_write(event, PAGE_SIZE, 0x5a);
	run = PAGE_SIZE - 100;
	if (damon_perf_test_aux_pages[1] ==
	    damon_perf_test_aux_pages[0] + PAGE_SIZE)
		run = PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, run,
			perf_event_peek_kernel_aux(event, &data, &flags,
						   &offset));
	KUNIT_EXPECT_PTR_EQ(test, data, damon_perf_test_aux_pages[0] + 100);
	KUNIT_EXPECT_EQ(test, 100UL, offset);
	KUNIT_EXPECT_EQ(test, PAGE_SIZE,
			perf_event_read_kernel_aux(event, buf, size, &flags,
						   &offset));
	KUNIT_EXPECT_EQ(test, 0x5a, buf[PAGE_SIZE - 100]);
	KUNIT_EXPECT_EQ(test, 0x5a, buf[PAGE_SIZE - 1]);
	/* the next page's data, where it is, after the end of the first */
	perf_event_consume_kernel_aux(event, PAGE_SIZE - 100);
	KUNIT_EXPECT_EQ(test, 100UL,
			perf_event_peek_kernel_aux(event, &data, &flags,
						   &offset));
	KUNIT_EXPECT_PTR_EQ(test, data, damon_perf_test_aux_pages[1]);
	KUNIT_EXPECT_EQ(test, PAGE_SIZE, offset);
	KUNIT_EXPECT_EQ(test, 0x5a, *(const u8 *)data);
	perf_event_consume_kernel_aux(event, 100);
	KUNIT_EXPECT_EQ(test, 0UL,
			perf_event_peek_kernel_aux(event, &data, &flags,
						   &offset));
	KUNIT_EXPECT_NULL(test, data);

	perf_event_release_kernel(event);
	KUNIT_EXPECT_NULL(test, damon_perf_test_aux_pages);
	perf_pmu_unregister(pmu);
	perf_pmu_unregister(aux);
}

/*
 * arm_spe_pmu's PMUs are known by name, with pa_enable for physical
 * addresses; another PMU is decoded as SPE only while it is added, once,
 * with its own bits, and the table refuses more than it holds.
 */
static void damon_perf_test_spe_pmus(struct kunit *test)
{
	const unsigned int nr = ARRAY_SIZE(damon_perf_spe_pmus) + 1;
	struct pmu *spe, *pmus;
	unsigned int i;
	u64 pa = 0;

	/* struct pmu is too big to keep nr + 1 of them on the stack */
	spe = kunit_kzalloc(test, sizeof(*spe), GFP_KERNEL);
	pmus = kunit_kcalloc(test, nr, sizeof(*pmus), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, spe);
	KUNIT_ASSERT_NOT_NULL(test, pmus);
	spe->name = "arm_spe_0";
	for (i = 0; i < nr; i++)
		pmus[i].name = "damon_perf_test_spe";
	KUNIT_EXPECT_TRUE(test, damon_perf_spe_pmu(spe, &pa));
	KUNIT_EXPECT_EQ(test, BIT_ULL(1), pa);
	KUNIT_EXPECT_FALSE(test, damon_perf_spe_pmu(&pmus[0], &pa));

	KUNIT_EXPECT_EQ(test, 0, damon_perf_add_spe_pmu(&pmus[0], BIT_ULL(16)));
	KUNIT_EXPECT_TRUE(test, damon_perf_spe_pmu(&pmus[0], &pa));
	KUNIT_EXPECT_EQ(test, BIT_ULL(16), pa);
	KUNIT_EXPECT_FALSE(test, damon_perf_spe_pmu(&pmus[1], &pa));
	KUNIT_EXPECT_EQ(test, -EEXIST, damon_perf_add_spe_pmu(&pmus[0], 0));
	for (i = 1; i < nr - 1; i++)
		KUNIT_EXPECT_EQ(test, 0, damon_perf_add_spe_pmu(&pmus[i], i));
	KUNIT_EXPECT_EQ(test, -ENOSPC, damon_perf_add_spe_pmu(&pmus[i], 0));
	KUNIT_EXPECT_FALSE(test, damon_perf_spe_pmu(&pmus[i], &pa));
	KUNIT_EXPECT_TRUE(test, damon_perf_spe_pmu(&pmus[1], &pa));
	KUNIT_EXPECT_EQ(test, 1ULL, pa);

	damon_perf_remove_spe_pmu(&pmus[0]);
	KUNIT_EXPECT_FALSE(test, damon_perf_spe_pmu(&pmus[0], &pa));
	/* the slot it freed takes the one that did not fit, with its bits */
	KUNIT_EXPECT_EQ(test, 0, damon_perf_add_spe_pmu(&pmus[i], 0));
	KUNIT_EXPECT_TRUE(test, damon_perf_spe_pmu(&pmus[i], &pa));
	KUNIT_EXPECT_EQ(test, 0ULL, pa);
	for (i = 0; i < nr; i++)
		damon_perf_remove_spe_pmu(&pmus[i]);
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_FALSE(test, damon_perf_spe_pmu(&pmus[i], &pa));
	KUNIT_EXPECT_TRUE(test, damon_perf_spe_pmu(spe, &pa));
}

/*
 * An event of a PMU that writes SPE records is refused in a physical
 * address space context unless its config asks for physical addresses
 * (pa_enable); in a virtual one it is not.  An AUX PMU that writes no SPE
 * records is refused in both.  The period floor of arm_spe_pmu's events
 * does not apply to another driver's.
 */
static void damon_perf_test_spe_pa(struct kunit *test)
{
	const u64 pa = BIT_ULL(5);
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.disabled = 1,
	};
	struct perf_event *event;
	struct pmu *aux;
	unsigned int cpu;

	aux = damon_perf_test_pmu_copy(test);
	aux->setup_aux = damon_perf_test_aux_setup;
	aux->free_aux = damon_perf_test_aux_free;
	KUNIT_ASSERT_EQ(test, 0,
			perf_pmu_register(aux, "damon_perf_test_spe", -1));
	attr.type = aux->type;
	cpu = get_cpu();
	put_cpu();

	/* not added: its records are in an unknown format */
	event = damon_perf_create_event(&attr, 0, cpu, NULL, false);
	KUNIT_EXPECT_EQ(test, -EOPNOTSUPP, PTR_ERR_OR_ZERO(event));
	if (!IS_ERR(event))
		perf_event_release_kernel(event);

	KUNIT_ASSERT_EQ(test, 0, damon_perf_add_spe_pmu(aux, pa));
	event = damon_perf_create_event(&attr, 0, cpu, NULL, false);
	KUNIT_EXPECT_EQ(test, 0, PTR_ERR_OR_ZERO(event));
	if (!IS_ERR(event))
		perf_event_release_kernel(event);
	/* its period may count other things than operations: left as it is */
	attr.sample_period = 256;
	KUNIT_EXPECT_EQ(test, 0, damon_perf_try_events(&attr, 1, false, 5000));
	KUNIT_EXPECT_EQ(test, 256ULL, attr.sample_period);
	event = damon_perf_create_event(&attr, 0, cpu, NULL, true);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR_OR_ZERO(event));
	if (!IS_ERR(event))
		perf_event_release_kernel(event);
	/* every bit of pa_config is needed */
	attr.config = pa | BIT_ULL(0);
	event = damon_perf_create_event(&attr, 0, cpu, NULL, true);
	KUNIT_EXPECT_EQ(test, 0, PTR_ERR_OR_ZERO(event));
	if (!IS_ERR(event))
		perf_event_release_kernel(event);
	damon_perf_remove_spe_pmu(aux);

	KUNIT_EXPECT_EQ(test, 0, damon_perf_add_spe_pmu(aux, pa | BIT_ULL(6)));
	event = damon_perf_create_event(&attr, 0, cpu, NULL, true);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR_OR_ZERO(event));
	if (!IS_ERR(event))
		perf_event_release_kernel(event);
	damon_perf_remove_spe_pmu(aux);
	perf_pmu_unregister(aux);
}

/*
 * An event of arm_spe_pmu (a PMU named as arm_spe_pmu names its) that asks
 * for a shorter period than its AUX area takes at the context's sampling
 * interval gets that period when the context starts; a check of the
 * context leaves it as it is, and so does the start of an event whose
 * period is long enough.
 */
static void damon_perf_test_spe_floor(struct kunit *test)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.disabled = 1,
		.sample_period = 256,
	};
	struct pmu *spe;

	spe = damon_perf_test_pmu_copy(test);
	spe->setup_aux = damon_perf_test_aux_setup;
	spe->free_aux = damon_perf_test_aux_free;
	KUNIT_ASSERT_EQ(test, 0,
			perf_pmu_register(spe, "arm_spe_damon_test", -1));
	attr.type = spe->type;

	KUNIT_EXPECT_EQ(test, 0, damon_perf_try_events(&attr, 1, false, 0));
	KUNIT_EXPECT_EQ(test, 256ULL, attr.sample_period);
	/* with 4 KiB pages, 960 records of 64 bytes between drains */
	if (PAGE_SIZE == SZ_4K) {
		KUNIT_EXPECT_EQ(test, 0,
				damon_perf_try_events(&attr, 1, false, 5000));
		KUNIT_EXPECT_EQ(test, 15625ULL, attr.sample_period);
		attr.sample_period = 256;
		KUNIT_EXPECT_EQ(test, 0,
				damon_perf_try_events(&attr, 1, false, 1000));
		KUNIT_EXPECT_EQ(test, 3125ULL, attr.sample_period);
	}
	attr.sample_period = 20000;
	KUNIT_EXPECT_EQ(test, 0, damon_perf_try_events(&attr, 1, false, 5000));
	KUNIT_EXPECT_EQ(test, 20000ULL, attr.sample_period);
	perf_pmu_unregister(spe);
}

/*
 * Write into @p an SPE record of a load of @addr by the task of @pid, as a
 * PMU that aligns records to no boundary does, and, if @align, an
 * alignment packet to the next 16 bytes of the area after it, @p being at
 * offset @at of the area, with bytes that are no packets in its way.
 * Returns the bytes written.
 */
static unsigned int damon_perf_test_spe_put(u8 *p, unsigned long at,
					    u64 addr, pid_t pid, bool align)
{
	u8 *start = p;
	unsigned int pad;

	*p++ = 0x64;			/* context */
	put_unaligned_le32(pid, p);
	p += 4;
	*p++ = 0xb0;			/* address: PC */
	put_unaligned_le64(0x400000, p);
	p += 8;
	*p++ = 0x49;			/* operation: load */
	*p++ = 0x0;
	*p++ = 0xb2;			/* address: data virtual */
	put_unaligned_le64(addr, p);
	p += 8;
	*p++ = 0x01;			/* end */
	if (!align)
		return p - start;
	pad = max(16 - ((at + (p - start)) & 15), 2UL);
	memset(p, 0xff, pad);
	p[0] = 0x23;			/* alignment to 16 bytes */
	p[1] = 0x00;
	return p - start + pad;
}

/*
 * The AUX drain decodes records where they are, and those that run from the
 * first page of the area onto the second, which need not follow it in
 * memory, through a copy: every record written reaches the ring once, in
 * order, with its task, none is malformed, the padding and alignment
 * packets between them are stepped over, and the area is left empty.
 */
static void damon_perf_test_aux_read(struct kunit *test)
{
	struct damon_perf_obs_aux aux = { .size = 2 * PAGE_SIZE };
	const unsigned int nr = 150;
	const u64 base = 0x100000;
	struct damon_perf perf = {};
	struct damon_perf_record rec;
	/* padding first, for records 2 KiB before the end of the first page */
	unsigned long len = PAGE_SIZE - SZ_2K, offset;
	struct perf_event *event;
	unsigned int cpu, i, n;
	bool across = false;
	const void *data;
	struct pmu *aux_pmu;
	u64 flags;
	u8 *buf;

	buf = kunit_kzalloc(test, 2 * PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < nr; i++) {
		n = damon_perf_test_spe_put(buf + len, len, base + i * 8,
					    current->pid, i % 4 == 3);
		if (len < PAGE_SIZE && len + n > PAGE_SIZE)
			across = true;
		len += n;
	}
	KUNIT_ASSERT_LT(test, len, 2 * PAGE_SIZE - 1);
	KUNIT_ASSERT_TRUE(test, across);

	aux_pmu = damon_perf_test_aux_pmu(test,
					  damon_perf_test_aux_setup_apart);
	cpu = get_cpu();
	put_cpu();
	event = damon_perf_test_aux_event(test, aux_pmu->type, cpu, true,
					  false);
	KUNIT_ASSERT_EQ(test, 0, perf_event_alloc_kernel_aux(event, 2));
	KUNIT_ASSERT_PTR_NE(test, damon_perf_test_aux_pages[1],
			    damon_perf_test_aux_pages[0] + PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, 0, damon_perf_obs_init(&perf.obs));
	perf.rings = damon_perf_rings_alloc(&perf.obs,
					    DAMON_PERF_RING_ORDER);
	KUNIT_ASSERT_TRUE(test, perf.rings);
	perf.aux_buf = kunit_kmalloc(test, DAMON_PERF_AUX_STITCH, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, perf.aux_buf);
	KUNIT_EXPECT_GT(test, damon_perf_test_aux_put(event, buf, len, 0),
			len);

	/* the records go to the ring of the CPU the read runs on */
	migrate_disable();
	cpu = smp_processor_id();
	damon_perf_aux_read(&perf, event, DAMON_PERF_DRAIN_LATER, &aux);
	KUNIT_EXPECT_EQ(test, nr, aux.records);
	KUNIT_EXPECT_EQ(test, 0, aux.malformed);
	KUNIT_EXPECT_EQ(test, len, aux.used);
	for (i = 0; i < nr; i++) {
		n = damon_perf_ring_consume(perf.rings, cpu, &rec, 1);
		KUNIT_EXPECT_EQ(test, 1, n);
		if (!n)
			break;
		KUNIT_EXPECT_EQ(test, base + i * 8, rec.addr);
		KUNIT_EXPECT_EQ(test, current->tgid, rec.tgid);
	}
	KUNIT_EXPECT_EQ(test, 0,
			damon_perf_ring_consume(perf.rings, cpu, &rec, 1));
	KUNIT_EXPECT_EQ(test, 0UL,
			perf_event_peek_kernel_aux(event, &data, &flags,
						   &offset));
	migrate_enable();

	perf_event_release_kernel(event);
	damon_perf_rings_free(perf.rings);
	damon_perf_obs_exit(&perf.obs);
	perf_pmu_unregister(aux_pmu);
}

#ifdef CONFIG_DAMON_PERF_OBSERVE
/*
 * A producer that refills a ring and asks for a drain during every drain,
 * until @give_up.
 */
struct damon_perf_test_flood {
	struct damon_perf *perf;
	unsigned long drains;
	unsigned long late;
	u64 give_up;
};

static void damon_perf_test_flood_probe(void *data, unsigned int cpu,
					unsigned long nr, unsigned long match,
					unsigned long miss, unsigned long update,
					unsigned long left, u64 duration_ns)
{
	struct damon_perf_test_flood *flood = data;

	flood->drains++;
	/* a sleep that never ends keeps the test going until here */
	if (ktime_get_ns() > flood->give_up) {
		flood->late++;
		return;
	}
	/* tracepoint probes run with preemption off: this CPU's ring */
	damon_perf_ring_push(flood->perf->rings, 0x1000, 1);
	damon_perf_kick(&flood->perf->kick);
}

/*
 * A sampling interval ends on time even while producers ask for a drain
 * faster than the kdamond drains: here, during every drain.
 */
static void damon_perf_test_sleep_flood(struct kunit *test)
{
	struct damon_perf_test_flood flood = {};
	struct damon_perf *perf;
	struct damon_ctx *ctx;
	int err, try;

	ctx = damon_new_ctx();
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	perf = damon_perf_alloc(ctx);
	KUNIT_ASSERT_NOT_NULL(test, perf);
	ctx->perf = perf;
	perf->kdamond = current;
	perf->rings = damon_perf_rings_alloc(&perf->obs,
					     DAMON_PERF_RING_ORDER);
	KUNIT_ASSERT_TRUE(test, perf->rings);
	flood.perf = perf;
	err = register_trace_damon_perf_drain(damon_perf_test_flood_probe,
					      &flood);
	KUNIT_ASSERT_EQ(test, 0, err);

	/*
	 * A millisecond's interval, and a second before the probe gives up.
	 * The sleep looks at its timer before the drain it is asked for: a
	 * vCPU that stalls for the interval right after the sleep started
	 * its timer sees none, so a sleep that drained nothing is tried
	 * again, a few times.
	 */
	for (try = 0; try < 5 && !flood.drains; try++) {
		flood.give_up = ktime_get_ns() + NSEC_PER_SEC;
		/* the first drain's record; every drain then brings the next */
		preempt_disable();
		damon_perf_ring_push(perf->rings, 0x1000, 1);
		preempt_enable();
		damon_perf_kick(&perf->kick);
		damon_perf_sleep(ctx, 1000);
	}
	KUNIT_EXPECT_GT(test, flood.drains, 0UL);
	KUNIT_EXPECT_EQ(test, 0UL, flood.late);

	unregister_trace_damon_perf_drain(damon_perf_test_flood_probe, &flood);
	tracepoint_synchronize_unregister();
	irq_work_sync(&perf->kick);
	ctx->perf = NULL;
	damon_perf_free(perf);
	damon_destroy_ctx(ctx);
}
#endif	/* CONFIG_DAMON_PERF_OBSERVE */

static struct kunit_case damon_perf_test_cases[] = {
	KUNIT_CASE(damon_perf_test_classify),
	KUNIT_CASE(damon_perf_test_find_region),
	KUNIT_CASE(damon_perf_test_match),
	KUNIT_CASE(damon_perf_test_drain_modes),
	KUNIT_CASE(damon_perf_test_lazy_update),
	KUNIT_CASE(damon_perf_test_view_kept),
	KUNIT_CASE(damon_perf_test_warm),
	KUNIT_CASE(damon_perf_test_estimate_exact),
	KUNIT_CASE(damon_perf_test_estimate_sparse),
	KUNIT_CASE(damon_perf_test_weigh),
	KUNIT_CASE(damon_perf_test_inherit),
	KUNIT_CASE(damon_perf_test_ring_order),
	KUNIT_CASE(damon_perf_test_core_reads),
#ifdef CONFIG_DAMON_PERF_OBSERVE
	KUNIT_CASE(damon_perf_test_sleep_flood),
#endif
	KUNIT_CASE(damon_perf_test_exclusive_pmu),
	KUNIT_CASE(damon_perf_test_exclude_retry),
	KUNIT_CASE(damon_perf_test_kernel_aux),
	KUNIT_CASE(damon_perf_test_aux_read),
	KUNIT_CASE(damon_perf_test_spe_floor),
	KUNIT_CASE(damon_perf_test_spe_pmus),
	KUNIT_CASE(damon_perf_test_spe_pa),
	{},
};

static struct kunit_suite damon_perf_test_suite = {
	.name = "damon-perf",
	.test_cases = damon_perf_test_cases,
#ifdef CONFIG_DAMON_PERF_OBSERVE
	/* contexts the tests start count in counters of their own */
	.init = damon_perf_obs_kunit_isolate,
#endif
};

kunit_test_suite(damon_perf_test_suite);

#endif /* _DAMON_PERF_TEST_H */

#endif	/* CONFIG_DAMON_PERF_EVENTS_KUNIT_TEST */
