"""``target_order``: ReCOGS forms whose AND conjuncts follow each noun's role with its own ``nmod`` (and each
clause's verb with its roles: ``depth_first``), or put every ``nmod`` last (``nmod_last``), the same meaning for
SEM; only on the training split; refused where the metric is not SEM. And ``arguments_first`` (below)."""

import datasets
import pytest
from conftest import needs_mirror

from hf_recogs.logical_forms import LogicalFormError, depth_first_order, nmod_last_order, sem_match
from hf_recogs.train import ConfigError, parse_args
from hf_recogs.train.data import training_rows

# (gold as ReCOGS_pos writes it, the depth-first order written out by hand)
BY_HAND = [
    # obj_pp_to_subj_pp: the subject's phrase moves behind the subject's role
    ("* baby ( 1 ) ; tray ( 4 ) ; * house ( 7 ) ; nmod . on ( 1 , 4 ) AND nmod . in ( 4 , 7 ) AND scream ( 8 ) "
     "AND agent ( 8 , 1 )",
     "* baby ( 1 ) ; tray ( 4 ) ; * house ( 7 ) ; scream ( 8 ) AND agent ( 8 , 1 ) AND nmod . on ( 1 , 4 ) "
     "AND nmod . in ( 4 , 7 )"),
    # a dative whose theme carries the phrase: the phrase moves before the recipient
    ("Isabella ( 0 ) ; box ( 3 ) ; tree ( 6 ) ; Emma ( 8 ) ; forward ( 1 ) AND agent ( 1 , 0 ) AND theme ( 1 , 3 ) "
     "AND recipient ( 1 , 8 ) AND nmod . on ( 3 , 6 )",
     "Isabella ( 0 ) ; box ( 3 ) ; tree ( 6 ) ; Emma ( 8 ) ; forward ( 1 ) AND agent ( 1 , 0 ) AND theme ( 1 , 3 ) "
     "AND nmod . on ( 3 , 6 ) AND recipient ( 1 , 8 )"),
    # a control verb: the infinitive's clause follows xcomp, its agent (already named) pulls nothing along
    ("* girl ( 1 ) ; * vehicle ( 4 ) ; nmod . in ( 1 , 4 ) AND need ( 5 ) AND agent ( 5 , 1 ) AND xcomp ( 5 , 7 ) "
     "AND walk ( 7 ) AND agent ( 7 , 1 )",
     "* girl ( 1 ) ; * vehicle ( 4 ) ; need ( 5 ) AND agent ( 5 , 1 ) AND nmod . in ( 1 , 4 ) AND xcomp ( 5 , 7 ) "
     "AND walk ( 7 ) AND agent ( 7 , 1 )"),
    # two sentences joined: each verb is a root, in text order
    ("* cat ( 1 ) ; * dog ( 5 ) ; smile ( 2 ) AND agent ( 2 , 1 ) AND run ( 6 ) AND agent ( 6 , 5 )",
     "* cat ( 1 ) ; * dog ( 5 ) ; smile ( 2 ) AND agent ( 2 , 1 ) AND run ( 6 ) AND agent ( 6 , 5 )"),
    # no noun list at all
    ("sleep ( 0 ) AND agent ( 0 , 1 )", "sleep ( 0 ) AND agent ( 0 , 1 )"),
]


@pytest.mark.parametrize(("gold", "expected"), BY_HAND)
def test_depth_first_order_by_hand(gold, expected):
    assert depth_first_order(gold) == expected
    assert sem_match(expected, gold)


def test_a_form_that_is_not_recogs_is_refused():
    with pytest.raises(LogicalFormError):
        depth_first_order("* cat ( x _ 1 ) ; smile . agent ( x _ 2 , x _ 1 )")  # COGS variables


def _and_conjuncts(form: str) -> list[list[str]]:
    return [c.split() for c in form.split(";")[-1].split(" AND ")]


@needs_mirror
@pytest.mark.parametrize("split", ["train", "gen"])
def test_every_recogs_pos_form_keeps_its_meaning_and_puts_each_phrase_after_its_noun(split):
    """On the whole split: the same conjuncts and the same noun list (so SEM is true by construction, and
    checked), and every ``nmod . p ( n , m )`` right after a conjunct whose second argument is n."""
    import hf_recogs

    rows = hf_recogs.load_dataset("recogs_pos", split=split)
    moved = 0
    for gold in rows["output"]:
        form = depth_first_order(gold)
        assert form.rsplit(";", 1)[0] == gold.rsplit(";", 1)[0]
        assert sorted(map(tuple, _and_conjuncts(form))) == sorted(map(tuple, _and_conjuncts(gold)))
        conjuncts = _and_conjuncts(form)
        for before, conjunct in zip(conjuncts, conjuncts[1:]):
            if conjunct[0] == "nmod":
                head = conjunct[conjunct.index("(") + 1]
                assert before[-2] == head, (gold, form)  # `role ( v , n )`: n is the token before ")"
        moved += form != gold
    assert moved > 0
    sample = rows.select(range(0, len(rows), 97))
    assert all(sem_match(depth_first_order(g), g) for g in sample["output"])


