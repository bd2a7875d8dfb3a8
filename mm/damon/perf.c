// SPDX-License-Identifier: GPL-2.0
/*
 * DAMON access checks from perf event samples.
 *
 * A context with perf events gets one kernel counter per online CPU for each
 * of them.  Their overflow handler sorts out the samples that carry a usable
 * address and pushes those, as compact records, into the context's per-CPU
 * rings (perf_observe.c).  damon_report_access() lets other producers push
 * into the rings of every context that samples.  Once per sampling interval
 * the kdamond drains every CPU's ring, matches each record to a target and a
 * region, and estimates from the samples of each region the share of its
 * pages accessed in the interval, counting it accessed in that proportion of
 * intervals, as the page table Accessed bit check of one random page per
 * region does (see damon_perf_update_hit()).
 *
 * A PMU that writes its records into an AUX area instead (ARM SPE) calls no
 * overflow handler: each of its events gets an AUX area, which the kdamond
 * drains first, once per sampling interval, decoding the records and
 * pushing the usable ones through a ring like the overflow handler does.
 *
 * The stages, in the order a sample passes them, are event create, bind and
 * enable (damon_perf_cpu_online() and damon_perf_enable()), sampling
 * (damon_perf_overflow()), ring (damon_perf_ring_push()), drain
 * (damon_perf_drain_cpu()) and match & update (damon_perf_match() and
 * damon_perf_check_accesses()).
 */

#define pr_fmt(fmt) "damon-perf: " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/damon.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/math64.h>
#include <linux/perf_event.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "perf.h"
#include "perf_observe.h"
#include "perf_spe.h"

/* Records are taken out of a ring in batches of this many. */
#define DAMON_PERF_DRAIN_BATCH	16

/*
 * A ring has room for the samples of this many sampling intervals at the
 * highest rate its context's events may sample at, and that rate is assumed
 * to be this many samples per second per CPU for events that perf does not
 * cap (see damon_perf_ring_order() and damon_perf_max_rate()).
 */
#define DAMON_PERF_RING_INTERVALS	4
#define DAMON_PERF_RING_UNCAPPED_RATE	400000

/*
 * Pages of the AUX area of each event of a PMU that writes one: 64 KiB, and
 * at least the two pages ARM SPE needs.  That holds 1024 SPE records of 64
 * bytes.
 */
#define DAMON_PERF_AUX_PAGES	max(2UL, SZ_64K >> PAGE_SHIFT)

/*
 * Most bytes of an AUX area copied to decode one record: the largest ARM
 * SPE record (PMSIDR_EL1.MaxSize).  Records are decoded where the PMU wrote
 * them, and copied only when they run from one page of the area onto the
 * next, which need not follow it in memory.  arm_spe_pmu, woken up once a
 * page (DAMON_PERF_AUX_WATERMARK), ends each of its writes at a page
 * boundary and pads what a record would not fit in, but nothing in the
 * perf core holds a PMU to that.
 */
#define DAMON_PERF_AUX_STITCH	SZ_2K

/*
 * Bytes a PMU writes into an AUX area between wakeups: ARM SPE moves the
 * head of the area, and so lets the drain see new records, only at a
 * wakeup (its buffer interrupt) and when the event stops.  Left at zero,
 * the perf core would wake up once per half area, 512 records.
 */
#define DAMON_PERF_AUX_WATERMARK	PAGE_SIZE

/*
 * Records an AUX area takes between two drains: all but a watermark's
 * worth, which waits out of the drain's sight, of records of 64 bytes, the
 * size of ARM SPE's on the implementations seen so far.
 */
#define DAMON_PERF_AUX_RECORDS	\
	((DAMON_PERF_AUX_PAGES * PAGE_SIZE - DAMON_PERF_AUX_WATERMARK) / 64)

/*
 * Operations a second, in millions, of the busiest core an ARM SPE event is
 * to keep up with: one operation per cycle at 3 GHz.
 */
#define DAMON_PERF_SPE_OPS_PER_US	3000

/*
 * Records decoded from an AUX area between two drains of the ring they go
 * through, so that the ring never overflows on their account.
 */
#define DAMON_PERF_AUX_BATCH	(DAMON_PERF_RING_SIZE / 2)

/*
 * Estimator of the accessed share of a region (see damon_perf_update_hit()).
 * A region's share and credit are counted in 1/DAMON_PERF_EST_ONE of an
 * accessed interval; a region's samples of an interval are counted up to
 * DAMON_PERF_EST_SAMPLES_MAX, and those since the regions were laid out up
 * to DAMON_PERF_EST_TOTAL_MAX; a sparse sampler's weight is learnt from the
 * first DAMON_PERF_EST_LAYOUT_MAX samples of a layout of the regions (see
 * damon_perf_weigh()); a sample stands for at most DAMON_PERF_EST_WEIGHT_MAX
 * pages (64 K pages, 256 MiB with 4 KiB pages).
 */
#define DAMON_PERF_EST_SHIFT		16
#define DAMON_PERF_EST_ONE		BIT(DAMON_PERF_EST_SHIFT)
#define DAMON_PERF_EST_SAMPLES_MAX	U16_MAX
#define DAMON_PERF_EST_TOTAL_MAX	BIT(20)
#define DAMON_PERF_EST_LAYOUT_MAX	BIT(24)
#define DAMON_PERF_EST_WEIGHT_MAX	((u64)U16_MAX << DAMON_PERF_EST_SHIFT)

/*
 * struct damon_perf_est - A region of the view and the estimator's state of it.
 * @region:	The region.
 * @synced:	The last sampling interval the region's access rate is up to
 *		date with.
 * @page:	Page frame of the region's last record in the interval.
 * @samples:	Records of the region in the interval being drained, a record
 *		on the page of the one before it not counted; 0 if none.
 * @total:	@samples of the intervals since the last damon_perf_sync().
 * @credit:	Shares the region has accumulated and not yet spent on
 *		intervals counted as accessed, in 1/DAMON_PERF_EST_ONE.
 * @warm:	Whether the region is in &damon_perf->warm.
 */
struct damon_perf_est {
	struct damon_region *region;
	unsigned long synced;
	unsigned long page;
	u32 samples;
	u32 total;
	u32 credit;
	bool warm;
};

/*
 * struct damon_perf_carry - A region's credit, for the next layout.
 * @ar:		The region's address range.
 * @target:	Index of its target in the view.
 * @credit:	Its &damon_perf_est->credit.
 */
struct damon_perf_carry {
	struct damon_addr_range ar;
	unsigned int target;
	u32 credit;
};

/*
 * struct damon_perf_target - A target as seen by the drain.
 * @tgid:	Thread group id of the target's process (virtual address).
 * @first:	Index of the target's first region in &damon_perf->est.
 * @nr:		Number of the target's regions.
 * @gen:	The target's &damon_target->regions_gen when its regions were
 *		laid out.
 * @hint:	Index, among the target's regions, of the one its last record
 *		hit, where the search for the next record starts.
 */
struct damon_perf_target {
	pid_t tgid;
	unsigned int first;
	unsigned int nr;
	unsigned long gen;
	unsigned int hint;
};

/*
 * struct damon_perf - Perf state of a running context.
 * @ctx:	The context.
 * @node:	CPU hotplug instance.
 * @list:	Entry in damon_perf_consumers, while enabled.
 * @attrs:	perf_event_attr of each of the context's perf events.
 * @nr_events:	Number of @attrs.
 * @events:	Per-CPU events, @nr_events per CPU, indexed by CPU first.
 * @rings:	Per-CPU rings, one for each possible CPU.
 * @phys:	Whether the context monitors the physical address space.
 * @enabled:	Whether events of newly onlined CPUs should be enabled.
 * @paused:	Whether sampling is paused while the watermarks deactivate
 *		the context.
 * @starting:	Whether the first round of event creation is running.
 * @targets:	The drain's view of the targets, @nr_targets of them.
 * @est:	The drain's view of every target's regions, in order,
 *		@nr_regions of them, and what the estimator knows of each.
 * @ranges:	The address range of each region of @est, copied, so that the
 *		drain's search reads one array rather than the regions.
 * @hit:	Indices in @est of the regions that got a sample in this
 *		interval, @nr_hit of them.
 * @warm:	Indices in @est of the regions whose access rates an
 *		interval without samples of them may change, @nr_warm of them
 *		(see damon_perf_warm()).
 * @carry:	The credits of the last layout, which the next one inherits
 *		(see damon_perf_carry_over()).
 * @carry_ok:	Whether the view's regions are up to date, so that the next
 *		layout may inherit their credits.
 * @regions_cap: Capacity of @est, @ranges, @hit, @warm and @carry.
 * @targets_cap: Capacity of @targets.
 * @now:	Sampling intervals checked since the start.
 * @laid_out:	@now at the last damon_perf_sync(), since which @sq and
 *		@nr_samples count.
 * @view_valid:	Whether @targets and @est still lay out the regions.
 * @view_check:	Whether DAMON core may have changed the regions since the
 *		last access check, so that @view_valid is to be checked.
 * @exact:	Whether every event samples each of its events, so that each
 *		sample is an access of its own.
 * @weight:	Pages a sample stands for, in 1/DAMON_PERF_EST_ONE.
 * @sq:		Sum over the regions of total * (total - 1) / pages, of
 *		their &damon_perf_est->total, in 1/DAMON_PERF_EST_ONE.
 * @nr_samples:	Sum of the regions' &damon_perf_est->total.
 * @past_sq:	@sq before @laid_out, each span between two syncs weighing
 *		half the next.
 * @past_den:	@nr_samples times the intervals of each span before @laid_out,
 *		likewise.
 * @rnd:	State of the random initial credits of the regions.
 * @commit_seen: Whether damon_commit_ctx() ran since the last access check.
 * @aux_buf:	DAMON_PERF_AUX_STITCH bytes the AUX drain copies records
 *		that run across pages into, once an event with an AUX area
 *		exists.
 * @kick:	Queued by a producer that fills its ring to half, to have the
 *		kdamond drain early (damon_perf_sleep()).
 * @kdamond:	The kdamond that drains the rings, once it enabled the events.
 * @drain_wanted: Whether @kick ran since the kdamond last drained early.
 * @obs:	Observation state of the events.
 *
 * @enabled and @events are changed only with the CPU hotplug lock held.
 */
struct damon_perf {
	struct damon_ctx *ctx;
	struct hlist_node node;
	struct list_head list;
	struct perf_event_attr *attrs;
	unsigned int nr_events;
	struct perf_event **events;
	struct damon_perf_ring __percpu *rings;
	bool phys;
	bool enabled;
	bool paused;
	bool starting;
	struct damon_perf_target *targets;
	unsigned int nr_targets;
	struct damon_perf_est *est;
	struct damon_addr_range *ranges;
	unsigned int nr_regions;
	unsigned int *hit;
	unsigned int nr_hit;
	unsigned int *warm;
	unsigned int nr_warm;
	struct damon_perf_carry *carry;
	bool carry_ok;
	unsigned int regions_cap;
	unsigned int targets_cap;
	unsigned long now;
	unsigned long laid_out;
	bool view_valid;
	bool view_check;
	bool exact;
	u64 weight;
	u64 sq;
	u64 nr_samples;
	u64 past_sq;
	u64 past_den;
	struct rnd_state rnd;
	bool commit_seen;
	u8 *aux_buf;
	struct irq_work kick;
	struct task_struct *kdamond;
	bool drain_wanted;
	struct damon_perf_obs obs;
};

static enum cpuhp_state damon_perf_hp_state = CPUHP_INVALID;

/* Enabled contexts that take access reports from any producer. */
static LIST_HEAD(damon_perf_consumers);
static DEFINE_MUTEX(damon_perf_consumers_lock);

/*
 * Event attributes
 */

/**
 * damon_set_perf_events() - Set the perf events a context samples from.
 * @ctx:	The context, which must not be running.
 * @events:	Array of the events, copied.
 * @nr:		Number of @events; zero goes back to Accessed-bit checks.
 *
 * Use damon_commit_ctx() to change the events of a running context.
 *
 * Return: 0 on success, -ENOMEM if the copy could not be allocated.
 */
int damon_set_perf_events(struct damon_ctx *ctx,
			  const struct damon_perf_event_attr *events,
			  unsigned int nr)
{
	struct damon_perf_event_attr *copy = NULL;

	if (nr) {
		copy = kmemdup_array(events, nr, sizeof(*events), GFP_KERNEL);
		if (!copy)
			return -ENOMEM;
	}
	kfree(ctx->perf_events);
	ctx->perf_events = copy;
	ctx->nr_perf_events = nr;
	return 0;
}

/* Whether @ctx monitors the physical address space. */
static bool damon_perf_wants_phys(struct damon_ctx *ctx)
{
	return ctx->ops.id == DAMON_OPS_PADDR;
}

/*
 * What perf is given for @e, in a context that wants physical addresses if
 * @phys.
 */
