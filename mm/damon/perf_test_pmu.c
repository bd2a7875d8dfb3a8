// SPDX-License-Identifier: GPL-2.0
/*
 * A test PMU for DAMON's perf event access checks.
 *
 * Machines without sampling hardware (virtual machines, CI) cannot run the
 * paths that AMD IBS, Intel PEBS and hybrid CPUs take through the perf core.
 * This PMU drives the same perf core entry points the way those drivers do,
 * from an hrtimer per event:
 *
 * - it delivers samples in task context (through task_work, on the way back
 *   to user space), in softirq or hardirq context, or in a real NMI, sent
 *   by the hrtimer to its own CPU and taken by an NMI handler, as the x86
 *   PMI handler does (x86 only);
 * - the address of a sample is what the interrupted task really touches:
 *   the value of a variable in the workload (config1) when the workload
 *   (config2) is interrupted, or else the user stack pointer of a user task
 *   and a kernel address for a kernel thread;
 * - it fills data_src, and, like IBS, may fill the physical address itself;
 * - like Intel's large PEBS, it may batch records, sending all but the last
 *   of each interrupt to perf_event_output(), if the event's attributes let
 *   the x86 driver pick large PEBS;
 * - besides "damon_test", it registers "damon_test_ibs", which has
 *   PERF_PMU_CAP_NO_EXCLUDE like the IBS PMUs, "damon_test_hybrid", which
 *   covers only the first half of the CPUs, like a hybrid PMU, and
 *   "damon_test_aux", which, like ARM SPE, calls no overflow handler but
 *   writes records in SPE's format into the event's AUX area, with physical
 *   address packets only if asked in config (the phys bit, its pa_enable),
 *   and refuses freq.  It treats the area as arm_spe_pmu does (see the AUX
 *   section below): one transaction for as long as the event runs, records
 *   made visible only when they reach the limit it sets (the watermark, or
 *   the space left) and at stop, and after an overrun it stays stopped
 *   until the perf core calls pmu->start() again; and, as arm_spe_pmu's CPU
 *   hotplug callbacks do, a dynamic CPU hotplug state of its own resets the
 *   buffer of a CPU coming online or going offline under a running event,
 *   which then writes nothing more, and publishes a size worked out from a
 *   write pointer of zero at its next pmu->stop().  Its records are padded
 *   to 64 bytes, or, with the packed bit, written at their own length one
 *   after the other, as an implementation that aligns them to no boundary
 *   does, with an alignment packet after every fourth.  Either way, as with
 *   arm_spe_pmu, the room before a limit too small for a record is padded,
 *   so no record runs across a limit, which is always a page boundary.
 *
 * The period is in nanoseconds (sample_period), or sample_freq samples per
 * second.  What the PMUs made and how they delivered it is counted in
 * /sys/kernel/debug/damon_test_pmu/stats.  Writing N to .../pass lets N more
 * events be created and then refuses every one with -EBUSY, as a PMU that
 * someone else took would, until -1 is written.
 *
 * It is a test module, which Kconfig lets be nothing but a module.  It can
 * be unloaded once no event of its PMUs exists (each event holds a reference
 * to it) and every sample it queued for task context has been delivered.
 */

#define pr_fmt(fmt) "damon-test-pmu: " fmt

#include <linux/bitfield.h>
#include <linux/unaligned.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/damon.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/init.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/sched/task_stack.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/uaccess.h>

#include <asm/irq_regs.h>
#ifdef CONFIG_X86_LOCAL_APIC
#include <asm/apic.h>
#include <asm/nmi.h>
#define DAMON_TEST_PMU_HAS_NMI	1
#else
#define DAMON_TEST_PMU_HAS_NMI	0
#endif

/* Where samples are delivered: the values of the damon_perf_sample field. */
enum damon_test_pmu_deliver {
	DAMON_TEST_PMU_TASK,
	DAMON_TEST_PMU_SOFTIRQ,
	DAMON_TEST_PMU_HARDIRQ,
	DAMON_TEST_PMU_NMI,
};

#define DAMON_TEST_PMU_DELIVER_MASK	GENMASK_ULL(1, 0)
#define DAMON_TEST_PMU_BATCH_MASK	GENMASK_ULL(15, 8)
#define DAMON_TEST_PMU_PHYS		BIT_ULL(16)
#define DAMON_TEST_PMU_STORE		BIT_ULL(17)
#define DAMON_TEST_PMU_MIX		BIT_ULL(18)
#define DAMON_TEST_PMU_ONLY_TARGET	BIT_ULL(19)
#define DAMON_TEST_PMU_NO_CONTEXT	BIT_ULL(20)
#define DAMON_TEST_PMU_PACKED		BIT_ULL(21)

/* Shortest period, in nanoseconds. */
#define DAMON_TEST_PMU_MIN_PERIOD	10000ULL

/* Events of this PMU that can be active on one CPU at a time. */
#define DAMON_TEST_PMU_SLOTS		8

/*
 * struct damon_test_event - State of one event.
 * @event:	The event.
 * @timer:	Fires once per period.
 * @mode:	The timer's mode: soft for softirq delivery, else hard.
 * @period:	The period, in nanoseconds.
 * @deliver:	&enum damon_test_pmu_deliver.
 * @batch:	Records per interrupt.
 * @large:	Whether records are batched like large PEBS.
 * @stopped:	Whether the event is stopped; written with interrupts off on
 *		the event's CPU, or in its NMI.
 * @delivering: Whether samples are being delivered: perf may stop and start
 *		the event from perf_event_overflow(), in NMI context, where the
 *		timer cannot be touched.
 * @nmi_pending: Whether an NMI is to deliver a sample of this event.
 * @aux:	Whether records go to the AUX area.
 * @seq:	Number of the next record, for the mix of sample kinds.
 * @handle:	The AUX transaction, while @aux_open.
 * @aux_open:	Whether a transaction is open; it is while the event runs,
 *		unless the area overran.
 * @aux_room:	Bytes the transaction may write: up to the limit.
 * @aux_written: Bytes written in the transaction, not yet made visible.
 * @buf_reset:	Whether the CPU hotplug callback reset the buffer under the
 *		open transaction; written with interrupts off on the event's
 *		CPU.
 */
