#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A seeded, reproducible fuzzer of the DAMON sysfs interface.

The operations come from random.Random(seed) alone: writes of valid,
boundary and garbage values to the files of kdamonds/K/ (the perf_events
files above all), state commands, workloads that start and exit, CPUs that
go offline and online, reads of perf_stats and of the damon_perf_* trace
events.  A model of the interface predicts the outcome of each write, to
the errno, and what every file reads after it; after every step the
fuzzer checks the kernel against the model, and with every kdamond off,
that the CPUs are back to UNINIT, that no perf event is left and that the
counters obey their conservation laws.

On a failure the failing prefix of the operations is minimized by delta
debugging (ddmin), replayed from a clean state each time, and printed as a
JSON list that --replay takes back.  The last line of output is always

    fuzz: seed=S ops=N done=N failures=F
"""

import argparse
import errno
import json
import mmap
import os
import random
import re
import signal
import subprocess
import sys
import time

ADMIN = "/sys/kernel/mm/damon/admin"
KDAMONDS = ADMIN + "/kdamonds"
PERF_STATS = "/sys/kernel/debug/damon/perf_stats"
TRACING = "/sys/kernel/tracing"
PMUS = "/sys/bus/event_source/devices"
TEST_PMU_STATS = "/sys/kernel/debug/damon_test_pmu/stats"
CPUS = "/sys/devices/system/cpu"
HOTCOLD = "/opt/damon-perf/bin/hotcold"
MAX_RATE = "/proc/sys/kernel/perf_event_max_sample_rate"
CPU_TIME_PCT = "/proc/sys/kernel/perf_cpu_time_max_percent"

U32_MAX = (1 << 32) - 1
U64_MAX = (1 << 64) - 1
S64_MAX = (1 << 63) - 1
INT_MAX = (1 << 31) - 1
# the rate the fuzzer sets, so that the test PMUs' storms are throttled
SAMPLE_RATE = 2000
# how long a kdamond whose targets all exited may take to stop
STOP_SECONDS = 120
# how long a busy DAMON sysfs (EBUSY from its trylock) is retried
BUSY_SECONDS = 20
NR_CPUS_GUESS = 4

# perf_events/<N>/ files: (name, highest value, default), as sysfs-perf.c
PERF_FIELDS = [
    ("type", U32_MAX, 1),
    ("config", U64_MAX, 2),
    ("config1", U64_MAX, 0),
    ("config2", U64_MAX, 0),
    ("freq", 1, 0),
    ("sample_freq", U64_MAX, 100),
    ("sample_period", S64_MAX, 4096),
    ("sample_phys_addr", 1, 0),
    ("precise_ip", 3, 0),
    ("exclude_kernel", 1, 1),
    ("exclude_hv", 1, 0),
]
PERF_MAX = {n: m for n, m, _ in PERF_FIELDS}
PERF_DEFAULT = {n: d for n, _, d in PERF_FIELDS}
MAX_PERF_EVENTS = 32

# software events (type 1) that the software or cpu-clock PMU take; others
# of the configs used here are unknown to them (ENOENT)
SW_OK_CONFIGS = {0, 2, 5, 6}
TEST_PMUS = ["damon_test", "damon_test_ibs", "damon_test_hybrid",
             "damon_test_aux"]
# the SPE-like test PMU: one user at a time, and no freq, as arm_spe_pmu
AUX_PMU = "damon_test_aux"
# test PMU config fields (see testpmu.sh)
NMI, HARDIRQ, SOFTIRQ, TASK = 3, 2, 1, 0
BATCH = 1 << 8
PHYS = 1 << 16
MIX = 1 << 18

STATE_CMDS = ["update_schemes_stats", "update_schemes_tried_regions",
              "update_schemes_tried_bytes", "clear_schemes_tried_regions",
              "update_schemes_effective_quotas", "commit_schemes_quota_goals"]

# what boot.sh's scan-log.sh calls a kernel problem, and DAMON's refusals
# of event state changes
KERNEL_REPORT = re.compile(
    r"Kernel panic|Oops:|BUG:|WARNING:|cut here|KASAN:|UBSAN:|"
    r"general protection fault|possible circular locking dependency|"
    r"possible recursive locking|inconsistent lock state|"
    r"INFO: task .* blocked for more than|suspected memory leak|"
    r"Call Trace:|illegal event state change")

# data race reports, which boot.sh judges: in the KCSAN kernel only those
# that name DAMON count, and the title line alone cannot tell
DATA_RACE = re.compile(r"BUG: KCSAN: ")

# values that no parser takes, or that overflow; the model works out which
GARBAGE = ["abc", "1x", " 1", "1 ", "0x", "--1", "1\n\n", "1.5", "+", "-",
           "0x1g", "0b1", "08", "2147483648", "-2147483649", "4294967296",
           "18446744073709551616", "-9223372036854775809",
           "0xffffffffffffffffff", "99999999999999999999999", "Y", "on"]


class Failure(Exception):
    """An invariant that did not hold: kind names it for minimization."""

    def __init__(self, kind, expected, seen):
        super().__init__(f"{kind}: expected {expected}, seen {seen}")
        self.kind = kind
        self.expected = expected
        self.seen = seen


# --- the kernel's parsers ------------------------------------------------

def _parse_ull(s, allow_plus):
    """kstrtoull(s, 0): (0, value) or (-errno, None)."""
    if allow_plus and s.startswith("+"):
        s = s[1:]
    base = 10
    if s.startswith("0"):
        if len(s) > 2 and s[1] in "xX" and s[2] in "0123456789abcdefABCDEF":
            base, s = 16, s[2:]
        else:
            base = 8
    digits = "0123456789abcdef"[:base]
    n = 0
    val = 0
    while n < len(s) and s[n].lower() in digits:
        val = val * base + digits.index(s[n].lower())
        n += 1
    if val > U64_MAX:
        return -errno.ERANGE, None
    if n == 0:
        return -errno.EINVAL, None
    rest = s[n:]
    if rest.startswith("\n"):
        rest = rest[1:]
    if rest:
        return -errno.EINVAL, None
    return 0, val


def kstrtoull(s):
    """kstrtoull()/kstrtoul()/kstrtou64() of s, base 0."""
    return _parse_ull(s, True)


def kstrtoint(s):
    """kstrtoint() of s, base 0."""
    if s.startswith("-"):
        err, v = _parse_ull(s[1:], False)
        if err:
            return err, None
        if v > (1 << 63):
            return -errno.ERANGE, None
        v = -v
    else:
        err, v = kstrtoull(s)
        if err:
            return err, None
        if v > (1 << 63) - 1:
            return -errno.ERANGE, None
    if not -(1 << 31) <= v <= INT_MAX:
        return -errno.ERANGE, None
    return 0, v


def kstrtobool(s):
    """kstrtobool() of s, only for the values the fuzzer writes."""
    if not s:
        return -errno.EINVAL, None
    if s[0] in "yY1":
        return 0, True
    if s[0] in "nN0":
        return 0, False
    if s[0] in "oO" and len(s) > 1 and s[1] in "nNfF":
        return 0, s[1] in "nN"
    return -errno.EINVAL, None


def sysfs_streq(a, b):
    """sysfs_streq(): equal but for one trailing newline on either."""
    return a.removesuffix("\n") == b.removesuffix("\n")


# --- the model -----------------------------------------------------------

DAMON_MIN_REGION = 4096


def regions_ok(regions):
    """Whether damon_sysfs_set_regions() takes the [start, end] pairs:
    sorted, none reversed, and, aligned out to DAMON_MIN_REGION as
    damon_set_regions() does (with the kernel's overflow), none empty."""
    prev = prev_aligned = None
    for s, e in regions:
        if s > e or (prev is not None and prev > s):
            return False
        prev = e
    for s, e in regions:
        s_al = s & ~(DAMON_MIN_REGION - 1)
        e_al = (e + DAMON_MIN_REGION - 1) & ~(DAMON_MIN_REGION - 1) & U64_MAX
        if s_al >= e_al or (prev_aligned is not None and prev_aligned > s_al):
            return False
        prev_aligned = e_al
    return True


class Event:
    """One perf_events/<N>/ directory: its fields, as values or tokens."""

    def __init__(self):
        self.f = dict(PERF_DEFAULT)


class Target:
    """One targets/<T>/ directory."""

    def __init__(self):
        self.pid = ("int", 0)
        self.regions = []


class Ctx:
    """One contexts/<C>/ directory."""

    def __init__(self):
        self.ops = "vaddr"
        self.sample_us, self.aggr_us, self.update_us = 5000, 100000, 60000000
        self.min_nr, self.max_nr = 10, 1000
        self.page_table = True
        self.events = []
        self.targets = []
        self.nr_schemes = 0


class Kdamond:
    """One kdamonds/<K>/ directory and what the kernel has of it."""

    def __init__(self):
        self.ctxs = []
        self.running = False
        self.has_ctx = False
        self.run_ops = None
        self.run_pids = []
        self.run_events = None


class Model:
    """What the DAMON sysfs files should hold and answer.

    env resolves the symbolic values of the operations: workload pids,
    PMU type numbers, the sample rate.  The generator gives it a stand-in,
    the runner the guest's real values.
    """

    def __init__(self, env, errcpus=()):
        self.env = env
        self.kds = []
        self.online = set(range(env.nr_cpus))
        self.errcpus = set(errcpus)
        self.trace_on = False

    # resolving tokens
    def value_of(self, field, v):
        """The number a perf field (field) token stands for."""
        return self.env.resolve(v)

    def pid_alive(self, pid):
        """Whether the process a pid_target value names lives."""
        kind, v = pid[0], pid[1]
        if kind == "self":
            return True
        if kind == "w":
            # the pid written, which a workload started later does not have
            return self.env.workload_alive(v) and \
                self.env.pid_of(v) == pid[2]
        return v == 1

    def all_off(self):
        """Whether no kdamond runs."""
        return not any(k.running for k in self.kds)

    # paths
    @staticmethod
    def split(path):
        """The components of a path under kdamonds/."""
        return path.split("/")

    def lookup(self, path):
        """The model object a kdamonds/... path names, and the rest.

        Returns (kind, obj, leaf) or None if the path does not exist."""
        p = self.split(path)
        if p == ["nr_kdamonds"]:
            return ("root", self, "nr_kdamonds")
        k = int(p[0])
        if k >= len(self.kds):
            return None
        kd = self.kds[k]
        if p[1:] == ["state"]:
            return ("state", kd, "state")
        if p[1:] == ["contexts", "nr_contexts"]:
            return ("kd", kd, "nr_contexts")
        c = int(p[2])
        if c >= len(kd.ctxs):
            return None
        ctx = kd.ctxs[c]
        rest = p[3:]
        if rest == ["operations"]:
            return ("ctx", ctx, "operations")
        if rest[:2] == ["monitoring_attrs", "intervals"]:
            return ("ctx", ctx, rest[2])
        if rest[:2] == ["monitoring_attrs", "nr_regions"]:
            return ("ctx", ctx, "nr_" + rest[2])
        if rest[:2] == ["monitoring_attrs", "sample"]:
            s = rest[2:]
            if s[0] in ("primitives", "filters"):
                return ("ctx", ctx, s[1])
            if s[1] == "nr_perf_events":
                return ("ctx", ctx, "nr_perf_events")
            e = int(s[1])
            if e >= len(ctx.events):
                return None
            return ("event", ctx.events[e], s[2])
        if rest == ["targets", "nr_targets"]:
            return ("ctx", ctx, "nr_targets")
        if rest == ["schemes", "nr_schemes"]:
            return ("ctx", ctx, "nr_schemes")
        t = int(rest[1])
        if t >= len(ctx.targets):
            return None
        tgt = ctx.targets[t]
        if rest[2] == "pid_target":
            return ("target", tgt, "pid_target")
        if rest[3] == "nr_regions":
            return ("target", tgt, "nr_regions")
        r = int(rest[3])
        if r >= len(tgt.regions):
            return None
        return ("region", tgt.regions[r], rest[4])

    # what a file reads
    def read_value(self, path):
        """What the file at path should read, or None if it does not exist."""
        hit = self.lookup(path)
        if hit is None:
            return None
        kind, o, leaf = hit
        if kind == "root":
            return str(len(self.kds))
        if kind == "state":
            return "on" if o.running else "off"
        if kind == "kd":
            return str(len(o.ctxs))
        if kind == "event":
            return str(self.value_of(leaf, o.f[leaf]))
        if kind == "target":
            if leaf == "pid_target":
                return str(self.env.pid_number(o.pid))
            return str(len(o.regions))
        if kind == "region":
            return str(o[0] if leaf == "start" else o[1])
        return {
            "operations": lambda: o.ops,
            "sample_us": lambda: str(o.sample_us),
            "aggr_us": lambda: str(o.aggr_us),
            "update_us": lambda: str(o.update_us),
            "nr_min": lambda: str(o.min_nr),
            "nr_max": lambda: str(o.max_nr),
            "page_table": lambda: "Y" if o.page_table else "N",
            "page_fault": lambda: "N",
            "nr_filters": lambda: "0",
            "nr_perf_events": lambda: str(len(o.events)),
            "nr_targets": lambda: str(len(o.targets)),
            "nr_schemes": lambda: str(o.nr_schemes),
        }[leaf]()

    def files(self):
        """Every (path, value) the model knows, and every numbered
        directory with its expected number of entries."""
        out = [("nr_kdamonds", str(len(self.kds)))]
        dirs = [("", len(self.kds))]
        for k, kd in enumerate(self.kds):
            kp = f"{k}"
            out.append((kp + "/contexts/nr_contexts", str(len(kd.ctxs))))
            dirs.append((kp + "/contexts", len(kd.ctxs)))
            for c, ctx in enumerate(kd.ctxs):
                cp = f"{kp}/contexts/{c}"
                ma = cp + "/monitoring_attrs"
                paths = [cp + "/operations", ma + "/intervals/sample_us",
                         ma + "/intervals/aggr_us",
                         ma + "/intervals/update_us",
                         ma + "/nr_regions/min", ma + "/nr_regions/max",
                         ma + "/sample/primitives/page_table",
                         ma + "/sample/primitives/page_fault",
                         ma + "/sample/filters/nr_filters",
                         ma + "/sample/perf_events/nr_perf_events",
                         cp + "/targets/nr_targets",
                         cp + "/schemes/nr_schemes"]
                for e in range(len(ctx.events)):
                    for n, _, _ in PERF_FIELDS:
                        paths.append(f"{ma}/sample/perf_events/{e}/{n}")
                dirs.append((ma + "/sample/perf_events", len(ctx.events)))
                dirs.append((cp + "/targets", len(ctx.targets)))
                dirs.append((cp + "/schemes", ctx.nr_schemes))
                for t, tgt in enumerate(ctx.targets):
                    tp = f"{cp}/targets/{t}"
                    paths += [tp + "/pid_target", tp + "/regions/nr_regions"]
                    dirs.append((tp + "/regions", len(tgt.regions)))
                    for r in range(len(tgt.regions)):
                        paths += [f"{tp}/regions/{r}/start",
                                  f"{tp}/regions/{r}/end"]
                out += [(p, self.read_value(p)) for p in paths]
        return out, dirs

    # what a write answers, and what it changes
    def write(self, path, data):
        """Predict writing data to path: returns (errno, apply), where
        apply() makes the change if the write succeeds; errno is 0 for
        success, a set if more than one answer is right."""
        hit = self.lookup(path)
        if hit is None:
            return errno.ENOENT, None
        kind, o, leaf = hit
        tok = data.removesuffix("\n")
        data = self.env.real(data)
        if kind == "root":
            err, nr = kstrtoint(data)
            if err:
                return -err, None
            if nr < 0:
                return errno.EINVAL, None
            if not self.all_off():
                return errno.EBUSY, None

            def apply():
                self.kds = [Kdamond() for _ in range(nr)]
            return 0, apply
        if kind == "state":
            return self.state_write(o, data)
        if kind == "kd":
            err, nr = kstrtoint(data)
            if err:
                return -err, None
            if nr < 0 or nr > 1:
                return errno.EINVAL, None

            def apply():
                o.ctxs = [Ctx() for _ in range(nr)]
            return 0, apply
        if kind == "event":
            err, v = kstrtoull(data)
            if err or v > PERF_MAX[leaf]:
                return errno.EINVAL, None
            return 0, lambda: o.f.__setitem__(
                leaf, tok if tok.startswith("@") else v)
        if kind == "target":
            if leaf == "pid_target":
                if tok.startswith("@"):
                    pid = self.env.pid_token(tok)
                else:
                    err, v = kstrtoint(data)
                    if err:
                        return errno.EINVAL, None
                    pid = ("int", v)
                return 0, lambda: setattr(o, "pid", pid)
            err, nr = kstrtoint(data)
            if err:
                return -err, None
            if nr < 0:
                return errno.EINVAL, None
            return 0, lambda: setattr(o, "regions",
                                      [[0, 0] for _ in range(nr)])
        if kind == "region":
            err, v = kstrtoull(data)
            if err:
                return -err, None
            return 0, lambda: o.__setitem__(0 if leaf == "start" else 1, v)
        return self.ctx_write(o, leaf, data)

    def ctx_write(self, ctx, leaf, data):
        """Predict a write to a file of a context."""
        if leaf == "operations":
            for ops in ("vaddr", "fvaddr", "paddr"):
                if sysfs_streq(data, ops):
                    return 0, lambda: setattr(ctx, "ops", ops)
            return errno.EINVAL, None
        ul = {"sample_us": "sample_us", "aggr_us": "aggr_us",
              "update_us": "update_us", "nr_min": "min_nr",
              "nr_max": "max_nr"}
        if leaf in ul:
            err, v = kstrtoull(data)
            if err:
                return -err, None
            return 0, lambda: setattr(ctx, ul[leaf], v)
        if leaf == "page_table":
            err, v = kstrtobool(data)
            if err:
                return -err, None
            return 0, lambda: setattr(ctx, "page_table", v)
        if leaf == "page_fault":
            err, v = kstrtobool(data)
            if err:
                return -err, None
            return (errno.EOPNOTSUPP, None) if v else (0, lambda: None)
        if leaf == "nr_filters":
            err, v = kstrtoint(data)
            if err or v < 0:
                return errno.EINVAL, None
            return (errno.EOPNOTSUPP, None) if v else (0, lambda: None)
        err, nr = kstrtoint(data)
        if leaf == "nr_perf_events":
            if err or nr < 0 or nr > MAX_PERF_EVENTS:
                return errno.EINVAL, None
            return 0, lambda: setattr(ctx, "events",
                                      [Event() for _ in range(nr)])
        if err:
            return -err, None
        if nr < 0:
            return errno.EINVAL, None
        if leaf == "nr_targets":
            return 0, lambda: setattr(ctx, "targets",
                                      [Target() for _ in range(nr)])
        return 0, lambda: setattr(ctx, "nr_schemes", nr)

    def build_err(self, ctx):
        """EINVAL if damon_sysfs_build_ctx() refuses ctx, else 0."""
        if ctx.min_nr < 3 or ctx.min_nr > ctx.max_nr:
            return errno.EINVAL
        if ctx.sample_us > ctx.aggr_us:
            return errno.EINVAL
        if not ctx.events and not ctx.page_table:
            return errno.EINVAL
        if ctx.ops == "paddr" and len(ctx.targets) > 1:
            return errno.EINVAL
        for t in ctx.targets:
            if ctx.ops != "paddr" and not self.pid_alive(t.pid):
                return errno.EINVAL
            if not regions_ok(t.regions):
                return errno.EINVAL
        return 0

    def perf_attrs(self, ctx):
        """What perf is given for ctx's events, for comparing commits."""
        phys = ctx.ops == "paddr"
        out = []
        for ev in ctx.events:
            f = {n: self.value_of(n, v) for n, v in ev.f.items()}
            out.append((f["type"], f["config"], f["config1"], f["config2"],
                        f["freq"], f["precise_ip"], f["exclude_kernel"],
                        f["exclude_hv"], phys or f["sample_phys_addr"] == 1,
                        f["sample_freq"] if f["freq"] else f["sample_period"]))
        return out

    def uses_aux(self, attrs):
        """Whether perf_attrs() attrs have an event of the SPE-like PMU."""
        return any(a[0] == self.env.aux_type() for a in attrs or [])

    def aux_events(self):
        """(kdamond, event) of every event set to the SPE-like PMU."""
        return [(k, e) for k, kd in enumerate(self.kds) for ctx in kd.ctxs
                for e, ev in enumerate(ctx.events)
                if self.value_of("type", ev.f["type"]) ==
                self.env.aux_type()]

    def perf_err(self, ctx, held=False):
        """(stage, errno) of creating ctx's events: stage 'build' for the
        checks DAMON makes itself, 'perf' for what perf refuses.  held:
        whether a running context holds the SPE-like PMU, which takes one
        user at a time."""
        phys = ctx.ops == "paddr"
        rate = self.env.max_rate()
        fields = [{n: self.value_of(n, v) for n, v in ev.f.items()}
                  for ev in ctx.events]
        for f in fields:
            if phys and not f["sample_phys_addr"]:
                return "build", errno.EINVAL
            if (f["sample_freq"] if f["freq"] else f["sample_period"]) == 0:
                return "build", errno.EINVAL
            if f["freq"] and f["sample_freq"] > rate:
                return "build", errno.EINVAL
        for f in fields:
            t, c = f["type"], f["config"]
            if t == 1:
                if c not in SW_OK_CONFIGS:
                    return "perf", errno.ENOENT
            elif t == self.env.aux_type():
                # its event_init refuses freq before perf sees it is taken
                if f["freq"]:
                    return "perf", errno.EINVAL
                if held:
                    return "perf", errno.EBUSY
            elif t in self.env.test_types():
                continue
            elif t == 2:
                if c == self.env.tp_id():
                    return "perf", errno.EOPNOTSUPP
                return "perf", {errno.ENOENT, errno.EINVAL, errno.EOPNOTSUPP}
            elif t not in self.env.all_types():
                return "perf", errno.ENOENT
            else:
                return "perf", {errno.ENOENT, errno.EINVAL, errno.EOPNOTSUPP}
        return None, 0

    def state_write(self, kd, data):
        """Predict a write to a kdamond's state file."""
        cmd = None
        for c in ["on", "off", "commit"] + STATE_CMDS:
            if sysfs_streq(data, c):
                cmd = c
        if cmd is None:
            return errno.EINVAL, None
        if cmd == "off":
            if kd.running:
                return 0, lambda: setattr(kd, "running", False)
            return (errno.EPERM if kd.has_ctx else errno.EINVAL), None
        if len(kd.ctxs) != 1:
            return errno.EINVAL, None
        ctx = kd.ctxs[0]
        if cmd == "on":
            if kd.running:
                return errno.EBUSY, None
            err = self.build_err(ctx)
            if not err and ctx.events:
                held = any(o.running and self.uses_aux(o.run_events)
                           for o in self.kds)
                stage, err = self.perf_err(ctx, held)
                if err and stage == "perf":
                    online = set(self.online)

                    def refused():
                        kd.has_ctx = False
                        self.errcpus |= online
                    return err, refused
            if err:
                return err, lambda: setattr(kd, "has_ctx", False)
            return 0, lambda: self.started(kd, ctx)
        if not kd.running:
            return errno.EINVAL, None
        if cmd != "commit":
            return 0, lambda: None
        err = self.build_err(ctx)
        if not err and ctx.events and \
                self.perf_attrs(ctx) != kd.run_events:
            # the trial of the new events meets the running ones
            _, err = self.perf_err(ctx, self.uses_aux(kd.run_events))
        if err:
            return err, None
        return 0, lambda: self.started(kd, ctx)

    def started(self, kd, ctx):
        """kd runs ctx now, after an 'on' or a 'commit'."""
        kd.running = True
        kd.has_ctx = True
        kd.run_ops = ctx.ops
        kd.run_pids = [t.pid for t in ctx.targets]
        kd.run_events = self.perf_attrs(ctx)

    def stays_on(self, kd):
        """Whether kd has a target that keeps it running."""
        if kd.run_ops == "paddr":
            return True
        return any(self.pid_alive(p) for p in kd.run_pids)


# --- environments: how tokens resolve ------------------------------------

class FakeEnv:
    """The generator's stand-in for the guest: made-up numbers."""

    nr_cpus = NR_CPUS_GUESS

    def __init__(self):
        self.alive = set()
        self.spawned = set()

    def resolve(self, v):
        """The number a token (or a number) of a perf field stands for."""
        if isinstance(v, int):
            return v
        return {"@type:damon_test": 9, "@type:damon_test_ibs": 10,
                "@type:damon_test_hybrid": 11, "@type:damon_test_aux": 12,
                "@tp": 500,
                "@rate": SAMPLE_RATE, "@rate+1": SAMPLE_RATE + 1}[v]

    def workload_alive(self, k):
        """Whether workload #k runs."""
        return k in self.alive

    def pid_token(self, tok):
        """A pid_target token as the model keeps it: what it names, and
        the pid written for it now."""
        if tok == "@self":
            return ("self", 0, self.self_pid())
        k = int(tok[2:])
        return ("w", k, self.pid_of(k))

    @staticmethod
    def self_pid():
        """The fuzzer's own pid."""
        return 500

    def pid_of(self, k):
        """Workload #k's pid, or one nobody has if it never started."""
        return 1000 + k if k in self.spawned else 99998

    @staticmethod
    def pid_number(pid):
        """The number a pid_target reads."""
        return pid[2] if pid[0] in ("self", "w") else pid[1]

    def real(self, data):
        """What is written for data, which may hold a token."""
        tok = data.removesuffix("\n")
        if not tok.startswith("@"):
            return data
        nl = data[len(tok):]
        if tok == "@self" or tok.startswith("@w"):
            return str(self.pid_number(self.pid_token(tok))) + nl
        return str(self.resolve(tok)) + nl

    def max_rate(self):
        """kernel.perf_event_max_sample_rate."""
        return SAMPLE_RATE

    def test_types(self):
        """The type numbers of the test PMUs."""
        return {9, 10, 11, 12}

    def aux_type(self):
        """The type number of the SPE-like test PMU."""
        return 12

    def all_types(self):
        """The type numbers of every PMU."""
        return {1, 2, 5, 9, 10, 11, 12}

    def tp_id(self):
        """The tracepoint event id the 'tracepoint' profile uses."""
        return 500


class GuestEnv(FakeEnv):
    """The guest's real values."""

    def __init__(self, runner):
        super().__init__()
        self.runner = runner
        self.types = {}
        for d in os.listdir(PMUS):
            try:
                self.types[d] = int(read(f"{PMUS}/{d}/type"))
            except (OSError, ValueError):
                pass
        try:
            self.tp = int(read(f"{TRACING}/events/damon/damon_aggregated/id"))
        except OSError:
            self.tp = -1
        self.nr_cpus = len([c for c in os.listdir(CPUS)
                            if re.fullmatch(r"cpu[0-9]+", c)])

    def resolve(self, v):
        """The number a token (or a number) of a perf field stands for."""
        if isinstance(v, int):
            return v
        if v.startswith("@type:"):
            return self.types.get(v[6:], 4095)
        return {"@tp": self.tp, "@rate": self.max_rate(),
                "@rate+1": self.max_rate() + 1}[v]

    def workload_alive(self, k):
        """Whether workload #k runs."""
        w = self.runner.workloads.get(k)
        return w is not None and w.poll() is None

    @staticmethod
    def self_pid():
        """The fuzzer's own pid."""
        return os.getpid()

    def pid_of(self, k):
        """Workload #k's pid, or one nobody has if it never started."""
        return self.runner.workload_pid(k)

    def max_rate(self):
        """kernel.perf_event_max_sample_rate."""
        return int(read(MAX_RATE))

    def test_types(self):
        """The type numbers of the test PMUs."""
        return {self.types[p] for p in TEST_PMUS if p in self.types}

    def aux_type(self):
        """The type number of the SPE-like test PMU, or -1."""
        return self.types.get(AUX_PMU, -1)

    def all_types(self):
        """The type numbers of every PMU."""
        return set(self.types.values())

    def tp_id(self):
        """The tracepoint event id the 'tracepoint' profile uses."""
        return self.tp


# --- the operations --------------------------------------------------------

def ctx_path(k):
    """The context directory of kdamond k."""
    return f"{k}/contexts/0"


def perf_path(k):
    """The perf_events directory of kdamond k."""
    return f"{k}/contexts/0/monitoring_attrs/sample/perf_events"


def field_values(field):
    """Values for a perf_events file: valid, boundary and above the limit."""
    m = PERF_MAX[field]
    common = ["0", str(m), str(m + 1), "0x1", "01"]
    per = {
        "type": ["1", "1", "@type:damon_test", "@type:damon_test_ibs",
                 "@type:damon_test_hybrid", "1000", str(U32_MAX)],
        "config": ["2", "2", "0", "5", "12", "999", str(NMI | BATCH),
                   str(HARDIRQ | BATCH), str(SOFTIRQ | BATCH),
                   str(TASK | BATCH), str(HARDIRQ | BATCH | MIX),
                   str(NMI | 4 * BATCH | PHYS)],
        "config1": ["0", "4096"],
        "config2": ["0", "1"],
        "freq": ["0", "1"],
        "sample_freq": ["1", "100", "@rate", "@rate+1"],
        "sample_period": ["1", "4096", "200000", "1000000"],
        "sample_phys_addr": ["0", "1"],
        "precise_ip": ["0", "1", "2", "3"],
        "exclude_kernel": ["0", "1"],
        "exclude_hv": ["0", "1"],
    }[field]
    return per * 3 + common


# profiles: whole events, written field by field
PROFILES = {
    "pagefault": [("type", "1"), ("config", "2"), ("freq", "0"),
                  ("sample_period", "1")],
    "cpuclock": [("type", "1"), ("config", "0"), ("freq", "0"),
                 ("sample_period", "1000000")],
    "test_nmi": [("type", "@type:damon_test"), ("config", str(NMI | BATCH)),
                 ("sample_period", "200000")],
    "test_hardirq_mix": [("type", "@type:damon_test"),
                         ("config", str(HARDIRQ | BATCH | MIX)),
                         ("sample_period", "200000")],
    "test_freq": [("type", "@type:damon_test"),
                  ("config", str(SOFTIRQ | BATCH)),
                  ("freq", "1"), ("sample_freq", "1000")],
    "ibs": [("type", "@type:damon_test_ibs"), ("config", str(NMI | BATCH)),
            ("sample_period", "200000"), ("exclude_kernel", "1")],
    "hybrid": [("type", "@type:damon_test_hybrid"),
               ("config", str(HARDIRQ | BATCH)), ("sample_period", "200000")],
    "aux": [("type", "@type:damon_test_aux"), ("config", str(HARDIRQ | BATCH)),
            ("freq", "0"), ("sample_period", "200000")],
    "paddr_phys": [("type", "@type:damon_test"),
                   ("config", str(NMI | BATCH | PHYS)),
                   ("sample_period", "200000"), ("sample_phys_addr", "1")],
    "nopmu": [("type", "1000")],
    "sw_unknown": [("type", "1"), ("config", "999")],
    "tracepoint": [("type", "2"), ("config", "@tp")],
}


class Generator:
    """Makes the operation list of a seed, with the model as its guide."""

    def __init__(self, seed):
        self.rnd = random.Random(seed)
        self.env = FakeEnv()
        self.model = Model(self.env)
        self.nr_workloads = 0
        self.ops = []

    def emit(self, op):
        """Add op, and let the model follow it as if it went as predicted."""
        self.ops.append(op)
        m = self.model
        if op[0] == "w":
            err, apply = m.write(op[1], op[2])
            if isinstance(err, set):
                err = min(err)
            if apply and (err == 0 or op[1].endswith("/state")):
                apply()
        elif op[0] == "spawn":
            self.env.alive.add(op[1])
            self.env.spawned.add(op[1])
        elif op[0] == "kill":
            self.env.alive.discard(op[1])
        elif op[0] == "cpu" and op[2] in ("0", "1"):
            (m.online.add if op[2] == "1" else m.online.discard)(op[1])
        for kd in m.kds:
            if kd.running and not m.stays_on(kd):
                kd.running = False

    def w(self, path, value):
        """Write value to path, with a trailing newline now and then."""
        if self.rnd.random() < 0.3 and not value.endswith("\n"):
            value += "\n"
        self.emit(["w", path, value])

    def pick_profile(self, k, e):
        """A profile for event e of kdamond k.  The SPE-like PMU takes one
        user at a time, and DAMON keeps an event it refuses for a
        commit's new events: to keep outcomes that the model can tell,
        it is given to one event of one kdamond at a time."""
        # the SPE-like PMU more often than the others: its AUX areas come
        # and go with events, CPUs and commits
        prof = "aux" if self.rnd.random() < 0.2 else \
            self.rnd.choice(list(PROFILES))
        if prof == "aux" and any(a != (k, e)
                                 for a in self.model.aux_events()):
            prof = "test_nmi"
        return prof

    def pick_k(self):
        """A kdamond, now and then one that does not exist."""
        n = len(self.model.kds)
        if n == 0 or self.rnd.random() < 0.05:
            return n
        return self.rnd.randrange(n)

    def repair(self):
        """Now and then, bring back the directories most writes go to, so
        that fewer of them just meet ENOENT."""
        m, r = self.model, self.rnd
        if not m.kds:
            if r.random() < 0.5:
                self.w("nr_kdamonds", r.choice(["1", "2"]))
            return
        k = r.randrange(len(m.kds))
        kd = m.kds[k]
        if not kd.ctxs and r.random() < 0.5:
            self.w(f"{k}/contexts/nr_contexts", "1")
        elif kd.ctxs and not kd.ctxs[0].events and r.random() < 0.3:
            self.w(perf_path(k) + "/nr_perf_events", r.choice(["1", "2"]))

    def nr_value(self, valid):
        """A value for an nr_* file: mostly of valid, else edge or junk."""
        r = self.rnd.random()
        if r < 0.75:
            return str(self.rnd.choice(valid))
        if r < 0.85:
            return self.rnd.choice(["-1", "0x1", "01", "+1", "-0", "0x0"])
        return self.rnd.choice(GARBAGE)

    def setup(self):
        """A burst that makes a kdamond likely to start: a context with a
        target and one event of a profile, then 'on'."""
        r = self.rnd
        if not self.model.kds:
            self.w("nr_kdamonds", str(r.choice([1, 2])))
        k = r.randrange(len(self.model.kds))
        c = ctx_path(k)
        if self.model.kds[k].running:
            self.w(f"{k}/state", "off")
        self.w(f"{k}/contexts/nr_contexts", "1")
        ops = r.choice(["vaddr", "vaddr", "paddr"])
        self.w(c + "/operations", ops)
        self.w(c + "/targets/nr_targets", "1")
        if ops == "vaddr":
            alive = sorted(self.env.alive)
            if alive and r.random() < 0.8:
                self.w(c + "/targets/0/pid_target", f"@w{r.choice(alive)}")
            else:
                self.w(c + "/targets/0/pid_target", "@self")
        self.w(c + "/monitoring_attrs/sample/perf_events/nr_perf_events",
               str(r.choice([0, 1, 1, 1, 2])))
        nev = len(self.model.kds[k].ctxs[0].events)
        for e in range(nev):
            prof = "paddr_phys" if ops == "paddr" else \
                self.pick_profile(k, e)
            for f, v in PROFILES[prof]:
                self.w(f"{perf_path(k)}/{e}/{f}", v)
        self.w(f"{k}/state", "on")
        if r.random() < 0.5:
            self.emit(["run", 1])

    def recommit(self, k):
        """A burst that changes a running kdamond's events, and maybe its
        operations, and commits: DAMON makes the new events before it lets
        the old ones go, and keeps the old ones if perf refuses."""
        r = self.rnd
        ctx = self.model.kds[k].ctxs[0] if self.model.kds[k].ctxs else None
        if ctx is None:
            return
        if r.random() < 0.3 or not ctx.events:
            self.w(perf_path(k) + "/nr_perf_events", r.choice(["0", "1", "2"]))
        ops = None
        if r.random() < 0.3:
            ops = r.choice(["vaddr", "paddr"])
            self.w(ctx_path(k) + "/operations", ops)
        nev = len(ctx.events)
        for e in range(nev):
            if r.random() < 0.7:
                prof = "paddr_phys" if ops == "paddr" and r.random() < 0.8 \
                    else self.pick_profile(k, e)
                for f, v in PROFILES[prof]:
                    self.w(f"{perf_path(k)}/{e}/{f}", v)
        self.w(f"{k}/state", "commit")

    def step(self):
        """One operation, or a burst."""
        r = self.rnd
        x = r.random()
        running = [i for i, kd in enumerate(self.model.kds) if kd.running]
        if running and x < 0.06:
            self.recommit(r.choice(running))
            return
        x = r.random()
        k = self.pick_k()
        c = ctx_path(k)
        ma = c + "/monitoring_attrs"
        if x < 0.22:
            e = r.choice([0, 0, 0, 1, 1, 2, 31])
            f = r.choice([n for n, _, _ in PERF_FIELDS])
            v = r.choice(field_values(f)) if r.random() < 0.85 else \
                r.choice(GARBAGE)
            self.w(f"{perf_path(k)}/{e}/{f}", v)
        elif x < 0.28:
            self.w(perf_path(k) + "/nr_perf_events",
                   self.nr_value([0, 1, 1, 2, 3, 32, 33]))
        elif x < 0.32:
            e = r.choice([0, 0, 1])
            for f, v in PROFILES[self.pick_profile(k, e)]:
                self.w(f"{perf_path(k)}/{e}/{f}", v)
        elif x < 0.44:
            y = r.random()
            if y < 0.4:
                cmd = "on"
            elif y < 0.65:
                cmd = "off"
            elif y < 0.8:
                cmd = "commit"
            elif y < 0.95:
                cmd = r.choice(STATE_CMDS)
            else:
                cmd = r.choice(["onn", "ON", "of", "commit1", "1"])
            self.w(f"{k}/state", cmd)
        elif x < 0.48:
            self.w("nr_kdamonds", self.nr_value([0, 1, 1, 2, 2]))
        elif x < 0.51:
            self.w(f"{k}/contexts/nr_contexts", self.nr_value([0, 1, 1, 1, 2]))
        elif x < 0.54:
            self.w(c + "/targets/nr_targets", self.nr_value([0, 1, 1, 2]))
        elif x < 0.59:
            t = r.choice([0, 0, 1])
            v = r.random()
            if v < 0.5 and self.nr_workloads:
                val = f"@w{r.randrange(self.nr_workloads + 1)}"
            elif v < 0.7:
                val = "@self"
            else:
                val = r.choice(["-1", "0", "1", "99999", str(INT_MAX)] +
                               GARBAGE)
            self.w(f"{c}/targets/{t}/pid_target", val)
        elif x < 0.62:
            t = r.choice([0, 0, 1])
            if r.random() < 0.4:
                self.w(f"{c}/targets/{t}/regions/nr_regions",
                       self.nr_value([0, 1, 2]))
            else:
                rr = r.choice([0, 0, 1])
                end = r.choice(["start", "end"])
                val = r.choice(["0", "4096", "1048576", "4294967296",
                                str(U64_MAX), "0x100000", "0x40000000"] +
                               GARBAGE[:6])
                self.w(f"{c}/targets/{t}/regions/{rr}/{end}", val)
        elif x < 0.64:
            self.w(c + "/schemes/nr_schemes", self.nr_value([0, 1, 1]))
        elif x < 0.69:
            f, vals = r.choice([
                ("intervals/sample_us", ["1000", "5000", "10000", "100000"]),
                ("intervals/aggr_us", ["2000", "100000", "200000"]),
                ("intervals/update_us", ["0", "100000", "1000000"]),
                ("nr_regions/min", ["0", "2", "3", "10", "100", "2000"]),
                ("nr_regions/max", ["2", "10", "100", "1000"]),
            ])
            val = r.choice(vals) if r.random() < 0.8 else r.choice(GARBAGE)
            self.w(f"{ma}/{f}", val)
        elif x < 0.74:
            val = r.choice(["vaddr", "vaddr", "paddr", "paddr", "Vaddr",
                            "paddrx", "vaddr paddr", "1"])
            self.w(c + "/operations", val)
        elif x < 0.76:
            f, vals = r.choice([
                ("primitives/page_table", ["Y", "N", "1", "0", "x"]),
                ("primitives/page_fault", ["N", "Y", "0", "x"]),
                ("filters/nr_filters", ["0", "1", "-1", "x"]),
            ])
            self.w(f"{ma}/sample/{f}", r.choice(vals))
        elif x < 0.80:
            alive = sorted(self.env.alive)
            if alive and (r.random() < 0.5 or len(alive) >= 3):
                self.emit(["kill", r.choice(alive)])
            else:
                self.emit(["spawn", self.nr_workloads,
                           r.choice(["touch", "fault"])])
                self.nr_workloads += 1
        elif x < 0.85:
            cpu = r.randrange(1, NR_CPUS_GUESS)
            val = r.choice(["0", "1", "1", "x"])
            self.emit(["cpu", cpu, val])
        elif x < 0.87:
            self.emit(["perf_stats"])
        elif x < 0.90:
            self.emit(["trace", r.choice(["on", "off", "read", "read"])])
        elif x < 0.92:
            self.emit(["run", r.choice([0.5, 1, 2])])
        else:
            self.setup()

    def generate(self, n):
        """The first n operations of the seed."""
        while len(self.ops) < n:
            self.repair()
            self.step()
        return self.ops[:n]


# --- the guest side --------------------------------------------------------

def read(path):
    """A file's text without its trailing newline."""
    with open(path) as f:
        return f.read().removesuffix("\n")


def raw_write(path, data):
    """Write data to path in one write(2): 0 or the errno."""
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError as e:
        return e.errno
    try:
        os.write(fd, data.encode())
        return 0
    except OSError as e:
        return e.errno
    finally:
        os.close(fd)


def clear_trace():
    """Empty the trace buffer, as 'echo > trace' does (O_TRUNC)."""
    os.close(os.open(TRACING + "/trace", os.O_WRONLY | os.O_TRUNC))


def ename(e):
    """An errno, or a set of them, by name."""
    if isinstance(e, set):
        return "|".join(sorted(ename(x) for x in e))
    return "OK" if e == 0 else errno.errorcode.get(e, str(e))


def parse_perf_stats(text):
    """perf_stats: ({counter: value}, {cpu: state})."""
    counters, states = {}, {}
    for line in text.splitlines():
        m = re.match(r"\s*│\s*([a-z_]+)\s*│\s*(\d+)\s*│", line)
        if m:
            counters[m.group(1)] = int(m.group(2))
            continue
        if "report_missed=" in line or "ring_bytes=" in line:
            for k, v in re.findall(r"([a-z_]+)=(-?\d+)", line):
                counters[k] = int(v)
            continue
        m = re.match(r"\s*CPU(\d+): st=([A-Z]+)", line)
        if m:
            states[int(m.group(1))] = m.group(2)
    return counters, states


def laws(c):
    """The conservation laws of the admin guide, on counters since boot;
    the names of those that do not hold."""
    bad = []
    if c["callback"] != c["valid"] + c["null"] + c["addr_zero"] + \
            c["kernel"] + c["inv_phys"]:
        bad.append("callback=valid+null+addr_zero+kernel+inv_phys")
    if c["valid"] != c["enqueue"] + c["overflow"] + c["report_missed"]:
        bad.append("valid=enqueue+overflow+report_missed")
    if c["enqueue"] != c["dequeue"]:
        bad.append("enqueue=dequeue")
    if c["dequeue"] != c["match"] + c["miss_tgid"] + c["miss_region"] + \
            c["miss_bound"]:
        bad.append("dequeue=match+miss_*")
    if c["update"] > c["match"]:
        bad.append("update<=match")
    if c["ring_peak"] > c["ring_capacity"]:
        bad.append("ring_peak<=ring_capacity")
    return bad


def touch_pages(n=128):
    """Fault in n fresh pages: page fault events, if any are left, count."""
    m = mmap.mmap(-1, n * 4096)
    for i in range(n):
        m[i * 4096] = 1
    m.close()


class Runner:
    """Runs operations in the guest and checks the kernel against the
    model after each."""

    def __init__(self, verbose=True, inject=None, allow=None):
        self.verbose = verbose
        # kernel reports of a known bug, to look past it
        self.allow = re.compile(allow) if allow else None
        # an operation that fails on purpose, to test the minimization
        self.inject = inject
        self.workloads = {}
        self.env = GuestEnv(self)
        self.model = None
        try:
            self.kmsg = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            self.kmsg = None

    def kernel_reports(self):
        """The kernel log lines since the last call that report a
        problem."""
        bad = []
        while self.kmsg is not None:
            try:
                rec = os.read(self.kmsg, 8192)
            except BlockingIOError:
                break
            except OSError as e:
                if e.errno == errno.EPIPE:
                    continue
                break
            if not rec:
                break
            msg = rec.decode(errors="replace").split(";", 1)[-1]
            msg = msg.split("\n", 1)[0]
            if KERNEL_REPORT.search(msg) and not DATA_RACE.search(msg):
                bad.append(msg)
        return bad

    # workloads
    def workload_pid(self, k):
        """Workload #k's pid, or one nobody has if it never started."""
        w = self.workloads.get(k)
        # a workload never started in this run: a pid nobody has
        return w.pid if w is not None else 99998

    def spawn(self, k, mode):
        """Start workload #k, a hotcold in mode."""
        if k in self.workloads:
            return
        self.workloads[k] = subprocess.Popen(
            [HOTCOLD, "-m", mode, "-H", "1", "-C", "4", "-s", "0"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def kill(self, k):
        """Kill workload #k and reap it."""
        w = self.workloads.get(k)
        if w is None or w.poll() is not None:
            return
        w.kill()
        w.wait()

    def kill_all(self):
        """Kill every workload."""
        for k in list(self.workloads):
            self.kill(k)

    # sysfs with DAMON's trylock
    def busy_retry(self, fn):
        """fn() until it is not EBUSY, or the deadline passes."""
        deadline = time.monotonic() + BUSY_SECONDS
        while True:
            got = fn()
            if got != errno.EBUSY or time.monotonic() > deadline:
                return got
            time.sleep(0.05)

    def read_state(self, k):
        """Kdamond k's state file, read once DAMON sysfs is not busy."""
        def once():
            try:
                return read(f"{KDAMONDS}/{k}/state")
            except OSError as e:
                return e.errno
        return self.busy_retry(once)

    def poll_state(self, k, want, seconds):
        """Poll kdamond k's state until it reads want, or seconds pass."""
        deadline = time.monotonic() + seconds
        while True:
            got = self.read_state(k)
            if got == want or time.monotonic() > deadline:
                return got
            time.sleep(0.1)

    # clean state
    def reset(self):
        """All kdamonds off and gone, all CPUs online, no workload, no
        tracing: the state every run and replay starts from."""
        self.kill_all()
        self.workloads = {}
        try:
            n = int(read(KDAMONDS + "/nr_kdamonds"))
        except (OSError, ValueError):
            n = 0
        for k in range(n):
            if self.read_state(k) == "on":
                self.busy_retry(
                    lambda: raw_write(f"{KDAMONDS}/{k}/state", "off"))
                self.poll_state(k, "off", STOP_SECONDS)
        self.busy_retry(lambda: raw_write(KDAMONDS + "/nr_kdamonds", "0"))
        for cpu in range(1, self.env.nr_cpus):
            raw_write(f"{CPUS}/cpu{cpu}/online", "1")
        if os.path.isdir(TRACING + "/events/damon"):
            raw_write(TRACING + "/tracing_on", "0")
            raw_write(TRACING + "/events/damon/enable", "0")
        _, states = parse_perf_stats(read(PERF_STATS))
        errcpus = {c for c, s in states.items() if s == "ERROR"}
        if self.kmsg is not None:
            os.lseek(self.kmsg, 0, os.SEEK_END)
        self.model = Model(self.env, errcpus)

    # checks
    def check_state_files(self):
        """Each kdamond's state reads what the model says; one whose
        targets all exited is given time to stop by itself."""
        m = self.model
        for k, kd in enumerate(m.kds):
            if kd.running and not m.stays_on(kd):
                got = self.poll_state(k, "off", STOP_SECONDS)
                if got != "off":
                    raise Failure("self-stop",
                                  f"kdamond {k} off once its targets exited",
                                  got)
                kd.running = False
                continue
            got = self.read_state(k)
            want = "on" if kd.running else "off"
            if got != want:
                raise Failure("state", f"kdamond {k} state {want}", got)

    def check_tree(self):
        """Every file and numbered directory the model knows."""
        files, dirs = self.model.files()
        for path, want in files:
            try:
                got = read(f"{KDAMONDS}/{path}")
            except OSError as e:
                got = ename(e.errno)
            if got != want:
                raise Failure("readback", f"{path} = {want!r}", repr(got))
        for path, n in dirs:
            d = f"{KDAMONDS}/{path}".rstrip("/")
            got = sorted(int(x) for x in os.listdir(d) if x.isdigit())
            if got != list(range(n)):
                raise Failure("listing", f"{path}/ holds 0..{n - 1}", got)

    def perf_stats(self):
        """Read perf_stats and check what holds at any time: no refused
        state change, and no live state on an offline CPU."""
        counters, states = parse_perf_stats(read(PERF_STATS))
        for key in ("callback", "illegal_state_changes", "ring_capacity"):
            if key not in counters:
                raise Failure("perf_stats-format", f"a {key} counter",
                              "none")
        if counters["illegal_state_changes"] != 0:
            raise Failure("illegal-state-change", "illegal_state_changes=0",
                          counters["illegal_state_changes"])
        for cpu, st in states.items():
            if cpu not in self.model.online and st not in ("UNINIT", "ERROR"):
                raise Failure("offline-cpu-state",
                              f"offline CPU{cpu} UNINIT or ERROR", st)
        return counters, states

    def check_all_off(self, window):
        """With every kdamond off: UNINIT CPUs (ERROR where a start was
        refused), the laws, and, if window, no event left sampling."""
        counters, states = self.perf_stats()
        for cpu, st in states.items():
            ok = {"UNINIT", "ERROR"} if cpu in self.model.errcpus \
                else {"UNINIT"}
            if st not in ok:
                raise Failure("not-uninit", f"CPU{cpu} st in {sorted(ok)}", st)
        bad = laws(counters)
        if bad:
            raise Failure("laws", "the conservation laws", ", ".join(bad) +
                          " " + json.dumps(counters))
        if not window:
            return
        pmu0 = read(TEST_PMU_STATS) if os.path.exists(TEST_PMU_STATS) else ""
        touch_pages()
        # a window for a left-over timer-driven event to fire in
        end = time.monotonic() + 0.3
        while time.monotonic() < end:
            touch_pages(8)
        after, _ = self.perf_stats()
        pmu1 = read(TEST_PMU_STATS) if pmu0 else ""
        if after["callback"] != counters["callback"]:
            raise Failure("events-left", "no sample with all kdamonds off",
                          f"callback {counters['callback']} ->"
                          f" {after['callback']}")
        if pmu0.split("interrupts")[1:2] != pmu1.split("interrupts")[1:2]:
            raise Failure("events-left", "no test PMU interrupt with all off",
                          f"{pmu0.split()} -> {pmu1.split()}")

    def check_trace(self):
        """The damon_perf_sample lines of the trace hold sane fields;
        empty the buffer."""
        text = read(TRACING + "/trace")
        for line in text.splitlines():
            if "damon_perf_sample:" not in line:
                continue
            m = re.search(r"reason=(\d+) .*context=(\d+)", line)
            if not m or int(m.group(1)) > 4 or int(m.group(2)) > 3:
                raise Failure("trace", "reason 0..4, context 0..3", line)
        clear_trace()

    # the operations
    def run_for(self, seconds):
        """Let the kdamonds sample for a while, faulting pages.  The
        positive control: while a kdamond runs the page fault event with a
        short period, the faults are sampled."""
        before, _ = self.perf_stats()
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            touch_pages(8)
        after, _ = self.perf_stats()
        control = [k for k, kd in enumerate(self.model.kds) if kd.running and
                   any(e[0] == 1 and e[1] == 2 and e[4] == 0 and e[9] <= 4096
                       for e in kd.run_events)]
        if self.verbose:
            print(f"run: {after['callback'] - before['callback']} samples,"
                  f" page fault controls {control}")
        if control and after["callback"] == before["callback"]:
            raise Failure("positive-control",
                          f"page faults sampled while kdamonds {control} run",
                          f"callback stayed {after['callback']}")

    def do_write(self, path, data):
        """Write data, a value or a token, to a DAMON sysfs file: the
        errno must be the model's; a refused write changes nothing (the
        tree check after the step sees to that)."""
        want, apply = self.model.write(path, data)
        real = self.env.real(data)
        wants = want if isinstance(want, set) else {want}
        got = raw_write(f"{KDAMONDS}/{path}", real)
        if got == errno.EBUSY and errno.EBUSY not in wants:
            got = self.busy_retry(
                lambda: raw_write(f"{KDAMONDS}/{path}", real))
        if got not in wants:
            raise Failure("errno", f"write {real!r} to {path}: {ename(want)}",
                          ename(got))
        if apply and (got == 0 or path.endswith("/state")):
            apply()
        return got

    def step(self, op):
        """Run one operation and check every invariant after it."""
        m = self.model
        was_off = m.all_off()
        got = None
        if op == self.inject:
            raise Failure("injected", "no injected failure", json.dumps(op))
        if op[0] == "w":
            got = self.do_write(op[1], op[2])
        elif op[0] == "spawn":
            self.spawn(op[1], op[2])
        elif op[0] == "kill":
            self.kill(op[1])
        elif op[0] == "cpu":
            path = f"{CPUS}/cpu{op[1]}/online"
            want = errno.ENOENT if op[1] >= self.env.nr_cpus else \
                (0 if op[2] in ("0", "1") else errno.EINVAL)
            got = raw_write(path, op[2])
            if got != want:
                raise Failure("errno",
                              f"write {op[2]!r} to {path}: {ename(want)}",
                              ename(got))
            if got == 0:
                (m.online.add if op[2] == "1" else m.online.discard)(op[1])
                if read(path) != op[2]:
                    raise Failure("cpu-online", f"{path} = {op[2]}",
                                  read(path))
        elif op[0] == "perf_stats":
            self.perf_stats()
        elif op[0] == "trace" and os.path.isdir(TRACING + "/events/damon"):
            if op[1] == "on":
                raw_write(TRACING + "/tracing_on", "0")
                raw_write(TRACING + "/buffer_size_kb", "256")
                clear_trace()
                for e in os.listdir(TRACING + "/events/damon"):
                    if e.startswith("damon_perf_"):
                        raw_write(f"{TRACING}/events/damon/{e}/enable", "1")
                raw_write(TRACING + "/tracing_on", "1")
                m.trace_on = True
            elif op[1] == "off":
                raw_write(TRACING + "/tracing_on", "0")
                raw_write(TRACING + "/events/damon/enable", "0")
                m.trace_on = False
            else:
                self.check_trace()
        elif op[0] == "run":
            self.run_for(op[1])
        reports = self.kernel_reports()
        if reports and self.allow and \
                any(self.allow.search(r) for r in reports):
            print(f"fuzz: known kernel report allowed: {reports[1:2]}")
            reports = []
        if reports:
            raise Failure("kernel-report", "no kernel report",
                          " | ".join(reports[:3]))
        self.check_state_files()
        self.check_tree()
        self.perf_stats()
        if m.all_off():
            # a refused start, a stop or a self-stop: events must be gone
            window = not was_off or (op[0] == "w" and op[1].endswith("state"))
            self.check_all_off(window)
        return got

    def run(self, ops, seed=None, verbose=None):
        """Run ops from a clean state: (steps done, Failure or None)."""
        verbose = self.verbose if verbose is None else verbose
        self.reset()
        for i, op in enumerate(ops):
            try:
                got = self.step(op)
            except Failure as f:
                if verbose:
                    print(f"fuzz: FAIL seed={seed} step={i}"
                          f" op={json.dumps(op)}")
                    print(f"fuzz:   expected: {f.expected}")
                    print(f"fuzz:   seen:     {f.seen}")
                return i + 1, f
            if verbose:
                res = "" if got is None else " -> " + ename(got)
                print(f"step {i}: {json.dumps(op)}{res}", flush=True)
        return len(ops), None


def ddmin(ops, fails, deadline):
    """Delta debugging: a short sublist of ops for which fails() holds,
    found until the deadline (monotonic seconds)."""
    n = 2
    while len(ops) >= 2 and time.monotonic() < deadline:
        chunk = (len(ops) + n - 1) // n
        subsets = [ops[i:i + chunk] for i in range(0, len(ops), chunk)]
        reduced = False
        for i, s in enumerate(subsets):
            if time.monotonic() >= deadline:
                break
            complement = [op for j, sub in enumerate(subsets) if j != i
                          for op in sub]
            if fails(s):
                ops, n, reduced = s, 2, True
                break
            if n > 2 and fails(complement):
                ops, n, reduced = complement, max(n - 1, 2), True
                break
        if not reduced:
            if n >= len(ops):
                break
            n = min(len(ops), n * 2)
    return ops


def main():
    """Generate or load the operations, run them, minimize a failure."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ops", type=int, default=300)
    ap.add_argument("--replay", help="run the JSON operation list in FILE")
    ap.add_argument("--dump", help="write the operation list to FILE")
    ap.add_argument("--list", action="store_true",
                    help="print the operation list and exit (no guest needed)")
    ap.add_argument("--min-seconds", type=int, default=900,
                    help="time allowed for minimizing a failure")
    ap.add_argument("--quiet", action="store_true", help="no line per step")
    ap.add_argument("--allow-report", metavar="REGEX",
                    help="a kernel report with a line matching REGEX does"
                    " not fail the step (a known bug)")
    ap.add_argument("--inject", metavar="JSON",
                    help="fail on this operation, to test the minimization")
    args = ap.parse_args()

    if args.replay:
        with open(args.replay) as f:
            ops = json.load(f)
    else:
        ops = Generator(args.seed).generate(args.ops)
    if args.list:
        for op in ops:
            print(json.dumps(op))
        return 0
    if args.dump:
        with open(args.dump, "w") as f:
            json.dump(ops, f, indent=0)

    saved = {p: read(p) for p in (CPU_TIME_PCT, MAX_RATE)}
    # a fixed rate, which perf must not lower under the fuzzer: the model
    # reads it, and it throttles the test PMUs' storms
    raw_write(CPU_TIME_PCT, "0")
    raw_write(MAX_RATE, str(SAMPLE_RATE))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(2))
    runner = Runner(verbose=not args.quiet,
                    inject=json.loads(args.inject) if args.inject else None,
                    allow=args.allow_report)
    failures = 0
    done = 0
    t0 = time.monotonic()
    try:
        done, failure = runner.run(ops, args.seed)
        print(f"fuzz: {done} steps in {time.monotonic() - t0:.0f}s")
        if failure:
            failures = 1
            kind = failure.kind

            def fails(sub):
                _, f = runner.run(sub, verbose=False)
                return f is not None and f.kind == kind
            print(f"fuzz: minimizing {done} steps ({kind}), "
                  f"up to {args.min_seconds}s")
            small = ddmin(ops[:done], fails,
                          time.monotonic() + args.min_seconds)
            _, f = runner.run(small, verbose=False)
            print(f"fuzz: reproducer, {len(small)} steps"
                  f" ({'reproduces: ' + str(f) if f else 'not reproduced'}),"
                  " for --replay:")
            print("fuzz: reproducer begin")
            print("[" + ",\n".join(json.dumps(op) for op in small) + "]")
            print("fuzz: reproducer end")
    finally:
        runner.reset()
        runner.kill_all()
        for p, v in saved.items():
            raw_write(p, v)
    print(f"fuzz: seed={args.seed} ops={len(ops)} done={done}"
          f" failures={failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