static void damon_perf_to_perf_attr(const struct damon_perf_event_attr *e,
				    bool phys, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = e->type;
	a->config = e->config;
	a->config1 = e->config1;
	a->config2 = e->config2;
	a->freq = e->freq;
	a->precise_ip = e->precise_ip;
	a->exclude_kernel = e->exclude_kernel;
	a->exclude_hv = e->exclude_hv;
	a->disabled = 1;
	/*
	 * A kernel counter has no buffer, so a record that a PMU driver sends
	 * to perf_event_output() instead of perf_event_overflow() is lost.
	 * The x86 driver does that with all but the last record of each PEBS
	 * interrupt unless freq or wakeup_events is set (large PEBS); one
	 * wakeup per sample keeps every record on the overflow path.
	 */
	a->wakeup_events = 1;
	a->sample_type = PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC;
	/* used only by PMUs that write an AUX area */
	a->aux_watermark = DAMON_PERF_AUX_WATERMARK;
	if (phys || e->sample_phys_addr)
		a->sample_type |= PERF_SAMPLE_PHYS_ADDR;
	if (e->freq)
		a->sample_freq = e->sample_freq;
	else
		a->sample_period = e->sample_period;
}

/*
 * Whether @a and @b give perf the same events.  What perf is given is
 * compared, not the user's fields, so that this needs no list of them, and
 * a field that perf does not use (sample_period with freq set, say) changes
 * nothing.
 */
static bool damon_perf_events_eq(struct damon_ctx *a, struct damon_ctx *b)
{
	struct perf_event_attr pa, pb;
	unsigned int i;

	if (a->nr_perf_events != b->nr_perf_events)
		return false;
	for (i = 0; i < a->nr_perf_events; i++) {
		damon_perf_to_perf_attr(&a->perf_events[i],
					damon_perf_wants_phys(a), &pa);
		damon_perf_to_perf_attr(&b->perf_events[i],
					damon_perf_wants_phys(b), &pb);
		if (memcmp(&pa, &pb, sizeof(pa)))
			return false;
	}
	return true;
}

/*
 * Check what can be checked without asking perf, and turn @ctx's perf
 * events into perf_event_attr in @attrs.
 */
static int damon_perf_build_attrs(struct damon_ctx *ctx,
				  struct perf_event_attr *attrs)
{
	bool phys = damon_perf_wants_phys(ctx);
	unsigned int i;

	if (ctx->ops.id != DAMON_OPS_VADDR && ctx->ops.id != DAMON_OPS_FVADDR &&
	    ctx->ops.id != DAMON_OPS_PADDR) {
		pr_warn("perf events need vaddr, fvaddr or paddr operations\n");
		return -EINVAL;
	}

	for (i = 0; i < ctx->nr_perf_events; i++) {
		struct damon_perf_event_attr *e = &ctx->perf_events[i];

		if (phys && !e->sample_phys_addr) {
			pr_warn("perf event %u: paddr monitoring needs sample_phys_addr=1\n",
				i);
			return -EINVAL;
		}
		if (e->freq ? !e->sample_freq : !e->sample_period) {
			pr_warn("perf event %u: %s is 0, so the event would never sample\n",
				i, e->freq ? "sample_freq" : "sample_period");
			return -EINVAL;
		}
		/* as perf_event_open() checks it */
		if (e->freq &&
		    e->sample_freq > READ_ONCE(sysctl_perf_event_sample_rate)) {
			pr_warn("perf event %u: sample_freq %llu is above kernel.perf_event_max_sample_rate (%d)\n",
				i, e->sample_freq,
				READ_ONCE(sysctl_perf_event_sample_rate));
			return -EINVAL;
		}

		damon_perf_to_perf_attr(e, phys, &attrs[i]);
	}
	return 0;
}

/* One line in the kernel log that says why perf refused an event. */
static void damon_perf_log_refusal(const struct perf_event_attr *attr,
				   unsigned int idx, unsigned int cpu, int err)
{
	const char *why;

	switch (err) {
	case -ENOENT:
		why = "no PMU of this type, or the PMU does not know the event";
		break;
	case -EBUSY:
		why = "the PMU is busy (it takes one user at a time)";
		break;
	case -EOPNOTSUPP:
		why = "the PMU cannot sample with these attributes";
		break;
	case -EINVAL:
		why = "perf rejected the attributes";
		break;
	case -EACCES:
	case -EPERM:
		why = "not permitted";
		break;
	default:
		why = "perf refused the event";
		break;
	}
	pr_warn("perf event %u (type %u config %#llx) on cpu %u: %s (%d)\n",
		idx, attr->type, attr->config, cpu, why, err);
}

static struct perf_event **damon_perf_event_slot(struct damon_perf *perf,
						 unsigned int cpu,
						 unsigned int idx)
{
	return &perf->events[cpu * perf->nr_events + idx];
}

/*
 * Sampling
 */

/**
 * damon_perf_classify() - Sort out a sample.
 * @addr:	Virtual address the PMU gave, or zero.
 * @paddr:	Physical address of the sample, or zero.
 * @want_phys:	Whether the context needs the physical address.
 *
 * Inlined: its KUnit test, a second caller, would keep it out of the
 * overflow handler.
 *
 * Return: DAMON_PERF_SAMPLE_VALID if the sample is usable, or why not.
 */
static __always_inline enum damon_perf_sample_reason
damon_perf_classify(u64 addr, u64 paddr, bool want_phys)
{
	if (want_phys) {
		if (!paddr)
			return addr ? DAMON_PERF_SAMPLE_INV_PHYS :
				DAMON_PERF_SAMPLE_ADDR_ZERO;
		if (!pfn_valid(PHYS_PFN(paddr)))
			return DAMON_PERF_SAMPLE_INV_PHYS;
		return DAMON_PERF_SAMPLE_VALID;
	}
	if (!addr)
		return DAMON_PERF_SAMPLE_ADDR_ZERO;
	/*
	 * Not the task's own TASK_SIZE, which a compat task's flag decides:
	 * an address a compat task cannot map is no kernel address either,
	 * and the drain finds no region for it.
	 */
	if (addr >= TASK_SIZE_MAX)
		return DAMON_PERF_SAMPLE_KERNEL;
	return DAMON_PERF_SAMPLE_VALID;
}

/*
 * The overflow handler's general case: a physical address context, a sample
 * without data or without a usable virtual address, or one that must be
 * shown in full.  Out of line, so that it keeps its registers and its calls
 * out of damon_perf_overflow()'s common case.
 */
static noinline void damon_perf_overflow_full(struct damon_perf *perf,
					      struct perf_event *event,
					      struct perf_sample_data *data,
					      struct pt_regs *regs)
{
	enum damon_perf_sample_reason reason = DAMON_PERF_SAMPLE_NULL;
	u64 pmu_flags = 0, addr = 0, paddr = 0;
	bool want_phys;

	damon_perf_obs_callback(&perf->obs);
	/*
	 * The context's address space decides, not what perf was asked for:
	 * a virtual address space context may ask for physical addresses too.
	 */
	want_phys = perf->phys;
	if (data) {
		pmu_flags = data->sample_flags;
		if (pmu_flags & PERF_SAMPLE_ADDR)
			addr = data->addr;
		/* perf_prepare_sample() finds a missing physical address */
		if (want_phys && addr && !(pmu_flags & PERF_SAMPLE_PHYS_ADDR))
			perf_prepare_sample(data, event, regs);
		if (want_phys && (data->sample_flags & PERF_SAMPLE_PHYS_ADDR))
			paddr = data->phys_addr;
		reason = damon_perf_classify(addr, paddr, want_phys);
	}
	damon_perf_obs_sample(&perf->obs, event, data, pmu_flags, addr, reason);
	if (reason != DAMON_PERF_SAMPLE_VALID)
		return;
	if (want_phys)
		damon_perf_ring_push(perf->rings, paddr, 0);
	else
		damon_perf_ring_push(perf->rings, addr, task_tgid_nr(current));
}

/*
 * The overflow handler of every event.  Runs in the context the PMU delivers
 * samples in: process, softirq, hardirq or NMI.  So: no locks, no
 * allocation, no sleeping.  It pushes straight into its context's rings.
 *
 * It runs for every sample, so the common case, a user address for a
 * virtual address context that the observability only counts, is decided
 * here, counted by damon_perf_obs_valid_quick(), callback included, and
 * handed to the ring in a call that ends the function.  Everything else
 * goes to damon_perf_overflow_full(), which counts the callback, then
 * classifies.
 */
static void damon_perf_overflow(struct perf_event *event,
				struct perf_sample_data *data,
				struct pt_regs *regs)
{
	struct damon_perf *perf = event->overflow_handler_context;
	u64 addr;

	/* damon_perf_try_events()'s trial events are never enabled */
	if (unlikely(!perf))
		return;
	if (likely(data && !perf->phys &&
		   (data->sample_flags & PERF_SAMPLE_ADDR))) {
		addr = data->addr;
		if (likely(damon_perf_classify(addr, 0, false) ==
			   DAMON_PERF_SAMPLE_VALID &&
			   damon_perf_obs_valid_quick(&perf->obs))) {
			damon_perf_ring_push(perf->rings, addr,
					     task_tgid_nr(current));
			return;
		}
	}
	damon_perf_overflow_full(perf, event, data, regs);
}

/**
 * damon_report_access() - Report an access to DAMON.
 * @report:	The access.
 *
 * Stores @report for the next access check of every running context that
 * takes its access checks from perf events: its virtual address and tgid for
 * a virtual address space context, its physical address for a physical one.
 * Safe in any context, NMI included: it takes no lock, allocates nothing and
 * never blocks.  If a context's ring for this CPU is full, the report is
 * dropped for that context and counted as a ring overflow.  The report is
 * stored in the ring of the CPU this runs on, whatever @report->cpu says.
 */
void damon_report_access(struct damon_access_report *report)
{
	struct damon_perf *perf;
	bool delivered = false;

	preempt_disable();
	rcu_read_lock();
	list_for_each_entry_rcu(perf, &damon_perf_consumers, list) {
		if (perf->phys)
			damon_perf_ring_push(perf->rings, report->paddr, 0);
		else
			damon_perf_ring_push(perf->rings, report->addr,
					     report->tgid);
		delivered = true;
	}
	rcu_read_unlock();
	if (!delivered)
		damon_perf_obs_report_missed(DAMON_PERF_MISSED_NO_CONSUMER,
					     report->addr, report->tgid);
	preempt_enable();
}

/*
 * Drain, match and update
 */

/*
 * What a drain makes of the records it takes.
 * @DAMON_PERF_DRAIN_UPDATE:	Match them, and mark the regions they hit
 *				accessed for this sampling interval.
 * @DAMON_PERF_DRAIN_ACCOUNT:	Match them, but update no region: sampling
 *				is pausing or stopping, and no access check
 *				reads what the drain finds.
 * @DAMON_PERF_DRAIN_NO_VIEW:	There is no view of the regions (memory was
 *				short): the records count as missing their
 *				target.
 * @DAMON_PERF_DRAIN_LATER:	Only for AUX areas: decode the records into a
 *				ring and leave them there for the kdamond's
 *				next drain, as a CPU going offline does.
 */
enum damon_perf_drain_mode {
	DAMON_PERF_DRAIN_UPDATE,
	DAMON_PERF_DRAIN_ACCOUNT,
	DAMON_PERF_DRAIN_NO_VIEW,
	DAMON_PERF_DRAIN_LATER,
};

/* Free the drain's view of the regions. */
static void damon_perf_free_view(struct damon_perf *perf)
{
	kvfree(perf->est);
	kvfree(perf->ranges);
	kvfree(perf->hit);
	kvfree(perf->warm);
	kvfree(perf->carry);
	perf->est = NULL;
	perf->ranges = NULL;
	perf->hit = NULL;
	perf->warm = NULL;
	perf->nr_warm = 0;
	perf->carry = NULL;
	perf->carry_ok = false;
	perf->regions_cap = 0;
	perf->view_valid = false;
}

/*
 * The credit that region @r of the view's target @target inherits from the
 * last layout, @carry (@nr of them, by target and address): the mean of the
 * credits of the regions it overlaps, weighed by the overlaps, as DAMON core
 * gives a region split from another that one's access count, and a region
 * merged from two the mean of theirs.  @cursor walks @carry along the view.
 * Returns whether a region of the last layout overlaps @r.
 */
