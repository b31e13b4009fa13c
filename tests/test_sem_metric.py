"""The ``sem_match`` evaluate metric: loading by path and by bare name from another directory (offline),
outputs, per-category scores, streaming, and one-line errors for bad input. evaluate is imported lazily
(7–9 s), once for this module."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hf_recogs.evaluate_integration import SEM_MATCH_PATH, install_evaluate_hook

ROOT = Path(__file__).resolve().parents[1]
GOLD = "* cat ( 1 ) ; sleep ( 2 ) AND agent ( 2 , 1 )"
PREDS = [
    "sleep ( 5 ) AND agent ( 5 , 3 ) AND * cat ( 3 )",  # renamed and reordered: SEM yes, EM no
    GOLD,  # identical: both
    "* cat ( 1 ) ; sleep ( 2 ) AND agent ( 1 , 2 )",  # swapped arguments: neither
    "",  # empty: neither
]


@pytest.fixture(scope="module")
def evaluate():
    return pytest.importorskip("evaluate")


def test_metric_path_is_the_metric_dir():
    assert Path(SEM_MATCH_PATH).is_absolute()
    assert (Path(SEM_MATCH_PATH) / "sem_match.py").is_file()
    assert (Path(SEM_MATCH_PATH) / "README.md").is_file()


def test_load_by_path_from_another_cwd(evaluate, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    metric = evaluate.load(SEM_MATCH_PATH)
    out = metric.compute(predictions=PREDS, references=[GOLD] * 4)
    assert out == {"sem_match": 0.5, "exact_match": 0.25, "n": 4, "undecided": 0}
    assert evaluate.load(str(ROOT / "metrics" / "sem_match")).compute(predictions=[GOLD], references=[GOLD]) == {
        "sem_match": 1.0, "exact_match": 1.0, "n": 1, "undecided": 0}


def test_load_by_bare_name_after_hook(evaluate, tmp_path, monkeypatch):
    install_evaluate_hook()
    install_evaluate_hook()  # idempotent
    monkeypatch.chdir(tmp_path)
    metric = evaluate.load("sem_match")
    assert metric.compute(predictions=PREDS[:1], references=[GOLD])["sem_match"] == 1.0
    import evaluate.evaluation_suite as suite
    import evaluate.inspect as inspect_module
    from evaluate import loading

    assert getattr(loading.evaluation_module_factory, "_hf_recogs_wrapped", False)
    assert inspect_module.evaluation_module_factory is loading.evaluation_module_factory
    assert suite.evaluation_module_factory is loading.evaluation_module_factory


def test_local_sem_match_dir_in_cwd_wins(evaluate, tmp_path, monkeypatch):
    """evaluate's own rule (a ./sem_match/sem_match.py in the CWD) keeps priority over ours."""
    install_evaluate_hook()
    local = tmp_path / "sem_match"
    local.mkdir()
    script = (Path(SEM_MATCH_PATH) / "sem_match.py").read_text()
    marked = script.replace('"n": summary["n"],', '"n": summary["n"], "local": True,')
    assert marked != script
    local.joinpath("sem_match.py").write_text(marked)
    monkeypatch.chdir(tmp_path)
    assert evaluate.load("sem_match").compute(predictions=[GOLD], references=[GOLD])["local"] is True


def test_per_category(evaluate):
    metric = evaluate.load(SEM_MATCH_PATH)
    out = metric.compute(predictions=PREDS, references=[GOLD] * 4, categories=["b", "a", "b", "a"])
    assert out["sem_match"] == 0.5 and out["n"] == 4
    assert out["per_category"] == {
        "a": {"sem_match": 0.5, "exact_match": 0.5, "n": 2},
        "b": {"sem_match": 0.5, "exact_match": 0.0, "n": 2},
    }
    assert list(out["per_category"]) == ["a", "b"]


