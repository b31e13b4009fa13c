"""Generation time of the ``sygns_*`` configs: every split, every row with all its columns, cold.

    python bench/sygns_bench.py [--configs a,b] [--scale 1.0] [--seed 42]

Each config runs in a fresh interpreter (nothing cached; import time reported separately), so the number is
what the first load of a config costs before ``datasets`` writes its Arrow cache. Goal: < 30 s per config.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_S = 30.0

_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import hf_recogs.benchmarks  # registers every config: the import cost reported apart
from hf_recogs.registry import configs_of
t1 = time.perf_counter()
name, scale, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
cfg = configs_of("sygns")[name]
sizes = {}
for split in cfg.splits:
    sizes[split] = sum(1 for _ in cfg.rows(split, scale=scale, seed=seed))
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "generate_s": t2 - t1, "sizes": sizes}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="", help="comma-separated names (default: all sygns_* configs)")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from hf_recogs.registry import configs_of

    names = [n for n in args.configs.split(",") if n] or sorted(configs_of("sygns"))
    print(f"{'config':40s} {'train':>7s} {'valid':>7s} {'test':>7s} {'gen s':>7s} {'import s':>8s}")
    worst = 0.0
    for name in names:
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, name, str(args.scale), str(args.seed)],
            cwd=ROOT, capture_output=True, text=True, check=True,
        )
        rec = json.loads(out.stdout.strip().splitlines()[-1])
        s = rec["sizes"]
        worst = max(worst, rec["generate_s"])
        flag = "" if rec["generate_s"] < GOAL_S else "  <-- over the goal"
        print(
            f"{name:40s} {s['train']:7d} {s['validation']:7d} {s['test']:7d} "
            f"{rec['generate_s']:7.1f} {rec['import_s']:8.2f}{flag}"
        )
    print(f"slowest: {worst:.1f} s (goal < {GOAL_S:.0f} s)")


if __name__ == "__main__":
    main()
