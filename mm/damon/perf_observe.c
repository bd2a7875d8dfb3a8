// SPDX-License-Identifier: GPL-2.0
/*
 * Observation of DAMON's perf event access checks.
 *
 * Every stage of the pipeline from the PMU to DAMON's regions counts what
 * passes it in per-CPU counters, and the perf events of each CPU go through
 * a small state machine.  /sys/kernel/debug/damon/perf_stats shows both;
 * the damon_perf_* tracepoints show single samples, ring overflows, missed
 * reports and drains.
 *
 * Counters are attributed to the CPU that took the sample: the sampling side
 * counts on its own CPU, in any context, NMI included, with this_cpu
 * operations (which an NMI cannot tear on 64-bit architectures; on 32-bit
 * ones a nested NMI may lose an increment); the drain side runs in kdamonds
 * on any CPU and adds to the sampling CPU's counters atomically.  Readers get
 * a best-effort snapshot without taking any lock.
 */

#define pr_fmt(fmt) "damon-perf: " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include <trace/events/damon.h>

#include "perf_observe.h"

/*
 * struct damon_perf_obs_cpu - Counters and event states of one CPU.
 * @reason:	Callbacks by &enum damon_perf_sample_reason.
 * @enqueue:	Valid reports stored in a ring.
 * @overflow:	Valid reports dropped because the ring was full.
 * @ring_peak:	Highest ring occupancy seen.
 * @missed:	Valid reports that no context took.
 * @dequeue:	Records drained from the rings of this CPU.
 * @match:	Drained records that hit a region.
 * @miss:	Drained records that hit no region, by &enum damon_perf_miss.
 * @update:	Drained records that turned a region accessed.
 * @nr_in_state: Live (context, CPU) event sets in each state.
 * @error:	perf refused an event here since the last successful create.
 *
 * The first five are written only by the CPU itself; the drain side
 * fields by any CPU.
 */
struct damon_perf_obs_cpu {
	u64 reason[NR_DAMON_PERF_SAMPLE_REASONS];
	u64 enqueue;
	u64 overflow;
	u64 ring_peak;
	u64 missed;
	atomic64_t dequeue;
	atomic64_t match;
	atomic64_t miss[NR_DAMON_PERF_MISSES];
	atomic64_t update;
	atomic_t nr_in_state[NR_DAMON_PERF_STS];
	bool error;
};

static DEFINE_PER_CPU(struct damon_perf_obs_cpu, damon_perf_obs_cpus);

/* State changes that were refused as illegal. */
static atomic64_t damon_perf_obs_illegal = ATOMIC64_INIT(0);

static const char * const damon_perf_st_names[NR_DAMON_PERF_STS] = {
	[DAMON_PERF_ST_UNINIT] = "UNINIT",
	[DAMON_PERF_ST_CREATED] = "CREATED",
	[DAMON_PERF_ST_BOUND] = "BOUND",
	[DAMON_PERF_ST_ENABLED] = "ENABLED",
	[DAMON_PERF_ST_RUNNING] = "RUNNING",
	[DAMON_PERF_ST_ERROR] = "ERROR",
};

/* The states each state may go to. */
static const unsigned int damon_perf_st_next[NR_DAMON_PERF_STS] = {
	[DAMON_PERF_ST_UNINIT] = BIT(DAMON_PERF_ST_CREATED) |
		BIT(DAMON_PERF_ST_ERROR),
	[DAMON_PERF_ST_CREATED] = BIT(DAMON_PERF_ST_BOUND) |
		BIT(DAMON_PERF_ST_ERROR) | BIT(DAMON_PERF_ST_UNINIT),
	[DAMON_PERF_ST_BOUND] = BIT(DAMON_PERF_ST_ENABLED) |
		BIT(DAMON_PERF_ST_UNINIT),
	[DAMON_PERF_ST_ENABLED] = BIT(DAMON_PERF_ST_RUNNING) |
		BIT(DAMON_PERF_ST_UNINIT),
	[DAMON_PERF_ST_RUNNING] = BIT(DAMON_PERF_ST_UNINIT),
	[DAMON_PERF_ST_ERROR] = BIT(DAMON_PERF_ST_CREATED) |
		BIT(DAMON_PERF_ST_UNINIT),
};