def test_streaming_and_fmt(evaluate):
    metric = evaluate.load(SEM_MATCH_PATH)
    metric.add_batch(predictions=PREDS[:2], references=[GOLD] * 2)
    metric.add(prediction=PREDS[2], reference=GOLD)
    assert metric.compute() == {"sem_match": 2 / 3, "exact_match": 1 / 3, "n": 3, "undecided": 0}
    out = metric.compute(predictions=[GOLD], references=[GOLD], fmt="cogs")  # integers are malformed in COGS
    assert out["sem_match"] == 0.0 and out["exact_match"] == 1.0


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(predictions=["a"], references=["a", "b"]), "2 references for 1 predictions"),
        (dict(predictions=["a", None], references=["a", "b"]), r"predictions\[1\] is NoneType"),
        (dict(predictions=["a"], references=[1]), r"references\[0\] is int"),
        (dict(predictions="abc", references=["a"]), "must be a sequence of strings"),
        (dict(predictions=["a"], references=["a"], categories=["x", "y"]), "2 categories for 1 predictions"),
        (dict(predictions=["a"], references=["a"], categories=[3]), r"categories\[0\] is int"),
    ],
)
def test_bad_input_is_a_one_line_value_error(evaluate, kwargs, message):
    metric = evaluate.load(SEM_MATCH_PATH)
    with pytest.raises(ValueError, match=message) as err:
        metric.compute(**kwargs)
    assert "\n" not in str(err.value)
    # the module is still usable afterwards
    assert metric.compute(predictions=[GOLD], references=[GOLD])["sem_match"] == 1.0


def test_import_hf_recogs_does_not_import_evaluate():
    """The hook is lazy: importing the integration module leaves evaluate unimported."""
    code = (
        "import sys, hf_recogs.evaluate_integration as e; e.install_evaluate_hook(); "
        "print('evaluate' in sys.modules, 'evaluate.loading' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_bare_name_in_a_fresh_process_with_the_hook_installed_first(tmp_path):
    """The order the package uses: hook first (no evaluate import), then `import evaluate`, then load by
    bare name from a directory without a sem_match folder, offline (the environment comes from conftest)."""
    code = (
        "import hf_recogs.evaluate_integration as e; e.install_evaluate_hook(); import evaluate; "
        "print(evaluate.load('sem_match').compute(predictions=['cat ( 2 )'], references=['cat ( 1 )']))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "'sem_match': 1.0" in out.stdout


def test_any_sequence_of_strings_is_accepted(evaluate):
    """A datasets Column, a numpy array, a tuple or a generator give the same scores as lists."""
    import datasets
    import numpy as np

    metric = evaluate.load(SEM_MATCH_PATH)
    preds, golds, cats = [GOLD, "cat ( 1 )"], [GOLD, GOLD], ["a", "b"]
    expected = metric.compute(predictions=preds, references=golds, categories=cats)
    ds = datasets.Dataset.from_dict({"p": preds, "g": golds, "c": cats})
    assert not isinstance(ds["g"], list)  # datasets 5 returns a Column
    for p, g, c in [(ds["p"], ds["g"], ds["c"]), (np.array(preds), np.array(golds), np.array(cats)),
                    (tuple(preds), tuple(golds), tuple(cats)), (iter(preds), (g for g in golds), cats)]:
        assert metric.compute(predictions=p, references=g, categories=c) == expected


def test_card_and_code_agree_on_the_leading_separator():
    """The card's one exception to 'an empty conjunct never matches' is what the code does."""
    from hf_recogs.logical_forms import sem_match

    card = (Path(SEM_MATCH_PATH) / "README.md").read_text()
    assert "single\n  leading `;`" in card or "single leading `;`" in card
    assert sem_match("; cat ( 1 ) AND run ( 2 )", "cat ( 1 ) AND run ( 2 )")
    for bad in ("; ; cat ( 1 ) AND run ( 2 )", "cat ( 1 ) ; ; run ( 2 )", "cat ( 1 ) AND run ( 2 ) ;"):
        assert not sem_match(bad, bad)
