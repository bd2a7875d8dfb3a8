#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn make bench's measurement records into tables, fits, a results
JSON and PNG plots.

Usage: bench-report.py [--quick] RECORDS_FILE OUT_DIR

Input: RECORDS_FILE is the guest console log of a bench run.  Every line
that starts with "BENCH " (once carriage returns are removed) carries one
JSON object, a record, whose "exp" field names its experiment: meta,
kdamond, slowdown, insns, check, accuracy, patterns, sweep or
ringloss.  Other
lines are
ignored.  There must be exactly one meta record and at least one record
of every other experiment.  An insns record says whether its run was
under QEMU's -icount (field "icount"), without which its figures are
nanoseconds, not instructions.

Output:
  stdout                 one fixed-width table per experiment, then a
                         Goals block giving every goal with its measured
                         figure and "met", "MISSED" or "not measured"
  OUT_DIR/results.json   {"meta": the meta record, "records": every record
                         in file order, "summary": the aggregates below,
                         per experiment, plus "goals"}
  OUT_DIR/kdamond-cost.png, slowdown.png, check-cost.png,
  OUT_DIR/accuracy-heatmap.png, sweep.png, ring-loss.png

Repeated cells (field "rep") are summarised as median [min-max] over the
repetitions, with n.  A ratio between two modes is taken per repetition,
rep i of one mode over rep i of the other in the same cell of this run,
and the ratios are summarised the same way; figures of different runs
are never compared.

Exit status: 0 when the input is well formed, whether or not the goals
are met; 1 when it is not (no meta record or more than one, a record
that does not parse or lacks a field, the same cell and rep twice, or
an experiment with no records at all); 2 for bad usage.  A figure that
cannot be drawn (no data, or --quick's single repetition of tiny cells)
is replaced by a placeholder PNG and a note; it never fails the run.
"""

import argparse
import json
import math
import os
import sys
import traceback

import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# ---------------------------------------------------------------------------
# Records

NUM = "a number"
POS = "a positive number"
REP = "a repetition index (integer >= 0)"
LIST = "a list"
REGIONS = 'a region count, "default" or "page"'

KD_MODES = ("ab", "pf", "tpmu")
PERF_MODES = ("pf", "tpmu")
SLOW_MODES = ("none", "ab", "pf", "tpmu")
PATTERNS = ("ranges", "zipf", "threads")
INSNS_KERNELS = ("observe", "no-observe", "observe-jl", "no-observe-jl")
INSNS_CELLS = tuple((k, t) for k in INSNS_KERNELS for t in ("off", "on"))

SCHEMA = {
    "meta": {},
    "kdamond": {"mode": KD_MODES, "ws_mb": POS, "regions": REGIONS,
                "nr_regions": NUM, "rep": REP, "cpu_ns": NUM,
                "wall_ns": POS},
    "slowdown": {"mode": SLOW_MODES, "rep": REP, "pages": NUM,
                 "wall_ns": POS},
    "insns": {"kernel": INSNS_KERNELS, "trace": ("off", "on"),
              "rep": REP, "hits": NUM, "time_ns": NUM, "calib_hits": NUM,
              "calib_time_ns": NUM, "calib_insns": NUM},
    "check": {"mode": ("ab", "perf"), "regions": REGIONS, "nr_regions": NUM,
              "period_ns": NUM, "rep": REP, "calls": NUM, "check_ns": NUM,
              "records": NUM, "drain_ns": NUM},
    "accuracy": {"mode": KD_MODES, "rep": REP, "snapshots": LIST,
                 "moves": LIST, "converge_s": LIST},
    "patterns": {"pattern": PATTERNS, "mode": KD_MODES, "rep": REP,
                 "writes": ("fault", "touch"), "hot_mb": POS,
                 "snapshots": LIST},
    "sweep": {"mode": KD_MODES, "setting": POS, "rep": REP,
              "snapshots": LIST, "cpu_ns": NUM, "wall_ns": POS,
              "pages": NUM, "none_pages": NUM, "none_wall_ns": POS},
    "ringloss": {"period_ns": POS, "batch": POS, "rep": REP, "secs": POS,
                 "per_cpu": LIST},
}

# The fields that, with "rep", identify one measurement.
CELL = {
    "kdamond": ("ws_mb", "regions", "mode"),
    "slowdown": ("mode",),
    "insns": ("kernel", "trace"),
    "check": ("mode", "regions", "period_ns"),
    "accuracy": ("mode",),
    "patterns": ("pattern", "mode"),
    "sweep": ("mode", "setting"),
    "ringloss": ("period_ns", "batch"),
}

EXPERIMENTS = ("kdamond", "slowdown", "insns", "check", "accuracy",
               "patterns", "sweep", "ringloss")

# Reference rates for the ring-loss goal.
PERF_RECORD_HZ = 4000
MAX_SAMPLE_RATE = 100000


class Malformed(Exception):
    """The records file does not follow the schema."""


def is_num(v):
    return (isinstance(v, (int, float)) and not isinstance(v, bool)
            and math.isfinite(v))


def region_key(v):
    """Normalise a "regions" field: "default", "page" or a count as a
    string ("1000"); None if it is none of these."""
    if v in ("default", "page"):
        return v
    if isinstance(v, str) and v.isdigit() and int(v) > 0:
        return str(int(v))
    if is_num(v) and v > 0 and int(v) == v:
        return str(int(v))
    return None


def region_order(key):
    """Sort "default" first, then counts, then "page"."""
    if key == "default":
        return (0, 0)
    if key == "page":
        return (2, 0)
    return (1, int(key))


def check_field(rec, name, kind):
    if name not in rec:
        raise Malformed('no field "%s"' % name)
    v = rec[name]
    if isinstance(kind, tuple):
        ok = v in kind
        kind = "one of " + ", ".join(kind)
    elif kind == NUM:
        ok = is_num(v)
    elif kind == POS:
        ok = is_num(v) and v > 0
    elif kind == REP:
        ok = isinstance(v, int) and not isinstance(v, bool) and v >= 0
    elif kind == LIST:
        ok = isinstance(v, list)
    else:
        ok = region_key(v) is not None
    if not ok:
        raise Malformed('field "%s" is %s, want %s'
                        % (name, json.dumps(v), kind))


def check_items(rec, name, fields):
    """Every item of list field NAME is an object whose FIELDS are
    numbers (or null, for the fields marked nullable)."""
    for i, item in enumerate(rec[name]):
        if not isinstance(item, dict):
            raise Malformed('%s[%d] is not an object' % (name, i))
        for field, nullable in fields:
            v = item.get(field)
            if not (is_num(v) or (nullable and v is None)):
                raise Malformed('%s[%d].%s is %s, want a number'
                                % (name, i, field, json.dumps(v)))


def check_numbers(rec, name, nullable):
    for i, v in enumerate(rec[name]):
        if not (is_num(v) or (nullable and v is None)):
            raise Malformed('%s[%d] is %s, want a number%s'
                            % (name, i, json.dumps(v),
                               " or null" if nullable else ""))


def check_record(rec):
    for name, kind in SCHEMA.get(rec["exp"], {}).items():
        check_field(rec, name, kind)
    if rec["exp"] in ("accuracy", "patterns", "sweep"):
        check_items(rec, "snapshots", (("t", False), ("f1", False),
                                       ("precision", True),
                                       ("recall", True)))
    if rec["exp"] == "patterns":
        # pacing, from 2026-12-07 on: passes a second (0: unpaced) and
        # the aggregation interval
        for name, kind in (("rate", NUM), ("aggr_us", POS)):
            if name in rec:
                check_field(rec, name, kind)
        if is_num(rec.get("rate")) and rec["rate"] < 0:
            raise Malformed('field "rate" is %s, want 0 or more'
                            % json.dumps(rec["rate"]))
    if rec["exp"] == "accuracy":
        check_numbers(rec, "moves", False)
        check_numbers(rec, "converge_s", True)
    elif rec["exp"] == "ringloss":
        if not rec["per_cpu"]:
            raise Malformed("per_cpu is empty")
        check_items(rec, "per_cpu", (("cpu", False), ("enq", False),
                                     ("ovf", False)))


def reject_constant(name):
    raise ValueError("%s is not a number JSON allows" % name)


def parse_record(text):
    try:
        rec = json.loads(text, parse_constant=reject_constant)
    except json.JSONDecodeError as e:
        raise Malformed("bad JSON at column %d: %s" % (e.colno + 6, e.msg))
    except ValueError as e:
        raise Malformed("bad JSON: %s" % e)
    if not isinstance(rec, dict):
        raise Malformed("not a JSON object")
    if not isinstance(rec.get("exp"), str):
        raise Malformed('no "exp" field')
    check_record(rec)
    return rec


def cell_key(rec, fields):
    return tuple(region_key(rec[f]) if f == "regions" else rec[f]
                 for f in fields)


def read_records(path):
    """Return (meta, records, notes); raise Malformed on bad input."""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", errors="replace")
    metas, records, notes, seen = [], [], [], {}
    for lineno, line in enumerate(text.split("\n"), 1):
        line = line.replace("\r", "")
        if not line.startswith("BENCH "):
            continue
        try:
            rec = parse_record(line[len("BENCH "):])
        except Malformed as e:
            raise Malformed("line %d: %s" % (lineno, e))
        exp = rec["exp"]
        if exp == "meta":
            metas.append(lineno)
        elif exp in CELL:
            key = (exp,) + cell_key(rec, CELL[exp]) + (rec["rep"],)
            if key in seen:
                raise Malformed("line %d: same %s cell and rep as line %d"
                                % (lineno, exp, seen[key]))
            seen[key] = lineno
        else:
            notes.append('line %d: unknown experiment "%s", kept in '
                         'results.json but not reported' % (lineno, exp))
        records.append(rec)
    if not metas:
        raise Malformed("no meta record")
    if len(metas) > 1:
        raise Malformed("%d meta records (lines %s), want one"
                        % (len(metas), ", ".join(map(str, metas))))
    meta = next(r for r in records if r["exp"] == "meta")
    return meta, records, notes


# ---------------------------------------------------------------------------
# Statistics

def spread(values):
    """Median, min, max and n of VALUES (a list or a {rep: value} dict),
    leaving out None; None if nothing is left."""
    if isinstance(values, dict):
        values = values.values()
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return None
    return {"median": float(np.median(vals)), "min": float(vals[0]),
            "max": float(vals[-1]), "n": len(vals)}


def med(s):
    return None if s is None else s["median"]


def group(recs, fields):
    """{cell key: {rep: record}}."""
    out = {}
    for r in recs:
        out.setdefault(cell_key(r, fields), {})[r["rep"]] = r
    return out


def per_rep(reps, fn):
    """{rep: fn(record)} for one cell's {rep: record}."""
    return {rep: fn(r) for rep, r in reps.items()}


def div(a, b):
    return None if a is None or b in (None, 0) else a / b


def paired(num, den):
    """Ratios num[rep] / den[rep] over the reps both cells have."""
    return [div(num[rep], den[rep]) for rep in sorted(set(num) & set(den))]


def fit_line(xs, ys):
    """Least-squares (intercept, slope) of ys = a + b * xs, or None when
    fewer than two distinct xs."""
    if len(set(xs)) < 2:
        return None
    b, a = np.polyfit(np.asarray(xs, float), np.asarray(ys, float), 1)
    return float(a), float(b)


# ---------------------------------------------------------------------------
# Text output

def fnum(x):
    if x is None:
        return "-"
    if math.isinf(x):
        return "inf"
    a = abs(x)
    if a == 0:
        return "0"
    if a >= 100:
        return "%.0f" % x
    if a >= 10:
        return "%.1f" % x
    if a >= 1:
        return "%.2f" % x
    return "%.3g" % x


def fspread(s, scale=1.0):
    """"median [min-max]", or just the value when there is one rep."""
    if s is None:
        return "-"
    m, lo, hi = (s[k] * scale for k in ("median", "min", "max"))
    if s["n"] == 1 or lo == hi:
        return fnum(m)
    return "%s [%s-%s]" % (fnum(m), fnum(lo), fnum(hi))


def fmt_n(*spreads):
    """The n column: the distinct rep counts of a row's figures."""
    ns = sorted({s["n"] for s in spreads if s is not None})
    return "/".join(map(str, ns)) if ns else "0"


def print_table(title, headers, rows, footer=()):
    print(title)
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows)]
    line = "  ".join("-" * w for w in widths)
    print(line)
    for row in [headers] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths))
              .rstrip())
        if row is headers:
            print(line)
    if not rows:
        print("(no records)")
    print(line)
    for f in footer:
        print(f)
    print()