static bool damon_perf_st_legal(enum damon_perf_cpu_state from,
				enum damon_perf_cpu_state to)
{
	return from < NR_DAMON_PERF_STS && to < NR_DAMON_PERF_STS &&
		(damon_perf_st_next[from] & BIT(to));
}

/* Whether a state stands for an event that exists. */
static bool damon_perf_st_live(enum damon_perf_cpu_state state)
{
	return state >= DAMON_PERF_ST_CREATED && state <= DAMON_PERF_ST_RUNNING;
}

/*
 * What perf_stats shows for @cpu: ERROR if perf refused an event there
 * since the last successful create, else the most advanced state of a live
 * event set, else UNINIT.
 */
static enum damon_perf_cpu_state damon_perf_cpu_state(unsigned int cpu)
{
	struct damon_perf_obs_cpu *c = per_cpu_ptr(&damon_perf_obs_cpus, cpu);
	int st;

	if (READ_ONCE(c->error))
		return DAMON_PERF_ST_ERROR;
	for (st = DAMON_PERF_ST_RUNNING; st >= DAMON_PERF_ST_CREATED; st--) {
		if (atomic_read(&c->nr_in_state[st]) > 0)
			return st;
	}
	return DAMON_PERF_ST_UNINIT;
}

/* Account for one context's events on @cpu having gone from @from to @to. */
static void damon_perf_obs_moved(unsigned int cpu,
				 enum damon_perf_cpu_state from,
				 enum damon_perf_cpu_state to)
{
	struct damon_perf_obs_cpu *c = per_cpu_ptr(&damon_perf_obs_cpus, cpu);

	if (damon_perf_st_live(from))
		atomic_dec(&c->nr_in_state[from]);
	if (damon_perf_st_live(to))
		atomic_inc(&c->nr_in_state[to]);
	if (to == DAMON_PERF_ST_ERROR)
		WRITE_ONCE(c->error, true);
	else if (to == DAMON_PERF_ST_CREATED)
		WRITE_ONCE(c->error, false);
}

/*
 * Move one context's events on @cpu to @to, for a lifecycle step of the
 * kdamond or CPU hotplug; the cmpxchg settles it against a sample's
 * ENABLED -> RUNNING.  Returns false, changing nothing and saying so in the
 * log, for an illegal change.
 */
static bool damon_perf_obs_change(struct damon_perf_obs *obs, unsigned int cpu,
				  enum damon_perf_cpu_state to)
{
	u32 from;

	do {
		from = READ_ONCE(obs->state[cpu]);
		if (!damon_perf_st_legal(from, to)) {
			atomic64_inc(&damon_perf_obs_illegal);
			pr_warn_ratelimited("cpu %u: illegal event state change %s -> %s refused\n",
					    cpu, damon_perf_st_names[from],
					    to < NR_DAMON_PERF_STS ?
					    damon_perf_st_names[to] : "?");
			return false;
		}
	} while (cmpxchg(&obs->state[cpu], from, to) != from);

	damon_perf_obs_moved(cpu, from, to);
	return true;
}

/*
 * ENABLED -> RUNNING, on a sample.  A single cmpxchg, as the sample may be
 * in NMI context: a sample that loses the race against a release or
 * another sample changes nothing, and is not an illegal change.
 */
static void damon_perf_obs_run(struct damon_perf_obs *obs, unsigned int cpu)
{
	if (READ_ONCE(obs->state[cpu]) == DAMON_PERF_ST_ENABLED &&
	    cmpxchg(&obs->state[cpu], DAMON_PERF_ST_ENABLED,
		    DAMON_PERF_ST_RUNNING) == DAMON_PERF_ST_ENABLED)
		damon_perf_obs_moved(cpu, DAMON_PERF_ST_ENABLED,
				     DAMON_PERF_ST_RUNNING);
}

/**
 * damon_perf_obs_init() - Set up the observation state of a context.
 * @obs:	The observation state.
 *
 * Return: 0 on success, -ENOMEM otherwise.
 */
int damon_perf_obs_init(struct damon_perf_obs *obs)
{
	obs->state = kcalloc(nr_cpu_ids, sizeof(*obs->state), GFP_KERNEL);
	return obs->state ? 0 : -ENOMEM;
}

