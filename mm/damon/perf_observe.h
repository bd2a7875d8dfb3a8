/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-CPU pipeline of DAMON's perf event access checks.
 *
 * Producers (the perf overflow handler, and damon_report_access() callers)
 * push accesses into a context's per-CPU rings; the kdamond drains them once
 * per sampling interval.  With CONFIG_DAMON_PERF_OBSERVE, the same unit
 * counts what passes each stage per CPU, tracks the lifecycle of each CPU's
 * perf events, and shows both in the debugfs perf_stats file and the
 * damon_perf_* tracepoints.  Without it, the observation hooks below are
 * empty static inlines and the rings work the same.
 */

#ifndef __MM_DAMON_PERF_OBSERVE_H
#define __MM_DAMON_PERF_OBSERVE_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/types.h>

/**
 * enum damon_perf_sample_reason - What the overflow handler made of a sample.
 * @DAMON_PERF_SAMPLE_VALID:	Usable; pushed into the context's ring.
 * @DAMON_PERF_SAMPLE_NULL:	The handler got no sample data.
 * @DAMON_PERF_SAMPLE_ADDR_ZERO: The PMU did not fill in an address.
 * @DAMON_PERF_SAMPLE_KERNEL:	The address is a kernel address.
 * @DAMON_PERF_SAMPLE_INV_PHYS: The physical address is missing or invalid.
 * @NR_DAMON_PERF_SAMPLE_REASONS: Number of reasons.
 *
 * The values are part of the damon_perf_sample tracepoint's ABI.
 */
enum damon_perf_sample_reason {
	DAMON_PERF_SAMPLE_VALID,
	DAMON_PERF_SAMPLE_NULL,
	DAMON_PERF_SAMPLE_ADDR_ZERO,
	DAMON_PERF_SAMPLE_KERNEL,
	DAMON_PERF_SAMPLE_INV_PHYS,
	NR_DAMON_PERF_SAMPLE_REASONS,
};

/**
 * enum damon_perf_miss - Why a drained record updated no region.
 * @DAMON_PERF_MISS_TGID:	No target of the context has the record's tgid.
 * @DAMON_PERF_MISS_REGION:	Inside the target's regions, but in a gap.
 * @DAMON_PERF_MISS_BOUND:	Below the first or above the last region.
 * @NR_DAMON_PERF_MISSES:	Number of reasons.
 */
enum damon_perf_miss {
	DAMON_PERF_MISS_TGID,
	DAMON_PERF_MISS_REGION,
	DAMON_PERF_MISS_BOUND,
	NR_DAMON_PERF_MISSES,
};

/*
 * Capacity of the per-CPU rings of a context, in records: a power of two,
 * so that the free-running positions wrap without a division, from
 * DAMON_PERF_RING_SIZE to BIT(DAMON_PERF_RING_MAX_ORDER).  1024 records of
 * 16 bytes (12 on 32-bit) are one 16 KiB allocation per possible CPU; perf.c
 * picks the capacity from the sample rate and the sampling interval.
 */
#define DAMON_PERF_RING_ORDER	10
#define DAMON_PERF_RING_SIZE	BIT(DAMON_PERF_RING_ORDER)
#define DAMON_PERF_RING_MAX_ORDER	14

/**
 * struct damon_perf_record - An access, as the drain reads it.
 * @addr:	The accessed address, in the address space the context
 *		monitors: virtual for vaddr and fvaddr, physical for paddr.
 * @tgid:	Thread group id of the accessing task, for virtual addresses.
 */
struct damon_perf_record {
	u64 addr;
	pid_t tgid;
};

struct damon_perf_ring;
struct damon_perf_obs;
struct irq_work;

struct damon_perf_ring __percpu *
damon_perf_rings_alloc(const struct damon_perf_obs *obs, unsigned int order);
void damon_perf_rings_set_kick(struct damon_perf_ring __percpu *rings,
			       struct irq_work *kick);
void damon_perf_rings_free(struct damon_perf_ring __percpu *rings);
bool damon_perf_ring_push(struct damon_perf_ring __percpu *rings, u64 addr,
			  pid_t tgid);
unsigned int damon_perf_ring_consume(struct damon_perf_ring __percpu *rings,
				     unsigned int cpu,
				     struct damon_perf_record *buf,
				     unsigned int max);