def goal(name, measured, status):
    return {"goal": name, "measured": measured, "status": status}


# ---------------------------------------------------------------------------
# kdamond: kdamond CPU cost per second of monitoring

def kd_cost(r):
    """kdamond CPU ms per second of monitoring."""
    return r["cpu_ns"] / r["wall_ns"] * 1000.0


def kd_big_region(g, ws):
    """The "page" cell of working set WS if there is one, else its
    largest region count; None if WS has only "default"."""
    regs = {k[1] for k in g if k[0] == ws and k[1] != "default"}
    if "page" in regs:
        return "page"
    counts = [int(r) for r in regs]
    return str(max(counts)) if counts else None


def kd_goals(g, cost, wss):
    goals = []
    for ws in wss:
        big = kd_big_region(g, ws)
        for m in PERF_MODES:
            name = ("[kdamond] %s cost <= 1/10 of ab at page granularity "
                    "(or the most regions), ws %g MiB" % (m, ws))
            if big is None or (ws, big, m) not in g or \
                    (ws, big, "ab") not in g:
                goals.append(goal(name, "no %s and ab cells beyond "
                                  "default regions" % m, "not measured"))
            else:
                r = spread(paired(cost[(ws, big, m)], cost[(ws, big, "ab")]))
                nr = spread(per_rep(g[(ws, big, m)],
                                    lambda rec: rec["nr_regions"]))
                goals.append(goal(
                    name, "%s/ab = %s at regions=%s (%s regions)"
                    % (m, fspread(r), big, fnum(med(nr))),
                    "not measured" if r is None else
                    "met" if r["median"] <= 0.1 else "MISSED"))
            name = ("[kdamond] %s cost flat in regions (most/default "
                    "<= 1.5), ws %g MiB" % (m, ws))
            if big is None or (ws, big, m) not in g or \
                    (ws, "default", m) not in g:
                goals.append(goal(name, "no %s cells at default and more "
                                  "regions" % m, "not measured"))
            else:
                r = spread(paired(cost[(ws, big, m)],
                                  cost[(ws, "default", m)]))
                flat = r is not None and r["median"] <= 1.5
                goals.append(goal(
                    name, "cost(regions=%s)/cost(default) = %s: %s"
                    % (big, fspread(r), "flat" if flat else "not flat"),
                    "not measured" if r is None else
                    "met" if flat else "MISSED"))
    return goals


def kd_view_memory(g, wss):
    """The view of the regions' memory at the most regions of each working
    set, per perf mode, from perf_stats' view_bytes read after the cell:
    the largest view since boot, the cell's own, as the cells run from the
    fewest regions up.  ({"ws/mode": {...}}, footer lines)."""
    out, lines = {}, []
    for ws in wss:
        # a quick run has the default regions alone
        big = kd_big_region(g, ws) or "default"
        for m in PERF_MODES:
            reps = g.get((ws, big, m), {})
            b = spread(per_rep(reps, lambda r: r.get("view_bytes")
                               if is_num(r.get("view_bytes")) else None))
            n = spread(per_rep(reps, lambda r: r["nr_regions"]))
            if b is None or not med(n):
                continue
            per = b["median"] / med(n)
            out["%g/%s" % (ws, m)] = {"regions": big, "bytes": b,
                                      "nr_regions": n,
                                      "bytes_per_region": per}
            lines.append("  ws %g MiB, regions=%s, %s: %s bytes (%.1f MiB) "
                         "for %s regions, %.1f bytes a region"
                         % (ws, big, m, fnum(b["median"]),
                            b["median"] / 1048576.0, fnum(med(n)), per))
    if not lines:
        return out, ["view memory: not measured (no kdamond record of a "
                     "perf mode has view_bytes)"]
    return out, ["view memory, read from the kernel (perf_stats "
                 "view_bytes after the cell, median over reps):"] + lines