/**
 * damon_perf_obs_exit() - Tear down the observation state of a context.
 * @obs:	The observation state.
 *
 * Event sets still live are counted as gone; an ERROR stays visible in
 * perf_stats until a later create succeeds on that CPU.
 */
void damon_perf_obs_exit(struct damon_perf_obs *obs)
{
	unsigned int cpu;

	if (!obs->state)
		return;
	for_each_possible_cpu(cpu) {
		if (obs->state[cpu] != DAMON_PERF_ST_UNINIT)
			damon_perf_obs_change(obs, cpu, DAMON_PERF_ST_UNINIT);
	}
	kfree(obs->state);
	obs->state = NULL;
}

/**
 * damon_perf_obs_state() - Record a lifecycle step of a context's events.
 * @obs:	The context's observation state.
 * @cpu:	The CPU whose events made the step.
 * @state:	The state they reached.
 *
 * Steps are create (CREATED), bind (BOUND), enable (ENABLED), release
 * (UNINIT) and refusal (ERROR); RUNNING is reached by the first sample, in
 * damon_perf_obs_sample().  An illegal step is refused and counted.
 */
void damon_perf_obs_state(struct damon_perf_obs *obs, unsigned int cpu,
			  enum damon_perf_cpu_state state)
{
	if (obs->state[cpu] == state && state == DAMON_PERF_ST_UNINIT)
		return;
	damon_perf_obs_change(obs, cpu, state);
}

/*
 * The context a sample is handled in, as the damon_perf_sample tracepoint
 * shows it: 0 process, 1 softirq, 2 hardirq, 3 NMI.
 */
static unsigned int damon_perf_sample_context(void)
{
	if (in_nmi())
		return 3;
	if (in_hardirq())
		return 2;
	if (in_serving_softirq())
		return 1;
	return 0;
}

/**
 * damon_perf_obs_sample() - Count and trace a sample callback.
 * @obs:	Observation state of the context whose event sampled.
 * @event:	The event.
 * @data:	The sample data, or NULL.
 * @pmu_flags:	What the PMU filled in (&perf_sample_data->sample_flags).
 * @addr:	The sample's virtual address, or zero.
 * @reason:	What the overflow handler made of the sample.
 *
 * Runs in the overflow handler's context, NMI included.
 */
void damon_perf_obs_sample(struct damon_perf_obs *obs,
			   struct perf_event *event,
			   struct perf_sample_data *data, u64 pmu_flags,
			   u64 addr, enum damon_perf_sample_reason reason)
{
	unsigned int cpu = smp_processor_id();

	this_cpu_inc(damon_perf_obs_cpus.reason[reason]);
	damon_perf_obs_run(obs, cpu);

	trace_damon_perf_sample(addr,
				data && (pmu_flags & PERF_SAMPLE_DATA_SRC) ?
				data->data_src.val : 0,
				data ? data->period : 0, cpu, reason,
				pmu_flags, event->attr.sample_type,
				damon_perf_sample_context());
}

/* Raise this CPU's ring_peak to @occupancy; best effort against nesting. */
static void damon_perf_obs_peak(unsigned long occupancy)
{
	u64 old;

	do {
		old = this_cpu_read(damon_perf_obs_cpus.ring_peak);
		if (occupancy <= old)
			return;
	} while (this_cpu_cmpxchg(damon_perf_obs_cpus.ring_peak, old,
				  occupancy) != old);
}

/**
 * damon_perf_obs_enqueue() - Count a report stored in a ring.
 * @cpu:	The CPU, which is the current one.
 * @occupancy:	Records in the ring, counting the new one.
 */
void damon_perf_obs_enqueue(unsigned int cpu, unsigned long occupancy)
{
	this_cpu_inc(damon_perf_obs_cpus.enqueue);
	damon_perf_obs_peak(occupancy);
}

/**
 * damon_perf_obs_overflow() - Count and trace a report a full ring dropped.
 * @cpu:	The CPU, which is the current one.
 * @occupancy:	Records in the ring.
 */
void damon_perf_obs_overflow(unsigned int cpu, unsigned long occupancy)
{
	this_cpu_inc(damon_perf_obs_cpus.overflow);
	damon_perf_obs_peak(occupancy);
	trace_damon_perf_ring_overflow(cpu, occupancy, damon_perf_ring_size(),
				       this_cpu_read(damon_perf_obs_cpus.overflow));
}

