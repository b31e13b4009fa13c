"""train.py on (input, candidate) classification rows: the structure-masked classifier trains through the same
pipeline as the seq2seq baselines, writes every row's probability, and scores ROC AUC / accuracy / F1 per split,
category and kind of negative. A synthetic task (no mirror): a negative candidate carries a word no positive has,
so a classifier that learns anything separates them."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from hf_recogs.train import ConfigError, main, parse_args

TINY = {"hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 32}


def write_pairs(folder: Path, seed: int = 0) -> dict[str, str]:
    rng = random.Random(seed)
    files = {}
    for split, n in (("train", 240), ("validation", 40), ("test", 40)):
        path = folder / f"{split}.jsonl"
        with open(path, "w") as f:
            for i in range(n):
                words = [rng.choice("abcdef") for _ in range(rng.randint(2, 4))]
                label = i % 2
                candidate = words if label else [*words[:-1], "z"]
                f.write(json.dumps({"input": " ".join(words), "candidate": " ".join(candidate), "label": label,
                                    "category": "short" if len(words) < 4 else "long",
                                    "negative_source": "" if label else "random"}) + "\n")
        files[split] = str(path)
    return files


def write_config(folder: Path, **extra) -> Path:
    import yaml

    config = {"data_files": write_pairs(folder), "metric": "classification", "arch": "structure_encoder",
              "model_overrides": {**TINY, "attention": "none"}, "max_positions": 32, "seeds": [3],
              "learning_rate": 3.0e-3, "per_device_train_batch_size": 16, "per_device_eval_batch_size": 32,
              "num_train_epochs": 6, "warmup_steps": 0.1, "logging_steps": 5, "save_strategy": "no",
              "report_to": "none", "cpu_threads": 1, "eval_splits": ["validation", "test"],
              "output_dir": str(folder / "out"), **extra}
    path = folder / "pairs.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def test_a_classifier_trains_and_scores_every_row(tmp_path):
    from sklearn.metrics import roc_auc_score
    from transformers import AutoModelForSequenceClassification

    cfg = write_config(tmp_path)
    assert main([str(cfg)]) == 0
    seed_dir = tmp_path / "out" / "seed_3"
    res = json.loads((seed_dir / "results.json").read_text())
    test = res["splits"]["test"]
    assert res["metric"] == "classification" and test["primary"] == "roc_auc"
    assert test["roc_auc"] > 0.9, test  # the task is learnable: the classifier learnt it
    rows = [json.loads(line) for line in (seed_dir / "predictions_test.jsonl").open()]
    assert len(rows) == 40 and all(0.0 <= r["probability"] <= 1.0 for r in rows)
    # anyone can recompute the AUC from the predictions file
    assert roc_auc_score([r["label"] for r in rows], [r["probability"] for r in rows]) == pytest.approx(test["roc_auc"])
    assert set(test["per_category"]) == {"short", "long"} and set(test["per_negative_kind"]) == {"random"}
    assert AutoModelForSequenceClassification.from_pretrained(seed_dir).config.attention == "none"
    card = (seed_dir / "README.md").read_text()
    assert "pipeline_tag: text-classification" in card and "| test | negatives: random | 40 |" in card
    assert "AutoModelForSequenceClassification" in card and "generate(" not in card
    # evaluation only gives the same probabilities
    assert main([str(cfg), "do_train=false", f"model_name_or_path={seed_dir}", f"output_dir={tmp_path / 'ev'}",
                 "eval_splits=[test]"]) == 0
    again = [json.loads(line) for line in (tmp_path / "ev" / "evaluation" / "predictions_test.jsonl").open()]
    assert [r["probability"] for r in again] == pytest.approx([r["probability"] for r in rows], abs=1e-5)


def test_evaluate_only_refuses_a_seq2seq_model(tmp_path, capsys):
    """A seq2seq checkpoint under a classification config: Bart loaded as a classifier with a fresh random head,
    then the pair collator crashed with a traceback; now one line, nothing written."""
    seq2seq = Path(__file__).resolve().parents[1] / "results" / "recogs_pos_transformer_fast" / "seed_77"
    assert main([str(write_config(tmp_path)), "do_train=false", f"model_name_or_path={seq2seq}",
                 f"output_dir={tmp_path / 'ev'}"]) == 2
    err = capsys.readouterr().err.strip()
    assert "is a seq2seq model (BartForConditionalGeneration)" in err and "\n" not in err
    assert "config of a seq2seq dataset" in err and not (tmp_path / "ev" / "evaluation").exists()


def test_the_post_ln_sinusoidal_baseline_reads_its_words(tmp_path):
    """The paper's Transformer baseline (post-LN, fixed sinusoidal positions) learns the synthetic task: its
    word vectors are not drowned by the unit-size sinusoids (at a 0.02 init they were, and it stayed at chance)."""
    overrides = {**TINY, "attention": "none", "pre_layer_norm": False, "position_embedding": "sinusoidal"}
    assert main([str(write_config(tmp_path, model_overrides=overrides))]) == 0
    res = json.loads((tmp_path / "out" / "seed_3" / "results.json").read_text())
    assert res["splits"]["test"]["roc_auc"] > 0.9, res["splits"]["test"]["roc_auc"]


def test_the_lstm_classifier_trains_through_train_py_without_relations(tmp_path):
    from transformers import AutoModelForSequenceClassification

    from hf_recogs.train import run as run_module

    seen = []
    collate = run_module.pair_collator

    def spy(exp, tokenizer, model):
        collator = collate(exp, tokenizer, model)
        seen.append(collator.relations)
        return collator

    cfg = write_config(tmp_path, arch="lstm_classifier",
                       model_overrides={"embedding_size": 16, "hidden_size": 16, "num_layers": 1})
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(run_module, "pair_collator", spy)
        assert main([str(cfg)]) == 0
    seed_dir = tmp_path / "out" / "seed_3"
    res = json.loads((seed_dir / "results.json").read_text())
    assert res["arch"] == "lstm_classifier" and res["splits"]["test"]["roc_auc"] > 0.9, res["splits"]["test"]
    assert seen and not any(seen)  # no (length x length) relation labels built for a model that ignores them
    loaded = AutoModelForSequenceClassification.from_pretrained(seed_dir)
    assert type(loaded).__name__ == "LstmClassifierForSequenceClassification"


@pytest.mark.parametrize(("extra", "needle"), [
    ({"arch": "transformer"}, "is a seq2seq model; (input, candidate) classification trains structure_encoder"),
    ({"metric": "sem"}, "is a classifier; it trains on a classification config"),
])
def test_a_model_of_the_other_task_is_one_line(tmp_path, extra, needle):
    cfg = write_config(tmp_path, **extra)
    with pytest.raises(ConfigError) as info:
        parse_args([str(cfg)])
    assert needle in str(info.value)


def test_grouped_order_batches_pairs_of_similar_length(tmp_path):
    """data_order grouped on classification rows: batches of pairs of similar length (less padding), and the
    classifier still learns."""
    from hf_recogs.train import trainer as trainer_module

    orders = []
    sampler_of = trainer_module.BaselineTrainer._get_train_sampler

    def spy(self, train_dataset=None):
        sampler = sampler_of(self, train_dataset)
        lengths = (train_dataset or self.train_dataset)["length"]
        orders.append([lengths[i] for i in iter(sampler)])
        return sampler

    cfg = write_config(tmp_path, data_order="grouped", per_device_train_batch_size=8)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trainer_module.BaselineTrainer, "_get_train_sampler", spy)
        assert main([str(cfg)]) == 0
    res = json.loads((tmp_path / "out" / "seed_3" / "results.json").read_text())
    assert res["hyperparameters"]["data_order"] == "grouped" and res["splits"]["test"]["roc_auc"] > 0.9
    order = orders[0]
    assert len(order) == 240 and set(order) == {4, 6, 8}  # input + candidate words: 2-4 each, the same count
    spread = sum(max(b) - min(b) for b in (order[k:k + 8] for k in range(0, 240, 8))) / 30
    assert spread < 1.5, spread  # random batches of 8 from a third each of 4, 6, 8 spread by about 3.7


def test_classify_batches_by_length_and_answers_in_row_order():
    """Prediction batches are cut from the rows sorted by pair length (less padding), and every probability
    comes back at its own row: the same as classifying each row alone."""
    import torch

    from hf_recogs.models import build_model
    from hf_recogs.tokenization import build_tokenizer
    from hf_recogs.train.data import PairCollator, annotator_of
    from hf_recogs.train.decode import classify

    rng = random.Random(1)
    rows = []
    for _ in range(37):
        words = [rng.choice("abcdef") for _ in range(rng.randint(1, 9))]
        rows.append({"input": " ".join(words), "candidate": " ".join(rng.sample(words, len(words)))})
    tokenizer = build_tokenizer([r["input"] for r in rows], [r["candidate"] for r in rows])
    torch.manual_seed(0)
    model = build_model("structure_encoder", tokenizer, max_positions=32, **TINY, attention="none")
    collator = PairCollator(tokenizer, annotator_of(None), relations=False)  # tokens only, no trees
    seen = []
    calls = collator.__call__
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(PairCollator, "__call__", lambda self, batch: seen.append(batch) or calls(batch))
        batched = classify(model, collator, rows, batch_size=8, shared=False)
    lengths = [[len(r["input"].split()) + len(r["candidate"].split()) for r in batch] for batch in seen]
    assert [n for batch in lengths for n in batch] == sorted(n for batch in lengths for n in batch)
    alone = [classify(model, collator, [row], batch_size=1, shared=False)[0] for row in rows]
    assert batched == pytest.approx(alone, abs=1e-5)
    assert len({round(p, 4) for p in alone}) > 5  # rows the model tells apart, so order matters


@pytest.mark.mirror
def test_recogs_pos_cls_trains_with_its_structure(tmp_path, mirror):
    """The catalogue's classification config with its own annotator: trees and links reach the hard mask, and
    the run records each split's AUC per kind of negative."""
    from hf_recogs.train.data import annotator_of

    source, candidate, links = annotator_of("recogs_pos_cls")("A cat smiled .", "cat ( 1 ) ; smile ( 2 )")
    assert source.tokens[source.n_words:] and candidate.root is not None and (1, 2) in links  # cat ↔ its index
    cfg = write_config(tmp_path, data_files=None, dataset="recogs_pos_cls", metric="auto", num_train_epochs=1,
                       max_train_samples=200, max_eval_samples=60, max_positions=128,
                       eval_splits=["train_holdout", "gen"],
                       model_overrides={**TINY, "attention": "both"})
    assert main([str(cfg)]) == 0
    res = json.loads((tmp_path / "out" / "seed_3" / "results.json").read_text())
    assert set(res["splits"]) == {"train_holdout", "gen"} and res["metric"] == "classification"
    gen = res["splits"]["gen"]
    # its default negatives are the shipped model ones: gen rows get the beams of the generators of the gen halves
    assert gen["n"] == 60 and "structural" in gen["groups"]
    assert set(gen["per_negative_kind"]) == {f"model:{arch}-gen_{half}" for arch in ("transformer_fast", "lstm")
                                             for half in "AB"}


