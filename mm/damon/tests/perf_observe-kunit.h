/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for the observability of DAMON's perf event access checks.
 */

#ifdef CONFIG_DAMON_PERF_OBSERVE_KUNIT_TEST

#ifndef _DAMON_PERF_OBSERVE_TEST_H
#define _DAMON_PERF_OBSERVE_TEST_H

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/timer.h>

static void damon_perf_obs_test_states(struct kunit *test)
{
	static const enum damon_perf_cpu_state chain[] = {
		DAMON_PERF_ST_CREATED, DAMON_PERF_ST_BOUND,
		DAMON_PERF_ST_ENABLED, DAMON_PERF_ST_RUNNING,
	};
	struct damon_perf_obs obs = {}, other = {};
	struct damon_perf_obs_stats *stats;
	unsigned int cpu = 0;
	s64 illegal;
	int i;

	KUNIT_ASSERT_EQ(test, 0, damon_perf_obs_init(&obs));
	KUNIT_ASSERT_EQ(test, 0, damon_perf_obs_init(&other));
	/* the suite's init gave the test a set of its own */
	stats = obs.stats;
	KUNIT_EXPECT_PTR_NE(test, stats, &damon_perf_obs_live);
	KUNIT_EXPECT_PTR_EQ(test, stats, other.stats);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_ST_UNINIT,
			damon_perf_cpu_state(stats, cpu));

	/* the legal path, step by step */
	for (i = 0; i < ARRAY_SIZE(chain); i++) {
		damon_perf_obs_state(&obs, cpu, chain[i]);
		KUNIT_EXPECT_EQ(test, chain[i], obs.state[cpu]);
		KUNIT_EXPECT_EQ(test, chain[i],
				damon_perf_cpu_state(stats, cpu));
	}
	/* the live set, which perf_stats shows, saw none of it */
	KUNIT_EXPECT_EQ(test, DAMON_PERF_ST_UNINIT,
			damon_perf_cpu_state(&damon_perf_obs_live, cpu));

	/* illegal changes are refused, counted, and change nothing */
	illegal = atomic64_read(&stats->illegal);
	damon_perf_obs_state(&obs, cpu, DAMON_PERF_ST_ENABLED);
	damon_perf_obs_state(&obs, cpu, DAMON_PERF_ST_CREATED);
	damon_perf_obs_state(&obs, cpu, DAMON_PERF_ST_ERROR);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_ST_RUNNING, obs.state[cpu]);
	KUNIT_EXPECT_EQ(test, illegal + 3,
			atomic64_read(&stats->illegal));

	/* a pause (watermarks) disables the events, and enabling resumes */
	damon_perf_obs_state(&obs, cpu, DAMON_PERF_ST_BOUND);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_ST_BOUND, damon_perf_cpu_state(stats, cpu));
	damon_perf_obs_state(&obs, cpu, DAMON_PERF_ST_ENABLED);
	damon_perf_obs_run(&obs, cpu);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_ST_RUNNING, obs.state[cpu]);
	KUNIT_EXPECT_EQ(test, illegal + 3,
			atomic64_read(&stats->illegal));
	damon_perf_obs_state(&other, cpu, DAMON_PERF_ST_RUNNING);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_ST_UNINIT, other.state[cpu]);
	KUNIT_EXPECT_EQ(test, illegal + 4,
			atomic64_read(&stats->illegal));
	KUNIT_EXPECT_FALSE(test, damon_perf_st_legal(DAMON_PERF_ST_UNINIT,
						     NR_DAMON_PERF_STS));

	/* a CPU shows the most advanced live state of its event sets */
	damon_perf_obs_state(&other, cpu, DAMON_PERF_ST_CREATED);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_ST_RUNNING, damon_perf_cpu_state(stats, cpu));

	/* a refusal shows until the next successful create */
	damon_perf_obs_state(&other, cpu, DAMON_PERF_ST_ERROR);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_ST_ERROR, damon_perf_cpu_state(stats, cpu));
	damon_perf_obs_exit(&other);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_ST_ERROR, damon_perf_cpu_state(stats, cpu));
	KUNIT_ASSERT_EQ(test, 0, damon_perf_obs_init(&other));
	damon_perf_obs_state(&other, cpu, DAMON_PERF_ST_CREATED);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_ST_RUNNING, damon_perf_cpu_state(stats, cpu));

	/* release: back to UNINIT once no event set lives on the CPU */
	damon_perf_obs_state(&obs, cpu, DAMON_PERF_ST_UNINIT);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_ST_CREATED, damon_perf_cpu_state(stats, cpu));

	/* a sample that lost the race against the release changes nothing */
	illegal = atomic64_read(&stats->illegal);
	damon_perf_obs_run(&obs, cpu);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_ST_UNINIT, obs.state[cpu]);
	KUNIT_EXPECT_EQ(test, illegal, atomic64_read(&stats->illegal));
	damon_perf_obs_exit(&other);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_ST_UNINIT, damon_perf_cpu_state(stats, cpu));

	/*
	 * a CPU no PMU of a context covers shows NOPMU, below any live
	 * state; it only goes back to UNINIT
	 */
	KUNIT_ASSERT_EQ(test, 0, damon_perf_obs_init(&other));
	damon_perf_obs_state(&other, cpu, DAMON_PERF_ST_NOPMU);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_ST_NOPMU, damon_perf_cpu_state(stats, cpu));
	damon_perf_obs_state(&obs, cpu, DAMON_PERF_ST_CREATED);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_ST_CREATED, damon_perf_cpu_state(stats, cpu));
	damon_perf_obs_state(&obs, cpu, DAMON_PERF_ST_UNINIT);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_ST_NOPMU, damon_perf_cpu_state(stats, cpu));
	illegal = atomic64_read(&stats->illegal);
	damon_perf_obs_state(&other, cpu, DAMON_PERF_ST_CREATED);
	KUNIT_EXPECT_EQ(test, illegal + 1,
			atomic64_read(&stats->illegal));
	damon_perf_obs_exit(&other);
	KUNIT_EXPECT_EQ(test, DAMON_PERF_ST_UNINIT, damon_perf_cpu_state(stats, cpu));
	damon_perf_obs_exit(&obs);
}

