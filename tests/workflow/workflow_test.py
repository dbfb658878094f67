#!/usr/bin/env python3
"""The Snakemake workflow as a user runs it (docs/generation.md, "Plans and
per-table jobs").

1. Every antichess table of at most 3 units (2 in sanitizer builds, whose
   slow process starts would dominate) and the 4-unit RBNvQ (distinct
   units, work index), QQvNN (two pairs) and RRRvB (three alike, exact index)
   through workflow/Snakefile: one job and one database per
   table, then the merge. The workflow is killed (SIGKILL to its process
   group, jobs included) once a third of the jobs are done, unlocked and run
   again: no table finished before the kill is built again (its database
   directory is the same, its report is kept or says it was already there;
   Snakemake's job count is the rest), and
   the merged database holds exactly the tables, with the same checksums
   (`tbprobe info --json`), as `tbgen gen` building them in one process.
   A third run has nothing to do.
2. `tbgen plan --format make` and `--format snakemake` workflows for smaller
   sets, run with make and Snakemake: the same checksums again.

Exit 77 (skipped) when snakemake or make is missing (scripts/install-deps.sh
installs them).
"""

import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

FOUR_UNIT = ["RBNvQ", "QQvNN", "RRRvB"]


def cpu():
    """CPU seconds of this process and its finished children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def fail(message):
    sys.exit("FAIL: " + message)


def run(command, cwd, expect=0):
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode != expect:
        fail(f"{' '.join(command)}: exit {done.returncode}, expected {expect}\n{done.stdout}\n{done.stderr}")
    return done.stdout + done.stderr


def checksums(tbprobe, db, cwd):
    lines = run([tbprobe, "info", "--db", db, "--json"], cwd).splitlines()
    tables = [json.loads(line) for line in lines if line.startswith("{")]
    return {t["table"]: t["checksum"] for t in tables}


def reports(parts):
    """Each finished job's report: (modification time, bytes)."""
    out = {}
    for path in glob.glob(os.path.join(parts, "*v*.json")):
        with open(path, "rb") as f:
            out[os.path.basename(path)[: -len(".json")]] = (os.stat(path).st_mtime_ns, f.read())
    return out


def part_identity(parts, table):
    """A part database's directory: a rebuild makes a new one (PARTS/T.tmp, renamed)."""
    return os.stat(os.path.join(parts, table)).st_ino


def snakemake(args, snakefile, config, cwd):
    # The greedy scheduler: the default one solves an integer program (a CBC
    # process) before every job, which costs more than these small jobs.
    # Four jobs at a time on two cores: a job on these tiny tables mostly
    # waits for its database's fsyncs.
    return (["snakemake", "-s", snakefile, "--cores", "4", "--scheduler", "greedy", "--config"]
            + [f"{k}={v}" for k, v in config.items()] + args)


def check_same(label, got, expected):
    if got != expected:
        missing = sorted(set(expected) - set(got))
        extra = sorted(set(got) - set(expected))
        differ = sorted(t for t in set(got) & set(expected) if got[t] != expected[t])
        fail(f"{label}: missing {missing}, extra {extra}, different checksums {differ}")


