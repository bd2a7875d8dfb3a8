// SPDX-License-Identifier: GPL-2.0
/*
 * The per-CPU pipeline of DAMON's perf event access checks.
 *
 * Each context that samples has one single-producer/single-consumer ring per
 * possible CPU.  Producers on a CPU push into that CPU's ring, in any
 * context, NMI included; the context's kdamond drains all of them once per
 * sampling interval.
 *
 * With CONFIG_DAMON_PERF_OBSERVE, every stage of the pipeline from the PMU
 * to DAMON's regions also counts what passes it in per-CPU counters, and the
 * perf events of each CPU go through a small state machine.
 * /sys/kernel/debug/damon/perf_stats shows both; the damon_perf_*
 * tracepoints show single samples, ring overflows, missed reports and
 * drains.
 *
 * Counters are attributed to the CPU that took the sample: the sampling side
 * counts on its own CPU, in any context, NMI included, with this_cpu
 * operations (which an NMI cannot tear on 64-bit architectures; on 32-bit
 * ones a nested NMI may lose an increment); the drain side runs in kdamonds
 * on any CPU and adds to the sampling CPU's counters atomically.
 *
 * What the drain can work out, it counts, so that the sampling side does no
 * more per sample, inline, than increment two counters and test one per-CPU
 * word, which says whether an event state is to change or the
 * damon_perf_sample tracepoint is on: the records stored in a ring
 * (enqueue) are counted from the ring's head at each drain, and the ring's
 * high-water mark (ring_peak) is what a drain finds in it, as only drains
 * take records out.  Readers get a best-effort snapshot without taking any
 * lock.
 */

#define pr_fmt(fmt) "damon-perf: " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/irq_work.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/topology.h>

#include <asm/local.h>

#include <trace/events/damon.h>

#include "perf_observe.h"

/*
 * struct damon_perf_ring - A per-CPU single-producer/single-consumer ring.
 * @reserve:	Next position a producer may reserve.
 * @nest:	Producers inside the ring on its CPU, nested ones included.
 * @head:	Every position below this one is written.
 * @mask:	Capacity of the ring, a power of two, minus one.
 * @slots:	@mask + 1 records.
 * @kick:	Work a producer queues when it fills the ring to @kick_at
 *		records, to have the consumer drain before the ring is full;
 *		none if @kick_at is zero.
 * @kick_at:	Records at which a producer queues @kick, half the ring, or
 *		zero.
 * @stats:	The counters the ring's producers count in, with
 *		CONFIG_DAMON_PERF_OBSERVE.
 * @tail:	Every position below this one is consumed.
 * @counted:	Every position below this one is counted as enqueued, with
 *		CONFIG_DAMON_PERF_OBSERVE.
 *
 * The producer side runs only on the ring's own CPU, but a producer can be
 * interrupted by another one on that CPU (an NMI-context PMU sample landing
 * on a page fault report, say).  Each producer reserves its slot with a local
 * cmpxchg on @reserve, and only the outermost one, the one that entered with
 * @nest at zero, publishes @head, so the consumer never sees a slot reserved
 * by an interrupted producer before that producer has written it.  It
 * publishes before it gives up its nesting level, so that @head never goes
 * back, and publishes again if a producer reserved a slot after that.
 *
 * A ring holds the records of a few sampling intervals at the rate its
 * events sample at most (see damon_perf_ring_order()), and is drained once
 * an interval; the producer that brings it to half full queues @kick, whose
 * consumer then drains early (damon_perf_sleep()).  The occupancy rises one
 * record a reservation, so a ring filling up reaches @kick_at exactly once
 * until the consumer drains it below again.
 *
 * @head is written by the producer side and read by the consumer; @tail is
 * written by the consumer and read by the producers, and has a cache line
 * of its own, which it shares only with @counted, the consumer's.  The
 * positions are free-running; slots are indexed by position & @mask.  @mask
 * and @slots are set before any producer or consumer can reach the ring.
 */
struct damon_perf_ring {
	local_t reserve;
	local_t nest;
	unsigned long head;
	unsigned long mask;
	struct damon_perf_record *slots;
	struct irq_work *kick;
	unsigned long kick_at;
#ifdef CONFIG_DAMON_PERF_OBSERVE
	struct damon_perf_obs_stats *stats;
#endif
	unsigned long tail ____cacheline_aligned_in_smp;
#ifdef CONFIG_DAMON_PERF_OBSERVE
	unsigned long counted;
#endif
};

#ifdef CONFIG_DAMON_PERF_OBSERVE
static void damon_perf_obs_overflow(struct damon_perf_ring *ring,
				    unsigned long occupancy);
static void damon_perf_obs_capacity(const struct damon_perf_obs *obs,
				    unsigned long capacity);

static void damon_perf_ring_set_stats(struct damon_perf_ring *ring,
				      const struct damon_perf_obs *obs)
{
	ring->stats = obs->stats;
}
#else
static inline void damon_perf_obs_overflow(struct damon_perf_ring *ring,
					   unsigned long occupancy)
{
}

