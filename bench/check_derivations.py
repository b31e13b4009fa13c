"""Rebuild every derivable ReCOGS-family file from COGS and compare it with the official bytes.

Usage: ``python bench/check_derivations.py`` (needs the offline mirror at ../shared/mirror or
``HF_RECOGS_MIRROR``; or network access). For each derived file it prints the sha256 of our bytes, the
sha256 of the verified official file, OK/FAIL and the wall time of the derivation; then, for the
regenerated ReCOGS (config ``recogs_regen``, default parameters), how many v1/v2 dev/test rows match the
released ones under SEM (``hf_recogs.logical_forms.sem_match``) and as a pure index renaming.
Exit status 1 if any check fails.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
if not os.environ.get("HF_RECOGS_MIRROR") and (ROOT.parent / "shared" / "mirror" / "MANIFEST.tsv").is_file():
    os.environ["HF_RECOGS_MIRROR"] = str(ROOT.parent / "shared" / "mirror")

from hf_recogs import sources
from hf_recogs.benchmarks import cogs as C
from hf_recogs.benchmarks import recogs_derive as d


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def main() -> int:
    failures = 0
    t0 = time.perf_counter()
    cogs = {split: list(C.cogs_rows(split)) for split in C.SPLITS}
    print(f"read and verified COGS train/dev/test/gen in {time.perf_counter() - t0:.2f} s\n")

    jobs: list[tuple[str, object]] = []
    for removal in d.REMOVAL_SETS:
        for split, up in C.UPSTREAM_SPLIT.items():
            jobs.append(
                (
                    f"cogs_token_removal/{up}_remove_{removal}.tsv",
                    lambda s=split, r=removal: d.token_removal(cogs[s], r),
                )
            )
    for k in C.CONCAT_KS:
        jobs.append((f"cogs_concat/train_k_{k}.tsv", lambda k=k: d.cogs_concat_train(cogs["train"], k)))
    jobs.append(("cogs_preposing/train.tsv", lambda: d.cogs_preposing_train(cogs["train"])))
    jobs.append(
        ("cogs_preposing+sprinkles/train.tsv", lambda: d.cogs_preposing_sprinkles_train(cogs["train"]))
    )
    for split, up in C.UPSTREAM_SPLIT.items():
        build = (
            (lambda: d.recogs_pos_train(cogs["train"]))
            if split == "train"
            else (lambda s=split: d.recogs_eval(cogs[s]))
        )
        jobs.append((f"recogs_positional_index/{up}.tsv", build))
    for split, up in C.UPSTREAM_SPLIT.items():
        jobs.append((f"variable_free/{up}.tsv", lambda s=split: d.variable_free_rows(cogs[s])))

    print(f"{'file':45s} {'ours (sha256)':16s} {'official':16s} {'result':6s} {'time':>7s}")
    for path, build in jobs:
        t = time.perf_counter()
        ours = d.write_tsv(build())
        elapsed = time.perf_counter() - t
        official = sources.fetch_bytes(C.recogs_file(path))
        ok = ours == official
        failures += not ok
        print(f"{path:45s} {sha(ours)[:16]} {sha(official)[:16]} {'OK' if ok else 'FAIL':6s} {elapsed:6.2f}s")

    print("\nRegenerated ReCOGS (recogs_regen, seed=42) vs the released v1/v2 dev/test:")
    try:
        from hf_recogs.logical_forms import sem_match
    except ImportError as err:
        sem_match = None
        print(f"  (SEM check skipped: {err})")
    for flavour in ("v1", "v2"):
        for split in ("validation", "test"):
            up = C.UPSTREAM_SPLIT[split]
            t = time.perf_counter()
            ours = d.regenerated_recogs(cogs[split], split, flavour=flavour)
            elapsed = time.perf_counter() - t
            released = C.read_rows(C.recogs_file(f"recogs_{flavour}/{up}.tsv"))
            same_text = sum(a[0] == b[0] and a[2] == b[2] for a, b in zip(ours, released))
            same_bytes = d.write_tsv(ours) == sources.fetch_bytes(C.recogs_file(f"recogs_{flavour}/{up}.tsv"))
            line = f"  {flavour} {up:4s}: rows {len(ours)}/{len(released)}, sentence+type equal {same_text}"
            if sem_match is not None:
                t2 = time.perf_counter()
                sem = sum(bool(sem_match(a[1], b[1])) for a, b in zip(ours, released))
                line += f", SEM equal {sem}/{len(released)} ({time.perf_counter() - t2:.2f} s)"
                failures += sem != len(released)
            failures += same_text != len(released) or len(ours) != len(released)
            line += f", byte-identical: {'yes' if same_bytes else 'no (expected: random index names)'}; build {elapsed:.2f} s"
            print(line)
    t = time.perf_counter()
    train = d.regenerated_recogs(cogs["train"], "train")
    print(
        f"  v2 train: {len(train)} rows (paper 135,547; 5 copies x (24,155 + 3,072) minus duplicates), "
        f"built in {time.perf_counter() - t:.2f} s"
    )

    print(f"\n{'ALL OK' if not failures else f'{failures} FAILED'}; total {time.perf_counter() - t0:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