def report_kdamond(recs, meta):
    g = group(recs, ("ws_mb", "regions", "mode"))
    cost = {k: per_rep(v, kd_cost) for k, v in g.items()}
    keys = sorted({k[:2] for k in g},
                  key=lambda k: (k[0], region_order(k[1])))
    cells, rows = [], []
    for ws, reg in keys:
        c = {"ws_mb": ws, "regions": reg, "cost_ms_per_s": {},
             "nr_regions": {}, "samples_per_s": {}, "ratio_to_ab": {}}
        for m in KD_MODES:
            if (ws, reg, m) not in g:
                continue
            reps = g[(ws, reg, m)]
            c["cost_ms_per_s"][m] = spread(cost[(ws, reg, m)])
            c["nr_regions"][m] = spread(per_rep(
                reps, lambda r: r["nr_regions"]))
            c["samples_per_s"][m] = spread(per_rep(
                reps, lambda r: r.get("samples", 0) / r["wall_ns"] * 1e9))
        ab = cost.get((ws, reg, "ab"), {})
        for m in PERF_MODES:
            c["ratio_to_ab"][m] = spread(paired(cost.get((ws, reg, m), {}),
                                                ab))
        cells.append(c)
        nrs = [med(s) for s in c["nr_regions"].values()]
        rows.append(["%g" % ws, reg, fnum(med(spread(nrs))),
                     fmt_n(*c["cost_ms_per_s"].values())]
                    + [fspread(c["cost_ms_per_s"].get(m)) for m in KD_MODES]
                    + [fspread(c["ratio_to_ab"][m]) for m in PERF_MODES])
    wss = sorted({k[0] for k in g})
    view, view_lines = kd_view_memory(g, wss)
    print_table(
        "kdamond: kdamond CPU ms per second of monitoring, "
        "median [min-max] over reps",
        ["ws MiB", "regions", "nr_regions", "n", "ab ms/s", "pf ms/s",
         "tpmu ms/s", "pf/ab", "tpmu/ab"], rows,
        ["ab = Accessed bits, pf = perf on the software page-fault event, "
         "tpmu = perf on the test PMU at a fixed rate;",
         "ratios are per rep (rep i of a perf mode over rep i of ab in "
         "the same cell)."] + view_lines)
    if not wss:
        return {"cells": cells, "view_memory": view}, [
            goal("[kdamond] %s cost <= 1/10 of ab, flat in regions" % m,
                 "no kdamond records", "not measured")
            for m in PERF_MODES]
    return {"cells": cells, "view_memory": view}, kd_goals(g, cost, wss)


def kd_loss(r):
    """CPU ms per second the monitored workload lost: it is one thread
    that runs all the time, so a rate of x of the unmonitored one loses
    (1 - x) of a CPU.  None for a record without the unmonitored window
    (before 2026-12-05)."""
    if not is_num(r.get("none_pages")) or not is_num(r.get("pages")) or \
            not r.get("none_wall_ns"):
        return None
    none = div(r["none_pages"], r["none_wall_ns"])
    rate = div(r["pages"], r["wall_ns"])
    x = div(rate, none)
    return None if x is None else (1.0 - x) * 1000.0


def report_total(kd_recs, insns_summary):
    """The kdamond's CPU and the workload's loss added up, per kdamond
    cell and mode; and the sampling side's instructions per second."""
    g = group(kd_recs, ("ws_mb", "regions", "mode"))
    ins = None
    for c in insns_summary.get("cells", []):
        if (c["kernel"], c["trace"]) == ("observe", "off"):
            ins = med(c["corrected"])
    total = {k: per_rep(v, lambda r: None if kd_loss(r) is None
                        else kd_cost(r) + kd_loss(r))
             for k, v in g.items()}
    keys = sorted({k[:2] for k in g},
                  key=lambda k: (k[0], region_order(k[1])))
    cells, rows = [], []
    for ws, reg in keys:
        c = {"ws_mb": ws, "regions": reg, "kdamond_ms_per_s": {},
             "workload_loss_ms_per_s": {}, "total_ms_per_s": {},
             "total_ratio_to_ab": {}, "sampling_insns_per_s": {}}
        row = ["%g" % ws, reg]
        for m in KD_MODES:
            reps = g.get((ws, reg, m))
            if not reps:
                row += ["-"] * (2 if m == "ab" else 3)
                continue
            c["kdamond_ms_per_s"][m] = spread(per_rep(reps, kd_cost))
            c["workload_loss_ms_per_s"][m] = spread(per_rep(reps, kd_loss))
            c["total_ms_per_s"][m] = spread(total[(ws, reg, m)])
            row += [fspread(c["workload_loss_ms_per_s"][m]),
                    fspread(c["total_ms_per_s"][m])]
            if m == "ab":
                continue
            sps = spread(per_rep(reps, lambda r: r.get("samples", 0) /
                                 r["wall_ns"] * 1e9))
            c["sampling_insns_per_s"][m] = None if ins is None or \
                sps is None else {k: sps[k] * ins if k != "n" else sps[k]
                                  for k in sps}
            c["total_ratio_to_ab"][m] = spread(paired(
                total[(ws, reg, m)], total.get((ws, reg, "ab"), {})))
            row.append(fspread(c["total_ratio_to_ab"][m]))
        row += [fspread(c["sampling_insns_per_s"].get(m), 1e-6)
                for m in PERF_MODES]
        cells.append(c)
        rows.append(row)
    footer = [
        "loss = (1 - pages/s / pages/s of the same workload unmonitored, "
        "in the same cell and rep) x 1000: the CPU ms per second the "
        "workload's one thread lost;",
        "total = kdamond ms/s + loss; /ab is per rep.  The sampling side "
        "(page-fault handler, NMIs) runs in the workload's time, so its "
        "cost is in the loss;",
        "Minsns/s = instructions per sample (insns, observe kernel, trace "
        "off: %s) x samples per second, a part of the loss, not added."
        % fnum(ins),
        "On 2 host cores a busy kdamond's vCPU also takes host time from "
        "the workload's vCPU: ab's loss includes that."]
    if kd_recs and not any(kd_loss(r) is not None for r in kd_recs):
        footer.append("no kdamond record has the unmonitored window: "
                      "not measured.")
    print_table(
        "total: kdamond CPU + workload loss, ms per second, median "
        "[min-max] over reps",
        ["ws MiB", "regions", "ab loss", "ab total", "pf loss",
         "pf total", "pf/ab", "tpmu loss", "tpmu total", "tpmu/ab",
         "pf Minsns/s", "tpmu Minsns/s"], rows, footer)
    return {"cells": cells, "insns_per_sample": ins}


def plot_kdamond(summary, ax):
    styles = ("o-", "s--", "^:", "D-.", "v-")
    colours = {"ab": "tab:blue", "pf": "tab:orange", "tpmu": "tab:green"}
    wss = sorted({c["ws_mb"] for c in summary["cells"]})
    ys = []
    for m in KD_MODES:
        for i, ws in enumerate(wss):
            pts = []
            for c in summary["cells"]:
                s = c["cost_ms_per_s"].get(m)
                nr = med(c["nr_regions"].get(m))
                if c["ws_mb"] == ws and s and nr and nr > 0:
                    pts.append((nr, s["median"], s["min"], s["max"]))
            if not pts:
                continue
            pts.sort()
            x, y, lo, hi = (np.array(v) for v in zip(*pts))
            ax.errorbar(x, y, yerr=[y - lo, hi - y], fmt=styles[i % 5],
                        color=colours[m], capsize=3,
                        label="%s, ws %g MiB" % (m, ws))
            ys.extend(lo)
            ys.extend(hi)
    if not ys:
        raise NoData("no kdamond cell with a cost and a region count")
    ax.set_xscale("log")
    log_if_decades(ax, "y", ys)
    ax.set_xlabel("regions DAMON had (mean)")
    ax.set_ylabel("kdamond CPU ms per s of monitoring")
    ax.set_title("kdamond cost vs regions (median, bars min-max)")
    ax.legend(fontsize="small", ncol=len(KD_MODES))
    ax.grid(True, which="both", alpha=0.3)


# ---------------------------------------------------------------------------
# slowdown: workload progress under each mode

def report_slowdown(recs, meta):
    g = group(recs, ("mode",))
    rate = {k[0]: per_rep(v, lambda r: r["pages"] / r["wall_ns"] * 1e9)
            for k, v in g.items()}
    modes, rows = {}, []
    for m in SLOW_MODES:
        if m not in rate:
            continue
        ratio = spread(paired(rate[m], rate.get("none", {})))
        s = spread(rate[m])
        modes[m] = {"pages_per_s": s, "ratio_to_none": ratio}
        slow = "-" if ratio is None else "%.1f%%" % (
            (1 - ratio["median"]) * 100)
        rows.append([m, fmt_n(s), fspread(s), fspread(ratio), slow])
    print_table(
        "slowdown: pages the workload wrote per second, median [min-max]",
        ["mode", "n", "pages/s", "rate/none", "slowdown"], rows,
        ["rate/none is per rep (rep i of a mode over rep i of none); "
         "slowdown = 1 - median rate/none."])
    return {"modes": modes}, []