struct damon_test_event {
	struct perf_event *event;
	struct hrtimer timer;
	enum hrtimer_mode mode;
	u64 period;
	unsigned int deliver;
	unsigned int batch;
	bool large;
	bool stopped;
	bool delivering;
	bool nmi_pending;
	bool aux;
	unsigned int seq;
	struct perf_output_handle handle;
	bool aux_open;
	unsigned long aux_room;
	unsigned long aux_written;
	bool buf_reset;
};

/*
 * struct damon_test_pmu_cpu - Per-CPU state.
 * @slots:	Events of the test PMUs active on the CPU.
 * @nmi_sent:	NMIs sent by the CPU to itself and not yet taken; changed
 *		with this_cpu operations, which an NMI cannot split.
 * @work:	task_work of a sample to be delivered in task context.
 * @work_event: Event of @work.
 * @work_cpu:	CPU that queued @work.
 * @work_queued: Whether @work is queued.
 */
struct damon_test_pmu_cpu {
	struct damon_test_event *slots[DAMON_TEST_PMU_SLOTS];
	unsigned long nmi_sent;
	struct callback_head work;
	struct damon_test_event *work_event;
	unsigned int work_cpu;
	unsigned int work_queued;
};

static DEFINE_PER_CPU(struct damon_test_pmu_cpu, damon_test_pmu_cpu);

/* What the PMUs made, and how it went; per CPU, summed when read. */
enum damon_test_pmu_stat {
	DAMON_TEST_PMU_INTERRUPTS,
	DAMON_TEST_PMU_RECORDS,
	DAMON_TEST_PMU_OVERFLOW_CALLS,
	DAMON_TEST_PMU_OUTPUT_CALLS,
	DAMON_TEST_PMU_THROTTLED,
	DAMON_TEST_PMU_NO_TASK_WORK,
	DAMON_TEST_PMU_AUX_RECORDS,
	DAMON_TEST_PMU_AUX_TRUNCATED,
	DAMON_TEST_PMU_AUX_LIMITS,
	DAMON_TEST_PMU_AUX_LOST,
	DAMON_TEST_PMU_AUX_STARTS,
	DAMON_TEST_PMU_AUX_STOPPED,
	DAMON_TEST_PMU_CPU_RESETS,
	DAMON_TEST_PMU_AUX_RESETS,
	DAMON_TEST_PMU_NR_STATS,
};

static const char * const damon_test_pmu_stat_names[] = {
	"interrupts", "records", "overflow_calls", "output_calls",
	"throttled", "no_task_work", "aux_records", "aux_truncated",
	"aux_limits", "aux_lost", "aux_starts", "aux_stopped", "cpu_resets",
	"aux_resets",
};

static DEFINE_PER_CPU(unsigned long[DAMON_TEST_PMU_NR_STATS],
		      damon_test_pmu_stats);

static void damon_test_pmu_count(enum damon_test_pmu_stat stat)
{
	/* this_cpu_inc() is a single instruction on x86, NMI-safe */
	this_cpu_inc(damon_test_pmu_stats[stat]);
}

static void damon_test_pmu_count_n(enum damon_test_pmu_stat stat,
				   unsigned long n)
{
	this_cpu_add(damon_test_pmu_stats[stat], n);
}

/*
 * struct damon_test_pmu - One of the test PMUs.
 * @pmu:	The PMU.
 * @name:	Its name.
 * @cpus:	CPUs it covers.
 * @aux:	Whether it writes records into AUX areas.
 */
struct damon_test_pmu {
	struct pmu pmu;
	const char *name;
	cpumask_t cpus;
	bool aux;
};

/*
 * struct damon_test_aux - An AUX area, as the PMU's setup_aux() sees it.
 * @pages:	Its pages, from the perf core.
 * @size:	Its size in bytes.
 */
struct damon_test_aux {
	void **pages;
	unsigned long size;
};

static struct damon_test_pmu damon_test_pmus[4];

/* The debugfs directory, removed at unload. */
static struct dentry *damon_test_pmu_dir;

/*
 * task_work callbacks queued and not yet finished; module exit waits for
 * them, as the callback is code of this module.
 */
static atomic_t damon_test_pmu_works = ATOMIC_INIT(0);

/* Events still to be let through before refusing them; -1 for all. */
static atomic_t damon_test_pmu_pass = ATOMIC_INIT(-1);

static struct damon_test_pmu *to_damon_test_pmu(struct pmu *pmu)
{
	return container_of(pmu, struct damon_test_pmu, pmu);
}

/*
 * Making samples
 */

/* The physical address of @addr, looked up the way perf core does. */
static u64 damon_test_pmu_phys(u64 addr)
{
	struct page *page;
	u64 phys = 0;

	if (addr >= TASK_SIZE) {
		if (virt_addr_valid((void *)(uintptr_t)addr))
			phys = virt_to_phys((void *)(uintptr_t)addr);
		return phys;
	}
	if (!current->mm)
		return 0;
	pagefault_disable();
	if (get_user_page_fast_only(addr, 0, &page)) {
		phys = page_to_phys(page) + offset_in_page(addr);
		put_page(page);
	}
	pagefault_enable();
	return phys;
}

/*
 * The address of a sample taken now, or 0 if there is none to take: the
 * value of the workload's variable if it is the workload that runs, else
 * the user stack pointer of a user task, else a kernel address.
 */
static u64 damon_test_pmu_addr(struct perf_event *event)
{
	u64 cfg = event->attr.config;
	void __user *var = u64_to_user_ptr(event->attr.config1);
	pid_t target = event->attr.config2;
	bool user = current->mm && !(current->flags & PF_KTHREAD);
	u64 addr;

	if (user && target && task_tgid_nr(current) == target && var) {
		if (copy_from_user_nofault(&addr, var, sizeof(addr)))
			return 0;
		return addr;
	}
	if (cfg & DAMON_TEST_PMU_ONLY_TARGET)
		return 0;
	if (user)
		return user_stack_pointer(task_pt_regs(current));
	return (u64)(uintptr_t)current;
}

