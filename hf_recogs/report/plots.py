"""The plots of a run and of an aggregate over seeds, drawn from ``results.json`` / ``aggregate.json`` alone.

matplotlib is imported when a plot is drawn, never at import, so reading this package costs nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..scoring import (
    SYGNS_LABELS,
    fraction_as_percent,
    group_display,
    headline_split,
    highlighted,
    sygns_levels,
)


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def plot_per_category(results: dict[str, Any], path: Path) -> None:
    """Bar chart of the primary metric per category of the headline split (``scoring.headline_split``)."""
    plt = _plt()
    split = headline_split(results["splits"])
    if split is None:
        fig, ax = plt.subplots(figsize=(6, 2))
        ax.text(0.5, 0.5, "no evaluation splits", ha="center")
        ax.axis("off")
    else:
        fig = _draw_per_category(plt, results, split)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _draw_per_category(plt, results: dict[str, Any], split: str):
    s = results["splits"][split]
    key = s["primary"]
    cats = list(s["per_category"])
    values = [100 * (s["per_category"][c][key] or 0) for c in cats]
    red = highlighted(s)
    colors = ["tab:red" if c in red else "tab:blue" for c in cats]
    fig, ax = plt.subplots(figsize=(max(6, 0.35 * len(cats) + 2), 6.5))
    headline = sygns_levels(s)[:1]
    if headline:  # SyGNS: the paper's headline level (G⇔P or COUNTER F1) beside exact match
        lv = headline[0]
        second = [100 * (s["per_category"][c].get(lv) or 0) for c in cats]
        ax.bar([i + 0.2 for i in range(len(cats))], second, width=0.4, color="tab:orange", label=SYGNS_LABELS[lv])
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
    others = ", ".join(f"{sp} {fraction_as_percent(results['splits'][sp][key])}" for sp in results["splits"])
    ax.set_title(f"{results['dataset']} · {results['arch']} · seed {results['seed']} · {split} per category\n"
                 f"overall: {others}", fontsize=8)
    return fig


def plot_curves(results: dict[str, Any], path: Path) -> None:
    """Learning curves of a run: training loss and source gap (left), curve-sample scores per split and
    group (right), against the step. Written only when the run logged them."""
    train = results.get("train") or {}
    curves, losses = train.get("curves") or [], train.get("loss_history") or []
    gaps = train.get("source_gap_history") or []
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
    keys = sorted({k for h in curves for k in h if k.endswith(("_sem_match", "_exact_match", "_roc_auc"))})
    for key in keys:
        points = [(h["step"], 100 * h[key]) for h in curves if h.get(key) is not None]
        label = key.removeprefix("eval_").removesuffix("_sem_match").removesuffix("_exact_match")
        label = label.removesuffix("_roc_auc") + (" (ROC AUC)" if key.endswith("_roc_auc") else "")
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


def plot_aggregate(agg: dict[str, Any], path: Path) -> None:
    """Mean and 95 % CI over seeds of the headline split: overall, groups, then categories."""
    plt = _plt()
    split = headline_split(agg["splits"])
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