static inline void damon_perf_obs_capacity(const struct damon_perf_obs *obs,
					   unsigned long capacity)
{
}

static inline void damon_perf_ring_set_stats(struct damon_perf_ring *ring,
					     const struct damon_perf_obs *obs)
{
}
#endif

/**
 * damon_perf_rings_alloc() - Allocate one ring per possible CPU.
 * @obs:	Observation state of the context the rings are for, set up
 *		with damon_perf_obs_init(): their producers count in its
 *		counters.
 * @order:	Capacity of each ring, as a power of two, from
 *		DAMON_PERF_RING_ORDER to DAMON_PERF_RING_MAX_ORDER.
 *
 * Each CPU's slots are allocated on its own node.
 *
 * Return: the rings, or NULL if memory is short.
 */
struct damon_perf_ring __percpu *
damon_perf_rings_alloc(const struct damon_perf_obs *obs, unsigned int order)
{
	struct damon_perf_ring __percpu *rings;
	unsigned int cpu;

	if (WARN_ON_ONCE(order < DAMON_PERF_RING_ORDER ||
			 order > DAMON_PERF_RING_MAX_ORDER))
		return NULL;
	rings = alloc_percpu(struct damon_perf_ring);
	if (!rings)
		return NULL;
	for_each_possible_cpu(cpu) {
		struct damon_perf_ring *ring = per_cpu_ptr(rings, cpu);

		damon_perf_ring_set_stats(ring, obs);
		ring->mask = BIT(order) - 1;
		ring->slots = kvcalloc_node(BIT(order), sizeof(*ring->slots),
					    GFP_KERNEL, cpu_to_node(cpu));
		if (!ring->slots) {
			damon_perf_rings_free(rings);
			return NULL;
		}
	}
	damon_perf_obs_capacity(obs, BIT(order));
	return rings;
}

/**
 * damon_perf_rings_set_kick() - Have the producers ask for an early drain.
 * @rings:	Rings that no producer can reach yet.
 * @kick:	The work a producer queues, from any context, when it fills
 *		its ring to half its capacity.
 *
 * The consumer that @kick wakes is to drain every ring before the one that
 * queued it is full: a consumer that drains late, or less often than the
 * rings' capacity allows for, then loses no record.
 */
void damon_perf_rings_set_kick(struct damon_perf_ring __percpu *rings,
			       struct irq_work *kick)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct damon_perf_ring *ring = per_cpu_ptr(rings, cpu);

		ring->kick = kick;
		ring->kick_at = (ring->mask + 1) / 2;
	}
}

/**
 * damon_perf_rings_free() - Free rings that no producer can reach any more.
 * @rings:	The rings, or NULL.
 */
void damon_perf_rings_free(struct damon_perf_ring __percpu *rings)
{
	unsigned int cpu;

	if (!rings)
		return;
	for_each_possible_cpu(cpu)
		kvfree(per_cpu_ptr(rings, cpu)->slots);
	free_percpu(rings);
}

/*
 * Producer side.  Runs on the ring's own CPU with preemption disabled, in
 * any context, NMI included.  A producer enters with
 * damon_perf_ring_enter(), reserves a slot with damon_perf_ring_reserve(),
 * fills it, and leaves with damon_perf_ring_leave(), which publishes.
 */
static void damon_perf_ring_enter(struct damon_perf_ring *ring)
{
	local_inc(&ring->nest);
	/* A producer that interrupts us from here on sees nest > 0. */
	barrier();
}

/*
 * Reserve a slot.  Returns false if the ring is full.  @occupancy is set to
 * the number of records in the ring, counting the reserved slot.
 */
static bool damon_perf_ring_reserve(struct damon_perf_ring *ring,
				    unsigned long *pos,
				    unsigned long *occupancy)
{
	unsigned long p, tail;

	do {
		p = local_read(&ring->reserve);
		/*
		 * Pairs with the smp_store_release() of ->tail in
		 * damon_perf_ring_consume(): the consumer is done reading a
		 * slot before we see it free and overwrite it.
		 */
		tail = smp_load_acquire(&ring->tail);
		if (p - tail > ring->mask) {
			*occupancy = p - tail;
			return false;
		}
	} while ((unsigned long)local_cmpxchg(&ring->reserve, p, p + 1) != p);
	*pos = p;
	*occupancy = p + 1 - tail;
	return true;
}

/*
 * One publishing round of the outermost producer: publish every reserved
 * slot, then give up the nesting level.  Returns false if a producer
 * reserved a slot after that, which the caller must publish too.
 */