def plot_slowdown(summary, axes):
    modes = [m for m in SLOW_MODES if m in summary["modes"]]
    if not modes:
        raise NoData("no slowdown records")
    for ax, key, label in ((axes[0], "pages_per_s", "pages written per s"),
                           (axes[1], "ratio_to_none",
                            "rate relative to no monitoring")):
        x, y, lo, hi = [], [], [], []
        for m in modes:
            s = summary["modes"][m][key]
            if s:
                x.append(m)
                y.append(s["median"])
                lo.append(s["median"] - s["min"])
                hi.append(s["max"] - s["median"])
        bars = ax.bar(x, y, yerr=[lo, hi], capsize=4, color="tab:blue")
        ax.bar_label(bars, labels=[fnum(v) for v in y], label_type="center",
                     color="white")
        ax.set_xlabel("monitoring mode")
        ax.set_ylabel(label)
        ax.grid(True, axis="y", alpha=0.3)
    axes[1].axhline(1.0, color="grey", linewidth=0.8)
    axes[0].set_title("workload rate (median, bars min-max)")
    axes[1].set_title("rate / rate with no monitoring, per rep")


# ---------------------------------------------------------------------------
# insns: instructions per perf sample, under QEMU -icount shift=0

def insns_values(r):
    """(raw ns per call, profiler overhead per call, corrected) of one
    record; under -icount shift=0 one guest ns is one instruction."""
    raw = div(r["time_ns"], r["hits"])
    calib = div(r["calib_time_ns"], r["calib_hits"])
    over = None if calib is None else calib - r["calib_insns"]
    corr = None if raw is None or over is None else raw - over
    return raw, over, corr


def report_insns(recs, meta):
    g = group(recs, ("kernel", "trace"))
    corr = {}
    cells, rows = [], []
    for cell in INSNS_CELLS:
        if cell not in g:
            continue
        vals = per_rep(g[cell], insns_values)
        raw, over, cor = (spread({r: v[i] for r, v in vals.items()})
                          for i in range(3))
        hits = spread(per_rep(g[cell], lambda r: r["hits"]))
        corr[cell] = {r: v[2] for r, v in vals.items()}
        cells.append({"kernel": cell[0], "trace": cell[1], "hits": hits,
                      "raw": raw, "profiler_overhead": over,
                      "corrected": cor})
        rows.append([cell[0], cell[1], fmt_n(raw), fspread(hits),
                     fspread(raw), fspread(over), fspread(cor)])
    footer = ["raw = time_ns/hits of damon_perf_overflow; overhead = "
              "calib_time_ns/calib_hits - calib_insns, the instructions "
              "of __x64_sys_umask's body (no branch), counted in the "
              "kernel's disassembly;",
              "corrected = raw - overhead; with -icount shift=0 one guest "
              "ns is one instruction."]
    if recs and not all(r.get("icount") for r in recs):
        footer.append("NOTE: some runs were not under -icount; these are "
                      "nanoseconds, not instruction counts.")
    if not recs:
        footer = ["no insns records (meta icount=%s): not measured."
                  % json.dumps(meta.get("icount"))]
    print_table("insns: instructions per perf sample, median [min-max]",
                ["kernel", "trace", "n", "hits", "raw", "overhead",
                 "corrected"], rows, footer)
    return {"cells": cells}, insns_goals(corr)


def insns_goals(corr):
    """The two goals, on the test kernel (static keys are atomic reads) and
    on the jump-label kernel (static keys are patched jumps)."""
    goals = []
    for sfx, what in (("", "test kernel"), ("-jl", "CONFIG_JUMP_LABEL")):
        obs = corr.get(("observe" + sfx, "off"))
        nobs = corr.get(("no-observe" + sfx, "off"))
        name = "[insns] corrected instructions per sample <= 100 " \
               "(observe%s kernel, trace off, %s)" % (sfx, what)
        if obs is None or spread(obs) is None:
            goals.append(goal(name, "no observe%s/off figure (no records, "
                              "or no hits)" % sfx, "not measured"))
        else:
            s = spread(obs)
            goals.append(goal(name, "%s instructions" % fspread(s),
                              "met" if s["median"] <= 100 else "MISSED"))
        name = "[insns] observe%s kernel costs <= 15%% more per sample " \
               "than no-observe%s (trace off, %s)" % (sfx, sfx, what)
        if obs is None or nobs is None:
            goals.append(goal(name, "needs observe%s/off and no-observe%s/off "
                              "records" % (sfx, sfx), "not measured"))
            continue
        extra = spread([None if r is None else r - 1
                        for r in paired(obs, nobs)])
        if extra is None:
            goals.append(goal(name, "no rep with both", "not measured"))
        else:
            goals.append(goal(
                name, "observe%s/no-observe%s - 1 = %s%%"
                % (sfx, sfx, fspread(extra, 100)),
                "met" if extra["median"] <= 0.15 else "MISSED"))
    return goals


# ---------------------------------------------------------------------------
# check: per-interval access check cost

def check_values(r):
    """(ns per check call, records per interval, ns per drained record)."""
    return (div(r["check_ns"], r["calls"]), div(r["records"], r["calls"]),
            div(r["drain_ns"], r["records"]))


def check_cells(recs):
    out = {}
    for key, reps in group(recs, ("mode", "regions", "period_ns")).items():
        vals = per_rep(reps, check_values)
        out[key] = {
            "mode": key[0], "regions": key[1], "period_ns": key[2],
            "nr_regions": spread(per_rep(reps, lambda r: r["nr_regions"])),
            "per_call_ns": spread({r: v[0] for r, v in vals.items()}),
            "records_per_interval": spread({r: v[1]
                                            for r, v in vals.items()}),
            "per_record_ns": spread({r: v[2] for r, v in vals.items()}),
        }
    return out


def check_fits(cells):
    def points(pick, xf, yk):
        pts = [(med(c["nr_regions"]), med(c[yk])) for c in cells.values()
               if pick(c)]
        pts = [(xf(x), y) for x, y in pts
               if x is not None and x > 0 and y is not None]
        return [p[0] for p in pts], [p[1] for p in pts]

    fits = {}
    for name, pick, xf, yk in (
            ("perf_interval", lambda c: c["mode"] == "perf" and
             c["period_ns"] == 0, float, "per_call_ns"),
            ("perf_record", lambda c: c["mode"] == "perf" and
             (med(c["records_per_interval"]) or 0) > 0, math.log2,
             "per_record_ns"),
            ("ab_interval", lambda c: c["mode"] == "ab", float,
             "per_call_ns")):
        xs, ys = points(pick, xf, yk)
        f = fit_line(xs, ys)
        fits[name] = {"points": len(xs),
                      "intercept_ns": None if f is None else f[0],
                      "slope_ns": None if f is None else f[1]}
    return fits


def check_crossing(fits, lo, hi):
    """Where perf's per-interval part a + b*N exceeds ab's a' + b'*N."""
    p, q = fits["perf_interval"], fits["ab_interval"]
    if p["slope_ns"] is None or q["slope_ns"] is None:
        return None, "not measured (a fit is missing)"
    a, b = p["intercept_ns"], p["slope_ns"]
    a2, b2 = q["intercept_ns"], q["slope_ns"]
    if b == b2:
        if a > a2:
            return 0.0, "perf is above ab at every region count (equal " \
                "slopes)"
        return None, "never (equal slopes, perf's intercept is lower)"
    if b < b2:
        text = "never (ab slope is larger)"
        if a > a2:
            text += "; perf is above ab below %s regions" \
                    % fnum((a2 - a) / (b - b2))
        return None, text
    n = (a2 - a) / (b - b2)
    if n <= 0:
        return 0.0, "perf is above ab at every region count"
    if lo <= n <= hi:
        where = "within the measured range"
    else:
        where = "never in the measured range %s-%s; extrapolated" % (
            fnum(lo), fnum(hi))
    return n, "at %s regions (%s)" % (fnum(n), where)


