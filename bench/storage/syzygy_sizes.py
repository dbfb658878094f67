#!/usr/bin/env python3
"""Stored bytes of each table against Syzygy's files for the same table.

Usage: bench/storage/syzygy_sizes.py INFO_JSON SYZYGY [--worst N] [--write-tsv FILE]

INFO_JSON   the output of `tbprobe info --db DB --json` (one object a line)
SYZYGY      Syzygy's giveaway files of the same tables (a directory of
            NAME.gtbw and, where the generator wrote one, NAME.gtbz), e.g.
            WORK_DIR/syzygy of bench/gen/syzygy_side_by_side.sh; or a
            table of their sizes as --write-tsv writes it (no files needed)
--write-tsv FILE  also write the sizes read from a directory as such a table

Prints the totals, how many tables are larger than Syzygy's WDL+DTZ, the
ratio and excess by the size of Syzygy's files, by pawns, the split of our
bytes (values, index metadata) and the N tables with the largest ratio.
"ours" is tbprobe's `bytes`: the block records, block keys left out.
"""
import argparse
import json
import os
import sys


def file_size(path):
    return os.path.getsize(path) if os.path.exists(path) else 0


def read_tsv(path):
    """Sizes by table name from a table written by --write-tsv."""
    sizes = {}
    with open(path) as lines:
        for line in lines:
            if line.startswith("#") or line.startswith("table\t") or not line.strip():
                continue
            name, wdl, dtz = line.rstrip("\n").split("\t")
            sizes[name] = (int(wdl), int(dtz))
    return sizes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("info_json")
    parser.add_argument("syzygy")
    parser.add_argument("--worst", type=int, default=10)
    parser.add_argument("--write-tsv")
    args = parser.parse_args()

    from_files = os.path.isdir(args.syzygy)
    sizes = {} if from_files else read_tsv(args.syzygy)
    tables = []
    missing = []
    written = []
    with open(args.info_json) as lines:
        for line in lines:
            info = json.loads(line)
            name = info["table"]
            if from_files:
                wdl = file_size(os.path.join(args.syzygy, name + ".gtbw"))
                dtz = file_size(os.path.join(args.syzygy, name + ".gtbz"))
                if wdl:
                    written.append((name, wdl, dtz))
            else:
                wdl, dtz = sizes.get(name, (0, 0))
            if wdl == 0:
                missing.append(name)
                continue
            split = info.get("split", {})
            tables.append({"name": name, "ours": info["bytes"], "wdl": wdl, "dtz": dtz,
                           "values": split.get("values", 0), "metadata": split.get("index_metadata", 0)})
    if not tables:
        sys.exit("syzygy_sizes: no table of the database has a Syzygy size in " + args.syzygy)
    if args.write_tsv:
        if not from_files:
            sys.exit("syzygy_sizes: --write-tsv needs a directory of Syzygy's files")
        with open(args.write_tsv, "w") as out:
            out.write("# Sizes in bytes of Syzygy's giveaway files (WDL .gtbw, DTZ .gtbz; 0: no DTZ file)\n")
            out.write("table\twdl\tdtz\n")
            for name, wdl, dtz in sorted(written):
                out.write(f"{name}\t{wdl}\t{dtz}\n")

    def line(label, group):
        ours = sum(t["ours"] for t in group)
        theirs = sum(t["wdl"] + t["dtz"] for t in group)
        larger = sum(1 for t in group if t["ours"] > t["wdl"] + t["dtz"])
        ratio = ours / theirs if theirs else float("inf")
        print(f"| {label} | {len(group)} | {larger} | {ours:,} | {theirs:,} | {ratio:.3f} | {ours - theirs:,} |")

    print("| tables | count | larger than Syzygy's | ours (B) | Syzygy WDL+DTZ (B) | ratio | excess (B) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    line("all", tables)
    for low, high in ((0, 10**4), (10**4, 10**5), (10**5, 10**6), (10**6, None)):
        group = [t for t in tables if t["wdl"] + t["dtz"] >= low and (high is None or t["wdl"] + t["dtz"] < high)]
        label = f"Syzygy's files {low:,} B and up" if high is None else f"Syzygy's files {low:,}-{high:,} B"
        if group:
            line(label, group)
    line("with pawns", [t for t in tables if "P" in t["name"]])
    line("pawnless", [t for t in tables if "P" not in t["name"]])
    wdl = sum(t["wdl"] for t in tables)
    dtz = sum(t["dtz"] for t in tables)
    print()
    print(f"Syzygy: WDL {wdl:,} B ({wdl / (wdl + dtz):.1%}), DTZ {dtz:,} B")
    values = sum(t["values"] for t in tables)
    metadata = sum(t["metadata"] for t in tables)
    theirs = wdl + dtz
    print(f"ours, split (tbprobe info): values {values:,} B, index metadata {metadata:,} B; "
          f"the two together (block keys included, which `bytes` leaves out) {values + metadata:,} B, "
          f"{(values + metadata) / theirs:.3f} of Syzygy's")
    if missing:
        print(f"no Syzygy file for {len(missing)} tables: {' '.join(missing[:10])}")
    print()
    print("| table | ours (B) | Syzygy WDL+DTZ (B) | ratio | our index metadata (B) |")
    print("|---|---:|---:|---:|---:|")
    worst = sorted(tables, key=lambda t: t["ours"] / (t["wdl"] + t["dtz"]), reverse=True)[: args.worst]
    for t in worst:
        theirs = t["wdl"] + t["dtz"]
        print(f"| {t['name']} | {t['ours']:,} | {theirs:,} | {t['ours'] / theirs:.2f} | {t['metadata']:,} |")


if __name__ == "__main__":
    main()