static bool damon_perf_inherit(const struct damon_perf_carry *carry,
			       unsigned int nr, unsigned int target,
			       const struct damon_region *r,
			       unsigned int *cursor, u32 *credit)
{
	unsigned long pages = (r->ar.end - r->ar.start) >> PAGE_SHIFT;
	unsigned int shift = 0, j;
	u64 sum = 0, wsum = 0, ov;

	/* overlaps in pages >> @shift times credits fit in 64 bits */
	if (pages > U32_MAX >> 1)
		shift = fls64(pages) - 31;
	for (j = *cursor; j < nr; j++) {
		const struct damon_perf_carry *c = &carry[j];

		if (c->target < target ||
		    (c->target == target && c->ar.end <= r->ar.start)) {
			*cursor = j + 1;
			continue;
		}
		if (c->target > target || c->ar.start >= r->ar.end)
			break;
		ov = min(c->ar.end, r->ar.end) - max(c->ar.start, r->ar.start);
		ov = max(ov >> PAGE_SHIFT >> shift, 1ULL);
		sum += ov * c->credit;
		wsum += ov;
	}
	if (!wsum)
		return false;
	*credit = div64_u64(sum, wsum);
	return true;
}

/* The thread group id of the process of target @t, or 0 if it has none. */
static pid_t damon_perf_tgid(struct damon_ctx *ctx, struct damon_target *t)
{
	struct task_struct *task;
	pid_t tgid = 0;

	if (!damon_target_has_pid(ctx))
		return 0;
	task = get_pid_task(t->pid, PIDTYPE_PID);
	if (task) {
		tgid = task_tgid_nr(task);
		put_task_struct(task);
	}
	return tgid;
}

/*
 * Whether an interval without samples of region @i of the view may change
 * its access rate: it is counted as accessed while its credit lasts, and
 * loses last_nr_accesses over the window from its moving sum in each
 * interval it is not; and a region with a nr_accesses will have it as its
 * last_nr_accesses once DAMON core ends the aggregation.  For the other
 * regions, bringing the access rate up to date changes nothing: the
 * regions' walks skip them (see damon_perf_sync()).
 */
static bool damon_perf_warm(struct damon_perf *perf, unsigned int i)
{
	struct damon_region *r = perf->est[i].region;

	return r->nr_accesses || r->last_nr_accesses ||
		perf->est[i].credit >= DAMON_PERF_EST_ONE;
}

/* Add region @i of the view to the warm ones, if it is not there yet. */
static void damon_perf_add_warm(struct damon_perf *perf, unsigned int i)
{
	if (perf->est[i].warm)
		return;
	perf->est[i].warm = true;
	perf->warm[perf->nr_warm++] = i;
}

/*
 * Keep the credits of the regions of the view in @carry, for the next layout
 * to inherit, if damon_perf_sync() brought them up to date: the view still
 * holds their ranges as they were, and their credits, however DAMON core
 * changed the regions since.  Returns the number of credits kept.
 */
static unsigned int damon_perf_carry_over(struct damon_perf *perf)
{
	struct damon_perf_target *pt;
	unsigned int i, t;

	if (!perf->carry_ok)
		return 0;
	for (t = 0; t < perf->nr_targets; t++) {
		pt = &perf->targets[t];
		for (i = pt->first; i < pt->first + pt->nr; i++) {
			perf->carry[i].ar = perf->ranges[i];
			perf->carry[i].target = t;
			perf->carry[i].credit = perf->est[i].credit;
		}
	}
	perf->carry_ok = false;
	return perf->nr_regions;
}

/* What the view's arrays, as damon_perf_build_view() allocates them, take. */
static unsigned long damon_perf_view_bytes(const struct damon_perf *perf)
{
	return perf->targets_cap * sizeof(*perf->targets) +
		perf->regions_cap * (sizeof(*perf->est) +
				     sizeof(*perf->ranges) +
				     sizeof(*perf->hit) + sizeof(*perf->warm) +
				     sizeof(*perf->carry));
}

/*
 * Lay out the targets and their regions, in address order, for binary
 * search.  Returns the number of regions, or a negative error code.
 *
 * Only while the view is not valid: the regions, then, are all up to date
 * with the last interval checked (see damon_perf_sync()).  Each region
 * inherits its credit from the regions of the last layout it overlaps, if
 * damon_perf_sync() brought them up to date since they were laid out, which
 * a commit and a watermarks pause forgo (see damon_perf_carry_over()): DAMON
 * core splits and merges the regions at the end of every aggregation, and a
 * credit that ended there would lose a sparse sampler's shares of the
 * aggregation's last intervals.
 */
static int damon_perf_build_view(struct damon_perf *perf)
{
	struct damon_ctx *ctx = perf->ctx;
	struct damon_perf_carry *carry;
	unsigned int nr_carry, cursor = 0;
	unsigned int nr_targets = 0, nr_regions = 0, i = 0;
	struct damon_target *t;
	struct damon_region *r;

	nr_carry = damon_perf_carry_over(perf);
	carry = perf->carry;
	damon_for_each_target(t, ctx) {
		nr_targets++;
		nr_regions += damon_nr_regions(t);
	}

	if (nr_targets > perf->targets_cap) {
		kfree(perf->targets);
		perf->targets = kcalloc(nr_targets, sizeof(*perf->targets),
					GFP_KERNEL);
		perf->targets_cap = perf->targets ? nr_targets : 0;
		if (!perf->targets)
			return -ENOMEM;
	}
	if (nr_regions > perf->regions_cap) {
		/* the last layout's credits are read below, from @carry */
		perf->carry = NULL;
		damon_perf_free_view(perf);
		perf->est = kvcalloc(nr_regions, sizeof(*perf->est),
				     GFP_KERNEL);
		perf->ranges = kvcalloc(nr_regions, sizeof(*perf->ranges),
					GFP_KERNEL);
		perf->hit = kvcalloc(nr_regions, sizeof(*perf->hit),
				     GFP_KERNEL);
		perf->warm = kvcalloc(nr_regions, sizeof(*perf->warm),
				      GFP_KERNEL);
		perf->carry = kvcalloc(nr_regions, sizeof(*perf->carry),
				       GFP_KERNEL);
		if (!perf->est || !perf->ranges || !perf->hit ||
		    !perf->warm || !perf->carry) {
			damon_perf_free_view(perf);
			kvfree(carry);
			return -ENOMEM;
		}
		perf->regions_cap = nr_regions;
	}
	damon_perf_obs_view(&perf->obs, damon_perf_view_bytes(perf));
	perf->nr_hit = 0;
	perf->nr_warm = 0;

	perf->nr_targets = 0;
	damon_for_each_target(t, ctx) {
		struct damon_perf_target *pt = &perf->targets[perf->nr_targets++];

		pt->tgid = damon_perf_tgid(ctx, t);
		pt->first = i;
		pt->nr = damon_nr_regions(t);
		pt->gen = t->regions_gen;
		pt->hint = 0;
		damon_for_each_region(r, t) {
			struct damon_perf_est *est = &perf->est[i];

			est->region = r;
			est->synced = perf->now;
			est->samples = 0;
			est->total = 0;
			/* else a random start, so that no share is rounded down */
			if (!damon_perf_inherit(carry, nr_carry,
						perf->nr_targets - 1, r, &cursor,
						&est->credit))
				est->credit = prandom_u32_state(&perf->rnd) %
					DAMON_PERF_EST_ONE;
			perf->ranges[i] = r->ar;
			est->warm = false;
			if (damon_perf_warm(perf, i))
				damon_perf_add_warm(perf, i);
			i++;
		}
	}
	if (carry != perf->carry)
		kvfree(carry);
	perf->nr_regions = nr_regions;
	perf->view_valid = true;
	perf->view_check = false;
	return nr_regions;
}

/*
 * Whether the regions are as the view laid them out: the same targets, none
 * of whose regions were added, removed or resized since.
 */
static bool damon_perf_layout_holds(struct damon_perf *perf)
{
	struct damon_target *t;
	unsigned int i = 0;

	damon_for_each_target(t, perf->ctx) {
		if (i == perf->nr_targets ||
		    perf->targets[i++].gen != t->regions_gen)
			return false;
	}
	return i == perf->nr_targets;
}

/*
 * Whether the view still lays out the regions, after DAMON core had them.
 * Each target's process is looked up again, in case it exited.
 */
static bool damon_perf_view_holds(struct damon_perf *perf)
{
	struct damon_ctx *ctx = perf->ctx;
	struct damon_target *t;
	unsigned int i = 0;

	if (!damon_perf_layout_holds(perf))
		return false;
	/* a relayout looks every process up again anyway */
	damon_for_each_target(t, ctx)
		perf->targets[i++].tgid = damon_perf_tgid(ctx, t);
	return true;
}

/*
 * The drain's view of the regions, laid out anew if it is not valid.  While
 * DAMON core leaves the regions as they are, as it does at one region a page,
 * which it can neither split nor merge, the view is kept, and the regions'
 * credits with it: laid out anew, each region would inherit its own.
 */
static int damon_perf_view(struct damon_perf *perf)
{
	if (perf->view_valid && perf->view_check) {
		perf->view_check = false;
		perf->view_valid = damon_perf_view_holds(perf);
	}
	if (perf->view_valid)
		return perf->nr_regions;
	return damon_perf_build_view(perf);
}

/**
 * damon_perf_find_region() - Find the range holding an address.
 * @ranges:	Address ranges of regions, in address order, not overlapping.
 * @nr:		Number of @ranges.
 * @addr:	The address.
 * @hint:	Index of the range the search looks at first, and the one after
 *		it, before a binary search of all @ranges; set to the range
 *		found.  Any value is safe.
 *
 * A writer that walks its memory in order, as a page-fault event sees one
 * do, hits the range it hit last or the next one: two looks find those.
 *
 * Return: index of the range in @ranges, or -(&enum damon_perf_miss + 1)
 * if no range holds @addr.
 */