def check_record_goals(recs):
    """Per record period: the drained record's cost at the most regions
    over its cost at the fewest, per rep, against log2 of the one count
    over log2 of the other (what a + b*log2(N) with a >= 0 allows)."""
    g = group([r for r in recs if r["mode"] == "perf"
               and r["period_ns"] > 0], ("period_ns", "regions"))
    goals = []
    for period in sorted({k[0] for k in g}):
        name = ("[check] perf's cost per drained record grows no faster "
                "than log2(regions) (test PMU period %s ns)" % fnum(period))
        cells = []
        for (p, reg), reps in g.items():
            nr = med(spread(per_rep(reps, lambda r: r["nr_regions"])))
            if p == period and nr and nr > 2:
                cells.append((nr, reg, per_rep(
                    reps, lambda r: check_values(r)[2])))
        if len(cells) < 2:
            goals.append(goal(name, "needs record cells at two region "
                              "counts", "not measured"))
            continue
        cells.sort(key=lambda c: c[0])
        (n0, r0, c0), (n1, r1, c1) = cells[0], cells[-1]
        ratio = spread(paired(c1, c0))
        bound = math.log2(n1) / math.log2(n0)
        goals.append(goal(
            name, "ns/record at %s regions / at %s = %s, log2 ratio %s"
            % (fnum(n1), fnum(n0), fspread(ratio), fnum(bound)),
            "not measured" if ratio is None else
            "met" if ratio["median"] <= bound else "MISSED"))
    if not goals:
        goals.append(goal("[check] perf's cost per drained record grows no "
                          "faster than log2(regions)",
                          "no perf check cells with records",
                          "not measured"))
    return goals


def fmt_fit(f, x):
    if f["slope_ns"] is None:
        return "not enough cells (%d point%s)" % (
            f["points"], "" if f["points"] == 1 else "s")
    return "%s ns + %s ns * %s  (%d cells)" % (
        fnum(f["intercept_ns"]), fnum(f["slope_ns"]), x, f["points"])


def report_check(recs, meta):
    cells = check_cells(recs)
    fits = check_fits(cells)
    nrs = [med(c["nr_regions"]) for c in cells.values()
           if c["nr_regions"]]
    cross_n, cross = check_crossing(fits, min(nrs, default=0),
                                    max(nrs, default=0))
    rows = []
    keys = sorted({(k[1], k[2]) for k in cells},
                  key=lambda k: (region_order(k[0]), k[1]))
    for reg, period in keys:
        ab, perf = cells.get(("ab", reg, period)), cells.get(
            ("perf", reg, period))
        nr = sorted({fnum(med(c["nr_regions"])) for c in (ab, perf) if c})
        rows.append([reg, fnum(period), "/".join(nr),
                     fmt_n(*[c["per_call_ns"] for c in (ab, perf) if c]),
                     fspread(ab and ab["per_call_ns"], 1e-3),
                     fspread(perf and perf["per_call_ns"], 1e-3),
                     fspread(perf and perf["per_record_ns"]),
                     fspread(perf and perf["records_per_interval"])])
    print_table(
        "check: access-check cost per sampling interval, median [min-max]",
        ["regions", "period ns", "nr_regions", "n", "ab us/interval",
         "perf us/interval", "perf ns/record", "records/interval"], rows,
        ["period ns 0 = no samples: perf us/interval is then its "
         "per-interval part alone.",
         "fit, perf per-interval part:  "
         + fmt_fit(fits["perf_interval"], "nr_regions"),
         "fit, perf per-record part:    "
         + fmt_fit(fits["perf_record"], "log2(nr_regions)"),
         "fit, ab per-interval:         "
         + fmt_fit(fits["ab_interval"], "nr_regions"),
         "perf's per-interval part exceeds ab's: " + cross])
    summary = {"cells": sorted(cells.values(), key=lambda c: (
        c["mode"], region_order(c["regions"]), c["period_ns"])),
        "fits": fits, "crossing_regions": cross_n, "crossing": cross}
    return summary, check_record_goals(recs)


def plot_check(summary, ax):
    colours = {"ab": "tab:blue", "perf": "tab:orange"}
    drawn = False
    for mode, fit in (("ab", "ab_interval"), ("perf", "perf_interval")):
        pts = sorted((med(c["nr_regions"]), c["per_call_ns"])
                     for c in summary["cells"]
                     if c["mode"] == mode and c["per_call_ns"] and
                     (mode == "ab" or c["period_ns"] == 0) and
                     (med(c["nr_regions"]) or 0) > 0)
        if not pts:
            continue
        x = np.array([p[0] for p in pts])
        y = np.array([p[1]["median"] for p in pts]) / 1e3
        lo = y - np.array([p[1]["min"] for p in pts]) / 1e3
        hi = np.array([p[1]["max"] for p in pts]) / 1e3 - y
        ax.errorbar(x, y, yerr=[lo, hi], fmt="o", color=colours[mode],
                    capsize=3, label="%s (median, min-max)" % mode)
        f = summary["fits"][fit]
        if f["slope_ns"] is not None:
            xs = np.logspace(math.log10(x.min()), math.log10(x.max()), 50)
            ys = (f["intercept_ns"] + f["slope_ns"] * xs) / 1e3
            ok = ys > 0
            ax.plot(xs[ok], ys[ok], "-", color=colours[mode],
                    label="%s fit a + b*N" % mode)
        drawn = True
    if not drawn:
        raise NoData("no check cell with a per-interval cost")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("regions (mean nr_regions)")
    ax.set_ylabel("access-check us per sampling interval")
    ax.set_title("per-interval check cost (perf: no samples)")
    ax.legend(fontsize="small")
    ax.grid(True, which="both", alpha=0.3)


# ---------------------------------------------------------------------------
# accuracy: DAMON's view of a moving hot window

def snap_median(snaps, key):
    vals = [s[key] for s in snaps if s.get(key) is not None]
    return float(np.median(vals)) if vals else None


def acc_rep(r):
    """Median F1, precision and recall over one rep's snapshots."""
    return tuple(snap_median(r["snapshots"], k)
                 for k in ("f1", "precision", "recall"))


def fconv(s, never, total):
    """Convergence seconds, "never" for infinite, and how many moves
    never converged."""
    if s is None:
        return "-"
    if math.isinf(s["median"]):
        text = "never"
    else:
        text = fspread(s).replace("inf", "never") + " s"
    return "%s (%d/%d moves never)" % (text, never, total)


def report_accuracy(recs, meta):
    g = group(recs, ("mode",))
    f1, modes, rows = {}, {}, []
    for m in KD_MODES:
        if (m,) not in g:
            continue
        vals = per_rep(g[(m,)], acc_rep)
        f1[m] = {r: v[0] for r, v in vals.items()}
        conv = [math.inf if c is None else c
                for r in g[(m,)].values() for c in r["converge_s"]]
        never = sum(1 for c in conv if math.isinf(c))
        d = {"f1": spread(f1[m]),
             "precision": spread({r: v[1] for r, v in vals.items()}),
             "recall": spread({r: v[2] for r, v in vals.items()}),
             "f1_ratio_to_ab": (spread(paired(f1[m], f1["ab"]))
                                if m != "ab" and "ab" in f1 else None),
             "converge_s": spread(conv), "moves": len(conv),
             "never": never}
        modes[m] = d
        rows.append([m, fmt_n(d["f1"]), fspread(d["f1"]),
                     fspread(d["precision"]), fspread(d["recall"]),
                     fspread(d["f1_ratio_to_ab"]),
                     fconv(d["converge_s"], never, len(conv))])
    print_table(
        "accuracy: hot-window detection, per-rep median over snapshots, "
        "then median [min-max] over reps",
        ["mode", "n", "F1", "precision", "recall", "F1/ab",
         "convergence"], rows,
        ["convergence: seconds after each move until F1 >= 0.9 in three "
         "aggregations in a row, median [min-max] over all moves of all "
         "reps;",
         "a move that never converged counts as infinite."])
    return {"modes": modes}, accuracy_goals(modes)


def accuracy_goals(modes):
    goals = []
    ab = modes.get("ab")
    for m in PERF_MODES:
        p = modes.get(m)
        name = "[accuracy] %s F1 >= ab F1" % m
        if not p or not ab or not p["f1"] or not ab["f1"]:
            goals.append(goal(name, "needs F1 snapshots of %s and ab" % m,
                              "not measured"))
        else:
            goals.append(goal(
                name, "%s %s vs ab %s; %s/ab per rep %s"
                % (m, fspread(p["f1"]), fspread(ab["f1"]), m,
                   fspread(p["f1_ratio_to_ab"])),
                "met" if p["f1"]["median"] >= ab["f1"]["median"]
                else "MISSED"))
        name = "[accuracy] %s convergence <= ab's" % m
        if not p or not ab or not p["converge_s"] or not ab["converge_s"]:
            goals.append(goal(name, "needs moves of %s and ab" % m,
                              "not measured"))
            continue
        pc, ac = p["converge_s"]["median"], ab["converge_s"]["median"]
        if math.isinf(pc):
            ok = False
        elif math.isinf(ac):
            ok = True
        else:
            ok = pc <= ac
        goals.append(goal(
            name, "%s %s vs ab %s" % (
                m, fconv(p["converge_s"], p["never"], p["moves"]),
                fconv(ab["converge_s"], ab["never"], ab["moves"])),
            "met" if ok else "MISSED"))
    return goals