def workflow_run(args, work):
    config = {"variant": "antichess", "upto": args.upto, "tables": " ".join(FOUR_UNIT), "db": "merged.db",
              "tbgen": args.tbgen, "threads": 1}
    reference = checksums(args.tbprobe, "reference.db", work)
    plan = json.loads(run([args.tbgen, "plan", "--variant", "antichess", "--upto", str(args.upto)] + FOUR_UNIT,
                          work))
    jobs = [t["table"] for t in plan["tables"]]
    if sorted(jobs) != sorted(reference):
        fail("the plan's tables are not the ones tbgen gen built")
    parts = os.path.join(work, "merged.db.parts")

    # First run, killed once a third of the jobs are done.
    first = subprocess.Popen(snakemake([], args.snakefile, config, work), cwd=work, start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while len(reports(parts)) < len(jobs) // 3:
        if first.poll() is not None:
            fail(f"the first run ended ({first.returncode}) before it could be killed")
        if time.monotonic() > deadline:
            fail("the first run made no progress")
        time.sleep(0.05)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    before = reports(parts)
    # Finished parts: a job renames its database into place when done.
    finished = {t: part_identity(parts, t) for t in jobs if os.path.isdir(os.path.join(parts, t))}
    if len(finished) >= len(jobs):
        fail("every job finished before the kill")
    if os.path.exists(os.path.join(parts, "merged.json")):
        fail("the merge ran before the kill")

    # The rerun: unlock (a killed Snakemake keeps its lock), then finish;
    # a job killed between its last step and Snakemake's record of it runs
    # again (--rerun-incomplete) and finds its table done.
    run(snakemake(["--unlock"], args.snakefile, config, work), work)
    log = run(snakemake(["--rerun-incomplete"], args.snakefile, config, work), work)
    stats = re.search(r"^table\s+(\d+)\b", log, re.MULTILINE)
    if not stats:
        fail("no job count for rule 'table' in the rerun's log:\n" + log)
    rerun_jobs = int(stats.group(1))
    after = reports(parts)
    kept = [t for t in before if after.get(t) == before[t]]
    if rerun_jobs != len(jobs) - len(kept):
        fail(f"the rerun ran {rerun_jobs} table jobs; {len(jobs) - len(kept)} reports were missing or incomplete")
    for table in jobs:
        lines = [json.loads(x) for x in after[table][1].decode().splitlines()]
        built = [x["table"] for x in lines if x.get("built")]
        if table in finished:
            # Never built again: the same database, its report kept or, run
            # again, saying the table was already there.
            if part_identity(parts, table) != finished[table]:
                fail(f"{table}, finished before the kill, was built again")
            if table not in kept and built:
                fail(f"{table}, finished before the kill, was built again: {lines}")
        elif built != ["antichess/" + table]:
            fail(f"{table}: its job built {built}")
        # Only its own table: every other table it names came from another
        # job's database.
        if any(x.get("table") != "antichess/" + table and "source" not in x for x in lines if "table" in x):
            fail(f"{table}: its job found another table in its own database: {lines}")
    check_same("merged database", checksums(args.tbprobe, "merged.db", work), reference)
    reports_done = reports(parts)

    # A third run: the plan finds every table in the database; nothing to do.
    log = run(snakemake([], args.snakefile, config, work), work)
    if re.search(r"^(table|merge)\s+\d", log, re.MULTILINE) or reports(parts) != reports_done:
        fail("a run after completion did work:\n" + log)
    print(f"workflow: {len(jobs)} tables, {len(finished)} done before the kill, {rerun_jobs} jobs in the rerun")


def plan_formats(args, work):
    # Their own reference: with --upto 2 the first one lacks these tables.
    run([args.tbgen, "gen", "--variant", "antichess", "--db", "plan-reference.db", "--threads", "1", "--quiet",
         "KPvK", "NvP", "KQvK"], work)
    reference = checksums(args.tbprobe, "plan-reference.db", work)
    with open(os.path.join(work, "plan.mk"), "w") as f:
        f.write(run([args.tbgen, "plan", "--variant", "antichess", "--format", "make", "KPvK", "NvP"], work))
    run(["make", "-s", "-f", "plan.mk", "-j", "4", "TBGEN=" + args.tbgen, "DB=make.db"], work)
    made = checksums(args.tbprobe, "make.db", work)
    check_same("make workflow", made, {t: reference[t] for t in made})
    if "KPvK" not in made or "NvP" not in made:
        fail("the make workflow did not build its tables")
    with open(os.path.join(work, "plan.smk"), "w") as f:
        f.write(run([args.tbgen, "plan", "--variant", "antichess", "--format", "snakemake", "KQvK"], work))
    run(["snakemake", "-s", "plan.smk", "--cores", "2", "--scheduler", "greedy", "--config", "tbgen=" + args.tbgen,
         "db=snake.db"], work)
    snaked = checksums(args.tbprobe, "snake.db", work)
    check_same("snakemake plan", snaked, {t: reference[t] for t in ["KQvK", "KvK", "KvQ"]})
    print(f"plan formats: make {len(made)} tables, snakemake {len(snaked)} tables")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tbgen", required=True)
    parser.add_argument("--tbprobe", required=True)
    parser.add_argument("--snakefile", required=True)
    parser.add_argument("--upto", type=int, default=3, help="units of the tables besides the 4-unit ones")
    args = parser.parse_args()
    for tool in ("snakemake", "make"):
        if shutil.which(tool) is None:
            print(f"{tool} not found: skipped (scripts/install-deps.sh installs it)")
            sys.exit(77)
    work = tempfile.mkdtemp(prefix="tbforge-workflow-")
    try:
        phases = [("start", time.monotonic(), cpu())]
        # One thread: these tables are small, and two OpenMP threads on busy
        # cores spend more time spinning at barriers than building.
        run([args.tbgen, "gen", "--variant", "antichess", "--db", "reference.db", "--threads", "1", "--quiet",
             "--upto", str(args.upto)] + FOUR_UNIT, work)
        phases.append(("one tbgen gen", time.monotonic(), cpu()))
        workflow_run(args, work)
        phases.append(("workflow", time.monotonic(), cpu()))
        plan_formats(args, work)
        phases.append(("plan formats", time.monotonic(), cpu()))
        print("; ".join(f"{b[0]} {b[1] - a[1]:.1f} s wall, {b[2] - a[2]:.1f} s CPU" for a, b in zip(phases, phases[1:])))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("1 passed, 0 failed")


if __name__ == "__main__":
    main()