/**
 * enum damon_perf_cpu_state - Where a CPU's perf events are in their lifecycle.
 * @DAMON_PERF_ST_UNINIT:	No event on the CPU.
 * @DAMON_PERF_ST_CREATED:	perf_event_create_kernel_counter() succeeded.
 * @DAMON_PERF_ST_BOUND:	The events sit, disabled, in the CPU's context.
 * @DAMON_PERF_ST_ENABLED:	perf_event_enable() was called.
 * @DAMON_PERF_ST_RUNNING:	A sample arrived after enabling.
 * @DAMON_PERF_ST_ERROR:	perf refused an event on the CPU.
 * @DAMON_PERF_ST_NOPMU:	No PMU of the events covers the CPU (a hybrid
 *				CPU's PMU that covers other CPUs): it is left
 *				out.
 * @NR_DAMON_PERF_STS:		Number of states.
 */
enum damon_perf_cpu_state {
	DAMON_PERF_ST_UNINIT,
	DAMON_PERF_ST_CREATED,
	DAMON_PERF_ST_BOUND,
	DAMON_PERF_ST_ENABLED,
	DAMON_PERF_ST_RUNNING,
	DAMON_PERF_ST_ERROR,
	DAMON_PERF_ST_NOPMU,
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
 * struct damon_perf_obs_aux - Tally of one drain of one AUX area.
 * @records:	Records decoded.
 * @malformed:	Malformed packets skipped.
 * @truncated:	Times the PMU driver found the area full
 *		(PERF_AUX_FLAG_TRUNCATED) since the last drain: 0 or 1.
 * @collision:	Times the PMU reported samples lost to a collision
 *		(PERF_AUX_FLAG_COLLISION) since the last drain: 0 or 1.
 * @used:	Bytes the drain read from the area.
 * @size:	Size of the area, in bytes.
 */
struct damon_perf_obs_aux {
	unsigned long records;
	unsigned long malformed;
	unsigned int truncated;
	unsigned int collision;
	unsigned long used;
	unsigned long size;
};

#ifdef CONFIG_DAMON_PERF_OBSERVE

#include <trace/events/damon.h>

/**
 * struct damon_perf_obs_cpu - Counters and event states of one CPU.
 * @callback:	Entries into the overflow handler, and AUX records decoded.
 * @reason:	Callbacks by &enum damon_perf_sample_reason.
 * @overflow:	Valid reports dropped because the ring was full.
 * @missed:	Valid reports that no context took.
 * @enqueue:	Valid reports stored in a ring, counted by the drains.
 * @ring_peak:	Most records a drain found in a ring of this CPU.
 * @dequeue:	Records drained from the rings of this CPU.
 * @match:	Drained records that hit a region.
 * @miss:	Drained records that hit no region, by &enum damon_perf_miss.
 * @update:	Drained records that were the first of their region in the
 *		interval.
 * @aux_records: Records decoded from the AUX areas of this CPU's events.
 * @aux_malformed: Malformed packets skipped in those areas.
 * @aux_truncated: Times one of those areas was found full.
 * @aux_collision: Times the PMU reported samples lost to collisions.
 * @nr_in_state: Live (context, CPU) event sets in each state.
 * @error:	perf refused an event here since the last successful create.
 *
 * The first four are written only by the CPU itself, with this_cpu
 * operations; the others, the AUX ones included, by any CPU, atomically.  A
 * record stored in a ring costs its producer no counter: the drain counts
 * it as enqueued.
 */
struct damon_perf_obs_cpu {
	u64 callback;
	u64 reason[NR_DAMON_PERF_SAMPLE_REASONS];
	u64 overflow;
	u64 missed;
	atomic64_t enqueue;
	atomic64_t ring_peak;
	atomic64_t dequeue;
	atomic64_t match;
	atomic64_t miss[NR_DAMON_PERF_MISSES];
	atomic64_t update;
	atomic64_t aux_records;
	atomic64_t aux_malformed;
	atomic64_t aux_truncated;
	atomic64_t aux_collision;
	atomic_t nr_in_state[NR_DAMON_PERF_STS];
	bool error;
};

struct damon_perf_obs_stats;

/*
 * Per CPU, why its samples must take the overflow handler's general path:
 * the (context, CPU) event sets there that are ENABLED, waiting for the
 * first sample that moves them to RUNNING, and one more on every CPU while
 * the damon_perf_sample tracepoint has a probe.  See
 * damon_perf_obs_valid_quick().
 */
DECLARE_PER_CPU(atomic_t, damon_perf_obs_need_full);

/**
 * struct damon_perf_obs - Observation state of one context's perf events.
 * @cpus:	The per-CPU counters of @stats, for the sampling path.
 * @stats:	The counters and event states the context counts in.
 * @state:	&enum damon_perf_cpu_state of the events on each CPU.
 */
struct damon_perf_obs {
	struct damon_perf_obs_cpu __percpu *cpus;
	struct damon_perf_obs_stats *stats;
	u32 *state;
};

/**
 * struct damon_perf_obs_drain - Tally of one drain of one CPU's ring.
 * @dequeue:	Records taken out of the ring.
 * @match:	Records that hit a region.
 * @miss:	Records that hit no region, by &enum damon_perf_miss.
 * @update:	Records that were the first of their region in the interval.
 * @occupancy:	Records the ring held when the drain began.
 * @start:	local_clock() when the drain began.
 *
 * The drain fills this in through the damon_perf_obs_drain_*() helpers,
 * which are empty, and this structure too, without
 * CONFIG_DAMON_PERF_OBSERVE.
 */
struct damon_perf_obs_drain {
	unsigned long dequeue;
	unsigned long match;
	unsigned long miss[NR_DAMON_PERF_MISSES];
	unsigned long update;
	unsigned long occupancy;
	u64 start;
};

int damon_perf_obs_init(struct damon_perf_obs *obs);
void damon_perf_obs_exit(struct damon_perf_obs *obs);
struct kunit;
int damon_perf_obs_kunit_isolate(struct kunit *test);
void damon_perf_obs_state(struct damon_perf_obs *obs, unsigned int cpu,
			  enum damon_perf_cpu_state state);
void damon_perf_obs_first_sample(struct damon_perf_obs *obs);
void damon_perf_obs_trace_sample(struct perf_event *event,
				 struct perf_sample_data *data, u64 pmu_flags,
				 u64 addr, enum damon_perf_sample_reason reason);
void damon_perf_obs_report_missed(enum damon_perf_report_missed why,
				  unsigned long addr, pid_t tgid);
void damon_perf_obs_drain_begin(struct damon_perf_obs_drain *d,
				struct damon_perf_ring __percpu *rings,
				unsigned int cpu);
void damon_perf_obs_aux_record(struct damon_perf_obs *obs,
			       struct perf_event *event, unsigned int cpu,
			       u64 addr, u64 data_src, u64 found,
			       enum damon_perf_sample_reason reason);
void damon_perf_obs_aux_end(struct damon_perf_obs *obs, unsigned int cpu,
			    const struct damon_perf_obs_aux *aux);
void damon_perf_obs_drain_end(struct damon_perf_ring __percpu *rings,
			      unsigned int cpu,
			      const struct damon_perf_obs_drain *drain);
void damon_perf_obs_view(struct damon_perf_obs *obs, unsigned long bytes);

/*
 * The sampling side's hooks are inline: they run for every sample, in the
 * overflow handler, NMI included, with preemption disabled.
 */

/**
 * damon_perf_obs_callback() - Count a callback of a context's events.
 * @obs:	Observation state of the context.
 *
 * Called where the overflow handler's general path is entered, and for
 * each record the AUX drain decodes, before anything is made of the
 * sample: the callbacks are counted apart from their classification by
 * damon_perf_obs_sample() and damon_perf_obs_aux_record(), so that a sample
 * lost between the two shows as a callback no class took.  The handler's
 * common case, whose few lines have nothing to lose a sample in, counts
 * both at once with damon_perf_obs_valid_quick().
 */
static __always_inline void damon_perf_obs_callback(struct damon_perf_obs *obs)
{
	this_cpu_inc(obs->cpus->callback);
}

/**
 * damon_perf_obs_sample() - Count and trace a classified sample callback.
 * @obs:	Observation state of the context whose event sampled.
 * @event:	The event.
 * @data:	The sample data, or NULL.
 * @pmu_flags:	What the PMU filled in (&perf_sample_data->sample_flags).
 * @addr:	The sample's virtual address, or zero.
 * @reason:	What the overflow handler made of the sample.
 *
 * Counts the sample under @reason and, while some event set on this CPU
 * is still ENABLED, moves the context's to RUNNING if they are ENABLED.
 * While the damon_perf_sample tracepoint is off, that is all: its
 * arguments are worked out only once its static key says it is on.
 */
static __always_inline void
damon_perf_obs_sample(struct damon_perf_obs *obs, struct perf_event *event,
		      struct perf_sample_data *data, u64 pmu_flags, u64 addr,
		      enum damon_perf_sample_reason reason)
{
	this_cpu_inc(obs->cpus->reason[reason]);
	if (unlikely(this_cpu_read(damon_perf_obs_need_full.counter)))
		damon_perf_obs_first_sample(obs);
	if (trace_damon_perf_sample_enabled())
		damon_perf_obs_trace_sample(event, data, pmu_flags, addr,
					    reason);
}

/**
 * damon_perf_obs_valid_quick() - Count a valid sample that needs no more.
 * @obs:	Observation state of the context whose event sampled.
 *
 * The overflow handler's common case: counts the callback of a valid
 * sample, and the sample as valid, if counting is all the observability
 * has to do with it, that is while no event set on this CPU, of any
 * context, waits for its first sample and the damon_perf_sample tracepoint
 * is off.  Otherwise it counts nothing, and the handler takes the sample
 * through damon_perf_obs_callback() and damon_perf_obs_sample().  The test
 * is one per-CPU word, which counts the tracepoint too: a CPU whose events
 * never sample (an idle one) keeps no other CPU off this path, and the
 * tracepoint's static key is not read here.
 *
 * Return: true if the sample was counted.
 */
static __always_inline bool
damon_perf_obs_valid_quick(struct damon_perf_obs *obs)
{
	/* loaded once: either increment could alias it, to the compiler */
	struct damon_perf_obs_cpu __percpu *cpus = obs->cpus;

	/*
	 * A plain read of a word that other CPUs change atomically: a stale
	 * zero only leaves one more sample to the next one to find ENABLED,
	 * or untraced while the tracepoint is being turned on or off.
	 */
	if (unlikely(this_cpu_read(damon_perf_obs_need_full.counter)))
		return false;
	this_cpu_inc(cpus->callback);
	this_cpu_inc(cpus->reason[DAMON_PERF_SAMPLE_VALID]);
	return true;
}

static inline void damon_perf_obs_drain_dequeue(struct damon_perf_obs_drain *d,
						unsigned int nr)
{
	d->dequeue += nr;
}

static inline void damon_perf_obs_drain_match(struct damon_perf_obs_drain *d,
					      bool updated)
{
	d->match++;
	if (updated)
		d->update++;
}

static inline void damon_perf_obs_drain_miss(struct damon_perf_obs_drain *d,
					     enum damon_perf_miss miss)
{
	d->miss[miss]++;
}

#else	/* CONFIG_DAMON_PERF_OBSERVE */

struct damon_perf_obs {
};

struct damon_perf_obs_drain {
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

static inline void damon_perf_obs_callback(struct damon_perf_obs *obs)
{
}

static inline bool damon_perf_obs_valid_quick(struct damon_perf_obs *obs)
{
	return true;
}

static inline void damon_perf_obs_sample(struct damon_perf_obs *obs,
					 struct perf_event *event,
					 struct perf_sample_data *data,
					 u64 pmu_flags, u64 addr,
					 enum damon_perf_sample_reason reason)
{
}

static inline void
damon_perf_obs_report_missed(enum damon_perf_report_missed why,
			     unsigned long addr, pid_t tgid)
{
}

static inline void
damon_perf_obs_aux_record(struct damon_perf_obs *obs, struct perf_event *event,
			  unsigned int cpu, u64 addr, u64 data_src, u64 found,
			  enum damon_perf_sample_reason reason)
{
}

static inline void damon_perf_obs_aux_end(struct damon_perf_obs *obs,
					  unsigned int cpu,
					  const struct damon_perf_obs_aux *aux)
{
}

static inline void
damon_perf_obs_drain_end(struct damon_perf_ring __percpu *rings,
			 unsigned int cpu,
			 const struct damon_perf_obs_drain *drain)
{
}

static inline void
damon_perf_obs_drain_begin(struct damon_perf_obs_drain *d,
			   struct damon_perf_ring __percpu *rings,
			   unsigned int cpu)
{
}

static inline void damon_perf_obs_drain_dequeue(struct damon_perf_obs_drain *d,
						unsigned int nr)
{
}

static inline void damon_perf_obs_drain_match(struct damon_perf_obs_drain *d,
					      bool updated)
{
}

static inline void damon_perf_obs_drain_miss(struct damon_perf_obs_drain *d,
					     enum damon_perf_miss miss)
{
}

static inline void damon_perf_obs_view(struct damon_perf_obs *obs,
				       unsigned long bytes)
{
}

#endif	/* CONFIG_DAMON_PERF_OBSERVE */

#endif	/* __MM_DAMON_PERF_OBSERVE_H */