static bool damon_perf_ring_publish(struct damon_perf_ring *ring)
{
	unsigned long pos;

	/*
	 * We still hold our nesting level, so a producer that interrupts us
	 * from here until the decrement below does not publish: ->head never
	 * goes from its position back to our older one.
	 */
	pos = local_read(&ring->reserve);
	/*
	 * Pairs with the smp_load_acquire() of ->head in
	 * damon_perf_ring_consume(): the slots below @pos are written
	 * before the consumer sees @pos.
	 */
	smp_store_release(&ring->head, pos);
	/* Publish before giving up the nesting level... */
	barrier();
	local_dec(&ring->nest);
	/* ...and give it up before looking for later reservations. */
	barrier();
	return pos == local_read(&ring->reserve);
}

static void damon_perf_ring_leave(struct damon_perf_ring *ring)
{
	/* A nested producer leaves publishing to the one it interrupted. */
	if (local_read(&ring->nest) > 1) {
		local_dec(&ring->nest);
		return;
	}
	while (!damon_perf_ring_publish(ring)) {
		local_inc(&ring->nest);
		barrier();
	}
}

/*
 * Store @rec in @ring; returns false, storing nothing, if it is full.
 * @occupancy is set to the number of records in the ring.  Inlined into
 * damon_perf_ring_push(), the sampling path, whatever the KUnit tests that
 * call it too make the compiler think.
 */
static __always_inline bool
__damon_perf_ring_push(struct damon_perf_ring *ring,
		       const struct damon_perf_record *rec,
		       unsigned long *occupancy)
{
	unsigned long pos;
	bool stored;

	damon_perf_ring_enter(ring);
	stored = damon_perf_ring_reserve(ring, &pos, occupancy);
	if (stored)
		ring->slots[pos & ring->mask] = *rec;
	damon_perf_ring_leave(ring);
	return stored;
}

/*
 * A push that found @ring full, of @occupancy: count and trace the drop, out
 * of line, so that the tracepoint does not have every push set up a stack
 * frame.  Returns false, for its caller to return.
 */
static noinline bool damon_perf_ring_full(struct damon_perf_ring *ring,
					  unsigned long occupancy)
{
	damon_perf_obs_overflow(ring, occupancy);
	return false;
}

/**
 * damon_perf_ring_push() - Store an access in the current CPU's ring.
 * @rings:	The rings of the context the access is for.
 * @addr:	The accessed address, in the context's address space.
 * @tgid:	Thread group id of the accessing task.
 *
 * Safe in any context, NMI included: it takes no lock, allocates nothing and
 * never blocks.  The push that fills the ring to half queues the ring's
 * kick, if it has one (damon_perf_rings_set_kick()); irq_work_queue() is
 * NMI-safe.  The caller must keep preemption disabled, as overflow
 * handlers and damon_report_access() do.
 *
 * Return: true if stored, false if the ring was full and the access dropped.
 */
bool damon_perf_ring_push(struct damon_perf_ring __percpu *rings, u64 addr,
			  pid_t tgid)
{
	struct damon_perf_ring *ring = this_cpu_ptr(rings);
	struct damon_perf_record rec = { .addr = addr, .tgid = tgid };
	unsigned long occupancy;

	if (likely(__damon_perf_ring_push(ring, &rec, &occupancy))) {
		/* half full: the consumer is late, or drains too seldom */
		if (unlikely(occupancy == ring->kick_at))
			irq_work_queue(ring->kick);
		return true;
	}
	return damon_perf_ring_full(ring, occupancy);
}

/*
 * Copy out up to @max published records into @buf and free their slots.
 * There must be one consumer per ring at a time.  Returns the number copied.
 */
static unsigned int __damon_perf_ring_consume(struct damon_perf_ring *ring,
					      struct damon_perf_record *buf,
					      unsigned int max)
{
	/* Pairs with the smp_store_release() of ->head in the producer. */
	unsigned long head = smp_load_acquire(&ring->head);
	unsigned long tail = ring->tail;
	unsigned int n = 0;

	/* ->head only moves forward, and never by more than the ring */
	if (WARN_ON_ONCE(head - tail > ring->mask + 1))
		return 0;
	while (tail != head && n < max)
		buf[n++] = ring->slots[tail++ & ring->mask];
	/* Pairs with the smp_load_acquire() of ->tail in the producer. */
	smp_store_release(&ring->tail, tail);
	return n;
}

/* Records published but not yet consumed.  For the consumer. */
static unsigned long __maybe_unused
damon_perf_ring_len(struct damon_perf_ring *ring)
{
	/* Pairs with the smp_store_release() of ->head in the producer. */
	return smp_load_acquire(&ring->head) - ring->tail;
}

/**
 * damon_perf_ring_consume() - Take records out of one CPU's ring.
 * @rings:	The rings of a context.
 * @cpu:	The CPU whose ring to take from.
 * @buf:	Where to copy the records to.
 * @max:	Room in @buf, in records.
 *
 * There must be one consumer of a context's rings at a time: its kdamond.
 *
 * Return: the number of records copied to @buf; zero if the ring is empty.
 */
unsigned int damon_perf_ring_consume(struct damon_perf_ring __percpu *rings,
				     unsigned int cpu,
				     struct damon_perf_record *buf,
				     unsigned int max)
{
	return __damon_perf_ring_consume(per_cpu_ptr(rings, cpu), buf, max);
}

