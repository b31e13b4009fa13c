"""The rules of ReCOGS_pos forms (``hf_recogs.form_rules``) and ``constrained_decoding``: every gold form keeps
them, each rule stops a form at the word that breaks it, and greedy decoding under them keeps the model's own
choice wherever that choice keeps the rules."""

from __future__ import annotations

import gzip
import json

import pytest
from conftest import PUBLISHED_FAST as PUBLISHED

from hf_recogs.form_rules import END, LABEL, RULES_VERSION, Prefix, RuleError, check_targets, first_break

# "A cat on the mat ate the cake ." (positions 0-8) and its gold form, written by hand.
CAT = "A cat on the mat ate the cake ."
CAT_FORM = ("cat ( 1 ) ; * mat ( 4 ) ; * cake ( 7 ) ; nmod . on ( 1 , 4 ) AND eat ( 5 ) AND agent ( 5 , 1 ) "
            "AND theme ( 5 , 7 )")


def _break_word(source: str, form: str) -> str | None:
    k = first_break(source, form)
    words = form.split()
    return None if k is None else (words[k] if k < len(words) else END)


def test_a_gold_form_keeps_every_rule():
    assert first_break(CAT, CAT_FORM) is None
    assert first_break("Emma smiled .", "Emma ( 0 ) ; smile ( 1 ) AND agent ( 1 , 0 )") is None
    # only a final period is out of reach: a sentence without one may name its last word
    assert first_break("Emma smiled", "Emma ( 0 ) ; smile ( 1 ) AND agent ( 1 , 0 )") is None
    assert first_break("Emma smiled .", "Emma ( 0 ) ; smile ( 2 ) AND agent ( 2 , 0 )") == 7


@pytest.mark.parametrize(
    ("form", "word_index", "why"),
    [
        # rule 1, shape: a role takes two arguments
        ("cat ( 1 ) ; * mat ( 4 ) ; * cake ( 7 ) ; nmod . on ( 1 , 4 ) AND eat ( 5 ) AND agent ( 5 )", 34, "arity"),
        # rule 2, positions: 9 is past the sentence's last word, and 8 is its final period
        ("cat ( 9 )", 2, "position"),
        ("cat ( 1 ) ; eat ( 8 )", 7, "the final period"),
        # rule 2: a position named twice
        ("cat ( 1 ) ; * mat ( 4 ) ; * cake ( 7 ) ; nmod . on ( 1 , 4 ) AND eat ( 7 )", 28, "named twice"),
        # rule 3, order: theme ( 5 , 7 ) may not come before agent ( 5 , 1 )
        (("cat ( 1 ) ; * mat ( 4 ) ; * cake ( 7 ) ; nmod . on ( 1 , 4 ) AND eat ( 5 ) AND theme ( 5 , 7 ) "
          "AND agent ( 5 , 1 )"), 38, "order"),
        # rule 4, heads: a second agent for one event
        (("cat ( 1 ) ; * mat ( 4 ) ; * cake ( 7 ) ; nmod . on ( 1 , 4 ) AND eat ( 5 ) AND agent ( 5 , 1 ) "
          "AND agent ( 5 , 7 )"), 38, "second agent"),
        # rule 5, dependents: the noun of the phrase (mat) made the subject
        ("cat ( 1 ) ; * mat ( 4 ) ; * cake ( 7 ) ; nmod . on ( 1 , 4 ) AND eat ( 5 ) AND agent ( 5 , 4 )", 35,
         "phrase noun as agent"),
        # rule 5: an nmod's dependent comes after its head
        ("cat ( 1 ) ; * mat ( 4 ) ; * cake ( 7 ) ; nmod . on ( 4 , 1 )", 23, "nmod backwards"),
        # rule 6, ending: the cake is nobody's dependent yet
        ("cat ( 1 ) ; * mat ( 4 ) ; * cake ( 7 ) ; nmod . on ( 1 , 4 ) AND eat ( 5 ) AND agent ( 5 , 1 )", 37,
         "entity left over"),
        # rule 6: an event without a role
        ("cat ( 1 ) ; * mat ( 4 ) ; * cake ( 7 ) ; nmod . on ( 1 , 4 ) AND eat ( 5 )", 30, "event without role"),
    ],
)
def test_each_rule_stops_a_form_at_the_word_that_breaks_it(form, word_index, why):
    assert first_break(CAT, form) == word_index, why


# the same form with the phrase's nmod after the verb's roles: SEM scores it right, the notation writes it first
CAT_FORM_PHRASE_LAST = ("cat ( 1 ) ; * mat ( 4 ) ; * cake ( 7 ) ; eat ( 5 ) AND agent ( 5 , 1 ) AND theme ( 5 , 7 ) "
                        "AND nmod . on ( 1 , 4 )")


