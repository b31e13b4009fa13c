"""``oversample``: training rows of a kind the benchmark declares (DatasetConfig.row_kinds) are repeated in every
epoch; unknown kinds and bad counts are one-line config errors."""

import datasets
import pytest

from hf_recogs.benchmarks.cogs import ROW_KINDS
from hf_recogs.train import ConfigError, parse_args
from hf_recogs.train.data import training_rows

ROWS = [
    {"input": "A cat smiled .", "output": "x", "category": "in_distribution"},
    {"input": "Emma said that Liam noticed that a cat smiled .", "output": "x", "category": "in_distribution"},
    {"input": "A cat in a room on a table smiled .", "output": "x", "category": "in_distribution"},
    {"input": "A cat smiled . A dog ran .", "output": "x", "category": "concat"},
    {"input": "Emma said that a cat in a box on a mat smiled .", "output": "x", "category": "concat"},
]


def test_cogs_row_kinds_by_hand():
    assert [ROW_KINDS["nested_2"](r) for r in ROWS] == [False, True, True, False, True]
    assert [ROW_KINDS["concat"](r) for r in ROWS] == [False, False, False, True, True]


def test_rows_repeat_the_most_times_any_of_their_kinds_asks():
    exp, _ = parse_args(["configs/smoke.yaml", "dataset=recogs_pos", "oversample={nested_2: 3, concat: 2}"])
    rows = training_rows(exp, {"train": datasets.Dataset.from_list(ROWS)}, seed=0)
    assert [r["input"] for r in rows] == [ROWS[i]["input"] for i in (0, 1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4)]


@pytest.mark.parametrize(("value", "needle"), [
    ("{deep: 2}", "recogs_pos declares no row kind 'deep' (declared: nested_2, concat)"),
    ("{nested_2: 0}", "nested_2 must repeat a whole number of times (1 or more), got 0"),
    ("{nested_2: 1.5}", "got 1.5"),
])
def test_bad_oversample_is_one_line(value, needle):
    with pytest.raises(ConfigError) as err:
        parse_args(["configs/smoke.yaml", "dataset=recogs_pos", f"oversample={value}"])
    assert needle in str(err.value) and "\n" not in str(err.value)