# ---------------------------------------------------------------------------
# patterns: the same F1, on access patterns that stay put

def zipf_pacing(g):
    """"N passes a second" and the aggregation interval of the zipf
    records in @g, as they say; records from before they said it (make
    bench until 2026-12-07) say neither."""
    recs = [r for (pat, _), reps in g.items() if pat == "zipf"
            for r in reps.values()]
    rates = sorted({r["rate"] for r in recs if is_num(r.get("rate"))})
    aggrs = sorted({r["aggr_us"] for r in recs
                    if is_num(r.get("aggr_us"))})
    rate = ("/".join("%g" % v for v in rates) + " passes a second"
            if rates else "passes a second not recorded")
    aggr = ("/".join("%g s" % (v / 1e6) for v in aggrs) if aggrs
            else "a length not recorded")
    return rate, aggr


def report_patterns(recs, meta):
    g = group(recs, ("pattern", "mode"))
    cells, rows, goals = [], [], []
    for pat in PATTERNS:
        f1 = {}
        for m in KD_MODES:
            if (pat, m) not in g:
                continue
            vals = per_rep(g[(pat, m)], acc_rep)
            f1[m] = {r: v[0] for r, v in vals.items()}
            d = {"pattern": pat, "mode": m,
                 "writes": sorted({r["writes"]
                                   for r in g[(pat, m)].values()}),
                 "hot_mb": spread(per_rep(g[(pat, m)],
                                          lambda r: r["hot_mb"])),
                 "snapshots": spread(per_rep(g[(pat, m)],
                                             lambda r: len(r["snapshots"]))),
                 "f1": spread(f1[m]),
                 "precision": spread({r: v[1] for r, v in vals.items()}),
                 "recall": spread({r: v[2] for r, v in vals.items()}),
                 "f1_ratio_to_ab": (spread(paired(f1[m], f1["ab"]))
                                    if m != "ab" and "ab" in f1 else None)}
            cells.append(d)
            rows.append([pat, m, "/".join(d["writes"]), fmt_n(d["f1"]),
                         fspread(d["hot_mb"]),
                         fspread(d["snapshots"]), fspread(d["f1"]),
                         fspread(d["precision"]), fspread(d["recall"]),
                         fspread(d["f1_ratio_to_ab"])])
        for m in PERF_MODES:
            name = "[patterns] %s F1 >= ab F1 (%s)" % (m, pat)
            p, ab = spread(f1.get(m, {})), spread(f1.get("ab", {}))
            if p is None or ab is None:
                goals.append(goal(name, "needs F1 snapshots of %s and ab "
                                  "on %s" % (m, pat), "not measured"))
                continue
            goals.append(goal(
                name, "%s %s vs ab %s; %s/ab per rep %s"
                % (m, fspread(p), fspread(ab), m,
                   fspread(spread(paired(f1[m], f1["ab"])))),
                "met" if p["median"] >= ab["median"] else "MISSED"))
    print_table(
        "patterns: hot-range detection on patterns that stay put, per-rep "
        "median over snapshots, then median [min-max] over reps",
        ["pattern", "mode", "writes", "n", "hot MiB", "snapshots", "F1",
         "precision", "recall", "F1/ab"], rows,
        ["ranges: three hot ranges of 4, 2 and 1 windows, written on "
         "every pass; zipf: one window a pass, %s, "
         "picked with probability proportional to 1/(rank+1)^0.8, "
         "aggregations of %s, hot = the windows written in each at "
         % zipf_pacing(g),
         "least half as often as the most written one (ranks 0 and 1 in "
         "the long run; hot MiB is the median);",
         "threads: threads writing a window each (hot MiB says the "
         "window); snapshots are the aggregations after the first "
         "seconds, left to the monitor to settle;",
         "writes: fault, every write a page fault (what the page-fault "
         "event sees), or touch, writes to mapped pages (what Accessed "
         "bits and a sampling PMU see)."])
    return {"cells": cells}, goals


# ---------------------------------------------------------------------------
# sweep: accuracy against total cost, at several settings per mode

SWEEP_SETTING = {"ab": "sampling interval us", "pf": "faults per sample",
                 "tpmu": "sample period ns"}


def sweep_points(recs):
    """{(mode, setting): {"f1", "total_ms_per_s", "kdamond_ms_per_s",
    "loss_ms_per_s": spreads over reps}}."""
    out = {}
    for key, reps in group(recs, ("mode", "setting")).items():
        f1 = per_rep(reps, lambda r: acc_rep(r)[0])
        kd = per_rep(reps, kd_cost)
        loss = per_rep(reps, kd_loss)
        total = {k: None if loss[k] is None else kd[k] + loss[k]
                 for k in kd}
        out[key] = {"mode": key[0], "setting": key[1], "f1": spread(f1),
                    "kdamond_ms_per_s": spread(kd),
                    "loss_ms_per_s": spread(loss),
                    "total_ms_per_s": spread(total)}
    return out


def sweep_goals(points):
    """Perf mode is cheaper than Accessed bits at equal accuracy: at every
    ab setting, some setting of the perf mode is at least as accurate
    (median F1) and costs less in total (median)."""
    goals = []
    ab = sorted((p for p in points.values() if p["mode"] == "ab"),
                key=lambda p: p["setting"])
    for m in PERF_MODES:
        name = ("[sweep] %s total cost below ab's at equal accuracy, "
                "at every ab setting" % m)
        mine = [p for p in points.values() if p["mode"] == m
                and p["f1"] and p["total_ms_per_s"]]
        ab_ok = [p for p in ab if p["f1"] and p["total_ms_per_s"]]
        if not mine or not ab_ok:
            goals.append(goal(name, "needs sweep points of %s and ab with "
                              "F1 and total cost" % m, "not measured"))
            continue
        texts, misses = [], 0
        for a in ab_ok:
            fa, ta = a["f1"]["median"], a["total_ms_per_s"]["median"]
            cands = [p for p in mine if p["f1"]["median"] >= fa]
            best = min(cands, key=lambda p: p["total_ms_per_s"]["median"],
                       default=None)
            if best is None:
                misses += 1
                texts.append("ab %s: F1 %s, %s ms/s; no %s setting as "
                             "accurate" % ("%g" % a["setting"], fnum(fa),
                                           fnum(ta), m))
                continue
            tb = best["total_ms_per_s"]["median"]
            misses += tb >= ta
            texts.append("ab %s: F1 %s, %s ms/s; %s %s: F1 %s, %s ms/s"
                         % ("%g" % a["setting"], fnum(fa), fnum(ta), m,
                            "%g" % best["setting"],
                            fnum(best["f1"]["median"]), fnum(tb)))
        goals.append(goal(name, "; ".join(texts),
                          "MISSED" if misses else "met"))
    return goals


def report_sweep(recs, meta):
    points = sweep_points(recs)
    rows = []
    for key in sorted(points, key=lambda k: (KD_MODES.index(k[0]), k[1])):
        p = points[key]
        rows.append([p["mode"], "%g" % p["setting"],
                     fmt_n(p["f1"], p["total_ms_per_s"]), fspread(p["f1"]),
                     fspread(p["kdamond_ms_per_s"]),
                     fspread(p["loss_ms_per_s"]),
                     fspread(p["total_ms_per_s"])])
    print_table(
        "sweep: F1 on the moving hot window against total cost, median "
        "[min-max] over reps",
        ["mode", "setting", "n", "F1", "kdamond ms/s", "loss ms/s",
         "total ms/s"], rows,
        ["setting: ab, the sampling interval in us (aggregation 100 ms); "
         "pf, faults per sample; tpmu, the sample period in ns;",
         "F1: the median of a rep's snapshots; loss: what the workload "
         "lost against itself unmonitored in the same rep (see total)."])
    return {"points": sorted(points.values(), key=lambda p: (
        KD_MODES.index(p["mode"]), p["setting"]))}, sweep_goals(points)


