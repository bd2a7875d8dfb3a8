#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench, inside the guest.

Runs the experiments of make bench against the real DAMON sysfs interface
and prints one "BENCH {json}" line per measurement; harness/bench-report.py
turns them into tables and plots on the host.  Modes of a kdamond:

  ab    Accessed-bit checks (no perf event: stock DAMON)
  pf    perf events: the software page-fault event, every fault sampled
  tpmu  perf events: the test PMU, in NMI, at a fixed period per CPU

Experiments (--exp, default all but insns):
  kdamond   the kdamond's CPU time per second, from /proc/PID/schedstat,
            and the workload's pages per second against the same workload
            unmonitored in the same rep and cell
  slowdown  pages per second the workload writes, against no monitoring
  insns     instructions per sample in damon_perf_overflow(), with ftrace's
            function profiler; meaningful only under QEMU -icount shift=0,
            where a guest nanosecond is one instruction
  check     cost of each access check, with the function profiler, and of
            each drained record, from the damon_perf_drain tracepoint
  accuracy  precision, recall and F1 of the regions DAMON ranks hot, against
            a hot range that moves
  patterns  the same F1, against access patterns that stay put: hot ranges
            of unequal sizes, a Zipf-like spread over the whole working set,
            and threads that each write a range of their own
  sweep     F1 on the moving hot range against total cost (the kdamond's
            CPU and what the workload lost), at several sampling intervals
            (Accessed bits) and sample periods (perf)
  ringloss  ring overflows against the sample rate of the test PMU