#ifdef CONFIG_DAMON_PERF_OBSERVE

/*
 * struct damon_perf_obs_stats - A set of counters and event states.
 * @cpus:	Counters and event states of each CPU.
 * @illegal:	State changes that were refused as illegal.
 * @capacity:	Capacity of the largest rings allocated to count here, in
 *		records.
 * @ring_bytes:	Memory of the largest rings of a context counting here, in
 *		bytes: the slots and the ring of each possible CPU.
 * @view_bytes:	Memory of the largest view of the regions a context counting
 *		here has laid out, in bytes (see damon_perf_obs_view()).
 *
 * Every context counts in the live set, which perf_stats shows; the KUnit
 * tests count in sets of their own (damon_perf_obs_kunit_isolate()), so
 * that a boot that ran them leaves perf_stats as if they had not.
 */
struct damon_perf_obs_stats {
	struct damon_perf_obs_cpu __percpu *cpus;
	atomic64_t illegal;
	atomic_long_t capacity;
	atomic_long_t ring_bytes;
	atomic_long_t view_bytes;
};

static DEFINE_PER_CPU(struct damon_perf_obs_cpu, damon_perf_obs_cpus);
DEFINE_PER_CPU(atomic_t, damon_perf_obs_need_full);

static struct damon_perf_obs_stats damon_perf_obs_live = {
	.cpus = &damon_perf_obs_cpus,
	.illegal = ATOMIC64_INIT(0),
	.capacity = ATOMIC_LONG_INIT(0),
	.ring_bytes = ATOMIC_LONG_INIT(0),
	.view_bytes = ATOMIC_LONG_INIT(0),
};

static const char * const damon_perf_st_names[NR_DAMON_PERF_STS] = {
	[DAMON_PERF_ST_UNINIT] = "UNINIT",
	[DAMON_PERF_ST_CREATED] = "CREATED",
	[DAMON_PERF_ST_BOUND] = "BOUND",
	[DAMON_PERF_ST_ENABLED] = "ENABLED",
	[DAMON_PERF_ST_RUNNING] = "RUNNING",
	[DAMON_PERF_ST_ERROR] = "ERROR",
	[DAMON_PERF_ST_NOPMU] = "NOPMU",
};

/* The states each state may go to. */
static const unsigned int damon_perf_st_next[NR_DAMON_PERF_STS] = {
	[DAMON_PERF_ST_UNINIT] = BIT(DAMON_PERF_ST_CREATED) |
		BIT(DAMON_PERF_ST_ERROR) | BIT(DAMON_PERF_ST_NOPMU),
	[DAMON_PERF_ST_CREATED] = BIT(DAMON_PERF_ST_BOUND) |
		BIT(DAMON_PERF_ST_ERROR) | BIT(DAMON_PERF_ST_UNINIT),
	[DAMON_PERF_ST_BOUND] = BIT(DAMON_PERF_ST_ENABLED) |
		BIT(DAMON_PERF_ST_UNINIT),
	[DAMON_PERF_ST_ENABLED] = BIT(DAMON_PERF_ST_RUNNING) |
		BIT(DAMON_PERF_ST_BOUND) | BIT(DAMON_PERF_ST_UNINIT),
	[DAMON_PERF_ST_RUNNING] = BIT(DAMON_PERF_ST_BOUND) |
		BIT(DAMON_PERF_ST_UNINIT),
	[DAMON_PERF_ST_ERROR] = BIT(DAMON_PERF_ST_CREATED) |
		BIT(DAMON_PERF_ST_UNINIT),
	[DAMON_PERF_ST_NOPMU] = BIT(DAMON_PERF_ST_UNINIT),
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

/* Whether event sets in a state are counted per CPU. */
static bool damon_perf_st_counted(enum damon_perf_cpu_state state)
{
	return damon_perf_st_live(state) || state == DAMON_PERF_ST_NOPMU;
}

/*
 * What perf_stats shows for @cpu: ERROR if perf refused an event there
 * since the last successful create, else the most advanced state of a live
 * event set, else NOPMU if a context's PMUs do not cover it, else UNINIT.
 */
static enum damon_perf_cpu_state
damon_perf_cpu_state(struct damon_perf_obs_stats *stats, unsigned int cpu)
{
	struct damon_perf_obs_cpu *c = per_cpu_ptr(stats->cpus, cpu);
	int st;

	if (READ_ONCE(c->error))
		return DAMON_PERF_ST_ERROR;
	for (st = DAMON_PERF_ST_RUNNING; st >= DAMON_PERF_ST_CREATED; st--) {
		if (atomic_read(&c->nr_in_state[st]) > 0)
			return st;
	}
	if (atomic_read(&c->nr_in_state[DAMON_PERF_ST_NOPMU]) > 0)
		return DAMON_PERF_ST_NOPMU;
	return DAMON_PERF_ST_UNINIT;
}

/* Account for one context's events on @cpu having gone from @from to @to. */
static void damon_perf_obs_moved(struct damon_perf_obs *obs, unsigned int cpu,
				 enum damon_perf_cpu_state from,
				 enum damon_perf_cpu_state to)
{
	struct damon_perf_obs_cpu *c = per_cpu_ptr(obs->stats->cpus, cpu);

	if (damon_perf_st_counted(from))
		atomic_dec(&c->nr_in_state[from]);
	if (damon_perf_st_counted(to))
		atomic_inc(&c->nr_in_state[to]);
	/*
	 * A sample on a CPU that counts none ENABLED skips the state; the
	 * count may go below zero for a moment, when a sample's ENABLED ->
	 * RUNNING comes between a step's cmpxchg and its increment, and a
	 * negative count sends samples the general way too.
	 */
	if (from == DAMON_PERF_ST_ENABLED)
		atomic_dec(per_cpu_ptr(&damon_perf_obs_need_full, cpu));
	if (to == DAMON_PERF_ST_ENABLED)
		atomic_inc(per_cpu_ptr(&damon_perf_obs_need_full, cpu));
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
			atomic64_inc(&obs->stats->illegal);
			pr_warn_ratelimited("cpu %u: illegal event state change %s -> %s refused\n",
					    cpu, damon_perf_st_names[from],
					    to < NR_DAMON_PERF_STS ?
					    damon_perf_st_names[to] : "?");
			return false;
		}
	} while (cmpxchg(&obs->state[cpu], from, to) != from);

	damon_perf_obs_moved(obs, cpu, from, to);
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
		damon_perf_obs_moved(obs, cpu, DAMON_PERF_ST_ENABLED,
				     DAMON_PERF_ST_RUNNING);
}

