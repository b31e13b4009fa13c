"""Compositional classification data (Kim, Ravikumar, Ainslie & Ontañón 2021): (input, candidate) pairs.

A seq2seq benchmark becomes binary classification: is ``candidate`` the meaning of ``input``? Each source row
gives one positive (its own output, ``label`` 1) followed by up to ``per_row`` negatives (``label`` 0). Configs:
``recogs_pos_cls`` (from ``recogs_pos``), ``cfq_mcd1_cls`` (from ``cfq_mcd1``, the paper's own benchmark) and
the small pilot ``sygns_systematicity_one_cls``; each reads its source config's rows (default parameters) from
the config object its benchmark module declares. This module imports those modules, never the catalogue, so a
config's Arrow cache is keyed on its source module too (``builder.row_modules``).

Splits: the source's, with ``train`` less a seeded 5 % ``train_holdout`` (``len // 20`` rows of a fixed-seed
shuffle, the paper's rule, for an i.i.d. check). The cut does not depend on ``seed``: every negative kind and
seed shares it, so generators trained on train rows never see the hold-out. ``source_row`` is the row's index
in its source split (the source's train split for both ``train`` and ``train_holdout``).

Negatives (``negatives``):

* ``random``: outputs of other rows drawn uniformly from the same split (train, train_holdout, validation, test
  and gen are separate pools), seeded by ``seed`` and the split; a draw equivalent to the positive or to a
  negative already chosen is redrawn, at most ``MAX_DRAWS_PER_ROW`` draws per row, after which the row keeps
  fewer negatives. Equivalence: SEM for logical forms (``logical_forms.sem_verdict``; an undecided pair counts
  as equivalent), for SPARQL the same query type and the same set of clauses (a ``FILTER ( a != b )`` read both
  ways), for SyGNS FOL the same string.
* ``model``: beams of trained seq2seq generators (the paper's kind), made leak-free by
  ``dataset_scripts/make_model_negatives.py`` and shipped with the package in
  ``hf_recogs/model_negatives/<config>/`` (one gzipped JSON-lines file per split and a ``manifest.json`` with
  their SHA-256, the folds, the generators' recipes and the commit). ``MODEL_NEGATIVES`` pins each shipped
  manifest by SHA-256, and every file is checked before a row is read. ``per_row`` keeps the first negatives of
  each row (the selection's rotation order); ``seed`` plays no part.

Rows: ``input``, ``candidate``, ``category`` (the source row's), ``label``, ``negative_source`` ("" for a
positive, "random", or ``model:<generator>:<beam rank>``), ``negative_score`` (the beam's score; null unless
from a model),
``source_row``. Scored as classification (``metric="classification"``), never by seq2seq scoring. Sizes and an
example row: docs/DATASETS.md §9.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..dataset_config import SPLITS, DatasetConfig, Param, Row
from . import cfq, cogs, sygns

FAMILY_SUFFIX = "_cls"  # recogs_cls, cfq_cls, sygns_cls: kept apart from the seq2seq families' configs
CITATION = "kim2021structure"
HOLDOUT_SEED = 0
HOLDOUT_DIVISOR = 20  # 5 %: len // 20 rows
MAX_PER_ROW = 3
MAX_DRAWS_PER_ROW = 30  # random draws per row before it keeps fewer negatives
NEGATIVE_KINDS = ("random", "model")
RANDOM = "random"
MODEL = "model"
# The shipped model negatives: config -> SHA-256 of its manifest.json (which pins every split file's SHA-256).
SHIPMENTS = Path(__file__).resolve().parents[1] / "model_negatives"
MODEL_NEGATIVES: dict[str, str] = {
    "cfq_mcd1_cls": "17410b90d8c45ae73470f4c6924715a02f6ed66d3f22dc1a03b69e999a86cc11",
    "recogs_pos_cls": "d389f865839ac89d16f6eb68eb114d0ed1f36b07388f23dfb55f4077a39bc712",
}

EXTRA_FEATURES = {"label": "int32", "negative_source": "string", "negative_score": "float32",
                  "source_row": "int32"}
COLUMNS = ("input", "candidate", "category")


# ---------------------------------------------------------------------------------------------------------
# Equivalence of two outputs: a key per output, and whether two keys mean the same


def sem_key(output: str) -> str:
    return output


def sem_same(a: str, b: str) -> bool:
    """SEM-equivalent, or undecided (a negative must be proven different)."""
    from ..logical_forms import sem_verdict

    return a == b or sem_verdict(a, b) is not False


def sparql_key(query: str) -> tuple[str, frozenset]:
    """(query type, set of clauses): the paper's equivalence of two queries, order and repeats ignored."""
    tokens = query.split()
    if "{" not in tokens or tokens[-1] != "}":
        return query, frozenset()  # not a SELECT … WHERE { … } query: equal only to itself
    brace = tokens.index("{")
    clauses, clause = set(), []
    for token in tokens[brace + 1:-1] + ["."]:
        if token != ".":
            clause.append(token)
            continue
        if len(clause) == 6 and clause[0] == "FILTER" and clause[3] == "!=":
            clause = ["FILTER", "!=", *sorted((clause[2], clause[4]))]  # a != b is b != a
        clauses.add(tuple(clause))
        clause = []
    return " ".join(tokens[:brace]), frozenset(clauses)


