/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for DAMON's perf event access checks.
 */

#ifdef CONFIG_DAMON_PERF_EVENTS_KUNIT_TEST

#ifndef _DAMON_PERF_TEST_H
#define _DAMON_PERF_TEST_H

#include <kunit/test.h>

static struct damon_perf_ring *damon_perf_test_ring(struct kunit *test)
{
	struct damon_perf_ring *ring = kvzalloc(sizeof(*ring), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ring);
	return ring;
}

static struct damon_perf_record damon_perf_test_rec(u64 addr)
{
	return (struct damon_perf_record){ .addr = addr, .tgid = 1 };
}

static void damon_perf_test_ring_empty(struct kunit *test)
{
	struct damon_perf_ring *ring = damon_perf_test_ring(test);
	struct damon_perf_record buf[4];

	KUNIT_EXPECT_EQ(test, 0u, damon_perf_ring_consume(ring, buf, 4));
	KUNIT_EXPECT_EQ(test, 0ul, damon_perf_ring_len(ring));
	kvfree(ring);
}

static void damon_perf_test_ring_full(struct kunit *test)
{
	struct damon_perf_ring *ring = damon_perf_test_ring(test);
	struct damon_perf_record rec, buf[8];
	unsigned long i, occupancy, dropped = 0;

	preempt_disable();
	for (i = 0; i < DAMON_PERF_RING_SIZE + 5; i++) {
		rec = damon_perf_test_rec(i);
		if (!damon_perf_ring_push(ring, &rec, &occupancy))
			dropped++;
		else
			KUNIT_EXPECT_EQ(test, i + 1, occupancy);
	}
	preempt_enable();
	/* a full ring drops, and never overwrites */
	KUNIT_EXPECT_EQ(test, 5ul, dropped);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_RING_SIZE, occupancy);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_RING_SIZE, damon_perf_ring_len(ring));
	KUNIT_EXPECT_EQ(test, 8u, damon_perf_ring_consume(ring, buf, 8));
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, i, buf[i].addr);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_RING_SIZE - 8, damon_perf_ring_len(ring));

	/* consuming frees exactly that many slots */
	preempt_disable();
	for (i = 0; i < 9; i++) {
		rec = damon_perf_test_rec(1000 + i);
		if (!damon_perf_ring_push(ring, &rec, &occupancy))
			dropped++;
	}
	preempt_enable();
	KUNIT_EXPECT_EQ(test, 6ul, dropped);
	kvfree(ring);
}

static void damon_perf_test_ring_wrap(struct kunit *test)
{
	struct damon_perf_ring *ring = damon_perf_test_ring(test);
	struct damon_perf_record rec, buf[7];
	unsigned long next_in = 0, next_out = 0, occupancy;
	unsigned int n, i;

	/* go around the ring several times with uneven batch sizes */
	while (next_out < 5 * DAMON_PERF_RING_SIZE + 3) {
		preempt_disable();
		for (i = 0; i < 11; i++) {
			rec = damon_perf_test_rec(next_in);
			if (damon_perf_ring_push(ring, &rec, &occupancy))
				next_in++;
		}
		preempt_enable();
		n = damon_perf_ring_consume(ring, buf, ARRAY_SIZE(buf));
		for (i = 0; i < n; i++)
			KUNIT_ASSERT_EQ(test, next_out++, buf[i].addr);
	}
	KUNIT_EXPECT_EQ(test, next_in - next_out, damon_perf_ring_len(ring));
	kvfree(ring);
}

/*
 * A producer interrupted between reserving and filling its slot by another
 * producer on the same CPU: nothing may be published until the interrupted
 * one is done, and then both records, in slot order.
 */
