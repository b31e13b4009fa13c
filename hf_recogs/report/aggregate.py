"""Aggregates over the seeds of one set-up: mean and bootstrapped 95 % CI (in percent) of every split,
group, category and SyGNS level, as ``aggregate.json``, ``aggregate.md`` and ``aggregate.png``.

Read from the seeds' ``results.json`` alone, so seeds trained by separate commands aggregate the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..scoring import SYGNS_LABELS, group_display, percent_text, sygns_levels, write_json
from .plots import plot_aggregate


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
    out: dict[str, Any] = {
        "dataset": results_list[0]["dataset"],
        "arch": results_list[0]["arch"],
        "metric": results_list[0]["metric"],
        "seeds": [r["seed"] for r in results_list],
        # cpu_bf16: auto follows the CPU, so seeds of one set-up trained on different machines may differ here
        "precision": {str(r["seed"]): _precision(r) for r in results_list},
        "ci": "percentile bootstrap over runs, 10,000 resamples, 95 %",
        "splits": {},
    }
    split_names = []
    for r in results_list:
        split_names += [s for s in r["splits"] if s not in split_names]
    for split in split_names:
        out["splits"][split] = _aggregate_split([r["splits"].get(split) for r in results_list])
    return out


def _aggregate_split(present: list[dict[str, Any] | None]) -> dict[str, Any]:
    """One split over the seeds (None where a seed did not score it)."""
    key = next(p["primary"] for p in present if p)

    def pct(d, k=key):
        return None if d is None or d.get(k) is None else 100 * d[k]

    cats, groups = [], []
    for p in present:
        if p:
            cats += [c for c in p["per_category"] if c not in cats]
            groups += [g for g in p.get("groups", {}) if g not in groups]
    out = {
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
        out["overall_exact_match"] = _stats([pct(p, "exact_match") for p in present])
    levels = sygns_levels(next((p for p in present if p), None))
    if levels:  # SyGNS: every level per split, group and category, like the primary score
        out["levels"] = {lv: {
            "overall": _stats([pct(p, lv) for p in present]),
            "groups": {g: _stats([pct(p and p.get("groups", {}).get(g), lv) for p in present]) for g in groups},
            "per_category": {c: _stats([pct(p and p["per_category"].get(c), lv) for p in present]) for c in cats},
        } for lv in levels}
    return out


def _fmt(stats: dict[str, Any]) -> tuple[str, str, str]:
    f = percent_text
    return f(stats["mean"]), f"[{f(stats['ci_low'])}, {f(stats['ci_high'])}]", ", ".join(f(v) for v in stats["values"])


def aggregate_markdown(agg: dict[str, Any]) -> str:
    """``aggregate.md``: the aggregate as tables a reader of the repository can read without tools."""
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


def write_aggregate(out_dir: Path, results_list: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Write ``aggregate.json``, ``aggregate.md`` and ``aggregate.png`` of the seeds to ``out_dir``."""
    out_dir = Path(out_dir)
    agg = aggregate(results_list)
    write_json(out_dir / "aggregate.json", agg)
    (out_dir / "aggregate.md").write_text(aggregate_markdown(agg), encoding="utf-8")
    if agg["splits"]:
        plot_aggregate(agg, out_dir / "aggregate.png")
    return agg
