"""Scoring: the verdict of each prediction, the summaries of a split (overall, per category, per group, per
depth), and the small formatting rules every report shares. Training, ``hf-recogs score``, the ``evaluate``
metrics and every report (``hf_recogs.report``) stand on this module, so it imports nothing heavy at import
time: no torch, transformers, matplotlib or numpy.

Scores in ``results.json`` are fractions in [0, 1]; tables, plots and ``aggregate.json`` use percent, as the
ReCOGS paper does. Which categories are scored together as groups is the config's ``category_groups``
(declared by the benchmark, e.g. COGS lexical / structural in ``benchmarks/cogs.py``); ``summarize`` records
each category's groups in the summary, and everything after it reads them from there.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .registry import CategoryGroups

# The SyGNS paper's levels shown next to exact match in tables, plots and aggregates (results.json has all
# of hf_recogs.sygns_eval.aggregate); the first of each form is the headline of plots and model-index.
SYGNS_SHOWN = {
    "fol": ("equivalence", "entailment_g_to_p", "entailment_p_to_g", "polarity_up_f1", "polarity_down_f1",
            "undecided"),
    "drs": ("counter_f1", "counter_precision", "counter_recall", "counter_mean_f1"),
}
SYGNS_LABELS = {
    "equivalence": "G⇔P", "entailment_g_to_p": "G⇒P", "entailment_p_to_g": "G⇐P", "polarity_up_f1": "up F1",
    "polarity_down_f1": "down F1", "undecided": "undecided", "counter_f1": "COUNTER F1",
    "counter_precision": "COUNTER P", "counter_recall": "COUNTER R", "counter_mean_f1": "COUNTER mean F1",
}

# The split a run is judged on, in order of preference: the generalization split where the benchmark has one.
HEADLINE_SPLITS = ("gen", "test", "validation")


def headline_split(split_names: Iterable[str]) -> str | None:
    """The one split that plots, model cards, aggregates and the median seed are about: gen if present, else
    test, else validation, else the first (None without splits). One rule, so a run's plot, card and
    published checkpoint never disagree on which split counts."""
    names = list(split_names)
    return next((s for s in HEADLINE_SPLITS if s in names), names[0] if names else None)


def sygns_levels(summary: dict[str, Any] | None) -> tuple[str, ...]:
    """The SyGNS levels a split summary carries, in display order (empty for other datasets)."""
    if not summary:
        return ()
    if "counter_f1" in summary:
        return SYGNS_SHOWN["drs"]
    return SYGNS_SHOWN["fol"] if "equivalence" in summary else ()


def score_rows(predictions: Sequence[str], references: Sequence[str], categories: Sequence[str] | None = None,
               metric: str = "sem", fmt: str = "auto", inputs: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The verdicts of each prediction, the one scoring function of training runs, ``hf-recogs score`` and the
    ``sem_match`` and ``sygns_match`` metrics: records with ``gold``, ``prediction``, ``category``, ``exact``
    (whitespace-normalised string match) and ``sem`` (Semantic Exact Match; None unless ``metric`` is
    "sem"; a pair whose SEM search ran out of budget is False with ``sem_undecided: True``, counted apart in
    the summaries), plus ``input`` if given. ``metric="sygns"`` adds ``sygns``, the SyGNS paper's verdicts
    (``hf_recogs.sygns_eval.score_pair``; ``fmt`` is then the form: fol, drs, vf or auto)."""
    from .logical_forms import exact_match, sem_verdict

    if metric == "classification":
        raise ValueError("score_rows scores seq2seq outputs; score a classification config's probabilities "
                         "with score_pairs")
    if metric == "sygns":
        from .sygns_eval import score_pair

    if len(references) != len(predictions):
        raise ValueError(f"{len(predictions)} predictions for {len(references)} references; lengths must match")
    records = []
    for i, (pred, gold) in enumerate(zip(predictions, references, strict=True)):
        record = {"input": inputs[i]} if inputs is not None else {}
        verdict = sem_verdict(pred, gold, fmt) if metric == "sem" else None
        record.update(gold=gold, prediction=pred, category=categories[i] if categories is not None else None,
                      sem=verdict is True if metric == "sem" else None, exact=bool(exact_match(pred, gold)))
        if metric == "sem" and verdict is None:  # SEM's search ran out of budget: not a match, counted apart
            record["sem_undecided"] = True
        if metric == "sygns":
            try:
                record["sygns"] = score_pair(pred, gold, fmt)
            except ValueError as err:  # a reference that is not of the form: say which
                raise ValueError(f"references[{i}]: {err}") from None
        records.append(record)
    return records