static void damon_perf_test_ring_nested(struct kunit *test)
{
	struct damon_perf_ring *ring = damon_perf_test_ring(test);
	struct damon_perf_record rec, buf[4];
	unsigned long pos, occupancy;

	preempt_disable();
	damon_perf_ring_enter(ring);
	KUNIT_ASSERT_TRUE(test, damon_perf_ring_reserve(ring, &pos, &occupancy));
	KUNIT_EXPECT_EQ(test, 0ul, pos);

	/* the interrupting producer runs to completion */
	rec = damon_perf_test_rec(222);
	KUNIT_EXPECT_TRUE(test, damon_perf_ring_push(ring, &rec, &occupancy));
	KUNIT_EXPECT_EQ(test, 2ul, occupancy);
	KUNIT_EXPECT_EQ(test, 0u, damon_perf_ring_consume(ring, buf, 4));

	/* the interrupted one fills its slot and leaves, publishing both */
	ring->slots[pos & DAMON_PERF_RING_MASK] = damon_perf_test_rec(111);
	damon_perf_ring_leave(ring);
	preempt_enable();

	KUNIT_EXPECT_EQ(test, 0l, local_read(&ring->nest));
	KUNIT_ASSERT_EQ(test, 2u, damon_perf_ring_consume(ring, buf, 4));
	KUNIT_EXPECT_EQ(test, 111ull, buf[0].addr);
	KUNIT_EXPECT_EQ(test, 222ull, buf[1].addr);
	kvfree(ring);
}

/*
 * The outermost producer publishes before it gives up its nesting level; a
 * producer that interrupts it after that is the outermost one in turn and
 * publishes its own slot.  Either way ->head only moves forward.
 */
static void damon_perf_test_ring_publish(struct kunit *test)
{
	struct damon_perf_ring *ring = damon_perf_test_ring(test);
	struct damon_perf_record rec, buf[4];
	unsigned long pos, occupancy;

	preempt_disable();
	damon_perf_ring_enter(ring);
	KUNIT_ASSERT_TRUE(test, damon_perf_ring_reserve(ring, &pos, &occupancy));
	ring->slots[pos & DAMON_PERF_RING_MASK] = damon_perf_test_rec(111);
	/* a producer that interrupts before the publish does not publish */
	rec = damon_perf_test_rec(222);
	KUNIT_EXPECT_TRUE(test, damon_perf_ring_push(ring, &rec, &occupancy));
	KUNIT_EXPECT_EQ(test, 0ul, READ_ONCE(ring->head));
	KUNIT_EXPECT_EQ(test, 1l, local_read(&ring->nest));

	/* one publishing round finds nothing reserved after it */
	KUNIT_EXPECT_TRUE(test, damon_perf_ring_publish(ring));
	KUNIT_EXPECT_EQ(test, 2ul, READ_ONCE(ring->head));
	KUNIT_EXPECT_EQ(test, 0l, local_read(&ring->nest));

	/* one that interrupts after it publishes its own slot, further on */
	rec = damon_perf_test_rec(333);
	KUNIT_EXPECT_TRUE(test, damon_perf_ring_push(ring, &rec, &occupancy));
	KUNIT_EXPECT_EQ(test, 3ul, READ_ONCE(ring->head));
	preempt_enable();

	KUNIT_ASSERT_EQ(test, 3u, damon_perf_ring_consume(ring, buf, 4));
	KUNIT_EXPECT_EQ(test, 111ull, buf[0].addr);
	KUNIT_EXPECT_EQ(test, 222ull, buf[1].addr);
	KUNIT_EXPECT_EQ(test, 333ull, buf[2].addr);
	kvfree(ring);
}

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
			damon_perf_classify(TASK_SIZE, 0, false));

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
 * target that damon_destroy_target() frees them with.
 */
static struct damon_target *damon_perf_test_regions(struct kunit *test,
						    struct damon_region **r)
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
	}
	return t;
}

