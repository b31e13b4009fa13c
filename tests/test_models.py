"""Word-level tokenizer and the three baseline architectures (tiny sizes; the whole file runs in well under a minute)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap

import pytest
import torch

from hf_recogs.models import (
    ARCHITECTURES,
    LstmSeq2SeqConfig,
    LstmSeq2SeqForConditionalGeneration,
    build_model,
    count_parameters,
    valid_overrides,
)
from hf_recogs.models.modeling_lstm_seq2seq import CACHE_FIELD
from hf_recogs.tokenization import BOS_ID, EOS_ID, PAD_ID, UNK_ID, build_tokenizer

TINY = {
    "transformer": {
        "d_model": 32,
        "encoder_layers": 1,
        "decoder_layers": 1,
        "encoder_attention_heads": 2,
        "decoder_attention_heads": 2,
        "encoder_ffn_dim": 64,
        "decoder_ffn_dim": 64,
    },
    "relative_transformer": {
        "d_model": 32,
        "d_kv": 16,
        "num_heads": 2,
        "d_ff": 64,
        "num_layers": 1,
        "num_decoder_layers": 1,
    },
    "lstm": {"hidden_size": 32, "encoder_layers": 1, "decoder_layers": 1},
    "reference_transformer": {
        "hidden_size": 32,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "intermediate_size": 64,
    },
}
WORDS = [f"w{i}" for i in range(8)]


def _copy_data(n: int = 48, seed: int = 0) -> tuple[list[str], list[str]]:
    """Source ``w3 w1 w4`` → target ``W3 W1 W4``: a copy task with a word mapping."""
    rng = random.Random(seed)
    src = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6))) for _ in range(n)]
    return src, [s.upper() for s in src]


SRC, TGT = _copy_data()


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Tiny models gain nothing from intra-op threads, and on a loaded 2-core machine OpenMP spinning made the
    training fixture 20× slower; restore the setting for the rest of the session."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def tok():
    return build_tokenizer(SRC, TGT)


def _batch(tok, src=SRC, tgt=TGT):
    enc = tok(list(src), text_target=list(tgt), padding=True, return_tensors="pt")
    enc["labels"] = enc["labels"].masked_fill(enc["labels"] == tok.pad_token_id, -100)
    return enc


def _train(model, tok, steps: int, lr: float = 1e-2) -> list[float]:
    batch = _batch(tok)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    losses = []
    for _ in range(steps):
        loss = model(**batch).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    model.eval()
    return losses


@pytest.fixture(scope="module")
def trained(tok):
    """One tiny model per architecture, trained a little on the copy task (so greedy outputs vary)."""
    models = {}
    for arch in ARCHITECTURES:
        torch.manual_seed(0)
        model = build_model(arch, tok, max_positions=64, **TINY[arch])
        with torch.no_grad():
            before = model.eval()(**_batch(tok)).loss.item()
        _train(model, tok, steps=40)
        with torch.no_grad():
            after = model(**_batch(tok)).loss.item()
        models[arch] = (model, before, after)
    return models


# --- tokenizer ---------------------------------------------------------------------------------------------------


def test_tokenizer_layout_round_trip_and_unknown_words(tok, tmp_path):
    assert (tok.pad_token_id, tok.bos_token_id, tok.eos_token_id, tok.unk_token_id) == (
        PAD_ID,
        BOS_ID,
        EOS_ID,
        UNK_ID,
    )
    assert tok.convert_ids_to_tokens([0, 1, 2, 3]) == ["<pad>", "<s>", "</s>", "<unk>"]
    lf = "cat ( x _ 1 ) ; smile . agent ( x _ 2 , x _ 1 )"
    t = build_tokenizer(["A cat smiled ."], [lf])
    ids = t(text_target=lf)["input_ids"]
    assert ids[-1] == EOS_ID and UNK_ID not in ids and BOS_ID not in ids
    assert t.decode(ids, skip_special_tokens=True) == lf  # no clean-up of " ." / " ,"
    src = t("A  dog\tsmiled .")["input_ids"]  # any whitespace splits; unseen word → <unk>
    assert src == [t.convert_tokens_to_ids(w) for w in ["A"]] + [UNK_ID] + t.convert_tokens_to_ids(
        ["smiled", "."]
    ) + [EOS_ID]
    assert t.decode(src) == "A <unk> smiled . </s>"
    assert t.decode(src, skip_special_tokens=True) == "A smiled ."
    padded = t(["A cat", "A cat smiled ."], padding=True)
    assert padded["input_ids"][0][-2:] == [PAD_ID, PAD_ID] and padded["attention_mask"][0][-2:] == [0, 0]

    t.save_pretrained(tmp_path)
    from transformers import AutoTokenizer

    t2 = AutoTokenizer.from_pretrained(tmp_path)
    assert t2.get_vocab() == t.get_vocab()
    assert t2(text_target=lf)["input_ids"] == ids and t2.decode(ids, skip_special_tokens=True) == lf
    assert t2.pad_token_id == PAD_ID and t2.eos_token_id == EOS_ID


def test_vocabulary_is_deterministic_and_min_frequency():
    a = build_tokenizer(["b a b", "c"], ["a b"]).get_vocab()
    assert a == build_tokenizer(["c", "b a b"], ["a b"]).get_vocab()
    assert [w for w, _ in sorted(a.items(), key=lambda kv: kv[1])][4:] == [
        "b",
        "a",
        "c",
    ]  # by count, then name
    assert "c" not in build_tokenizer(["b a b", "c"], ["a b"], min_frequency=2).get_vocab()


# --- building ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_special_ids_and_generation_config(tok, arch):
    model = build_model(arch, tok, max_positions=77, **TINY[arch])
    for cfg in (model.config, model.generation_config):
        assert (cfg.pad_token_id, cfg.eos_token_id, cfg.decoder_start_token_id) == (PAD_ID, EOS_ID, BOS_ID)
    assert model.generation_config.max_length == 77
    assert model.generation_config.num_beams == 1 and not model.generation_config.do_sample
    assert model.config.vocab_size == len(tok)
    def table(part):  # transformers modules have get_input_embeddings; the LSTM's halves are plain modules
        return (part.get_input_embeddings() if hasattr(part, "get_input_embeddings") else part.embed_tokens).weight

    decoder_table = table(model.get_decoder())
    assert model.get_output_embeddings().weight is decoder_table  # tied output layer
    # Bart and T5 share one table with the encoder; the reference model and the LSTM keep the encoder's apart.
    assert (table(model.get_encoder()) is decoder_table) == (
        arch in ("transformer", "relative_transformer")
    )
    if arch == "transformer":
        assert model.config.max_position_embeddings == 77 and model.config.scale_embedding is False
        assert model.config.forced_eos_token_id is None and model.config._attn_implementation == "sdpa"


def test_reference_sizes(tok):
    bart = build_model("transformer", tok)
    c = bart.config
    assert (c.d_model, c.encoder_layers, c.decoder_layers, c.encoder_attention_heads, c.encoder_ffn_dim) == (
        300,
        2,
        2,
        4,
        512,
    )
    assert (c.dropout, c.attention_dropout, c.max_position_embeddings) == (0.1, 0.1, 512)
    t5 = build_model("relative_transformer", tok).config
    assert (t5.d_model, t5.d_kv, t5.d_ff, t5.num_layers, t5.num_decoder_layers, t5.num_heads) == (
        300,
        75,
        512,
        2,
        2,
        4,
    )
    lstm = build_model("lstm", tok)
    v = len(tok)
    # 2 embeddings + 2×2 LSTM layers + attention combination 1024→512 + output bias (weight tied).
    lstm_layer = 4 * 512 * (512 + 512) + 2 * 4 * 512
    assert count_parameters(lstm) == 2 * v * 512 + 4 * lstm_layer + (1024 * 512 + 512) + v
    # The reference vocabularies (762 source + 729 target entries) would give the paper's ≈9.69M.
    assert abs(8_929_792 + 762 * 512 + 729 * 512 + 729 - 9_690_000) < 5_000
    # The reference Transformer: with its 762 source / 729 target vocabularies instead of our shared one (an
    # encoder table, a decoder table tied to the output layer, an output bias) it has the paper's 4,344,077.
    ref = build_model("reference_transformer", tok)
    assert count_parameters(ref) - (300 + 300 + 1) * v + (762 * 300 + 729 * 300 + 729) == 4_344_077
    assert ref.config.encoder.initializer_range == ref.config.decoder.initializer_range == 0.02
    assert abs(bart.config.init_std - 300**-0.5) < 1e-12  # ours: not the reference 0.02 (see transformer.py)
    assert build_model("transformer", tok, init_std=0.02).config.init_std == 0.02  # the reference init, exactly


def test_errors(tok):
    with pytest.raises(ValueError, match="valid: transformer, reference_transformer, lstm, relative_transformer"):
        build_model("gru", tok)
    with pytest.raises(ValueError, match="unknown override.*n_layers"):
        build_model("transformer", tok, n_layers=3)
    with pytest.raises(ValueError, match="unknown override.*encoder_layers"):
        build_model("relative_transformer", tok, encoder_layers=3)  # a Bart name on T5
    assert "hidden_size" in valid_overrides("lstm") and "d_model" in valid_overrides("transformer")
    with pytest.raises(Exception, match="encoder_layers must equal decoder_layers"):
        build_model("lstm", tok, encoder_layers=2, decoder_layers=1)


# --- training and generation -------------------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_training_lowers_loss(trained, arch):
    _, before, after = trained[arch]
    assert after < 0.7 * before, (before, after)


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_save_load_gives_identical_generations(trained, tok, tmp_path, arch):
    from transformers import AutoModelForSeq2SeqLM

    model = trained[arch][0]
    inputs = tok(SRC[:8], padding=True, return_tensors="pt")
    out = model.generate(**inputs, max_length=12)
    assert out.shape[0] == 8 and (out[:, 0] == BOS_ID).all()
    assert len(set(map(tuple, out.tolist()))) > 1  # the trained model does not emit one constant string
    model.save_pretrained(tmp_path)
    loaded = AutoModelForSeq2SeqLM.from_pretrained(tmp_path).eval()
    assert type(loaded) is type(model)
    assert torch.equal(loaded.generate(**inputs, max_length=12), out)


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_batched_generation_equals_one_by_one(trained, tok, arch):
    """Right padding of the sources does not change any output."""
    model = trained[arch][0]
    src = SRC[:6]
    batched = model.generate(**tok(src, padding=True, return_tensors="pt"), max_length=10)
    for i, s in enumerate(src):
        single = model.generate(**tok([s], return_tensors="pt"), max_length=10)[0]
        row = batched[i, : len(single)]
        assert torch.equal(row, single), (s, row, single)
        assert (batched[i, len(single) :] == PAD_ID).all()


def test_lstm_cache_and_beams(trained, tok, monkeypatch):
    model = trained["lstm"][0]
    inputs = tok(SRC[:8], padding=True, return_tensors="pt")
    fed = []  # decoder tokens per generation step: 1 after the first step when the state is really reused
    forward = type(model).forward
    monkeypatch.setattr(type(model), "forward",
                        lambda self, *a, **k: fed.append(k["decoder_input_ids"].shape[1]) or forward(self, *a, **k))
    cached = model.generate(**inputs, max_length=12)
    assert len(fed) > 2 and set(fed) == {1}, fed
    fed.clear()
    assert torch.equal(cached, model.generate(**inputs, max_length=12, use_cache=False))
    assert fed == list(range(1, len(fed) + 1))  # without the cache the whole prefix is re-read
    monkeypatch.undo()
    beams = model.generate(**inputs, max_length=12, num_beams=3)  # beams reorder the cached state
    assert beams.shape[0] == 8
    # Teacher-forced logits equal step-by-step logits with the recurrent state.
    labels = tok(text_target=TGT[:2], padding=True, return_tensors="pt")["input_ids"]
    full = model(**inputs_for(inputs, 2), labels=labels).logits
    dec = model.prepare_decoder_input_ids_from_labels(labels)
    past, steps = None, []
    enc = model.get_encoder()(**inputs_for(inputs, 2))
    for t in range(dec.shape[1]):
        o = model(
            attention_mask=inputs["attention_mask"][:2],
            encoder_outputs=enc,
            decoder_input_ids=dec[:, t : t + 1],
            past_key_values=past,
            use_cache=True,
        )
        past = getattr(o, CACHE_FIELD)
        steps.append(o.logits)
    torch.testing.assert_close(torch.cat(steps, 1), full)


def test_lstm_without_attention(tok):
    torch.manual_seed(0)
    model = build_model("lstm", tok, max_positions=16, attention=False, **TINY["lstm"])
    assert model.decoder.attn_combine is None
    losses = _train(model, tok, steps=15)
    assert losses[-1] < 0.8 * losses[0]
    inputs = tok(SRC[:4], padding=True, return_tensors="pt")
    assert torch.equal(model.generate(**inputs), model.generate(**inputs, use_cache=False))


def inputs_for(inputs, n):
    return {k: v[:n] for k, v in inputs.items()}


def test_lstm_with_seq2seq_trainer(tok, tmp_path):
    from datasets import Dataset
    from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments

    ds = Dataset.from_dict({"s": SRC, "t": TGT}).map(
        lambda b: tok(b["s"], text_target=b["t"]), batched=True, remove_columns=["s", "t"]
    )
    torch.manual_seed(0)
    model = build_model("lstm", tok, max_positions=16, **TINY["lstm"])
    args = Seq2SeqTrainingArguments(
        output_dir=str(tmp_path),
        per_device_train_batch_size=16,
        per_device_eval_batch_size=16,
        max_steps=6,
        learning_rate=1e-2,
        report_to="none",
        dataloader_pin_memory=False,
        use_cpu=True,
        save_strategy="no",
        predict_with_generate=True,
        disable_tqdm=True,
    )
    collator = DataCollatorForSeq2Seq(tok, model=model)
    assert (collator([ds[0]])["decoder_input_ids"][0, 0] == BOS_ID).item()
    trainer = Seq2SeqTrainer(
        model=model,
        args=args,
        train_dataset=ds,
        eval_dataset=ds,
        data_collator=collator,
        processing_class=tok,
    )
    trainer.train()
    pred = trainer.predict(ds.select(range(4)))
    assert pred.predictions.shape[0] == 4 and "test_loss" in pred.metrics


# --- loading without hf_recogs -----------------------------------------------------------------------------------


def test_checkpoints_load_without_hf_recogs(trained, tok, tmp_path):
    """Transformer checkpoints need no custom code; the LSTM's code travels with it (auto_map)."""
    expected = {}
    inputs = tok(SRC[:4], padding=True, return_tensors="pt")
    for arch in ARCHITECTURES:
        model = trained[arch][0]
        model.save_pretrained(tmp_path / arch)
        tok.save_pretrained(tmp_path / arch)
        expected[arch] = model.generate(**inputs, max_length=10).tolist()
    auto_map = json.loads((tmp_path / "lstm" / "config.json").read_text())["auto_map"]
    assert auto_map["AutoModelForSeq2SeqLM"] == "modeling_lstm_seq2seq.LstmSeq2SeqForConditionalGeneration"
    assert (tmp_path / "lstm" / "modeling_lstm_seq2seq.py").is_file()
    assert "auto_map" not in json.loads((tmp_path / "transformer" / "config.json").read_text())

    code = textwrap.dedent(
        f"""
        import json, sys
        sys.modules["hf_recogs"] = None  # make sure nothing of ours is imported
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer
        out = {{}}
        for arch in {list(ARCHITECTURES)!r}:
            path = {str(tmp_path)!r} + "/" + arch
            remote = arch == "lstm"
            tok = AutoTokenizer.from_pretrained(path, trust_remote_code=remote)
            model = AutoModelForSeq2SeqLM.from_pretrained(path, trust_remote_code=remote).eval()
            assert not type(model).__module__.startswith("hf_recogs"), type(model).__module__
            inputs = tok({SRC[:4]!r}, padding=True, return_tensors="pt")
            out[arch] = model.generate(**inputs, max_length=10).tolist()
        print(json.dumps(out))
        """
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error"}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == expected


def test_lstm_registered_with_auto_classes():
    from transformers import AutoConfig, AutoModelForSeq2SeqLM

    config = AutoConfig.for_model("lstm_seq2seq", hidden_size=8, vocab_size=10)
    assert isinstance(config, LstmSeq2SeqConfig)
    assert isinstance(AutoModelForSeq2SeqLM.from_config(config), LstmSeq2SeqForConditionalGeneration)


# --- LSTM teacher forcing (Lake & Baroni's SCAN set-up) ------------------------------------------------------------


def test_lstm_free_running_updates_feed_back_greedy_predictions(tok):
    """teacher_forcing_ratio=0: every training forward feeds the decoder its own greedy outputs, which gives the
    logits generate() computes for the same number of steps; ratio 1 is plain teacher forcing."""
    torch.manual_seed(0)
    model = build_model("lstm", tok, attention=False, dropout=0.0, teacher_forcing_ratio=0.0, **TINY["lstm"])
    inputs = tok(SRC[:3], padding=True, return_tensors="pt")
    labels = tok(text_target=TGT[:3], padding=True, return_tensors="pt")["input_ids"]
    labels[labels == PAD_ID] = -100
    steps = labels.shape[1]
    model.train()
    free = model(**inputs, labels=labels).logits
    model.eval()
    with torch.no_grad():
        out = model.generate(**inputs, max_length=steps + 1, min_length=steps + 1, output_logits=True,
                             return_dict_in_generate=True)
        teacher = model(**inputs, labels=labels).logits
    assert torch.allclose(free, torch.stack(out.logits, dim=1), atol=1e-5)
    assert not torch.allclose(free, teacher, atol=1e-3)  # differs from teacher forcing on this untrained model
    model.config.teacher_forcing_ratio = 1.0
    model.train()
    assert torch.allclose(model(**inputs, labels=labels).logits, teacher, atol=1e-5)


def test_lstm_teacher_forcing_ratio_is_a_per_update_draw(tok):
    torch.manual_seed(0)
    model = build_model("lstm", tok, dropout=0.0, teacher_forcing_ratio=0.5, **TINY["lstm"]).train()
    inputs = tok(SRC[:2], padding=True, return_tensors="pt")
    labels = tok(text_target=TGT[:2], padding=True, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        teacher = model.eval()(**inputs, labels=labels).logits
        model.train()
        forced = [torch.allclose(model(**inputs, labels=labels).logits, teacher, atol=1e-5) for _ in range(200)]
    assert 70 <= sum(forced) <= 130, sum(forced)  # Binomial(200, 0.5): outside this range with p < 1e-4
    with pytest.raises(Exception, match="teacher_forcing_ratio must be in"):
        build_model("lstm", tok, teacher_forcing_ratio=1.5)


# --- GRU cell (SyGNS's GRU baseline) -------------------------------------------------------------------------------


def test_gru_cell_trains_caches_and_reloads(tok, tmp_path):
    from transformers import AutoModelForSeq2SeqLM

    torch.manual_seed(0)
    model = build_model("lstm", tok, cell="gru", **{**TINY["lstm"], "encoder_layers": 2, "decoder_layers": 2})
    assert isinstance(model.encoder.rnn, torch.nn.GRU) and isinstance(model.decoder.rnn, torch.nn.GRU)
    # a GRU layer has 3 gates where an LSTM has 4
    lstm = build_model("lstm", tok, **{**TINY["lstm"], "encoder_layers": 2, "decoder_layers": 2})
    h = TINY["lstm"]["hidden_size"]
    assert count_parameters(lstm) - count_parameters(model) == 4 * (h * (h + h) + 2 * h)
    with torch.no_grad():
        before = model.eval()(**_batch(tok)).loss.item()
    losses = _train(model, tok, steps=40)
    assert losses[-1] < 0.5 * before, (before, losses[-1])
    inputs = tok(SRC[:8], padding=True, return_tensors="pt")
    cached = model.generate(**inputs, max_length=12)
    assert torch.equal(cached, model.generate(**inputs, max_length=12, use_cache=False))
    model.save_pretrained(tmp_path)
    loaded = AutoModelForSeq2SeqLM.from_pretrained(tmp_path).eval()
    assert loaded.config.cell == "gru" and torch.equal(loaded.generate(**inputs, max_length=12), cached)
    with pytest.raises(Exception, match="cell must be 'lstm' or 'gru'"):
        build_model("lstm", tok, cell="rnn")