/*
 * SPE records are aligned to this many bytes with padding, unless packed;
 * none is longer.
 */
#define DAMON_TEST_SPE_ALIGN	64

/*
 * The boundary an alignment packet of packed records pads to, and the
 * bytes of its header: the extended header of an alignment to 16 bytes.
 */
#define DAMON_TEST_SPE_PKT_ALIGN	16
#define DAMON_TEST_SPE_HDR_ALIGN0	0x23
#define DAMON_TEST_SPE_HDR_ALIGN1	0x00

/*
 * Write into @p an SPE record of a load or store of @addr (physical address
 * @phys, if not zero) by the current task at @pc, or of a branch, with no
 * data address, if @addr is zero; padded to DAMON_TEST_SPE_ALIGN bytes.
 * The record names the task in a context packet, as SPE does with
 * CONFIG_PID_IN_CONTEXTIDR, if @context.  The packet encodings are the Arm
 * ARM's.  Returns the length of the record, the padding left out.
 */
static unsigned int damon_test_spe_record(u8 *p, u64 pc, u64 addr, u64 phys,
					  bool store, bool context)
{
	u8 *start = p, *end = p + DAMON_TEST_SPE_ALIGN;

	if (context && current->mm && !(current->flags & PF_KTHREAD)) {
		*p++ = 0x64;		/* context: CONTEXTIDR_EL1, 4 bytes */
		put_unaligned_le32(task_pid_nr(current), p);
		p += 4;
	}
	*p++ = 0xb0;			/* address: PC, 8 bytes */
	put_unaligned_le64(pc, p);
	p += 8;
	*p++ = 0x52;			/* events, 2 bytes: retired, L1D */
	put_unaligned_le16(0x6, p);
	p += 2;
	*p++ = 0x98;			/* counter: total latency, 2 bytes */
	put_unaligned_le16(20, p);
	p += 2;
	if (addr) {
		*p++ = 0x49;		/* operation: load/store class */
		*p++ = store ? 0x1 : 0x0;
		*p++ = 0xb2;		/* address: data virtual, 8 bytes */
		put_unaligned_le64(addr & GENMASK_ULL(55, 0), p);
		p += 8;
		if (phys) {
			*p++ = 0xb3;	/* address: data physical, NS set */
			put_unaligned_le64(phys | BIT_ULL(63), p);
			p += 8;
		}
		*p++ = 0x53;		/* data source, 2 bytes: L1 hit */
		put_unaligned_le16(0, p);
		p += 2;
	} else {
		*p++ = 0x4a;		/* operation: branch class */
		*p++ = 0x1;		/* conditional */
	}
	*p++ = 0x01;			/* end */
	memset(p, 0, end - p);		/* padding */
	return p - start;
}

/*
 * Write into @p the alignment packet that pads from offset @at of the area
 * to the next DAMON_TEST_SPE_PKT_ALIGN boundary; returns its length.  The
 * bytes it skips are not padding bytes but 0xff, which no decoder that reads
 * them as packets could take.  A packet whose second byte would lie past the
 * boundary ends at it, as the decoders see it, and that byte is padding.
 */
static unsigned int damon_test_spe_align(u8 *p, unsigned long at)
{
	unsigned int len;

	len = DAMON_TEST_SPE_PKT_ALIGN - (at & (DAMON_TEST_SPE_PKT_ALIGN - 1));
	len = max(len, 2U);
	memset(p, 0xff, len);
	p[0] = DAMON_TEST_SPE_HDR_ALIGN0;
	p[1] = DAMON_TEST_SPE_HDR_ALIGN1;
	return len;
}

/*
 * The AUX area, as arm_spe_pmu treats it
 *
 * start() opens a transaction (perf_aux_output_begin()) and sets its limit:
 * the page boundary after the wakeup point the perf core asks for (one
 * watermark on from the last wakeup), or the last page boundary before the
 * data the owner has not consumed, whichever comes first.  Records go into
 * the area up to the limit and stay out of sight, aux_head unmoved, until
 * the limit is reached: that is SPE's buffer management interrupt, where
 * the records of the interrupt still to come are lost, the transaction is
 * committed with perf_aux_output_end() and a new one opened.  stop()
 * commits what was written.  A new transaction that finds no room left
 * pads the space there is, is flagged PERF_AUX_FLAG_TRUNCATED and
 * committed empty, and the PMU stays stopped: only pmu->start(), called by
 * the perf core once the owner enabled the event again, opens the area.
 *
 * The transaction is opened and closed with interrupts off on the event's
 * CPU (start(), stop(), the timer) or in its NMI; stop() sets @stopped
 * before it closes the transaction, so that an NMI taken in between leaves
 * the transaction alone.
 */

/*
 * Copy @len bytes of @src, or zeros if @src is NULL, to @offset of the AUX
 * area @buf, wrapping.
 */
static void damon_test_aux_copy(struct damon_test_aux *buf,
				unsigned long offset, const u8 *src,
				unsigned long len)
{
	unsigned long off, n;
	void *dst;

	while (len) {
		off = offset % buf->size;
		n = min(len, PAGE_SIZE - offset_in_page(off));
		dst = buf->pages[off >> PAGE_SHIFT] + offset_in_page(off);
		if (src) {
			memcpy(dst, src, n);
			src += n;
		} else {
			memset(dst, 0, n);
		}
		offset += n;
		len -= n;
	}
}

/* Fill @len bytes at the head of @te's transaction with padding. */
static void damon_test_aux_pad(struct damon_test_event *te,
			       struct damon_test_aux *buf, unsigned long len)
{
	if (!len)
		return;
	/* zero bytes are SPE's padding packets */
	damon_test_aux_copy(buf, te->handle.head, NULL, len);
	perf_aux_output_skip(&te->handle, len);
}

/*
 * Open a transaction on @te's area and set its limit.  Returns 0; or
 * -EIO if the perf core found the area full, or -ENOSPC if the room left
 * ends before a record fits, which pads it and flags the area truncated:
 * either way the perf core has been asked to disable the event.
 */