def test_the_training_split_is_reordered_and_nothing_else():
    exp, _ = parse_args(["configs/smoke.yaml", "dataset=recogs_pos", "target_order=depth_first"])
    gold, expected = BY_HAND[0]
    raw = {"train": datasets.Dataset.from_list([{"input": "The baby on a tray in the house screamed .",
                                                  "output": gold, "category": "in_distribution"}])}
    assert training_rows(exp, raw, seed=0)["output"] == [expected]
    assert raw["train"]["output"] == [gold]
    exp, _ = parse_args(["configs/smoke.yaml", "dataset=recogs_pos"])
    assert training_rows(exp, raw, seed=0)["output"] == [gold]


@pytest.mark.parametrize("order", ["depth_first", "nmod_last"])
def test_cogs_forms_stop_the_run_in_one_line(order):
    """COGS and SLOG are scored by SEM too, but their ``x _ N`` forms are not ReCOGS: refused before training."""
    exp, _ = parse_args(["configs/smoke.yaml", "dataset=cogs", f"target_order={order}"])
    raw = {"train": datasets.Dataset.from_list([{"input": "A cat smiled .", "category": "in_distribution",
                                                  "output": "cat ( x _ 1 ) AND smile . agent ( x _ 2 , x _ 1 )"}])}
    with pytest.raises(ConfigError) as err:
        training_rows(exp, raw, seed=0)
    assert f"target_order={order} reorders ReCOGS forms" in str(err.value)
    assert "leave target_order out for this dataset" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(("options", "needle"), [
    (["dataset=scan_simple", "metric=auto", "target_order=depth_first"],
     "scan_simple is scored by exact: leave target_order out"),
    (["dataset=recogs_pos", "target_order=breadth_first"], "target_order='breadth_first' is not one of dataset, "
     "depth_first"),
])
def test_bad_target_order_is_one_line(options, needle):
    with pytest.raises(ConfigError) as err:
        parse_args(["configs/smoke.yaml", *options])
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_the_model_card_says_the_targets_were_reordered():
    from hf_recogs.report.card import _target_order_note

    assert "depth-first" in _target_order_note({"hyperparameters": {"target_order": "depth_first"}})
    assert "`nmod` conjunct moved after" in _target_order_note({"hyperparameters": {"target_order": "nmod_last"}})
    assert _target_order_note({"hyperparameters": {"target_order": "dataset"}}) == ""
    assert _target_order_note({"hyperparameters": {}}) == ""  # runs recorded before the option


# ---------------------------------------------------------------------------------------------------------
# nmod_last: every phrase after the other conjuncts