def test_any_order_keeps_a_right_form_the_notation_would_order_otherwise():
    assert _break_word(CAT, CAT_FORM_PHRASE_LAST) == "nmod"  # the order rule: (1, 4) after (5, 7)
    assert first_break(CAT, CAT_FORM_PHRASE_LAST, any_order=True) is None
    theme_first = CAT_FORM.replace("agent ( 5 , 1 ) AND theme ( 5 , 7 )", "theme ( 5 , 7 ) AND agent ( 5 , 1 )")
    assert first_break(CAT, theme_first, any_order=True) is None


@pytest.mark.parametrize(
    ("form", "word_index", "why"),
    [
        # every other rule still holds: a second agent, the phrase's noun as agent, a role before its event
        (CAT_FORM + " AND agent ( 5 , 7 )", 45, "second agent"),
        # a noun made two roles of one event: in the notation's order the second would repeat the first's key
        ("cat ( 1 ) ; * mat ( 4 ) ; * cake ( 7 ) ; nmod . on ( 1 , 4 ) AND eat ( 5 ) AND agent ( 5 , 1 ) "
         "AND theme ( 5 , 1 )", 42, "one noun, two roles of one event"),
        ("cat ( 1 ) ; * mat ( 4 ) ; * cake ( 7 ) ; nmod . on ( 1 , 4 ) AND eat ( 5 ) AND agent ( 5 , 4 )", 35,
         "phrase noun as agent"),
        ("cat ( 1 ) ; * mat ( 4 ) ; * cake ( 7 ) ; agent ( 5 , 1 )", 17, "role before its event"),
        # the positions: in any order, too, no event at the final period
        ("cat ( 1 ) ; * mat ( 4 ) ; * cake ( 7 ) ; nmod . on ( 1 , 4 ) AND eat ( 5 ) AND eat ( 8 )", 33,
         "an event at the final period"),
        # the ending: with the order gone, an event left behind without a role is caught at the end
        ("Emma ( 0 ) ; * cake ( 7 ) ; eat ( 5 ) AND smile ( 2 ) AND agent ( 2 , 0 ) AND theme ( 2 , 7 )", 34,
         "event without role"),
    ],
)
def test_any_order_keeps_every_other_rule(form, word_index, why):
    assert first_break(CAT, form, any_order=True) == word_index, why


def test_an_event_whose_items_are_over_must_have_had_a_role():
    # "A cat ran and ..." is not ReCOGS, but the order rule alone says it: after run ( 2 ), an item about
    # position 3 would leave run without a role for ever
    prefix = Prefix(5)
    for word in ("cat", "(", "1", ")", ";", "run", "(", "2", ")", "AND"):
        prefix.read(word)
    allowed = prefix.allowed()
    assert "agent" in allowed and LABEL not in allowed  # a role for run, not another event


def test_lambda_primitives_and_bare_names_are_left_free():
    assert first_break("ball", "LAMBDA a . ball ( a )") is None
    assert first_break("Emma", "Emma") is None
    assert _break_word("ball", "ball") == END  # a lower-case label alone is not a bare name


def test_training_targets_that_break_a_rule_are_named():
    with pytest.raises(RuleError, match=r"training target 1 .* at word 2"):
        check_targets([CAT, CAT], [CAT_FORM, "cat ( 9 ) ; eat ( 5 ) AND agent ( 5 , 1 )"])
    assert check_targets([CAT], [CAT_FORM]) == 1


def test_every_gold_form_of_recogs_pos_keeps_the_rules(mirror):
    import hf_recogs

    ds = hf_recogs.load_dataset("recogs_pos")
    for split in ("validation", "test"):
        assert check_targets(ds[split]["input"], ds[split]["output"]) == len(ds[split])
        assert check_targets(ds[split]["input"], ds[split]["output"], any_order=True) == len(ds[split])
    for split in ("train", "gen"):  # every 7th row: the whole splits are checked by every constrained run
        rows = ds[split].select(range(0, len(ds[split]), 7))
        assert check_targets(rows["input"], rows["output"]) == len(rows)