static int damon_test_aux_begin(struct damon_test_event *te)
{
	struct perf_output_handle *h = &te->handle;
	unsigned long head, tail, wakeup, limit;
	struct damon_test_aux *buf;

	buf = perf_aux_output_begin(h, te->event);
	if (!buf)
		return -EIO;
	/* records are aligned; padding of all the room may have left the
	 * head unaligned
	 */
	head = h->head % buf->size;
	damon_test_aux_pad(te, buf,
			   min(ALIGN(head, DAMON_TEST_SPE_ALIGN) - head,
			       h->size));
	if (!h->size)
		goto truncated;
	head = h->head % buf->size;
	tail = (h->head + h->size) % buf->size;
	wakeup = h->wakeup % buf->size;
	limit = buf->size;
	/* not into the data the owner has not consumed */
	if (head < tail)
		limit = round_down(tail, PAGE_SIZE);
	/* a wakeup due before the end of this lap: at the page after it */
	if (h->wakeup - h->head < h->size && head <= wakeup)
		limit = min(limit, round_up(wakeup, PAGE_SIZE));
	/* both aligned: a limit past the head has room for a record */
	if (limit > head) {
		te->aux_room = limit - head;
		te->aux_written = 0;
		te->aux_open = true;
		return 0;
	}
	damon_test_aux_pad(te, buf, h->size);
truncated:
	damon_test_pmu_count(DAMON_TEST_PMU_AUX_TRUNCATED);
	perf_aux_output_flag(h, PERF_AUX_FLAG_TRUNCATED);
	perf_aux_output_end(h, 0);
	return -ENOSPC;
}

/* Commit what the open transaction of @te wrote, and close it. */
static void damon_test_aux_end(struct damon_test_event *te)
{
	te->aux_open = false;
	perf_aux_output_end(&te->handle, te->aux_written);
}

/*
 * Close the open transaction of @te after the CPU hotplug callback reset the
 * buffer: as arm_spe_perf_aux_output_end() does with PMBPTR_EL1 zero, the
 * size published is the distance from the head to address zero, here from
 * the address of the area's first page, as SPE's from its mapping.
 */
static void damon_test_aux_end_reset(struct damon_test_event *te)
{
	struct damon_test_aux *buf = perf_get_aux(&te->handle);
	unsigned long base = (unsigned long)buf->pages[0];

	te->aux_written = 0UL - base - te->handle.head % buf->size;
	damon_test_aux_end(te);
}

/*
 * The buffer interrupt: the limit is reached.  The transaction is
 * committed and a new one opened; if that fails, the PMU stops, as
 * arm_spe_pmu_stop() from the interrupt handler does.  Returns whether the
 * PMU goes on.
 */
static bool damon_test_aux_limit(struct damon_test_event *te)
{
	damon_test_pmu_count(DAMON_TEST_PMU_AUX_LIMITS);
	damon_test_aux_end(te);
	if (!damon_test_aux_begin(te))
		return true;
	WRITE_ONCE(te->stopped, true);
	te->event->hw.state |= PERF_HES_STOPPED | PERF_HES_UPTODATE;
	damon_test_pmu_count(DAMON_TEST_PMU_AUX_STOPPED);
	return false;
}

/*
 * Write one interrupt's records of @te, of @addr, into the open
 * transaction; the records after one that reaches the limit are lost.
 * The limit is reached when the room left could not take the longest
 * record, and any room left is padded, as SPE stops then.
 */
static void damon_test_pmu_aux_deliver(struct damon_test_event *te, u64 addr,
				       struct pt_regs *regs)
{
	u64 cfg = te->event->attr.config;
	bool packed = cfg & DAMON_TEST_PMU_PACKED;
	u8 rec[DAMON_TEST_SPE_ALIGN + DAMON_TEST_SPE_PKT_ALIGN];
	unsigned int i, seq, len, need = DAMON_TEST_SPE_ALIGN;
	struct damon_test_aux *buf;
	unsigned long at;
	u64 a, phys;

	if (READ_ONCE(te->stopped) || !te->aux_open || READ_ONCE(te->buf_reset))
		return;
	buf = perf_get_aux(&te->handle);
	if (packed)
		need += DAMON_TEST_SPE_PKT_ALIGN;
	for (i = 0; i < te->batch; i++) {
		seq = te->seq++;
		a = (cfg & DAMON_TEST_PMU_MIX) && !(seq % 4) ? 0 : addr;
		phys = a && (cfg & DAMON_TEST_PMU_PHYS) ?
			damon_test_pmu_phys(a) : 0;
		len = damon_test_spe_record(rec, instruction_pointer(regs), a,
					    phys, cfg & DAMON_TEST_PMU_STORE,
					    !(cfg & DAMON_TEST_PMU_NO_CONTEXT));
		at = te->handle.head + te->aux_written;
		if (!packed)
			len = DAMON_TEST_SPE_ALIGN;
		else if (seq % 4 == 3)
			len += damon_test_spe_align(rec + len, at + len);
		damon_test_aux_copy(buf, at, rec, len);
		te->aux_written += len;
		damon_test_pmu_count(DAMON_TEST_PMU_RECORDS);
		damon_test_pmu_count(DAMON_TEST_PMU_AUX_RECORDS);
		if (te->aux_room - te->aux_written < need) {
			damon_test_aux_copy(buf, at + len, NULL,
					    te->aux_room - te->aux_written);
			te->aux_written = te->aux_room;
			damon_test_pmu_count_n(DAMON_TEST_PMU_AUX_LOST,
					       te->batch - i - 1);
			damon_test_aux_limit(te);
			return;
		}
	}
}

/*
 * Deliver one interrupt's records of @te with @regs, as a PMU interrupt
 * handler does.  Returns whether perf throttled the event.
 */
static bool damon_test_pmu_deliver(struct damon_test_event *te,
				   struct pt_regs *regs)
{
	struct perf_event *event = te->event;
	u64 cfg = event->attr.config;
	struct perf_sample_data data;
	unsigned int i;
	u64 addr;