/* Drain @cpu's ring of @rings as a drain does, with a made-up outcome. */
static unsigned int
damon_perf_obs_test_drain(struct damon_perf_ring __percpu *rings,
			  unsigned int cpu, struct damon_perf_record *buf,
			  unsigned int max)
{
	struct damon_perf_obs_drain drain;
	unsigned int n, i;

	damon_perf_obs_drain_begin(&drain, rings, cpu);
	n = damon_perf_ring_consume(rings, cpu, buf, max);
	damon_perf_obs_drain_dequeue(&drain, n);
	/* the first record updates, the second matches, the rest miss */
	for (i = 0; i < n; i++) {
		if (i < 2)
			damon_perf_obs_drain_match(&drain, !i);
		else
			damon_perf_obs_drain_miss(&drain, (i - 2) %
						  NR_DAMON_PERF_MISSES);
	}
	damon_perf_obs_drain_end(rings, cpu, &drain);
	return n;
}

static void damon_perf_obs_test_counters(struct kunit *test)
{
	u64 before[NR_DAMON_PERF_COUNTERS], after[NR_DAMON_PERF_COUNTERS];
	u64 stored[NR_DAMON_PERF_COUNTERS];
	struct damon_perf_ring __percpu *rings;
	struct perf_sample_data data = {};
	struct damon_perf_record *buf;
	struct damon_perf_obs obs = {};
	struct damon_perf_ring *ring;
	struct perf_event *event;
	unsigned int cpu, i;
	int r;

	event = kunit_kzalloc(test, sizeof(*event), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, event);
	buf = kunit_kcalloc(test, DAMON_PERF_RING_SIZE, sizeof(*buf),
			    GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, 0, damon_perf_obs_init(&obs));
	rings = damon_perf_rings_alloc(&obs, DAMON_PERF_RING_ORDER);
	KUNIT_ASSERT_TRUE(test, rings);

	migrate_disable();
	cpu = smp_processor_id();
	ring = per_cpu_ptr(rings, cpu);
	KUNIT_EXPECT_PTR_EQ(test, obs.stats, ring->stats);
	damon_perf_obs_read_cpu(obs.stats, cpu, before);
	preempt_disable();
	/*
	 * Callbacks are counted where they come in, apart from what is made
	 * of them: one more callback than classified samples shows as a
	 * callback no class took.
	 */
	for (r = 0; r <= NR_DAMON_PERF_SAMPLE_REASONS; r++)
		damon_perf_obs_callback(&obs);
	for (r = 0; r < NR_DAMON_PERF_SAMPLE_REASONS; r++)
		damon_perf_obs_sample(&obs, event, r ? &data : NULL, 0, 0, r);
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_TRUE(test, damon_perf_ring_push(rings, i + 1, 1));
	preempt_enable();
	damon_perf_obs_read_cpu(obs.stats, cpu, stored);

	/* the callbacks, and one sample of each reason under its reason */
	KUNIT_EXPECT_EQ(test, before[DAMON_PERF_C_CALLBACK] +
			NR_DAMON_PERF_SAMPLE_REASONS + 1,
			stored[DAMON_PERF_C_CALLBACK]);
	for (r = DAMON_PERF_C_VALID; r <= DAMON_PERF_C_INV_PHYS; r++)
		KUNIT_EXPECT_EQ(test, before[r] + 1, stored[r]);
	/* storing a record counts nothing: the drain counts it */
	KUNIT_EXPECT_EQ(test, before[DAMON_PERF_C_ENQUEUE],
			stored[DAMON_PERF_C_ENQUEUE]);
	KUNIT_EXPECT_EQ(test, before[DAMON_PERF_C_RING_PEAK],
			stored[DAMON_PERF_C_RING_PEAK]);

	KUNIT_EXPECT_EQ(test, 5u, damon_perf_obs_test_drain(rings, cpu, buf,
							    5));
	damon_perf_obs_read_cpu(obs.stats, cpu, after);
	KUNIT_EXPECT_EQ(test, before[DAMON_PERF_C_ENQUEUE] + 5,
			after[DAMON_PERF_C_ENQUEUE]);
	KUNIT_EXPECT_EQ(test, max_t(u64, before[DAMON_PERF_C_RING_PEAK], 5),
			after[DAMON_PERF_C_RING_PEAK]);
	KUNIT_EXPECT_EQ(test, before[DAMON_PERF_C_DEQUEUE] + 5,
			after[DAMON_PERF_C_DEQUEUE]);
	KUNIT_EXPECT_EQ(test, before[DAMON_PERF_C_MATCH] + 2,
			after[DAMON_PERF_C_MATCH]);
	for (r = DAMON_PERF_C_MISS_TGID; r <= DAMON_PERF_C_MISS_BOUND; r++)
		KUNIT_EXPECT_EQ(test, before[r] + 1, after[r]);
	KUNIT_EXPECT_EQ(test, before[DAMON_PERF_C_UPDATE] + 1,
			after[DAMON_PERF_C_UPDATE]);
	KUNIT_EXPECT_EQ(test, before[DAMON_PERF_C_OVERFLOW],
			after[DAMON_PERF_C_OVERFLOW]);

	/*
	 * Fill the ring and drop one more: the drop is counted where it
	 * happens, the stored records and the full ring by the drain.  A
	 * record stored while a drain runs is counted by that drain.
	 */
	memcpy(before, after, sizeof(before));
	preempt_disable();
	for (i = 0; i < DAMON_PERF_RING_SIZE; i++)
		damon_perf_ring_push(rings, i + 1, 1);
	KUNIT_EXPECT_FALSE(test, damon_perf_ring_push(rings, 1, 1));
	preempt_enable();
	damon_perf_obs_read_cpu(obs.stats, cpu, stored);
	KUNIT_EXPECT_EQ(test, before[DAMON_PERF_C_OVERFLOW] + 1,
			stored[DAMON_PERF_C_OVERFLOW]);
	KUNIT_EXPECT_EQ(test, before[DAMON_PERF_C_ENQUEUE],
			stored[DAMON_PERF_C_ENQUEUE]);
	KUNIT_EXPECT_EQ(test, (unsigned int)DAMON_PERF_RING_SIZE,
			damon_perf_obs_test_drain(rings, cpu, buf,
						  DAMON_PERF_RING_SIZE));
	damon_perf_obs_read_cpu(obs.stats, cpu, after);
	KUNIT_EXPECT_EQ(test, before[DAMON_PERF_C_ENQUEUE] +
			DAMON_PERF_RING_SIZE, after[DAMON_PERF_C_ENQUEUE]);
	KUNIT_EXPECT_EQ(test, (u64)DAMON_PERF_RING_SIZE,
			after[DAMON_PERF_C_RING_PEAK]);

	/* ring_peak is a high-water mark: a smaller drain leaves it */
	preempt_disable();
	damon_perf_ring_push(rings, 1, 1);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, 1u, damon_perf_obs_test_drain(rings, cpu, buf,
							    1));
	damon_perf_obs_read_cpu(obs.stats, cpu, after);
	KUNIT_EXPECT_EQ(test, (u64)DAMON_PERF_RING_SIZE,
			after[DAMON_PERF_C_RING_PEAK]);
	KUNIT_EXPECT_EQ(test, after[DAMON_PERF_C_ENQUEUE],
			after[DAMON_PERF_C_DEQUEUE]);
	migrate_enable();

	damon_perf_obs_exit(&obs);
	damon_perf_rings_free(rings);
}

