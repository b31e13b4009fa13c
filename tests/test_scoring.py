"""hf_recogs.scoring, the layer under every score and report: one rule for the headline split, and an import
light enough for `hf-recogs score` and the `evaluate` metrics."""

import json
import subprocess
import sys

import pytest


@pytest.mark.parametrize("splits, expected", [
    (["validation", "test", "gen"], "gen"),
    (["validation", "test"], "test"),
    (["train", "validation"], "validation"),
    (["dev", "other"], "dev"),
    ([], None),
])
def test_headline_split_is_gen_then_test_then_validation_then_the_first(splits, expected):
    from hf_recogs.scoring import headline_split

    assert headline_split(splits) == expected
    assert headline_split({name: {} for name in splits}) == expected  # a results.json "splits" dict too


def test_scoring_and_report_import_nothing_heavy():
    code = ("import json, sys\nimport hf_recogs.scoring, hf_recogs.report, hf_recogs.publish.results_folder\n"
            "print(json.dumps([m for m in ('torch', 'transformers', 'matplotlib', 'numpy') if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout) == []


def test_every_report_follows_the_headline_split(tmp_path):
    """A run scored on validation and test only: the card's per-category model-index entries and the median
    seed both come from test, as the plots do."""
    from hf_recogs.publish.results_folder import median_seed
    from hf_recogs.report import render_model_card
    from hf_recogs.scoring import summarize

    def record(category, exact):
        return {"category": category, "exact": exact, "sem": None}

    def run(seed, test_right):
        test = summarize([record("a", test_right), record("b", False)], "exact")
        validation = summarize([record("a", True), record("b", True)], "exact")
        return {"dataset": "data_files", "arch": "lstm", "seed": seed, "metric": "exact",
                "splits": {"validation": validation, "test": test}}

    import yaml

    card = str(render_model_card(run(1, True)))
    results = yaml.safe_load(card.split("---\n")[1])["model-index"][0]["results"]
    parts = {(r["dataset"]["split"], m["name"]) for r in results for m in r["metrics"] if "(" in m["name"]}
    assert parts == {("test", "Exact match (a)"), ("test", "Exact match (b)")}
    assert median_seed({1: run(1, True), 2: run(2, False), 3: run(3, True)}) == 1