	damon_test_pmu_count(DAMON_TEST_PMU_INTERRUPTS);
	addr = damon_test_pmu_addr(event);
	if (!addr && (cfg & DAMON_TEST_PMU_ONLY_TARGET))
		return false;
	if (te->aux) {
		damon_test_pmu_aux_deliver(te, addr, regs);
		return false;
	}
	te->delivering = true;
	for (i = 0; i < te->batch; i++) {
		bool no_addr = (cfg & DAMON_TEST_PMU_MIX) && !(te->seq++ % 4);

		perf_sample_data_init(&data, 0, event->hw.last_period);
		if (addr && !no_addr) {
			data.addr = addr;
			data.sample_flags |= PERF_SAMPLE_ADDR;
		}
		data.data_src.val = PERF_MEM_S(LVL, HIT) | PERF_MEM_S(LVL, L1);
		data.data_src.val |= cfg & DAMON_TEST_PMU_STORE ?
			PERF_MEM_S(OP, STORE) : PERF_MEM_S(OP, LOAD);
		data.sample_flags |= PERF_SAMPLE_DATA_SRC;
		/* like IBS; without it, perf_prepare_sample() looks it up */
		if ((cfg & DAMON_TEST_PMU_PHYS) && !no_addr &&
		    (event->attr.sample_type & PERF_SAMPLE_PHYS_ADDR)) {
			data.phys_addr = damon_test_pmu_phys(addr);
			data.sample_flags |= PERF_SAMPLE_PHYS_ADDR;
		}
		damon_test_pmu_count(DAMON_TEST_PMU_RECORDS);
		/* large PEBS: all but the last record go to the buffer */
		if (te->large && i < te->batch - 1) {
			damon_test_pmu_count(DAMON_TEST_PMU_OUTPUT_CALLS);
			perf_event_output(event, &data, regs);
			continue;
		}
		damon_test_pmu_count(DAMON_TEST_PMU_OVERFLOW_CALLS);
		if (perf_event_overflow(event, &data, regs)) {
			damon_test_pmu_count(DAMON_TEST_PMU_THROTTLED);
			te->delivering = false;
			return true;
		}
	}
	te->delivering = false;
	return false;
}

/*
 * Task context: the sample is taken on the way back to user space of the
 * task the timer interrupted, if it is still on the CPU of the event.
 */
static void damon_test_pmu_task_work(struct callback_head *work)
{
	struct damon_test_pmu_cpu *pc =
		container_of(work, struct damon_test_pmu_cpu, work);
	struct damon_test_event *te = READ_ONCE(pc->work_event);
	unsigned int i, cpu = READ_ONCE(pc->work_cpu);
	unsigned long flags;

	/*
	 * Release: the reads above happen before the timer may queue @work
	 * again; pairs with the cmpxchg() in damon_test_pmu_queue_task_work().
	 */
	smp_store_release(&pc->work_queued, 0);
	local_irq_save(flags);
	/* del() runs with interrupts off on the event's CPU: @te is stable */
	if (smp_processor_id() == cpu) {
		for (i = 0; i < DAMON_TEST_PMU_SLOTS; i++) {
			if (pc->slots[i] == te && !te->stopped) {
				damon_test_pmu_deliver(te, task_pt_regs(current));
				break;
			}
		}
	}
	/*
	 * With interrupts still off, so that the synchronize_rcu() of
	 * module exit, after it sees zero, waits for the rest of this.
	 */
	atomic_dec(&damon_test_pmu_works);
	local_irq_restore(flags);
}

static void damon_test_pmu_queue_task_work(struct damon_test_event *te)
{
	struct damon_test_pmu_cpu *pc = this_cpu_ptr(&damon_test_pmu_cpu);

	if (!current->mm || (current->flags & PF_KTHREAD) ||
	    cmpxchg(&pc->work_queued, 0, 1)) {
		damon_test_pmu_count(DAMON_TEST_PMU_NO_TASK_WORK);
		return;
	}
	pc->work_event = te;
	pc->work_cpu = smp_processor_id();
	init_task_work(&pc->work, damon_test_pmu_task_work);
	atomic_inc(&damon_test_pmu_works);
	if (task_work_add(current, &pc->work, TWA_RESUME)) {
		atomic_dec(&damon_test_pmu_works);
		/* nothing of @work was read: no ordering needed */
		WRITE_ONCE(pc->work_queued, 0);
		damon_test_pmu_count(DAMON_TEST_PMU_NO_TASK_WORK);
	}
}

#if DAMON_TEST_PMU_HAS_NMI
/*
 * The NMI handler: like the x86 PMI handler, it hands the samples of the
 * events whose NMI is pending to perf_event_overflow().  It claims only the
 * NMIs its CPU sent itself.
 */
static int damon_test_pmu_nmi(unsigned int cmd, struct pt_regs *regs)
{
	struct damon_test_pmu_cpu *pc = this_cpu_ptr(&damon_test_pmu_cpu);
	struct damon_test_event *te;
	unsigned int i;

	if (!this_cpu_read(damon_test_pmu_cpu.nmi_sent))
		return NMI_DONE;
	/* one NMI claimed; it serves every pending event */
	this_cpu_dec(damon_test_pmu_cpu.nmi_sent);
	for (i = 0; i < DAMON_TEST_PMU_SLOTS; i++) {
		te = READ_ONCE(pc->slots[i]);
		if (!te || !READ_ONCE(te->nmi_pending))
			continue;
		WRITE_ONCE(te->nmi_pending, false);
		/* the hrtimer sees it and stops; start() rearms it */
		if (damon_test_pmu_deliver(te, regs))
			WRITE_ONCE(te->stopped, true);
	}
	return NMI_HANDLED;
}

static void damon_test_pmu_send_nmi(struct damon_test_event *te)
{
	/*
	 * Same CPU: the NMI handler runs after these stores, in program
	 * order; WRITE_ONCE() and this_cpu_inc() keep the compiler from
	 * moving them past the IPI.
	 */
	WRITE_ONCE(te->nmi_pending, true);
	this_cpu_inc(damon_test_pmu_cpu.nmi_sent);
	__apic_send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);
}
#else
static void damon_test_pmu_send_nmi(struct damon_test_event *te)
{
}
#endif