#if IS_ENABLED(CONFIG_DAMON_PERF_EVENTS_KUNIT_TEST) || \
	IS_ENABLED(CONFIG_DAMON_PERF_OBSERVE_KUNIT_TEST)
#include <kunit/resource.h>
#include <kunit/test-bug.h>

#define DAMON_PERF_OBS_KUNIT_RES	"damon_perf_obs_stats"

static void damon_perf_obs_kunit_free(struct kunit_resource *res)
{
	struct damon_perf_obs_stats *stats = res->data;

	free_percpu(stats->cpus);
	kfree(stats);
}

/**
 * damon_perf_obs_kunit_isolate() - Give a KUnit test counters of its own.
 * @test:	The test, as a suite's init function gets it.
 *
 * Contexts whose observation state @test sets up from its own thread count
 * in a set of counters and event states that lives as long as @test, not in
 * the live set that perf_stats shows.
 *
 * Return: 0 on success, -ENOMEM otherwise.
 */
int damon_perf_obs_kunit_isolate(struct kunit *test)
{
	struct damon_perf_obs_stats *stats;
	struct kunit_resource *res;

	res = kunit_kzalloc(test, sizeof(*res), GFP_KERNEL);
	stats = kzalloc(sizeof(*stats), GFP_KERNEL);
	if (!res || !stats)
		goto fail;
	stats->cpus = alloc_percpu(struct damon_perf_obs_cpu);
	if (!stats->cpus)
		goto fail;
	if (!kunit_add_named_resource(test, NULL, damon_perf_obs_kunit_free,
				      res, DAMON_PERF_OBS_KUNIT_RES, stats))
		return 0;
	free_percpu(stats->cpus);
fail:
	kfree(stats);
	return -ENOMEM;
}

/* The set of the KUnit test running in this thread, if it has one. */
static struct damon_perf_obs_stats *damon_perf_obs_kunit_stats(void)
{
	struct kunit *test = kunit_get_current_test();
	struct damon_perf_obs_stats *stats;
	struct kunit_resource *res;

	if (!test)
		return NULL;
	res = kunit_find_named_resource(test, DAMON_PERF_OBS_KUNIT_RES);
	if (!res)
		return NULL;
	stats = res->data;
	kunit_put_resource(res);
	return stats;
}
#else
static inline struct damon_perf_obs_stats *damon_perf_obs_kunit_stats(void)
{
	return NULL;
}
#endif

/**
 * damon_perf_obs_init() - Set up the observation state of a context.
 * @obs:	The observation state.
 *
 * Return: 0 on success, -ENOMEM otherwise.
 */