def plot_sweep(summary, ax):
    colours = {"ab": "tab:blue", "pf": "tab:orange", "tpmu": "tab:green"}
    drawn = False
    for m in KD_MODES:
        pts = [p for p in summary["points"] if p["mode"] == m and p["f1"]
               and p["total_ms_per_s"]]
        if not pts:
            continue
        pts.sort(key=lambda p: p["total_ms_per_s"]["median"])
        x = np.array([p["total_ms_per_s"]["median"] for p in pts])
        y = np.array([p["f1"]["median"] for p in pts])
        xerr = [x - np.array([p["total_ms_per_s"]["min"] for p in pts]),
                np.array([p["total_ms_per_s"]["max"] for p in pts]) - x]
        yerr = [y - np.array([p["f1"]["min"] for p in pts]),
                np.array([p["f1"]["max"] for p in pts]) - y]
        ax.errorbar(x, y, xerr=xerr, yerr=yerr, fmt="o-", color=colours[m],
                    capsize=3, label="%s (%s)" % (m, SWEEP_SETTING[m]))
        for p, xi, yi in zip(pts, x, y):
            ax.annotate("%g" % p["setting"], (xi, yi), fontsize="x-small",
                        textcoords="offset points", xytext=(4, 4))
        drawn = True
    if not drawn:
        raise NoData("no sweep point with F1 and total cost")
    ax.set_xlabel("total cost: kdamond + workload loss, CPU ms per s")
    ax.set_ylabel("F1, moving hot window (median)")
    ax.set_ylim(0, 1.05)
    ax.set_title("accuracy against total cost (median, bars min-max)")
    ax.legend(fontsize="small")
    ax.grid(True, alpha=0.3)


def heat_of(recs, mode):
    """The heat map record of MODE: rep 0's, else the lowest rep's."""
    have = sorted((r["rep"], r) for r in recs
                  if r["mode"] == mode and isinstance(r.get("heat"), dict))
    return have[0][1] if have else None


def lower_edges(lower):
    """Bin edges from the bins' lower edges; the last bin is as wide as
    the one before it (or 1 wide when there is one bin)."""
    lower = [float(v) for v in lower]
    width = lower[-1] - lower[-2] if len(lower) > 1 else 1.0
    return np.array(lower + [lower[-1] + (width if width > 0 else 1.0)])


def centre_edges(centres):
    """Bin edges halfway between the snapshot times, the outer bins as
    wide as their neighbours (or 1 wide when there is one snapshot)."""
    c = np.array(centres, dtype=float)
    if len(c) == 1:
        return np.array([c[0] - 0.5, c[0] + 0.5])
    mid = (c[1:] + c[:-1]) / 2
    return np.concatenate(([2 * c[0] - mid[0]], mid, [2 * c[-1] - mid[-1]]))


def heat_arrays(heat):
    """(time edges, address edges, z[address][time]) or raise NoData."""
    t, a, z = heat.get("t"), heat.get("addr_mb"), heat.get("z")
    if not (isinstance(t, list) and isinstance(a, list) and
            isinstance(z, list) and t and a):
        raise NoData("heat lacks t, addr_mb or z")
    if len(z) != len(t) or any(not isinstance(row, list) or
                               len(row) != len(a) for row in z):
        raise NoData("heat z is not len(t) x len(addr_mb)")
    try:
        zz = np.array(z, dtype=float).T
        return centre_edges(t), lower_edges(a), zz
    except (TypeError, ValueError) as e:
        raise NoData("heat is not numeric: %s" % e)


def plot_accuracy(recs, fig):
    panels = []
    notes = []
    for m in KD_MODES:
        r = heat_of(recs, m)
        if r is None:
            notes.append("%s has no heat data" % m)
            continue
        try:
            panels.append((m, r, heat_arrays(r["heat"])))
        except NoData as e:
            notes.append("%s rep %d: %s" % (m, r["rep"], e))
    if not panels:
        raise NoData("; ".join(notes) or "no accuracy records")
    fig.set_size_inches(5 * len(panels) + 1.5, 5)
    vmax = max(float(np.nanmax(p[2][2])) for p in panels) or 1.0
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    for ax, (m, r, (te, ae, z)) in zip(axes, panels):
        mesh = ax.pcolormesh(te, ae, z, vmin=0, vmax=vmax, cmap="viridis",
                             shading="flat")
        for t in r["moves"]:
            ax.axvline(t, color="red", linestyle="--", linewidth=1)
        ax.set_title("%s (rep %d)" % (m, r["rep"]))
        ax.set_xlabel("time (s)")
    axes[0].set_ylabel("address offset in working set (MiB)")
    fig.colorbar(mesh, ax=list(axes), label="nr_accesses")
    fig.suptitle("DAMON nr_accesses per address bin; dashed red: "
                 "hot-window moves")
    return notes


# ---------------------------------------------------------------------------
# ringloss: per-CPU sample ring overflow

def ring_cpus(r):
    """[(cpu, samples pushed per s, overflow fraction, ovf)]."""
    out = []
    for c in r["per_cpu"]:
        pushed = c["enq"] + c["ovf"]
        out.append((c["cpu"], pushed / r["secs"],
                    c["ovf"] / pushed if pushed else 0.0, c["ovf"]))
    return out


def ring_memory(recs):
    """The rings' memory per context, as perf_stats' ring_bytes gave it
    while the experiment's context ran (the largest rings since boot,
    the experiment's when it runs first in its boot)."""
    vals = {r.get("ring_bytes") for r in recs}
    caps = {r.get("ring_capacity") for r in recs}
    if len(vals) != 1 or not all(is_num(v) for v in vals):
        return None, ["ring memory: not measured (the ringloss records "
                      "give ring_bytes %s, not one)" % sorted(vals, key=str)]
    total = int(vals.pop())
    return total, [
        "ring memory per context, read from the kernel (perf_stats "
        "ring_bytes: the slots and the ring of every possible CPU):",
        "  %d bytes (%.1f KiB), rings of %s records."
        % (total, total / 1024.0,
           "/".join(fnum(c) for c in sorted(caps, key=str)))]


def report_ringloss(recs, meta):
    g = group(recs, ("period_ns", "batch"))
    periods, rows = [], []
    for (period, batch), reps in sorted(g.items(),
                                        key=lambda kv: kv[0][1] / kv[0][0]):
        top, frac, lossless = {}, {}, 0
        for rep, r in reps.items():
            cpus = ring_cpus(r)
            best = max(cpus, key=lambda c: c[1])
            top[rep], frac[rep] = best[1], best[2]
            lossless += all(c[3] == 0 for c in cpus)
        d = {"period_ns": period, "batch": batch,
             "nominal_per_s": batch * 1e9 / period,
             "max_cpu_rate": spread(top), "ovf_fraction_at_max": spread(frac),
             "lossless_reps": lossless, "reps": len(reps)}
        periods.append(d)
        rows.append([fnum(period), str(batch), fnum(batch * 1e9 / period),
                     str(len(reps)),
                     fspread(d["max_cpu_rate"]),
                     fspread(d["ovf_fraction_at_max"]),
                     "%d/%d" % (lossless, len(reps))])
    mem, footer = ring_memory(recs)
    footer += [
        "rates users run at: perf record's default sampling frequency is "
        "4000 Hz (tools/perf); the kernel caps sample rates at",
        "kernel.perf_event_max_sample_rate, 100000 by default "
        "(kernel/events/core.c).",
        "nominal = batch records per interrupt every period; the test "
        "PMU samples only while the workload runs.",
        "a cell is lossless when no CPU of any rep overflowed its ring."]
    best = max((p["max_cpu_rate"]["median"] for p in periods
                if p["lossless_reps"] == p["reps"]), default=None)
    top = max((p["max_cpu_rate"]["median"] for p in periods), default=None)
    footer.append("highest lossless per-CPU rate: %s samples/s"
                  % fnum(best))
    print_table(
        "ringloss: per-CPU sample rate and ring overflow, by test PMU "
        "period; per-rep busiest CPU, median [min-max]",
        ["period ns", "batch", "nominal/s", "n", "max per-CPU rate/s",
         "its ovf fraction", "lossless reps"], rows, footer)
    name = "[ringloss] no ring loss at the highest supported rate " \
           "(%d samples/s per CPU)" % MAX_SAMPLE_RATE
    if top is None or top < MAX_SAMPLE_RATE:
        g_ = goal(name, "highest rate reached %s/s, lossless up to %s/s"
                  % (fnum(top), fnum(best)), "not measured")
    else:
        g_ = goal(name, "lossless up to %s/s per CPU vs %d/s"
                  % (fnum(best), MAX_SAMPLE_RATE),
                  "met" if best is not None and best >= MAX_SAMPLE_RATE
                  else "MISSED")
    return {"periods": periods, "ring_bytes_per_context": mem,
            "highest_lossless_per_s": best, "highest_rate_per_s": top}, [g_]


