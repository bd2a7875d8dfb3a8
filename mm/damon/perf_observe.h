/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Observation of DAMON's perf event access checks: per-CPU pipeline counters,
 * per-CPU event states, the debugfs perf_stats file and the damon_perf_*
 * tracepoints.
 *
 * The perf data path calls these hooks at each of its stages.  Without
 * CONFIG_DAMON_PERF_OBSERVE they are empty static inlines, and the data path
 * works the same.
 */

#ifndef __MM_DAMON_PERF_OBSERVE_H
#define __MM_DAMON_PERF_OBSERVE_H

#include <linux/perf_event.h>

#include "perf.h"

/**
 * enum damon_perf_cpu_state - Where a CPU's perf event is in its lifecycle.
 * @DAMON_PERF_ST_UNINIT:	No event on the CPU.
 * @DAMON_PERF_ST_CREATED:	perf_event_create_kernel_counter() succeeded.
 * @DAMON_PERF_ST_BOUND:	The event sits, disabled, in the CPU's context.
 * @DAMON_PERF_ST_ENABLED:	perf_event_enable() was called.
 * @DAMON_PERF_ST_RUNNING:	A sample arrived after enabling.
 * @DAMON_PERF_ST_ERROR:	perf refused the event on the CPU.
 * @NR_DAMON_PERF_STS:		Number of states.
 */
enum damon_perf_cpu_state {
	DAMON_PERF_ST_UNINIT,
	DAMON_PERF_ST_CREATED,
	DAMON_PERF_ST_BOUND,
	DAMON_PERF_ST_ENABLED,
	DAMON_PERF_ST_RUNNING,
	DAMON_PERF_ST_ERROR,
	NR_DAMON_PERF_STS,
};

/**
 * enum damon_perf_report_missed - Why a valid access report reached no ring.
 * @DAMON_PERF_MISSED_NO_CONSUMER: No running context takes access reports.
 * @NR_DAMON_PERF_MISSED:	   Number of reasons.
 *
 * The values are part of the damon_perf_report_missed tracepoint's ABI.
 */
enum damon_perf_report_missed {
	DAMON_PERF_MISSED_NO_CONSUMER,
	NR_DAMON_PERF_MISSED,
};

/**
 * struct damon_perf_obs_drain - What one drain of one CPU's ring did.
 * @dequeue:	Records taken out of the ring.
 * @match:	Records that hit a region.
 * @miss:	Records that hit no region, by &enum damon_perf_miss.
 * @update:	Records that turned a region accessed for the interval.
 * @left:	Records in the ring after the drain.
 * @ns:		Time the drain took.
 */
struct damon_perf_obs_drain {
	unsigned long dequeue;
	unsigned long match;
	unsigned long miss[NR_DAMON_PERF_MISSES];
	unsigned long update;
	unsigned long left;
	u64 ns;
};

#ifdef CONFIG_DAMON_PERF_OBSERVE

/**
 * struct damon_perf_obs - Observation state of one context's perf events.
 * @state:	&enum damon_perf_cpu_state of the events on each CPU.
 */
struct damon_perf_obs {
	u32 *state;
};

int damon_perf_obs_init(struct damon_perf_obs *obs);
void damon_perf_obs_exit(struct damon_perf_obs *obs);
void damon_perf_obs_state(struct damon_perf_obs *obs, unsigned int cpu,
			  enum damon_perf_cpu_state state);
void damon_perf_obs_sample(struct damon_perf_obs *obs,
			   struct perf_event *event,
			   struct perf_sample_data *data, u64 pmu_flags,
			   u64 addr, enum damon_perf_sample_reason reason);
void damon_perf_obs_enqueue(unsigned int cpu, unsigned long occupancy);
void damon_perf_obs_overflow(unsigned int cpu, unsigned long occupancy);
void damon_perf_obs_report_missed(unsigned int cpu,
				  enum damon_perf_report_missed why,
				  const struct damon_access_report *report);
void damon_perf_obs_drain(unsigned int cpu,
			  const struct damon_perf_obs_drain *drain);

#else	/* CONFIG_DAMON_PERF_OBSERVE */

struct damon_perf_obs {
};

static inline int damon_perf_obs_init(struct damon_perf_obs *obs)
{
	return 0;
}

static inline void damon_perf_obs_exit(struct damon_perf_obs *obs)
{
}

static inline void damon_perf_obs_state(struct damon_perf_obs *obs,
					unsigned int cpu,
					enum damon_perf_cpu_state state)
{
}

static inline void damon_perf_obs_sample(struct damon_perf_obs *obs,
					 struct perf_event *event,
					 struct perf_sample_data *data,
					 u64 pmu_flags, u64 addr,
					 enum damon_perf_sample_reason reason)
{
}

static inline void damon_perf_obs_enqueue(unsigned int cpu,
					  unsigned long occupancy)
{
}

static inline void damon_perf_obs_overflow(unsigned int cpu,
					   unsigned long occupancy)
{
}

static inline void
damon_perf_obs_report_missed(unsigned int cpu,
			     enum damon_perf_report_missed why,
			     const struct damon_access_report *report)
{
}

static inline void
damon_perf_obs_drain(unsigned int cpu, const struct damon_perf_obs_drain *drain)
{
}

#endif	/* CONFIG_DAMON_PERF_OBSERVE */

#endif	/* __MM_DAMON_PERF_OBSERVE_H */
