"""Speed of the COGS structure annotations (hf_recogs.structure.cogs) on ReCOGS_pos gen (21,000 rows).

Why: the annotations are computed in a data collator, so annotating a whole split must take seconds, not
minutes. Timed on one core, caches cleared before every stage (cold): input parsing, output trees, cross-links
(the output layout recomputed too), and the whole ``annotate``. Baseline in the same run: the project's LF
parser alone (``logical_forms.parse``) on the same LFs, which every output tree pays; the ratios are printed.

    python bench/structure_bench.py
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_RECOGS_MIRROR", str(ROOT.parent / "shared" / "mirror"))
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def clear() -> None:
    from hf_recogs.structure import cogs

    for cached in (cogs._parse_cached, cogs._lf_layout, cogs._sentence_keys):
        cached.cache_clear()


def timed(name: str, fn, items, baseline: float | None = None) -> float:
    """Seconds for ``fn`` over all items (best of 2 cold runs), printed as rows/s."""
    best = float("inf")
    for _ in range(2):
        clear()
        start = time.perf_counter()
        for item in items:
            fn(*item)
        best = min(best, time.perf_counter() - start)
    ratio = f"  ({best / baseline:.2f}x the LF-parse baseline)" if baseline else ""
    print(f"{name:<34} {len(items) / best:>10,.0f} rows/s  {best:6.2f} s{ratio}")
    return best


def main() -> None:
    from hf_recogs import load_dataset, logical_forms
    from hf_recogs.structure import cogs

    lexicon = cogs.default_lexicon()
    ds = load_dataset("recogs_pos", split="gen")
    pairs = list(zip(ds["input"], ds["output"], strict=True))
    print(f"ReCOGS_pos gen: {len(pairs)} rows, one core")
    base = timed("baseline: logical_forms.parse", lambda s, lf: logical_forms.parse(lf), pairs)
    timed("input trees (parse_sentence)", lambda s, lf: cogs.parse_sentence(s, lexicon), pairs, base)
    timed("output trees (lf_structure)", lambda s, lf: cogs.lf_structure(lf), pairs, base)
    timed("cross-links (cross_links)", lambda s, lf: cogs.cross_links(s, lf, lexicon=lexicon), pairs, base)
    total = timed("all three (annotate)", lambda s, lf: cogs.annotate(s, lf, lexicon=lexicon), pairs, base)
    print(f"whole split annotated in {total:.2f} s")


if __name__ == "__main__":
    main()