/* This CPU's count of reasons to send samples the general way. */
static int damon_perf_obs_test_need_full(void)
{
	return atomic_read(this_cpu_ptr(&damon_perf_obs_need_full));
}

/*
 * The sampling path looks at the event states only while some events on
 * its CPU are ENABLED, and moves them to RUNNING on their first sample.
 */
static void damon_perf_obs_test_first_sample(struct kunit *test)
{
	struct damon_perf_obs obs = {};
	struct perf_event *event;
	unsigned int cpu;
	int base;

	event = kunit_kzalloc(test, sizeof(*event), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, event);
	KUNIT_ASSERT_EQ(test, 0, damon_perf_obs_init(&obs));
	migrate_disable();
	cpu = smp_processor_id();
	/* what else counts here: other contexts, the tracepoint */
	base = damon_perf_obs_test_need_full();
	damon_perf_obs_state(&obs, cpu, DAMON_PERF_ST_CREATED);
	damon_perf_obs_state(&obs, cpu, DAMON_PERF_ST_BOUND);
	KUNIT_EXPECT_EQ(test, base, damon_perf_obs_test_need_full());
	damon_perf_obs_state(&obs, cpu, DAMON_PERF_ST_ENABLED);
	KUNIT_EXPECT_EQ(test, base + 1, damon_perf_obs_test_need_full());

	preempt_disable();
	damon_perf_obs_sample(&obs, event, NULL, 0, 0,
			      DAMON_PERF_SAMPLE_NULL);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, DAMON_PERF_ST_RUNNING, obs.state[cpu]);
	KUNIT_EXPECT_EQ(test, base, damon_perf_obs_test_need_full());

	/* a pause and a resume wait for a sample again */
	damon_perf_obs_state(&obs, cpu, DAMON_PERF_ST_BOUND);
	damon_perf_obs_state(&obs, cpu, DAMON_PERF_ST_ENABLED);
	KUNIT_EXPECT_EQ(test, base + 1, damon_perf_obs_test_need_full());
	/* a release of ENABLED events leaves none waiting */
	damon_perf_obs_state(&obs, cpu, DAMON_PERF_ST_UNINIT);
	KUNIT_EXPECT_EQ(test, base, damon_perf_obs_test_need_full());
	preempt_disable();
	damon_perf_obs_sample(&obs, event, NULL, 0, 0,
			      DAMON_PERF_SAMPLE_NULL);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, DAMON_PERF_ST_UNINIT, obs.state[cpu]);
	migrate_enable();
	damon_perf_obs_exit(&obs);
}