# (gold as ReCOGS_pos writes it, every nmod last, written out by hand)
NMOD_LAST_BY_HAND = [
    # obj_pp_to_subj_pp: the subject's phrases (a chain of two) go behind the verb and its role, in their order
    ("* baby ( 1 ) ; tray ( 4 ) ; * house ( 7 ) ; nmod . on ( 1 , 4 ) AND nmod . in ( 4 , 7 ) AND scream ( 8 ) "
     "AND agent ( 8 , 1 )",
     "* baby ( 1 ) ; tray ( 4 ) ; * house ( 7 ) ; scream ( 8 ) AND agent ( 8 , 1 ) AND nmod . on ( 1 , 4 ) "
     "AND nmod . in ( 4 , 7 )"),
    # a dative whose theme carries the phrase: already last, unchanged (depth-first order moves it)
    ("Isabella ( 0 ) ; box ( 3 ) ; tree ( 6 ) ; Emma ( 8 ) ; forward ( 1 ) AND agent ( 1 , 0 ) AND theme ( 1 , 3 ) "
     "AND recipient ( 1 , 8 ) AND nmod . on ( 3 , 6 )",
     "Isabella ( 0 ) ; box ( 3 ) ; tree ( 6 ) ; Emma ( 8 ) ; forward ( 1 ) AND agent ( 1 , 0 ) AND theme ( 1 , 3 ) "
     "AND recipient ( 1 , 8 ) AND nmod . on ( 3 , 6 )"),
    # a control verb: the phrase goes behind the infinitive's clause too
    ("* girl ( 1 ) ; * vehicle ( 4 ) ; nmod . in ( 1 , 4 ) AND need ( 5 ) AND agent ( 5 , 1 ) AND xcomp ( 5 , 7 ) "
     "AND walk ( 7 ) AND agent ( 7 , 1 )",
     "* girl ( 1 ) ; * vehicle ( 4 ) ; need ( 5 ) AND agent ( 5 , 1 ) AND xcomp ( 5 , 7 ) AND walk ( 7 ) "
     "AND agent ( 7 , 1 ) AND nmod . in ( 1 , 4 )"),
    # two sentences joined: the first one's phrase goes behind the second sentence
    ("* cat ( 1 ) ; * box ( 4 ) ; * bag ( 7 ) ; * dog ( 9 ) ; see ( 2 ) AND agent ( 2 , 1 ) AND theme ( 2 , 4 ) "
     "AND nmod . in ( 4 , 7 ) AND run ( 10 ) AND agent ( 10 , 9 )",
     "* cat ( 1 ) ; * box ( 4 ) ; * bag ( 7 ) ; * dog ( 9 ) ; see ( 2 ) AND agent ( 2 , 1 ) AND theme ( 2 , 4 ) "
     "AND run ( 10 ) AND agent ( 10 , 9 ) AND nmod . in ( 4 , 7 )"),
    ("sleep ( 0 ) AND agent ( 0 , 1 )", "sleep ( 0 ) AND agent ( 0 , 1 )"),  # no noun list, no phrase
    ("Paula", "Paula"),  # a primitive's lone name
]


@pytest.mark.parametrize(("gold", "expected"), NMOD_LAST_BY_HAND)
def test_nmod_last_order_by_hand(gold, expected):
    assert nmod_last_order(gold) == expected
    assert sem_match(expected, gold)


def test_nmod_last_refuses_a_form_that_is_not_recogs():
    with pytest.raises(LogicalFormError):
        nmod_last_order("* cat ( x _ 1 ) ; cat . nmod . in ( x _ 1 , x _ 4 ) AND smile . agent ( x _ 5 , x _ 1 )")


@needs_mirror
@pytest.mark.parametrize("split", ["train", "gen"])
def test_every_recogs_pos_form_keeps_its_meaning_with_every_phrase_last(split):
    """On the whole split: the same noun list, the other conjuncts in their order and then the nmod conjuncts in
    theirs (so SEM is true by construction, and checked on a sample); every obj_pp_to_subj_pp form moves."""
    import hf_recogs

    rows = hf_recogs.load_dataset("recogs_pos", split=split)
    moved = 0
    for gold in rows["output"]:
        form = nmod_last_order(gold)
        assert form.rsplit(";", 1)[0] == gold.rsplit(";", 1)[0]
        gold_conjuncts, conjuncts = _and_conjuncts(gold), _and_conjuncts(form)
        phrases = [c for c in gold_conjuncts if c[0] == "nmod"]
        assert conjuncts == [c for c in gold_conjuncts if c[0] != "nmod"] + phrases, (gold, form)
        moved += form != gold
    assert moved > 0
    if split == "gen":
        obj_pp = [o for o, c in zip(rows["output"], rows["category"], strict=True) if c == "obj_pp_to_subj_pp"]
        assert len(obj_pp) == 1000 and all(nmod_last_order(o) != o for o in obj_pp)
    sample = rows.select(range(0, len(rows), 97))
    assert all(sem_match(nmod_last_order(g), g) for g in sample["output"])


def test_nmod_last_reorders_the_training_split():
    exp, _ = parse_args(["configs/smoke.yaml", "dataset=recogs_pos", "target_order=nmod_last"])
    gold, expected = NMOD_LAST_BY_HAND[0]
    raw = {"train": datasets.Dataset.from_list([{"input": "The baby on a tray in the house screamed .",
                                                  "output": gold, "category": "in_distribution"}])}
    assert training_rows(exp, raw, seed=0)["output"] == [expected]
    assert raw["train"]["output"] == [gold]


# ---------------------------------------------------------------------------------------------------------
# arguments_first: each conjunct written ``( arguments ) predicate``, given back before scoring


