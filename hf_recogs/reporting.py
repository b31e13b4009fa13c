"""Results of training runs: per-split/per-category scores, predictions files, plots, multi-seed aggregates
with bootstrapped confidence intervals, and the model card.

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
from importlib import resources
from pathlib import Path
from typing import Any

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


def sygns_levels(summary: dict[str, Any] | None) -> tuple[str, ...]:
    """The SyGNS levels a split summary carries, in display order (empty for other datasets)."""
    if not summary:
        return ()
    if "counter_f1" in summary:
        return SYGNS_SHOWN["drs"]
    return SYGNS_SHOWN["fol"] if "equivalence" in summary else ()


def score_rows(predictions: Sequence[str], references: Sequence[str], categories: Sequence[str] | None = None,
               metric: str = "sem", fmt: str = "auto", inputs: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The verdicts of each prediction, the one scoring function of training runs and of the ``sem_match``
    and ``sygns_match`` metrics: records with ``gold``, ``prediction``, ``category``, ``exact``
    (whitespace-normalised string match) and ``sem`` (Semantic Exact Match; None unless ``metric`` is
    "sem"; a pair whose SEM search ran out of budget is False with ``sem_undecided: True``, counted apart in
    the summaries), plus ``input`` if given. ``metric="sygns"`` adds ``sygns``, the SyGNS paper's verdicts
    (``hf_recogs.sygns_eval.score_pair``; ``fmt`` is then the form: fol, drs, vf or auto)."""
    from .logical_forms import exact_match, sem_verdict

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


