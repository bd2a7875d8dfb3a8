/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for the per-CPU rings of DAMON's perf event access checks.
 */

#ifdef CONFIG_DAMON_PERF_EVENTS_KUNIT_TEST

#ifndef _DAMON_PERF_RING_TEST_H
#define _DAMON_PERF_RING_TEST_H

#include <kunit/test.h>

static struct damon_perf_ring *damon_perf_test_ring_of(struct kunit *test,
						       unsigned int order)
{
	struct damon_perf_ring *ring = kunit_kzalloc(test, sizeof(*ring),
						     GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ring);
	ring->mask = BIT(order) - 1;
	ring->slots = kunit_kcalloc(test, BIT(order), sizeof(*ring->slots),
				    GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ring->slots);
	return ring;
}

static struct damon_perf_ring *damon_perf_test_ring(struct kunit *test)
{
	return damon_perf_test_ring_of(test, DAMON_PERF_RING_ORDER);
}

static struct damon_perf_record damon_perf_test_rec(u64 addr)
{
	return (struct damon_perf_record){ .addr = addr, .tgid = 1 };
}

static void damon_perf_test_ring_empty(struct kunit *test)
{
	struct damon_perf_ring *ring = damon_perf_test_ring(test);
	struct damon_perf_record buf[4];

	KUNIT_EXPECT_EQ(test, 0u, __damon_perf_ring_consume(ring, buf, 4));
	KUNIT_EXPECT_EQ(test, 0ul, damon_perf_ring_len(ring));
}

static void damon_perf_test_ring_full(struct kunit *test)
{
	struct damon_perf_ring *ring = damon_perf_test_ring(test);
	struct damon_perf_record rec, buf[8];
	unsigned long i, occupancy, dropped = 0;

	preempt_disable();
	for (i = 0; i < DAMON_PERF_RING_SIZE + 5; i++) {
		rec = damon_perf_test_rec(i);
		if (!__damon_perf_ring_push(ring, &rec, &occupancy))
			dropped++;
		else
			KUNIT_EXPECT_EQ(test, i + 1, occupancy);
	}
	preempt_enable();
	/* a full ring drops, and never overwrites */
	KUNIT_EXPECT_EQ(test, 5ul, dropped);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_RING_SIZE, occupancy);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_RING_SIZE, damon_perf_ring_len(ring));
	KUNIT_EXPECT_EQ(test, 8u, __damon_perf_ring_consume(ring, buf, 8));
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, i, buf[i].addr);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_RING_SIZE - 8, damon_perf_ring_len(ring));

	/* consuming frees exactly that many slots */
	preempt_disable();
	for (i = 0; i < 9; i++) {
		rec = damon_perf_test_rec(1000 + i);
		if (!__damon_perf_ring_push(ring, &rec, &occupancy))
			dropped++;
	}
	preempt_enable();
	KUNIT_EXPECT_EQ(test, 6ul, dropped);
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
			if (__damon_perf_ring_push(ring, &rec, &occupancy))
				next_in++;
		}
		preempt_enable();
		n = __damon_perf_ring_consume(ring, buf, ARRAY_SIZE(buf));
		for (i = 0; i < n; i++)
			KUNIT_ASSERT_EQ(test, next_out++, buf[i].addr);
	}
	KUNIT_EXPECT_EQ(test, next_in - next_out, damon_perf_ring_len(ring));
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
	KUNIT_EXPECT_TRUE(test, __damon_perf_ring_push(ring, &rec, &occupancy));
	KUNIT_EXPECT_EQ(test, 2ul, occupancy);
	KUNIT_EXPECT_EQ(test, 0u, __damon_perf_ring_consume(ring, buf, 4));

	/* the interrupted one fills its slot and leaves, publishing both */
	ring->slots[pos & ring->mask] = damon_perf_test_rec(111);
	damon_perf_ring_leave(ring);
	preempt_enable();

	KUNIT_EXPECT_EQ(test, 0l, local_read(&ring->nest));
	KUNIT_ASSERT_EQ(test, 2u, __damon_perf_ring_consume(ring, buf, 4));
	KUNIT_EXPECT_EQ(test, 111ull, buf[0].addr);
	KUNIT_EXPECT_EQ(test, 222ull, buf[1].addr);
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
	ring->slots[pos & ring->mask] = damon_perf_test_rec(111);
	/* a producer that interrupts before the publish does not publish */
	rec = damon_perf_test_rec(222);
	KUNIT_EXPECT_TRUE(test, __damon_perf_ring_push(ring, &rec, &occupancy));
	KUNIT_EXPECT_EQ(test, 0ul, READ_ONCE(ring->head));
	KUNIT_EXPECT_EQ(test, 1l, local_read(&ring->nest));

	/* one publishing round finds nothing reserved after it */
	KUNIT_EXPECT_TRUE(test, damon_perf_ring_publish(ring));
	KUNIT_EXPECT_EQ(test, 2ul, READ_ONCE(ring->head));
	KUNIT_EXPECT_EQ(test, 0l, local_read(&ring->nest));

	/* one that interrupts after it publishes its own slot, further on */
	rec = damon_perf_test_rec(333);
	KUNIT_EXPECT_TRUE(test, __damon_perf_ring_push(ring, &rec, &occupancy));
	KUNIT_EXPECT_EQ(test, 3ul, READ_ONCE(ring->head));
	preempt_enable();

	KUNIT_ASSERT_EQ(test, 3u, __damon_perf_ring_consume(ring, buf, 4));
	KUNIT_EXPECT_EQ(test, 111ull, buf[0].addr);
	KUNIT_EXPECT_EQ(test, 222ull, buf[1].addr);
	KUNIT_EXPECT_EQ(test, 333ull, buf[2].addr);
}