int damon_perf_obs_init(struct damon_perf_obs *obs)
{
	obs->stats = damon_perf_obs_kunit_stats() ?: &damon_perf_obs_live;
	obs->cpus = obs->stats->cpus;
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
 * Steps are create (CREATED), bind and disable (BOUND), enable (ENABLED), release
 * (UNINIT), refusal (ERROR) and a CPU that no PMU of the events covers
 * (NOPMU); RUNNING is reached by the first sample, in
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
 * damon_perf_obs_first_sample() - Move this CPU's events to RUNNING.
 * @obs:	Observation state of the context whose event sampled.
 *
 * The part of damon_perf_obs_sample() that runs only while some event set
 * on this CPU is ENABLED and has not sampled yet: moves the context's to
 * RUNNING if they are ENABLED.  Runs in the overflow handler's context, NMI
 * included.
 */
void damon_perf_obs_first_sample(struct damon_perf_obs *obs)
{
	damon_perf_obs_run(obs, smp_processor_id());
}

/**
 * damon_perf_obs_trace_sample() - Trace a sample callback.
 * @event:	The event.
 * @data:	The sample data, or NULL.
 * @pmu_flags:	What the PMU filled in (&perf_sample_data->sample_flags).
 * @addr:	The sample's virtual address, or zero.
 * @reason:	What the overflow handler made of the sample.
 *
 * The part of damon_perf_obs_sample() that runs only while the
 * damon_perf_sample tracepoint is enabled: what only the tracepoint shows
 * is worked out here, out of the sampling path's way.  Runs in the overflow
 * handler's context, NMI included.
 */
void damon_perf_obs_trace_sample(struct perf_event *event,
				 struct perf_sample_data *data, u64 pmu_flags,
				 u64 addr, enum damon_perf_sample_reason reason)
{
	trace_damon_perf_sample(addr,
				data && (pmu_flags & PERF_SAMPLE_DATA_SRC) ?
				data->data_src.val : 0,
				data ? data->period : 0, smp_processor_id(),
				reason, pmu_flags, event->attr.sample_type,
				damon_perf_sample_context());
}

/**
 * damon_perf_sample_regfunc() - Send every sample the general way.
 *
 * Called when the damon_perf_sample tracepoint gets its first probe, before
 * its static key is enabled: from then on, every CPU's samples take the
 * overflow handler's general path, which traces them.
 *
 * Return: 0.
 */
int damon_perf_sample_regfunc(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		atomic_inc(per_cpu_ptr(&damon_perf_obs_need_full, cpu));
	return 0;
}

/**
 * damon_perf_sample_unregfunc() - Let samples take the quick way again.
 *
 * Called when the damon_perf_sample tracepoint loses its last probe.
 */
void damon_perf_sample_unregfunc(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		atomic_dec(per_cpu_ptr(&damon_perf_obs_need_full, cpu));
}

/**
 * damon_perf_obs_aux_record() - Count and trace a record from an AUX area.
 * @obs:	Observation state of the context whose event wrote it.
 * @event:	The event.
 * @cpu:	The CPU of @event, which took the sample.
 * @addr:	The record's data virtual address, or zero.
 * @data_src:	The record's data source, as the PMU encodes it.
 * @found:	PERF_SAMPLE_* bits of what the record holds.
 * @reason:	What the drain made of the record.
 *
 * The AUX drain's counterpart of damon_perf_obs_sample(): the record is
 * classified in the counters of the CPU that decodes it, with
 * preemption disabled, and moves @cpu's events to RUNNING.  The tracepoint
 * shows @cpu, and the context of the drain, process context.
 */
void damon_perf_obs_aux_record(struct damon_perf_obs *obs,
			       struct perf_event *event, unsigned int cpu,
			       u64 addr, u64 data_src, u64 found,
			       enum damon_perf_sample_reason reason)
{
	this_cpu_inc(obs->cpus->reason[reason]);
	damon_perf_obs_run(obs, cpu);
	trace_damon_perf_sample(addr, data_src, event->attr.sample_period, cpu,
				reason, found, event->attr.sample_type,
				damon_perf_sample_context());
}

/**
 * damon_perf_obs_aux_end() - Count and trace one drain of an AUX area.
 * @obs:	Observation state of the context whose event owns the area.
 * @cpu:	The CPU of the event.
 * @aux:	What the drain found.
 *
 * A truncated area is also traced, as damon_perf_aux_truncated: what the
 * area held and its size, in bytes, and the truncations of @cpu so far.
 */
void damon_perf_obs_aux_end(struct damon_perf_obs *obs, unsigned int cpu,
			    const struct damon_perf_obs_aux *aux)
{
	struct damon_perf_obs_cpu *c = per_cpu_ptr(obs->stats->cpus, cpu);
	u64 truncated;

	atomic64_add(aux->records, &c->aux_records);
	atomic64_add(aux->malformed, &c->aux_malformed);
	atomic64_add(aux->collision, &c->aux_collision);
	truncated = atomic64_add_return(aux->truncated, &c->aux_truncated);
	if (aux->truncated)
		trace_damon_perf_aux_truncated(cpu, aux->used, aux->size,
					       truncated);
}

/* Count and trace a record this CPU's full @ring, of @occupancy, dropped. */
static void damon_perf_obs_overflow(struct damon_perf_ring *ring,
				    unsigned long occupancy)
{
	struct damon_perf_obs_cpu __percpu *cpus = ring->stats->cpus;

	this_cpu_inc(cpus->overflow);
	trace_damon_perf_ring_overflow(smp_processor_id(), occupancy,
				       ring->mask + 1,
				       this_cpu_read(cpus->overflow));
}

/* Raise @max to @val, if it is below. */
static void damon_perf_obs_max(atomic_long_t *max, long val)
{
	long old = atomic_long_read(max);

	while (old < val && !atomic_long_try_cmpxchg(max, &old, val))
		;
}

/*
 * Note rings of @capacity records counting in @obs's set: one for each
 * possible CPU, as damon_perf_rings_alloc() allocates them.
 */
static void damon_perf_obs_capacity(const struct damon_perf_obs *obs,
				    unsigned long capacity)
{
	damon_perf_obs_max(&obs->stats->capacity, capacity);
	damon_perf_obs_max(&obs->stats->ring_bytes, num_possible_cpus() *
			   (capacity * sizeof(struct damon_perf_record) +
			    sizeof(struct damon_perf_ring)));
}

/**
 * damon_perf_obs_view() - Note the memory of a context's view of its regions.
 * @obs:	Observation state of the context.
 * @bytes:	What the view's arrays take, in bytes, as allocated.
 *
 * perf_stats shows the largest view since boot.  A view laid out without
 * observation state, as the KUnit tests of the drain lay one out, is not
 * counted.
 */
void damon_perf_obs_view(struct damon_perf_obs *obs, unsigned long bytes)
{
	if (obs->stats)
		damon_perf_obs_max(&obs->stats->view_bytes, bytes);
}

/**
 * damon_perf_obs_report_missed() - Count and trace a report no ring took.
 * @why:	Why.
 * @addr:	The report's virtual address.
 * @tgid:	The report's thread group id.
 *
 * Called on the reporting CPU, with preemption disabled.  Counted in the
 * live counters, as no context took the report.
 */
void damon_perf_obs_report_missed(enum damon_perf_report_missed why,
				  unsigned long addr, pid_t tgid)
{
	this_cpu_inc(damon_perf_obs_cpus.missed);
	trace_damon_perf_report_missed(smp_processor_id(), why, addr, tgid);
}

/**
 * damon_perf_obs_drain_begin() - Start the tally of one drain of a CPU's ring.
 * @d:		The tally.
 * @rings:	The rings of the context to be drained.
 * @cpu:	The CPU whose ring is to be drained.
 *
 * Notes when the drain began and how many records the ring holds.  As only
 * drains take records out, that is the most the ring held since the last
 * drain, give or take a record stored while this one runs.
 */
void damon_perf_obs_drain_begin(struct damon_perf_obs_drain *d,
				struct damon_perf_ring __percpu *rings,
				unsigned int cpu)
{
	*d = (struct damon_perf_obs_drain){
		.start = local_clock(),
		.occupancy = damon_perf_ring_len(per_cpu_ptr(rings, cpu)),
	};
}

/* Raise @c's ring_peak to @occupancy. */
static void damon_perf_obs_peak(struct damon_perf_obs_cpu *c,
				unsigned long occupancy)
{
	s64 old = atomic64_read(&c->ring_peak);

	while (occupancy > old &&
	       !atomic64_try_cmpxchg(&c->ring_peak, &old, occupancy))
		;
}

/*
 * Count the records stored in @ring since the last count as enqueued.  For
 * the ring's one consumer: the producers count nothing on success, so that
 * a stored record costs them nothing but the ring's own work.
 */
static void damon_perf_obs_count_enqueued(struct damon_perf_ring *ring,
					  struct damon_perf_obs_cpu *c)
{
	/* only a count: no slot below it is read */
	unsigned long head = READ_ONCE(ring->head);

	atomic64_add(head - ring->counted, &c->enqueue);
	ring->counted = head;
}

/**
 * damon_perf_obs_drain_end() - Count and trace one drain of a CPU's ring.
 * @rings:	The rings of the context that was drained.
 * @cpu:	The CPU whose ring was drained.
 * @drain:	What the drain did, from damon_perf_obs_drain_begin() on.
 *
 * Also counts what the CPU's producers stored in the ring since the last
 * drain as enqueued, and raises its ring_peak to what the ring held when
 * the drain began.  Otherwise a drain that found the ring empty is neither
 * counted nor traced.
 */
void damon_perf_obs_drain_end(struct damon_perf_ring __percpu *rings,
			      unsigned int cpu,
			      const struct damon_perf_obs_drain *drain)
{
	struct damon_perf_ring *ring = per_cpu_ptr(rings, cpu);
	struct damon_perf_obs_cpu *c = per_cpu_ptr(ring->stats->cpus, cpu);
	unsigned long miss = 0;
	int i;

	damon_perf_obs_count_enqueued(ring, c);
	damon_perf_obs_peak(c, drain->occupancy);
	if (!drain->dequeue)
		return;
	atomic64_add(drain->dequeue, &c->dequeue);
	atomic64_add(drain->match, &c->match);
	for (i = 0; i < NR_DAMON_PERF_MISSES; i++) {
		atomic64_add(drain->miss[i], &c->miss[i]);
		miss += drain->miss[i];
	}
	atomic64_add(drain->update, &c->update);
	trace_damon_perf_drain(cpu, drain->dequeue, drain->match, miss,
			       drain->update,
			       damon_perf_ring_len(ring),
			       local_clock() - drain->start);
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

/*
 * Snapshot of @cpu's counters in @stats into @v, indexed by
 * &enum damon_perf_counter.
 */
static void damon_perf_obs_read_cpu(struct damon_perf_obs_stats *stats,
				    unsigned int cpu, u64 *v)
{
	struct damon_perf_obs_cpu *c = per_cpu_ptr(stats->cpus, cpu);
	int i;

	v[DAMON_PERF_C_CALLBACK] = READ_ONCE(c->callback);
	for (i = 0; i < NR_DAMON_PERF_SAMPLE_REASONS; i++)
		v[DAMON_PERF_C_VALID + i] = READ_ONCE(c->reason[i]);
	v[DAMON_PERF_C_ENQUEUE] = atomic64_read(&c->enqueue);
	v[DAMON_PERF_C_DEQUEUE] = atomic64_read(&c->dequeue);
	v[DAMON_PERF_C_OVERFLOW] = READ_ONCE(c->overflow);
	v[DAMON_PERF_C_RING_PEAK] = atomic64_read(&c->ring_peak);
	v[DAMON_PERF_C_MATCH] = atomic64_read(&c->match);
	for (i = 0; i < NR_DAMON_PERF_MISSES; i++)
		v[DAMON_PERF_C_MISS_TGID + i] = atomic64_read(&c->miss[i]);
	v[DAMON_PERF_C_UPDATE] = atomic64_read(&c->update);
}

/*
 * Add @cpu's AUX counters in @stats to @aux: records, malformed packets,
 * truncations and collisions.
 */
static void damon_perf_obs_read_aux(struct damon_perf_obs_stats *stats,
				    unsigned int cpu, u64 *aux)
{
	struct damon_perf_obs_cpu *c = per_cpu_ptr(stats->cpus, cpu);

	aux[0] += atomic64_read(&c->aux_records);
	aux[1] += atomic64_read(&c->aux_malformed);
	aux[2] += atomic64_read(&c->aux_truncated);
	aux[3] += atomic64_read(&c->aux_collision);
}

static int damon_perf_stats_show(struct seq_file *m, void *unused)
{
	struct damon_perf_obs_stats *stats = &damon_perf_obs_live;
	u64 total[NR_DAMON_PERF_COUNTERS] = {}, v[NR_DAMON_PERF_COUNTERS];
	u64 missed = 0, aux[4] = {};
	enum damon_perf_cpu_state st;
	unsigned int cpu;
	int i;

	for_each_possible_cpu(cpu) {
		damon_perf_obs_read_cpu(stats, cpu, v);
		for (i = 0; i < NR_DAMON_PERF_COUNTERS; i++) {
			if (i == DAMON_PERF_C_RING_PEAK)
				total[i] = max(total[i], v[i]);
			else
				total[i] += v[i];
		}
		missed += READ_ONCE(per_cpu_ptr(stats->cpus, cpu)->missed);
		damon_perf_obs_read_aux(stats, cpu, aux);
	}

	seq_puts(m, "  ┌──────────────┬──────────────┐\n");
	seq_puts(m, "  │ Counter      │        Value │\n");
	seq_puts(m, "  ├──────────────┼──────────────┤\n");
	for (i = 0; i < NR_DAMON_PERF_COUNTERS; i++)
		seq_printf(m, "  │ %-12s │ %12llu │\n",
			   damon_perf_counter_names[i], total[i]);
	seq_puts(m, "  └──────────────┴──────────────┘\n");
	seq_printf(m, "  report_missed=%llu illegal_state_changes=%lld ring_capacity=%ld\n",
		   missed, atomic64_read(&stats->illegal),
		   atomic_long_read(&stats->capacity));
	seq_printf(m, "  aux_records=%llu aux_malformed=%llu aux_truncated=%llu aux_collisions=%llu\n",
		   aux[0], aux[1], aux[2], aux[3]);
	seq_printf(m, "  ring_bytes=%ld view_bytes=%ld\n",
		   atomic_long_read(&stats->ring_bytes),
		   atomic_long_read(&stats->view_bytes));

	seq_puts(m, "\n  Per-CPU (non-zero / non-UNINIT):\n");
	for_each_possible_cpu(cpu) {
		bool any = false;

		damon_perf_obs_read_cpu(stats, cpu, v);
		for (i = 0; i < NR_DAMON_PERF_COUNTERS; i++)
			any |= v[i] != 0;
		st = damon_perf_cpu_state(stats, cpu);
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

#endif	/* CONFIG_DAMON_PERF_OBSERVE */

#include "tests/perf_ring-kunit.h"
#include "tests/perf_observe-kunit.h"