static enum hrtimer_restart damon_test_pmu_timer(struct hrtimer *timer)
{
	struct damon_test_event *te =
		container_of(timer, struct damon_test_event, timer);
	enum hrtimer_restart ret = HRTIMER_RESTART;
	struct pt_regs regs, *regs_p;
	unsigned long flags;

	/* a soft timer may be interrupted by del(); keep it out */
	local_irq_save(flags);
	if (READ_ONCE(te->stopped)) {
		ret = HRTIMER_NORESTART;
		goto out;
	}
	switch (te->deliver) {
	case DAMON_TEST_PMU_TASK:
		damon_test_pmu_queue_task_work(te);
		break;
	case DAMON_TEST_PMU_SOFTIRQ:
		perf_fetch_caller_regs(&regs);
		if (damon_test_pmu_deliver(te, &regs))
			te->stopped = true;
		break;
	case DAMON_TEST_PMU_HARDIRQ:
		regs_p = get_irq_regs();
		if (!regs_p) {
			perf_fetch_caller_regs(&regs);
			regs_p = &regs;
		}
		if (damon_test_pmu_deliver(te, regs_p))
			te->stopped = true;
		break;
	case DAMON_TEST_PMU_NMI:
		damon_test_pmu_send_nmi(te);
		break;
	}
	/*
	 * A soft timer runs with interrupts on until the local_irq_save()
	 * above: a stop() and start() in between (the tick adjusting a freq
	 * event's period) queued the timer again, and it runs from there.
	 */
	if (READ_ONCE(te->stopped) || hrtimer_is_queued(timer))
		ret = HRTIMER_NORESTART;
	else
		hrtimer_forward_now(timer, ns_to_ktime(te->period));
out:
	local_irq_restore(flags);
	return ret;
}

/*
 * PMU callbacks
 */

static void damon_test_pmu_destroy(struct perf_event *event)
{
	struct damon_test_event *te = event->pmu_private;

	/* process context: waits for a callback running on another CPU */
	hrtimer_cancel(&te->timer);
	kfree(te);
	event->pmu_private = NULL;
}

static int damon_test_pmu_event_init(struct perf_event *event)
{
	struct damon_test_pmu *tp = to_damon_test_pmu(event->pmu);
	struct perf_event_attr *attr = &event->attr;
	struct damon_test_event *te;
	unsigned int deliver;

	if (attr->type != event->pmu->type)
		return -ENOENT;
	/* a hybrid PMU refuses the CPUs it does not cover */
	if (event->cpu < 0 || !cpumask_test_cpu(event->cpu, &tp->cpus))
		return -ENOENT;
	if (!is_sampling_event(event))
		return -EINVAL;
	if (atomic_read(&damon_test_pmu_pass) >= 0 &&
	    atomic_dec_if_positive(&damon_test_pmu_pass) < 0)
		return -EBUSY;
	deliver = FIELD_GET(DAMON_TEST_PMU_DELIVER_MASK, attr->config);
	if (deliver == DAMON_TEST_PMU_NMI && !DAMON_TEST_PMU_HAS_NMI)
		return -EOPNOTSUPP;
	/* as arm_spe_pmu: a period per record, never a frequency */
	if (tp->aux && attr->freq)
		return -EINVAL;

	te = kzalloc(sizeof(*te), GFP_KERNEL);
	if (!te)
		return -ENOMEM;
	te->event = event;
	te->deliver = deliver;
	te->aux = tp->aux;
	te->batch = max_t(unsigned int, 1,
			  FIELD_GET(DAMON_TEST_PMU_BATCH_MASK, attr->config));
	/* the x86 driver's condition for large PEBS */
	te->large = te->batch > 1 &&
		!(attr->freq || (attr->wakeup_events && !attr->watermark));
	if (attr->freq)
		te->period = div64_u64(NSEC_PER_SEC, attr->sample_freq ?: 1);
	else
		te->period = event->hw.sample_period;
	te->period = max(te->period, DAMON_TEST_PMU_MIN_PERIOD);
	te->stopped = true;
	te->mode = deliver == DAMON_TEST_PMU_SOFTIRQ ?
		HRTIMER_MODE_REL_PINNED_SOFT : HRTIMER_MODE_REL_PINNED_HARD;
	hrtimer_init(&te->timer, CLOCK_MONOTONIC, te->mode);
	te->timer.function = damon_test_pmu_timer;
	event->hw.last_period = event->hw.sample_period;
	event->pmu_private = te;
	event->destroy = damon_test_pmu_destroy;
	return 0;
}

static void damon_test_pmu_start(struct perf_event *event, int flags)
{
	struct damon_test_event *te = event->pmu_private;

	event->hw.state = 0;
	if (te->aux) {
		damon_test_pmu_count(DAMON_TEST_PMU_AUX_STARTS);
		/* the buffer is programmed again */
		WRITE_ONCE(te->buf_reset, false);
		/* as arm_spe_pmu_start(): no transaction, no sampling */
		if (damon_test_aux_begin(te)) {
			event->hw.state = PERF_HES_STOPPED | PERF_HES_UPTODATE;
			damon_test_pmu_count(DAMON_TEST_PMU_AUX_STOPPED);
			return;
		}
		/* the transaction is open before an NMI may use it */
		barrier();
	}
	WRITE_ONCE(te->stopped, false);
	/* from perf_event_overflow(): the running timer goes on by itself */
	if (te->delivering)
		return;
	hrtimer_start(&te->timer, ns_to_ktime(te->period), te->mode);
}

static void damon_test_pmu_stop(struct perf_event *event, int flags)
{
	struct damon_test_event *te = event->pmu_private;

	/*
	 * Interrupts are off.  A callback running on this CPU (a soft timer
	 * this interrupted) sees @stopped and does not rearm itself.
	 */
	WRITE_ONCE(te->stopped, true);
	if (!te->delivering)
		hrtimer_try_to_cancel(&te->timer);
	/* an NMI from here on sees @stopped and keeps off the transaction */
	barrier();
	if (te->aux_open && te->buf_reset)
		damon_test_aux_end_reset(te);
	else if (te->aux_open)
		damon_test_aux_end(te);
	event->hw.state = PERF_HES_STOPPED | PERF_HES_UPTODATE;
}

