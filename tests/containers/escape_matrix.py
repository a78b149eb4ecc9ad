#!/usr/bin/env python3
"""Draws the escape matrix of docs/containers.md from seal_probe.sh's files.

    escape_matrix.py "HEADING=OUT" ...

Each argument is a configuration: its column's heading and the OUT prefix
seal_probe.sh wrote (OUT.check.json, OUT.sealed.json, OUT.startup). Prints one
markdown table: a row per way out of the seal's probe catalog (as `parallex
check --sealed` tries them), a column per configuration, each cell blocked,
ESCAPED (open though `check` calls a guarantee that holds it enforced) or not
enforced (open, and `check` names each guarantee that would hold it MISSING);
then the run's seal, what `check` named MISSING, and the start-up of a sealed
/bin/true. Exit 1 when a cell is ESCAPED or a configuration gave no answer.
"""
import json
import sys


def load(prefix):
    column = {"sealed": None, "check": None, "startup": None}
    try:
        with open(prefix + ".sealed.json") as f:
            column["sealed"] = json.load(f)
    except (OSError, ValueError):
        pass
    try:
        with open(prefix + ".check.json") as f:
            column["check"] = json.load(f)
    except (OSError, ValueError):
        pass
    try:
        with open(prefix + ".startup") as f:
            column["startup"] = f.read().split()
    except OSError:
        pass
    return column


def main(args):
    if not args or any("=" not in a for a in args):
        print(__doc__, file=sys.stderr)
        return 2
    columns = []
    for a in args:
        heading, prefix = a.split("=", 1)
        columns.append((heading, load(prefix)))
    ways = []
    for _, c in columns:
        for w in (c["sealed"] or {}).get("ways_out", []):
            if w["way_out"] not in ways:
                ways.append(w["way_out"])
    bad = 0
    out = ["| way out | " + " | ".join(h for h, _ in columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for way in ways:
        cells = []
        for _, c in columns:
            verdict = "no answer"
            for w in (c["sealed"] or {}).get("ways_out", []):
                if w["way_out"] == way:
                    verdict = w.get("verdict", "no verdict")
            if verdict == "ESCAPED":
                bad += 1
                verdict = "**ESCAPED**"
            cells.append(verdict)
        out.append("| " + way.replace("|", "\\|") + " | " + " | ".join(cells) + " |")
    seal, missing, startup = [], [], []
    for heading, c in columns:
        if c["sealed"] is None:
            bad += 1
            print(f"escape_matrix: {heading}: no answer from check --sealed", file=sys.stderr)
        seal.append((c["sealed"] or {}).get("seal", "no answer"))
        names = [g["id"] for g in (c["check"] or {}).get("guarantees", []) if g["required"] and not g["enforced"]]
        missing.append(", ".join(names) if names else "none")
        s = c["startup"]
        if s and len(s) >= 5 and s[4] == "0":
            startup.append(f"{s[0]} ± {s[1]} ms ({s[2]})")
        else:
            startup.append("failed" if s else "not measured")
    out.append("| *the run's seal* | " + " | ".join(seal) + " |")
    out.append("| *required guarantees `check` names MISSING* | " + " | ".join(missing) + " |")
    out.append("| *sealed `/bin/true`: mean ± σ (fastest)* | " + " | ".join(startup) + " |")
    print("\n".join(out))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