/*
 * A ring of a larger capacity holds that many records, wraps around at it,
 * and drops only beyond it.
 */
static void damon_perf_test_ring_capacity(struct kunit *test)
{
	enum { ORDER = DAMON_PERF_RING_ORDER + 2 };
	struct damon_perf_ring *ring = damon_perf_test_ring_of(test, ORDER);
	unsigned long i, len, occupancy, dropped = 0, next = 0;
	struct damon_perf_record rec, buf[16];
	unsigned int n, k;
	bool ok = true;

	preempt_disable();
	for (i = 0; i < 3 * BIT(ORDER); i++) {
		rec = damon_perf_test_rec(i);
		if (!__damon_perf_ring_push(ring, &rec, &occupancy))
			dropped++;
		/* consume a batch whenever the ring is three quarters full */
		if (damon_perf_ring_len(ring) < BIT(ORDER) / 4 * 3)
			continue;
		n = __damon_perf_ring_consume(ring, buf, ARRAY_SIZE(buf));
		for (k = 0; k < n; k++)
			ok &= buf[k].addr == next++;
	}
	KUNIT_EXPECT_EQ(test, 0ul, dropped);
	/* then fill it: all but the last len + 3 of these fit */
	len = damon_perf_ring_len(ring);
	for (i = 0; i < BIT(ORDER) + 3; i++) {
		rec = damon_perf_test_rec(i);
		if (!__damon_perf_ring_push(ring, &rec, &occupancy))
			dropped++;
	}
	preempt_enable();
	KUNIT_EXPECT_TRUE(test, ok);
	KUNIT_EXPECT_EQ(test, BIT(ORDER), damon_perf_ring_len(ring));
	KUNIT_EXPECT_EQ(test, BIT(ORDER), occupancy);
	KUNIT_EXPECT_EQ(test, len + 3, dropped);
}

static atomic_t damon_perf_test_kicks;

static void damon_perf_test_kick(struct irq_work *work)
{
	atomic_inc(&damon_perf_test_kicks);
}

/*
 * Push @n records into this CPU's ring of @rings, and let a kick they
 * queued run.  Returns the kicks so far.
 */
static int damon_perf_test_push_n(struct damon_perf_ring __percpu *rings,
				  struct irq_work *kick, unsigned int n)
{
	unsigned int i;

	preempt_disable();
	for (i = 0; i < n; i++)
		damon_perf_ring_push(rings, i + 1, 1);
	preempt_enable();
	irq_work_sync(kick);
	return atomic_read(&damon_perf_test_kicks);
}

/* Take @n records out of @cpu's ring of @rings; returns how many it had. */
static unsigned int
damon_perf_test_take(struct damon_perf_ring __percpu *rings, unsigned int cpu,
		     unsigned int n)
{
	struct damon_perf_record buf[16];
	unsigned int got = 0, k;

	while (got < n) {
		k = damon_perf_ring_consume(rings, cpu, buf,
					    min_t(unsigned int, n - got,
						  ARRAY_SIZE(buf)));
		if (!k)
			break;
		got += k;
	}
	return got;
}