static int damon_test_pmu_add(struct perf_event *event, int flags)
{
	struct damon_test_pmu_cpu *pc = this_cpu_ptr(&damon_test_pmu_cpu);
	unsigned int i;

	for (i = 0; i < DAMON_TEST_PMU_SLOTS; i++) {
		if (!pc->slots[i])
			break;
	}
	if (i == DAMON_TEST_PMU_SLOTS)
		return -EBUSY;
	/* seen by the NMI handler of this CPU only */
	WRITE_ONCE(pc->slots[i], event->pmu_private);
	event->hw.state = PERF_HES_STOPPED | PERF_HES_UPTODATE;
	if (!(flags & PERF_EF_START))
		return 0;
	damon_test_pmu_start(event, flags);
	/* as arm_spe_pmu_add(): an area with no room fails the add */
	if (event->hw.state & PERF_HES_STOPPED) {
		WRITE_ONCE(pc->slots[i], NULL);
		return -EINVAL;
	}
	return 0;
}

static void damon_test_pmu_del(struct perf_event *event, int flags)
{
	struct damon_test_pmu_cpu *pc = this_cpu_ptr(&damon_test_pmu_cpu);
	unsigned int i;

	damon_test_pmu_stop(event, flags);
	for (i = 0; i < DAMON_TEST_PMU_SLOTS; i++) {
		if (pc->slots[i] == event->pmu_private)
			WRITE_ONCE(pc->slots[i], NULL);
	}
}

static void damon_test_pmu_read(struct perf_event *event)
{
}

static void *damon_test_pmu_setup_aux(struct perf_event *event, void **pages,
				      int nr_pages, bool overwrite)
{
	struct damon_test_aux *buf;

	/* as arm_spe_pmu, which needs room to pad at the end */
	if (nr_pages < 2)
		return NULL;
	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return NULL;
	buf->pages = pages;
	buf->size = (unsigned long)nr_pages << PAGE_SHIFT;
	return buf;
}

static void damon_test_pmu_free_aux(void *aux)
{
	kfree(aux);
}

/* The dynamic CPU hotplug state, or CPUHP_INVALID. */
static enum cpuhp_state damon_test_pmu_hp_state = CPUHP_INVALID;

/*
 * The CPU hotplug callback, on the way up and on the way down, on @cpu
 * itself: as __arm_spe_pmu_reset_local(), it stops the buffer and zeroes its
 * write pointer, whether an event runs or not, and leaves the event's state
 * alone.
 */
static int damon_test_pmu_reset_cpu(unsigned int cpu)
{
	struct damon_test_pmu_cpu *pc = per_cpu_ptr(&damon_test_pmu_cpu, cpu);
	struct damon_test_event *te;
	unsigned long flags;
	unsigned int i;

	WARN_ON_ONCE(cpu != smp_processor_id());
	/* the timer and the NMI handler of the events run on @cpu only */
	local_irq_save(flags);
	damon_test_pmu_count(DAMON_TEST_PMU_CPU_RESETS);
	for (i = 0; i < DAMON_TEST_PMU_SLOTS; i++) {
		te = pc->slots[i];
		if (te && te->aux && te->aux_open && !te->buf_reset) {
			WRITE_ONCE(te->buf_reset, true);
			damon_test_pmu_count(DAMON_TEST_PMU_AUX_RESETS);
		}
	}
	local_irq_restore(flags);
	return 0;
}

/*
 * sysfs: the fields of config, and the CPUs a PMU covers
 */

PMU_FORMAT_ATTR(deliver, "config:0-1");
PMU_FORMAT_ATTR(batch, "config:8-15");
PMU_FORMAT_ATTR(phys, "config:16");
PMU_FORMAT_ATTR(store, "config:17");
PMU_FORMAT_ATTR(mix, "config:18");
PMU_FORMAT_ATTR(only_target, "config:19");
PMU_FORMAT_ATTR(no_context, "config:20");
PMU_FORMAT_ATTR(packed, "config:21");
PMU_FORMAT_ATTR(var, "config1:0-63");
PMU_FORMAT_ATTR(tgid, "config2:0-31");

static struct attribute *damon_test_pmu_format_attrs[] = {
	&format_attr_deliver.attr,
	&format_attr_batch.attr,
	&format_attr_phys.attr,
	&format_attr_store.attr,
	&format_attr_mix.attr,
	&format_attr_only_target.attr,
	&format_attr_no_context.attr,
	&format_attr_packed.attr,
	&format_attr_var.attr,
	&format_attr_tgid.attr,
	NULL,
};

static const struct attribute_group damon_test_pmu_format_group = {
	.name = "format",
	.attrs = damon_test_pmu_format_attrs,
};

static ssize_t cpus_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	struct pmu *pmu = dev_get_drvdata(dev);

	return cpumap_print_to_pagebuf(true, buf,
				       &to_damon_test_pmu(pmu)->cpus);
}
static DEVICE_ATTR_RO(cpus);

static struct attribute *damon_test_pmu_cpus_attrs[] = {
	&dev_attr_cpus.attr,
	NULL,
};

static const struct attribute_group damon_test_pmu_cpus_group = {
	.attrs = damon_test_pmu_cpus_attrs,
};

static const struct attribute_group *damon_test_pmu_groups[] = {
	&damon_test_pmu_format_group,
	&damon_test_pmu_cpus_group,
	NULL,
};