def test_arguments_first_by_hand_and_back():
    from hf_recogs.logical_forms import arguments_first, predicates_first

    gold = ("* baby ( 1 ) ; tray ( 4 ) ; nmod . on ( 1 , 4 ) AND scream ( 5 ) AND agent ( 5 , 1 )")
    written = "( 1 ) * baby ; ( 4 ) tray ; ( 1 , 4 ) nmod . on AND ( 5 ) scream AND ( 5 , 1 ) agent"
    assert arguments_first(gold) == written
    assert predicates_first(written) == gold
    assert arguments_first("Paula") == "Paula" == predicates_first("Paula")  # a primitive's lone name
    # COGS's variables move with their brackets
    assert arguments_first("* cat ( x _ 1 ) ; smile . agent ( x _ 2 , x _ 1 )") == (
        "( x _ 1 ) * cat ; ( x _ 2 , x _ 1 ) smile . agent")
    # a malformed prediction: the parts in the written shape go back, the others stay for SEM to judge
    assert predicates_first("( 1 ) * baby ; ( 4 ) ; oops ( 5 AND ( 5 , 1 ) agent") == (
        "* baby ( 1 ) ; ( 4 ) ; oops ( 5 AND agent ( 5 , 1 )")
    with pytest.raises(LogicalFormError):
        arguments_first("agent ( 1 , 0")


@needs_mirror
@pytest.mark.parametrize("config", ["recogs_pos", "cogs"])
def test_every_form_comes_back_unchanged(config):
    import hf_recogs
    from hf_recogs.logical_forms import arguments_first, predicates_first

    ds = hf_recogs.load_dataset(config)
    for split in ds:
        for gold in ds[split]["output"]:
            written = arguments_first(gold)
            assert predicates_first(written) == " ".join(gold.split()), (split, gold)
            assert written.startswith("(") or "(" not in gold, (split, gold)  # the first conjunct was moved


def test_arguments_first_trains_on_rewritten_targets_and_gives_its_outputs_back(tmp_path, monkeypatch):
    """The training split (and the source-check batches) in the new order, the other splits untouched; the
    model saved with the order, and decoding its outputs gives them back in the dataset's order."""
    import json

    import torch
    from test_training import write_config
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from hf_recogs.logical_forms import arguments_first
    from hf_recogs.train import main, run
    from hf_recogs.train.decode import decode

    names, verbs = ["Emma", "Liam", "Noah", "Ava"], [("smiled", "smile"), ("ran", "run"), ("slept", "sleep")]
    files, data = {}, tmp_path / "forms"  # write_config writes its own copy task into tmp_path
    data.mkdir()
    for split, n in (("train", 24), ("validation", 6), ("test", 6), ("gen", 6)):
        path = data / f"{split}.jsonl"
        with open(path, "w") as f:
            for i in range(n):
                name, (form, lemma) = names[i % 4], verbs[i % 3]
                f.write(json.dumps({"input": f"{name} {form} .", "category": "in_distribution",
                                    "output": f"{name} ( 0 ) ; {lemma} ( 1 ) AND agent ( 1 , 0 )"}) + "\n")
        files[split] = str(path)
    seen = {}
    rows_of = run.training_rows
    monkeypatch.setattr(run, "training_rows", lambda exp, raw, seed: seen.setdefault("train", rows_of(exp, raw, seed)))
    cfg = write_config(tmp_path, data_files=files, metric="sem", target_order="arguments_first", num_train_epochs=1)
    assert main([str(cfg)]) == 0
    gold = "Emma ( 0 ) ; smile ( 1 ) AND agent ( 1 , 0 )"
    assert seen["train"][0]["output"] == arguments_first(gold) == "( 0 ) Emma ; ( 1 ) smile AND ( 1 , 0 ) agent"
    folder = tmp_path / "out" / "seed_7"
    record = json.loads((folder / "results.json").read_text())
    assert record["hyperparameters"]["target_order"] == "arguments_first"
    assert "`target_order: arguments_first`" in (folder / "README.md").read_text()
    predictions = [json.loads(line) for line in (folder / "predictions_gen.jsonl").open()]
    assert predictions[0]["gold"] == gold  # scored against the dataset's own outputs

    model = AutoModelForSeq2SeqLM.from_pretrained(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    assert model.config.hf_recogs_target_order == "arguments_first"
    written = tokenizer([arguments_first(gold)], return_tensors="pt")["input_ids"]
    monkeypatch.setattr(model, "generate", lambda **_: torch.cat([torch.zeros_like(written[:, :1]), written], 1))
    assert decode(model, tokenizer, ["Emma smiled ."], max_length=32) == [gold]
    model.config.hf_recogs_target_order = "dataset"
    assert decode(model, tokenizer, ["Emma smiled ."], max_length=32) == [arguments_first(gold)]
