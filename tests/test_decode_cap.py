"""decode's per-row length cap (``decode_cap_per_source_word``): a row that runs on stops at its own cap, the
other rows' outputs do not change, and the run record says how many rows were cut and whether any gold form
was longer than its cap. On the published fast Transformer (seed 77), with a cap tighter than the structure
configs' (8 tokens per source word + 32), so that some of its ordinary gen rows are cut."""

from __future__ import annotations

import gzip
import json

import pytest
from conftest import PUBLISHED_FAST as PUBLISHED

CAP = (4.0, 8)


def _rows(n_long: int, n_short: int) -> list[dict]:
    """Gen rows of the published predictions: the first whose prediction is longer than its cap, and the first
    whose prediction fits, among sentences of at most 10 words (cheap to decode in full)."""
    from hf_recogs.train.decode import length_caps

    with gzip.open(PUBLISHED / "predictions_gen.jsonl.gz", "rt", encoding="utf-8") as f:
        rows = [r for r in map(json.loads, f) if len(r["input"].split()) <= 10]
    caps = length_caps([r["input"] for r in rows], *CAP, 512)
    long = [r for r, cap in zip(rows, caps, strict=True) if len(r["prediction"].split()) + 2 > cap]
    short = [r for r, cap in zip(rows, caps, strict=True) if len(r["prediction"].split()) + 2 < cap]
    return long[:n_long] + short[:n_short]


def test_a_capped_row_stops_at_its_cap_and_the_others_do_not_change(published_fast):
    from hf_recogs.train.decode import decode, length_caps

    model, tokenizer = published_fast
    rows = _rows(3, 3)
    sources = [r["input"] for r in rows]
    full = decode(model, tokenizer, sources, max_length=512, batch_size=8, shared=False)
    capped = decode(model, tokenizer, sources, max_length=512, batch_size=8, shared=False, length_cap=CAP)
    assert full.cut == []
    caps = length_caps(sources, *CAP, 512)
    # what generate writes: the decoder's start token, then the output's tokens as training wrote them (here
    # its words and </s>)
    lengths = [1 + len(ids) for ids in tokenizer(list(full))["input_ids"]]
    ran_on = [i for i, (length, cap) in enumerate(zip(lengths, caps, strict=True)) if length > cap]
    assert ran_on == capped.cut == [0, 1, 2]
    for i, (whole, cut) in enumerate(zip(full, capped, strict=True)):
        if i in capped.cut:  # the first words of what it would have written, as many as the cap leaves
            assert len(cut.split()) == caps[i] - 1 and whole.split()[:len(cut.split())] == cut.split()
        else:
            assert cut == whole


@pytest.mark.parametrize(("option", "decode_kwargs"), [("decode_cap_per_source_word=8", {"length_cap": CAP}),
                                                       ("constrained_decoding=true", {"constrained": True})])
def test_greedy_only_options_refuse_beam_search_in_one_line(published_fast, tmp_path, option, decode_kwargs):
    from test_training import write_config

    from hf_recogs.train.arguments import ConfigError, parse_args
    from hf_recogs.train.decode import decode

    model, tokenizer = published_fast
    with pytest.raises(ValueError, match="greedy decoding"):
        decode(model, tokenizer, ["Emma smiled ."], max_length=16, num_beams=2, shared=False, **decode_kwargs)
    cfg = write_config(tmp_path)
    name = option.split("=")[0]
    with pytest.raises(ConfigError, match=f"set generation_num_beams=1 or {name}="):
        parse_args([str(cfg), option, "generation_num_beams=3"])


def test_a_negative_cap_is_refused(tmp_path):
    from test_training import write_config

    from hf_recogs.train.arguments import ConfigError, parse_args

    cfg = write_config(tmp_path)
    with pytest.raises(ConfigError, match="decode_cap_per_source_word must be 0"):
        parse_args([str(cfg), "decode_cap_per_source_word=-1"])


def test_a_run_records_what_the_cap_cut(tmp_path):
    """train.py with the cap: every split's summary says how many rows the cap cut and how many gold forms were
    longer than their cap, and the card says it; a cap too small for the gold forms is flagged."""
    from test_training import write_config

    from hf_recogs.train import main

    cfg = write_config(tmp_path, num_train_epochs=1, decode_cap_per_source_word=0.5, decode_cap_margin=2)
    assert main([str(cfg)]) == 0
    record = json.loads((tmp_path / "out" / "seed_7" / "results.json").read_text())
    for split in ("validation", "test", "gen"):
        cap = record["splits"][split]["decode_cap"]
        assert cap["per_source_word"] == 0.5 and cap["margin"] == 2
        assert cap["gold_over_cap"] == record["splits"][split]["n"]  # every copy is longer than half its source
        assert 0 <= cap["rows_cut"] <= record["splits"][split]["n"]
    card = (tmp_path / "out" / "seed_7" / "README.md").read_text()
    assert "stopped each row at 0.5 tokens per source word plus 2 (`decode_cap_per_source_word`)" in card
    assert f"{3 * 24} gold forms were longer than their row's cap" in card


def test_the_card_says_no_verdict_changed_when_every_gold_form_fits():
    from hf_recogs.report.card import _decode_cap_note

    cap = {"per_source_word": 8.0, "margin": 32, "gold_over_cap": 0}
    note = _decode_cap_note({"splits": {"gen": {"decode_cap": {**cap, "rows_cut": 3}},
                                        "test": {"decode_cap": {**cap, "rows_cut": 0}}}})
    assert "at 8 tokens per source word plus 32" in note and "it cut 3 in gen, 0 in test;" in note
    assert "every gold form fits in its row's cap" in note
    assert _decode_cap_note({"splits": {"gen": {"n": 5}}}) == ""  # a run without the cap: no line


def test_seeds_decoded_with_and_without_a_harmless_cap_publish_together():
    """publish averages a seed decoded with the cap and one without when no gold form was longer than its cap
    (no verdict can differ); where one was, the cap counts as a different set-up."""
    from hf_recogs.publish.results_folder import check_same_setup

    def seed(cap: dict | None) -> dict:
        hp = {"learning_rate": 1e-3, **({"decode_cap_per_source_word": 8.0, "decode_cap_margin": 32} if cap else {})}
        split = {"n": 10, **({"decode_cap": cap} if cap else {})}
        return {"dataset": "recogs_pos", "dataset_params": {}, "arch": "transformer", "metric": "sem",
                "hyperparameters": hp, "splits": {"gen": split}}

    fits = {"per_source_word": 8.0, "margin": 32, "rows_cut": 4, "gold_over_cap": 0}
    assert check_same_setup({66: seed(None), 42: seed(fits)}, raise_error=False) == []
    too_small = {**fits, "gold_over_cap": 2}
    assert check_same_setup({66: seed(None), 42: seed(too_small)}, raise_error=False) == ["decode_cap"]
    assert check_same_setup({66: seed(too_small), 42: seed(too_small)}, raise_error=False) == []