static int damon_test_pmu_stats_show(struct seq_file *m, void *v)
{
	unsigned long sum;
	unsigned int cpu;
	int i;

	for (i = 0; i < DAMON_TEST_PMU_NR_STATS; i++) {
		sum = 0;
		for_each_possible_cpu(cpu)
			sum += per_cpu(damon_test_pmu_stats[i], cpu);
		seq_printf(m, "%s %lu\n", damon_test_pmu_stat_names[i], sum);
	}
	/* what each CPU wrote into its AUX area: a CPU that stopped shows */
	for_each_possible_cpu(cpu)
		seq_printf(m, "aux_records_cpu%u %lu\n", cpu,
			   per_cpu(damon_test_pmu_stats[DAMON_TEST_PMU_AUX_RECORDS],
				   cpu));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(damon_test_pmu_stats);

static int __init damon_test_pmu_register(struct damon_test_pmu *tp,
					  const char *name, int caps,
					  const struct cpumask *cpus, bool aux)
{
	int err;

	tp->aux = aux;
	cpumask_copy(&tp->cpus, cpus);
	tp->pmu = (struct pmu) {
		.module		= THIS_MODULE,
		.task_ctx_nr	= perf_invalid_context,
		.capabilities	= caps,
		.attr_groups	= damon_test_pmu_groups,
		.event_init	= damon_test_pmu_event_init,
		.add		= damon_test_pmu_add,
		.del		= damon_test_pmu_del,
		.start		= damon_test_pmu_start,
		.stop		= damon_test_pmu_stop,
		.read		= damon_test_pmu_read,
	};
	if (aux) {
		tp->pmu.setup_aux = damon_test_pmu_setup_aux;
		tp->pmu.free_aux = damon_test_pmu_free_aux;
	}
	err = perf_pmu_register(&tp->pmu, name, -1);
	if (err) {
		pr_err("cannot register %s: %d\n", name, err);
		return err;
	}
	if (!aux)
		goto out;
	/* so that DAMON's AUX drain decodes its records */
	err = damon_perf_add_spe_pmu(&tp->pmu, DAMON_TEST_PMU_PHYS);
	if (err) {
		pr_err("cannot declare %s to DAMON: %d\n", name, err);
		perf_pmu_unregister(&tp->pmu);
		return err;
	}
out:
	tp->name = name;
	return 0;
}

static void damon_test_pmu_unregister(struct damon_test_pmu *tp)
{
	if (!tp->name)
		return;
	if (tp->aux)
		damon_perf_remove_spe_pmu(&tp->pmu);
	perf_pmu_unregister(&tp->pmu);
	tp->name = NULL;
}

static void damon_test_pmu_unregister_all(void)
{
	int i;

	for (i = ARRAY_SIZE(damon_test_pmus) - 1; i >= 0; i--)
		damon_test_pmu_unregister(&damon_test_pmus[i]);
}

static int __init damon_test_pmu_init(void)
{
	struct cpumask *half;
	unsigned int cpu, n = 0;
	int err;

	BUILD_BUG_ON(ARRAY_SIZE(damon_test_pmu_stat_names) !=
		     DAMON_TEST_PMU_NR_STATS);
	half = kzalloc(cpumask_size(), GFP_KERNEL);
	if (!half)
		return -ENOMEM;
	/* a hybrid PMU: the first half of the possible CPUs, at least one */
	for_each_possible_cpu(cpu) {
		if (n++ <= (num_possible_cpus() - 1) / 2)
			cpumask_set_cpu(cpu, half);
	}
#if DAMON_TEST_PMU_HAS_NMI
	err = register_nmi_handler(NMI_LOCAL, damon_test_pmu_nmi, 0,
				   "damon_test_pmu");
	if (err) {
		kfree(half);
		return err;
	}
#endif
	/*
	 * As arm_spe_pmu, which sets its CPUs up in its hotplug state before
	 * it registers its PMU: set up at load, the state comes after DAMON's
	 * if DAMON's is a dynamic one too.
	 */
	err = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "damon/test_pmu:online",
				damon_test_pmu_reset_cpu,
				damon_test_pmu_reset_cpu);
	if (err < 0)
		goto fail_nmi;
	damon_test_pmu_hp_state = err;
	err = damon_test_pmu_register(&damon_test_pmus[0], "damon_test", 0,
				      cpu_possible_mask, false) ?:
		damon_test_pmu_register(&damon_test_pmus[1], "damon_test_ibs",
					PERF_PMU_CAP_NO_EXCLUDE,
					cpu_possible_mask, false) ?:
		damon_test_pmu_register(&damon_test_pmus[2],
					"damon_test_hybrid", 0, half, false) ?:
		damon_test_pmu_register(&damon_test_pmus[3], "damon_test_aux",
					PERF_PMU_CAP_EXCLUSIVE |
					PERF_PMU_CAP_ITRACE,
					cpu_possible_mask, true);
	if (err)
		goto fail;
	damon_test_pmu_dir = debugfs_create_dir("damon_test_pmu", NULL);
	debugfs_create_file("stats", 0400, damon_test_pmu_dir, NULL,
			    &damon_test_pmu_stats_fops);
	debugfs_create_atomic_t("pass", 0600, damon_test_pmu_dir,
				&damon_test_pmu_pass);
	kfree(half);
	return 0;

fail:
	damon_test_pmu_unregister_all();
	cpuhp_remove_state(damon_test_pmu_hp_state);
fail_nmi:
#if DAMON_TEST_PMU_HAS_NMI
	unregister_nmi_handler(NMI_LOCAL, "damon_test_pmu");
#endif
	kfree(half);
	return err;
}
module_init(damon_test_pmu_init);

/*
 * No event of the PMUs exists any more, so no timer runs and none of their
 * NMIs is pending; but a task the timer interrupted may not have gone back
 * to user space yet, and its task_work is code of this module.
 */
static void __exit damon_test_pmu_exit(void)
{
	unsigned int waited = 0;

	debugfs_remove_recursive(damon_test_pmu_dir);
	damon_test_pmu_unregister_all();
	while (atomic_read(&damon_test_pmu_works)) {
		if (!(++waited % 500))
			pr_info("waiting for %d task_work callbacks\n",
				atomic_read(&damon_test_pmu_works));
		msleep(20);
	}
	/* the callbacks are past their atomic_dec(), interrupts off */
	synchronize_rcu();
	cpuhp_remove_state(damon_test_pmu_hp_state);
#if DAMON_TEST_PMU_HAS_NMI
	unregister_nmi_handler(NMI_LOCAL, "damon_test_pmu");
#endif
}
module_exit(damon_test_pmu_exit);

MODULE_DESCRIPTION("Test PMUs for DAMON's perf event access checks");
MODULE_LICENSE("GPL");
