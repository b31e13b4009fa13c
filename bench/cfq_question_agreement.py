"""Agreement of the CFQ question parser (hf_recogs.structure.cfq_question) with the gold SPARQL queries.

Why: MCD1 carries no question trees, so ours come from a parser of CFQ's question grammar that reads the
question alone. A tree is right where it attaches every entity to the right predicates: this script parses
every question of cfq_mcd1 train, validation and test, reads from the parse the predicate words each entity
``M0``… is an argument of, maps the words to relation families with a lexicon learnt on train, and compares
with the families of the triples the entity is in in the gold query. A row agrees when every entity gets
exactly its gold families.

The bag baseline gives every entity all the predicate words attached anywhere in the question (the parse's
words without its attachments): what a tree-free reading would get right.

    python bench/cfq_question_agreement.py
    python bench/cfq_question_agreement.py --show 20
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_RECOGS_MIRROR", str(ROOT.parent / "shared" / "mirror"))
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SPLITS = ("train", "validation", "test")


def score(rows, lexicon):
    """[rows, parsed, agreeing, bag-baseline agreeing, rows with an entity], the disagreements, seconds."""
    from hf_recogs.structure import StructureError
    from hf_recogs.structure.cfq_question import attachments, families, query_attachments, same_families

    cell, bad = [0, 0, 0, 0, 0], []
    seconds = 0.0
    for question, query in rows:
        cell[0] += 1
        start = time.perf_counter()
        try:
            found = attachments(question)
        except StructureError:
            seconds += time.perf_counter() - start
            bad.append((question, "no parse"))
            continue
        seconds += time.perf_counter() - start
        cell[1] += 1
        gold = query_attachments(query)
        cell[4] += bool(gold)
        predicted = families(found, lexicon)
        bag = frozenset().union(*predicted.values()) if predicted else frozenset()
        if same_families(predicted, gold):
            cell[2] += 1
        else:
            bad.append((question, {e: (sorted(predicted[e]), sorted(gold.get(e, ()))) for e in predicted
                                   if predicted[e] != gold.get(e, frozenset())}))
        cell[3] += same_families(dict.fromkeys(predicted, bag), gold)
    return cell, bad, seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--show", type=int, default=8, help="disagreeing rows to print per split")
    args = ap.parse_args()
    from hf_recogs import load_dataset
    from hf_recogs.structure.cfq_question import _parse, learn_lexicon

    data = {split: load_dataset("cfq_mcd1", split=split) for split in SPLITS}
    lexicon = learn_lexicon(zip(data["train"]["input"], data["train"]["output"], strict=True))
    print(f"lexicon learnt on train: {len(lexicon)} predicate words")
    print("| split | rows | parsed | rows that agree | bag baseline | parses/s (one core) |")
    print("|---|---|---|---|---|---|")
    samples = {}
    for split, ds in data.items():
        _parse.cache_clear()  # time the parser, not the cache the lexicon pass filled
        cell, bad, seconds = score(zip(ds["input"], ds["output"], strict=True), lexicon)
        n, parsed, ok, bag, _ = cell
        print(f"| {split} | {n:,} | {parsed:,} | {100 * ok / n:.2f} % ({ok:,}) | {100 * bag / n:.2f} % | "
              f"{n / seconds:,.0f} |")
        samples[split] = bad
    for split, bad in samples.items():
        print(f"\n{split}: {len(bad)} disagreeing rows; first {min(args.show, len(bad))} "
              "(entity: (parse's families, gold families)):")
        for question, diff in bad[: args.show]:
            print(f"  {question}\n    {diff}")


if __name__ == "__main__":
    main()
