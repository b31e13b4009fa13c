"""Benchmark: SyGNS scoring at the paper's levels (hf_recogs.sygns_eval), time per pair.

Pairs are gold meanings against lightly corrupted copies of themselves (what a nearly-right model emits),
and against themselves. One corruption per pair, drawn with a fixed seed:

- FOL: the two arguments of a two-place atom swapped; one predicate replaced by another word of the data;
  a negation added or removed; a quantifier turned (``all`` <-> ``exists``); or an equivalent rewrite
  (bound variables renamed, conjuncts of one conjunction reversed);
- VF: one word replaced; a quantifier operator replaced; a ``NOT`` added or removed; an ``INV`` added or
  removed (when the term stays well-formed it is kept, else another corruption is drawn);
- DRS: clauses shuffled and variables renamed (equivalent); plus one of: the arguments of a two-referent
  clause swapped, a predicate replaced, a clause dropped, a box label changed.

Data: ``sygns_systematicity_one`` test (first ``--rows`` rows) and the depth-4 rows of
``sygns_productivity`` test (first ``--deep-rows``). Levels timed separately: FOL (entailment both ways +
polarity), VF (the same, through VF -> FOL), DRS (exact clause matching). Caches are cleared before each
level. ``--full`` also scores the whole 38,000-row systematicity test split at all three levels with
``--procs`` worker processes (the goal: under 2 minutes on 2 cores).

``--drs-worst`` times the DRS clause matching at its worst, under its work budget: random clause graphs of
60 to 480 clauses a side, and a 600-clause prediction (a deepest productivity gold repeated with fresh
variables, as a model that loops emits) against that gold. Where it takes under a minute, the behaviour before
the budget counted work (500 search nodes of unbounded work, then z3 with 20,000,000 resource units and no
cap on the problem size) is timed in the same run, and the ratio printed.

    python bench/sygns_eval_bench.py --rows 2000
    python bench/sygns_eval_bench.py --rows 500 --deep-rows 200
    python bench/sygns_eval_bench.py --full --procs 2
    python bench/sygns_eval_bench.py --drs-worst
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hf_recogs import sygns_eval as E  # noqa: E402
from hf_recogs.registry import get_config  # noqa: E402

_ATOM2 = re.compile(r"([a-z]+)\((x\d+),(x\d+)\)")
_PRED = re.compile(r"\b([a-z]+)\(")
_VAR = re.compile(r"\bx\d+\b")


def corrupt_fol(fol: str, words: list[str], rng: random.Random) -> str:
    kind = rng.choice(["swap_args", "replace_word", "negation", "quantifier", "equivalent"])
    if kind == "swap_args" and _ATOM2.search(fol):
        m = rng.choice(list(_ATOM2.finditer(fol)))
        return fol[: m.start()] + f"{m.group(1)}({m.group(3)},{m.group(2)})" + fol[m.end():]
    if kind == "negation":
        if "-" in fol.replace("->", "") and rng.random() < 0.5:
            spots = [i for i, ch in enumerate(fol) if ch == "-" and fol[i + 1] != ">"]
            i = rng.choice(spots)
            return fol[:i] + fol[i + 1:]
        m = rng.choice(list(_PRED.finditer(fol)))
        return fol[: m.start()] + "-" + fol[m.start():]
    if kind == "quantifier":
        spots = [m for m in re.finditer(r"\b(all|exists) ", fol)]
        m = rng.choice(spots)
        other = "exists " if m.group(1) == "all" else "all "
        return fol[: m.start()] + other + fol[m.end():]
    if kind == "equivalent":
        names = sorted(set(_VAR.findall(fol)), key=lambda v: int(v[1:]))
        new = [f"x{i}" for i in rng.sample(range(10, 10 + len(names)), len(names))]
        renamed = _VAR.sub(lambda m: dict(zip(names, new))[m.group(0)], fol)
        phi = E.parse_fol(renamed)
        return E.format_fol(_reverse_first_conjunction(phi))
    m = rng.choice(list(_PRED.finditer(fol)))
    word = rng.choice([w for w in words if w != m.group(1)])
    return fol[: m.start()] + word + "(" + fol[m.end():]


def _reverse_first_conjunction(phi):
    tag = phi[0]
    if tag == "and":
        return ("and", tuple(reversed(phi[1])))
    if tag in ("exists", "all"):
        return (tag, phi[1], _reverse_first_conjunction(phi[2]))
    if tag == "not":
        return ("not", _reverse_first_conjunction(phi[1]))
    if tag in ("imp", "iff"):
        return (tag, _reverse_first_conjunction(phi[1]), phi[2])
    return phi


def corrupt_vf(vf: str, words: list[str], rng: random.Random) -> str:
    toks = vf.split()
    for _ in range(20):
        kind = rng.choice(["word", "quantifier", "not", "inv"])
        out = list(toks)
        if kind == "word":
            i = rng.choice([i for i, t in enumerate(out) if t not in E.VF_ARITY])
            out[i] = rng.choice([w for w in words if w != out[i].lower()]).upper()
        elif kind == "quantifier":
            spots = [i for i, t in enumerate(out) if t in ("EXIST", "ALL", "TWO", "THREE")]
            i = rng.choice(spots)
            out[i] = rng.choice([q for q in ("EXIST", "ALL", "TWO", "THREE") if q != out[i]])
        elif kind == "not":
            if "NOT" in out and rng.random() < 0.5:
                out.pop(rng.choice([i for i, t in enumerate(out) if t == "NOT"]))
            else:
                out.insert(rng.choice([i for i, t in enumerate(out) if t not in ("AND", "OR")]), "NOT")
        else:
            if "INV" in out:
                out.pop(out.index("INV"))
            else:
                out.insert(rng.randrange(1, len(out)), "INV")
        candidate = " ".join(out)
        try:
            E.parse_vf_fol(candidate)
        except E.Malformed:
            continue
        return candidate
    return vf


def corrupt_drs(drs: str, words: list[str], rng: random.Random) -> str:
    clauses = [c.split() for c in drs.split(" [SEP] ")]
    kind = rng.choice(["swap_args", "replace_word", "drop", "box"])
    if kind == "swap_args" and any(len(c) == 4 and c[2].startswith("x") for c in clauses):
        c = rng.choice([c for c in clauses if len(c) == 4 and c[2].startswith("x")])
        c[2], c[3] = c[3], c[2]
    elif kind == "replace_word":
        c = rng.choice([c for c in clauses if c[1].islower()])
        c[1] = rng.choice([w for w in words if w != c[1]])
    elif kind == "drop" and len(clauses) > 1:
        clauses.pop(rng.randrange(len(clauses)))
    else:
        c = rng.choice(clauses)
        c[0] = f"b{int(c[0][1:]) + 1}"
    # an equivalent rewrite on top: variables renamed by a bijection, clauses shuffled
    names = sorted({t for c in clauses for t in c if re.fullmatch(r"[bx]\d+", t)})
    perm = {n: f"{n[0]}{100 + i}" for i, n in enumerate(rng.sample(names, len(names)))}
    clauses = [[perm.get(t, t) for t in c] for c in clauses]
    rng.shuffle(clauses)
    return " [SEP] ".join(" ".join(c) for c in clauses)


def _rows(name: str, n: int, depth: int | None = None) -> list[dict]:
    out = []
    for r in get_config(name).rows("test"):
        if depth is None or r["depth"] == depth:
            out.append(r)
            if len(out) >= n:
                break
    return out


def _clear_caches() -> None:
    for fn in (E._parse_fol_cached, E._parse_vf_cached, E._vf_fol_cached, E._decide_cached, E._drs_cached):
        fn.cache_clear()


def time_level(rows: list[dict], form: str, corrupt, words: list[str], seed: int = 0) -> dict:
    rng = random.Random(seed)
    golds = [r[form] for r in rows]
    preds = [corrupt(g, words, rng) for g in golds]
    results = {}
    for label, pairs in (("gold vs corrupted", list(zip(preds, golds))), ("gold vs gold", list(zip(golds, golds)))):
        _clear_caches()
        times, verdicts = [], []
        for p, g in pairs:
            t0 = time.perf_counter()
            verdicts.append(E.score_pair(p, g, form))
            times.append(time.perf_counter() - t0)
        results[label] = {"times": times, "scores": E.aggregate(verdicts)}
    return results


def _report(title: str, res: dict) -> None:
    for label, r in res.items():
        t = sorted(r["times"])
        mean = statistics.fmean(t)
        p99 = t[min(len(t) - 1, int(0.99 * len(t)))]
        print(f"  {title:<34} {label:<18} n={len(t):>5}  mean {1e3 * mean:7.2f} ms/pair  "
              f"median {1e3 * t[len(t) // 2]:6.2f}  p99 {1e3 * p99:7.2f}  max {1e3 * t[-1]:7.2f}  "
              f"-> 38,000 pairs: {38_000 * mean:6.1f} s on one core")
        s = r["scores"]
        keys = [k for k in ("equivalence", "entailment_g_to_p", "entailment_p_to_g", "undecided", "malformed",
                            "polarity_down_f1", "counter_f1", "counter_mean_f1") if k in s]
        print("      " + "  ".join(f"{k} {s[k]:.3f}" for k in keys))


def _score_chunk(args):
    preds, golds, form = args
    return E.score_all(preds, golds, form)


def full_split(procs: int, words: list[str]) -> None:
    from multiprocessing import get_context

    rows = list(get_config("sygns_systematicity_one").rows("test"))
    print(f"\nWhole sygns_systematicity_one test split ({len(rows):,} rows), {procs} processes, gold vs corrupted:")
    total = 0.0
    for form, corrupt in (("fol", corrupt_fol), ("vf", corrupt_vf), ("drs", corrupt_drs)):
        rng = random.Random(1)
        golds = [r[form] for r in rows]
        preds = [corrupt(g, words, rng) for g in golds]
        chunks = [(preds[i::procs], golds[i::procs], form) for i in range(procs)]
        t0 = time.perf_counter()
        with get_context("fork").Pool(procs) as pool:
            parts = pool.map(_score_chunk, chunks)
        dt = time.perf_counter() - t0
        total += dt
        scores = E.aggregate([v for part in parts for v in part])
        print(f"  {form}: {dt:6.1f} s   " + "  ".join(f"{k} {v:.3f}" for k, v in scores.items()))
    print(f"  all three levels: {total:.1f} s")


def random_drs(rng: random.Random, n_refs: int, n_boxes: int, n_clauses: int) -> str:
    """A random clause graph: ``n_refs`` REF clauses, then ``n_clauses`` predicates, relations and NOT over
    ``n_boxes`` boxes (tests/test_sygns_eval.py draws its random pairs here too)."""
    clauses = [f"b{rng.randint(1, n_boxes)} REF x{i}" for i in range(1, n_refs + 1)]
    for _ in range(n_clauses):
        kind, b = rng.random(), f"b{rng.randint(1, n_boxes)}"
        if kind < 0.4:
            clauses.append(f"{b} {rng.choice(['cat', 'dog'])} x{rng.randint(1, n_refs)}")
        elif kind < 0.8:
            clauses.append(f"{b} like x{rng.randint(1, n_refs)} x{rng.randint(1, n_refs)}")
        else:
            clauses.append(f"{b} NOT b{rng.randint(1, n_boxes)}")
    return " [SEP] ".join(clauses)


def _well_formed_random_drs(rng: random.Random, n_clauses: int) -> str:
    """A random clause graph of ``n_clauses`` clauses, a quarter of them REF, that the DRS reader accepts."""
    n_refs, n_boxes = max(1, n_clauses // 4), max(1, n_clauses // 8)
    while True:
        text = random_drs(rng, n_refs, n_boxes, n_clauses - n_refs)
        try:
            E.parse_drs(text)
            return text
        except E.Malformed:
            continue


def _looping(gold: str, n_clauses: int) -> str:
    """``gold`` repeated with fresh variables for each copy, cut at ``n_clauses`` whole copies or more."""
    clauses = [c.split() for c in gold.split(" [SEP] ")]
    out, copy = [], 0
    while len(out) < n_clauses:
        out += [" ".join(f"{t[0]}{int(t[1:]) + 1000 * copy}" if re.fullmatch(r"[bx]\d+", t) else t for t in c)
                for c in clauses]
        copy += 1
    return " [SEP] ".join(out)


def _old_drs(gold: str, pred: str) -> tuple[int, bool]:
    """The clause matching before its budget counted work: 500 nodes, then z3 with 20M units, no size cap."""
    g, p = E._Side(tuple(E.parse_drs(gold))), E._Side(tuple(E.parse_drs(pred)))
    try:
        return E._match_count(g, p, 10**18, node_budget=500), True
    except E._OutOfNodes as out:
        return E._optimize_match(g, p, out.args[0], 20_000_000)


def drs_worst(old_up_to: int = 240) -> None:
    """The DRS worst cases under the budget, and (up to ``old_up_to`` clauses a side) the old behaviour."""
    rng = random.Random(0)
    deepest = max(_rows("sygns_productivity", 500, depth=4), key=lambda r: len(r["drs"].split(" [SEP] ")))["drs"]
    cases = [(f"random {n} vs {n} clauses", _well_formed_random_drs(rng, n), _well_formed_random_drs(rng, n),
              n <= old_up_to)
             for n in (60, 120, 240, 480)]
    cases.append((f"600-clause loop vs a {len(deepest.split(' [SEP] '))}-clause gold", deepest,
                  _looping(deepest, 600), True))
    print(f"\nDRS worst cases: budget {E.DRS_SEARCH_BUDGET:,} units, then z3 up to {E.DRS_OPTIMIZE_MAX_TERMS:,} "
          f"variables and {E.DRS_OPTIMIZE_RLIMIT:,} resource units")
    worst = 0.0
    for title, gold, pred, old in cases:
        E._drs_cached.cache_clear()
        t0 = time.perf_counter()
        out = E.drs_match(gold, pred)
        ours = time.perf_counter() - t0
        worst = max(worst, ours)
        line = (f"  {title:<40} ours {ours:6.2f} s  matched {out['matched']:>3}"
                f"{' (undecided)' if out.get('unproven') else ''}")
        if old:
            t0 = time.perf_counter()
            matched, proven = _old_drs(gold, pred)
            before = time.perf_counter() - t0
            line += f"   before {before:6.2f} s  matched {matched:>3}{'' if proven else ' (unproven)'}  " \
                    f"ratio {before / ours:5.1f}x"
        else:
            line += "   before: not run (over 5 minutes)"
        print(line, flush=True)
    print(f"  worst case under the budget: {worst:.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=2000, help="systematicity_one test rows (default 2000)")
    ap.add_argument("--deep-rows", type=int, default=500, help="depth-4 productivity test rows (default 500)")
    ap.add_argument("--full", action="store_true", help="also score the whole 38,000-row test split")
    ap.add_argument("--procs", type=int, default=2, help="worker processes for --full (default 2)")
    ap.add_argument("--drs-worst", action="store_true", help="only time the DRS worst cases, ours and before")
    args = ap.parse_args()
    if args.drs_worst:
        drs_worst()
        return

    from hf_recogs.benchmarks import sygns_semantics as sem

    words = sorted(set(sem.LEMMA.values()) - {"young", "old", "cute", "dirty", "lazy"})
    import z3

    print(f"z3 {z3.get_version_string()}, resource limit {E.DEFAULT_RLIMIT:,} per check")
    for title, rows in (
        (f"sygns_systematicity_one test[:{args.rows}]", _rows("sygns_systematicity_one", args.rows)),
        (f"productivity depth 4 [:{args.deep_rows}]", _rows("sygns_productivity", args.deep_rows, depth=4)),
    ):
        sizes = Counter(len(r["drs"].split(" [SEP] ")) for r in rows)
        print(f"\n{title}: {len(rows)} rows, DRS clauses max {max(sizes)}, mean "
              f"{sum(k * v for k, v in sizes.items()) / len(rows):.1f}")
        for form, corrupt in (("fol", corrupt_fol), ("vf", corrupt_vf), ("drs", corrupt_drs)):
            _report(f"{form}", time_level(rows, form, corrupt, words))
    if args.full:
        full_split(args.procs, words)


if __name__ == "__main__":
    main()
