/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Observation hooks for DAMON's perf event access checks.
 *
 * The perf data path calls these at each of its stages.  Without
 * CONFIG_DAMON_PERF_OBSERVE they are empty static inlines.
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
 * @DAMON_PERF_ST_RUNNING:	The first sample arrived after enabling.
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
 * enum damon_perf_report_missed - Why a valid sample reached no ring.
 * @DAMON_PERF_MISSED_NO_CONSUMER: No running context takes access reports.
 * @NR_DAMON_PERF_MISSED:	   Number of reasons.
 */
enum damon_perf_report_missed {
	DAMON_PERF_MISSED_NO_CONSUMER,
	NR_DAMON_PERF_MISSED,
};

static inline void damon_perf_obs_state(unsigned int cpu,
		enum damon_perf_cpu_state state)
{
}

static inline void damon_perf_obs_sample(struct perf_event *event,
		struct perf_sample_data *data, u64 pmu_flags, u64 addr,
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

static inline void damon_perf_obs_report_missed(unsigned int cpu,
		enum damon_perf_report_missed why)
{
}

static inline void damon_perf_obs_match(void)
{
}

static inline void damon_perf_obs_miss(enum damon_perf_miss why)
{
}

static inline void damon_perf_obs_drain(unsigned int cpu, unsigned long nr,
		unsigned long left, u64 ns)
{
}

static inline void damon_perf_obs_update(unsigned long nr)
{
}

#endif	/* __MM_DAMON_PERF_OBSERVE_H */