/* Take @obs's events on @cpu through CREATED and BOUND to ENABLED. */
static void damon_perf_obs_test_enable(struct damon_perf_obs *obs,
				       unsigned int cpu)
{
	damon_perf_obs_state(obs, cpu, DAMON_PERF_ST_CREATED);
	damon_perf_obs_state(obs, cpu, DAMON_PERF_ST_BOUND);
	damon_perf_obs_state(obs, cpu, DAMON_PERF_ST_ENABLED);
}

/* Whether a valid sample of @obs on this CPU takes the common case. */
static bool damon_perf_obs_test_quick(struct damon_perf_obs *obs)
{
	bool quick;

	preempt_disable();
	quick = damon_perf_obs_valid_quick(obs);
	preempt_enable();
	return quick;
}

/*
 * Events that wait for their first sample on one CPU send that CPU's
 * samples the general way, and no other CPU's: a CPU whose events never
 * sample, an idle one, must not keep the others off the common case.
 */
static void damon_perf_obs_test_quick_per_cpu(struct kunit *test)
{
	struct damon_perf_obs obs = {};
	unsigned int cpu, other;

	KUNIT_ASSERT_EQ(test, 0, damon_perf_obs_init(&obs));
	migrate_disable();
	cpu = smp_processor_id();
	other = cpumask_any_but(cpu_possible_mask, cpu);
	if (other >= nr_cpu_ids) {
		migrate_enable();
		damon_perf_obs_exit(&obs);
		kunit_skip(test, "needs a second possible CPU");
	}
	damon_perf_obs_test_enable(&obs, other);
	KUNIT_EXPECT_TRUE_MSG(test, damon_perf_obs_test_quick(&obs),
			      "CPU %u's ENABLED events slowed CPU %u", other,
			      cpu);

	damon_perf_obs_test_enable(&obs, cpu);
	KUNIT_EXPECT_FALSE(test, damon_perf_obs_test_quick(&obs));
	migrate_enable();
	damon_perf_obs_exit(&obs);
}