def _score(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    n = len(items)
    out: dict[str, Any] = {"n": n, "exact_match": sum(r["exact"] for r in items) / n if n else None}
    sems = [r["sem"] for r in items if r.get("sem") is not None]
    out["sem_match"] = sum(sems) / len(sems) if sems and len(sems) == n else None
    if out["sem_match"] is not None:
        out["sem_undecided"] = sum(bool(r.get("sem_undecided")) for r in items)  # a count, scored as no match
    verdicts = [r["sygns"] for r in items if r.get("sygns") is not None]
    if verdicts and len(verdicts) == n:  # SyGNS: entailment / polarity / clause-matching levels
        from .sygns_eval import aggregate as sygns_levels

        out.update(sygns_levels(verdicts))
    return out


def summarize(records: Sequence[dict[str, Any]], metric: str,
              category_groups: CategoryGroups | None = None) -> dict[str, Any]:
    """Overall, per-category and per-group scores of one split's records. The groups are those of
    ``category_groups`` (the config's ``DatasetConfig.category_groups``; none without it), and the summary
    records which groups each category belongs to (``category_groups``: {category: [groups]}), so that tables,
    plots and aggregates read them from the summary alone. Where the groups declare a ``depth`` and the records
    carry their input, ``per_depth`` scores the recursion categories at each depth ({category: {depth: scores}})."""
    summary = _score(records)
    summary["primary"] = "sem_match" if metric == "sem" else "exact_match"
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
        by_depth: dict[str, dict[int, list]] = defaultdict(lambda: defaultdict(list))
        for r in records:
            depth = category_groups.depth(r["category"], r["input"]) if "input" in r else None
            if depth is not None:
                by_depth[r["category"]][depth].append(r)
        if by_depth:  # string keys, as JSON gives them back
            summary["per_depth"] = {c: {str(d): _score(rows) for d, rows in sorted(by_depth[c].items())}
                                    for c in sorted(by_depth)}
    return summary


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
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def write_json(path: Path, data: Any) -> None:
    Path(path).write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")


def percent_text(value: float | None, decimals: int = 1) -> str:
    """A percentage with ``decimals`` decimals, or more where those would round a score that is not perfect to
    100 or a score above zero to 0 (4,180 of 4,182 is 99.95, not 100.0)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    for decimals in range(decimals, decimals + 4):
        text = f"{value:.{decimals}f}"
        if not (0 < value < 100 and float(text) in (0.0, 100.0)):
            return text
    return text


def _pct(x: float | None) -> str:
    return percent_text(None if x is None else 100 * x)


def one_line(results: dict[str, Any]) -> str:
    parts = []
    for split, s in results["splits"].items():
        key = s["primary"]
        parts.append(f"{split} {key.replace('_match', '')} {_pct(s[key])}% (n={s['n']})")
        brief = group_display(s)["brief"]
        for g, gs in s.get("groups", {}).items():
            if g in brief:
                parts.append(f"{split}/{g} {_pct(gs[key])}%")
    return "; ".join(parts) or "no evaluation splits"


# ---------------------------------------------------------------------------------------------------------
# Plots


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _category_split(results: dict[str, Any]) -> str | None:
    splits = results["splits"]
    if "gen" in splits:
        return "gen"
    return max(splits, key=lambda s: len(splits[s]["per_category"]), default=None)


def plot_per_category(results: dict[str, Any], path: Path) -> None:
    """Bar chart of the primary metric per category of the gen split (or the split with most categories)."""
    plt = _plt()
    split = _category_split(results)
    fig_w = 6
    if split is None:
        fig, ax = plt.subplots(figsize=(fig_w, 2))
        ax.text(0.5, 0.5, "no evaluation splits", ha="center")
        ax.axis("off")
    else:
        s = results["splits"][split]
        key = s["primary"]
        cats = list(s["per_category"])
        values = [100 * (s["per_category"][c][key] or 0) for c in cats]
        red = highlighted(s)
        colors = ["tab:red" if c in red else "tab:blue" for c in cats]
        fig_w = max(6, 0.35 * len(cats) + 2)
        fig, ax = plt.subplots(figsize=(fig_w, 6.5))
        headline = sygns_levels(s)[:1]
        if headline:  # SyGNS: the paper's headline level (G⇔P or COUNTER F1) beside exact match
            lv = headline[0]
            second = [100 * (s["per_category"][c].get(lv) or 0) for c in cats]
            ax.bar([i + 0.2 for i in range(len(cats))], second, width=0.4, color="tab:orange",
                   label=SYGNS_LABELS[lv])
            bars = ax.bar([i - 0.2 for i in range(len(cats))], values, width=0.4, color=colors, label=key)
            ax.legend(fontsize=7, loc="upper left")
            values = [max(a, b) for a, b in zip(values, second, strict=True)]
        else:
            bars = ax.bar(range(len(cats)), values, color=colors)
        for bar, c in zip(bars, cats, strict=True):  # n per bar
            ax.text(bar.get_x() + bar.get_width() / 2, bar.get_height() + 1, f"n={s['per_category'][c]['n']}",
                    ha="center", va="bottom", fontsize=5, rotation=90)
        ax.set_xticks(range(len(cats)), cats, rotation=75, ha="right", fontsize=7)
        ax.set_ylim(0, 112)
        ax.set_ylabel(f"{key.replace('_', ' ')} (%)")
        if red:
            from matplotlib.patches import Patch

            # blue bars are named by the group they all share (COGS: lexical), if any
            shared = [g for g in s["groups"] if all(g in s["category_groups"][c] for c in cats if c not in red)]
            ax.legend(handles=[Patch(color="tab:blue", label=shared[0] if shared else "other"),
                               Patch(color="tab:red", label=group_display(s)["highlighted"])],
                      fontsize=7, loc="upper right")
        if not any(values):
            ax.text(0.5, 0.5, "every score is 0 %", transform=ax.transAxes, ha="center", va="center",
                    fontsize=12, color="tab:red")
        others = ", ".join(f"{sp} {_pct(results['splits'][sp][key])}" for sp in results["splits"])
        ax.set_title(f"{results['dataset']} · {results['arch']} · seed {results['seed']} · {split} per category\n"
                     f"overall: {others}", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_curves(results: dict[str, Any], path: Path) -> None:
    """Learning curves of a run: training loss and source gap (left), curve-sample scores per split and
    group (right), against the step. Written only when the run logged them."""
    train = results.get("train") or {}
    curves, losses, gaps = train.get("curves") or [], train.get("loss_history") or [], train.get(
        "source_gap_history") or []
    if not (curves or gaps):
        return
    plt = _plt()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    if losses:
        left.plot([h["step"] for h in losses], [h["loss"] for h in losses], color="tab:gray", label="train loss")
    points = sorted({(h["step"], h["source_gap"]) for h in gaps}
                    | {(c["step"], c["eval_source_gap"]) for c in curves if c.get("eval_source_gap") is not None})
    left.plot([p[0] for p in points], [p[1] for p in points], "o-", color="tab:green",
              label="shuffled-source gap (validation sample)")
    left.set_xlabel("step")
    left.set_ylabel("nats per target token")
    left.legend(fontsize=8)
    keys = sorted({k for h in curves for k in h if k.endswith(("_sem_match", "_exact_match"))})
    for key in keys:
        points = [(h["step"], 100 * h[key]) for h in curves if h.get(key) is not None]
        label = key.removeprefix("eval_").removesuffix("_sem_match").removesuffix("_exact_match")
        right.plot(*zip(*points), "o-", markersize=3, label=label)
    right.set_ylim(0, 100)
    right.set_xlabel("step")
    right.set_ylabel("score on the fixed curve samples (%)")
    if keys:
        right.legend(fontsize=7)
    else:
        right.text(0.5, 0.5, "no evaluations (eval_strategy: no)", ha="center", transform=right.transAxes)
    fig.suptitle(f"{results['dataset']} · {results['arch']} · seed {results['seed']} · learning curves "
                 "(gen/test curves are for reading only, never for model selection)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------------------
# Aggregation over seeds


def bootstrap_ci(values: Sequence[float], n_boot: int = 10_000, confidence: float = 0.95, seed: int = 0):
    """Percentile bootstrap CI of the mean: resample the values (one per run) with replacement ``n_boot`` times.

    Returns ``(low, high)``; a single value gives ``(value, value)``. Deterministic (fixed ``seed``).
    """
    import numpy as np

    x = np.asarray([v for v in values if v is not None], dtype=float)
    if x.size == 0:
        return (None, None)
    if x.size == 1:
        return (float(x[0]), float(x[0]))
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(n_boot, x.size))].mean(axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return (float(low), float(high))


def _stats(values: list[float | None]) -> dict[str, Any]:
    vals = [v for v in values if v is not None]
    low, high = bootstrap_ci(vals)
    mean = sum(vals) / len(vals) if vals else None
    r = lambda v: None if v is None else round(v, 4)  # noqa: E731
    return {"mean": r(mean), "ci_low": r(low), "ci_high": r(high), "values": [r(v) for v in values]}


def _precision(results: dict[str, Any]) -> str:
    """How the training steps computed: "bf16" / "fp16" autocast or "fp32"."""
    mode = results.get("mixed_precision") or ("bf16" if results.get("bf16") else "no")
    return "fp32" if mode == "no" else mode


def aggregate(results_list: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean and bootstrapped 95 % CI over seeds (in percent) for every split, category and group."""
    if not results_list:
        raise ValueError("aggregate needs at least one result")
    seeds = [r["seed"] for r in results_list]
    out: dict[str, Any] = {
        "dataset": results_list[0]["dataset"],
        "arch": results_list[0]["arch"],
        "metric": results_list[0]["metric"],
        "seeds": seeds,
        # cpu_bf16: auto follows the CPU, so seeds of one set-up trained on different machines may differ here
        "precision": {str(r["seed"]): _precision(r) for r in results_list},
        "ci": "percentile bootstrap over runs, 10,000 resamples, 95 %",
        "splits": {},
    }
    split_names = []
    for r in results_list:
        split_names += [s for s in r["splits"] if s not in split_names]
    for split in split_names:
        present = [r["splits"].get(split) for r in results_list]
        key = next(p["primary"] for p in present if p)

        def pct(d, k=key):
            return None if d is None or d.get(k) is None else 100 * d[k]

        cats, groups = [], []
        for p in present:
            if p:
                cats += [c for c in p["per_category"] if c not in cats]
                groups += [g for g in p.get("groups", {}) if g not in groups]
        out["splits"][split] = {
            "primary": key,
            "overall": _stats([pct(p) for p in present]),
            "groups": {g: _stats([pct(p and p.get("groups", {}).get(g)) for p in present]) for g in groups},
            "per_category": {c: _stats([pct(p and p["per_category"].get(c)) for p in present]) for c in cats},
            # each category's groups, for the plot (results written before summaries recorded them have none)
            "category_groups": {c: groups for p in present if p for c, groups in p.get("category_groups", {}).items()},
            "group_display": group_display(next((p for p in present if p and p.get("group_display")), None)
                                           or next((p for p in present if p), None)),
        }
        if key == "sem_match":  # exact match alongside, for comparison with EM-based tables
            out["splits"][split]["overall_exact_match"] = _stats([pct(p, "exact_match") for p in present])
        levels = sygns_levels(next((p for p in present if p), None))
        if levels:  # SyGNS: every level per split, group and category, like the primary score
            out["splits"][split]["levels"] = {lv: {
                "overall": _stats([pct(p, lv) for p in present]),
                "groups": {g: _stats([pct(p and p.get("groups", {}).get(g), lv) for p in present]) for g in groups},
                "per_category": {c: _stats([pct(p and p["per_category"].get(c), lv) for p in present]) for c in cats},
            } for lv in levels}
    return out


def _fmt(stats: dict[str, Any]) -> tuple[str, str, str]:
    f = percent_text
    return f(stats["mean"]), f"[{f(stats['ci_low'])}, {f(stats['ci_high'])}]", ", ".join(f(v) for v in stats["values"])


def aggregate_markdown(agg: dict[str, Any]) -> str:
    lines = [
        f"# {agg['dataset']} · {agg['arch']} · {len(agg['seeds'])} seeds ({', '.join(map(str, agg['seeds']))})",
        "",
        f"Metric: {agg['metric']} (percent). Mean over seeds with a {agg['ci']} confidence interval.",
    ]
    by_precision: dict[str, list[str]] = {}
    for seed, mode in agg.get("precision", {}).items():
        by_precision.setdefault(mode, []).append(seed)
    if len(by_precision) > 1:  # worth a line only when the seeds differ
        lines.append("Precision of the training steps: " + "; ".join(
            f"{mode} (seed{'s' if len(seeds) > 1 else ''} {', '.join(seeds)})" for mode, seeds in by_precision.items())
            + ".")
    explanations = dict.fromkeys(group_display(s)["explanation"] for s in agg["splits"].values())
    lines += [f"Groups: {text}" for text in explanations if text]
    for split, s in agg["splits"].items():
        lines += ["", f"## {split} ({s['primary']})", "", "| | mean | 95 % CI | per seed |", "|---|---|---|---|"]
        lines.append("| **overall** | " + " | ".join(_fmt(s["overall"])) + " |")
        if "overall_exact_match" in s:
            lines.append("| overall (exact match) | " + " | ".join(_fmt(s["overall_exact_match"])) + " |")
        for g, st in s["groups"].items():
            lines.append(f"| *{g}* | " + " | ".join(_fmt(st)) + " |")
        if len(s["per_category"]) > 1:
            for c, st in s["per_category"].items():
                lines.append(f"| {c} | " + " | ".join(_fmt(st)) + " |")
        if s.get("levels"):
            lines += _levels_markdown(s)
    return "\n".join(lines) + "\n"


def _levels_markdown(s: dict[str, Any]) -> list[str]:
    """The SyGNS levels of one aggregated split: mean over seeds (percent) per level, group and category."""
    levels = list(s["levels"])
    f = lambda st: percent_text(st["mean"])  # noqa: E731
    lines = ["", "SyGNS levels (mean over seeds, %):", "",
             "| | " + " | ".join(SYGNS_LABELS.get(lv, lv) for lv in levels) + " |",
             "|---|" + "---|" * len(levels)]
    lines.append("| **overall** | " + " | ".join(f(s["levels"][lv]["overall"]) for lv in levels) + " |")
    for g in s["groups"]:
        lines.append(f"| *{g}* | " + " | ".join(f(s["levels"][lv]["groups"][g]) for lv in levels) + " |")
    if len(s["per_category"]) > 1:
        for c in s["per_category"]:
            lines.append(f"| {c} | " + " | ".join(f(s["levels"][lv]["per_category"][c]) for lv in levels) + " |")
    return lines


def plot_aggregate(agg: dict[str, Any], path: Path) -> None:
    plt = _plt()
    split = "gen" if "gen" in agg["splits"] else max(agg["splits"], key=lambda s: len(agg["splits"][s]["per_category"]))
    s = agg["splits"][split]
    rows = [("overall", s["overall"])] + list(s["groups"].items()) + list(s["per_category"].items())
    names = [r[0] for r in rows]
    means = [r[1]["mean"] or 0 for r in rows]
    err = [[m - (r[1]["ci_low"] if r[1]["ci_low"] is not None else m) for m, r in zip(means, rows)],
           [(r[1]["ci_high"] if r[1]["ci_high"] is not None else m) - m for m, r in zip(means, rows)]]
    red = highlighted(s)
    colors = ["black"] + ["tab:gray"] * len(s["groups"]) + [
        "tab:red" if c in red else "tab:blue" for c in s["per_category"]]
    fig, ax = plt.subplots(figsize=(max(6, 0.35 * len(rows) + 2), 4.5))
    ax.bar(range(len(rows)), means, yerr=err, color=colors, capsize=2)
    ax.set_xticks(range(len(rows)), names, rotation=75, ha="right", fontsize=7)
    ax.set_ylim(0, 100)
    ax.set_ylabel(f"{s['primary'].replace('_', ' ')} (%)")
    ax.set_title(f"{agg['dataset']} · {agg['arch']} · {split} · mean of {len(agg['seeds'])} seeds, 95 % bootstrap CI",
                 fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_aggregate(out_dir: Path, results_list: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out_dir = Path(out_dir)
    agg = aggregate(results_list)
    write_json(out_dir / "aggregate.json", agg)
    (out_dir / "aggregate.md").write_text(aggregate_markdown(agg), encoding="utf-8")
    if agg["splits"]:
        plot_aggregate(agg, out_dir / "aggregate.png")
    return agg


# ---------------------------------------------------------------------------------------------------------
# Model card

# model_cards/ ships inside the package as hf_recogs.model_cards (see pyproject's package-dir).
TEMPLATE = Path(str(resources.files("hf_recogs.model_cards") / "template.md"))


def _citation_keys(dataset: str) -> list[str]:
    from .registry import get_config

    try:
        return list(get_config(dataset).citations)
    except ValueError:  # a dataset outside our catalogue: its card cites nothing of ours
        return []


def _results_table(results: dict[str, Any]) -> str:
    levels = next((sygns_levels(s) for s in results["splits"].values() if sygns_levels(s)), ())
    if levels:
        return _sygns_results_table(results, levels)
    # SEM columns only for runs scored by SEM: a SCAN card has exact match alone
    scored_by_sem = any(s.get("sem_match") is not None for s in results["splits"].values())
    keys = ["sem_match", "exact_match"] if scored_by_sem else ["exact_match"]
    names = {"sem_match": "SEM (%)", "exact_match": "exact match (%)"}
    lines = ["| split | category | n | " + " | ".join(names[k] for k in keys) + " |",
             "|---|---|---|" + "---|" * len(keys)]

    def row(split, name, scores):
        return f"| {split} | {name} | {scores['n']} | " + " | ".join(_pct(scores.get(k)) for k in keys) + " |"

    for split, s in results["splits"].items():
        lines.append(row(split, "**all**", s))
        for g, gs in s.get("groups", {}).items():
            lines.append(row(split, f"*{g}*", gs))
        if len(s["per_category"]) > 1:
            for c, cs in s["per_category"].items():
                lines.append(row(split, c, cs))
    return "\n".join(lines)


def _sygns_results_table(results: dict[str, Any], levels: tuple[str, ...]) -> str:
    """Exact match and the SyGNS paper's levels (hf_recogs ``sygns_match`` metric) per split, group, category."""
    lines = ["| split | category | n | exact match (%) | " + " | ".join(f"{SYGNS_LABELS[lv]} (%)" for lv in levels)
             + " |", "|---|---|---|---|" + "---|" * len(levels)]

    def row(split, name, scores):
        cells = [_pct(scores.get("exact_match"))] + [_pct(scores.get(lv)) for lv in levels]
        return f"| {split} | {name} | {scores['n']} | " + " | ".join(cells) + " |"

    for split, s in results["splits"].items():
        lines.append(row(split, "**all**", s))
        for g, gs in s.get("groups", {}).items():
            lines.append(row(split, f"*{g}*", gs))
        if len(s["per_category"]) > 1:
            for c, cs in s["per_category"].items():
                lines.append(row(split, c, cs))
    note = ("\n\nG⇒P / G⇐P / G⇔P: gold entails prediction / the converse / both (z3, deterministic budget; "
            "undecided pairs count as not entailed and are listed); up/down F1: polarity of content words; "
            "COUNTER: exact optimum of DRS clause matching. See the `sygns_match` metric card of hf_recogs.")
    return "\n".join(lines) + note


def _partial_run_warning(results: dict[str, Any]) -> str:
    """A loud line for cards of runs on a subset of the data (smoke tests, quick checks): their scores are not
    results."""
    hp = results.get("hyperparameters", {})
    parts = []
    if hp.get("max_train_samples"):
        parts.append(f"trained on {hp['max_train_samples']} rows only")
    if hp.get("max_eval_samples"):
        parts.append(f"scored on {hp['max_eval_samples']} rows per split only")
    if not parts:
        return ""
    return (f"\n\n> **A smoke / partial run, not a result:** {' and '.join(parts)}. Its scores say that the "
            "pipeline works, not how well the model generalises.")


# Options of a recorded train.py command that say where and how one machine ran it, not what was trained:
# the card's reproduce command leaves them out (the defaults work anywhere) and names the seed itself. The
# decoding batch is sized to the machine's memory (512 on a GPU) and changes no result; TF32 matmuls exist only
# on recent NVIDIA GPUs (transformers refuses --tf32 true elsewhere), so the card states them instead.
RUN_LOCAL_OPTIONS = {"output_dir", "cpu_threads", "resume_from_checkpoint", "seeds", "overwrite_output_dir",
                     "per_device_eval_batch_size", "disable_tqdm", "tf32"}


def reproduce_command(results: dict[str, Any]) -> str:
    """The command a reader copies to train this seed again, from the command ``train.py`` recorded: the config
    from the repository's ``configs/`` (runs may have used a copy of the code elsewhere), the options that change
    the experiment, and ``--seeds <seed>``; paths and thread counts of the machine that ran it are dropped."""
    import shlex

    if not results.get("command"):
        return "accelerate launch train.py configs/<name>.yaml"
    config, options = _recorded_arguments(results)
    kept: list[str] = []
    if config:
        kept.append(f"configs/{config.name}" if config.parent.name == "configs" else str(config))
    kept += ["--seeds", str(results["seed"])]
    for name, _, written in options:
        if name not in RUN_LOCAL_OPTIONS:
            kept += written
    return "accelerate launch train.py " + " ".join(shlex.quote(w) for w in kept)


def _recorded_arguments(results: dict[str, Any]) -> tuple[Path | None, list[tuple[str, list[str], list[str]]]]:
    """The config and the options of the recorded ``train.py`` command: each option as (name, values, the words
    as written), from ``--name v [v ...]``, ``--name=v`` or a ``name=v`` override."""
    import shlex

    words = shlex.split(results.get("command") or "")
    args = words[words.index("train.py") + 1:] if "train.py" in words else words
    config = Path(args.pop(0)) if args and args[0].endswith((".yaml", ".yml")) else None
    options = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word.startswith("--"):
            name, inline, value = word[2:].partition("=")
            values, written = ([value] if inline else []), [word]
            while not inline and i < len(args) and not args[i].startswith("--") and not _is_override(args[i]):
                values.append(args[i])
                written.append(args[i])
                i += 1
        else:
            name, _, value = word.partition("=")
            values, written = [value], [word]
        options.append((name.strip(), values, written))
    return config, options


def _accelerator(results: dict[str, Any]) -> str | None:
    """The GPU a run trained on, and its matmul precision where that was not plain fp32; None for a CPU run."""
    gpu = (results.get("environment") or {}).get("cuda")
    tf32 = (results.get("hyperparameters") or {}).get("tf32")
    if tf32 is None:  # recorded from the command before results.json kept tf32
        given = [values for name, values, _ in _recorded_arguments(results)[1] if name == "tf32"]
        tf32 = bool(given) and " ".join(given[-1]).lower() in ("true", "1", "yes")
    return f"{gpu}, TF32 matmuls" if gpu and tf32 else gpu


def _is_override(word: str) -> bool:
    """train.py's own rule for a key=value override (``training.parse_args``), wherever it stands."""
    return "=" in word and not word.startswith("-")


def _with_group_display(results: dict[str, Any]) -> dict[str, Any]:
    """``results`` whose split summaries all say how their groups display: summaries written before that was
    recorded take it from the dataset's registered config (a re-rendered card keeps the groups' explanation)."""
    missing = [name for name, s in results["splits"].items() if s.get("groups") and "group_display" not in s]
    if not missing:
        return results
    from .registry import get_config

    try:
        groups = get_config(results["dataset"]).category_groups
    except ValueError:  # a dataset this version does not register
        return results
    if groups is None:
        return results
    splits = {name: ({**s, "group_display": groups.display()} if name in missing else s)
              for name, s in results["splits"].items()}
    return {**results, "splits": splits}


def render_model_card(results: dict[str, Any], repo_id: str | None = None, template_path: Path | None = None,
                      example: str | None = None):
    """A ``huggingface_hub.ModelCard`` for one trained seed, with ``model-index`` results per split; ``example``
    is the input of its usage snippet (default: a COGS sentence)."""
    from huggingface_hub import EvalResult, ModelCard, ModelCardData

    from .citations import CITATIONS

    results = _with_group_display(results)
    dataset = results["dataset"]
    keys = [k for k in _citation_keys(dataset) if k in CITATIONS]
    eval_results = []

    def add(split, scores, metrics, part=""):
        for metric in metrics:
            if scores.get(metric) is None:
                continue
            label = {"sem_match": "Semantic exact match", "exact_match": "Exact match"}.get(
                metric, f"SyGNS {SYGNS_LABELS.get(metric, metric)}")
            eval_results.append(EvalResult(
                task_type="text2text-generation", task_name="Semantic parsing",
                dataset_type="hf_recogs", dataset_name=f"hf_recogs {dataset}", dataset_config=dataset,
                dataset_split=split, metric_type=metric, metric_name=f"{label} ({part})" if part else label,
                metric_value=round(100 * scores[metric], 2),
            ))

    for split, s in results["splits"].items():
        add(split, s, ("sem_match", "exact_match", *sygns_levels(s)[:1]))
    # the generalization split's groups and categories, under the split's primary metric
    split = next((name for name in ("gen", "test") if name in results["splits"]), None)
    if split is not None:
        s = results["splits"][split]
        for group, scores in s.get("groups", {}).items():
            add(split, scores, (s["primary"],), group)
        if len(s.get("per_category", {})) > 1:
            for category, scores in s["per_category"].items():
                add(split, scores, (s["primary"],), category)
    name = repo_id or f"{dataset}-{results['arch']}-seed{results['seed']}"
    card_data = ModelCardData(
        language="en", license="mit", library_name="transformers", tags=["hf_recogs", "compositional-generalization",
                                                                     "semantic-parsing", dataset],
        model_name=name, eval_results=eval_results or None, pipeline_tag="text2text-generation",
    )
    hp = results.get("hyperparameters", {})
    hp_table = "\n".join(["| hyper-parameter | value |", "|---|---|"] + [
        f"| {k} | `{json.dumps(v) if isinstance(v, (dict, list)) else v}` |" for k, v in hp.items()])
    template = Path(template_path) if template_path else TEMPLATE
    kwargs = dict(
        model_name=name,
        repo_id=repo_id or "<user>/<repo>",
        dataset=dataset,
        arch=results["arch"],
        seed=results["seed"],
        metric=results["metric"],
        num_parameters=f"{results.get('num_parameters', 0):,}",
        vocab_size=results.get("vocab_size"),
        train=results.get("train", {}),
        hyperparameters_table=hp_table,
        results_table=_results_table(results),
        groups_explanation=" ".join(dict.fromkeys(
            e for e in (group_display(sp)["explanation"] for sp in results["splits"].values()) if e)),
        summary=(f"A `{results['arch']}` sequence-to-sequence model trained from scratch on the hf_recogs "
                 f"`{dataset}` config (seed {results['seed']})." + _partial_run_warning(results)),
        reproduce=reproduce_command(results),
        # a GPU run's wall time is GPU time: its CPU thread count says nothing of its cost
        accelerator=_accelerator(results),
        commit=(results.get("environment") or {}).get("git_commit"),
        commit_dirty=(results.get("environment") or {}).get("git_dirty"),
        citations=("\n\n".join(CITATIONS[k] for k in keys) if keys else "") or "see hf_recogs/citations.py",
        has_plot=True,
        example=json.dumps(example if isinstance(example, str) and example else "A cat smiled ."),
    )
    return ModelCard.from_template(card_data, template_path=str(template), **kwargs)


def example_input(folder: Path) -> str | None:
    """The first input of the first predictions file in ``folder`` (plain or gzipped): the usage example of the
    model card, a sentence of the model's own dataset."""
    import gzip

    for path in sorted(Path(folder).glob("predictions_*.jsonl*")):
        with (gzip.open if path.suffix == ".gz" else open)(path, "rt", encoding="utf-8") as f:
            line = f.readline()
        if line.strip():
            return json.loads(line).get("input")
    return None


def write_model_card(folder: Path, results: dict[str, Any], repo_id: str | None = None) -> Path:
    card = render_model_card(results, repo_id=repo_id, example=example_input(folder))
    path = Path(folder) / "README.md"
    card.save(str(path))
    return path