static void damon_perf_test_find_region(struct kunit *test)
{
	struct damon_region *r[4];
	enum damon_perf_miss miss;
	struct damon_target *t = damon_perf_test_regions(test, r);

	/* first, middle and last regions, at their edges */
	KUNIT_EXPECT_EQ(test, 0, damon_perf_find_region(r, 3, 10, &miss));
	KUNIT_EXPECT_EQ(test, 0, damon_perf_find_region(r, 3, 19, &miss));
	KUNIT_EXPECT_EQ(test, 1, damon_perf_find_region(r, 3, 20, &miss));
	KUNIT_EXPECT_EQ(test, 2, damon_perf_find_region(r, 3, 40, &miss));
	KUNIT_EXPECT_EQ(test, 2, damon_perf_find_region(r, 3, 49, &miss));

	/* the gap between regions */
	miss = NR_DAMON_PERF_MISSES;
	KUNIT_EXPECT_EQ(test, -1, damon_perf_find_region(r, 3, 30, &miss));
	KUNIT_EXPECT_EQ(test, DAMON_PERF_MISS_REGION, miss);
	miss = NR_DAMON_PERF_MISSES;
	KUNIT_EXPECT_EQ(test, -1, damon_perf_find_region(r, 3, 39, &miss));
	KUNIT_EXPECT_EQ(test, DAMON_PERF_MISS_REGION, miss);

	/* outside the bounds */
	miss = NR_DAMON_PERF_MISSES;
	KUNIT_EXPECT_EQ(test, -1, damon_perf_find_region(r, 3, 9, &miss));
	KUNIT_EXPECT_EQ(test, DAMON_PERF_MISS_BOUND, miss);
	miss = NR_DAMON_PERF_MISSES;
	KUNIT_EXPECT_EQ(test, -1, damon_perf_find_region(r, 3, 50, &miss));
	KUNIT_EXPECT_EQ(test, DAMON_PERF_MISS_BOUND, miss);
	miss = NR_DAMON_PERF_MISSES;
	KUNIT_EXPECT_EQ(test, -1, damon_perf_find_region(r, 0, 15, &miss));
	KUNIT_EXPECT_EQ(test, DAMON_PERF_MISS_BOUND, miss);

	/* a single region */
	KUNIT_EXPECT_EQ(test, 0, damon_perf_find_region(&r[3], 1, 100, &miss));
	KUNIT_EXPECT_EQ(test, 0, damon_perf_find_region(&r[3], 1, 199, &miss));
	KUNIT_EXPECT_EQ(test, -1, damon_perf_find_region(&r[3], 1, 200, &miss));
	KUNIT_EXPECT_EQ(test, DAMON_PERF_MISS_BOUND, miss);
	damon_destroy_target(t);
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
	enum damon_perf_miss miss;
	struct damon_target *t = damon_perf_test_regions(test, r);

	perf.regions = r;
	KUNIT_EXPECT_EQ(test, 1, damon_perf_match(&perf, &rec, false, &miss));

	/* an access by another process */
	rec.tgid = 43;
	miss = NR_DAMON_PERF_MISSES;
	KUNIT_EXPECT_EQ(test, -1, damon_perf_match(&perf, &rec, false, &miss));
	KUNIT_EXPECT_EQ(test, DAMON_PERF_MISS_TGID, miss);

	/* a target whose process is gone matches nothing */
	rec.tgid = 0;
	rec.addr = 150;
	miss = NR_DAMON_PERF_MISSES;
	KUNIT_EXPECT_EQ(test, -1, damon_perf_match(&perf, &rec, false, &miss));
	KUNIT_EXPECT_EQ(test, DAMON_PERF_MISS_TGID, miss);

	/* the right process, outside its regions */
	rec.tgid = 42;
	miss = NR_DAMON_PERF_MISSES;
	KUNIT_EXPECT_EQ(test, -1, damon_perf_match(&perf, &rec, false, &miss));
	KUNIT_EXPECT_EQ(test, DAMON_PERF_MISS_BOUND, miss);

	/* physical: the one target, by physical address */
	rec.tgid = 7;
	rec.paddr = 45;
	KUNIT_EXPECT_EQ(test, 2, damon_perf_match(&perf, &rec, true, &miss));
	damon_destroy_target(t);
}

