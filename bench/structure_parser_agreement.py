"""Agreement of the COGS sentence parser (hf_recogs.structure.cogs) with the gold logical forms.

Why: the input trees must be right without reading the LF. ReCOGS_pos LF indices are word positions, so
every gold LF gives, for each content word, the verb (or noun) it depends on and the role: the triples
``(role, head, dependent)``. This script parses every sentence of ReCOGS_pos train, validation, test and gen
from the sentence alone and compares its triples with the gold ones: per split, per gen category, and a
sample of rows that disagree.

A row agrees when its triple set equals the gold set exactly; triple precision/recall are micro-averaged.
Primitives (one bare word, no positions) have no triples and are left out.

A second table looks at the tree ``structure_transformer`` reads (the parse projected onto head words) from the
decoder's side: for every binary conjunct ``role ( i , j )`` of the gold LF, the relation of word j to word i,
the word the output named just before j. That relation is the label the pointer cross-attention
(``cross_attention_structure: pointer``) sees at the right answer.

    python bench/structure_parser_agreement.py            # all four splits
    python bench/structure_parser_agreement.py --show 20   # more disagreements
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_RECOGS_MIRROR", str(ROOT.parent / "shared" / "mirror"))
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SPLITS = ("train", "validation", "test", "gen")


def score(rows, lexicon):
    """Per category: [rows, agreeing rows, gold triples, predicted, correct, failures], and disagreements."""
    from hf_recogs.structure import StructureError
    from hf_recogs.structure.cogs import gold_relations, parse_sentence

    table = defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    bad = []
    for sentence, lf, category in rows:
        if category.startswith("primitive"):
            continue
        gold = gold_relations(sentence, lf)
        try:
            pred = set(parse_sentence(sentence, lexicon).relations)
        except StructureError:
            pred, failed = set(), 1
        else:
            failed = 0
        cell = table[category]
        cell[0] += 1
        cell[1] += pred == gold
        cell[2] += len(gold)
        cell[3] += len(pred)
        cell[4] += len(pred & gold)
        cell[5] += failed
        if pred != gold:
            bad.append((category, sentence, sorted(gold - pred), sorted(pred - gold)))
    return table, bad


def pointer_labels(rows, lexicon):
    """Per category: Counter of the head-word-tree relation of each gold binary conjunct's j to its i."""
    import re

    from hf_recogs.models.configuration_structure_transformer import TREE_RELATIONS
    from hf_recogs.structure import StructureError
    from hf_recogs.structure.cogs import parse_sentence
    from hf_recogs.structure.pairs import encoder_tree, tree_relations
    from hf_recogs.train.data import COGS_MARKERS

    binary = re.compile(r"\( (\d+) , (\d+) \)")
    table = defaultdict(Counter)
    for sentence, lf, category in rows:
        try:
            tree = parse_sentence(sentence, lexicon).structure
        except StructureError:
            table[category]["no parse"] += len(binary.findall(lf))
            continue
        _, heads = encoder_tree(tree, "</s>", 512, False, COGS_MARKERS)
        relations = tree_relations(tuple(heads))
        for i, j in binary.findall(lf):
            table[category][TREE_RELATIONS[relations[int(i), int(j)]]] += 1
    return table


def pointer_line(name, counts):
    n = sum(counts.values())
    child, sibling = counts["parent_to_child"], counts["sibling"]
    return (f"| {name} | {n} | {100 * child / n:.1f} | {100 * sibling / n:.1f} | "
            f"{100 * (n - child - sibling) / n:.1f} |")


def line(name, cell):
    n, ok, g, p, c, f = cell
    prec = 100 * c / p if p else 0.0
    rec = 100 * c / g if g else 0.0
    return f"| {name} | {n} | {100 * ok / n:.2f} | {prec:.2f} | {rec:.2f} | {f} |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--splits", nargs="*", default=list(SPLITS))
    ap.add_argument("--show", type=int, default=8, help="disagreeing rows to print per split")
    args = ap.parse_args()
    from hf_recogs import load_dataset
    from hf_recogs.structure.cogs import default_lexicon

    lexicon = default_lexicon()
    print("| split / category | rows | row agreement % | triple precision % | triple recall % | no parse |")
    print("|---|---|---|---|---|---|")
    samples = {}
    for split in args.splits:
        ds = load_dataset("recogs_pos", split=split)
        start = time.perf_counter()
        table, bad = score(zip(ds["input"], ds["output"], ds["category"], strict=True), lexicon)
        seconds = time.perf_counter() - start
        total = [sum(col) for col in zip(*table.values(), strict=True)]
        print(line(f"**{split}** ({seconds:.1f} s)", total))
        if split == "gen":
            for category in sorted(table):
                print(line(f"gen: {category}", table[category]))
        samples[split] = bad
    print("\nHead-word tree, from the decoder's side: the relation of each gold conjunct's second argument j to i")
    print("| split / category | conjuncts ( i , j ) | j a child of i % | j a sibling of i % | other % |")
    print("|---|---|---|---|---|")
    for split in args.splits:
        ds = load_dataset("recogs_pos", split=split)
        table = pointer_labels(zip(ds["input"], ds["output"], ds["category"], strict=True), lexicon)
        print(pointer_line(f"**{split}**", sum(table.values(), Counter())))
        if split == "gen":
            for category in sorted(table):
                print(pointer_line(f"gen: {category}", table[category]))
    for split, bad in samples.items():
        print(f"\n{split}: {len(bad)} disagreeing rows; first {min(args.show, len(bad))}:")
        for category, sentence, missing, extra in bad[: args.show]:
            print(f"  [{category}] {sentence}\n    missing {missing}\n    extra   {extra}")


if __name__ == "__main__":
    main()
