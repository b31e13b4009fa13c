"""Reports of training runs, read from their results alone (the ``results.json`` dicts): plots, aggregates
over seeds and the model card. Scoring itself is ``hf_recogs.scoring``; nothing here trains or decodes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .aggregate import aggregate, aggregate_markdown, bootstrap_ci, write_aggregate
from .card import example_input, render_model_card, reproduce_command, write_model_card
from .plots import plot_aggregate, plot_curves, plot_per_category

__all__ = ["aggregate", "aggregate_markdown", "bootstrap_ci", "example_input", "plot_aggregate", "plot_curves",
           "plot_per_category", "render_model_card", "reproduce_command", "write_aggregate", "write_model_card",
           "write_run_report"]


def write_run_report(seed_dir: Path, results: dict[str, Any], training: bool) -> None:
    """The files of one finished seed beside its ``results.json``: ``per_category.png``, and for a run that
    trained (not one that only evaluated a given model) ``curves.png`` and the model card ``README.md``."""
    seed_dir = Path(seed_dir)
    plot_per_category(results, seed_dir / "per_category.png")
    if training:
        plot_curves(results, seed_dir / "curves.png")
        write_model_card(seed_dir, results)
