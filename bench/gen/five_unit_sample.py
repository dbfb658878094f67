#!/usr/bin/env python3
"""Measures a seeded random sample of 5-unit antichess tables and projects the
whole 5-unit set (bench/gen/README.md, "The 5-unit set").

    bench/gen/five_unit_sample.py select [--seed S]     # writes the table list
    nice -n 10 bench/gen/five_unit_sample.py run [--build DIR] [--out DIR]
    bench/gen/five_unit_sample.py project               # fit and projection

select: draws the sample, stratified by pawns (none / some) and identical
units (a side with two or more of one kind / none), with `random.Random(seed)`.
A pawn table needs its promotions, 5-unit tables themselves; a pawn table is
taken only if the 5-unit tables it needs beyond those already chosen hold at
most --cap positions, which keeps the run to a day's fraction and favours
pawn tables with few promotions (README says so). The list holds the sample
and those required tables, in build order.

run: builds every listed table that the CSV does not have yet, each as its
own job (`tbgen gen --tables-from`) into OUT/parts/<table>, its sub-tables read
from OUT/upto4 (every table of at most 4 units, built first) and from the
parts of the 5-unit tables it needs; per table one CSV row with wall, user and
system time (/usr/bin/time), peak RSS, stored bytes and the plan's figures.
A killed run loses at most the table it was building: rerun it. RBNvKN is
built at the start of every run and at the end as an anchor: its CPU time
says how much the shared machine slowed the run.

project: least-squares fits of CPU seconds and stored bytes to positions per
class, applied to every 5-unit table of the plan.
"""

import argparse
import csv
import json
import os
import random
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LIST = os.path.join(HERE, "five_unit_sample.txt")
CSV = os.path.join(HERE, "five_unit_sample.csv")
ANCHOR = "RBNvKN"
QUOTA = {("pawnless", "distinct"): 22, ("pawnless", "identical"): 22,
         ("pawn", "distinct"): 8, ("pawn", "identical"): 8}
FIELDS = ["table", "kind", "class", "pawns", "identical", "slots", "work_slots", "positions",
          "plan_in_ram_bytes", "wall_s", "table_s", "user_s", "sys_s", "cpu_s", "peak_rss_kib",
          "stored_bytes", "max_dtc", "threads", "load1", "finished"]


def identical_units(name):
    return any(side.count(c) > 1 for side in name.split("v") for c in set(side))


def class_of(table):
    return ("pawn" if table["pawns"] else "pawnless",
            "identical" if identical_units(table["table"]) else "distinct")


