"""bench/first_error_probe.py: each step of a ReCOGS_pos form classed by what the gold form writes there."""

import pytest

from bench.first_error_probe import error_kind

GOLD = ("* girl ( 1 ) ; * table ( 4 ) ; nmod . on ( 1 , 4 ) AND prefer ( 5 ) AND agent ( 5 , 1 ) AND "
        "xcomp ( 5 , 7 ) AND walk ( 7 ) AND agent ( 7 , 1 ) </s>").split()


@pytest.mark.parametrize(("step", "kind"), [
    (0, "noun list"), (3, "noun list"), (5, "noun list"), (11, "noun list"),  # `*`, `1`, `;`, the last `;`
    (12, "which conjunct next (gold: an nmod)"),
    (14, "an nmod's preposition"),
    (16, "a conjunct's first index"), (18, "a conjunct's second index"), (19, "other"),  # 1, 4, `)`
    (20, "which conjunct next (gold: another conjunct)"),  # the AND after the nmod
    (21, "which conjunct next (gold: a verb's lemma)"),
    (23, "a verb's own index"),  # prefer ( 5 )
    (26, "which conjunct next (gold: a role)"),
    (30, "a conjunct's second index"),  # agent ( 5 , 1 )
    (40, "which conjunct next (gold: a verb's lemma)"),  # walk
    (42, "a verb's own index"),  # walk ( 7 ), a one-argument conjunct followed by two-argument ones
    (len(GOLD) - 1, "which conjunct next (gold: the end)"),
])
def test_error_kind_by_hand(step, kind):
    assert error_kind(GOLD, step) == kind


def test_a_form_without_a_noun_list():
    gold = "sleep ( 0 ) AND agent ( 0 , 1 ) </s>".split()
    assert error_kind(gold, 0) == "which conjunct next (gold: a verb's lemma)"
    assert error_kind(gold, 2) == "a verb's own index"
    assert error_kind(gold, 7) == "a conjunct's first index"


def test_gold_fed_in_the_runs_own_order(tmp_path):
    from bench.first_error_probe import gold_in_run_order

    gold = "* baby ( 1 ) ; tray ( 4 ) ; nmod . on ( 1 , 4 ) AND scream ( 5 ) AND agent ( 5 , 1 )"
    nmod_last = gold_in_run_order({"hyperparameters": {"target_order": "nmod_last"}}, tmp_path)
    assert nmod_last(gold) == "* baby ( 1 ) ; tray ( 4 ) ; scream ( 5 ) AND agent ( 5 , 1 ) AND nmod . on ( 1 , 4 )"
    assert gold_in_run_order({"hyperparameters": {}}, tmp_path)(gold) == gold
    with pytest.raises(SystemExit, match="arguments_first"):
        gold_in_run_order({"hyperparameters": {"target_order": "arguments_first"}}, tmp_path)