static void damon_perf_obs_test_probe(void *data, u64 addr, u64 data_src,
				      u64 period, unsigned int cpu,
				      unsigned int reason, u64 sample_flags,
				      u64 sample_type, unsigned int context)
{
	atomic_inc(data);
}

/*
 * While damon_perf_sample has a probe, no sample takes the common case,
 * which does not read the tracepoint's key, and the general path traces;
 * once the probe is gone, the common case is back.
 */
static void damon_perf_obs_test_trace_full(struct kunit *test)
{
	struct damon_perf_obs obs = {};
	atomic_t traced = ATOMIC_INIT(0);
	struct perf_event *event;
	bool on, off;

	event = kunit_kzalloc(test, sizeof(*event), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, event);
	KUNIT_ASSERT_EQ(test, 0, damon_perf_obs_init(&obs));
	KUNIT_ASSERT_EQ(test, 0,
			register_trace_damon_perf_sample(damon_perf_obs_test_probe,
							 &traced));
	preempt_disable();
	on = damon_perf_obs_valid_quick(&obs);
	damon_perf_obs_sample(&obs, event, NULL, 0, 0x1000,
			      DAMON_PERF_SAMPLE_VALID);
	preempt_enable();
	unregister_trace_damon_perf_sample(damon_perf_obs_test_probe,
					   &traced);
	tracepoint_synchronize_unregister();
	off = damon_perf_obs_test_quick(&obs);

	KUNIT_EXPECT_FALSE(test, on);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&traced));
	KUNIT_EXPECT_TRUE(test, off);
	damon_perf_obs_exit(&obs);
}

/*
 * perf_stats shows the memory of the largest rings and the largest view of
 * the regions since boot: smaller ones allocated later leave it as it was.
 */