/**
 * damon_perf_obs_report_missed() - Count and trace a report no ring took.
 * @cpu:	The CPU, which is the current one.
 * @why:	Why.
 * @report:	The report.
 */
void damon_perf_obs_report_missed(unsigned int cpu,
				  enum damon_perf_report_missed why,
				  const struct damon_access_report *report)
{
	this_cpu_inc(damon_perf_obs_cpus.missed);
	trace_damon_perf_report_missed(cpu, why, report->addr, report->tgid);
}

/**
 * damon_perf_obs_drain() - Count and trace one drain of a CPU's ring.
 * @cpu:	The CPU whose ring was drained.
 * @drain:	What the drain did.
 */
void damon_perf_obs_drain(unsigned int cpu,
			  const struct damon_perf_obs_drain *drain)
{
	struct damon_perf_obs_cpu *c = per_cpu_ptr(&damon_perf_obs_cpus, cpu);
	unsigned long miss = 0;
	int i;

	atomic64_add(drain->dequeue, &c->dequeue);
	atomic64_add(drain->match, &c->match);
	for (i = 0; i < NR_DAMON_PERF_MISSES; i++) {
		atomic64_add(drain->miss[i], &c->miss[i]);
		miss += drain->miss[i];
	}
	atomic64_add(drain->update, &c->update);
	trace_damon_perf_drain(cpu, drain->dequeue, drain->match, miss,
			       drain->update, drain->left, drain->ns);
}

/*
 * debugfs
 */

enum damon_perf_counter {
	DAMON_PERF_C_CALLBACK,
	DAMON_PERF_C_VALID,
	DAMON_PERF_C_NULL,
	DAMON_PERF_C_ADDR_ZERO,
	DAMON_PERF_C_KERNEL,
	DAMON_PERF_C_INV_PHYS,
	DAMON_PERF_C_ENQUEUE,
	DAMON_PERF_C_DEQUEUE,
	DAMON_PERF_C_OVERFLOW,
	DAMON_PERF_C_RING_PEAK,
	DAMON_PERF_C_MATCH,
	DAMON_PERF_C_MISS_TGID,
	DAMON_PERF_C_MISS_REGION,
	DAMON_PERF_C_MISS_BOUND,
	DAMON_PERF_C_UPDATE,
	NR_DAMON_PERF_COUNTERS,
};

static const char * const damon_perf_counter_names[] = {
	[DAMON_PERF_C_CALLBACK] = "callback",
	[DAMON_PERF_C_VALID] = "valid",
	[DAMON_PERF_C_NULL] = "null",
	[DAMON_PERF_C_ADDR_ZERO] = "addr_zero",
	[DAMON_PERF_C_KERNEL] = "kernel",
	[DAMON_PERF_C_INV_PHYS] = "inv_phys",
	[DAMON_PERF_C_ENQUEUE] = "enqueue",
	[DAMON_PERF_C_DEQUEUE] = "dequeue",
	[DAMON_PERF_C_OVERFLOW] = "overflow",
	[DAMON_PERF_C_RING_PEAK] = "ring_peak",
	[DAMON_PERF_C_MATCH] = "match",
	[DAMON_PERF_C_MISS_TGID] = "miss_tgid",
	[DAMON_PERF_C_MISS_REGION] = "miss_region",
	[DAMON_PERF_C_MISS_BOUND] = "miss_bound",
	[DAMON_PERF_C_UPDATE] = "update",
};

static_assert(ARRAY_SIZE(damon_perf_counter_names) == NR_DAMON_PERF_COUNTERS);