def score_pairs(probabilities: Sequence[float], rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of a classification split: each (input, candidate) row with its label, the model's
    probability that the candidate is right, its category and where a negative came from."""
    if len(probabilities) != len(rows):
        raise ValueError(f"{len(probabilities)} probabilities for {len(rows)} rows; lengths must match")
    return [{"input": r["input"], "candidate": r["candidate"], "label": int(r["label"]), "probability": float(p),
             "category": r.get("category"), "negative_source": r.get("negative_source") or ""}
            for p, r in zip(probabilities, rows, strict=True)]


def _classification_scores(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """ROC AUC of the probabilities (pooled over the items; None unless both classes are present), and accuracy
    and F1 of the positive class at probability 0.5."""
    from sklearn.metrics import f1_score, roc_auc_score

    labels = [r["label"] for r in items]
    probabilities = [r["probability"] for r in items]
    predicted = [int(p >= 0.5) for p in probabilities]
    both = 0 < sum(labels) < len(labels)
    return {"n": len(items), "positives": sum(labels),
            "roc_auc": float(roc_auc_score(labels, probabilities)) if both else None,
            "accuracy": sum(a == b for a, b in zip(labels, predicted, strict=True)) / len(items) if items else None,
            "f1": float(f1_score(labels, predicted, zero_division=0.0)) if items else None}


def _score(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    if items and "probability" in items[0]:
        return _classification_scores(items)
    n = len(items)
    out: dict[str, Any] = {"n": n, "exact_match": sum(r["exact"] for r in items) / n if n else None}
    sems = [r["sem"] for r in items if r.get("sem") is not None]
    out["sem_match"] = sum(sems) / len(sems) if sems and len(sems) == n else None
    if out["sem_match"] is not None:
        out["sem_undecided"] = sum(bool(r.get("sem_undecided")) for r in items)  # a count, scored as no match
    verdicts = [r["sygns"] for r in items if r.get("sygns") is not None]
    if verdicts and len(verdicts) == n:  # SyGNS: entailment / polarity / clause-matching levels
        from .sygns_eval import aggregate as aggregate_sygns_levels

        out.update(aggregate_sygns_levels(verdicts))
    return out


def summarize(records: Sequence[dict[str, Any]], metric: str,
              category_groups: CategoryGroups | None = None) -> dict[str, Any]:
    """Overall, per-category and per-group scores of one split's records. The groups are those of
    ``category_groups`` (the config's ``DatasetConfig.category_groups``; none without it), and the summary
    records which groups each category belongs to (``category_groups``: {category: [groups]}), so that tables,
    plots and aggregates read them from the summary alone. Where the groups declare a ``depth`` and the records
    carry their input, ``per_depth`` scores the recursion categories at each depth ({category: {depth: scores}})."""
    summary = _score(records)
    summary["primary"] = {"sem": "sem_match", "classification": "roc_auc"}.get(metric, "exact_match")
    if metric == "classification":
        summary["per_negative_kind"] = _per_negative_kind(records)
    by_cat: dict[str, list] = defaultdict(list)
    for r in records:
        by_cat[r["category"]].append(r)
    summary["per_category"] = {c: _score(by_cat[c]) for c in sorted(by_cat)}
    groups_of = {c: list(category_groups.of(c)) if category_groups and isinstance(c, str) else []
                 for c in summary["per_category"]}
    by_group: dict[str, list] = defaultdict(list)
    for r in records:
        for g in groups_of[r["category"]]:
            by_group[g].append(r)
    names = category_groups.names if category_groups else ()
    summary["groups"] = {g: _score(by_group[g]) for g in names if by_group.get(g)}
    summary["category_groups"] = groups_of
    if category_groups:
        summary["group_display"] = category_groups.display()
    if category_groups and category_groups.depth:
        per_depth = _per_depth(records, category_groups)
        if per_depth:
            summary["per_depth"] = per_depth
    return summary


def _per_negative_kind(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Every positive against the negatives of one kind ("random", or a generator: "model:<name>" without
    the beam rank), one score each: how hard each kind of negative is."""
    positives = [r for r in records if r["label"] == 1]
    kinds: dict[str, list] = defaultdict(list)
    for r in records:
        if r["label"] == 0:
            kinds[":".join(r["negative_source"].split(":")[:2]) or "unknown"].append(r)
    return {kind: _classification_scores(positives + negatives) for kind, negatives in sorted(kinds.items())}


def _per_depth(records: Sequence[dict[str, Any]], category_groups: CategoryGroups) -> dict[str, Any]:
    """Scores of the recursion categories at each depth, from the records that carry their input (string
    keys, as JSON gives them back)."""
    by_depth: dict[str, dict[int, list]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        depth = category_groups.depth(r["category"], r["input"]) if "input" in r else None
        if depth is not None:
            by_depth[r["category"]][depth].append(r)
    return {c: {str(d): _score(rows) for d, rows in sorted(by_depth[c].items())} for c in sorted(by_depth)}


def group_display(summary: dict[str, Any] | None) -> dict[str, Any]:
    """The config's ``CategoryGroups.display()`` as recorded in a summary: the groups' explanation, the
    highlighted group and the brief groups. Summaries written before it was recorded show every group,
    highlight none and explain none."""
    recorded = (summary or {}).get("group_display") or {}
    return {"explanation": recorded.get("explanation", ""), "highlighted": recorded.get("highlighted"),
            "brief": recorded.get("brief", list((summary or {}).get("groups", {})))}


def highlighted(summary: dict[str, Any]) -> set[str]:
    """The categories of a split summary (or aggregate) in its highlighted group (drawn red; none when the
    config declares none, or for summaries that did not record it)."""
    group = group_display(summary)["highlighted"]
    return {c for c, groups in summary.get("category_groups", {}).items() if group and group in groups}


def write_predictions(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """One JSON record per line, so a published predictions file can be streamed and gzipped as it is."""
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def write_json(path: Path, data: Any) -> None:
    """``results.json`` and ``aggregate.json`` as committed: indented, UTF-8, one final newline."""
    Path(path).write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")


def percent_text(value: float | None, decimals: int = 1) -> str:
    """A percentage with ``decimals`` decimals, or more where those would round a score that is not perfect to
    100 or a score above zero to 0 (4,180 of 4,182 is 99.95, not 100.0)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    for places in range(decimals, decimals + 4):
        text = f"{value:.{places}f}"
        if not (0 < value < 100 and float(text) in (0.0, 100.0)):
            return text
    return text


def fraction_as_percent(fraction: float | None) -> str:
    """A score of ``results.json`` (a fraction) as the percent text of tables and titles."""
    return percent_text(None if fraction is None else 100 * fraction)


def one_line(results: dict[str, Any]) -> str:
    """A run's scores in one log line: each split's primary score and its brief groups."""
    parts = []
    for split, s in results["splits"].items():
        key = s["primary"]
        parts.append(f"{split} {key.replace('_match', '')} {fraction_as_percent(s[key])}% (n={s['n']})")
        brief = group_display(s)["brief"]
        for g, gs in s.get("groups", {}).items():
            if g in brief:
                parts.append(f"{split}/{g} {fraction_as_percent(gs[key])}%")
    return "; ".join(parts) or "no evaluation splits"