static void damon_perf_test_field_store(struct kunit *test)
{
	struct damon_perf_event_attr a, before;
	static const struct {
		enum damon_perf_event_field field;
		const char *buf;
	} bad[] = {
		{ DAMON_PERF_FIELD_TYPE, "" },
		{ DAMON_PERF_FIELD_TYPE, "abc" },
		{ DAMON_PERF_FIELD_TYPE, "-1" },
		{ DAMON_PERF_FIELD_TYPE, "4294967296" },
		{ DAMON_PERF_FIELD_CONFIG, "18446744073709551616" },
		{ DAMON_PERF_FIELD_CONFIG, "1 2" },
		{ DAMON_PERF_FIELD_FREQ, "2" },
		{ DAMON_PERF_FIELD_FREQ, "yes" },
		{ DAMON_PERF_FIELD_SAMPLE_PHYS_ADDR, "2" },
		{ DAMON_PERF_FIELD_PRECISE_IP, "4" },
		{ DAMON_PERF_FIELD_EXCLUDE_KERNEL, "-1" },
		{ DAMON_PERF_FIELD_EXCLUDE_HV, "3" },
		{ DAMON_PERF_FIELD_SAMPLE_PERIOD, "0x" },
		{ NR_DAMON_PERF_FIELDS, "1" },
	};
	static const struct {
		enum damon_perf_event_field field;
		const char *buf;
		u64 value;
	} good[] = {
		{ DAMON_PERF_FIELD_TYPE, "4294967295\n", U32_MAX },
		{ DAMON_PERF_FIELD_CONFIG, "0x1cd", 0x1cd },
		{ DAMON_PERF_FIELD_PRECISE_IP, "3", 3 },
		{ DAMON_PERF_FIELD_EXCLUDE_KERNEL, "0", 0 },
		{ DAMON_PERF_FIELD_SAMPLE_PERIOD, "18446744073709551615",
		  U64_MAX },
	};
	int i;

	damon_perf_event_attr_init(&a);
	KUNIT_EXPECT_EQ(test, (u32)PERF_TYPE_SOFTWARE, a.type);
	KUNIT_EXPECT_EQ(test, (u64)PERF_COUNT_SW_PAGE_FAULTS, a.config);
	KUNIT_EXPECT_TRUE(test, a.exclude_kernel);

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int err;

		before = a;
		err = damon_perf_field_store(&a, bad[i].field, bad[i].buf);
		KUNIT_EXPECT_EQ_MSG(test, -EINVAL, err, "field %d, input '%s'",
				    bad[i].field, bad[i].buf);
		KUNIT_EXPECT_TRUE(test, damon_perf_event_attr_eq(&a, &before));
	}

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		enum damon_perf_event_field f = good[i].field;

		KUNIT_EXPECT_EQ_MSG(test, 0,
				    damon_perf_field_store(&a, f, good[i].buf),
				    "field %d, input '%s'", f, good[i].buf);
		KUNIT_EXPECT_EQ_MSG(test, good[i].value,
				    damon_perf_field_show(&a, f),
				    "field %d, input '%s'", f, good[i].buf);
	}
	KUNIT_EXPECT_FALSE(test, a.exclude_kernel);
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

static struct damon_ctx *damon_perf_test_ctx(struct kunit *test, u32 type)
{
	struct damon_perf_event_attr attr;
	struct damon_ctx *ctx = damon_new_ctx();

	KUNIT_ASSERT_NOT_NULL(test, ctx);
	ctx->ops.id = DAMON_OPS_VADDR;
	damon_perf_event_attr_init(&attr);
	attr.type = type;
	attr.exclude_kernel = false;
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
	unsigned int cpu;
	int err;

	err = perf_pmu_register(&damon_perf_test_pmu, "damon_perf_test", -1);
	KUNIT_ASSERT_EQ(test, 0, err);
	a = damon_perf_test_ctx(test, damon_perf_test_pmu.type);
	b = damon_perf_test_ctx(test, damon_perf_test_pmu.type);

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
	perf_pmu_unregister(&damon_perf_test_pmu);
}

static struct kunit_case damon_perf_test_cases[] = {
	KUNIT_CASE(damon_perf_test_ring_empty),
	KUNIT_CASE(damon_perf_test_ring_full),
	KUNIT_CASE(damon_perf_test_ring_wrap),
	KUNIT_CASE(damon_perf_test_ring_nested),
	KUNIT_CASE(damon_perf_test_ring_publish),
	KUNIT_CASE(damon_perf_test_classify),
	KUNIT_CASE(damon_perf_test_find_region),
	KUNIT_CASE(damon_perf_test_match),
	KUNIT_CASE(damon_perf_test_field_store),
	KUNIT_CASE(damon_perf_test_exclusive_pmu),
	{},
};

static struct kunit_suite damon_perf_test_suite = {
	.name = "damon-perf",
	.test_cases = damon_perf_test_cases,
};

kunit_test_suite(damon_perf_test_suite);

#endif /* _DAMON_PERF_TEST_H */

#endif	/* CONFIG_DAMON_PERF_EVENTS_KUNIT_TEST */