static void damon_perf_obs_test_memory(struct kunit *test)
{
	enum { ORDER = DAMON_PERF_RING_ORDER + 1 };
	struct damon_perf_ring __percpu *big, *small;
	struct damon_perf_obs obs = {}, none = {};
	struct damon_perf_obs_stats *stats;
	long want;

	KUNIT_ASSERT_EQ(test, 0, damon_perf_obs_init(&obs));
	stats = obs.stats;
	KUNIT_EXPECT_EQ(test, 0L, (long)atomic_long_read(&stats->ring_bytes));
	KUNIT_EXPECT_EQ(test, 0L, (long)atomic_long_read(&stats->view_bytes));

	big = damon_perf_rings_alloc(&obs, ORDER);
	KUNIT_ASSERT_TRUE(test, big);
	small = damon_perf_rings_alloc(&obs, DAMON_PERF_RING_ORDER);
	KUNIT_ASSERT_TRUE(test, small);
	want = num_possible_cpus() * (BIT(ORDER) *
		sizeof(struct damon_perf_record) +
		sizeof(struct damon_perf_ring));
	KUNIT_EXPECT_EQ(test, want,
			(long)atomic_long_read(&stats->ring_bytes));
	KUNIT_EXPECT_EQ(test, (long)BIT(ORDER),
			(long)atomic_long_read(&stats->capacity));
	damon_perf_rings_free(small);
	damon_perf_rings_free(big);

	damon_perf_obs_view(&obs, 4096);
	damon_perf_obs_view(&obs, 1024);
	/* a view laid out with no observation state is not counted */
	damon_perf_obs_view(&none, 8192);
	KUNIT_EXPECT_EQ(test, 4096L,
			(long)atomic_long_read(&stats->view_bytes));
	damon_perf_obs_exit(&obs);
}

static unsigned int damon_perf_obs_test_ctx;

static enum hrtimer_restart damon_perf_obs_test_hrtimer(struct hrtimer *t)
{
	WRITE_ONCE(damon_perf_obs_test_ctx, damon_perf_sample_context());
	return HRTIMER_NORESTART;
}

static void damon_perf_obs_test_timer(struct timer_list *t)
{
	WRITE_ONCE(damon_perf_obs_test_ctx, damon_perf_sample_context());
}

static void damon_perf_obs_test_context(struct kunit *test)
{
	struct timer_list timer;
	struct hrtimer hrtimer;

	KUNIT_EXPECT_EQ(test, 0u, damon_perf_sample_context());

	/* a timer_list callback runs in softirq context */
	WRITE_ONCE(damon_perf_obs_test_ctx, 99);
	timer_setup_on_stack(&timer, damon_perf_obs_test_timer, 0);
	mod_timer(&timer, jiffies + 1);
	while (READ_ONCE(damon_perf_obs_test_ctx) == 99)
		msleep(20);
	del_timer_sync(&timer);
	destroy_timer_on_stack(&timer);
	KUNIT_EXPECT_EQ(test, 1u, READ_ONCE(damon_perf_obs_test_ctx));

	/* a hard hrtimer callback runs in hardirq context */
	WRITE_ONCE(damon_perf_obs_test_ctx, 99);
	hrtimer_init_on_stack(&hrtimer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	hrtimer.function = damon_perf_obs_test_hrtimer;
	hrtimer_start(&hrtimer, ns_to_ktime(1000), HRTIMER_MODE_REL_HARD);
	while (READ_ONCE(damon_perf_obs_test_ctx) == 99)
		msleep(20);
	hrtimer_cancel(&hrtimer);
	destroy_hrtimer_on_stack(&hrtimer);
	KUNIT_EXPECT_EQ(test, 2u, READ_ONCE(damon_perf_obs_test_ctx));
}

static struct kunit_case damon_perf_obs_test_cases[] = {
	KUNIT_CASE(damon_perf_obs_test_states),
	KUNIT_CASE(damon_perf_obs_test_counters),
	KUNIT_CASE(damon_perf_obs_test_first_sample),
	KUNIT_CASE(damon_perf_obs_test_quick_per_cpu),
	KUNIT_CASE(damon_perf_obs_test_trace_full),
	KUNIT_CASE(damon_perf_obs_test_memory),
	KUNIT_CASE(damon_perf_obs_test_context),
	{},
};

static struct kunit_suite damon_perf_obs_test_suite = {
	.name = "damon-perf-observe",
	.init = damon_perf_obs_kunit_isolate,
	.test_cases = damon_perf_obs_test_cases,
};

kunit_test_suite(damon_perf_obs_test_suite);

#endif /* _DAMON_PERF_OBSERVE_TEST_H */

#endif	/* CONFIG_DAMON_PERF_OBSERVE_KUNIT_TEST */
