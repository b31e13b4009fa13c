"""Compute to each level, from a run record (``results.json``) alone: for each learning curve, the first curve
evaluation at or above each level, and the training time spent until then (CPU thread-hours; GPU minutes for a
run on a GPU).

A run's time is recorded per part (the steps between two resumes, with its wall-clock, threads and processes);
within a part it is spread evenly over the steps, curve evaluations included, since the clock runs through them.
The curves are scored on fixed samples of the splits (``curve_samples`` rows), so a level reached on a curve is a
planning figure, not a result; never a reason to pick a checkpoint.
"""

from __future__ import annotations

from typing import Any, NamedTuple

# (curve key in the record, what it scores, its levels)
CURVE_LEVELS = (
    ("eval_validation_sem_match", "validation sample", (0.9, 0.99)),
    ("eval_gen_lexical_sem_match", "gen sample, lexical rows", (0.8, 0.9)),
    ("eval_gen_structural_sem_match", "gen sample, structural rows", (0.1, 0.2, 0.3, 0.4)),
)


class Reached(NamedTuple):
    curve: str
    level: float
    epoch: float | None  # None: the level was not reached
    step: int | None
    seconds: float | None  # thread-seconds on a CPU, wall seconds on a GPU; None where the time is unknown


def time_until(parts: list[dict[str, Any]], step: int, per_thread: bool = True) -> float | None:
    """The training time of the steps up to ``step``: each part's wall-clock (times threads and processes with
    ``per_thread``) spread evenly over its steps. None when a part that counts has no recorded time."""
    total = 0.0
    for part in parts:
        start, end = part["from_step"], part["to_step"]
        if step <= start or end <= start:
            continue
        if part.get("wall_s") is None:
            return None
        seconds = part["wall_s"] * ((part.get("threads") or 1) * (part.get("processes") or 1) if per_thread else 1)
        total += seconds * (min(step, end) - start) / (end - start)
    return total


def levels_reached(results: dict[str, Any]) -> list[Reached]:
    """For every curve of :data:`CURVE_LEVELS` the record has, each level: the first evaluation at or above it."""
    train = results.get("train") or {}
    curves = sorted(train.get("curves") or [], key=lambda c: c["step"])
    parts = (train.get("time") or {}).get("parts") or []
    on_gpu = bool((results.get("environment") or {}).get("cuda"))
    out = []
    for key, label, levels in CURVE_LEVELS:
        points = [c for c in curves if c.get(key) is not None]
        if not points:
            continue
        for level in levels:
            first = next((c for c in points if c[key] >= level - 1e-9), None)
            if first is None:
                out.append(Reached(label, level, None, None, None))
                continue
            seconds = time_until(parts, first["step"], per_thread=not on_gpu) if parts else None
            out.append(Reached(label, level, first.get("epoch"), first["step"], seconds))
    return out


def cell(reached: Reached, on_gpu: bool) -> str:
    """``epoch 8, 1.25 h`` (``2.9 GPU min``), or ``not reached``."""
    if reached.step is None:
        return "not reached"
    where = f"epoch {reached.epoch:g}" if reached.epoch is not None else f"step {reached.step}"
    if reached.seconds is None:
        return where
    return f"{where}, {reached.seconds / 60:.1f} GPU min" if on_gpu else f"{where}, {reached.seconds / 3600:.2f} h"


def compute_table(seeds: list[dict[str, Any]]) -> list[str]:
    """Markdown rows: one per (curve, level), one column per seed, up to the first level of each curve that no
    seed reached; empty when no seed has these curves."""
    per_seed = [levels_reached(r) for r in seeds]
    if not any(per_seed):
        return []
    rows = [(reached.curve, reached.level) for reached in next(p for p in per_seed if p)]
    head = "| curve, level | " + " | ".join(f"seed {r['seed']}" for r in seeds) + " |"
    lines = [head, "|---" * (len(seeds) + 1) + "|"]
    missed: set[str] = set()  # curves with a level no seed reached: their higher levels are left out
    for curve, level in rows:
        if curve in missed:
            continue
        cells = []
        for r, reached in zip(seeds, per_seed, strict=True):
            match = next((x for x in reached if (x.curve, x.level) == (curve, level)), None)
            on_gpu = bool((r.get("environment") or {}).get("cuda"))
            cells.append(cell(match, on_gpu) if match else "no curve")
        lines.append(f"| {curve} ≥ {100 * level:g} % | " + " | ".join(cells) + " |")
        if all(c in ("not reached", "no curve") for c in cells):
            missed.add(curve)
    return lines