def string_key(output: str) -> str:
    return " ".join(output.split())


def equal(a, b) -> bool:
    return a == b


# ---------------------------------------------------------------------------------------------------------
# Splits and negatives


def holdout_rows(n: int) -> list[int]:
    """The source train rows held out as ``train_holdout`` (sorted): the first ``n // 20`` of a fixed shuffle."""
    order = list(range(n))
    random.Random(HOLDOUT_SEED).shuffle(order)
    return sorted(order[: n // HOLDOUT_DIVISOR])


def split_rows(rows: Sequence[Row], split: str) -> list[int]:
    """Indices of the source split's rows that form ``split`` of the classification config."""
    if split not in ("train", "train_holdout"):
        return list(range(len(rows)))
    held = holdout_rows(len(rows))
    if split == "train_holdout":
        return held
    skip = set(held)
    return [i for i in range(len(rows)) if i not in skip]


@dataclass
class DrawStats:
    """How random drawing went on one split: ``redraws`` draws rejected as equivalent, ``short`` rows that
    ran out of draws with fewer than ``per_row`` negatives."""

    rows: int = 0
    draws: int = 0
    redraws: int = 0
    short: int = 0


def random_negatives(outputs: Sequence[str], key: Callable, same: Callable[[object, object], bool], per_row: int,
                     rng: random.Random, stats: DrawStats | None = None) -> list[list[int]]:
    """For each output, the pool indices of up to ``per_row`` negatives drawn from ``outputs`` (the pool), none
    ``same`` as the positive or as each other."""
    keys = [key(o) for o in outputs]
    stats = stats if stats is not None else DrawStats()
    chosen_all = []
    for i in range(len(outputs)):
        chosen: list[int] = []
        draws = 0
        while len(chosen) < per_row and draws < MAX_DRAWS_PER_ROW:
            draws += 1
            j = rng.randrange(len(outputs))
            if j == i or same(keys[j], keys[i]) or any(same(keys[j], keys[k]) for k in chosen):
                stats.redraws += 1
                continue
            chosen.append(j)
        stats.rows += 1
        stats.draws += draws
        stats.short += len(chosen) < per_row
        chosen_all.append(chosen)
    return chosen_all


# ---------------------------------------------------------------------------------------------------------
# Configs


class ShipmentError(ValueError):
    """The shipped model negatives are missing or do not check out; one line that names the fix."""


_REBUILD = "reinstall hf_recogs, or rebuild them with dataset_scripts/make_model_negatives.py"


def _check_negatives(name: str, negatives: str) -> None:
    if negatives == MODEL and name not in MODEL_NEGATIVES:
        shipped = ", ".join(sorted(MODEL_NEGATIVES)) or "none yet"
        raise ShipmentError(
            f"config {name!r}: no model negatives are shipped for it (shipped: {shipped}); use negatives='random',"
            f" or build them with `python dataset_scripts/make_model_negatives.py build {name} --run`")


def shipped_negatives(name: str, split: str) -> dict[int, dict]:
    """The shipped model negatives of one split: source row -> ``{"output", "category", "negatives": [...]}``,
    after checking the manifest against ``MODEL_NEGATIVES`` and the split's file against the manifest."""
    _check_negatives(name, MODEL)
    manifest_path = SHIPMENTS / name / "manifest.json"
    manifest_bytes = _read_bytes(manifest_path)
    if hashlib.sha256(manifest_bytes).hexdigest() != MODEL_NEGATIVES[name]:
        raise ShipmentError(f"{manifest_path}: SHA-256 differs from the pinned one; {_REBUILD}")
    files = json.loads(manifest_bytes)["files"]
    file = next((f for f, entry in files.items() if entry["split"] == split), None)
    if file is None:
        raise ShipmentError(f"config {name!r}: the shipped model negatives have no split {split!r}; {_REBUILD}")
    data = _read_bytes(SHIPMENTS / name / file)
    if hashlib.sha256(data).hexdigest() != files[file]["sha256"]:
        raise ShipmentError(f"{SHIPMENTS / name / file}: SHA-256 differs from its manifest; {_REBUILD}")
    records = (json.loads(line) for line in gzip.decompress(data).decode("utf-8").splitlines() if line.strip())
    return {r["source_row"]: r for r in records}


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        raise ShipmentError(f"{path} is missing; {_REBUILD}") from None


def _model_negatives(name: str, split: str, rows: Sequence[Row], picked: Sequence[int], per_row: int) -> list:
    """Each picked row's first ``per_row`` shipped negatives. The shipment must hold exactly the split's rows,
    each with the row's own output (else it was built from other data)."""
    shipped = shipped_negatives(name, split)
    if set(shipped) != set(picked):
        raise ShipmentError(f"config {name!r}: the shipped negatives of {split!r} cover {len(shipped)} rows, the "
                            f"split has {len(picked)}; {_REBUILD}")
    out = []
    for i in picked:
        record = shipped[i]
        if record["output"] != rows[i]["output"]:
            raise ShipmentError(f"config {name!r}: the shipped negatives of {split!r} row {i} were made for another "
                                f"output; {_REBUILD}")
        out.append([{"candidate": n["candidate"], "negative_source": n["negative_source"],
                     "negative_score": n["negative_score"]} for n in record["negatives"][:per_row]])
    return out


def _source_split(split: str) -> str:
    return "train" if split == "train_holdout" else split


def _generator(name: str, base: DatasetConfig, key: Callable, same: Callable) -> Callable[..., Iterator[Row]]:
    def generate(split: str, negatives: str, seed: int, per_row: int) -> Iterator[Row]:
        _check_negatives(name, negatives)
        rows = list(base.rows(_source_split(split)))
        picked = split_rows(rows, split)
        if negatives == MODEL:
            drawn = _model_negatives(name, split, rows, picked, per_row)
        else:
            outputs = [rows[i]["output"] for i in picked]
            rng = random.Random(f"hf_recogs-cls:{split}:{seed}")
            drawn = [[{"candidate": outputs[j], "negative_source": RANDOM, "negative_score": None} for j in negs]
                     for negs in random_negatives(outputs, key, same, per_row, rng)]
        for i, negs in zip(picked, drawn, strict=True):
            row = rows[i]
            shared = {"input": row["input"], "category": row["category"], "source_row": i}
            yield {**shared, "candidate": row["output"], "label": 1, "negative_source": "", "negative_score": None}
            for negative in negs:
                yield {**shared, "label": 0, **negative}

    return generate


def _sources(name: str, base: DatasetConfig):
    def sources(split: str, negatives: str = RANDOM, **params):
        _check_negatives(name, negatives)
        return base.sources(_source_split(split))

    return sources


def _params(name: str) -> tuple[Param, ...]:
    """The config's parameters; ``negatives`` defaults to the paper's model negatives where they are shipped."""
    return (
        Param("negatives", MODEL if name in MODEL_NEGATIVES else RANDOM, "where negatives come from: random draws "
              "from the split, or the shipped beams of leak-free seq2seq generators (model; the default where "
              "shipped)", NEGATIVE_KINDS),
        Param("seed", 0, "seed of the random negatives (the train_holdout cut is fixed; model negatives are fixed)"),
        Param("per_row", MAX_PER_ROW, "negatives per source row, at most (fewer when draws keep colliding)",
              bounds=(1, MAX_PER_ROW)),
    )

_DECLARED: list[DatasetConfig] = []


ANNOTATORS = "hf_recogs.structure.annotators:"  # the pair annotators (DatasetConfig.structure)


def _negative_kinds(name: str) -> str:
    if name in MODEL_NEGATIVES:
        return "beams of leak-free seq2seq generators, or with negatives='random' random from the same split"
    return "random from the same split; no model negatives shipped for this config yet"


def _declare(name: str, module, source: str, key: Callable, same: Callable, equivalence: str,
             structure: str) -> None:
    """Declare the classification config of ``module``'s config ``source``: licence, citations, groups and hub
    splits inherited."""
    base = next(c for c in module.CONFIGS if c.name == source)
    splits = tuple(s for s in SPLITS if _source_split(s) in base.splits)
    hub = None if base.hub_splits is None else tuple(s for s in splits if _source_split(s) in base.hub_splits)
    _DECLARED.append(
        DatasetConfig(
            name=name,
            description=(
                f"{base.name} as binary classification of (input, candidate) pairs (Kim et al. 2021): each row's "
                f"positive then up to 3 negatives ({_negative_kinds(name)}); "
                f"train less a 5 % train_holdout."
            ),
            family=base.family + FAMILY_SUFFIX,
            license=base.license,
            citations=(*base.citations, CITATION),
            splits=splits,
            generate=_generator(name, base, key, same),
            sources=_sources(name, base),
            params=_params(name),
            extra_features=dict(EXTRA_FEATURES),
            hub_splits=hub,
            notes=(
                f"Rows from config {base.name} (default parameters). Random negatives are never equivalent to "
                f"the positive or to each other ({equivalence}); train_holdout is a fixed 5 % cut of train "
                f"(len // 20). source_row indexes the source split. " + base.notes
            ).strip(),
            metric="classification",
            category_groups=base.category_groups,
            columns=COLUMNS,
            structure=structure,
        )
    )


_declare("recogs_pos_cls", cogs, "recogs_pos", sem_key, sem_same, "SEM", ANNOTATORS + "recogs_pos_pair")
_declare("cfq_mcd1_cls", cfq, "cfq_mcd1", sparql_key, equal, "same query type and set of clauses",
         ANNOTATORS + "cfq_pair")
_declare("sygns_systematicity_one_cls", sygns, "sygns_systematicity_one", string_key, equal, "same FOL string",
         ANNOTATORS + "sygns_pair")

CONFIGS: tuple[DatasetConfig, ...] = tuple(_DECLARED)  # collected by hf_recogs.registry