/* Snapshot of @cpu's counters into @v, indexed by &enum damon_perf_counter. */
static void damon_perf_obs_read_cpu(unsigned int cpu, u64 *v)
{
	struct damon_perf_obs_cpu *c = per_cpu_ptr(&damon_perf_obs_cpus, cpu);
	int i;

	v[DAMON_PERF_C_CALLBACK] = 0;
	for (i = 0; i < NR_DAMON_PERF_SAMPLE_REASONS; i++) {
		v[DAMON_PERF_C_VALID + i] = READ_ONCE(c->reason[i]);
		v[DAMON_PERF_C_CALLBACK] += v[DAMON_PERF_C_VALID + i];
	}
	v[DAMON_PERF_C_ENQUEUE] = READ_ONCE(c->enqueue);
	v[DAMON_PERF_C_DEQUEUE] = atomic64_read(&c->dequeue);
	v[DAMON_PERF_C_OVERFLOW] = READ_ONCE(c->overflow);
	v[DAMON_PERF_C_RING_PEAK] = READ_ONCE(c->ring_peak);
	v[DAMON_PERF_C_MATCH] = atomic64_read(&c->match);
	for (i = 0; i < NR_DAMON_PERF_MISSES; i++)
		v[DAMON_PERF_C_MISS_TGID + i] = atomic64_read(&c->miss[i]);
	v[DAMON_PERF_C_UPDATE] = atomic64_read(&c->update);
}

static int damon_perf_stats_show(struct seq_file *m, void *unused)
{
	u64 total[NR_DAMON_PERF_COUNTERS] = {}, v[NR_DAMON_PERF_COUNTERS];
	u64 missed = 0;
	enum damon_perf_cpu_state st;
	unsigned int cpu;
	int i;

	for_each_possible_cpu(cpu) {
		damon_perf_obs_read_cpu(cpu, v);
		for (i = 0; i < NR_DAMON_PERF_COUNTERS; i++) {
			if (i == DAMON_PERF_C_RING_PEAK)
				total[i] = max(total[i], v[i]);
			else
				total[i] += v[i];
		}
		missed += READ_ONCE(per_cpu_ptr(&damon_perf_obs_cpus,
						cpu)->missed);
	}

	seq_puts(m, "  ┌──────────────┬──────────────┐\n");
	seq_puts(m, "  │ Counter      │        Value │\n");
	seq_puts(m, "  ├──────────────┼──────────────┤\n");
	for (i = 0; i < NR_DAMON_PERF_COUNTERS; i++)
		seq_printf(m, "  │ %-12s │ %12llu │\n",
			   damon_perf_counter_names[i], total[i]);
	seq_puts(m, "  └──────────────┴──────────────┘\n");
	seq_printf(m, "  report_missed=%llu illegal_state_changes=%lld ring_capacity=%lu\n",
		   missed, atomic64_read(&damon_perf_obs_illegal),
		   damon_perf_ring_size());

	seq_puts(m, "\n  Per-CPU (non-zero / non-UNINIT):\n");
	for_each_possible_cpu(cpu) {
		bool any = false;

		damon_perf_obs_read_cpu(cpu, v);
		for (i = 0; i < NR_DAMON_PERF_COUNTERS; i++)
			any |= v[i] != 0;
		st = damon_perf_cpu_state(cpu);
		if (!any && st == DAMON_PERF_ST_UNINIT)
			continue;
		seq_printf(m, "  CPU%02u: st=%-7s cb=%llu enq=%llu deq=%llu ovf=%llu match=%llu miss=%llu upd=%llu\n",
			   cpu, damon_perf_st_names[st],
			   v[DAMON_PERF_C_CALLBACK], v[DAMON_PERF_C_ENQUEUE],
			   v[DAMON_PERF_C_DEQUEUE], v[DAMON_PERF_C_OVERFLOW],
			   v[DAMON_PERF_C_MATCH],
			   v[DAMON_PERF_C_MISS_TGID] +
			   v[DAMON_PERF_C_MISS_REGION] +
			   v[DAMON_PERF_C_MISS_BOUND],
			   v[DAMON_PERF_C_UPDATE]);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(damon_perf_stats);

static int __init damon_perf_obs_debugfs_init(void)
{
	struct dentry *dir, *found;

	/*
	 * The deprecated DAMON debugfs interface may have made damon/
	 * already; it runs at an earlier initcall level.
	 */
	found = debugfs_lookup("damon", NULL);
	dir = found ?: debugfs_create_dir("damon", NULL);
	debugfs_create_file("perf_stats", 0400, dir, NULL,
			    &damon_perf_stats_fops);
	/* the lookup's reference, held while the file was made in @dir */
	dput(found);
	return 0;
}

late_initcall(damon_perf_obs_debugfs_init);

#include "tests/perf_observe-kunit.h"