def test_constrained_greedy_decoding_changes_only_the_outputs_that_break_the_rules(published_fast):
    from hf_recogs.train.decode import decode

    model, tokenizer = published_fast
    with gzip.open(PUBLISHED / "predictions_gen.jsonl.gz", "rt", encoding="utf-8") as f:
        rows = [r for r in map(json.loads, f)
                if r["category"] == "obj_pp_to_subj_pp" and len(r["input"].split()) <= 9]
    keeps = [r for r in rows if first_break(r["input"], r["prediction"]) is None][:3]
    breaks = [r for r in rows if first_break(r["input"], r["prediction"]) is not None][:3]
    assert len(keeps) == len(breaks) == 3
    sources = [r["input"] for r in keeps + breaks]
    plain = decode(model, tokenizer, sources, max_length=96, batch_size=8, shared=False)
    assert list(plain) == [r["prediction"] for r in keeps + breaks]  # the published predictions, reproduced
    ruled = decode(model, tokenizer, sources, max_length=96, batch_size=8, shared=False, constrained=True)
    assert list(ruled[:3]) == list(plain[:3])  # greedy kept the model's choice at every step
    for i, (source, output) in enumerate(zip(sources, ruled, strict=True)):
        assert i in ruled.dead_ends or first_break(source, output) is None, output
    assert all(ruled[i] != plain[i] for i in range(3, 6))


@pytest.mark.parametrize("any_order", [False, True])
def test_constrained_decoding_under_a_length_cap_cuts_rows_as_plain_decoding_does(published_fast, any_order):
    # a row stopped at its cap is padded while its batch goes on: the rules must take that as its end
    from hf_recogs.train.decode import decode

    model, tokenizer = published_fast
    sources = ["Emma smiled .", "A cat on the mat gave the girl the cake beside a table ."]
    whole = decode(model, tokenizer, sources, max_length=96, shared=False, constrained=True, any_order=any_order)
    capped = decode(model, tokenizer, sources, max_length=96, shared=False, constrained=True, any_order=any_order,
                    length_cap=(1.0, 4))
    assert capped.cut == [0, 1]  # caps of 7 and 17 tokens, both shorter than the forms
    for cut, full in zip(capped, whole, strict=True):
        assert full.split()[:len(cut.split())] == cut.split() and len(cut.split()) < len(full.split())


def test_a_run_refuses_constrained_decoding_on_a_dataset_the_rules_do_not_fit(tmp_path):
    import datasets
    from test_training import write_config

    from hf_recogs.train.arguments import ConfigError, parse_args
    from hf_recogs.train.run import check_form_rules

    exp, _ = parse_args([str(write_config(tmp_path)), "constrained_decoding=true"])
    cogs_like = datasets.Dataset.from_dict({"input": ["Emma smiled ."],
                                            "output": ["smile . agent ( x _ 1 , Emma )"]})
    with pytest.raises(ConfigError, match="training target 0 .* leave constrained_decoding out"):
        check_form_rules(exp, {"train": cogs_like})
    with pytest.raises(ConfigError, match="has no train split"):
        check_form_rules(exp, {"gen": cogs_like})
    with pytest.raises(ConfigError, match="add constrained_decoding=true or leave constrained_any_order out"):
        parse_args([str(write_config(tmp_path)), "constrained_any_order=true"])


def test_the_card_of_a_constrained_evaluation_says_what_it_scored_and_how():
    from hf_recogs.report import render_model_card
    from hf_recogs.scoring import summarize

    gen = summarize([{"category": "cp_recursion", "sem": True, "exact": True, "depth": 3}], "sem")
    gen["constrained_decoding"] = {"rows_at_dead_end": 2}
    record = {"dataset": "recogs_pos", "arch": "transformer", "seed": 77, "metric": "sem", "train": None,
              "evaluated_model": "/home/me/hf_recogs/results/recogs_pos_transformer_fast/seed_77",
              "hyperparameters": {"constrained_decoding": True}, "splits": {"gen": gen}}
    card = str(render_model_card(record))
    assert ("An evaluation, with no new training, of the saved `transformer` model "
            "`results/recogs_pos_transformer_fast/seed_77` (seed 77)") in card
    assert "- Seed: 77; evaluation only" in card and "optimisation steps" not in card
    assert "Greedy decoding under the rules of ReCOGS_pos forms (`constrained_decoding`)." in card
    assert "Rows left with no such word, which then ended: 2 in gen." in card
    assert "conjunct order" in card and "any order" not in card
    assert "version 1 of the rules, under which a position could also name the sentence's final period" in card
    gen["constrained_decoding"]["rules_version"] = RULES_VERSION
    assert "version 1" not in str(render_model_card(record))
    record["hyperparameters"]["constrained_any_order"] = True
    card = str(render_model_card(record))
    assert "(`constrained_decoding`, conjuncts in any order: `constrained_any_order`)." in card
    assert "heads, dependents and ending, conjuncts in any order" in card and "conjunct order," not in card