def plot_ringloss(recs, ax):
    pts = {}
    for r in recs:
        for cpu, rate, frac, _ in ring_cpus(r):
            if rate > 0:
                pts.setdefault(cpu, []).append((rate, frac))
    if not pts:
        raise NoData("no CPU pushed any sample")
    fracs = []
    for cpu in sorted(pts):
        x, y = zip(*pts[cpu])
        ax.scatter(x, y, s=18, alpha=0.7, label="CPU %s" % cpu)
        fracs.extend(y)
    for rate, text in ((PERF_RECORD_HZ, "perf record default"),
                       (MAX_SAMPLE_RATE, "perf_event_max_sample_rate")):
        ax.axvline(rate, color="grey", linestyle="--", linewidth=1)
        ax.annotate(text, (rate, 1), xycoords=("data", "axes fraction"),
                    rotation=90, va="top", ha="right", fontsize="small")
    ax.set_xscale("log")
    pos = [f for f in fracs if f > 0]
    if pos and max(pos) / min(pos) >= 100:
        ax.set_yscale("symlog", linthresh=min(pos))
    # a fraction: nothing below zero to show
    ax.set_ylim(bottom=0)
    ax.set_xlabel("samples pushed per s, per CPU")
    ax.set_ylabel("overflow fraction ovf / (enq + ovf)")
    ax.set_title("ring overflow vs per-CPU sample rate (every CPU, rep)")
    ax.legend(fontsize="small")
    ax.grid(True, which="both", alpha=0.3)


# ---------------------------------------------------------------------------
# Figures

class NoData(Exception):
    """A figure has nothing to draw."""


def log_if_decades(ax, axis, values):
    vals = [v for v in values if v is not None and v > 0]
    if vals and len(vals) == len(values) and max(vals) / min(vals) >= 100:
        getattr(ax, "set_%sscale" % axis)("log")


def placeholder(path, title, reason):
    fig = plt.figure(figsize=(6, 3))
    fig.text(0.5, 0.6, title, ha="center", fontsize="large")
    fig.text(0.5, 0.4, "no figure: %s" % reason, ha="center", wrap=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def draw(path, title, quick, plot, *args, panels=1):
    """Draw PATH with PLOT(*ARGS, x): x is one Axes for PANELS=1, a row
    of PANELS Axes, or the Figure itself for PANELS=0 (PLOT then lays it
    out and may return notes).  Return a list of notes; any failure
    leaves a placeholder PNG and a note, never an error."""
    fig = plt.figure(figsize=(6.5 * panels if panels > 1 else 8, 5))
    notes = []
    try:
        if panels == 0:
            notes = plot(*args, fig) or []
        elif panels == 1:
            plot(*args, fig.add_subplot(1, 1, 1))
        else:
            plot(*args, fig.subplots(1, panels))
        fig.savefig(path, dpi=100, bbox_inches="tight")
        notes = ["%s: %s" % (os.path.basename(path), n) for n in notes]
    except NoData as e:
        notes = ["%s not drawn: %s" % (os.path.basename(path), e)]
        placeholder(path, title, str(e))
    except Exception as e:  # a figure must never fail the run
        if not quick:
            traceback.print_exc()
        notes = ["%s not drawn: %s: %s" % (os.path.basename(path),
                                           type(e).__name__, e)]
        placeholder(path, title, "%s: %s" % (type(e).__name__, e))
    finally:
        plt.close(fig)
    return notes


def draw_all(out, by_exp, summary, quick):
    notes = []
    for exp, name, title, plot, arg, panels in (
            ("kdamond", "kdamond-cost.png", "kdamond cost", plot_kdamond,
             "summary", 1),
            ("slowdown", "slowdown.png", "slowdown", plot_slowdown,
             "summary", 2),
            ("check", "check-cost.png", "access-check cost", plot_check,
             "summary", 1),
            ("accuracy", "accuracy-heatmap.png", "accuracy heat map",
             plot_accuracy, "records", 0),
            ("sweep", "sweep.png", "accuracy against total cost",
             plot_sweep, "summary", 1),
            ("ringloss", "ring-loss.png", "ring loss", plot_ringloss,
             "records", 1)):
        path = os.path.join(out, name)
        if not by_exp.get(exp):
            notes.append("%s not drawn: no %s records" % (name, exp))
            placeholder(path, title, "no %s records" % exp)
            continue
        data = summary[exp] if arg == "summary" else by_exp[exp]
        notes += draw(path, title, quick, plot, data, panels=panels)
    return notes


# ---------------------------------------------------------------------------
# Main

REPORTS = {
    "kdamond": report_kdamond,
    "slowdown": report_slowdown,
    "insns": report_insns,
    "check": report_check,
    "accuracy": report_accuracy,
    "patterns": report_patterns,
    "sweep": report_sweep,
    "ringloss": report_ringloss,
}


def jsonable(v):
    """Infinities (a move that never converged) become null."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    return v


def print_meta(meta, quick):
    print("damon-perf bench report")
    keys = ("kernel", "cpus", "possible_cpus", "mem_mb", "date")
    print("kernel %s, %s CPUs (%s possible), %s MiB, date %s"
          % tuple(meta.get(k, "?") for k in keys))
    print("sample %s us, aggregation %s us, icount %s, quick %s"
          % (meta.get("sample_us", "?"), meta.get("aggr_us", "?"),
             json.dumps(meta.get("icount")), json.dumps(meta.get("quick"))))
    if quick:
        print("QUICK RUN: one repetition of tiny cells; a smoke test of "
              "the harness, not results.")
    print()


def print_goals(goals):
    print("Goals")
    print("-----")
    width = max((len(g["status"]) for g in goals), default=0)
    for g in goals:
        print("%s  %s" % (g["status"].ljust(width), g["goal"]))
        print("%s  %s" % (" " * width, g["measured"]))
    missed = sum(g["status"] == "MISSED" for g in goals)
    unmeasured = sum(g["status"] == "not measured" for g in goals)
    print("%d goals: %d met, %d MISSED, %d not measured"
          % (len(goals), len(goals) - missed - unmeasured, missed,
             unmeasured))


def main():
    ap = argparse.ArgumentParser(
        description="Report make bench's records: tables on stdout, "
        "results.json and PNGs in OUT_DIR.")
    ap.add_argument("--quick", action="store_true",
                    help="a quick run: one repetition of tiny cells")
    ap.add_argument("records", metavar="RECORDS_FILE")
    ap.add_argument("out", metavar="OUT_DIR")
    args = ap.parse_args()

    try:
        meta, records, notes = read_records(args.records)
    except (Malformed, OSError) as e:
        print("bench-report: %s: %s" % (args.records, e), file=sys.stderr)
        return 1
    if bool(meta.get("quick")) != args.quick:
        notes.append("meta says quick=%s but --quick is %s"
                     % (json.dumps(meta.get("quick")),
                        "given" if args.quick else "not given"))

    by_exp = {}
    for r in records:
        by_exp.setdefault(r["exp"], []).append(r)
    required = list(EXPERIMENTS)
    missing = [e for e in required if not by_exp.get(e)]

    print_meta(meta, args.quick)
    summary, goals = {}, []
    for exp in EXPERIMENTS:
        summary[exp], g = REPORTS[exp](by_exp.get(exp, []), meta)
        goals += g
        if exp == "insns":
            # needs the kdamond cells and the instructions per sample
            summary["total"] = report_total(by_exp.get("kdamond", []),
                                            summary["insns"])
    summary["goals"] = goals

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(jsonable({"meta": meta, "records": records,
                            "summary": summary}), f, indent=1,
                  allow_nan=False)
        f.write("\n")
    notes += draw_all(args.out, by_exp, summary, args.quick)

    if notes:
        print("Notes")
        print("-----")
        for n in notes:
            print(n)
        print()
    print_goals(goals)
    if missing:
        print("bench-report: %s: no records for experiment%s %s"
              % (args.records, "s" if len(missing) > 1 else "",
                 ", ".join(missing)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