@pytest.mark.mirror
def test_every_declared_annotator_resolves_and_never_fails_on_a_bad_candidate(mirror):
    """(The COGS annotator learns its verb lexicon from recogs_pos train, hence the mirror.)"""
    from hf_recogs.registry import all_configs
    from hf_recogs.train.data import annotator_of

    declared = {name: cfg for name, cfg in all_configs().items() if cfg.structure}
    assert set(declared) >= {"recogs_pos_cls", "cfq_mcd1_cls"}
    for name in declared:
        source, candidate, links = annotator_of(name)("a b c", "( ) not a parse }")
        assert candidate.tokens == ("(", ")", "not", "a", "parse", "}") and candidate.root is None, name


@pytest.mark.mirror
def test_readme_classification_command_through_the_launcher(tmp_path, mirror):
    """README's training command for the classification configs, through the launcher, on a small slice (the
    shipped config trains 10,000 steps): the config file itself, with only sizes overridden."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--num_processes", "1", "--num_machines", "1",
           "--mixed_precision", "no", "--dynamo_backend", "no", str(root / "train.py"),
           str(root / "configs" / "recogs_pos_cls_structure.yaml"), f"output_dir={tmp_path}", "seeds=[42]",
           "max_steps=4", "per_device_train_batch_size=8", "max_train_samples=64", "max_eval_samples=16",
           "eval_splits=[gen]", "eval_strategy=no", "save_strategy=no", "cpu_threads=1",
           "model_overrides={attention: both, num_hidden_layers: 1}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=600,
                          env=dict(os.environ, HF_RECOGS_MIRROR=str(mirror)))
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads((tmp_path / "seed_42" / "results.json").read_text())
    assert res["dataset"] == "recogs_pos_cls" and res["splits"]["gen"]["n"] == 16