/*
 * The push that fills a ring to half queues its kick, once, until the
 * consumer takes the ring below half again; a ring without a kick queues
 * nothing.
 */
static void damon_perf_test_ring_kick(struct kunit *test)
{
	struct irq_work kick = IRQ_WORK_INIT(damon_perf_test_kick);
	struct damon_perf_ring __percpu *rings;
	unsigned int half = DAMON_PERF_RING_SIZE / 2, cpu;
	struct damon_perf_obs obs;

	KUNIT_ASSERT_EQ(test, 0, damon_perf_obs_init(&obs));
	rings = damon_perf_rings_alloc(&obs, DAMON_PERF_RING_ORDER);
	KUNIT_ASSERT_TRUE(test, rings);
	atomic_set(&damon_perf_test_kicks, 0);
	migrate_disable();
	cpu = smp_processor_id();

	/* no kick set: filling the ring queues nothing */
	KUNIT_EXPECT_EQ(test, 0, damon_perf_test_push_n(rings, &kick,
							DAMON_PERF_RING_SIZE));
	KUNIT_EXPECT_EQ(test, (unsigned int)DAMON_PERF_RING_SIZE,
			damon_perf_test_take(rings, cpu, UINT_MAX));

	damon_perf_rings_set_kick(rings, &kick);
	KUNIT_EXPECT_EQ(test, 0, damon_perf_test_push_n(rings, &kick,
							half - 1));
	KUNIT_EXPECT_EQ(test, 1, damon_perf_test_push_n(rings, &kick, 1));
	/* on to full, and past it, without another */
	KUNIT_EXPECT_EQ(test, 1, damon_perf_test_push_n(rings, &kick,
							half + 3));
	/* a drain to a quarter, then half again: one more */
	KUNIT_EXPECT_EQ(test, half + half / 2,
			damon_perf_test_take(rings, cpu, half + half / 2));
	KUNIT_EXPECT_EQ(test, 1, damon_perf_test_push_n(rings, &kick,
							half / 2 - 1));
	KUNIT_EXPECT_EQ(test, 2, damon_perf_test_push_n(rings, &kick, 1));
	/* emptied, half once more: one more */
	KUNIT_EXPECT_EQ(test, half, damon_perf_test_take(rings, cpu, UINT_MAX));
	KUNIT_EXPECT_EQ(test, 3, damon_perf_test_push_n(rings, &kick, half));
	damon_perf_test_take(rings, cpu, UINT_MAX);
	migrate_enable();
	/* every CPU's ring kicks at half */
	for_each_possible_cpu(cpu) {
		KUNIT_EXPECT_PTR_EQ(test, &kick, per_cpu_ptr(rings, cpu)->kick);
		KUNIT_EXPECT_EQ(test, (unsigned long)half,
				per_cpu_ptr(rings, cpu)->kick_at);
	}

	damon_perf_obs_exit(&obs);
	damon_perf_rings_free(rings);
}

static struct kunit_case damon_perf_ring_test_cases[] = {
	KUNIT_CASE(damon_perf_test_ring_empty),
	KUNIT_CASE(damon_perf_test_ring_full),
	KUNIT_CASE(damon_perf_test_ring_capacity),
	KUNIT_CASE(damon_perf_test_ring_wrap),
	KUNIT_CASE(damon_perf_test_ring_nested),
	KUNIT_CASE(damon_perf_test_ring_publish),
	KUNIT_CASE(damon_perf_test_ring_kick),
	{},
};

static struct kunit_suite damon_perf_ring_test_suite = {
	.name = "damon-perf-ring",
	.test_cases = damon_perf_ring_test_cases,
#ifdef CONFIG_DAMON_PERF_OBSERVE
	/* the rings' overflows count in counters of the test's own */
	.init = damon_perf_obs_kunit_isolate,
#endif
};

kunit_test_suite(damon_perf_ring_test_suite);

#endif /* _DAMON_PERF_RING_TEST_H */

#endif	/* CONFIG_DAMON_PERF_EVENTS_KUNIT_TEST */
