// SPDX-License-Identifier: GPL-2.0
/*
 * Observation of DAMON's perf event access checks.
 *
 * Every stage of the pipeline from the PMU to DAMON's regions counts what
 * passes it in per-CPU counters, and the perf events of each CPU go through
 * a small state machine.  The damon_perf_* tracepoints show single samples,
 * ring overflows, missed reports and drains.
 *
 * Counters are attributed to the CPU that took the sample: the sampling side
 * counts on its own CPU, in any context, NMI included, with this_cpu
 * operations; the drain side runs in kdamonds on any CPU and adds to the
 * sampling CPU's counters atomically.
 */

#define pr_fmt(fmt) "damon-perf: " fmt

#include <linux/atomic.h>
#include <linux/percpu.h>
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
 * Move one context's events on @cpu to @to.  Safe in any context; the
 * cmpxchg settles a sample's ENABLED -> RUNNING against a release.  Returns
 * false, changing nothing and saying so in the log, for an illegal change.
 */
static bool damon_perf_obs_change(struct damon_perf_obs *obs, unsigned int cpu,
				  enum damon_perf_cpu_state to)
{
	struct damon_perf_obs_cpu *c = per_cpu_ptr(&damon_perf_obs_cpus, cpu);
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

	if (damon_perf_st_live(from))
		atomic_dec(&c->nr_in_state[from]);
	if (damon_perf_st_live(to))
		atomic_inc(&c->nr_in_state[to]);
	if (to == DAMON_PERF_ST_ERROR)
		WRITE_ONCE(c->error, true);
	else if (to == DAMON_PERF_ST_CREATED)
		WRITE_ONCE(c->error, false);
	return true;
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
	if (READ_ONCE(obs->state[cpu]) == DAMON_PERF_ST_ENABLED)
		damon_perf_obs_change(obs, cpu, DAMON_PERF_ST_RUNNING);

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