def load_plan(tbgen, upto=5):
    out = subprocess.run([tbgen, "plan", "--variant", "antichess", "--upto", str(upto), "--threads", "2"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def five_unit_closure(tables, names):
    seen, stack = set(), list(names)
    while stack:
        m = stack.pop()
        if m in seen:
            continue
        seen.add(m)
        stack += [s for s in tables[m]["sub_tables"] if tables[s]["units"] == 5]
    return seen


def select(args):
    plan = load_plan(args.tbgen)
    tables = {t["table"]: t for t in plan["tables"]}
    strata = {}
    for t in plan["tables"]:
        if t["units"] == 5:
            strata.setdefault(class_of(t), []).append(t["table"])
    rng = random.Random(args.seed)
    chosen, sample = set(), []
    # Pawn strata first: their promotions fill part of the pawnless budget.
    for key in [("pawn", "distinct"), ("pawn", "identical"), ("pawnless", "distinct"), ("pawnless", "identical")]:
        names = sorted(strata[key])
        rng.shuffle(names)
        taken = 0
        for name in names:
            if taken == QUOTA[key]:
                break
            if name in sample:
                continue
            extra = five_unit_closure(tables, [name]) - chosen
            if sum(tables[x]["positions"] for x in extra) - tables[name]["positions"] > args.cap:
                continue
            chosen |= extra
            sample.append(name)
            taken += 1
    # Build order: pawn and pawnless tables interleaved, so that a run cut
    # short has measured both; each table after the 5-unit tables it needs.
    pawn = [x for x in sample if tables[x]["pawns"]]
    pawnless = [x for x in sample if not tables[x]["pawns"]]
    interleaved = []
    while pawn or pawnless:
        interleaved += pawn[:1] + pawnless[:3]
        pawn, pawnless = pawn[1:], pawnless[3:]
    rank = {t["table"]: k for k, t in enumerate(plan["tables"])}
    order = []
    for name in interleaved:
        order += sorted(five_unit_closure(tables, [name]) - set(order), key=rank.get)
    with open(LIST, "w") as f:
        f.write(f"# five_unit_sample.py select --seed {args.seed} --cap {args.cap:.0f}: table, sampled or required\n")
        for name in order:
            f.write(f"{name}\t{'sampled' if name in sample else 'required'}\n")
    positions = sum(tables[x]["positions"] for x in chosen)
    print(f"{len(sample)} sampled, {len(chosen)} to build, {positions:.3e} positions -> {LIST}")


def read_list():
    rows = []
    with open(LIST) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, kind = line.split()
            rows.append((name, kind))
    return rows


def read_rows():
    if not os.path.exists(CSV):
        return []
    with open(CSV) as f:
        return list(csv.DictReader(f))


def append_row(row):
    new = not os.path.exists(CSV)
    with open(CSV, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        if new:
            writer.writeheader()
        writer.writerow(row)
        f.flush()
        os.fsync(f.fileno())


def timed(command, time_file):
    """Runs command under /usr/bin/time; returns (stdout, wall, user, sys, peak KiB)."""
    full = ["/usr/bin/time", "-f", "%e %U %S %M", "-o", time_file] + command
    run = subprocess.run(full, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({run.returncode}): {run.stderr.strip()}")
    with open(time_file) as f:
        wall, user, system, peak = f.read().split()[-4:]
    return run.stdout, float(wall), float(user), float(system), int(peak)


def build_one(args, tables, name, kind, db):
    t = tables[name]
    sources = ["--tables-from", os.path.join(args.out, "upto4")]
    for sub in t["sub_tables"]:
        if tables[sub]["units"] == 5:
            sources += ["--tables-from", os.path.join(args.out, "parts", sub)]
    shutil.rmtree(db, ignore_errors=True)  # a killed attempt starts over
    load1 = os.getloadavg()[0]
    out, wall, user, system, peak = timed(
        [args.tbgen, "gen", "--variant", "antichess", "--db", db, "--threads", str(args.threads), "--quiet", "--json"]
        + sources + [name], os.path.join(args.out, "time.txt"))
    line = next(json.loads(x) for x in out.splitlines() if x.startswith('{"table":"antichess/' + name + '"'))
    if not line["built"]:
        sys.exit(f"{name} was not built")
    pawns, identical = class_of(t)
    return {"table": name, "kind": kind, "class": f"{pawns}/{identical}", "pawns": t["pawns"],
            "identical": int(identical == "identical"), "slots": t["slots"], "work_slots": t["work_slots"],
            "positions": t["positions"], "plan_in_ram_bytes": t["in_ram_bytes"], "wall_s": wall,
            "table_s": round(line["seconds"], 3), "user_s": user, "sys_s": system,
            "cpu_s": round(user + system, 2), "peak_rss_kib": peak, "stored_bytes": line["bytes"],
            "max_dtc": line["max_dtc"], "threads": args.threads, "load1": round(load1, 2),
            "finished": time.strftime("%Y-%m-%dT%H:%M:%S")}


def ensure_parts(args, tables, name):
    """Rebuilds, unrecorded, the 5-unit sub-tables of name whose databases
    are gone (a run resumed on another scratch directory): their rows were
    measured already, only their values are needed."""
    for sub in tables[name]["sub_tables"]:
        if tables[sub]["units"] != 5:
            continue
        part = os.path.join(args.out, "parts", sub)
        if os.path.isdir(part):
            continue
        ensure_parts(args, tables, sub)
        build_one(args, tables, sub, "rebuilt", part)
        print(f"rebuilt {sub} (measured before; its database was missing)", flush=True)


def run(args):
    os.makedirs(os.path.join(args.out, "parts"), exist_ok=True)
    base = os.path.join(args.out, "upto4")
    subprocess.run([args.tbgen, "gen", "--variant", "antichess", "--db", base, "--threads", str(args.threads),
                    "--quiet", "--upto", "4"], check=True)
    tables = {t["table"]: t for t in load_plan(args.tbgen)["tables"]}
    todo = read_list()
    done = {r["table"] for r in read_rows() if r["kind"] in ("sampled", "required")}
    anchors = [r for r in read_rows() if r["kind"].startswith("anchor")]

    def anchor(label):
        row = build_one(args, tables, ANCHOR, label, os.path.join(args.out, "anchor"))
        shutil.rmtree(os.path.join(args.out, "anchor"), ignore_errors=True)
        append_row(row)
        print(f"{label}: {row['cpu_s']} s CPU, {row['wall_s']} s wall", flush=True)

    remaining = [(n, k) for n, k in todo if n not in done]
    if remaining or not any(r["kind"] == "anchor-end" for r in anchors):
        anchor("anchor-start")
    for k, (name, kind) in enumerate(remaining):
        ensure_parts(args, tables, name)
        row = build_one(args, tables, name, kind, os.path.join(args.out, "parts", name))
        append_row(row)
        print(f"[{k + 1}/{len(remaining)}] {name} {kind}: {row['positions']} positions, {row['cpu_s']} s CPU, "
              f"{row['wall_s']} s wall, {row['peak_rss_kib'] // 1024} MiB", flush=True)
    if not any(r["kind"] == "anchor-end" for r in read_rows()):
        anchor("anchor-end")


def fit_through_origin(xs, ys):
    """Least squares y = a x: a = sum(xy) / sum(xx)."""
    return sum(x * y for x, y in zip(xs, ys)) / sum(x * x for x in xs)


def project(args):
    rows = [r for r in read_rows() if r["kind"] in ("sampled", "required")]
    anchors = [r for r in read_rows() if r["kind"].startswith("anchor")]
    plan = load_plan(args.tbgen)
    five = [t for t in plan["tables"] if t["units"] == 5]
    print(f"measured tables: {len(rows)} ({sum(r['kind'] == 'sampled' for r in rows)} sampled)")
    for a in anchors:
        print(f"anchor {a['kind']} {a['finished']}: cpu {a['cpu_s']} s, wall {a['wall_s']} s, load {a['load1']}")
    print("\n| class | measured | positions measured | CPU s per 1e6 positions | wall s per 1e6 | bytes per position | "
          "peak RSS / plan estimate | tables in set | positions in set | projected CPU h | projected disk |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    total_cpu = total_disk = 0.0
    for cls in ["pawnless/distinct", "pawnless/identical", "pawn/distinct", "pawn/identical"]:
        mine = [r for r in rows if r["class"] == cls]
        in_set = [t for t in five if "/".join(class_of(t)) == cls]
        label = cls
        if not mine:  # not measured yet: the rates of every row
            mine, label = rows, cls + " (all rows' rates)"
        xs = [float(r["positions"]) for r in mine]
        cpu = fit_through_origin(xs, [float(r["cpu_s"]) for r in mine])
        wall = fit_through_origin(xs, [float(r["wall_s"]) for r in mine])
        disk = fit_through_origin(xs, [float(r["stored_bytes"]) for r in mine])
        rss = max(float(r["peak_rss_kib"]) * 1024 / float(r["plan_in_ram_bytes"]) for r in mine)
        positions = sum(t["positions"] for t in in_set)
        total_cpu += cpu * positions
        total_disk += disk * positions
        print(f"| {label} | {len(mine) if label == cls else 0} | {sum(xs) if label == cls else 0:.3e} | {cpu * 1e6:.3f} | {wall * 1e6:.3f} | {disk:.3f} | {rss:.2f} | "
              f"{len(in_set)} | {positions:.3e} | {cpu * positions / 3600:.1f} | {disk * positions / 1e9:.0f} GB |")
    biggest = max(five, key=lambda t: t["in_ram_bytes"])
    print(f"\nwhole 5-unit set: {total_cpu / 3600:.0f} CPU hours, {total_disk / 1e9:.0f} GB stored; "
          f"largest in-RAM estimate {biggest['table']} {biggest['in_ram_bytes'] / 2**30:.1f} GiB")
    rss = [(float(r["peak_rss_kib"]) * 1024, float(r["plan_in_ram_bytes"]), r["table"]) for r in rows]
    worst = max(rss, key=lambda x: x[0] / x[1])
    print(f"peak RSS against the plan's in-RAM estimate: at most {worst[0] / worst[1]:.2f} ({worst[2]})")
    # What a scheduler is told to reserve (the estimate, a tenth more and the
    # process's own 64 MiB): small tables exceed the bare estimate, not this.
    reserve = {t["table"]: t["reserve_bytes"] for t in plan["tables"]}
    rss = [(float(r["peak_rss_kib"]) * 1024, float(reserve[r["table"]]), r["table"]) for r in rows]
    worst = max(rss, key=lambda x: x[0] / x[1])
    print(f"peak RSS against the plan's reserve_bytes: at most {worst[0] / worst[1]:.2f} ({worst[2]})")
    if args.cluster:
        cluster(args, rows)


def class_rates(rows):
    """CPU seconds per position per class, and over all rows."""
    rates = {}
    for cls in {r["class"] for r in rows}:
        mine = [r for r in rows if r["class"] == cls]
        rates[cls] = fit_through_origin([float(r["positions"]) for r in mine], [float(r["cpu_s"]) for r in mine])
    rates["all"] = fit_through_origin([float(r["positions"]) for r in rows], [float(r["cpu_s"]) for r in rows])
    return rates


def cluster(args, rows):
    """The 6-unit set on N nodes: CPU hours from the measured 5-unit rates (a
    6-unit table is assumed to cost what a 5-unit table of its class costs
    per position; out-of-core builds --ooc-factor times that), the critical
    path of the job graph, and wall time for N nodes."""
    cap = int(args.node_memory * 0.9)
    plan = json.loads(subprocess.run(
        [args.tbgen, "plan", "--variant", "antichess", "--upto", "6", "--threads", str(args.node_cores),
         "--memory", str(cap)], check=True, capture_output=True, text=True).stdout)
    rates = class_rates(rows)
    disk = fit_through_origin([float(r["positions"]) for r in rows], [float(r["stored_bytes"]) for r in rows])
    tables = {t["table"]: t for t in plan["tables"]}
    cpu, finish = {}, {}
    for t in plan["tables"]:  # build order: sub-tables first
        rate = rates.get("/".join(class_of(t)), rates["all"])
        cpu[t["table"]] = t["positions"] * rate * (args.ooc_factor if t["out_of_core"] else 1)
        own = cpu[t["table"]] / (min(t["threads"], args.node_cores) * args.efficiency)
        finish[t["table"]] = own + max((finish[s] for s in t["sub_tables"]), default=0)
    six = [t for t in plan["tables"] if t["units"] == 6]
    total = sum(cpu[t["table"]] for t in six)
    path = max(finish[t["table"]] for t in six)
    end = max(six, key=lambda t: finish[t["table"]])
    print(f"\n6-unit set on nodes of {args.node_cores} cores and {args.node_memory / 2**30:.0f} GiB "
          f"(--memory {cap / 2**30:.0f}G, efficiency {args.efficiency}, out-of-core x{args.ooc_factor}):")
    print(f"  {len(six)} jobs, {sum(t['positions'] for t in six):.3e} positions, "
          f"{sum(t['out_of_core'] for t in six)} out-of-core, {total / 3600:.0f} CPU hours, "
          f"{disk * sum(t['positions'] for t in six) / 1e12:.1f} TB stored")
    print(f"  critical path {path / 3600:.1f} h (ending at {end['table']})")
    for nodes in (1, 4, 16, 64, 256):
        wall = max(path, total / (nodes * args.node_cores * args.efficiency))
        print(f"  {nodes:4d} nodes: {wall / 3600:8.1f} h")
    biggest = sorted(six, key=lambda t: -t["positions"])[:3]
    for t in biggest:
        print(f"  {t['table']}: {t['positions']:.3e} positions, in RAM {t['in_ram_bytes'] / 2**30:.0f} GiB "
              f"(sub-tables {t['subtable_bytes'] / 2**30:.0f} GiB), reserve {t['reserve_bytes'] / 2**30:.0f} GiB, "
              f"chunk files {2 * t['positions'] / 1e9:.0f} GB, stored {disk * t['positions'] / 1e9:.0f} GB, "
              f"{cpu[t['table']] / 3600:.1f} CPU h")
    heavy = [t for t in six if t["subtable_bytes"] > cap]
    print(f"  sub-tables larger than the cap (probed through the block cache): {len(heavy)} tables, "
          f"largest {max(t['subtable_bytes'] for t in six) / 2**30:.0f} GiB")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["select", "run", "project"])
    parser.add_argument("--build", default="build", help="build directory holding gen/tbgen")
    parser.add_argument("--out", default="/tmp/tbforge-five-unit", help="databases and scratch files")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cap", type=float, default=1e9,
                        help="most positions of extra 5-unit tables one pawn table may add")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cluster", action="store_true", help="project: the 6-unit set on a cluster as well")
    parser.add_argument("--node-cores", type=int, default=32)
    parser.add_argument("--node-memory", type=float, default=256 * 2**30)
    parser.add_argument("--efficiency", type=float, default=0.75,
                        help="assumed parallel efficiency of one job on a node's cores")
    parser.add_argument("--ooc-factor", type=float, default=5.0,
                        help="CPU per position out-of-core over in RAM (KQRvKBN under 4G: about 5)")
    args = parser.parse_args()
    args.tbgen = os.path.abspath(os.path.join(args.build, "gen", "tbgen"))
    {"select": select, "run": run, "project": project}[args.command](args)


if __name__ == "__main__":
    main()