static __always_inline int
damon_perf_find_region(const struct damon_addr_range *ranges, unsigned int nr,
		       unsigned long addr, unsigned int *hint)
{
	unsigned int lo = 0, hi = nr, h = *hint;

	/* the hinted range, then the next, each three branches */
	if (h < nr && addr >= ranges[h].start) {
		if (addr < ranges[h].end)
			return h;
		if (h + 1 < nr && addr >= ranges[h + 1].start &&
		    addr < ranges[h + 1].end) {
			*hint = h + 1;
			return h + 1;
		}
	}
	if (!nr || addr < ranges[0].start || addr >= ranges[nr - 1].end)
		return -(DAMON_PERF_MISS_BOUND + 1);
	/*
	 * The last range that starts at or below @addr, of all of them rather
	 * than of those the hint leaves: the first steps of a search of the
	 * whole array read the same few ranges each time, which stay cached.
	 */
	while (hi - lo > 1) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (ranges[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (addr < ranges[lo].end) {
		*hint = lo;
		return lo;
	}
	return -(DAMON_PERF_MISS_REGION + 1);
}

/*
 * Match & update: find the target and region of @rec.  Returns the global
 * region index, or -(&enum damon_perf_miss + 1).
 */
static __always_inline int damon_perf_match(struct damon_perf *perf,
					    const struct damon_perf_record *rec)
{
	struct damon_perf_target *pt = NULL;
	unsigned int i;
	int idx;

	if (perf->phys) {
		/* a physical address space context has one target */
		if (perf->nr_targets)
			pt = &perf->targets[0];
	} else {
		for (i = 0; i < perf->nr_targets; i++) {
			if (perf->targets[i].tgid &&
			    perf->targets[i].tgid == rec->tgid) {
				pt = &perf->targets[i];
				break;
			}
		}
	}
	if (!pt)
		return -(DAMON_PERF_MISS_TGID + 1);
	idx = damon_perf_find_region(perf->ranges + pt->first, pt->nr,
				     rec->addr, &pt->hint);
	return idx < 0 ? idx : pt->first + idx;
}

/*
 * Count a record at @addr of region @idx of the view for the interval being
 * checked.  Returns whether it is the region's first of the interval.
 */
static __always_inline bool damon_perf_count(struct damon_perf *perf,
					     unsigned int idx, u64 addr)
{
	struct damon_perf_est *est = &perf->est[idx];
	unsigned long page = addr >> PAGE_SHIFT;

	if (!est->samples) {
		perf->hit[perf->nr_hit++] = idx;
		est->samples = 1;
		est->page = page;
		return true;
	}
	/* a sampler that stays on a page tells nothing of the others */
	if (page != est->page && est->samples < DAMON_PERF_EST_SAMPLES_MAX) {
		est->samples++;
		est->page = page;
	}
	return false;
}

/*
 * Drain: consume @cpu's ring and match every record, as @mode says.
 */
static void damon_perf_drain_cpu(struct damon_perf *perf, unsigned int cpu,
				 enum damon_perf_drain_mode mode)
{
	struct damon_perf_record buf[DAMON_PERF_DRAIN_BATCH];
	struct damon_perf_obs_drain obs;
	unsigned int n, i;
	bool updated;
	int idx;

	damon_perf_obs_drain_begin(&obs, perf->rings, cpu);
	while ((n = damon_perf_ring_consume(perf->rings, cpu, buf,
					    ARRAY_SIZE(buf)))) {
		damon_perf_obs_drain_dequeue(&obs, n);
		for (i = 0; i < n; i++) {
			idx = mode != DAMON_PERF_DRAIN_NO_VIEW ?
				damon_perf_match(perf, &buf[i]) :
				-(DAMON_PERF_MISS_TGID + 1);
			if (idx < 0) {
				damon_perf_obs_drain_miss(&obs, -idx - 1);
				continue;
			}
			updated = mode == DAMON_PERF_DRAIN_UPDATE &&
				damon_perf_count(perf, idx, buf[i].addr);
			damon_perf_obs_drain_match(&obs, updated);
		}
	}
	damon_perf_obs_drain_end(perf->rings, cpu, &obs);
}

/*
 * AUX drain
 */

/*
 * The thread group of the task whose pid an SPE context packet holds
 * (CONTEXTIDR_EL1, which arm64 sets to the pid of the running task with
 * CONFIG_PID_IN_CONTEXTIDR), or 0.  @last caches the last lookup.
 */
static pid_t damon_perf_aux_tgid(pid_t pid, pid_t *last)
{
	struct task_struct *task;
	pid_t tgid = 0;

	if (pid == last[0])
		return last[1];
	rcu_read_lock();
	task = find_task_by_pid_ns(pid, &init_pid_ns);
	if (task)
		tgid = task_tgid_nr(task);
	rcu_read_unlock();
	last[0] = pid;
	last[1] = tgid;
	return tgid;
}

/*
 * Sort out the record @rec that @event of @cpu wrote and push it into the
 * current CPU's ring if it is usable, as the overflow handler does with a
 * sample.  Called with preemption disabled.
 */
static void damon_perf_aux_record(struct damon_perf *perf,
				  struct perf_event *event, unsigned int cpu,
				  const struct damon_spe_record *rec,
				  pid_t *last)
{
	enum damon_perf_sample_reason reason;
	u64 addr = 0, paddr = 0, found = 0;
	pid_t tgid = 0;

	damon_perf_obs_callback(&perf->obs);
	if (rec->flags & DAMON_SPE_VADDR) {
		addr = rec->vaddr;
		found |= PERF_SAMPLE_ADDR;
	}
	if (rec->flags & DAMON_SPE_PADDR) {
		paddr = rec->paddr;
		found |= PERF_SAMPLE_PHYS_ADDR;
	}
	if (rec->flags & DAMON_SPE_DATA_SRC)
		found |= PERF_SAMPLE_DATA_SRC;
	/* the task is long gone from the CPU: no translation of @addr */
	reason = damon_perf_classify(addr, paddr, perf->phys);
	damon_perf_obs_aux_record(&perf->obs, event, cpu, addr, rec->data_src,
				  found, reason);
	if (reason != DAMON_PERF_SAMPLE_VALID)
		return;
	if (perf->phys) {
		damon_perf_ring_push(perf->rings, paddr, 0);
		return;
	}
	if (rec->flags & DAMON_SPE_CONTEXT)
		tgid = damon_perf_aux_tgid(rec->context, last);
	else
		pr_warn_once("perf event (type %u): its records name no task, so no target of a virtual address context matches them; arm64 kernels need CONFIG_PID_IN_CONTEXTIDR=y\n",
			     event->attr.type);
	/* without a context packet, the drain finds no target */
	damon_perf_ring_push(perf->rings, addr, tgid);
}

/*
 * Decode the records that @event wrote, in @len bytes of @buf that start at
 * offset @offset of its area, up to @max of them, into the current CPU's
 * ring.  Returns the bytes used; a record cut at the end of @buf is left
 * for the next read, and sets @cut.
 */
static unsigned long damon_perf_aux_decode(struct damon_perf *perf,
					   struct perf_event *event,
					   const u8 *buf, unsigned long len,
					   unsigned long offset,
					   unsigned int max,
					   struct damon_perf_obs_aux *aux,
					   pid_t *last, bool *cut)
{
	struct damon_spe_record rec;
	unsigned long off = 0;
	unsigned int n = 0;
	size_t used;
	int ret;

	*cut = false;
	while (off < len && n < max) {
		ret = damon_spe_decode(buf + off, len - off, offset + off,
				       &used, &rec);
		off += used;
		if (ret < 0) {
			aux->malformed++;
			continue;
		}
		if (!ret) {
			*cut = off < len;
			break;
		}
		damon_perf_aux_record(perf, event, event->cpu, &rec, last);
		aux->records++;
		n++;
	}
	return off;
}

/* Take into @aux the PERF_AUX_FLAG_* bits of @flags it counts. */
static void damon_perf_aux_flags(struct damon_perf_obs_aux *aux, u64 flags)
{
	if (flags & PERF_AUX_FLAG_TRUNCATED)
		aux->truncated = 1;
	if (flags & PERF_AUX_FLAG_COLLISION)
		aux->collision = 1;
}

/*
 * Decode up to @max records of @len bytes at @buf, which start at offset
 * @offset of @event's area, into the ring of the CPU this runs on, and,
 * unless @mode is DAMON_PERF_DRAIN_LATER, drain that ring at once, so that
 * the ring holds one batch at a time.  Returns the bytes used, and sets
 * @cut as damon_perf_aux_decode() does.
 */
static unsigned long damon_perf_aux_batch(struct damon_perf *perf,
					  struct perf_event *event,
					  const u8 *buf, unsigned long len,
					  unsigned long offset, unsigned int max,
					  enum damon_perf_drain_mode mode,
					  struct damon_perf_obs_aux *aux,
					  pid_t *last, bool *cut)
{
	unsigned int ring_cpu;
	unsigned long used;

	preempt_disable();
	ring_cpu = smp_processor_id();
	used = damon_perf_aux_decode(perf, event, buf, len, offset, max, aux,
				     last, cut);
	preempt_enable();
	if (mode != DAMON_PERF_DRAIN_LATER)
		damon_perf_drain_cpu(perf, ring_cpu, mode);
	return used;
}

/*
 * Decode the record at the tail of @event's area, which runs past the end
 * of the data the area holds in one piece of memory: copy it, a little
 * more than the bytes already seen first, and more until it is whole, up to
 * DAMON_PERF_AUX_STITCH bytes.  Returns the bytes used, 0 if the record is
 * not whole yet: the PMU has not published its end.
 */
static unsigned long damon_perf_aux_stitch(struct damon_perf *perf,
					   struct perf_event *event,
					   unsigned long seen,
					   enum damon_perf_drain_mode mode,
					   struct damon_perf_obs_aux *aux,
					   pid_t *last)
{
	unsigned long want, len, used, offset;
	bool cut;
	u64 flags;

	want = min_t(unsigned long, seen + SZ_64, DAMON_PERF_AUX_STITCH);
	for (;;) {
		len = perf_event_read_kernel_aux(event, perf->aux_buf, want,
						 &flags, &offset);
		damon_perf_aux_flags(aux, flags);
		used = damon_perf_aux_batch(perf, event, perf->aux_buf, len,
					    offset, 1, mode, aux, last, &cut);
		if (used || len < want)
			return used;
		if (want == DAMON_PERF_AUX_STITCH)
			break;
		want = min_t(unsigned long, 2 * want, DAMON_PERF_AUX_STITCH);
	}
	/* longer than any record: step over its first byte */
	aux->malformed++;
	return 1;
}

/*
 * Decode the records that @event wrote since the last read, at most the
 * size of its area, so that a PMU writing as fast as this reads does not
 * keep it, in batches into the ring of the CPU this runs on, counting in
 * @aux.  The records are decoded where the PMU wrote them, but for one that
 * runs onto a page that does not follow in memory, which is copied.
 */
static void damon_perf_aux_read(struct damon_perf *perf,
				struct perf_event *event,
				enum damon_perf_drain_mode mode,
				struct damon_perf_obs_aux *aux)
{
	unsigned long len, used, offset;
	const void *data;
	pid_t last[2] = {};
	bool cut;
	u64 flags;

	while (aux->used < aux->size) {
		len = perf_event_peek_kernel_aux(event, &data, &flags, &offset);
		damon_perf_aux_flags(aux, flags);
		if (!len)
			break;
		used = damon_perf_aux_batch(perf, event, data, len, offset,
					    DAMON_PERF_AUX_BATCH, mode, aux,
					    last, &cut);
		perf_event_consume_kernel_aux(event, used);
		aux->used += used;
		if (!cut)
			continue;
		/* the record at data + used goes on past len, if anywhere */
		used = damon_perf_aux_stitch(perf, event, len - used, mode,
					     aux, last);
		perf_event_consume_kernel_aux(event, used);
		aux->used += used;
		if (!used)
			break;
	}
}

/*
 * Drain the AUX area of @event, the event of @cpu, as @mode says.
 *
 * An area that overran makes the perf core disable its event, whether or
 * not the PMU driver could write a PERF_RECORD_AUX saying so (there is
 * none when a transaction finds no room at all), and the driver stays
 * stopped until it is started again.  The drain counts the overrun and,
 * unless sampling is paused, enables the event again: the CPU goes back
 * through BOUND and ENABLED to RUNNING at its next record.
 */
static void damon_perf_aux_drain_event(struct damon_perf *perf,
				       struct perf_event *event,
				       unsigned int cpu,
				       enum damon_perf_drain_mode mode)
{
	struct damon_perf_obs_aux aux = {
		.size = DAMON_PERF_AUX_PAGES << PAGE_SHIFT,
	};
	enum perf_event_state state;
	unsigned long offset;
	u64 flags;

	damon_perf_aux_read(perf, event, mode, &aux);
	state = READ_ONCE(event->state);
	if (perf->enabled && (state == PERF_EVENT_STATE_OFF ||
			      state == PERF_EVENT_STATE_ERROR)) {
		aux.truncated = 1;
		damon_perf_obs_state(&perf->obs, cpu, DAMON_PERF_ST_BOUND);
		perf_event_enable(event);
		damon_perf_obs_state(&perf->obs, cpu, DAMON_PERF_ST_ENABLED);
		/*
		 * Take the PERF_RECORD_AUX of the overrun, if any, now, so that
		 * the next drain does not count it again.  The event's context
		 * lock, which perf_event_enable() took after the perf core
		 * released it having disabled the event, orders the record
		 * before this read.
		 */
		perf_event_read_kernel_aux(event, perf->aux_buf, 0, &flags,
					   &offset);
	}
	damon_perf_obs_aux_end(&perf->obs, cpu, &aux);
}

/*
 * @cpu is going offline, and its AUX areas go with its events: stop each
 * event, which makes the PMU driver publish what it wrote, and decode the
 * records that no drain has read into the ring of the CPU this runs on,
 * @cpu itself (the callbacks of CPUHP_AP_DAMON_PERF_ONLINE run on the CPU
 * going down, before the PMU driver's own callback resets it).  They stay
 * there for the kdamond's next drain, which drains the rings of offline
 * CPUs too: the kdamond is the only consumer of the rings.  Records that do
 * not fit count as overflows of the ring.  An overrun that no drain has
 * recovered from yet is counted as a drain would count it.  Called with the
 * CPU hotplug lock held for write, which keeps the kdamond's AUX drain, and
 * so its use of the read buffer, out.
 */
static void damon_perf_aux_offline(struct damon_perf *perf, unsigned int cpu)
{
	struct perf_event *event;
	enum perf_event_state state;
	unsigned int i;

	for (i = 0; i < perf->nr_events; i++) {
		struct damon_perf_obs_aux aux = {
			.size = DAMON_PERF_AUX_PAGES << PAGE_SHIFT,
		};

		event = *damon_perf_event_slot(perf, cpu, i);
		if (!event || !has_aux(event))
			continue;
		state = READ_ONCE(event->state);
		if (perf->enabled && (state == PERF_EVENT_STATE_OFF ||
				      state == PERF_EVENT_STATE_ERROR))
			aux.truncated = 1;
		perf_event_disable(event);
		damon_perf_aux_read(perf, event, DAMON_PERF_DRAIN_LATER, &aux);
		damon_perf_obs_aux_end(&perf->obs, cpu, &aux);
	}
}

/* Drain the AUX area of every event that has one, as @mode says. */
static void damon_perf_aux_drain(struct damon_perf *perf,
				 enum damon_perf_drain_mode mode)
{
	struct perf_event *event;
	unsigned int cpu, i;

	/* the CPU hotplug callbacks release events */
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		for (i = 0; i < perf->nr_events; i++) {
			event = *damon_perf_event_slot(perf, cpu, i);
			if (event && has_aux(event))
				damon_perf_aux_drain_event(perf, event, cpu,
							   mode);
		}
	}
	cpus_read_unlock();
}

/*
 * Drain every CPU's ring, updating the regions if @update; returns the
 * number of regions, or an error.
 */
static int damon_perf_drain(struct damon_perf *perf, bool update)
{
	int nr_regions = damon_perf_view(perf);
	enum damon_perf_drain_mode mode;
	unsigned int cpu;

	if (nr_regions < 0)
		mode = DAMON_PERF_DRAIN_NO_VIEW;
	else
		mode = update ? DAMON_PERF_DRAIN_UPDATE :
			DAMON_PERF_DRAIN_ACCOUNT;

	if (perf->aux_buf)
		damon_perf_aux_drain(perf, mode);
	for_each_possible_cpu(cpu)
		damon_perf_drain_cpu(perf, cpu, mode);
	return nr_regions;
}

/*
 * Bring the access rate of region @i of the view up to date with sampling
 * interval @to, for the intervals since it was last, which had no samples
 * of it: they are counted as accessed for as long as its credit lasts, one
 * interval each, and as not accessed from there on.  The credit is at most
 * an aggregation's intervals (see damon_perf_update_hit()), and so are the
 * intervals counted as accessed here.
 */
static __always_inline void damon_perf_age(struct damon_perf *perf,
					   unsigned int i, unsigned long to,
					   struct damon_attrs *attrs)
{
	struct damon_perf_est *est = &perf->est[i];
	struct damon_region *r = est->region;
	unsigned long intervals = to - est->synced;
	unsigned long accessed;

	if (!intervals)
		return;
	accessed = min_t(unsigned long, intervals,
			 est->credit >> DAMON_PERF_EST_SHIFT);
	est->credit -= accessed << DAMON_PERF_EST_SHIFT;
	intervals -= accessed;
	while (accessed--)
		damon_update_region_access_rate(r, true, attrs);
	/* with no last_nr_accesses, an interval not accessed takes nothing */
	if (intervals && r->last_nr_accesses)
		damon_update_region_access_rate_idle(r, intervals, attrs);
	est->synced = to;
}

/* Pages of region @idx of the view, at least one. */
static u64 damon_perf_pages(struct damon_perf *perf, unsigned int idx)
{
	struct damon_addr_range *ar = &perf->ranges[idx];

	return max(1UL, (ar->end - ar->start) >> PAGE_SHIFT);
}

/*
 * Weigh a sparse sampler's samples: learn the pages a sample stands for,
 * @perf->weight, from the regions sampled in this interval and before.
 *
 * Say a sampler takes on average L samples a page of the pages accessed in
 * an interval, 1/L the weight, and a region of P pages has a share f of
 * them accessed: its samples since DAMON core last read the regions (see
 * damon_perf_sync()), T intervals ago, are S, about
 * Poisson(L * f * P * T).  Then E[S * (S - 1)] is
 * (L * f * P * T)^2, so the sum over the regions of S * (S - 1) / P, over
 * the sum of S, is about L * T times the mean of f over the samples, the
 * noise of S taking nothing from it.  The weight is T * sum(S) over
 * sum(S * (S - 1) / P): 1/L where the sampled regions are accessed in full
 * in every interval, and more where only a share of their pages is, each
 * interval: the samples tell L * f, not L and f apart, and the regions
 * denser than that mean count as accessed in every interval.  Every sample
 * counts, however sparse the sampler: one region's samples of one interval,
 * which may be too few to tell a density, decide nothing alone.  The sums of
 * the spans between earlier reads count too, each half as much as the next.
 * One page, the one a sample hit, at least; kept until some region has two
 * samples.
 */
static void damon_perf_weigh(struct damon_perf *perf)
{
	struct damon_perf_est *est;
	u64 a, b, sq, den;
	unsigned int i;

	if (perf->exact)
		return;
	for (i = 0; i < perf->nr_hit; i++) {
		est = &perf->est[perf->hit[i]];
		a = est->total;
		b = min_t(u64, a + est->samples, DAMON_PERF_EST_TOTAL_MAX);
		/* a span's first samples are enough to weigh it */
		if (perf->nr_samples + b - a > DAMON_PERF_EST_LAYOUT_MAX)
			break;
		/* b * (b - 1) - a * (a - 1), which is 0 for b = 1 */
		perf->sq += div64_u64((b - a) * (a + b - 1) <<
				      DAMON_PERF_EST_SHIFT,
				      damon_perf_pages(perf, perf->hit[i]));
		perf->nr_samples += b - a;
		est->total = b;
	}
	sq = perf->past_sq + perf->sq;
	den = perf->past_den +
		perf->nr_samples * (perf->now + 1 - perf->laid_out);
	if (!sq)
		return;
	/* den / sq pages, in 1/DAMON_PERF_EST_ONE, if below the highest */
	if (den >> DAMON_PERF_EST_SHIFT >= sq)
		perf->weight = DAMON_PERF_EST_WEIGHT_MAX;
	else
		perf->weight = mul_u64_u64_div_u64(den, (u64)DAMON_PERF_EST_ONE <<
						   DAMON_PERF_EST_SHIFT, sq);
	perf->weight = clamp(perf->weight, (u64)DAMON_PERF_EST_ONE,
			     DAMON_PERF_EST_WEIGHT_MAX);
}

/* The credit a region may hold: an aggregation's intervals. */
static u64 damon_perf_credit_max(struct damon_attrs *attrs)
{
	u64 intervals = attrs->aggr_interval / max(attrs->sample_interval, 1UL);

	return min_t(u64, max(intervals, 1ULL) << DAMON_PERF_EST_SHIFT,
		     U32_MAX);
}

/*
 * Update the regions of the interval being checked, the one after
 * @perf->now: give each sampled region the credit its samples are worth, and
 * count it as accessed if that makes one interval's credit.  Returns the
 * highest &damon_region->nr_accesses of the regions counted as accessed.
 *
 * The Accessed bit check counts a region as accessed if one random page of
 * it was: in a share of the intervals equal to the share of its pages
 * accessed in each.  The estimator aims at the same.  The samples of a
 * region on distinct pages, times the pages a sample stands for, over the
 * pages of the region, are the share of it accessed in the interval, and
 * the region's credit accumulates these shares (its samples, which a
 * sampler that comes back to a page after another may count again, counted
 * up to its pages): it is counted as accessed in every interval that finds
 * one interval's credit, which the credit gives back, whether the interval
 * had samples of it or not (see damon_perf_age()).  Where every event is
 * sampled (@perf->exact), a sample is an access of a page of its own and
 * stands for that one page, and the count is the Accessed bit check's, in
 * expectation, with less spread.  A sparse sampler's samples stand for more
 * pages (see damon_perf_weigh()), and a share of a small region may be worth
 * many intervals: it counts the region as accessed in as many of its next
 * intervals, up to an aggregation's (damon_perf_credit_max()), where a share
 * of one interval at most would count it once per sample, far below what the
 * Accessed bit check counts of a region all of whose pages are accessed.
 * The credit goes over to the next layout of the regions (see
 * damon_perf_build_view()).
 */
static unsigned int damon_perf_update_hit(struct damon_perf *perf,
					  struct damon_attrs *attrs)
{
	u64 share, credit, pages, credit_max = damon_perf_credit_max(attrs);
	unsigned long now = perf->now + 1;
	unsigned int max_nr_accesses = 0, i, idx;
	struct damon_perf_est *est;
	struct damon_region *r;

	damon_perf_weigh(perf);
	for (i = 0; i < perf->nr_hit; i++) {
		idx = perf->hit[i];
		est = &perf->est[idx];
		pages = damon_perf_pages(perf, idx);
		/* a page sampled again, after another, is no more pages */
		share = div64_u64(min_t(u64, est->samples, pages) *
				  perf->weight, pages);
		est->samples = 0;
		damon_perf_add_warm(perf, idx);
		/* the intervals before this one spend the credit first */
		damon_perf_age(perf, idx, now - 1, attrs);
		credit = min(est->credit + share, credit_max);
		if (credit >= DAMON_PERF_EST_ONE) {
			credit -= DAMON_PERF_EST_ONE;
			r = est->region;
			damon_update_region_access_rate(r, true, attrs);
			est->synced = now;
			max_nr_accesses = max(r->nr_accesses, max_nr_accesses);
		}
		est->credit = credit;
	}
	perf->nr_hit = 0;
	perf->now = now;
	return max_nr_accesses;
}

/*
 * Bring every region up to date with the last interval checked, walking the
 * warm ones only (the others are, see damon_perf_warm()), let the next
 * layout inherit what is left of their credits (damon_perf_carry_over()),
 * and have the next drain check the view, as DAMON core may change the
 * regions from here on.  The samples counted so far weigh half as much from
 * here on, whether the regions are laid out anew or not (see
 * damon_perf_weigh()).  Returns the highest &damon_region->nr_accesses of
 * the regions.
 */
static unsigned int damon_perf_sync(struct damon_perf *perf,
				    struct damon_attrs *attrs)
{
	unsigned int max_nr_accesses = 0, nr_warm = 0, w, i;

	/*
	 * with no check since the last sync, as for a commit right after an
	 * aggregation's end, every region is up to date, and DAMON core may
	 * have freed some of those the view names
	 */
	if (!perf->view_valid || perf->view_check)
		return 0;
	for (w = 0; w < perf->nr_warm; w++) {
		i = perf->warm[w];
		damon_perf_age(perf, i, perf->now, attrs);
		max_nr_accesses = max(perf->est[i].region->nr_accesses,
				      max_nr_accesses);
		/* only a sampled region, which is warm, has a total */
		perf->est[i].total = 0;
		if (damon_perf_warm(perf, i))
			perf->warm[nr_warm++] = i;
		else
			perf->est[i].warm = false;
	}
	perf->nr_warm = nr_warm;
	perf->carry_ok = true;
	perf->view_check = true;

	/* a span in which no interval was checked yet goes on */
	if (perf->now == perf->laid_out)
		return max_nr_accesses;
	perf->past_sq = (perf->past_sq + perf->sq) / 2;
	perf->past_den = (perf->past_den + perf->nr_samples *
			  (perf->now - perf->laid_out)) / 2;
	perf->sq = 0;
	perf->nr_samples = 0;
	perf->laid_out = perf->now;
	return max_nr_accesses;
}

/*
 * Whether DAMON core, after this access check, reads the access rates of the
 * regions or changes the regions before the next one: at the end of an
 * aggregation interval, an operations update interval or a scheme's apply
 * interval, or after a commit, which may also have moved those ends.
 */
static bool damon_perf_core_reads(struct damon_ctx *ctx)
{
	unsigned long passed = ctx->passed_sample_intervals;
	struct damos *s;

	if (ctx->perf->commit_seen || passed >= ctx->next_aggregation_sis ||
	    passed >= ctx->next_ops_update_sis)
		return true;
	damon_for_each_scheme(s, ctx) {
		if (passed >= s->next_apply_sis)
			return true;
	}
	return false;
}

/**
 * damon_perf_check_accesses() - Access check of a perf-sampling context.
 * @ctx:	The context.
 *
 * Drains every CPU's ring of @ctx, and counts each region as accessed for
 * this sampling interval or not, from the samples it got in it and before
 * (see damon_perf_update_hit()).
 * Called by the kdamond once per sampling interval, in place of
 * &damon_operations->check_accesses.
 *
 * The cost of a check grows with the records and the regions they hit, not
 * with the regions: the view of the regions is kept while DAMON core leaves
 * them alone, and only the regions that got samples have their access rates
 * updated.  The others are brought up to date, in one step each, where DAMON
 * core reads the rates or changes the regions: at the end of the check that
 * precedes it (see damon_perf_core_reads()), and in damon_commit_ctx()
 * (damon_perf_sync_regions()).
 *
 * Return: the highest &damon_region->nr_accesses of the regions at the end
 * of an aggregation interval, where DAMON core uses it; at other intervals,
 * that of the regions counted as accessed in this one.
 */
unsigned int damon_perf_check_accesses(struct damon_ctx *ctx)
{
	struct damon_perf *perf = ctx->perf;
	unsigned int max_nr_accesses;

	if (!perf)
		return 0;
	/* without a view, no region is updated, as if the interval had not been */
	if (damon_perf_drain(perf, true) < 0)
		return 0;
	max_nr_accesses = damon_perf_update_hit(perf, &ctx->attrs);
	if (damon_perf_core_reads(ctx))
		max_nr_accesses = damon_perf_sync(perf, &ctx->attrs);
	perf->commit_seen = false;
	return max_nr_accesses;
}

/**
 * damon_perf_sync_regions() - Bring the access rates of the regions up to date.
 * @ctx:	The context.
 *
 * Called by damon_commit_ctx() before it changes anything of @ctx: a running
 * perf-sampling context updates the access rates of its regions lazily (see
 * damon_perf_check_accesses()), so this brings every region up to date with
 * the last access check and lets the next check lay the regions out anew.
 * Does nothing for a context that does not sample.
 */
void damon_perf_sync_regions(struct damon_ctx *ctx)
{
	struct damon_perf *perf = ctx->perf;

	if (!perf)
		return;
	damon_perf_sync(perf, &ctx->attrs);
	/* the commit may change the targets: no credit goes over */
	perf->carry_ok = false;
	perf->view_valid = false;
	perf->commit_seen = true;
}

/**
 * damon_perf_walk_busy() - Call a function on the regions that may be counted.
 * @ctx:	The context.
 * @fn:		The function, called with each region and @arg.
 * @arg:	The second argument of @fn.
 *
 * Called by DAMON core at the end of an aggregation, which at one region a
 * page would otherwise walk hundreds of thousands of regions to change those
 * few that were accessed.  Calls @fn on each region of @ctx that may have a
 * &damon_region->nr_accesses or ->last_nr_accesses other than zero, which
 * are among the warm ones (see damon_perf_warm()), if the view still lays out
 * the regions.  Every other region has both at zero.  The regions must be up
 * to date with the last access check, as they are at an aggregation's end
 * (see damon_perf_core_reads()).
 *
 * Return: whether it called @fn on every such region: false, calling it on
 * none, if @ctx does not sample, its view is not laid out, or DAMON core
 * changed the regions or the targets since it was.
 */
bool damon_perf_walk_busy(struct damon_ctx *ctx,
			  void (*fn)(struct damon_region *r, void *arg),
			  void *arg)
{
	struct damon_perf *perf = ctx->perf;
	unsigned int w;

	if (!perf || !perf->view_valid || !damon_perf_layout_holds(perf))
		return false;
	for (w = 0; w < perf->nr_warm; w++)
		fn(perf->est[perf->warm[w]].region, arg);
	return true;
}

/*
 * A producer filled its ring to half: have the kdamond drain.  Runs on that
 * producer's CPU, in hard interrupt context.
 */
static void damon_perf_kick(struct irq_work *work)
{
	struct damon_perf *perf = container_of(work, struct damon_perf, kick);
	struct task_struct *kdamond = READ_ONCE(perf->kdamond);

	/*
	 * Pairs with the xchg() in damon_perf_sleep(): the ring's head,
	 * published before the push that queued us did, is seen by the drain
	 * that takes @drain_wanted.
	 */
	smp_store_release(&perf->drain_wanted, true);
	/*
	 * wake_up_process() orders the store above before its look at the
	 * kdamond's state, pairing with set_current_state() in
	 * damon_perf_sleep(): either the kdamond sees @drain_wanted before it
	 * sleeps, or it is woken up.
	 */
	if (kdamond)
		wake_up_process(kdamond);
}

/**
 * damon_perf_sleep() - Sleep out a sampling interval, draining if asked to.
 * @ctx:	The context, which samples.
 * @usecs:	Microseconds to sleep.
 *
 * Called by the kdamond in place of its sleep of a sampling interval.  A
 * producer that fills its ring to half asks for a drain (see
 * damon_perf_rings_set_kick()): the kdamond then drains every ring, counting
 * the records for the interval it sleeps in, as the access check at the end
 * of the interval would, and sleeps on to the same end.  A ring holds a few
 * intervals' records at the highest rate its events sample at; without the
 * early drain, a kdamond that drains late, or a sampling interval longer
 * than the largest ring holds, would lose records.
 *
 * The interval ends on time, and kthread_stop() ends it, however often the
 * producers ask: producers that fill the rings faster than the kdamond
 * drains them would otherwise keep it draining for ever.  The access check
 * that follows drains what is left.
 */
void damon_perf_sleep(struct damon_ctx *ctx, unsigned long usecs)
{
	struct damon_perf *perf = ctx->perf;
	struct hrtimer_sleeper t;
	/* the slack kdamond_usleep() would give */
	u64 slack = usecs > 20 * USEC_PER_MSEC ? TICK_NSEC : NSEC_PER_USEC;

	/*
	 * One relative timer for the whole interval: a drain in the middle
	 * does not move its end, and the sleep reads no clock of its own.
	 */
	hrtimer_init_sleeper_on_stack(&t, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	hrtimer_set_expires_range_ns(&t.timer,
				     ns_to_ktime((u64)usecs * NSEC_PER_USEC),
				     slack);
	hrtimer_sleeper_start_expires(&t, HRTIMER_MODE_REL);
	for (;;) {
		/*
		 * Pairs with wake_up_process() in damon_perf_kick() and in
		 * the timer's hrtimer_wakeup(), which clears @t.task first.
		 */
		set_current_state(TASK_IDLE);
		/* kthread_stop() wakes us, as it does a long kdamond_usleep() */
		if (!READ_ONCE(t.task) || kthread_should_stop())
			break;
		/*
		 * Pairs with the smp_store_release() in damon_perf_kick().  A
		 * full barrier, so that the drain reads the rings after it
		 * clears the flag: a kick that sets it again in between is
		 * either seen by this drain, with its ring, or left set for
		 * the next.
		 */
		if (READ_ONCE(perf->drain_wanted) &&
		    xchg(&perf->drain_wanted, false)) {
			__set_current_state(TASK_RUNNING);
			damon_perf_drain(perf, true);
			cond_resched();
			continue;
		}
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	hrtimer_cancel(&t.timer);
	destroy_hrtimer_on_stack(&t.timer);
}

/*
 * Event lifecycle: create, bind, enable, release
 */

/* arm_spe_pmu's pa_enable field: bit 1 of config, PMSCR_EL1.PA */
#define DAMON_PERF_ARM_SPE_PA	BIT_ULL(1)

/* Whether @pmu is one of arm_spe_pmu's, which it names arm_spe_<n>. */
static bool damon_perf_arm_spe(const struct pmu *pmu)
{
	return pmu->name && str_has_prefix(pmu->name, "arm_spe_");
}

/*
 * The smallest period, in operations, of an event of arm_spe_pmu with which
 * the busiest core fills no more of its AUX area between two drains, every
 * @sample_us microseconds, than a drain reads.
 */
static u64 damon_perf_spe_min_period(unsigned long sample_us)
{
	return DIV_ROUND_UP_ULL((u64)DAMON_PERF_SPE_OPS_PER_US * sample_us,
				DAMON_PERF_AUX_RECORDS);
}

/*
 * Raise the period of @attr, the context's event @idx, which @event of
 * arm_spe_pmu was created from, to damon_perf_spe_min_period() of
 * @sample_us, and say so in the log.  Other PMUs' periods count other
 * things, and are left as they are.
 */
static void damon_perf_spe_floor(struct perf_event_attr *attr,
				 const struct perf_event *event,
				 unsigned int idx, unsigned long sample_us)
{
	u64 floor = damon_perf_spe_min_period(sample_us);

	if (attr->freq || !damon_perf_arm_spe(event->pmu) ||
	    attr->sample_period >= floor)
		return;
	pr_info("perf event %u (type %u): with a period of %llu operations, a busy CPU would fill its AUX area before the drain every %lu us; sampling with a period of %llu\n",
		idx, attr->type, attr->sample_period, sample_us, floor);
	attr->sample_period = floor;
}

/*
 * PMUs of other drivers than arm_spe_pmu that write ARM SPE records into
 * their AUX areas, added by damon_perf_add_spe_pmu(), with the bits of
 * config with which each writes physical address packets.
 */
static struct damon_perf_spe_entry {
	struct pmu *pmu;
	u64 pa_config;
} damon_perf_spe_pmus[4];
static DEFINE_MUTEX(damon_perf_spe_pmus_lock);

/**
 * damon_perf_add_spe_pmu() - Let the AUX drain decode a PMU's records.
 * @pmu:	A registered PMU that writes ARM SPE records into AUX areas.
 * @pa_config:	The bits of config with which @pmu writes physical address
 *		packets, or 0 if it writes them always.
 *
 * The AUX drain accepts the PMUs of arm_spe_pmu, which it knows by name,
 * and refuses other PMUs that write an AUX area, as their records are in
 * other formats.  A driver that writes SPE records under another name, such
 * as one that emulates SPE for tests, adds its PMU here before DAMON is to
 * use it, and removes it with damon_perf_remove_spe_pmu() before
 * unregistering it.  Contexts that already sample from @pmu are not
 * affected by either.  A physical address space context refuses an event
 * of @pmu whose config lacks any of @pa_config, as it does arm_spe_pmu's
 * events without pa_enable.
 *
 * Return: 0 on success, -EEXIST if @pmu is added already, or -ENOSPC if
 * too many PMUs are.
 */
int damon_perf_add_spe_pmu(struct pmu *pmu, u64 pa_config)
{
	int i, free = -1, err = -ENOSPC;

	mutex_lock(&damon_perf_spe_pmus_lock);
	for (i = 0; i < ARRAY_SIZE(damon_perf_spe_pmus); i++) {
		if (damon_perf_spe_pmus[i].pmu == pmu) {
			err = -EEXIST;
			goto out;
		}
		if (!damon_perf_spe_pmus[i].pmu && free < 0)
			free = i;
	}
	if (free >= 0) {
		damon_perf_spe_pmus[free].pmu = pmu;
		damon_perf_spe_pmus[free].pa_config = pa_config;
		err = 0;
	}
out:
	mutex_unlock(&damon_perf_spe_pmus_lock);
	return err;
}
EXPORT_SYMBOL_GPL(damon_perf_add_spe_pmu);

/**
 * damon_perf_remove_spe_pmu() - Undo damon_perf_add_spe_pmu().
 * @pmu:	A PMU added by damon_perf_add_spe_pmu(), or any other.
 */
void damon_perf_remove_spe_pmu(struct pmu *pmu)
{
	int i;

	mutex_lock(&damon_perf_spe_pmus_lock);
	for (i = 0; i < ARRAY_SIZE(damon_perf_spe_pmus); i++) {
		if (damon_perf_spe_pmus[i].pmu == pmu)
			damon_perf_spe_pmus[i].pmu = NULL;
	}
	mutex_unlock(&damon_perf_spe_pmus_lock);
}
EXPORT_SYMBOL_GPL(damon_perf_remove_spe_pmu);

/*
 * Whether @pmu writes ARM SPE records into its AUX areas (arm_spe_pmu's
 * PMUs, and those added above), and, in @pa, the bits of config with which
 * it writes physical address packets.
 */
static bool damon_perf_spe_pmu(struct pmu *pmu, u64 *pa)
{
	bool found = false;
	int i;

	if (damon_perf_arm_spe(pmu)) {
		*pa = DAMON_PERF_ARM_SPE_PA;
		return true;
	}
	mutex_lock(&damon_perf_spe_pmus_lock);
	for (i = 0; !found && i < ARRAY_SIZE(damon_perf_spe_pmus); i++) {
		found = damon_perf_spe_pmus[i].pmu == pmu;
		if (found)
			*pa = damon_perf_spe_pmus[i].pa_config;
	}
	mutex_unlock(&damon_perf_spe_pmus_lock);
	return found;
}

/*
 * Refuse the event @event, the context's event @idx, if its PMU is one of
 * the tracing PMUs, which count kernel events and give no data address, or
 * writes an AUX area in a format other than ARM SPE's, the one the AUX
 * drain decodes (Intel PT and CoreSight trace instructions).  Their type
 * numbers, but for the tracepoint one, are assigned at boot, so the PMU is
 * known only once the event exists.  For a context that wants physical
 * addresses (@phys), also refuse an SPE event whose config leaves out the
 * physical address packets: every record would be inv_phys.
 */
static struct perf_event *damon_perf_check_pmu(struct perf_event *event,
					       unsigned int idx, bool phys)
{
	static const char * const no_addr[] = {
		"tracepoint", "kprobe", "uprobe",
	};
	const char *name = event->pmu->name ?: "";
	const char *why = "gives no data addresses";
	unsigned int i;
	u64 pa;

	for (i = 0; i < ARRAY_SIZE(no_addr); i++) {
		if (!strcmp(name, no_addr[i]))
			goto refuse;
	}
	if (!has_aux(event))
		return event;
	why = "writes AUX records in a format other than ARM SPE's";
	if (!damon_perf_spe_pmu(event->pmu, &pa))
		goto refuse;
	if (!phys || (event->attr.config & pa) == pa)
		return event;
	pr_warn("perf event %u (type %u): the %s PMU writes physical addresses only with config bits %#llx set (pa_enable), which paddr monitoring needs\n",
		idx, event->attr.type, name, pa);
	perf_event_release_kernel(event);
	return ERR_PTR(-EINVAL);
refuse:
	pr_warn("perf event %u (type %u): the %s PMU %s\n",
		idx, event->attr.type, name, why);
	perf_event_release_kernel(event);
	return ERR_PTR(-EOPNOTSUPP);
}

/*
 * Create the event @attr, the context's event @idx, on @cpu, for @perf (NULL
 * for a trial) of a context that wants physical addresses if @phys.  PMUs
 * that cannot exclude privilege levels (PERF_PMU_CAP_NO_EXCLUDE, such as AMD
 * IBS) refuse any exclude flag with -EINVAL, and exclude_kernel is set by
 * default: such an event is tried again without the flags, and @attr keeps
 * what worked, for the other CPUs.  In a virtual address space context, the
 * samples of kernel addresses that this lets in are then dropped as such.  A
 * PMU that refused the flags for any other reason is not given an event
 * without them: -EINVAL stands.
 */
static struct perf_event *damon_perf_create_event(struct perf_event_attr *attr,
						  unsigned int idx,
						  unsigned int cpu,
						  struct damon_perf *perf,
						  bool phys)
{
	struct perf_event_attr all;
	struct perf_event *event;

	event = perf_event_create_kernel_counter(attr, cpu, NULL,
						 damon_perf_overflow, perf);
	if (!IS_ERR(event))
		return damon_perf_check_pmu(event, idx, phys);
	if (PTR_ERR(event) != -EINVAL ||
	    !(attr->exclude_kernel || attr->exclude_hv))
		return event;
	all = *attr;
	all.exclude_kernel = 0;
	all.exclude_hv = 0;
	event = perf_event_create_kernel_counter(&all, cpu, NULL,
						 damon_perf_overflow, perf);
	if (IS_ERR(event))
		return ERR_PTR(-EINVAL);
	if (!(event->pmu->capabilities & PERF_PMU_CAP_NO_EXCLUDE)) {
		perf_event_release_kernel(event);
		return ERR_PTR(-EINVAL);
	}
	event = damon_perf_check_pmu(event, idx, phys);
	if (IS_ERR(event))
		return event;
	pr_info("perf event %u (type %u config %#llx): the PMU cannot exclude kernel or hypervisor samples, so it samples them too\n",
		idx, attr->type, attr->config);
	*attr = all;
	return event;
}

/* Release the events of @cpu; they go back to UNINIT. */
static void damon_perf_release_cpu(struct damon_perf *perf, unsigned int cpu)
{
	unsigned int i;

	for (i = 0; i < perf->nr_events; i++) {
		struct perf_event **slot = damon_perf_event_slot(perf, cpu, i);

		if (!*slot)
			continue;
		perf_event_disable(*slot);
		perf_event_release_kernel(*slot);
		*slot = NULL;
	}
	damon_perf_obs_state(&perf->obs, cpu, DAMON_PERF_ST_UNINIT);
}

/*
 * Event bind: an event is bound once it sits, disabled and ready to be
 * scheduled, in @cpu's perf context.
 */
static int damon_perf_bind(struct perf_event *event, unsigned int cpu)
{
	if (event->cpu != cpu || READ_ONCE(event->state) < PERF_EVENT_STATE_OFF)
		return -EIO;
	return 0;
}

/*
 * Give @event an AUX area if its PMU writes one, and the context the buffer
 * its drain reads into.
 */
static int damon_perf_aux_alloc(struct damon_perf *perf,
				struct perf_event *event)
{
	if (!has_aux(event))
		return 0;
	if (!perf->aux_buf) {
		perf->aux_buf = kmalloc(DAMON_PERF_AUX_STITCH, GFP_KERNEL);
		if (!perf->aux_buf)
			return -ENOMEM;
	}
	return perf_event_alloc_kernel_aux(event, DAMON_PERF_AUX_PAGES);
}

/*
 * Event create and bind of the context's events on @cpu.  On failure,
 * nothing is left on @cpu and its state is ERROR.
 */
static int damon_perf_create_cpu(struct damon_perf *perf, unsigned int cpu)
{
	struct perf_event *event;
	unsigned int i, nr = 0;
	int err = 0;

	for (i = 0; i < perf->nr_events; i++) {
		event = damon_perf_create_event(&perf->attrs[i], i, cpu, perf,
						perf->phys);
		if (IS_ERR(event)) {
			err = PTR_ERR(event);
			/* a PMU that does not cover @cpu, as on hybrid CPUs */
			if (err == -ENOENT)
				continue;
			goto fail;
		}
		*damon_perf_event_slot(perf, cpu, i) = event;
		nr++;
		err = damon_perf_aux_alloc(perf, event);
		if (err)
			goto fail;
	}
	if (!nr) {
		damon_perf_obs_state(&perf->obs, cpu, DAMON_PERF_ST_NOPMU);
		return 0;
	}
	damon_perf_obs_state(&perf->obs, cpu, DAMON_PERF_ST_CREATED);

	for (i = 0; i < perf->nr_events; i++) {
		event = *damon_perf_event_slot(perf, cpu, i);
		err = event ? damon_perf_bind(event, cpu) : 0;
		if (err)
			goto fail;
	}
	damon_perf_obs_state(&perf->obs, cpu, DAMON_PERF_ST_BOUND);
	return 0;

fail:
	damon_perf_log_refusal(&perf->attrs[i], i, cpu, err);
	damon_perf_release_cpu(perf, cpu);
	damon_perf_obs_state(&perf->obs, cpu, DAMON_PERF_ST_ERROR);
	return err;
}

/*
 * Event enable, on @cpu, or disable for a pause, which takes the events back
 * to BOUND.  Called with the CPU hotplug lock held.
 */
static void damon_perf_enable_cpu(struct damon_perf *perf, unsigned int cpu,
				  bool enable)
{
	unsigned int i;
	bool any = false;

	for (i = 0; i < perf->nr_events; i++) {
		struct perf_event *event = *damon_perf_event_slot(perf, cpu, i);

		if (!event)
			continue;
		if (enable)
			perf_event_enable(event);
		else
			perf_event_disable(event);
		any = true;
	}
	if (any)
		damon_perf_obs_state(&perf->obs, cpu, enable ?
				     DAMON_PERF_ST_ENABLED : DAMON_PERF_ST_BOUND);
}

/*
 * CPU hotplug callbacks.  They run with the CPU hotplug lock held, which
 * serializes them against each other and against damon_perf_enable().
 */
static int damon_perf_cpu_online(unsigned int cpu, struct hlist_node *node)
{
	struct damon_perf *perf = hlist_entry(node, struct damon_perf, node);
	int err;

	err = damon_perf_create_cpu(perf, cpu);
	if (err) {
		/* fail the start, but never a CPU online */
		return perf->starting ? err : 0;
	}
	if (perf->enabled)
		damon_perf_enable_cpu(perf, cpu, true);
	return 0;
}

static int damon_perf_cpu_offline(unsigned int cpu, struct hlist_node *node)
{
	struct damon_perf *perf = hlist_entry(node, struct damon_perf, node);

	if (perf->aux_buf)
		damon_perf_aux_offline(perf, cpu);
	damon_perf_release_cpu(perf, cpu);
	return 0;
}

static void damon_perf_free(struct damon_perf *perf)
{
	damon_perf_rings_free(perf->rings);
	kfree(perf->events);
	kfree(perf->attrs);
	kfree(perf->targets);
	damon_perf_free_view(perf);
	kfree(perf->aux_buf);
	damon_perf_obs_exit(&perf->obs);
	kfree(perf);
}

static struct damon_perf *damon_perf_alloc(struct damon_ctx *ctx)
{
	struct damon_perf *perf;

	perf = kzalloc(sizeof(*perf), GFP_KERNEL);
	if (!perf)
		return NULL;
	perf->ctx = ctx;
	init_irq_work(&perf->kick, damon_perf_kick);
	perf->phys = damon_perf_wants_phys(ctx);
	perf->nr_events = ctx->nr_perf_events;
	perf->weight = DAMON_PERF_EST_ONE;
	prandom_seed_state(&perf->rnd, get_random_u64());
	INIT_LIST_HEAD(&perf->list);
	perf->attrs = kcalloc(perf->nr_events, sizeof(*perf->attrs),
			      GFP_KERNEL);
	perf->events = kcalloc(nr_cpu_ids * perf->nr_events,
			       sizeof(*perf->events), GFP_KERNEL);
	if (!perf->attrs || !perf->events || damon_perf_obs_init(&perf->obs))
		goto fail;
	return perf;

fail:
	damon_perf_free(perf);
	return NULL;
}

/* One line in the kernel log for an event that no online CPU's PMU takes. */
static void damon_perf_log_uncovered(const struct perf_event_attr *attr,
				     unsigned int idx)
{
	pr_warn("perf event %u (type %u config %#llx): no online CPU has a PMU of this type that knows the event (-%d)\n",
		idx, attr->type, attr->config, ENOENT);
}

/*
 * Each event must exist on at least one CPU: a PMU that covers only some
 * CPUs (hybrid CPUs) is used where it exists, but a PMU that covers none of
 * the online CPUs fails the start.
 */
static int damon_perf_check_covered(struct damon_perf *perf)
{
	unsigned int i, cpu;
	bool covered;

	cpus_read_lock();
	for (i = 0; i < perf->nr_events; i++) {
		covered = false;
		for_each_online_cpu(cpu) {
			if (*damon_perf_event_slot(perf, cpu, i)) {
				covered = true;
				break;
			}
		}
		if (!covered)
			break;
	}
	cpus_read_unlock();
	if (i == perf->nr_events)
		return 0;
	damon_perf_log_uncovered(&perf->attrs[i], i);
	return -ENOENT;
}

/* Show the online CPUs as ERROR: perf refused an event of @perf on all. */
static void damon_perf_refused(struct damon_perf *perf)
{
	unsigned int cpu;

	cpus_read_lock();
	for_each_online_cpu(cpu)
		damon_perf_obs_state(&perf->obs, cpu, DAMON_PERF_ST_ERROR);
	cpus_read_unlock();
}

/*
 * Release the events of @perf, whose PMU of one event covers no online CPU,
 * and show the CPUs as ERROR: perf refused that event everywhere.
 */
static void damon_perf_uncovered(struct damon_perf *perf)
{
	cpuhp_state_remove_instance(damon_perf_hp_state, &perf->node);
	damon_perf_refused(perf);
}

/*
 * Create and release each of the @nr events @attrs, of a context that wants
 * physical addresses if @phys, on the first online CPU whose PMU takes it
 * (a PMU of a hybrid CPU covers only some), in process context.  A PMU
 * that cannot be used is refused here rather than in a CPU hotplug
 * callback: creating an event of the tracing PMUs registers a tracepoint or
 * a probe, which takes the CPU hotplug lock that those callbacks hold.  An
 * event that a PMU takes without exclude flags keeps them cleared in
 * @attrs, and unless @sample_us is 0, an event of arm_spe_pmu keeps the
 * period that its AUX area takes at a sampling interval of @sample_us.
 */
static int damon_perf_try_events(struct perf_event_attr *attrs,
				 unsigned int nr, bool phys,
				 unsigned long sample_us)
{
	struct perf_event *event;
	unsigned int i, cpu;
	int err = 0;

	for (i = 0; !err && i < nr; i++) {
		err = -ENOENT;
		cpu = 0;
		for_each_online_cpu(cpu) {
			event = damon_perf_create_event(&attrs[i], i, cpu, NULL,
							phys);
			err = PTR_ERR_OR_ZERO(event);
			if (!err && sample_us)
				damon_perf_spe_floor(&attrs[i], event, i,
						     sample_us);
			if (!err)
				perf_event_release_kernel(event);
			/*
			 * Not under cpus_read_lock() (see above): a CPU that
			 * went offline since is one more that did not take it
			 */
			if (err == -ENODEV && !cpu_online(cpu))
				err = -ENOENT;
			if (err != -ENOENT)
				break;
		}
		if (err == -ENOENT)
			damon_perf_log_uncovered(&attrs[i], i);
		else if (err)
			damon_perf_log_refusal(&attrs[i], i, cpu, err);
	}
	return err;
}

/*
 * Create, disabled, every perf event of @ctx on every online CPU, and the
 * rings, without installing them in @ctx.
 */
/*
 * Whether every event of @perf samples each of its events: a period of one,
 * not a frequency.
 */
static bool damon_perf_samples_all(const struct damon_perf *perf)
{
	unsigned int i;

	for (i = 0; i < perf->nr_events; i++) {
		if (perf->attrs[i].freq || perf->attrs[i].sample_period != 1)
			return false;
	}
	return true;
}

/*
 * Capacity of the rings of a context, as a power of two: the records of
 * DAMON_PERF_RING_INTERVALS sampling intervals of @sample_us at @rate
 * samples per second per CPU, so that a kdamond that drains that late still
 * loses nothing.
 */
static unsigned int damon_perf_ring_order(u64 rate, unsigned long sample_us)
{
	u64 records;

	/* beyond these, the largest ring anyway */
	rate = min_t(u64, rate, 100 * USEC_PER_SEC);
	sample_us = min(sample_us, 10 * USEC_PER_SEC);
	records = div64_u64(rate * DAMON_PERF_RING_INTERVALS * sample_us +
			    USEC_PER_SEC - 1, USEC_PER_SEC);
	return clamp_t(unsigned int, order_base_2(records),
		       DAMON_PERF_RING_ORDER, DAMON_PERF_RING_MAX_ORDER);
}

/*
 * The highest rate @perf's events may sample at, per CPU: the one perf caps
 * sampling at, kernel.perf_event_max_sample_rate, unless every event samples
 * each of its events.  perf never throttles those: a software event's first
 * overflow in a call is not, and the page fault event has one per fault.
 * Their rate is the workload's: DAMON_PERF_RING_UNCAPPED_RATE is assumed.
 */
static u64 damon_perf_max_rate(const struct damon_perf *perf)
{
	if (perf->exact)
		return DAMON_PERF_RING_UNCAPPED_RATE;
	return max(READ_ONCE(sysctl_perf_event_sample_rate), 1);
}

static struct damon_perf *damon_perf_create(struct damon_ctx *ctx)
{
	struct damon_perf *perf;
	unsigned int order;
	int err;

	if (damon_perf_hp_state == CPUHP_INVALID)
		return ERR_PTR(-ENODEV);
	perf = damon_perf_alloc(ctx);
	if (!perf)
		return ERR_PTR(-ENOMEM);
	err = damon_perf_build_attrs(ctx, perf->attrs);
	if (err)
		goto fail;
	err = damon_perf_try_events(perf->attrs, perf->nr_events,
				    perf->phys, ctx->attrs.sample_interval);
	if (err) {
		damon_perf_refused(perf);
		goto fail;
	}

	perf->exact = damon_perf_samples_all(perf);
	order = damon_perf_ring_order(damon_perf_max_rate(perf),
				      ctx->attrs.sample_interval);
	perf->rings = damon_perf_rings_alloc(&perf->obs, order);
	if (!perf->rings) {
		err = -ENOMEM;
		goto fail;
	}
	damon_perf_rings_set_kick(perf->rings, &perf->kick);
	perf->starting = true;
	err = cpuhp_state_add_instance(damon_perf_hp_state, &perf->node);
	perf->starting = false;
	if (!err) {
		err = damon_perf_check_covered(perf);
		if (err)
			damon_perf_uncovered(perf);
	}
	if (err)
		goto fail;
	return perf;

fail:
	damon_perf_free(perf);
	return ERR_PTR(err);
}

/**
 * damon_perf_start() - Create the perf events of a context about to start.
 * @ctx:	The context.
 *
 * Creates, disabled, every perf event of @ctx on every online CPU, and its
 * rings.  Called by damon_start() before the kdamond is created, so that a
 * PMU that cannot be used fails the start with nothing started and nothing
 * left behind.  Does nothing for a context without perf events.
 *
 * Return: 0 on success, or the error of the first event perf refused.
 */
int damon_perf_start(struct damon_ctx *ctx)
{
	struct damon_perf *perf;

	if (!damon_perf_mode(ctx))
		return 0;
	if (ctx->perf)
		return -EBUSY;
	perf = damon_perf_create(ctx);
	if (IS_ERR(perf))
		return PTR_ERR(perf);
	WRITE_ONCE(ctx->perf, perf);
	return 0;
}

/**
 * damon_perf_enable() - Start sampling for a context.
 * @ctx:	The context, whose perf events damon_perf_start() created.
 *
 * Called by the kdamond when it starts monitoring.
 */
void damon_perf_enable(struct damon_ctx *ctx)
{
	struct damon_perf *perf = ctx->perf;
	unsigned int cpu;

	if (!perf)
		return;
	/* the kdamond, which drains when a producer kicks */
	WRITE_ONCE(perf->kdamond, current);
	cpus_read_lock();
	perf->enabled = true;
	for_each_online_cpu(cpu)
		damon_perf_enable_cpu(perf, cpu, true);
	cpus_read_unlock();

	mutex_lock(&damon_perf_consumers_lock);
	list_add_tail_rcu(&perf->list, &damon_perf_consumers);
	mutex_unlock(&damon_perf_consumers_lock);
}

/**
 * damon_perf_pause() - Pause sampling while a context is deactivated.
 * @ctx:	The context, deactivated by the watermarks of its schemes.
 *
 * Called by the kdamond when its watermarks deactivate it.  Disables the
 * events of @ctx and stops taking access reports, and accounts for what is
 * in the rings, so that nothing sampled before or during the pause counts
 * as an access when the context is active again.  Does nothing if sampling
 * is paused or not enabled.
 */
void damon_perf_pause(struct damon_ctx *ctx)
{
	struct damon_perf *perf = ctx->perf;
	unsigned int cpu;

	if (!perf || !perf->enabled)
		return;
	mutex_lock(&damon_perf_consumers_lock);
	list_del_rcu(&perf->list);
	mutex_unlock(&damon_perf_consumers_lock);
	cpus_read_lock();
	perf->enabled = false;
	for_each_online_cpu(cpu)
		damon_perf_enable_cpu(perf, cpu, false);
	cpus_read_unlock();
	perf->paused = true;
	/* wait for damon_report_access() callers still pushing */
	synchronize_rcu();
	/* out of the list now: damon_perf_enable() adds it again */
	INIT_LIST_HEAD(&perf->list);
	/* callbacks of the deactivated kdamond may read the regions */
	damon_perf_sync(perf, &ctx->attrs);
	damon_perf_drain(perf, false);
}

/**
 * damon_perf_resume() - Resume sampling when a context is active again.
 * @ctx:	The context.
 *
 * Called by the kdamond when its watermarks activate it.  Does nothing if
 * sampling is not paused.
 */
void damon_perf_resume(struct damon_ctx *ctx)
{
	struct damon_perf *perf = ctx->perf;

	if (!perf || !perf->paused)
		return;
	perf->paused = false;
	/*
	 * every region is up to date: no access check ran in the pause; and no
	 * credit earned before it counts after it
	 */
	perf->carry_ok = false;
	perf->view_valid = false;
	damon_perf_enable(ctx);
}

/**
 * damon_perf_stop() - Release the perf events and rings of a context.
 * @ctx:	The context.
 *
 * Called by the kdamond when it stops monitoring, before it drops its
 * regions, and by damon_start() when the kdamond could not be created.
 * Records left in the rings and AUX areas are drained and matched, so that
 * they are accounted for, but update no region.  Nothing of the perf state of @ctx
 * outlives this call.
 */
void damon_perf_stop(struct damon_ctx *ctx)
{
	struct damon_perf *perf = ctx->perf;
	unsigned int cpu;

	if (!perf)
		return;
	mutex_lock(&damon_perf_consumers_lock);
	if (!list_empty(&perf->list))
		list_del_rcu(&perf->list);
	mutex_unlock(&damon_perf_consumers_lock);

	/* AUX areas go with their events: stop them and take their records */
	if (perf->aux_buf) {
		cpus_read_lock();
		/* paused, or never enabled: they are disabled already */
		if (perf->enabled) {
			perf->enabled = false;
			for_each_online_cpu(cpu)
				damon_perf_enable_cpu(perf, cpu, false);
		}
		cpus_read_unlock();
		damon_perf_aux_drain(perf, damon_perf_view(perf) >= 0 ?
				     DAMON_PERF_DRAIN_ACCOUNT :
				     DAMON_PERF_DRAIN_NO_VIEW);
	}

	/* releases the events of every online CPU */
	cpuhp_state_remove_instance(damon_perf_hp_state, &perf->node);
	WRITE_ONCE(ctx->perf, NULL);
	/*
	 * Wait for overflow handlers and damon_report_access() callers that
	 * may still be pushing into @perf's rings; NMI handlers count as RCU
	 * readers.
	 */
	synchronize_rcu();
	/* and for the last kick of one of them to have run */
	irq_work_sync(&perf->kick);
	/*
	 * Account for what is still in the rings, so that every enqueued
	 * record is dequeued; the regions are not updated any more.
	 */
	damon_perf_drain(perf, false);
	damon_perf_free(perf);
}

/**
 * damon_perf_validate() - Check that the perf events of a context are usable.
 * @ctx:	The context, not running.
 * @running:	The running context @ctx is to be committed to, or NULL.
 *
 * Creates and releases each perf event of @ctx on the current CPU, to
 * find out before committing them to a running kdamond whether perf takes
 * them.  Does nothing for a context without perf events, or with the same
 * perf events as @running, which damon_perf_commit() keeps as they are.  A
 * PMU that takes one user at a time refuses the trial with -EBUSY while
 * @running holds it, so changing such events needs a restart.
 *
 * Return: 0 if perf takes them all, or the error of the first it refused.
 */
int damon_perf_validate(struct damon_ctx *ctx, struct damon_ctx *running)
{
	struct perf_event_attr *attrs;
	int err;

	if (!damon_perf_mode(ctx))
		return 0;
	if (running && damon_perf_events_eq(ctx, running))
		return 0;
	attrs = kcalloc(ctx->nr_perf_events, sizeof(*attrs), GFP_KERNEL);
	if (!attrs)
		return -ENOMEM;
	err = damon_perf_build_attrs(ctx, attrs);
	if (!err)
		err = damon_perf_try_events(attrs, ctx->nr_perf_events,
					    damon_perf_wants_phys(ctx), 0);
	kfree(attrs);
	return err;
}

/*
 * Put back the perf events @dst had before a commit whose new events could
 * not be created (@err), and its sampling if it had to let it go.
 */
static int damon_perf_commit_undo(struct damon_ctx *dst,
				  struct damon_perf_event_attr *old_events,
				  unsigned int old_nr, int err)
{
	kfree(dst->perf_events);
	dst->perf_events = old_events;
	dst->nr_perf_events = old_nr;
	/* old events of another address space cannot go on */
	if (dst->perf && dst->perf->phys != damon_perf_wants_phys(dst)) {
		pr_warn("commit: the new perf events cannot be used (%d), nor the old ones with the new operations\n",
			err);
		damon_perf_stop(dst);
		return err;
	}
	pr_warn("commit: the new perf events cannot be used (%d); the old ones are kept\n",
		err);
	if (dst->perf)
		return 0;
	/* they were released for the new ones: take them back */
	err = damon_perf_start(dst);
	if (!err)
		damon_perf_enable(dst);
	return err;
}

/**
 * damon_perf_commit() - Commit the perf events of one context to another.
 * @dst:	The context to change; running, if it is, in this kdamond.
 * @src:	The context to take the perf events from.
 *
 * If @dst is running and what perf is to be given changes, the new events
 * are created, from the calling kdamond, before the old ones are released,
 * so that if perf refuses the new ones @dst keeps sampling with the old
 * ones.  Only a PMU that takes one user at a time (-EBUSY) makes the old
 * events go first; they are created again if the new ones fail.
 *
 * Return: 0 on success, or if the old events were kept; a negative error
 * code if @dst cannot go on sampling.
 */
int damon_perf_commit(struct damon_ctx *dst, struct damon_ctx *src)
{
	bool running = dst->kdamond == current;
	/* the operations, which damon_commit_ctx() set already, may change */
	bool same = damon_perf_events_eq(dst, src) &&
		(!dst->perf || dst->perf->phys == damon_perf_wants_phys(dst));
	struct damon_perf_event_attr *old_events = dst->perf_events;
	unsigned int old_nr = dst->nr_perf_events;
	struct damon_perf *perf = NULL;
	int err;

	if (!running || same)
		return damon_set_perf_events(dst, src->perf_events,
					     src->nr_perf_events);

	dst->perf_events = NULL;
	dst->nr_perf_events = 0;
	err = damon_set_perf_events(dst, src->perf_events, src->nr_perf_events);
	if (err)
		return damon_perf_commit_undo(dst, old_events, old_nr, err);
	if (damon_perf_mode(dst)) {
		perf = damon_perf_create(dst);
		if (IS_ERR(perf) && PTR_ERR(perf) == -EBUSY && dst->perf) {
			damon_perf_stop(dst);
			perf = damon_perf_create(dst);
		}
		if (IS_ERR(perf))
			return damon_perf_commit_undo(dst, old_events, old_nr,
						      PTR_ERR(perf));
	}
	damon_perf_stop(dst);
	if (perf) {
		WRITE_ONCE(dst->perf, perf);
		damon_perf_enable(dst);
	}
	kfree(old_events);
	return 0;
}

static int __init damon_perf_init(void)
{
	int ret;

	/*
	 * After the dynamic states, where PMU drivers such as arm_spe_pmu
	 * reset the PMU of a CPU: on the way up, the events of a CPU are
	 * enabled once that is done, and, on the way down, their AUX areas
	 * are read before.
	 */
	ret = cpuhp_setup_state_multi(CPUHP_AP_DAMON_PERF_ONLINE,
				      "mm/damon/perf:online",
				      damon_perf_cpu_online,
				      damon_perf_cpu_offline);
	if (ret) {
		pr_err("cannot register CPU hotplug callbacks: %d\n", ret);
		return ret;
	}
	damon_perf_hp_state = CPUHP_AP_DAMON_PERF_ONLINE;
	return 0;
}

subsys_initcall(damon_perf_init);

#include "tests/perf-kunit.h"
