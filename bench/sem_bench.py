"""Benchmark: our SEM (hf_recogs.logical_forms.sem_match) against a brute-force checker, in the same run.

"Ours" is sem_match as users get it: the native fast path (hf_recogs/_sem_native.c) where it is built,
falling back to the pure-Python path; the pure-Python path alone is timed too, on the same pairs.

Why: the reference checker is exponential (one ReCOGS gen item took 18 s and 5 GB; docs/SEM.md §2.3); the
project claims an exact checker that is much faster on real data, stays in milliseconds on the adversarial PP
chains, and on inputs built to defeat it (the hard families) answers "undecided" within a bounded budget
instead of hanging. This script measures these claims and checks that the two checkers agree on every
decided pair.

Data: ReCOGS_pos gen (21,000 gold LFs, read from the offline mirror: HF_RECOGS_MIRROR or ../shared/mirror).
- matching pairs: gold vs a copy with variables renamed by a random bijection and conjuncts shuffled;
- corrupted pairs: the same copy with one minimal corruption (one variable occurrence redirected, two
  argument tokens swapped, the two arguments of one atom swapped, or one label replaced). A corruption that
  happens to be a renaming after all (the brute force finds a map) is reported, not counted as "must fail".
- adversarial: the repeated-noun PP chain of docs/SEM.md §6 (n = 5…30) and its non-isomorphic variant.
- hard families (docs/SEM.md §4.8; ``--hard-only`` runs just these, without the mirror): CFI pairs over random
  cubic base graphs and Latin-square graphs of group tables, isomorphic and not, which defeat colour
  refinement. Ours is timed with the default search budget (a pair over it is undecided) and, for the sizes
  that finish in seconds, without one; the brute force would have to materialise the product given.

The brute force is the reference's approach made bijective: a variable's candidates are the gold variables
with the same signature (sorted labels of the atoms it occurs in, positions ignored); by default it first
materialises the product of candidate lists, as the ReCOGS checker does (docs/SEM.md §2.1 step 4), then
walks it, skips non-injective maps and stops at the first map that makes the atom multisets equal
(``--bf-style lazy`` walks the product as a generator instead: a stronger baseline than the reference).
A per-pair CPU budget (--budget, default 120 s) and a product cap (--bf-max-maps) make it give up; such
pairs are reported as undecided and named in the output.

    python bench/sem_bench.py               # full run
    python bench/sem_bench.py --limit 2000  # a quick subset
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import random
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

_ATOM = re.compile(r"^(\*?[\w.]+)\(([^(),]+)(?:,([^(),]+))?\)$")


# --------------------------------------------------------------------------------------------------
# Brute force (independent of hf_recogs' parser)


def bf_parse(lf: str):
    """ReCOGS-format atoms as (label, args); None if malformed. Variables are digit strings."""
    text = re.sub(r"\s+", "", lf)
    text = text.replace(";", " AND ")
    out = []
    for conj in text.split("AND"):
        m = _ATOM.match(conj.strip())
        if not m:
            return None
        out.append((m.group(1), tuple(a for a in m.groups()[1:] if a is not None)))
    return out


def bf_candidates(pa, ga) -> tuple[list[str], list[list[str]]] | None:
    """Pred variables and, for each, the gold variables with its signature (sorted labels of the atoms it
    occurs in, positions ignored: the reference's rule); None when some variable has no candidate."""
    def sigs(atoms):
        sig: dict[str, list[str]] = {}
        for label, args in atoms:
            for a in args:
                if a.isdigit():
                    sig.setdefault(a, []).append(label.split(".")[-1].lstrip("*"))
        return {v: tuple(sorted(s)) for v, s in sig.items()}
    sp, sg = sigs(pa), sigs(ga)
    if len(sp) != len(sg):
        return None
    by_sig: dict[tuple, list[str]] = {}
    for v, s in sg.items():
        by_sig.setdefault(s, []).append(v)
    pvars = list(sp)
    cands = [by_sig.get(sp[v], []) for v in pvars]
    return None if any(not c for c in cands) else (pvars, cands)


def brute_force(pred: str, gold: str, budget: float, style: str = "lazy", max_maps: int = 1_000_000) -> bool | None:
    """True/False, or None when the budget (seconds of CPU time) ran out before a verdict.

    style "lazy" walks the candidate product as a generator (the strongest straightforward variant);
    "reference" first materialises it as a list, as the ReCOGS checker does (docs/SEM.md §2.1 step 4), and
    gives up at once (None, no time charged) when it would exceed ``max_maps`` maps."""
    pa, ga = bf_parse(pred), bf_parse(gold)
    if pa is None or ga is None or len(pa) != len(ga):
        return False
    found = bf_candidates(pa, ga)
    if found is None:
        return False
    pvars, cands = found
    target = Counter(ga)
    n = len(pvars)
    start = time.process_time()
    maps = itertools.product(*cands)
    if style == "reference":
        size = 1
        for c in cands:
            size *= len(c)
        if size > max_maps:
            return None
        maps = list(maps)
    for i, image in enumerate(maps):
        if i & 4095 == 4095 and time.process_time() - start > budget:
            return None
        if len(set(image)) != n:
            continue
        m = dict(zip(pvars, image))
        if Counter((label, tuple(m.get(a, a) for a in args)) for label, args in pa) == target:
            return True
    return False


# --------------------------------------------------------------------------------------------------
# Data


def rename_shuffle(lf: str, rng: random.Random) -> str:
    nums = sorted(set(re.findall(r"\b\d+\b", lf)), key=int)
    new = dict(zip(nums, map(str, rng.sample(range(max(50, 3 * len(nums))), len(nums)))))
    conj = re.sub(r"\b\d+\b", lambda m: new[m.group()], lf).replace(" ; ", " AND ").split(" AND ")
    rng.shuffle(conj)
    return " AND ".join(conj)


def corrupt(lf: str, rng: random.Random, kind: int) -> str:
    """One minimal change to a ReCOGS LF (then renamed and shuffled, so never string-equal)."""
    conj = lf.replace(" ; ", " AND ").split(" AND ")
    nums = sorted(set(re.findall(r"\b\d+\b", lf)), key=int)
    binary = [i for i, c in enumerate(conj) if "," in c]
    if kind == 0 and len(nums) > 1:  # one occurrence of a variable redirected to another variable
        i = rng.randrange(len(conj))
        toks = conj[i].split()
        pos = [j for j, t in enumerate(toks) if t.isdigit()]
        j = rng.choice(pos)
        toks[j] = rng.choice([n for n in nums if n != toks[j]])
        conj[i] = " ".join(toks)
    elif kind == 1 and len(binary) > 1:  # two argument tokens of different atoms swapped
        i, k = rng.sample(binary, 2)
        ti, tk = conj[i].split(), conj[k].split()
        slots = [(x, j) for x, toks in ((0, ti), (1, tk)) for j, t in enumerate(toks) if t.isdigit()]
        a = rng.choice([j for x, j in slots if x == 0])
        options = [j for x, j in slots if x == 1 and tk[j] != ti[a]] or [j for x, j in slots if x == 1]
        b = rng.choice(options)
        ti[a], tk[b] = tk[b], ti[a]
        conj[i], conj[k] = " ".join(ti), " ".join(tk)
    elif kind == 2 and binary:  # arguments of one binary atom swapped
        i = rng.choice(binary)
        m = re.match(r"^(.*) \( (\d+) , (\d+) \)$", conj[i])
        conj[i] = f"{m.group(1)} ( {m.group(3)} , {m.group(2)} )"
    else:  # one role label replaced
        roles = ["agent", "theme", "recipient", "ccomp", "xcomp"]
        i = rng.choice(binary) if binary else rng.randrange(len(conj))
        label = conj[i].split(" ( ")[0]
        if label in roles:
            conj[i] = conj[i].replace(label, rng.choice([r for r in roles if r != label]), 1)
        else:
            conj[i] = "* " + conj[i] if not conj[i].startswith("*") else conj[i][2:]
    return rename_shuffle(" AND ".join(conj), rng)


def pp_chain(n: int, variant: str = "chain") -> str:
    rooms = [3 * (i + 1) for i in range(n)]
    if variant == "cycle":
        edges = [(rooms[0], rooms[-1])] + [(rooms[i], rooms[i + 1]) for i in range(1, n - 2)] + [(rooms[n - 2], rooms[1])]
    else:
        edges = list(itertools.pairwise(rooms))
    prefix = ["Emma ( 0 )"] + [f"* room ( {r} )" for r in rooms]
    body = ["see ( 1 )", "agent ( 1 , 0 )", f"theme ( 1 , {rooms[0]} )"] + [f"nmod . in ( {a} , {b} )" for a, b in edges]
    return " ; ".join(prefix) + " ; " + " AND ".join(body)


def cubic_graph(n: int, seed: int = 0) -> list[tuple[int, int]]:
    """A connected simple 3-regular graph on n (even) vertices: random pairings of stubs until one is simple
    and connected. Random cubic graphs have treewidth linear in n, which is what makes CFI pairs over them
    hard for individualise-and-refine."""
    rng = random.Random(seed)
    while True:
        stubs = [v for v in range(n) for _ in range(3)]
        rng.shuffle(stubs)
        edges = [tuple(sorted(stubs[i : i + 2])) for i in range(0, 3 * n, 2)]
        if any(a == b for a, b in edges) or len(set(edges)) != len(edges):
            continue
        reach, todo = {0}, [0]
        while todo:
            v = todo.pop()
            for a, b in edges:
                for x, y in ((a, b), (b, a)):
                    if x == v and y not in reach:
                        reach.add(y)
                        todo.append(y)
        if len(reach) == n:
            return edges


def cfi(base: int, twists: int, seed: int = 0) -> str:
    """A Cai-Fürer-Immerman graph over a random cubic base graph, as a ReCOGS-style LF.

    Per base vertex: four ``node`` variables (the even subsets of its three edges) and two ``end`` variables
    per edge (bit 0 and 1); ``in ( m , a )`` joins a subset to the bit-1 end of each edge in it and to the
    bit-0 end of the others; ``link`` joins the ends of a base edge bit to bit, or crossed on the first
    ``twists`` edges. Equal twist parity gives isomorphic LFs, different parity non-isomorphic ones, and
    colour refinement (and k-WL for small k) cannot tell them apart."""
    edges = cubic_graph(base, seed)
    ends: dict[tuple[int, int], list[int]] = {}  # (vertex, edge index) -> its two end variables
    atoms, fresh = [], itertools.count()
    for v in range(base):
        mine = [i for i, e in enumerate(edges) if v in e]
        for i in mine:
            ends[v, i] = [next(fresh), next(fresh)]
            atoms += [f"end ( {x} )" for x in ends[v, i]]
        for subset in itertools.product((0, 1), repeat=3):
            if sum(subset) % 2:
                continue
            m = next(fresh)
            atoms.append(f"* node ( {m} )")
            atoms += [f"in ( {m} , {ends[v, i][bit]} )" for i, bit in zip(mine, subset)]
    for i, (u, v) in enumerate(edges):
        for bit in (0, 1):
            atoms.append(f"link ( {ends[u, i][bit]} , {ends[v, i][bit ^ (i < twists)]} )")
    return " AND ".join(atoms)


def latin_square_graph(orders: tuple[int, ...]) -> str:
    """The Latin-square graph of the Cayley table of Z_o1 x Z_o2 x ..., as an LF: one ``cell`` variable per
    table cell, ``same`` both ways between cells that share a row, a column or a symbol. A strongly regular
    graph: colour refinement leaves every variable in one class. Tables of different groups of the same
    order (Z_9, Z_3 x Z_3) give non-isomorphic graphs with identical parameters."""
    elems = list(itertools.product(*(range(o) for o in orders)))
    index = {e: i for i, e in enumerate(elems)}
    n = len(elems)
    symbol = [[index[tuple((x + y) % o for x, y, o in zip(a, b, orders))] for b in elems] for a in elems]
    cells = [(r, c) for r in range(n) for c in range(n)]
    atoms = [f"cell ( {r * n + c} )" for r, c in cells]
    for a, (r1, c1) in enumerate(cells):
        for b, (r2, c2) in enumerate(cells):
            if a != b and (r1 == r2 or c1 == c2 or symbol[r1][c1] == symbol[r2][c2]):
                atoms.append(f"same ( {a} , {b} )")
    return " AND ".join(atoms)


# --------------------------------------------------------------------------------------------------


def hard_pairs(cfi_bases, latin_orders, rng):
    """(family, size, expected verdict, pred, gold) for the hard families, each size isomorphic then not."""
    out = []
    for base in cfi_bases:
        gold = cfi(base, 0)
        out += [("CFI", f"base {base}", True, rename_shuffle(cfi(base, 2), rng), gold),
                ("CFI", f"base {base}", False, rename_shuffle(cfi(base, 1), rng), gold)]
    groups = {4: (2, 2), 8: (2, 2, 2), 9: (3, 3), 16: (4, 4)}  # a second group of each order
    for order in latin_orders:
        gold = latin_square_graph((order,))
        out += [("Latin", f"Z{order}", True, rename_shuffle(gold, rng), gold),
                ("Latin", f"Z{order}", False, rename_shuffle(latin_square_graph(groups[order]), rng), gold)]
    return out


def hard_families(L, args, rng) -> None:
    """Times per pair of the CFI and Latin-square families with the default budget, and without one up to the
    sizes given; the brute force's cost is the size of the product it would materialise."""
    print(f"\n== Hard families (docs/SEM.md §4.8): CPU s per pair, cold cache; budget {L.DEFAULT_SEARCH_BUDGET:,} "
          "work units (the default) vs no budget ==")
    print("Built to defeat colour refinement; no benchmark LF is like them. 'iso': a renamed, shuffled isomorphic "
          "copy; 'non-iso': a non-isomorphic twin (CFI: one twist; Latin: the table of Z_2^3, Z_3^2, ...). "
          f"No budget only up to CFI base {args.unbounded_cfi_max} and Latin order {args.unbounded_latin_max}; "
          "ratio: no budget / budgeted (where both decide, what the budget's bookkeeping costs).")
    print(f"{'family':6} {'size':9} {'tokens':>7} {'pair':8} {'budgeted':>10} {'verdict':>10} {'no budget':>10} "
          f"{'verdict':>8} {'ratio':>6}  brute force (reference style)")
    for family, size, expect, pred, gold in hard_pairs(args.cfi_bases, args.latin_orders, rng):
        L.clear_cache()  # also forgets remembered searches
        t = time.process_time()
        verdict = L.sem_verdict(pred, gold)
        c_budget = time.process_time() - t
        assert verdict in (expect, None), (family, size, expect, verdict)
        number = int(size.split()[-1].lstrip("Z"))
        cell_free, ratio = f"{'-':>10} {'-':>8}", ""
        if number <= (args.unbounded_cfi_max if family == "CFI" else args.unbounded_latin_max):
            L.clear_cache()
            t = time.process_time()
            free = L.sem_verdict(pred, gold, budget=None)
            c_free = time.process_time() - t
            assert free is expect, (family, size, expect, free)
            cell_free, ratio = f"{c_free:>10.3f} {free!s:>8}", f"{c_free / c_budget:>5.2f}x"
        found = bf_candidates(bf_parse(pred), bf_parse(gold))
        maps = math.prod(len(c) for c in found[1]) if found else 0
        baseline = "no candidates: False at once" if not maps else (
            f"{'gives up at once: ' if maps > args.bf_max_maps else ''}10^{math.log10(maps):.0f} candidate maps")
        print(f"{family:6} {size:9} {len(gold.split()):>7} {'iso' if expect else 'non-iso':8} {c_budget:>10.3f} "
              f"{'undecided' if verdict is None else verdict!s:>10} {cell_free} {ratio:>6}  "
              f"{baseline}")


def timed(fn, pairs):
    wall, cpu = time.perf_counter(), time.process_time()
    out = [fn(p, g) for p, g in pairs]
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=None, help="use only the first N gold LFs of gen")
    ap.add_argument("--budget", type=float, default=120.0, help="brute-force CPU seconds per pair (default 120)")
    ap.add_argument("--bf-style", choices=["lazy", "reference"], default="reference",
                    help="reference (default): materialise the product first, as the ReCOGS checker does; lazy: "
                         "a generator with early exit (a stronger baseline than the reference)")
    ap.add_argument("--bf-max-maps", type=int, default=40_000_000,
                    help="reference style: larger products are reported undecided without being tried")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--adv-max", type=int, default=30, help="largest n of the adversarial family (default 30)")
    ap.add_argument("--adv-repeats", type=int, default=5)
    ap.add_argument("--cfi-bases", type=int, nargs="*", default=[8, 12, 16, 20, 24, 28],
                    help="base graph sizes of the CFI pairs (even)")
    ap.add_argument("--latin-orders", type=int, nargs="*", default=[4, 8, 9], choices=[4, 8, 9, 16],
                    help="orders of the Latin-square pairs")
    ap.add_argument("--unbounded-cfi-max", type=int, default=16,
                    help="largest CFI base also timed without a budget (default 16: ~1 s)")
    ap.add_argument("--unbounded-latin-max", type=int, default=4,
                    help="largest Latin order also timed without a budget (default 4; 8 takes ~11 s)")
    ap.add_argument("--hard-only", action="store_true", help="only the hard families (no mirror needed)")
    args = ap.parse_args(argv)

    if args.hard_only:
        from hf_recogs import logical_forms as L

        print(f"sem_bench --hard-only: python {sys.version.split()[0]}; {os.cpu_count()} CPUs; load average "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; our SEM backend: {L.BACKEND}")
        hard_families(L, args, random.Random(args.seed))
        return 0

    mirror = Path(os.environ.get("HF_RECOGS_MIRROR") or ROOT.parent / "shared" / "mirror")
    if not (mirror / "MANIFEST.tsv").is_file():
        print(f"sem_bench: no offline mirror at {mirror}; set HF_RECOGS_MIRROR to the mirror folder "
              "(it must hold frankaging/ReCOGS/<commit>/recogs_positional_index/gen.tsv)", file=sys.stderr)
        return 2
    os.environ["HF_RECOGS_MIRROR"] = str(mirror)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from hf_recogs import logical_forms as L
    from hf_recogs.sources import pinned, read_tsv

    rows = read_tsv(pinned("recogs", "recogs_positional_index/gen.tsv"))
    if args.limit:
        rows = rows[: args.limit]
    golds = [r[1] for r in rows]
    rng = random.Random(args.seed)
    matching = [(rename_shuffle(g, rng), g) for g in golds]
    corrupted = [(corrupt(g, rng, i % 4), g) for i, g in enumerate(golds)]
    load0 = os.getloadavg()
    print(f"sem_bench: {len(golds)} ReCOGS_pos gen golds; python {sys.version.split()[0]}; "
          f"{os.cpu_count()} CPUs; load average at start {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")

    print(f"our SEM backend: {L.BACKEND} (the native fast path, falling back to Python where it cannot tell; "
          "'python' when it is not built or HF_RECOGS_PURE_PYTHON=1)")
    results = {}
    pure = {}
    for name, pairs in (("matching", matching), ("corrupted", corrupted)):
        L.clear_cache()
        ours, w_cold, c_cold = timed(L.sem_match, pairs)
        _, _, c_warm = timed(L.sem_match, pairs)
        L.clear_cache()
        python_only, _, c_py = timed(lambda p, g: L._python_sem_match(p, g, "auto"), pairs)
        assert python_only == ours, f"{name}: the pure-Python path and sem_match disagree"
        pure[name] = c_py
        bf, w_bf, c_bf = timed(lambda p, g: brute_force(p, g, args.budget, args.bf_style, args.bf_max_maps), pairs)
        results[name] = (ours, bf, c_cold, c_warm, c_bf, w_cold, w_bf)

    print("\n== ReCOGS_pos gen: our SEM vs brute force (same run; CPU seconds, wall in brackets) ==")
    tot_ours = tot_bf = 0.0
    total = 0
    for name, (ours, bf, c_cold, c_warm, c_bf, w_cold, w_bf) in results.items():
        n = len(ours)
        total += n
        tot_ours += c_cold
        tot_bf += c_bf
        undecided = sum(v is None for v in bf)
        agree = sum(o == b for o, b in zip(ours, bf) if b is not None)
        disagree = [(i, o, b) for i, (o, b) in enumerate(zip(ours, bf)) if b is not None and o != b]
        print(f"{name:9s} n={n}: ours True={sum(ours)}  brute force True={sum(v is True for v in bf)} "
              f"False={sum(v is False for v in bf)} undecided={undecided}")
        print(f"          ours cold cache {n / c_cold:9.0f} pairs/s ({c_cold:.2f} s [{w_cold:.2f}]), "
              f"warm {n / c_warm:9.0f} pairs/s; brute force {n / c_bf:9.0f} pairs/s ({c_bf:.2f} s [{w_bf:.2f}]); "
              f"ratio {c_bf / c_cold:.1f}x")
        print(f"          pure-Python path alone (cold cache) {n / pure[name]:9.0f} pairs/s ({pure[name]:.2f} s); "
              f"ratio to brute force {c_bf / pure[name]:.1f}x")
        print(f"          verdicts agree on {agree}/{n - undecided} decided pairs; disagreements: {len(disagree)}")
        for i, o, b in disagree[:5]:
            pairs = matching if name == "matching" else corrupted
            print(f"            ours={o} bf={b}: {pairs[i][0]!r} vs {pairs[i][1]!r}")
        if name == "corrupted":
            print(f"          corruptions that are renamings after all (brute force True): {sum(v is True for v in bf)}")
    tot_py = sum(pure.values())
    print(f"all      n={total}: pure-Python path alone {total / tot_py:.0f} pairs/s, ratio {tot_bf / tot_py:.1f}x")
    print(f"all      n={total}: ours {total / tot_ours:.0f} pairs/s, brute force {total / tot_bf:.0f} pairs/s, "
          f"ratio {tot_bf / tot_ours:.1f}x (brute force style {args.bf_style}, budget {args.budget:g} s per pair"
          + (f", at most {args.bf_max_maps} maps" if args.bf_style == "reference" else "") + ")")

    print("\n== Adversarial PP chains (docs/SEM.md §6): ms per pair, cold cache, median / max of "
          f"{args.adv_repeats} ==")
    print(f"{'n':>3} {'match med':>10} {'match max':>10} {'non-iso med':>12} {'non-iso max':>12}")
    worst = 0.0
    for n in range(5, args.adv_max + 1):
        gold = pp_chain(n)
        cells = []
        for variant, expect in (("chain", True), ("cycle", False)):
            times = []
            for _ in range(args.adv_repeats):
                pred = rename_shuffle(pp_chain(n, variant), rng)
                L.clear_cache()
                t = time.process_time()
                verdict = L.sem_match(pred, gold)
                times.append((time.process_time() - t) * 1000)
                assert verdict is expect, (n, variant)
            cells += [statistics.median(times), max(times)]
            worst = max(worst, max(times))
        print(f"{n:>3} {cells[0]:>10.2f} {cells[1]:>10.2f} {cells[2]:>12.2f} {cells[3]:>12.2f}")
    print(f"max single adversarial pair: {worst:.2f} ms")
    print("brute force on the same family (budget per pair):")
    for n in range(5, 11):
        row = []
        for variant in ("chain", "cycle"):
            pred = rename_shuffle(pp_chain(n, variant), rng)
            t = time.process_time()
            v = brute_force(pred, pp_chain(n), args.budget, args.bf_style, args.bf_max_maps)
            row.append(f"{variant}: {'undecided' if v is None else v} in {(time.process_time() - t) * 1000:.1f} ms")
        print(f"  n={n}: " + "; ".join(row))
    hard_families(L, args, rng)

    load1 = os.getloadavg()
    print(f"\nload average at end {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f} (shared machine: CPU seconds are "
          "reported because wall time includes waiting for a core)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
