"""Compute to each level (hf_recogs.report.compute): time spread over a run's parts by hand, the first curve
evaluation at or above each level, the table's cut after a level no seed reached, and the published baseline's
figures as docs/TRAINING.md gives them (computed there by an earlier script)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hf_recogs.report.compute import cell, compute_table, levels_reached, time_until

ROOT = Path(__file__).resolve().parents[1]
# 100 steps on one thread in an hour, then 100 steps on two threads in half an hour
PARTS = [{"from_step": 0, "to_step": 100, "wall_s": 3600, "threads": 1, "processes": 1},
         {"from_step": 100, "to_step": 200, "wall_s": 1800, "threads": 2, "processes": 1}]
CURVES = [{"step": 50, "epoch": 1.0, "eval_validation_sem_match": 0.5, "eval_gen_structural_sem_match": 0.0},
          {"step": 100, "epoch": 2.0, "eval_validation_sem_match": 0.95, "eval_gen_structural_sem_match": 0.05},
          {"step": 150, "epoch": 3.0, "eval_validation_sem_match": 0.995, "eval_gen_structural_sem_match": 0.15},
          {"step": 200, "epoch": 4.0, "eval_validation_sem_match": 0.99, "eval_gen_structural_sem_match": 0.1}]


def record(seed=1, cuda=None):
    return {"seed": seed, "environment": {"cuda": cuda},
            "train": {"curves": CURVES, "time": {"parts": PARTS}}}


def test_time_is_spread_evenly_over_each_part():
    assert time_until(PARTS, 50) == 1800
    assert time_until(PARTS, 150) == 3600 + 1800 * 2 / 2
    assert time_until(PARTS, 150, per_thread=False) == 3600 + 900
    assert time_until(PARTS, 500) == 3600 + 3600
    assert time_until([{"from_step": 0, "to_step": 10, "wall_s": None}], 5) is None


def test_the_first_evaluation_at_or_above_each_level():
    reached = {(r.curve, r.level): r for r in levels_reached(record())}
    assert reached[("validation sample", 0.9)][2:] == (2.0, 100, 3600)
    assert reached[("validation sample", 0.99)][2:] == (3.0, 150, 5400)  # the first at or above, not the last
    assert reached[("gen sample, structural rows", 0.1)].step == 150
    assert reached[("gen sample, structural rows", 0.2)].step is None
    assert ("gen sample, lexical rows", 0.8) not in reached  # no such curve recorded
    assert cell(reached[("validation sample", 0.99)], on_gpu=False) == "epoch 3, 1.50 h"
    on_gpu = {(r.curve, r.level): r for r in levels_reached(record(cuda="H100"))}
    assert cell(on_gpu[("validation sample", 0.9)], on_gpu=True) == "epoch 2, 60.0 GPU min"
    assert cell(reached[("gen sample, structural rows", 0.2)], on_gpu=False) == "not reached"


def test_the_table_stops_each_curve_at_the_first_level_no_seed_reached():
    lines = compute_table([record(1), record(2)])
    assert lines[0] == "| curve, level | seed 1 | seed 2 |"
    assert [line.split(" |")[0] for line in lines[2:]] == [
        "| validation sample ≥ 90 %", "| validation sample ≥ 99 %", "| gen sample, structural rows ≥ 10 %",
        "| gen sample, structural rows ≥ 20 %"]
    assert lines[-1].endswith("| not reached | not reached |")
    assert compute_table([{"seed": 1, "train": {}}]) == []


@pytest.mark.parametrize("level, hours", [(("validation sample", 0.9), 0.66), (("validation sample", 0.99), 1.82),
                                          (("gen sample, lexical rows", 0.8), 1.35),
                                          (("gen sample, lexical rows", 0.9), 1.59)])
def test_the_published_baseline_seed_66_as_the_docs_give_it(level, hours):
    results = json.loads((ROOT / "results" / "recogs_pos_transformer_fast" / "seed_66" / "results.json").read_text())
    reached = {(r.curve, r.level): r for r in levels_reached(results)}
    assert round(reached[level].seconds / 3600, 2) == hours