--quick runs one small cell of each, to check that everything still runs.
--modes limits the accuracy and patterns experiments to some modes, for a
look at one mode between make bench runs; make bench runs them all.
"""

import argparse
import contextlib
import errno
import json
import math
import os
import re
import subprocess
import sys
import time

ADMIN = '/sys/kernel/mm/damon/admin'
TRACING = '/sys/kernel/tracing'
PERF_STATS = '/sys/kernel/debug/damon/perf_stats'
PMUS = '/sys/bus/event_source/devices'
BIN = '/opt/damon-perf/bin'
KD = ADMIN + '/kdamonds/0'
CTX = KD + '/contexts/0'
PERF = CTX + '/monitoring_attrs/sample/perf_events'

# the modes of a kdamond, as the docstring lists them
MODES = ('ab', 'pf', 'tpmu')
SAMPLE_US = 5000
AGGR_US = 100000
# test PMU config: delivery in NMI, samples only while the workload runs
TPMU_NMI = 3
TPMU_ONLY_TARGET = 1 << 19
TPMU_BATCH_SHIFT = 8
TPMU_PERIOD = 100000        # ns: 10,000 samples per second per CPU
# kernel.perf_event_max_sample_rate's default (kernel/events/core.c)
DEFAULT_SAMPLE_RATE = 100000
DEADLINE = 120              # s, for anything polled
# a function without a branch, timed next to the measured one to learn
# the profiler's own cost; the host counts its instructions
CALIB = '__x64_sys_umask'


def emit(rec):
    print('BENCH ' + json.dumps(rec, sort_keys=True), flush=True)


def log(msg):
    print('bench: ' + msg, flush=True)


def busy_retry(op, deadline=DEADLINE):
    """op() until it does not fail with EBUSY, for at most @deadline
    seconds; DAMON's sysfs files answer EBUSY to reads and writes while
    the kdamond holds their lock (they take it with mutex_trylock())."""
    end = time.monotonic() + deadline
    while True:
        try:
            return op()
        except OSError as e:
            if e.errno != errno.EBUSY or time.monotonic() >= end:
                raise
        time.sleep(0.01)


def write(path, value, deadline=DEADLINE):
    """Write @value to @path, tried again while it answers EBUSY."""
    def op():
        with open(path, 'w') as f:
            f.write(str(value))
    busy_retry(op, deadline)


def read(path, deadline=DEADLINE):
    """The contents of @path, tried again while it answers EBUSY."""
    def op():
        with open(path) as f:
            return f.read()
    return busy_retry(op, deadline)


def poll(cond, what, deadline=DEADLINE):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    raise RuntimeError('timed out waiting for ' + what)


class Workload:
    """guest/src/benchwl.c, running until stopped."""

    def __init__(self, ws_mb, hot_mb, mode, move_s=0, pattern='window',
                 threads=1, rate=0):
        self.info = '/tmp/benchwl.info'
        self.timeline = '/tmp/benchwl.timeline'
        self.count = '/tmp/benchwl.count'
        for f in (self.info, self.timeline, self.count):
            if os.path.exists(f):
                os.unlink(f)
        self.proc = subprocess.Popen(
            [BIN + '/benchwl', '-w', str(ws_mb), '-H', str(hot_mb),
             '-m', mode, '-p', pattern, '-T', str(threads),
             '-M', str(move_s), '-r', str(rate), '-i', self.info,
             '-g', self.timeline,
             '-c', self.count])
        poll(lambda: os.path.exists(self.info), 'the workload')
        lines = [line.split() for line in read(self.info).splitlines()]
        fields = {v[0]: v[1:] for v in lines}
        self.pid = int(fields['pid'][0])
        self.cur = int(fields['cur'][0], 16)
        self.start, self.end = (int(x, 16) for x in fields['ws'])
        # the hot ranges of a pattern that stays put
        self.hot = [(int(v[1], 16), int(v[2], 16)) for v in lines
                    if v[0] == 'hot']
        self.ws_mb = ws_mb
        poll(lambda: self.pages() > 0, 'the workload to count')

    def pages(self):
        try:
            return int(read(self.count).split()[0])
        except (OSError, IndexError, ValueError):
            return 0

    def windows(self):
        """(ns, hot_start, hot_end) of each hot window so far."""
        out = []
        for line in read(self.timeline).splitlines():
            v = line.split()
            if len(v) == 5:
                out.append((int(v[0]), int(v[1], 16), int(v[2], 16)))
        return out

    def passes(self):
        """zipf: (ns, passes of each window so far) about every 10 ms."""
        out = []
        for line in read(self.timeline).splitlines():
            v = [int(x) for x in line.split()]
            if len(v) > 1:
                out.append((v[0], v[1:]))
        return out

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def tpmu_type():
    return int(read(PMUS + '/damon_test/type'))


def event_of(mode, wl, period=TPMU_PERIOD, batch=1):
    """The perf_events/0 fields of a mode, or None for Accessed bits;
    the test PMU delivers @batch records per interrupt, as PEBS may."""
    if mode == 'pf':
        return {'type': 1, 'config': 2, 'sample_period': 1}
    if mode == 'tpmu':
        return {'type': tpmu_type(),
                'config': TPMU_NMI | TPMU_ONLY_TARGET |
                batch << TPMU_BATCH_SHIFT,
                'config1': wl.cur, 'config2': wl.pid,
                'sample_period': period}
    return None


def kdamond_off():
    if not os.path.exists(KD):
        return
    if read(KD + '/state').strip() == 'on':
        write(KD + '/state', 'off')
    poll(lambda: read(KD + '/pid').strip() == '-1', 'the kdamond to stop')


def kdamond_setup(pid, regions, event, sample_us=SAMPLE_US, aggr_us=AGGR_US):
    """kdamond 0 monitors @pid every @sample_us, aggregating every
    @aggr_us; @regions is (min, max) or None for the defaults; @event the
    perf event fields, or None."""
    kdamond_off()
    write(ADMIN + '/kdamonds/nr_kdamonds', 0)
    write(ADMIN + '/kdamonds/nr_kdamonds', 1)
    write(KD + '/contexts/nr_contexts', 1)
    write(CTX + '/operations', 'vaddr')
    write(CTX + '/targets/nr_targets', 1)
    write(CTX + '/targets/0/pid_target', pid)
    iv = CTX + '/monitoring_attrs/intervals'
    write(iv + '/sample_us', sample_us)
    write(iv + '/aggr_us', aggr_us)
    if regions:
        nr = CTX + '/monitoring_attrs/nr_regions'
        write(nr + '/max', regions[1])
        write(nr + '/min', regions[0])
    write(PERF + '/nr_perf_events', 0)
    if event:
        write(PERF + '/nr_perf_events', 1)
        for k, v in event.items():
            write(PERF + '/0/' + k, v)


def kdamond_on():
    write(KD + '/state', 'on')
    return int(poll(lambda: int(read(KD + '/pid')) > 0 and
                    read(KD + '/pid'), 'the kdamond to start'))


def raise_sample_rate():
    """perf's sample rate cap far above any rate here, and its dynamic
    lowering off."""
    write('/proc/sys/kernel/perf_event_max_sample_rate', 10000000)
    write('/proc/sys/kernel/perf_cpu_time_max_percent', 0)


@contextlib.contextmanager
def sampling(target, regions, event, warmup, after_on=None):
    """A kdamond monitoring target with event (None: Accessed bits) on,
    past its warmup: yields the kdamond's pid, and turns it off on the way
    out.  after_on, if given, is called once the kdamond runs."""
    kdamond_setup(target, regions, event)
    pid = kdamond_on()
    try:
        if after_on:
            after_on()
        time.sleep(warmup)
        yield pid
    finally:
        kdamond_off()


def cpu_ns(pid):
    return int(read('/proc/%d/schedstat' % pid).split()[0])


def perf_counters():
    """The perf_stats table counters and the per-CPU lines."""
    text = read(PERF_STATS)
    total = {}
    for m in re.finditer(r'│ (\w+)\s+│\s+(\d+) │', text):
        total[m.group(1)] = int(m.group(2))
    for m in re.finditer(r'(\w+)=(\d+)', text.split('Per-CPU')[0]):
        total[m.group(1)] = int(m.group(2))
    cpus = {}
    for m in re.finditer(r'CPU(\d+): st=\S+ (.*)', text):
        cpus[int(m.group(1))] = {k: int(v) for k, v in
                                 re.findall(r'(\w+)=(\d+)', m.group(2))}
    return total, cpus


def trace_reset(events, kb=4096, clock='local'):
    write(TRACING + '/tracing_on', 0)
    write(TRACING + '/events/enable', 0)
    write(TRACING + '/trace', '')
    write(TRACING + '/buffer_size_kb', kb)
    write(TRACING + '/trace_clock', clock)
    for e in events:
        write(TRACING + '/events/damon/%s/enable' % e, 1)
    write(TRACING + '/tracing_on', 1)


def trace_stop():
    write(TRACING + '/tracing_on', 0)
    write(TRACING + '/events/enable', 0)


# damon_aggregated prints "target_id=T nr_regions=N START-END: NR_ACC AGE"
AGGREGATED = re.compile(r'(\d+)-(\d+): (\d+) (\d+)')


def trace_lines(event):
    """Yield (timestamp, fields) of each @event line in the trace buffer:
    its key=value pairs, and for damon_aggregated the region's start, end
    and nr_accesses as numbers."""
    pat = re.compile(r'\s(\d+\.\d+): %s: (.*)' % event)
    with open(TRACING + '/trace') as f:
        for line in f:
            m = pat.search(line)
            if not m:
                continue
            fields = dict(re.findall(r'(\w+)=(\S+)', m.group(2)))
            r = AGGREGATED.search(m.group(2))
            if r:
                fields.update(start=int(r.group(1)), end=int(r.group(2)),
                              nr_accesses=int(r.group(3)))
            yield float(m.group(1)), fields


def nr_regions_now():
    """The number of regions of the running kdamond, from one aggregation."""
    def first():
        for _, f in trace_lines('damon_aggregated'):
            return int(f['nr_regions'])
        return 0

    trace_reset(['damon_aggregated'], kb=8192)
    # a busy kdamond aggregates late: Accessed bits at a page per region of
    # 1 GiB take seconds a sampling interval, so a minute and more an
    # aggregation
    time.sleep(AGGR_US / 1e6 * 2)
    try:
        return poll(first, 'an aggregation')
    except RuntimeError:
        return 0
    finally:
        trace_stop()


def profile_start(funcs):
    write(TRACING + '/function_profile_enabled', 0)
    write(TRACING + '/set_ftrace_filter', ' '.join(funcs))
    write(TRACING + '/function_profile_enabled', 1)


def profile_stop():
    """{function: (hits, total ns)} summed over the CPUs."""
    write(TRACING + '/function_profile_enabled', 0)
    out = {}
    stat = TRACING + '/trace_stat'
    for name in os.listdir(stat):
        if not name.startswith('function'):
            continue
        for line in read(stat + '/' + name).splitlines():
            v = line.split()
            # Function  Hit  Time  us  Avg  us  s^2  us
            if len(v) >= 4 and v[1].isdigit() and v[3] == 'us':
                h, t = out.get(v[0], (0, 0.0))
                out[v[0]] = (h + int(v[1]), t + float(v[2]) * 1000)
    write(TRACING + '/set_ftrace_filter', '')
    return out


def window(seconds, pid, wl=None):
    """Measure a window: kdamond CPU ns, wall ns, workload pages,
    perf callbacks."""
    c0, p0 = cpu_ns(pid), wl.pages() if wl else 0
    s0 = perf_counters()[0].get('callback', 0)
    t0 = time.monotonic_ns()
    time.sleep(seconds)
    t1 = time.monotonic_ns()
    c1, p1 = cpu_ns(pid), wl.pages() if wl else 0
    s1 = perf_counters()[0].get('callback', 0)
    return {'cpu_ns': c1 - c0, 'wall_ns': t1 - t0, 'pages': p1 - p0,
            'samples': s1 - s0}


def region_cells(ws_mb, quick):
    """The region counts of a working set: DAMON's defaults, 1,000, 10,000
    and one region per page of it."""
    if quick:
        return [('default', None)]
    n = ws_mb * 256
    return [('default', None), ('1000', (1000, 1000)),
            ('10000', (10000, 10000)), ('page', (n, n))]


def unmonitored(a, wl):
    """(pages, wall ns) the workload writes in a window with no kdamond."""
    time.sleep(a.warmup)
    p0, t0 = wl.pages(), time.monotonic_ns()
    time.sleep(a.window)
    return wl.pages() - p0, time.monotonic_ns() - t0


def exp_kdamond(a):
    for ws in ([64] if a.quick else a.ws):
        wl = Workload(ws, ws // 8, 'fault')
        try:
            for label, regions in region_cells(ws, a.quick):
                for rep in range(a.reps):
                    # the same workload with nothing monitoring it, in this
                    # rep, for the modes' slowdown in the same cell
                    none_pages, none_ns = unmonitored(a, wl)
                    for mode in [m for m in MODES if m in a.modes]:
                        with sampling(wl.pid, regions, event_of(mode, wl),
                                      a.warmup) as pid:
                            r = window(a.window, pid, wl)
                            n = nr_regions_now()
                        r.update(exp='kdamond', mode=mode, ws_mb=ws,
                                 regions=label, nr_regions=n, rep=rep,
                                 none_pages=none_pages,
                                 none_wall_ns=none_ns)
                        # the largest view of the regions since boot: the
                        # cells run from the fewest regions to the most
                        if mode != 'ab':
                            r['view_bytes'] = perf_counters()[0].get(
                                'view_bytes')
                        emit(r)
        finally:
            wl.stop()
            kdamond_off()


def exp_slowdown(a):
    wl = Workload(256, 32, 'fault')
    try:
        for rep in range(a.reps):
            for mode in ('none', 'ab', 'pf', 'tpmu'):
                if mode == 'none':
                    pages, ns = unmonitored(a, wl)
                    r = {'pages': pages, 'wall_ns': ns}
                else:
                    with sampling(wl.pid, None, event_of(mode, wl),
                                  a.warmup) as pid:
                        w = window(a.window, pid, wl)
                    r = {'pages': w['pages'], 'wall_ns': w['wall_ns']}
                r.update(exp='slowdown', mode=mode, rep=rep)
                emit(r)
    finally:
        wl.stop()
        kdamond_off()


def exp_insns(a):
    observe = os.path.exists(PERF_STATS)
    wl = Workload(16, 2, 'fault')
    try:
        for rep in range(a.reps):
            for trace in (('off', 'on') if observe else ('off',)):
                kdamond_setup(wl.pid, None, event_of('pf', wl))
                kdamond_on()
                if trace == 'on':
                    trace_reset(['damon_perf_sample'], kb=1024)
                profile_start(['damon_perf_overflow', CALIB])
                time.sleep(a.window)
                subprocess.run([BIN + '/umaskloop', str(a.calls)],
                               check=True)
                prof = profile_stop()
                if trace == 'on':
                    trace_stop()
                kdamond_off()
                hits, ns = prof.get('damon_perf_overflow', (0, 0))
                chits, cns = prof.get(CALIB, (0, 0))
                kernel = 'observe' if observe else 'no-observe'
                emit({'exp': 'insns', 'rep': rep, 'trace': trace,
                      'kernel': kernel + ('-jl' if a.jump_label else ''),
                      'hits': hits, 'time_ns': ns, 'calib_hits': chits,
                      'calib_time_ns': cns, 'calib_insns': a.calib_insns,
                      'icount': a.icount})
    finally:
        wl.stop()
        kdamond_off()


def drained():
    """(records, ns) drained so far, from the damon_perf_drain trace."""
    n = ns = 0
    for _, f in trace_lines('damon_perf_drain'):
        n += int(f['nr'])
        ns += int(f['duration_ns'])
    return n, ns


def exp_check(a):
    regions = [100] if a.quick else [100, 1000, 10000, 100000]
    periods = [0, 200000] if a.quick else [0, 200000, 20000]
    ws = 64 if a.quick else 1024
    wl = Workload(ws, ws // 8, 'touch')
    try:
        for n in regions:
            for rep in range(a.reps):
                cells = [('ab', 0)] + [('perf', p) for p in periods]
                for mode, period in cells:
                    if mode == 'ab':
                        ev = None
                        funcs = ['damon_va_prepare_access_checks',
                                 'damon_va_check_accesses']
                    else:
                        # no samples: the page-fault event on a workload
                        # that faults no more
                        ev = (event_of('tpmu', wl, period) if period else
                              event_of('pf', wl))
                        funcs = ['damon_perf_check_accesses']
                    kdamond_setup(wl.pid, (n, n), ev)
                    # ftrace patches the functions it profiles, and TCG
                    # can run a CPU into a stale int3 of code patched
                    # under it: profile the kdamond's whole life, and
                    # trace its drains as long
                    profile_start(funcs)
                    if mode == 'perf':
                        trace_reset(['damon_perf_drain'], kb=8192)
                    kdamond_on()
                    time.sleep(a.warmup + a.window)
                    kdamond_off()
                    trace_stop()
                    prof = profile_stop()
                    records, dns = (drained() if mode == 'perf'
                                    else (0, 0))
                    calls = max(prof.get(f, (0, 0))[0] for f in funcs)
                    # min_nr_regions = max_nr_regions = n holds them at n
                    emit({'exp': 'check', 'mode': mode, 'regions': n,
                          'nr_regions': n, 'period_ns': period,
                          'rep': rep, 'calls': calls,
                          'check_ns': sum(prof.get(f, (0, 0))[1]
                                          for f in funcs),
                          'records': records, 'drain_ns': dns})
    finally:
        wl.stop()
        kdamond_off()


def score(regions, hot, start, end):
    """Precision, recall, F1 by bytes of the regions ranked hot (at least
    half the snapshot's highest nr_accesses) against the @hot ranges, a
    list of (start, end) that do not overlap, within the working set
    [start, end)."""
    regions = [(max(s, start), min(e, end), n) for s, e, n in regions
               if e > start and s < end]
    top = max((n for _, _, n in regions), default=0)
    if not top:
        return 0.0, 0.0, 0.0
    pred = [(s, e) for s, e, n in regions if n * 2 >= top]
    pbytes = sum(e - s for s, e in pred)
    tp = sum(max(0, min(e, he) - max(s, hs))
             for s, e in pred for hs, he in hot)
    p = tp / pbytes if pbytes else 0.0
    r = tp / sum(he - hs for hs, he in hot)
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def heat(snaps, start, end, bins=64):
    step = (end - start) / bins
    z = []
    for _, regions in snaps:
        row = [0] * bins
        for s, e, n in regions:
            for b in range(bins):
                lo = start + b * step
                if s < lo + step and e > lo:
                    row[b] = max(row[b], n)
        z.append(row)
    return [round(b * step / (1 << 20), 2) for b in range(bins)], z


# the test PMU's period in the accuracy and patterns experiments, ns,
# unless --tpmu-period says otherwise
ACCURACY_TPMU_PERIOD = 50000


def moving_run(mode, move, moves, period=None, sample_us=SAMPLE_US):
    """One run of DAMON in @mode, sampling every @sample_us, on the 256 MiB
    working set whose 16 MiB hot window moves every @move seconds, @moves
    times, its aggregations traced: (the stopped workload, kdamond CPU ns,
    wall ns, pages the workload wrote).  @period is the perf event's
    sample period, if not the accuracy experiment's."""
    wl = Workload(256, 16, 'fault', move)
    try:
        event = event_of(mode, wl, period or ACCURACY_TPMU_PERIOD)
        if event and period:
            event['sample_period'] = period
        kdamond_setup(wl.pid, None, event, sample_us)
        trace_reset(['damon_aggregated'], kb=16384, clock='mono')
        pid = kdamond_on()
        c0, p0, t0 = cpu_ns(pid), wl.pages(), time.monotonic_ns()
        time.sleep(move * moves)
        c1, p1, t1 = cpu_ns(pid), wl.pages(), time.monotonic_ns()
        trace_stop()
        kdamond_off()
    finally:
        wl.stop()
    return wl, c1 - c0, t1 - t0, p1 - p0


def unmonitored_run(move, moves):
    """(pages, wall ns) of moving_run()'s workload with no kdamond: the
    same span of the same part of its life, so that a monitored run's loss
    is against what the workload does unmonitored over as long."""
    wl = Workload(256, 16, 'fault', move)
    try:
        p0, t0 = wl.pages(), time.monotonic_ns()
        time.sleep(move * moves)
        return wl.pages() - p0, time.monotonic_ns() - t0
    finally:
        wl.stop()


def exp_accuracy(a):
    move = 3 if a.quick else 6
    moves = 2 if a.quick else 4
    modes = ('ab', 'pf') if a.quick else MODES
    modes = [m for m in modes if m in a.modes]
    for rep in range(a.reps):
        for mode in modes:
            period = a.tpmu_period if mode == 'tpmu' else None
            wl = moving_run(mode, move, moves, period)[0]
            emit(accuracy_record(wl, mode, rep, move))


# The settings the sweep tries: the sampling interval of Accessed bits
# (us), the page-fault event's and the test PMU's sample period (faults,
# ns).  The accuracy experiment's settings are 5000, 1 and 50000.
SWEEP = {'ab': (1000, 2500, 5000, 20000), 'pf': (1, 8, 64),
         'tpmu': (25000, 100000, 400000)}


def exp_sweep(a):
    """Accuracy against total cost: the moving window of the accuracy
    experiment, shorter, at each SWEEP setting, with the kdamond's CPU
    time and the workload's pages over the run, and per rep the same
    workload unmonitored."""
    move = 3 if a.quick else 6
    moves = 1 if a.quick else 3
    sweep = {'ab': (5000,), 'pf': (1,)} if a.quick else SWEEP
    for rep in range(a.reps):
        none_pages, none_ns = unmonitored_run(move, moves)
        for mode, settings in sweep.items():
            for setting in settings:
                if mode == 'ab':
                    period, us = None, setting
                else:
                    period, us = setting, SAMPLE_US
                wl, cpu, wall, pages = moving_run(mode, move, moves, period,
                                                  us)
                rec = accuracy_record(wl, mode, rep, move, heat_map=False)
                rec.update(exp='sweep', setting=setting, sample_us=us,
                           cpu_ns=cpu, wall_ns=wall, pages=pages,
                           none_pages=none_pages, none_wall_ns=none_ns)
                emit(rec)


# how many aggregations in a row must score F1 >= CONVERGED_F1 for DAMON
# to count as having found a moved window: one good snapshot among bad
# ones is luck, not convergence
CONVERGED_F1 = 0.9
CONVERGED_RUN = 3
# seconds a pattern that stays put is given before its aggregations count:
# what the moving window's Accessed-bit convergence takes, and more
PATTERN_SETTLE_S = 4


def converged(snaps, move, nxt):
    """Seconds from MOVE to the first of CONVERGED_RUN snapshots in a row
    before the next move NXT with F1 >= CONVERGED_F1, or None."""
    run = []
    for s in snaps:
        if s['t'] < move:
            continue
        if s['t'] >= nxt:
            break
        run = run + [s['t']] if s['f1'] >= CONVERGED_F1 else []
        if len(run) == CONVERGED_RUN:
            return round(run[0] - move, 3)
    return None


def aggregations():
    """The damon_aggregated trace as snapshots: (ns, [(start, end,
    nr_accesses)]) for each aggregation, ns from the trace's clock."""
    snaps, cur, ts = [], [], None
    for t, f in trace_lines('damon_aggregated'):
        ns = int(t * 1e9)
        if ts is not None and ns - ts > 1000000:
            snaps.append((ts, cur))
            cur = []
        ts = ns
        cur.append((f['start'], f['end'], f['nr_accesses']))
    if cur:
        snaps.append((ts, cur))
    return snaps


def accuracy_record(wl, mode, rep, move, heat_map=True):
    wins = wl.windows()
    t0 = wins[0][0]
    out, kept = [], []
    for ns, regions in aggregations():
        # the hot window of the whole aggregation interval, if one was
        hot = [w for w in wins if w[0] <= ns - AGGR_US * 1000]
        nxt = [w for w in wins if ns - AGGR_US * 1000 < w[0] <= ns]
        if not hot or nxt:
            continue
        p, r, f1 = score(regions, [hot[-1][1:]], wl.start, wl.end)
        out.append({'t': round((ns - t0) / 1e9, 3), 'precision': p,
                    'recall': r, 'f1': f1})
        kept.append((ns, regions))
    move_t = [round((w[0] - t0) / 1e9, 3) for w in wins[1:]]
    conv = [converged(out, m, nxt)
            for m, nxt in zip(move_t, move_t[1:] + [math.inf])]
    rec = {'exp': 'accuracy', 'mode': mode, 'rep': rep, 'move_s': move,
           'snapshots': out, 'moves': move_t, 'converge_s': conv}
    if rep == 0 and heat_map:
        addr, z = heat(kept, wl.start, wl.end)
        rec['heat'] = {'t': [s['t'] for s in out], 'addr_mb': addr, 'z': z}
    return rec


PATTERNS = ('ranges', 'zipf', 'threads')
# windows of 2 MiB, so that a hot page is written some 30 times a second
# at the 120,000 faults a second one writer makes under TCG
PATTERN_WIN_MB = 2
# two writers: on two host cores, four writers of one process made 4,000
# pages a second between them, one alone 118,000, two 58,000
PATTERN_THREADS = 2
# zipf's passes a second, in both write modes: one writer makes about 230
# with every write a fault, so this leaves room; the hottest window, 0.115
# of the passes, is written some 17 times a second, so that it is rarely
# written twice between two checks and its count tells its rate
ZIPF_RATE = 150
# and aggregations of a second, 200 checks: at 100 ms, it would be written
# about twice an aggregation, too few for counts to tell two windows apart
ZIPF_AGGR_US = 1000000
ZIPF_SECS = 24


def written_hot(log, end_ns, span_ns, start, win):
    """The windows written in the @span_ns before @end_ns at least half as
    often as the most written one, as (start, end) ranges, from the zipf
    workload's pass log @log; None if the log does not cover the span or
    nothing was written in it."""
    def at(ns):
        before = [c for t, c in log if t <= ns]
        return before[-1] if before else None
    c0, c1 = at(end_ns - span_ns), at(end_ns)
    if c0 is None or c1 is None:
        return None
    n = [b - a for a, b in zip(c0, c1)]
    top = max(n, default=0)
    if not top:
        return None
    return [(start + i * win, start + (i + 1) * win)
            for i, k in enumerate(n) if k and k * 2 >= top]


def exp_patterns(a):
    """F1 of each mode on the benchwl patterns that stay put, scored on
    the aggregations after the first PATTERN_SETTLE_S seconds; zipf's
    at ZIPF_RATE passes a second and an aggregation of ZIPF_AGGR_US, on
    the windows written in each (see written_hot()), as its passes in
    an aggregation are a draw from the pattern, not the pattern.  The
    page-fault event sees only faults, so for it every write faults
    (benchwl -m fault); the others get the same pattern with no faults
    (-m touch): Accessed bits see a page only while it is mapped, which
    in fault mode, windows dropped as soon as written, it mostly is not."""
    secs = 4 if a.quick else 12
    settle = 1 if a.quick else PATTERN_SETTLE_S
    modes = ('ab', 'pf') if a.quick else MODES
    modes = [m for m in modes if m in a.modes]
    for rep in range(a.reps):
        for pattern in PATTERNS[:1] if a.quick else PATTERNS:
            for mode in modes:
                how = 'fault' if mode == 'pf' else 'touch'
                zipf = pattern == 'zipf'
                aggr_us = ZIPF_AGGR_US if zipf else AGGR_US
                wl = Workload(256, PATTERN_WIN_MB, how, pattern=pattern,
                              threads=PATTERN_THREADS,
                              rate=ZIPF_RATE if zipf else 0)
                try:
                    kdamond_setup(wl.pid, None,
                                  event_of(mode, wl, a.tpmu_period),
                                  aggr_us=aggr_us)
                    trace_reset(['damon_aggregated'], kb=16384,
                                clock='mono')
                    t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
                    kdamond_on()
                    time.sleep(ZIPF_SECS if zipf else secs)
                    trace_stop()
                    kdamond_off()
                    log = wl.passes() if zipf else []
                finally:
                    wl.stop()
                out, kept, hot_mb = [], [], []
                for ns, regions in aggregations():
                    if ns < t0 + settle * 1000000000:
                        continue
                    hot = wl.hot
                    if zipf:
                        hot = written_hot(log, ns, aggr_us * 1000,
                                          wl.start, PATTERN_WIN_MB << 20)
                        if hot is None:
                            continue
                    p, r, f1 = score(regions, hot, wl.start, wl.end)
                    out.append({'t': round((ns - t0) / 1e9, 3),
                                'precision': p, 'recall': r, 'f1': f1})
                    kept.append(regions)
                    hot_mb.append(sum(e - s for s, e in hot) >> 20)
                rec = {'exp': 'patterns', 'pattern': pattern, 'mode': mode,
                       'rep': rep, 'writes': how,
                       'rate': ZIPF_RATE if zipf else 0, 'aggr_us': aggr_us,
                       'hot_mb': (sorted(hot_mb)[len(hot_mb) // 2]
                                  if hot_mb else
                                  sum(e - s for s, e in wl.hot) >> 20),
                       'snapshots': out}
                if a.regions and kept:
                    rec.update(start=wl.start, hot=wl.hot,
                               regions=kept[::max(1, len(kept) // 4)])
                emit(rec)


def ringloss_cell(a, wl, period, batch, secs_wanted):
    """One run of the test PMU at @period ns and @batch records per
    interrupt, from perf's default cap and default rings: (per-CPU
    counter deltas, seconds, perf_stats' global figures)."""
    # The context sizes its rings from perf's sample rate cap when it
    # starts: the default cap, so that the rings are the default ones.
    # Then let the ring, not perf's throttling, bound the rate: a cap far
    # above the rates, and no lowering of it for the slow NMIs of TCG (the
    # cap cannot be written while that is off).
    write('/proc/sys/kernel/perf_cpu_time_max_percent', 25)
    write('/proc/sys/kernel/perf_event_max_sample_rate', DEFAULT_SAMPLE_RATE)
    with sampling(wl.pid, None, event_of('tpmu', wl, period, batch),
                  a.warmup, after_on=raise_sample_rate):
        total, c0 = perf_counters()
        t0 = time.monotonic_ns()
        time.sleep(secs_wanted)
        _, c1 = perf_counters()
        secs = (time.monotonic_ns() - t0) / 1e9
    per_cpu = []
    for cpu, v in sorted(c1.items()):
        b = c0.get(cpu, {})
        per_cpu.append({'cpu': cpu, **{k: v.get(k, 0) - b.get(k, 0)
                                       for k in ('cb', 'enq', 'ovf')}})
    return per_cpu, secs, total


def aim_period(a, wl, rate, batch):
    """The test PMU's period that gives about @rate samples a second on
    the busiest CPU.  The PMU samples only while the workload runs, and
    how much it runs moves from run to run, so the period is found by
    measuring: scaled by the rate reached over the rate wanted, up to four
    times, until within 5%."""
    period = int(batch * 1e9 / rate)
    for _ in range(4):
        per_cpu, secs, _ = ringloss_cell(a, wl, period, batch, 2)
        got = max((c['cb'] for c in per_cpu), default=0) / secs
        if not got or abs(got - rate) < rate * 0.05:
            break
        period = max(1000, int(period * got / rate))
    return period


def exp_ringloss(a):
    # (period ns, records per interrupt): 4,000 to 640,000 a second
    # nominal; what a CPU reaches depends on how much the workload runs
    # and on how many interrupts TCG delivers, and moves from run to run
    cells = ([(100000, 8)] if a.quick else
             [(1000000, 4), (200000, 4), (100000, 8), (60000, 8),
              (100000, 16), (50000, 32)])
    wl = Workload(64, 8, 'touch')
    # perf_stats' ring_capacity and ring_bytes are those of the largest
    # rings since boot: this experiment's rings if no context ran before it
    fresh = perf_counters()[0].get('ring_capacity') == 0
    try:
        if not a.quick:
            # and a cell aimed at perf's default cap per CPU, measured;
            # in batches of 32, since 8 stayed far below it under TCG
            cells.insert(3, (aim_period(a, wl, DEFAULT_SAMPLE_RATE * 1.05,
                                        32), 32))
        for period, batch in cells:
            for rep in range(a.reps):
                per_cpu, secs, total = ringloss_cell(a, wl, period, batch,
                                                     a.window)
                emit({'exp': 'ringloss', 'period_ns': period,
                      'batch': batch, 'rep': rep,
                      'ring_capacity': (total.get('ring_capacity')
                                        if fresh else None),
                      'ring_bytes': (total.get('ring_bytes')
                                     if fresh else None),
                      'secs': secs, 'per_cpu': per_cpu})
    finally:
        wl.stop()
        kdamond_off()
        # perf's defaults again, for the experiments after this one
        write('/proc/sys/kernel/perf_cpu_time_max_percent', 25)
        write('/proc/sys/kernel/perf_event_max_sample_rate',
              DEFAULT_SAMPLE_RATE)


def meta(a):
    possible = read('/sys/devices/system/cpu/possible').strip()
    lo, _, hi = possible.partition('-')
    emit({'exp': 'meta', 'kernel': os.uname().release,
          'cpus': os.cpu_count(), 'possible_cpus': int(hi or lo) + 1,
          'mem_mb': os.sysconf('SC_PHYS_PAGES') *
          os.sysconf('SC_PAGE_SIZE') >> 20,
          'quick': a.quick,
          'icount': a.icount, 'sample_us': SAMPLE_US, 'aggr_us': AGGR_US,
          'date': time.strftime('%Y-%m-%d %H:%M:%S')})


EXPERIMENTS = {'kdamond': exp_kdamond, 'slowdown': exp_slowdown,
               'insns': exp_insns, 'check': exp_check,
               'accuracy': exp_accuracy, 'patterns': exp_patterns,
               'sweep': exp_sweep, 'ringloss': exp_ringloss}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--quick', action='store_true')
    p.add_argument('--icount', action='store_true',
                   help='the guest runs under QEMU -icount shift=0')
    p.add_argument('--calib-insns', type=int, default=0,
                   help='instructions of the body of ' + CALIB)
    p.add_argument('--jump-label', action='store_true',
                   help='the kernel has CONFIG_JUMP_LABEL: its insns '
                   'records are of kernel observe-jl or no-observe-jl')
    p.add_argument('--no-meta', action='store_true')
    p.add_argument('--exp', nargs='*',
                   default=[e for e in EXPERIMENTS if e != 'insns'])
    p.add_argument('--modes', nargs='*', default=MODES, choices=MODES,
                   help='modes of the kdamond, accuracy and patterns '
                   'experiments')
    p.add_argument('--ws', nargs='*', type=int, default=[64, 256, 1024],
                   metavar='MIB', help='working sets of the kdamond '
                   'experiment')
    p.add_argument('--regions', action='store_true',
                   help='keep some aggregations\' regions in the patterns '
                   'records')
    p.add_argument('--tpmu-period', type=int, default=ACCURACY_TPMU_PERIOD,
                   metavar='NS', help="the test PMU's sample period in "
                   'the accuracy and patterns experiments')
    a = p.parse_args()
    a.reps = 1 if a.quick else 3
    a.window = 1 if a.quick else 3
    a.warmup = 0.5 if a.quick else 1
    a.calls = 10000 if a.quick else 100000
    for e in a.exp:
        if e not in EXPERIMENTS:
            p.error('no experiment ' + e)
    if a.tpmu_period <= 0:
        p.error('--tpmu-period must be positive')
    if not a.no_meta:
        meta(a)
    for e in a.exp:
        log('%s: start' % e)
        t = time.monotonic()
        EXPERIMENTS[e](a)
        log('%s: done in %.0f s' % (e, time.monotonic() - t))
    return 0


if __name__ == '__main__':
    sys.exit(main())
