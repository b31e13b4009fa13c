"""train.py / hf_recogs.train / hf_recogs.scoring / hf_recogs.report: argument parsing and its errors, a tiny end-to-end run
(loss goes down, output folder, predictions and per-category metrics, model card), multi-seed aggregation with
bootstrap CIs on numbers checked by hand, resume after SIGKILL, and two-process DDP on CPU (slow).

All training uses a synthetic copy task written into tmp_path (no mirror needed) and a ~20k-parameter model.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

from hf_recogs import report, scoring  # noqa: E402
from hf_recogs.registry import get_config
from hf_recogs.train import ConfigError, parse_args  # noqa: E402

TINY_MODEL = {"d_model": 32, "encoder_layers": 1, "decoder_layers": 1, "encoder_ffn_dim": 64,
              "decoder_ffn_dim": 64, "encoder_attention_heads": 2, "decoder_attention_heads": 2}
GEN_CATEGORIES = ["cp_recursion", "subj_to_obj_common", "pp_recursion"]


def write_copy_task(folder: Path, n_train: int = 320, n_eval: int = 24, seed: int = 0) -> dict[str, str]:
    """Copy task: input 'a c b' → output 'a c b'; gen rows carry three COGS gen category names."""
    rng = random.Random(seed)
    letters = list("abcdefgh")

    def row(category):
        words = [rng.choice(letters) for _ in range(rng.randint(2, 5))]
        return {"input": " ".join(words), "output": " ".join(words), "category": category}

    files = {}
    for split, n in (("train", n_train), ("validation", n_eval), ("test", n_eval), ("gen", n_eval)):
        path = folder / f"{split}.jsonl"
        with open(path, "w") as f:
            for i in range(n):
                cat = GEN_CATEGORIES[i % 3] if split == "gen" else "in_distribution"
                f.write(json.dumps(row(cat)) + "\n")
        files[split] = str(path)
    return files


def write_config(folder: Path, **extra) -> Path:
    import yaml

    config = {
        "data_files": write_copy_task(folder),
        "arch": "transformer",
        "model_overrides": TINY_MODEL,
        "max_positions": 32,
        "metric": "exact",
        "seeds": [7],
        "learning_rate": 3.0e-3,
        "per_device_train_batch_size": 16,
        "per_device_eval_batch_size": 32,
        "num_train_epochs": 2,
        "warmup_steps": 0.1,
        "max_grad_norm": 0,
        "generation_max_length": 16,
        "logging_steps": 5,
        "save_strategy": "no",
        "report_to": "none",
        "cpu_threads": 1,  # robust on shared CI cores (2 threads thrash when the cores are oversubscribed)
        "output_dir": str(folder / "out"),
    }
    config.update(extra)
    path = folder / "tiny.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def write_cogs_like_config(folder: Path, monkeypatch, **extra) -> Path:
    """write_config's copy task run as the catalogue's ``cogs`` config, so with COGS's category groups: training
    reads the copy-task files instead of COGS (no mirror needed)."""
    from dataclasses import replace

    from hf_recogs.train import data, run

    files = write_copy_task(folder)
    monkeypatch.setattr(run, "load_raw_data",
                        lambda exp: data.load_raw_data(replace(exp, dataset=None, data_files=files)))
    return write_config(folder, data_files=None, dataset="cogs", **extra)


# ---------------------------------------------------------------------------------------------------------
# Parsing


def test_yaml_plus_overrides(tmp_path):
    cfg = write_config(tmp_path)
    exp, targs = parse_args([str(cfg), "learning_rate=3e-4", "--num_train_epochs", "5", "seeds=[1, 2]",
                             "model_overrides={d_model: 16}"])
    assert targs.learning_rate == pytest.approx(3e-4)
    assert targs.num_train_epochs == 5
    assert exp.seeds == [1, 2]
    assert exp.model_overrides == {"d_model": 16}
    assert targs.per_device_train_batch_size == 16  # from the YAML
    assert targs.max_grad_norm == 0
    assert exp.metric == "exact" and exp.arch == "transformer"
    assert set(exp.data_files) == {"train", "validation", "test", "gen"}


@pytest.mark.parametrize(
    "extra_yaml, argv, needle",
    [
        ("learning_rat: 0.1\n", [], "unknown option 'learning_rat' (did you mean 'learning_rate'?)"),
        ("", ["--learning_rat", "0.1"], "unknown option '--learning_rat'"),
        ("", ["lerning_rate=0.1"], "unknown option 'lerning_rate' on the command line"),
        ("", ["learning_rate=fast"], "learning_rate"),
        ("", ["num_train_epochs=many"], "num_train_epochs"),
        ("", ["arch=gru"], "arch='gru' is not one of transformer, reference_transformer, lstm, relative_transformer"),
        ("", ["metric=bleu"], "metric='bleu' is not one of"),
        ("", ["loss_weighting=sum"], "loss_weighting='sum' is not one of batch, token"),
        ("", ["eval_splits=[dev]"], "eval_splits: 'dev' not among"),
        ("", ["model_overrides=[1, 2]"], "model_overrides takes a single value (a mapping"),
        ("", ["model_overrides=5"], "model_overrides must be a mapping"),
        ("", ["learning_rate=[1, 2]"], "learning_rate takes a single value"),
        ("", ["max_train_samples=0"], "max_train_samples must be a positive integer"),
        ("", ["dataset=recogs_pos"], "give exactly one of `dataset`"),
        ("", ["early_stopping_patience=3"], "early_stopping_patience needs load_best_model_at_end=true"),
        ("", ["early_stopping_patience=-1"], "early_stopping_patience must be 0 (off) or positive"),
    ],
)
def test_clear_one_line_errors(tmp_path, extra_yaml, argv, needle):
    cfg = write_config(tmp_path)
    if extra_yaml:
        cfg.write_text(cfg.read_text() + extra_yaml)
    with pytest.raises(ConfigError) as info:
        parse_args([str(cfg), *argv])
    message = str(info.value)
    assert needle in message
    assert "\n" not in message


def test_bad_yaml_and_missing_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("arch: transformer\nseeds: [1, 2\nlearning_rate: 1\n")
    with pytest.raises(ConfigError, match=r"bad.yaml:.*line \d+.*invalid YAML") as info:
        parse_args([str(bad)])
    assert "\n" not in str(info.value)
    with pytest.raises(ConfigError, match="not found"):
        parse_args([str(tmp_path / "nope.yaml")])
    listy = tmp_path / "list.yaml"
    listy.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="must be a mapping"):
        parse_args([str(listy)])


def test_unknown_dataset_names_valid_ones(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("dataset: no_such_config\n")
    with pytest.raises(ConfigError, match="unknown hf_recogs config 'no_such_config'"):
        parse_args([str(cfg)])


def test_cli_error_is_one_line_and_exit_2(tmp_path):
    cfg = write_config(tmp_path)
    cfg.write_text(cfg.read_text() + "warmup_ratio: 0.1\n")
    proc = subprocess.run([sys.executable, str(ROOT / "train.py"), str(cfg)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines == [f"train.py: error: {cfg}: unknown option 'warmup_ratio' (did you mean 'warmup_steps'?); "
                     "see `python train.py --help` for the valid options"], proc.stderr


# ---------------------------------------------------------------------------------------------------------
# Metrics and aggregation


def _rec(category, exact, sem=None):
    return {"input": "x", "gold": "y", "prediction": "y" if exact else "z", "category": category,
            "sem": sem, "exact": exact}


def test_summarize_per_category_and_groups():
    records = ([_rec("cp_recursion", True, True)] + [_rec("cp_recursion", False, False)] * 3
               + [_rec("subj_to_obj_common", True, True)] * 2
               + [_rec("prim_to_obj_proper", False, True)] * 2)
    s = scoring.summarize(records, "sem", get_config("cogs").category_groups)
    assert s["n"] == 8 and s["primary"] == "sem_match"
    assert s["exact_match"] == pytest.approx(3 / 8)
    assert s["sem_match"] == pytest.approx(5 / 8)
    assert s["per_category"]["cp_recursion"] == {"n": 4, "exact_match": 0.25, "sem_match": 0.25,
                                                 "sem_undecided": 0}
    assert s["groups"]["structural"]["sem_match"] == pytest.approx(0.25)
    assert s["groups"]["lexical"] == {"n": 4, "exact_match": 0.5, "sem_match": 1.0, "sem_undecided": 0}
    assert s["groups"]["lexical_15"] == {"n": 2, "exact_match": 1.0, "sem_match": 1.0,
                                        "sem_undecided": 0}  # proper nouns left out
    plain = scoring.summarize([_rec("in_distribution", True)], "exact", get_config("cogs").category_groups)
    assert plain["groups"] == {} and plain["sem_match"] is None and plain["primary"] == "exact_match"


def test_score_rows_uses_sem_and_exact():
    from hf_recogs.scoring import score_rows

    golds = ["* cat ( x _ 1 ) ; smile . agent ( x _ 2 , x _ 1 )", "cat ( x _ 1 )"]
    # the first prediction renames the variables consistently: SEM match, not exact
    preds = ["* cat ( x _ 3 ) ; smile . agent ( x _ 2 , x _ 3 )", "dog ( x _ 1 )"]
    recs = score_rows(preds, golds, ["c", "d"], "sem")
    assert [(r["sem"], r["exact"]) for r in recs] == [(True, False), (False, False)]
    assert [r["exact"] for r in score_rows([golds[0], "x"], golds, ["c", "d"], "exact")] == [True, False]
    assert score_rows(preds, golds, ["c", "d"], "exact")[0]["sem"] is None


def test_bootstrap_ci_known_values():
    # identical runs: the CI collapses onto the value
    assert report.bootstrap_ci([50.0, 50.0, 50.0]) == (50.0, 50.0)
    # one run: degenerate interval
    assert report.bootstrap_ci([12.5]) == (12.5, 12.5)
    # two runs 0 and 100: resampled means are 0, 50, 100 with probabilities 1/4, 1/2, 1/4, so the 2.5 % and
    # 97.5 % quantiles are the extremes 0 and 100
    assert report.bootstrap_ci([0.0, 100.0]) == (0.0, 100.0)
    # 20 runs of 0/1: mean 0.5, plug-in sd 0.5, se 0.5/sqrt(20) = 0.1118 → normal approx 0.5 ± 0.219
    low, high = report.bootstrap_ci([0.0, 1.0] * 10)
    assert low == pytest.approx(0.5 - 0.219, abs=0.03) and high == pytest.approx(0.5 + 0.219, abs=0.03)
    # deterministic
    assert report.bootstrap_ci([1, 5, 9]) == report.bootstrap_ci([1, 5, 9])


def _fake_result(seed, cp, subj, test):
    def split(cats):
        per = {c: {"n": 10, "exact_match": v, "sem_match": v} for c, v in cats.items()}
        n = 10 * len(cats)
        mean = sum(cats.values()) / len(cats)
        out = {"n": n, "exact_match": mean, "sem_match": mean, "primary": "sem_match", "per_category": per,
               "groups": {}}
        if "cp_recursion" in cats:
            out["groups"] = {"structural": per["cp_recursion"], "lexical": per["subj_to_obj_common"]}
        return out

    return {"dataset": "toy", "arch": "transformer", "metric": "sem", "seed": seed,
            "splits": {"test": split({"in_distribution": test}),
                       "gen": split({"cp_recursion": cp, "subj_to_obj_common": subj})}}


def test_aggregate_over_seeds(tmp_path):
    results = [_fake_result(1, 0.2, 1.0, 1.0), _fake_result(2, 0.4, 1.0, 1.0), _fake_result(3, 0.6, 0.4, 1.0)]
    agg = report.write_aggregate(tmp_path, results)
    gen = agg["splits"]["gen"]
    assert agg["seeds"] == [1, 2, 3]
    assert gen["per_category"]["cp_recursion"]["mean"] == pytest.approx(40.0)
    assert gen["per_category"]["cp_recursion"]["values"] == [20.0, 40.0, 60.0]
    low, high = gen["per_category"]["cp_recursion"]["ci_low"], gen["per_category"]["cp_recursion"]["ci_high"]
    assert 20.0 <= low < 40.0 < high <= 60.0  # the bootstrap mean of {20, 40, 60} stays within the extremes
    assert gen["groups"]["structural"]["mean"] == pytest.approx(40.0)
    assert gen["groups"]["lexical"]["mean"] == pytest.approx(80.0)
    assert agg["splits"]["test"]["overall"] == {"mean": 100.0, "ci_low": 100.0, "ci_high": 100.0,
                                                "values": [100.0, 100.0, 100.0]}
    md = (tmp_path / "aggregate.md").read_text()
    assert "| *structural* | 40.0 |" in md and "| cp_recursion | 40.0 |" in md
    assert (tmp_path / "aggregate.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((tmp_path / "aggregate.json").read_text())["splits"]["gen"]["overall"]["mean"] == 60.0  # (60 + 70 + 50) / 3


@pytest.mark.parametrize("value, text", [
    (99.95217, "99.95"),   # SCAN seed 88: 4,180 of 4,182 right must not read as a perfect score
    (99.9999, "99.9999"),
    (100.0, "100.0"), (0.0, "0.0"), (40.0, "40.0"), (13.47, "13.5"),
    (0.024, "0.02"),       # above zero must not read as zero
    (None, "–"), (float("nan"), "–"),
])
def test_percent_text_keeps_imperfect_and_non_zero_scores_apart(value, text):
    assert scoring.percent_text(value) == text


def test_percent_text_at_two_decimals_as_the_score_command_prints():
    assert scoring.percent_text(100 * 29_999 / 30_000, decimals=2) == "99.997"  # .2f would say 100.00
    assert scoring.percent_text(100 * 1 / 30_000, decimals=2) == "0.003"
    assert scoring.percent_text(13.47, decimals=2) == "13.47"


def test_card_and_aggregate_do_not_round_an_imperfect_score_to_100(tmp_path):
    near, perfect = _fake_result(1, 0.25, 0.75, 4180 / 4182), _fake_result(2, 0.25, 0.75, 1.0)
    card = str(report.render_model_card(near))
    assert "| test | **all** |" in card and "99.95" in card and "| 100.0 |" not in card
    report.write_aggregate(tmp_path, [near, perfect])
    md = (tmp_path / "aggregate.md").read_text()
    assert "99.98 | [99.95, 100.0] | 99.95, 100.0 |" in md


def test_model_index_carries_the_gen_categories_and_groups():
    import yaml

    card = str(report.render_model_card(_fake_result(1, 0.25, 0.75, 1.0)))
    index = yaml.safe_load(card.split("---")[1])["model-index"][0]["results"]
    values = {(r["dataset"]["split"], m["name"]): m["value"] for r in index for m in r["metrics"]}
    assert values[("gen", "Semantic exact match")] == 50.0
    assert values[("gen", "Semantic exact match (cp_recursion)")] == 25.0
    assert values[("gen", "Semantic exact match (subj_to_obj_common)")] == 75.0
    assert values[("gen", "Semantic exact match (structural)")] == 25.0
    assert values[("test", "Exact match")] == 100.0
    assert not any("in_distribution" in name for _, name in values)  # only the generalization split's categories


@pytest.mark.parametrize("recorded, seed, expected", [
    # a run of a copy of the code elsewhere, with the machine's paths, threads and a resume
    (("accelerate launch train.py code4/configs/scan_length.yaml --seeds 77 --output_dir /root/runs/scan_length_lstm "
      "--cpu_threads 1 --resume_from_checkpoint true"),
     77, "accelerate launch train.py configs/scan_length.yaml --seeds 77"),
    # key=value overrides: the experiment's own options stay, in their order
    (("accelerate launch train.py configs/recogs_pos_transformer_fast.yaml 'seeds=[66]' cpu_threads=2 "
      "arch=relative_transformer resume_from_checkpoint=true output_dir=/tmp/x num_train_epochs=60"),
     66, ("accelerate launch train.py configs/recogs_pos_transformer_fast.yaml --seeds 66 arch=relative_transformer "
          "num_train_epochs=60")),
    # an option with a quoted mapping value, and a --key value option that changes the experiment
    (("accelerate launch train.py configs/scan_simple.yaml --seeds 42 66 --learning_rate 5e-4 "
      "'model_overrides={hidden_size: 200}'"),
     42, ("accelerate launch train.py configs/scan_simple.yaml --seeds 42 --learning_rate 5e-4 "
          "'model_overrides={hidden_size: 200}'")),
    # a GPU run: its decoding batch and progress-bar switch were set for that machine
    (("accelerate launch train.py configs/cogs_transformer_fast.yaml --seeds 66 --output_dir /tmp/runs/cogs "
      "--per_device_eval_batch_size 512 --disable_tqdm true"),
     66, "accelerate launch train.py configs/cogs_transformer_fast.yaml --seeds 66"),
    # TF32 exists only on recent NVIDIA GPUs: the card names it beside the GPU instead
    (("accelerate launch train.py configs/recogs_pos_transformer_fast.yaml --seeds 88 --loss_weighting token "
      "--num_train_epochs 60 --tf32 true --output_dir /tmp/runs/x"),
     88, ("accelerate launch train.py configs/recogs_pos_transformer_fast.yaml --seeds 88 --loss_weighting token "
          "--num_train_epochs 60")),
    # argparse's --key=value spelling: a machine's option is dropped, an experiment's kept as written
    (("accelerate launch train.py configs/scan_simple.yaml --output_dir=/tmp/runs/x --learning_rate=5e-4 "
      "--cpu_threads=1"),
     42, "accelerate launch train.py configs/scan_simple.yaml --seeds 42 --learning_rate=5e-4"),
])
def test_card_reproduce_command_drops_what_only_one_machine_needs(recorded, seed, expected):
    assert report.reproduce_command({"command": recorded, "seed": seed}) == expected


def test_card_says_which_commit_trained_the_model():
    result = _fake_result(3, 0.25, 0.75, 1.0)
    result["command"] = "accelerate launch train.py code4/configs/toy.yaml --seeds 3 --output_dir /root/runs/toy"
    result["environment"] = {"git_commit": "02d83c42b08aa5667dd32cd3a2d73edfeef311c3"}
    card = str(report.render_model_card(result))
    assert "commit `02d83c42b08aa5667dd32cd3a2d73edfeef311c3`" in card
    assert "accelerate launch train.py configs/toy.yaml --seeds 3\n" in card
    assert "/root/runs" not in card and "code4" not in card
    assert "not committed" not in card
    result["environment"]["git_dirty"] = True  # a run of a working tree with changes says so
    assert "plus changes that were not committed" in str(report.render_model_card(result))


def test_card_carries_the_licence_of_the_data_its_predictions_quote():
    """A published folder's predictions quote its dataset's rows: share-alike data keeps its licence."""
    import yaml

    def licence(dataset):
        card = str(report.render_model_card({**_fake_result(3, 0.25, 0.75, 1.0), "dataset": dataset}))
        return yaml.safe_load(card.split("---\n")[1])["license"], card

    assert licence("sygns_systematicity_one")[0] == "cc-by-sa-4.0"
    assert licence("cfq_mcd1_cls")[0] == "cc-by-sa-3.0"
    assert licence("recogs_pos")[0] == "mit" and licence("scan_simple")[0] == "bsd-3-clause"
    assert "shared under the data's licence, CC-BY-SA-4.0" in licence("sygns_systematicity_one")[1]
    assert licence("toy")[0] == "other"  # data_files: a licence we do not know


def test_card_gives_a_gpu_run_its_gpu_and_a_cpu_run_its_thread_hours():
    result = _fake_result(3, 0.25, 0.75, 1.0)
    result["train"] = {"global_step": 8520, "time": {"wall_s": 344.4, "cpu_thread_s": 344.4, "parts": [
        {"from_step": 0, "to_step": 8520, "wall_s": 344.4, "threads": 1, "processes": 1}]}}
    result["environment"] = {"cuda": "NVIDIA H100 80GB HBM3"}
    card = str(report.render_model_card(result))
    assert "8520 optimisation steps in 5.7 min of training (on one NVIDIA H100 80GB HBM3)" in card
    assert "thread-hours" not in card
    result["command"] = "accelerate launch train.py configs/x.yaml --tf32 true"
    assert "(on one NVIDIA H100 80GB HBM3, TF32 matmuls)" in str(report.render_model_card(result))
    result["command"] = "accelerate launch train.py configs/x.yaml tf32=false"
    assert "(on one NVIDIA H100 80GB HBM3)" in str(report.render_model_card(result))
    # set in a config file, it is only in the recorded hyper-parameters
    result["hyperparameters"] = {**result.get("hyperparameters", {}), "tf32": True}
    assert "(on one NVIDIA H100 80GB HBM3, TF32 matmuls)" in str(report.render_model_card(result))
    result["environment"] = {"cuda": None}
    result["train"]["time"] = {"wall_s": 7200.0, "cpu_thread_s": 14400.0, "parts": [
        {"from_step": 0, "to_step": 8520, "wall_s": 7200.0, "threads": 2, "processes": 1}]}
    assert "in 120.0 min of training (4.00 CPU thread-hours)" in str(report.render_model_card(result))


def test_card_of_an_older_results_file_still_explains_its_groups():
    """results.json files written before summaries recorded how their groups display (the published seed 66 of
    ReCOGS_pos): a re-rendered card takes the explanation from the dataset's config instead of dropping it."""
    result = _fake_result(3, 0.25, 0.75, 1.0)
    result["dataset"] = "recogs_pos"
    assert "group_display" not in result["splits"]["gen"]
    card = str(report.render_model_card(result))
    assert "structural = `obj_pp_to_subj_pp`, `cp_recursion`, `pp_recursion`" in card
    assert "group_display" not in result["splits"]["gen"]  # the caller's dict is left as it was


# ---------------------------------------------------------------------------------------------------------
# End to end (in process)


def test_train_end_to_end_two_seeds(tmp_path):
    from hf_recogs.train import main

    cfg = write_config(tmp_path, seeds=[7, 8], save_strategy="no")
    assert main([str(cfg)]) == 0
    out = tmp_path / "out"
    for seed in (7, 8):
        d = out / f"seed_{seed}"
        for name in ("config.json", "model.safetensors", "generation_config.json", "tokenizer.json",
                     "tokenizer_config.json", "results.json", "per_category.png", "README.md",
                     "predictions_validation.jsonl", "predictions_test.jsonl", "predictions_gen.jsonl"):
            assert (d / name).is_file(), name
        res = json.loads((d / "results.json").read_text())
        losses = [h["loss"] for h in res["train"]["loss_history"]]
        assert len(losses) >= 3 and losses[-1] < losses[0] - 0.3, losses  # a few steps lower the loss
        gen = res["splits"]["gen"]
        assert gen["n"] == 24 and set(gen["per_category"]) == set(GEN_CATEGORIES)
        assert gen["groups"] == {}  # data_files have no catalogue entry: no groups, whatever the category names
        rows = [json.loads(line) for line in (d / "predictions_gen.jsonl").read_text().splitlines()]
        assert len(rows) == 24 and set(rows[0]) == {"input", "gold", "prediction", "category", "sem", "exact"}
        assert gen["exact_match"] == pytest.approx(sum(r["exact"] for r in rows) / 24)
        cp = [r for r in rows if r["category"] == "cp_recursion"]
        assert gen["per_category"]["cp_recursion"]["exact_match"] == pytest.approx(sum(r["exact"] for r in cp) / 8)
        card = (d / "README.md").read_text()
        assert card.startswith("---\n") and "model-index:" in card and "per_category.png" in card
        assert "exact_match" in card and f"seed {seed}" in card.lower() or f"Seed: {seed}" in card
    assert (out / "aggregate.json").is_file() and (out / "aggregate.md").is_file()
    assert json.loads((out / "aggregate.json").read_text())["seeds"] == [7, 8]
    # A second run finds both seeds done and only re-aggregates.
    before = (out / "seed_7" / "model.safetensors").stat().st_mtime_ns
    assert main([str(cfg)]) == 0
    assert (out / "seed_7" / "model.safetensors").stat().st_mtime_ns == before


def test_grouped_data_order_learns_and_keeps_predictions_aligned(tmp_path):
    # Length-grouped training must not reorder evaluation: a learnt copy task then scores near 100 %, while
    # predictions paired with the wrong rows would score near 0 (a bug transformers 5 invites, fixed in run_seed).
    from hf_recogs.train import main

    model = {**TINY_MODEL, "d_model": 64, "encoder_ffn_dim": 128, "decoder_ffn_dim": 128}
    cfg = write_config(tmp_path, seeds=[7], data_order="grouped", num_train_epochs=30, model_overrides=model)
    assert main([str(cfg)]) == 0
    res = json.loads((tmp_path / "out" / "seed_7" / "results.json").read_text())
    assert res["hyperparameters"]["data_order"] == "grouped"
    assert res["hyperparameters"]["train_sampling_strategy"] == "group_by_length"
    assert res["splits"]["validation"]["exact_match"] >= 0.9, res["splits"]["validation"]
    rows = [json.loads(line) for line in (tmp_path / "out" / "seed_7" / "predictions_validation.jsonl").open()]
    assert sum(r["prediction"] == r["input"] for r in rows) >= 0.9 * len(rows)  # copy task: output = input


# ---------------------------------------------------------------------------------------------------------
# Resume and DDP (subprocesses)


@pytest.mark.slow
def test_resume_after_sigkill_matches_uninterrupted(tmp_path):
    from bench.resume_check import check_resume

    report = check_resume(tmp_path, timeout=240)
    assert report["killed_after_checkpoint"], report
    assert report["same_metrics"], report
    assert report["same_loss"], report


@pytest.mark.slow
def test_ddp_two_processes_cpu(tmp_path):
    """``accelerate launch --multi_gpu --num_processes 2`` on a CPU-only machine: gloo DDP, sharded data,
    gathered predictions in dataset order (checked against decoding the saved model in this process)."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("checks the CPU (gloo) path")
    cfg = write_config(tmp_path, num_train_epochs=6, per_device_eval_batch_size=5, learning_rate=1.0e-2)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
           "--main_process_port", "0", str(ROOT / "train.py"), str(cfg)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    d = tmp_path / "out" / "seed_7"
    res = json.loads((d / "results.json").read_text())
    assert res["hyperparameters"]["world_size"] == 2
    # 320 rows, 16 per process, 2 processes: 10 steps per epoch
    assert res["train"]["global_step"] == 60
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(d)
    model = AutoModelForSeq2SeqLM.from_pretrained(d).eval()
    for split in ("validation", "gen"):
        rows = [json.loads(line) for line in (d / f"predictions_{split}.jsonl").read_text().splitlines()]
        assert len(rows) == 24  # none missing, none duplicated
        gold_inputs = [json.loads(line)["input"] for line in (tmp_path / f"{split}.jsonl").read_text().splitlines()]
        assert [r["input"] for r in rows] == gold_inputs
        enc = tok([r["input"] for r in rows], return_tensors="pt", padding=True, return_token_type_ids=False)
        with torch.no_grad():
            ids = model.generate(**enc, max_length=16)
        preds = [" ".join(t.split()) for t in tok.batch_decode(ids, skip_special_tokens=True)]
        assert len(set(preds)) >= 2, preds  # the check below is meaningful only with varied predictions
        assert preds == [r["prediction"] for r in rows]


@pytest.mark.mirror
def test_smoke_config_runs(tmp_path, mirror):
    """configs/smoke.yaml (the README's first command) on a smaller slice: loads recogs_pos from the mirror,
    trains, decodes and scores validation/test/gen with SEM."""
    from hf_recogs.train import main

    out = tmp_path / "smoke"
    assert main([str(ROOT / "configs" / "smoke.yaml"), f"output_dir={out}", "max_train_samples=64",
                 "max_eval_samples=12", "generation_max_length=24", "cpu_threads=1"]) == 0
    res = json.loads((out / "seed_42" / "results.json").read_text())
    assert res["dataset"] == "recogs_pos" and res["metric"] == "sem"
    assert {s: v["n"] for s, v in res["splits"].items()} == {"validation": 12, "test": 12, "gen": 12}
    assert res["splits"]["gen"]["sem_match"] is not None and res["splits"]["gen"]["per_category"]


def test_paper_configs_parse():
    """Every shipped config parses (dataset names registered, values valid) and the paper set-ups carry the
    hyper-parameters of docs/TRAINING.md, "Paper set-ups"."""
    configs = sorted((ROOT / "configs").glob("*.yaml"))
    assert len(configs) >= 10
    for cfg in configs:
        exp, targs = parse_args([str(cfg)])
        assert targs.output_dir.startswith("outputs/")
    exp, targs = parse_args([str(ROOT / "configs" / "recogs_pos_transformer.yaml")])
    assert (targs.learning_rate, targs.per_device_train_batch_size, targs.num_train_epochs) == (1e-4, 128, 300)
    assert (targs.warmup_steps, targs.weight_decay, targs.max_grad_norm) == (0.1, 0.01, 0)
    assert exp.seeds == [42, 66, 77, 88, 99] and exp.data_order == "fixed" and exp.decay_all_parameters
    exp, targs = parse_args([str(ROOT / "configs" / "recogs_pos_lstm.yaml")])
    assert (exp.arch, targs.learning_rate, targs.per_device_train_batch_size) == ("lstm", 8e-4, 512)
    exp, _ = parse_args([str(ROOT / "configs" / "scan_length.yaml")])
    assert exp.metric == "exact"
    # the model overrides of every config are accepted by build_model
    from hf_recogs.models import build_model
    from hf_recogs.tokenization import build_tokenizer

    pairs = (["a b"], ["b ( 1 ) ; a ( 0 , 1 )"])  # position tokens: the pointer models need them
    tok = build_tokenizer(*pairs)
    for cfg in configs:
        exp, _ = parse_args([str(cfg)])
        assert build_model(exp.arch, tok, max_positions=exp.max_positions, training_pairs=pairs,
                           **exp.model_overrides) is not None


@pytest.mark.parametrize("seed", [42, 77])
def test_best_structure_config_trains_the_published_runs(seed):
    """configs/recogs_pos_structure_best_transformer_fast.yaml is what the README's best structure rows trained:
    every option its published seeds recorded, except those of the machine, equals the config's."""
    run = ROOT / "results" / ("recogs_pos_structure_pointer_keys_sides_coverage_relative_arity_heads_copy_lexicon_"
                              f"named_words_both_transformer_fast/seed_{seed}/results.json")
    recorded = json.loads(run.read_text())["hyperparameters"]
    exp, targs = parse_args([str(ROOT / "configs" / "recogs_pos_structure_best_transformer_fast.yaml")])
    ours = {**vars(targs), **vars(exp)}
    machine = {"bf16", "cpu_threads", "seeds", "data_seed", "world_size", "optim", "tf32", "per_device_eval_batch_size",
               "train_sampling_strategy"}  # the last one is set by the run from data_order, which is compared
    compared = sorted(set(recorded) - machine)
    assert len(compared) > 30 and "model_overrides" in compared
    assert {k: ours[k] for k in compared} == {k: recorded[k] for k in compared}


def test_resume_skips_incomplete_checkpoint(tmp_path):
    """A run killed while saving leaves checkpoint-<n> without trainer_state.json: resume uses the one before."""
    from hf_recogs.train.run import resume_target as _resume_target

    for step, state in ((5, "{}"), (10, "{}"), (15, None), (20, '{"trunc')):
        d = tmp_path / f"checkpoint-{step}"
        d.mkdir()
        if state is not None:
            (d / "trainer_state.json").write_text(state)
    assert _resume_target("true", tmp_path, 1) == str(tmp_path / "checkpoint-10")
    assert _resume_target(None, tmp_path, 1) is None
    assert _resume_target("true", tmp_path / "fresh", 3) is None  # nothing to resume: start from scratch
    with pytest.raises(ConfigError, match="must be `true`"):
        _resume_target(str(tmp_path / "checkpoint-5"), tmp_path, 2)


# ---------------------------------------------------------------------------------------------------------
# Evaluation-only runs, learning curves, source gap, bf16


def test_evaluate_only_reproduces_the_training_runs_predictions(tmp_path):
    """do_train=false decodes a saved model: same predictions as the run that trained it, nothing retrained."""
    from hf_recogs.train import main

    cfg = write_config(tmp_path, num_train_epochs=4)
    assert main([str(cfg)]) == 0
    trained = tmp_path / "out" / "seed_7"
    weights = (trained / "model.safetensors").stat().st_mtime_ns
    assert main([str(cfg), "do_train=false", f"model_name_or_path={trained}", f"output_dir={tmp_path / 'ev'}",
                 "eval_splits=[validation, gen]"]) == 0
    ev = tmp_path / "ev" / "evaluation"
    res = json.loads((ev / "results.json").read_text())
    assert res["train"] is None and res["evaluated_model"] == str(trained)
    # how the scored model trained comes with the evaluation, from the model folder's own record
    own = json.loads((trained / "results.json").read_text())
    assert res["model_record"]["train"] == own["train"] and "splits" not in res["model_record"]
    assert set(res["splits"]) == {"validation", "gen"}
    for split in ("validation", "gen"):
        ours = [json.loads(line) for line in (ev / f"predictions_{split}.jsonl").open()]
        before = [json.loads(line) for line in (trained / f"predictions_{split}.jsonl").open()]
        assert [r["prediction"] for r in ours] == [r["prediction"] for r in before]
    assert (trained / "model.safetensors").stat().st_mtime_ns == weights
    assert not (ev / "model.safetensors").exists()


def test_evaluate_only_ignores_the_configs_training_time_evaluations(tmp_path):
    """A config that evaluates during training (eval_strategy=steps, as the fast recipes do) evaluates a saved
    model with do_train=false: the Trainer would refuse eval_strategy without an eval_dataset."""
    from hf_recogs.train import main

    cfg = write_config(tmp_path, eval_strategy="steps", eval_steps=10, curve_samples=4)
    assert main([str(cfg)]) == 0
    assert main([str(cfg), "do_train=false", f"model_name_or_path={tmp_path / 'out' / 'seed_7'}",
                 f"output_dir={tmp_path / 'ev'}", "eval_splits=[gen]"]) == 0
    res = json.loads((tmp_path / "ev" / "evaluation" / "results.json").read_text())
    assert set(res["splits"]) == {"gen"} and res["splits"]["gen"]["n"] == 24


@pytest.mark.mirror
def test_readme_evaluation_command_on_the_published_fast_model(tmp_path, mirror):
    """README's evaluation-only command, through the launcher, on the published model of the fast recipe."""
    model = ROOT / "results" / "recogs_pos_transformer_fast" / "seed_77"
    env = dict(os.environ, HF_RECOGS_MIRROR=str(mirror))
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--num_processes", "1", "--num_machines", "1",
           "--mixed_precision", "no", "--dynamo_backend", "no", str(ROOT / "train.py"),
           str(ROOT / "configs" / "recogs_pos_transformer_fast.yaml"), "do_train=false",
           f"model_name_or_path={model}", f"output_dir={tmp_path}", "eval_splits=[validation]",
           "max_eval_samples=200"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads((tmp_path / "evaluation" / "results.json").read_text())
    assert res["splits"]["validation"]["n"] == 200
    # labelled with the model's own seed, decoded in the precision it trained in (fp32), whatever this CPU has:
    # so its predictions are the published ones, row for row (under bf16, 12 of 300 gen rows differed)
    assert res["seed"] == 77 and res["mixed_precision"] == "no" and res["evaluated_model"] == str(model)
    import gzip

    with gzip.open(model / "predictions_validation.jsonl.gz", "rt", encoding="utf-8") as f:
        published = {r["input"]: r["prediction"] for r in map(json.loads, f)}
    ours = [json.loads(line) for line in (tmp_path / "evaluation" / "predictions_validation.jsonl").open()]
    assert [r["prediction"] for r in ours] == [published[r["input"]] for r in ours]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["do_train=false"], "do_train=false evaluates a trained model: add model_name_or_path"),
        (["model_name_or_path=x"], "model_name_or_path is for evaluation only: add do_train=false"),
        (["load_best_model_at_end=true", "metric_for_best_model=eval_gen_exact_match", "eval_strategy=steps",
          "save_strategy=steps"], "would select the model on gen/test"),
        (["cpu_bf16=maybe"], "cpu_bf16='maybe' is not one of auto, true, false"),
        (["learning_rate=-1e-3"], "learning_rate=-0.001 must not be negative"),
        (["adam_beta2=1.0"], "adam_beta2=1.0 must be at least 0 and below 1"),
        (["weight_decay=-0.1"], "weight_decay=-0.1 must not be negative"),
        (["curve_splits=[dev]"], "curve_splits: 'dev' not among"),
    ],
)
def test_evaluation_option_errors(tmp_path, argv, needle):
    with pytest.raises(ConfigError, match=None) as info:
        parse_args([str(write_config(tmp_path)), *argv])
    assert needle in str(info.value)


def test_evaluate_only_with_a_missing_model_is_one_line(tmp_path, capsys):
    from hf_recogs.train import main

    assert main([str(write_config(tmp_path)), "do_train=false", f"model_name_or_path={tmp_path / 'nope'}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("train.py: error: model_name_or_path=") and "\n" not in err


def test_evaluate_only_refuses_a_classifier_under_a_seq2seq_config(tmp_path, capsys):
    """The published ReCOGS_pos classifier given to a seq2seq config: one line naming the kind of config to use
    (it was "Unrecognized configuration class ... for this kind of AutoModel"), nothing written."""
    from hf_recogs.train import main

    classifier = ROOT / "results" / "recogs_pos_cls_hard_links" / "seed_42"
    assert main([str(write_config(tmp_path)), "do_train=false", f"model_name_or_path={classifier}",
                 f"output_dir={tmp_path / 'ev'}"]) == 2
    err = capsys.readouterr().err.strip()
    assert "is an (input, candidate) classifier" in err and "config of a *_cls dataset" in err and "\n" not in err
    assert not (tmp_path / "ev" / "evaluation").exists()


def test_learning_curves_and_source_gap_are_logged(tmp_path, monkeypatch):
    """eval_strategy=steps: every evaluation logs validation loss, source gap and SEM/EM on fixed samples of
    validation and gen (with the scores of the config's category groups), into results.json, curves.jsonl,
    curves.png."""
    from hf_recogs.train import main

    cfg = write_cogs_like_config(tmp_path, monkeypatch, num_train_epochs=6, eval_strategy="steps", eval_steps=40,
                                 curve_samples=9, learning_rate=1.0e-2)
    assert main([str(cfg)]) == 0
    d = tmp_path / "out" / "seed_7"
    res = json.loads((d / "results.json").read_text())
    curves = res["train"]["curves"]
    assert [c["step"] for c in curves] == [40, 80, 120]
    for c in curves:
        assert {"eval_loss", "eval_source_gap", "eval_validation_exact_match", "eval_gen_exact_match",
                "eval_gen_structural_exact_match"} <= set(c)
    # a copy task is learnt from the source: the gap grows and the curve samples improve
    assert curves[-1]["eval_source_gap"] > 1.0 and curves[-1]["eval_validation_exact_match"] > 0.5
    lines = [json.loads(line) for line in (d / "curves.jsonl").open()]
    assert [row["step"] for row in lines] == [40, 80, 120]
    assert (d / "curves.png").stat().st_size > 10_000
    # the early source checks (step 0 and 50, 100) are in results.json
    assert [h["step"] for h in res["train"]["source_gap_history"]][:3] == [0, 50, 100]
    # the final scores have the cogs config's groups, and record each category's
    gen = res["splits"]["gen"]
    assert list(gen["groups"]) == ["lexical", "structural", "lexical_15"]
    assert gen["category_groups"] == {"cp_recursion": ["structural"], "pp_recursion": ["structural"],
                                      "subj_to_obj_common": ["lexical", "lexical_15"]}
    assert res["splits"]["test"]["groups"] == {} and res["splits"]["test"]["category_groups"] == {
        "in_distribution": []}


def test_source_monitor_warns_only_when_outputs_are_learnt_without_the_source(monkeypatch, caplog):
    from types import SimpleNamespace

    from hf_recogs.train import trainer as training

    readings = iter([(6.0, 0.0), (2.0, 0.3), (2.0, 0.001), (2.5, 0.0), (2.0, 0.0)])
    monkeypatch.setattr(training, "source_gap", lambda *a, **k: next(readings))
    monitor = training.SourceUseMonitor(batches=[], bf16=False)
    state = SimpleNamespace(global_step=0, log_history=[], is_world_process_zero=True)
    with caplog.at_level("WARNING", logger="hf_recogs.train"):
        monitor.check(None, state)  # step 0: initial loss 6.0
        monitor.check(None, state)  # learnt, uses the source: fine
        assert not caplog.records
        monitor.check(None, state)  # loss 2.0 < 3.0 and gap 0.001: collapse
        assert len(caplog.records) == 1 and "IGNORES ITS SOURCE" in caplog.records[0].getMessage()
        monitor.check(None, state)  # warned once only
        monitor.check(None, state)
    assert len(caplog.records) == 1
    assert [h["source_gap"] for h in state.log_history] == [0.0, 0.3, 0.001, 0.0, 0.0]
    early = training.SourceUseMonitor(batches=[], bf16=False)
    readings = iter([(6.0, 0.0), (3.5, 0.0)])  # not yet learnt (paper schedule, tiny lr): no warning
    with caplog.at_level("WARNING", logger="hf_recogs.train"):
        early.check(None, state)
        early.check(None, state)
    assert len(caplog.records) == 1


def test_bf16_on_cpu_is_automatic_and_recorded(tmp_path):
    from hf_recogs.train import main
    from hf_recogs.train.hardware import cpu_has_native_bf16

    cfg = write_config(tmp_path, num_train_epochs=1, eval_splits=["validation"])
    assert main([str(cfg)]) == 0
    res = json.loads((tmp_path / "out" / "seed_7" / "results.json").read_text())
    assert res["bf16"] is cpu_has_native_bf16() and res["hyperparameters"]["bf16"] is res["bf16"]
    assert main([str(cfg), "cpu_bf16=false", "overwrite_output_dir=true"]) == 0
    res = json.loads((tmp_path / "out" / "seed_7" / "results.json").read_text())
    assert res["bf16"] is False and res["hyperparameters"]["cpu_bf16"] == "false"


@pytest.mark.parametrize("setting, dtype", [("true", "torch.bfloat16"), ("false", "torch.float32")])
def test_training_steps_run_in_the_recorded_precision(tmp_path, monkeypatch, setting, dtype):
    # Setting TrainingArguments.bf16 after construction once recorded bf16 while every step ran in fp32
    # (the Accelerator reads mixed_precision): watch the dtype of the logits of the training steps themselves.
    import hf_recogs.models
    from hf_recogs.train import main

    seen = set()
    build = hf_recogs.models.build_model

    def build_and_watch(*args, **kwargs):
        model = build(*args, **kwargs)
        head = model.get_output_embeddings()
        head.register_forward_hook(lambda mod, inp, out: seen.add(str(out.dtype)) if mod.training else None)
        return model

    monkeypatch.setattr(hf_recogs.models, "build_model", build_and_watch)
    cfg = write_config(tmp_path, num_train_epochs=1, max_train_samples=64, eval_splits=["validation"])
    assert main([str(cfg), f"cpu_bf16={setting}"]) == 0
    res = json.loads((tmp_path / "out" / "seed_7" / "results.json").read_text())
    assert seen == {dtype}
    assert res["mixed_precision"] == ("bf16" if setting == "true" else "no")


def test_tensorboard_logging_writes_events(tmp_path):
    # report_to: tensorboard works after `pip install hf-recogs[tensorboard]` (the test extra includes it)
    from hf_recogs.train import main

    cfg = write_config(tmp_path, num_train_epochs=1, max_train_samples=64, eval_splits=["validation"],
                       report_to="tensorboard")
    assert main([str(cfg)]) == 0
    assert list((tmp_path / "out").rglob("events.out.tfevents.*"))


def test_grouped_batches_follow_source_plus_target_length(tmp_path):
    """The Trainer alone groups by source length; ours by source + target tokens (decoder cost)."""
    import datasets
    from transformers import Seq2SeqTrainingArguments

    from hf_recogs.models import build_model
    from hf_recogs.tokenization import build_tokenizer
    from hf_recogs.train.data import tokenize_dataset
    from hf_recogs.train.trainer import BaselineTrainer

    # sources all of one length, targets of very different lengths: only target-aware grouping sorts them
    rows = [{"input": "a b", "output": " ".join(["c"] * (1 + (i * 7) % 40)), "category": "x"} for i in range(256)]
    ds = datasets.Dataset.from_list(rows)
    tok = build_tokenizer(ds["input"], ds["output"])
    tokenized = tokenize_dataset(ds, tok, 64)
    args = Seq2SeqTrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=8, use_cpu=True,
                                    train_sampling_strategy="group_by_length", report_to="none")
    trainer = BaselineTrainer(model=build_model("transformer", tok, **TINY_MODEL), args=args,
                               train_dataset=tokenized, processing_class=tok)
    order = list(iter(trainer._get_train_sampler()))
    lengths = tokenized["length"]
    batches = [[lengths[i] for i in order[k : k + 8]] for k in range(0, 256, 8)]
    spread = sum(max(b) - min(b) for b in batches) / len(batches)
    assert spread < 6, spread  # random batches of these lengths spread by ~30


def test_token_loss_weighting_counts_every_target_token_the_same(tmp_path):
    """loss_weighting token: a batch's loss is its summed token cross-entropy over the training set's mean tokens
    per batch, so a batch of long targets outweighs one of short targets; the default stays the batch mean."""
    import datasets
    import torch
    import torch.nn.functional as F
    from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainingArguments

    from hf_recogs.models import build_model
    from hf_recogs.tokenization import build_tokenizer
    from hf_recogs.train.data import tokenize_dataset, tokens_per_batch
    from hf_recogs.train.trainer import BaselineTrainer

    rows = [{"input": "a b", "output": " ".join(["c"] * n), "category": "x"} for n in (1, 1, 9, 9)]
    ds = datasets.Dataset.from_list(rows)
    tok = build_tokenizer(ds["input"], ds["output"])
    tokenized = tokenize_dataset(ds, tok, 64)
    label_lengths = [len(labels) for labels in tokenized["labels"]]
    assert label_lengths[2] - label_lengths[0] == 8  # one label per target word, plus the same specials
    args = Seq2SeqTrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=2, use_cpu=True,
                                    report_to="none")
    per_batch = tokens_per_batch(tokenized, args.per_device_train_batch_size)
    assert per_batch == pytest.approx(sum(label_lengths) / 4 * 2)
    model = build_model("transformer", tok, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
                        **TINY_MODEL)
    model.train()
    collate = DataCollatorForSeq2Seq(tok, model=model, label_pad_token_id=-100, padding=True)
    token_trainer = BaselineTrainer(model=model, args=args, processing_class=tok, tokens_per_batch=per_batch)
    batch_trainer = BaselineTrainer(model=model, args=args, processing_class=tok)
    for pair in ([0, 1], [2, 3]):
        batch = collate([{k: tokenized[i][k] for k in ("input_ids", "attention_mask", "labels")} for i in pair])
        labels = batch["labels"]
        with torch.no_grad():
            logits = model(**batch).logits
            summed = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-100, reduction="sum")
            token_loss = token_trainer.compute_loss(model, dict(batch))
            batch_loss = batch_trainer.compute_loss(model, dict(batch))
        n_tokens = int((labels != -100).sum())
        assert token_loss.item() == pytest.approx(summed.item() / per_batch, rel=1e-5)
        assert batch_loss.item() == pytest.approx(summed.item() / n_tokens, rel=1e-5)


def test_reference_transformer_trains_end_to_end(tmp_path):
    """The paper configs' model (BERT2BERT EncoderDecoderModel) through train.py: learns the copy task, saves a
    checkpoint that AutoModelForSeq2SeqLM reloads, and writes its model card."""
    from transformers import AutoModelForSeq2SeqLM

    from hf_recogs.train import main

    tiny = {"hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 128}
    cfg = write_config(tmp_path, arch="reference_transformer", model_overrides=tiny, num_train_epochs=30,
                       learning_rate=3.0e-3, eval_splits=["validation"])
    assert main([str(cfg)]) == 0
    d = tmp_path / "out" / "seed_7"
    res = json.loads((d / "results.json").read_text())
    assert res["arch"] == "reference_transformer" and res["splits"]["validation"]["exact_match"] >= 0.9
    assert type(AutoModelForSeq2SeqLM.from_pretrained(d)).__name__ == "EncoderDecoderModel"
    assert "reference_transformer" in (d / "README.md").read_text()


def test_missing_upstream_data_is_one_line(tmp_path, no_mirror, capsys, monkeypatch):
    """Offline without mirror or cache: one line naming the file and the fix, exit 2, no traceback."""
    from hf_recogs.train import main

    monkeypatch.setenv("HF_RECOGS_CACHE", str(tmp_path / "cache"))
    cfg = write_config(tmp_path)
    text = cfg.read_text().split("\n")
    import yaml

    values = yaml.safe_load("\n".join(text))
    values.pop("data_files")
    values["dataset"] = "scan_simple"
    cfg.write_text(yaml.safe_dump(values))
    assert main([str(cfg)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("train.py: error: hf_recogs: ") and "HF_RECOGS_MIRROR" in err and "\n" not in err


def test_early_stopping_keeps_the_best_validation_model(tmp_path):
    """early_stopping_patience stops after that many evaluations without a better validation loss and keeps the
    best epoch's model: with a learning rate of 0 nothing improves after the first evaluation, so a 6-epoch run
    stops after 1 + 2 epochs and scores the first epoch's model."""
    from hf_recogs.train import main

    cfg = write_config(tmp_path, num_train_epochs=6, learning_rate=0.0, eval_strategy="epoch", save_strategy="epoch",
                       load_best_model_at_end=True, metric_for_best_model="eval_loss", greater_is_better=False,
                       early_stopping_patience=2, curve_samples=8, eval_splits=["validation"])
    assert main([str(cfg)]) == 0
    seed_dir = tmp_path / "out" / "seed_7"
    evaluations = [json.loads(line)["step"] for line in (seed_dir / "curves.jsonl").read_text().splitlines()]
    steps_per_epoch = evaluations[0]
    assert evaluations == [steps_per_epoch, 2 * steps_per_epoch, 3 * steps_per_epoch]  # not 6 epochs
    results = json.loads((seed_dir / "results.json").read_text())
    assert results["train"]["global_step"] == 3 * steps_per_epoch


def test_publish_run_to_results_folder(tmp_path):
    """hf-recogs publish: finished seeds copied with gzipped predictions, the median seed's model loadable,
    unfinished seeds skipped, the run folder untouched, and refusals in one line."""
    import gzip

    from transformers import AutoModelForSeq2SeqLM

    from hf_recogs.publish.results_folder import main as publish_main
    from hf_recogs.publish.results_folder import median_seed
    from hf_recogs.train import main

    cfg = write_config(tmp_path, seeds=[7, 8, 9], num_train_epochs=1)
    assert main([str(cfg)]) == 0
    run = tmp_path / "out"
    (run / "seed_10").mkdir()  # an unfinished seed
    before = {p: p.stat().st_mtime_ns for p in run.rglob("*") if p.is_file()}
    seeds = {s: json.loads((run / f"seed_{s}" / "results.json").read_text()) for s in (7, 8, 9)}
    gen = {s: r["splits"]["gen"]["exact_match"] for s, r in seeds.items()}
    chosen = median_seed(seeds)
    assert sorted(gen, key=lambda s: (gen[s], s))[1] == chosen
    dest = tmp_path / "results" / "tiny"
    assert publish_main([str(run), str(dest), "--checkpoint", "median"]) == 0
    assert {p.name for p in dest.iterdir()} == {"seed_7", "seed_8", "seed_9", "aggregate.json", "aggregate.md",
                                                "aggregate.png"}
    for s in (7, 8, 9):
        original = (run / f"seed_{s}" / "predictions_gen.jsonl").read_bytes()
        assert gzip.decompress((dest / f"seed_{s}" / "predictions_gen.jsonl.gz").read_bytes()) == original
        assert (dest / f"seed_{s}" / "model.safetensors").is_file() == (s == chosen)
    assert AutoModelForSeq2SeqLM.from_pretrained(dest / f"seed_{chosen}") is not None
    assert {p: p.stat().st_mtime_ns for p in run.rglob("*") if p.is_file()} == before
    # the card is rendered from results.json by this version of the package, not copied
    (run / "seed_7" / "README.md").write_text("a card from an older version")
    assert publish_main([str(run), str(tmp_path / "recarded")]) == 0
    card = (tmp_path / "recarded" / "seed_7" / "README.md").read_text()
    assert "older version" not in card and "seed 7" in card and "model-index" in card
    # its usage snippet decodes a sentence of the model's own data (the first input of its predictions)
    first = json.loads(gzip.decompress((dest / "seed_7" / "predictions_gen.jsonl.gz").read_bytes()).splitlines()[0])
    assert f"tokenizer([{json.dumps(first['input'])}]" in card
    # same predictions, same bytes (no gzip timestamp)
    again = tmp_path / "again"
    assert publish_main([str(run), str(again)]) == 0
    assert (again / "seed_7" / "predictions_gen.jsonl.gz").read_bytes() == (
        dest / "seed_7" / "predictions_gen.jsonl.gz").read_bytes()
    assert publish_main([str(run), str(tmp_path / "x"), "--checkpoint", "10"]) == 2
    assert publish_main([str(tmp_path / "nothing"), str(tmp_path / "y")]) == 2


def test_publish_aggregates_seeds_trained_by_separate_commands(tmp_path, capsys):
    """Seeds run one command each into one output_dir: the published aggregate covers all of them; a seed that
    trained another set-up into the same folder is refused."""
    from hf_recogs.publish.results_folder import main as publish_main
    from hf_recogs.train import main

    cfg = write_config(tmp_path, seeds=[7], num_train_epochs=1, eval_splits=["validation"])
    for seed in (7, 8):
        assert main([str(cfg), f"seeds=[{seed}]"]) == 0
    run = tmp_path / "out"
    assert not (run / "aggregate.json").exists()
    dest = tmp_path / "published"
    assert publish_main([str(run), str(dest)]) == 0
    agg = json.loads((dest / "aggregate.json").read_text())
    scores = [json.loads((run / f"seed_{s}" / "results.json").read_text())["splits"]["validation"]
              for s in (7, 8)]
    overall = agg["splits"]["validation"]["overall"]
    assert agg["seeds"] == [7, 8] and overall["mean"] == pytest.approx(
        100 * sum(r[r["primary"]] for r in scores) / 2, abs=0.01)
    # a seed published earlier from a run folder that is gone counts with the seeds of a later run folder
    first, later, joined = tmp_path / "first", tmp_path / "later", tmp_path / "joined"
    shutil.copytree(run / "seed_7", first / "seed_7")
    shutil.copytree(run / "seed_8", later / "seed_8")
    assert publish_main([str(first), str(joined)]) == 0 and not (joined / "aggregate.json").exists()
    shutil.rmtree(first)
    assert publish_main([str(later), str(joined)]) == 0
    assert json.loads((joined / "aggregate.json").read_text())["splits"] == agg["splits"]
    # a seed trained before an option existed did not record it: it trained as the option's default
    seed_8 = run / "seed_8" / "results.json"
    older = json.loads(seed_8.read_text())
    assert older["hyperparameters"].pop("early_stopping_patience") == 0
    seed_8.write_text(json.dumps(older))
    assert publish_main([str(run), str(tmp_path / "older")]) == 0
    older["hyperparameters"]["early_stopping_patience"] = 3
    seed_8.write_text(json.dumps(older))
    capsys.readouterr()
    assert publish_main([str(run), str(tmp_path / "patience")]) == 2
    assert "early_stopping_patience" in capsys.readouterr().err
    older["hyperparameters"]["early_stopping_patience"] = 0
    seed_8.write_text(json.dumps(older))
    assert main([str(cfg), "seeds=[9]", "learning_rate=0.5"]) == 0
    capsys.readouterr()
    assert publish_main([str(run), str(tmp_path / "mixed")]) == 2
    err = capsys.readouterr().err.strip()
    assert "learning_rate" in err and "separate folders" in err and "\n" not in err
    # the same against a seed published earlier, and the published folder is left as it was
    other = tmp_path / "other"
    shutil.copytree(run / "seed_9", other / "seed_9")
    before = {p: p.read_bytes() for p in joined.rglob("*") if p.is_file()}
    assert publish_main([str(other), str(joined)]) == 2
    assert "learning_rate" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in joined.rglob("*") if p.is_file()} == before


def test_publish_keeps_one_checkpoint_at_the_median_of_every_published_seed(tmp_path, capsys):
    """Seeds published in two steps: the median is taken over all of them, the run keeps one checkpoint, a median
    seed published earlier keeps its own, and seeds whose CPU gave bf16 or fp32 under cpu_bf16: auto average
    together with the precision of each stated."""
    from hf_recogs.publish.results_folder import main as publish_main
    from hf_recogs.train import main

    cfg = write_config(tmp_path, seeds=[7, 8, 9], num_train_epochs=1, eval_splits=["validation", "gen"])
    assert main([str(cfg)]) == 0
    run = tmp_path / "out"

    def set_gen(seed, score, **extra):  # fixed primary scores make the median known in advance
        path = run / f"seed_{seed}" / "results.json"
        results = json.loads(path.read_text())
        gen = results["splits"]["gen"]
        gen[gen["primary"]] = score
        results.update(extra)
        path.write_text(json.dumps(results))

    # the precision of each seed is set here: under cpu_bf16 auto it is whatever this machine's CPU gave
    set_gen(7, 0.5, bf16=False, mixed_precision="no")
    set_gen(8, 0.2, bf16=True, mixed_precision="bf16")
    set_gen(9, 0.9, bf16=False, mixed_precision="no")
    first, later, dest = tmp_path / "first", tmp_path / "later", tmp_path / "published"
    shutil.copytree(run / "seed_7", first / "seed_7")
    for seed in (8, 9):
        shutil.copytree(run / f"seed_{seed}", later / f"seed_{seed}")
    assert publish_main([str(first), str(dest), "--checkpoint", "7"]) == 0
    (dest / "seed_7" / "README.md").write_text("a card from an older version")
    assert publish_main([str(later), str(dest), "--checkpoint", "median"]) == 0  # 0.2 < 0.5 < 0.9: seed 7
    # the seed published earlier gets its card from this version too, like the new ones
    assert "seed 7" in (dest / "seed_7" / "README.md").read_text()
    models = sorted(p.parent.name for p in dest.glob("seed_*/model.safetensors"))
    assert models == ["seed_7"]
    agg_md = (dest / "aggregate.md").read_text()
    assert "Precision of the training steps: fp32 (seeds 7, 9); bf16 (seed 8)." in agg_md
    assert json.loads((dest / "aggregate.json").read_text())["precision"] == {"7": "fp32", "8": "bf16", "9": "fp32"}
    # seed 8 becomes the median: its model is copied and seed 7's goes, results and predictions stay
    set_gen(8, 0.6, bf16=True, mixed_precision="bf16")
    shutil.copyfile(run / "seed_8" / "results.json", later / "seed_8" / "results.json")
    assert publish_main([str(later), str(dest), "--checkpoint", "median"]) == 0
    assert sorted(p.parent.name for p in dest.glob("seed_*/model.safetensors")) == ["seed_8"]
    assert not (dest / "seed_7" / "tokenizer.json").exists() and (dest / "seed_7" / "predictions_gen.jsonl.gz").exists()
    # a median seed published earlier without its model: refused in one line, dest untouched
    set_gen(8, 0.2, bf16=True, mixed_precision="bf16")
    shutil.copyfile(run / "seed_8" / "results.json", later / "seed_8" / "results.json")
    before = {p: p.read_bytes() for p in dest.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert publish_main([str(later), str(dest), "--checkpoint", "median"]) == 2
    err = capsys.readouterr().err.strip()
    assert "seed_7/model.safetensors is missing" in err and "--checkpoint <seed>" in err and "\n" not in err
    assert {p: p.read_bytes() for p in dest.rglob("*") if p.is_file()} == before
    # the setting itself must agree: cpu_bf16 true against auto is another set-up
    hp_path = later / "seed_9" / "results.json"
    results = json.loads(hp_path.read_text())
    results["hyperparameters"]["cpu_bf16"] = "true"
    hp_path.write_text(json.dumps(results))
    assert publish_main([str(later), str(dest)]) == 2
    assert "cpu_bf16" in capsys.readouterr().err


def test_no_and_yes_are_words_in_configs_and_overrides(tmp_path):
    """YAML 1.1 reads no/yes/on/off as booleans, so the Trainer's own value ``save_strategy: no`` used to fail
    as "invalid choice: 'false'". Options are read with YAML 1.2 booleans: words stay words, and a bool option
    written as no/yes still parses."""
    from hf_recogs.train import parse_args

    cfg = write_config(tmp_path)
    cfg.write_text(cfg.read_text() + "eval_strategy: no\n")
    experiment, training_args = parse_args([str(cfg), "save_strategy=no", "overwrite_output_dir=yes",
                                            "predict_with_generate=off"])
    assert training_args.save_strategy == "no" and training_args.eval_strategy == "no"
    assert experiment.overwrite_output_dir is True and training_args.predict_with_generate is False
    experiment, _ = parse_args([str(cfg), "overwrite_output_dir=false"])
    assert experiment.overwrite_output_dir is False


@pytest.mark.parametrize(
    ("yaml_text", "argv", "needle"),
    [
        ("", ["learning_rate="], "learning_rate= has no value"),
        ("", ["num_train_epochs=-1"], "trains nothing"),
        ("", ["per_device_train_batch_size=0"], "per_device_train_batch_size=0 must be at least 1"),
        ("", ["model_overrides={d_model: 65}"], "width 65 is not divisible by encoder_attention_heads=4"),
        ("", ["model_overrides={d_model: 0}"], "model width must be at least 1"),
        ("learning_rate: 0.1\nlearning_rate: 0.2\n", [], "'learning_rate' is given twice"),
    ],
)
def test_loose_values_are_one_line_errors(tmp_path, yaml_text, argv, needle):
    """Values that used to be accepted silently (or crashed later) stop at parse time with one line."""
    cfg = write_config(tmp_path)
    cfg.write_text(cfg.read_text() + yaml_text)
    with pytest.raises(ConfigError) as info:
        parse_args([str(cfg), *argv])
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_non_utf8_yaml_is_one_line(tmp_path):
    cfg = write_config(tmp_path)
    cfg.write_bytes(cfg.read_bytes() + b"note: caf\xe9\n")
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        parse_args([str(cfg)])


def test_whole_run_loss_weights_each_logged_window():
    from hf_recogs.train.record import whole_run_loss as _whole_run_loss

    history = [{"step": 5, "loss": 2.0}, {"step": 0, "source_gap": 0.1}, {"step": 10, "loss": 1.0},
               {"step": 12, "loss": 4.0}, {"step": 12, "eval_loss": 9.0}]
    assert _whole_run_loss(history) == pytest.approx((5 * 2.0 + 5 * 1.0 + 2 * 4.0) / 12)
    assert _whole_run_loss([{"step": 3, "source_gap": 0.0}]) is None


def test_resumed_run_reports_the_whole_runs_loss(tmp_path):
    """Resuming a finished run (0 new steps) used to report loss 0.0; now the loss of the whole run."""
    from hf_recogs.train import main

    cfg = write_config(tmp_path, num_train_epochs=2, save_strategy="epoch")
    assert main([str(cfg)]) == 0
    first = json.loads((tmp_path / "out" / "seed_7" / "results.json").read_text())["train"]
    assert main([str(cfg), "overwrite_output_dir=true", "resume_from_checkpoint=true"]) == 0
    again = json.loads((tmp_path / "out" / "seed_7" / "results.json").read_text())["train"]
    assert again["resumed_from"] and again["loss_this_process"] == 0.0
    assert again["loss"] == pytest.approx(first["loss"]) and first["loss"] > 0.5


def test_overwrite_moves_the_old_seed_aside(tmp_path):
    """overwrite_output_dir retrains from scratch in an empty folder; the old one is kept, renamed. A run killed
    after that cannot pass the old results.json off as its own on resume."""
    from hf_recogs.train import main

    cfg = write_config(tmp_path, num_train_epochs=1, eval_splits=["validation"])
    assert main([str(cfg)]) == 0
    old = json.loads((tmp_path / "out" / "seed_7" / "results.json").read_text())
    assert main([str(cfg), "overwrite_output_dir=true", "learning_rate=1.0e-4"]) == 0
    moved = sorted((tmp_path / "out").glob("seed_7.previous-*"))
    assert len(moved) == 1 and json.loads((moved[0] / "results.json").read_text()) == old
    new = json.loads((tmp_path / "out" / "seed_7" / "results.json").read_text())
    assert new["hyperparameters"]["learning_rate"] == 1.0e-4 != old["hyperparameters"]["learning_rate"]


def test_an_unfinished_run_is_not_retrained_over_silently(tmp_path, capsys):
    """A killed run leaves checkpoints and no results.json; running the same command again without
    resume_from_checkpoint used to start a fresh model in that folder (curves of two runs in one file, the old
    checkpoints rotated away)."""
    from hf_recogs.train import main

    cfg = write_config(tmp_path, num_train_epochs=2, save_strategy="epoch", eval_splits=["validation"])
    assert main([str(cfg)]) == 0
    capsys.readouterr()
    seed_dir = tmp_path / "out" / "seed_7"
    (seed_dir / "results.json").unlink()  # as if killed before the end
    checkpoints = sorted(p.name for p in seed_dir.glob("checkpoint-*"))
    assert checkpoints
    assert main([str(cfg)]) == 2
    err = capsys.readouterr().err.strip()
    assert "unfinished run" in err and "resume_from_checkpoint=true" in err and "\n" not in err
    assert sorted(p.name for p in seed_dir.glob("checkpoint-*")) == checkpoints
    assert main([str(cfg), "resume_from_checkpoint=true"]) == 0
    assert json.loads((seed_dir / "results.json").read_text())["train"]["resumed_from"]


def test_training_time_adds_up_over_resumes(tmp_path):
    """A run trained in two processes (killed after its first checkpoint, then resumed) reports both parts'
    time; the card states the total."""
    import shutil

    from hf_recogs.train import main

    cfg = write_config(tmp_path, num_train_epochs=2, save_strategy="epoch", eval_splits=["validation"])
    assert main([str(cfg)]) == 0
    seed_dir = tmp_path / "out" / "seed_7"
    single = json.loads((seed_dir / "results.json").read_text())["train"]
    assert [(p["from_step"], p["to_step"]) for p in single["time"]["parts"]] == [(0, single["global_step"])]
    assert single["time"]["wall_s"] > 0 and single["time"]["cpu_thread_s"] >= single["time"]["wall_s"]
    # what the process used, at most what it held (plus the odd helper thread)
    assert 0 < single["time"]["process_cpu_s"] <= 1.1 * single["time"]["cpu_thread_s"] + 0.5

    checkpoints = sorted(seed_dir.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))
    first_step = int(checkpoints[0].name.split("-")[1])
    assert 0 < first_step < single["global_step"]
    for later in checkpoints[1:]:
        shutil.rmtree(later)  # as if killed during the second epoch
    (seed_dir / "results.json").unlink()
    assert main([str(cfg), "resume_from_checkpoint=true"]) == 0
    train = json.loads((seed_dir / "results.json").read_text())["train"]
    parts = train["time"]["parts"]
    assert [(p["from_step"], p["to_step"]) for p in parts] == [(0, first_step), (first_step, train["global_step"])]
    assert all(p["wall_s"] > 0 and p["threads"] >= 1 and p["processes"] == 1 for p in parts)
    assert train["time"]["wall_s"] == pytest.approx(sum(p["wall_s"] for p in parts), abs=0.11)
    assert all(p["process_cpu_s"] > 0 for p in parts)
    assert train["time"]["process_cpu_s"] == pytest.approx(sum(p["process_cpu_s"] for p in parts), abs=0.11)
    card = (seed_dir / "README.md").read_text()
    assert "2 parts" in card
    used = f"of which the training process used {train['time']['process_cpu_s'] / 3600:.2f}"
    assert used in card, card[:2000]

    # a checkpoint from before the clock existed: the earlier part's time is unknown, not zero
    from hf_recogs.train.trainer import TrainingClock, training_time

    (checkpoints[0] / "training_time.json").unlink()
    earlier = TrainingClock(str(checkpoints[0])).earlier
    assert earlier == [{"from_step": 0, "to_step": first_step, "wall_s": None, "threads": None, "processes": None}]
    assert training_time(earlier)["wall_s"] is None
    # a part recorded before the CPU seconds were: the wall clock still adds up, the CPU total is unknown
    older = [{k: v for k, v in p.items() if k != "process_cpu_s"} for p in parts[:1]] + parts[1:]
    assert training_time(older)["wall_s"] == pytest.approx(train["time"]["wall_s"], abs=0.11)
    assert training_time(older)["process_cpu_s"] is None


def test_the_cpu_seconds_do_not_count_a_wait():
    """Wall × threads grows while the process waits (stopped, or its core held by another job); the CPU seconds
    do not. A part that sleeps half a second records the wall time and next to no CPU time."""
    from types import SimpleNamespace

    from hf_recogs.train.trainer import TrainingClock

    clock = TrainingClock(None)
    clock.on_train_begin(None, SimpleNamespace(global_step=0), None)
    time.sleep(0.5)
    clock.on_train_end(None, SimpleNamespace(global_step=3), None)
    (part,) = clock.parts(SimpleNamespace(global_step=3), world_size=1)
    assert part["wall_s"] >= 0.5 and part["process_cpu_s"] < 0.2, part


def test_the_card_gives_the_cpu_seconds_of_a_one_process_run_only():
    """With several processes the CPU seconds are the main one's alone, a fraction of the run's: the card leaves
    them out rather than set them beside the thread-hours of all the processes."""
    from hf_recogs.report.card import render_model_card
    from hf_recogs.train.trainer import training_time

    results = json.loads((ROOT / "results" / "cogs_transformer_fast" / "seed_42" / "results.json").read_text())
    part = {"from_step": 0, "to_step": 10, "wall_s": 7200.0, "threads": 1, "processes": 1, "process_cpu_s": 5400.0}
    results["train"]["time"] = training_time([part])
    assert "(2.00 CPU thread-hours, of which the training process used 1.50)" in str(render_model_card(results))
    results["train"]["time"] = training_time([{**part, "processes": 2}])
    assert results["train"]["time"]["process_cpu_s"] is None
    card = str(render_model_card(results))
    assert "(4.00 CPU thread-hours)" in card and "the training process used" not in card


def test_resuming_the_last_checkpoint_of_a_max_steps_run_trains_no_further(tmp_path):
    """A max_steps run killed after its last checkpoint but before its results: resuming evaluates that
    checkpoint as it is (transformers alone would take one more optimizer step when the run ended mid-epoch)."""
    import torch
    from safetensors.torch import load_file

    from hf_recogs.train import main

    cfg = write_config(tmp_path, max_steps=7, save_strategy="steps", save_steps=7, eval_splits=["validation"])
    assert main([str(cfg)]) == 0
    seed_dir = tmp_path / "out" / "seed_7"
    first = json.loads((seed_dir / "results.json").read_text())
    assert first["train"]["global_step"] == 7 and first["train"]["epochs_done"] % 1  # ends mid-epoch
    (seed_dir / "results.json").unlink()  # as if killed while evaluating
    assert main([str(cfg), "resume_from_checkpoint=true"]) == 0
    again = json.loads((seed_dir / "results.json").read_text())
    assert again["train"]["global_step"] == 7 and not (seed_dir / "checkpoint-8").exists()
    weights = load_file(seed_dir / "checkpoint-7" / "model.safetensors")
    final = load_file(seed_dir / "model.safetensors")
    assert all(torch.equal(weights[k], final[k]) for k in weights)
    assert again["splits"]["validation"]["n"] == first["splits"]["validation"]["n"]


def test_unwritable_output_dir_is_one_line(tmp_path, capsys):
    from hf_recogs.train import main

    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    assert main([str(write_config(tmp_path)), f"output_dir={blocker / 'out'}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("train.py: error: output_dir=") and "not writable" in err and "\n" not in err


def test_full_disk_is_one_line(tmp_path, capsys, monkeypatch):
    import errno

    from hf_recogs.train import run as training

    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "out" / "seed_7"))

    monkeypatch.setattr(training, "run", no_space)
    assert training.main([str(write_config(tmp_path))]) == 1
    err = capsys.readouterr().err.strip()
    assert "No space left on device" in err and "resume_from_checkpoint=true" in err and "\n" not in err


def test_results_record_the_environment(tmp_path):
    from importlib import metadata

    import torch

    from hf_recogs.train import main

    cfg = write_config(tmp_path, num_train_epochs=1, eval_splits=["validation"])
    assert main([str(cfg)]) == 0
    env = json.loads((tmp_path / "out" / "seed_7" / "results.json").read_text())["environment"]
    assert env["versions"]["transformers"] == metadata.version("transformers")
    assert env["versions"]["torch"] == torch.__version__.split("+")[0] or env["versions"]["torch"] == torch.__version__
    assert env["torch_threads"] == 1  # cpu_threads: 1 in the test config
    assert env["git_commit"] is None or len(env["git_commit"]) == 40
    assert env["date"].endswith("+00:00") and env["cpu_count"] >= 1 and env["argv"]


def test_model_card_of_a_partial_run_says_so(tmp_path):
    from hf_recogs.train import main

    cfg = write_config(tmp_path, num_train_epochs=1, max_train_samples=40, max_eval_samples=6)
    assert main([str(cfg)]) == 0
    card = (tmp_path / "out" / "seed_7" / "README.md").read_text()
    assert "A smoke / partial run, not a result:** trained on 40 rows only and scored on 6 rows" in card
    (tmp_path / "full").mkdir()
    assert main([str(write_config(tmp_path / "full", num_train_epochs=1))]) == 0
    assert "smoke / partial run" not in (tmp_path / "full" / "out" / "seed_7" / "README.md").read_text()


def test_sygns_categories_are_grouped_by_quantifier_type():
    recs = [{"category": c, "exact": e, "sem": None} for c, e in
            [("NUM:ADJ", True), ("NUM:ADJ+NEG", False), ("UNI:ADJ", False), ("EXI:ADJ", True), ("EXI:CON", True)]]
    sygns_groups = get_config("sygns_systematicity_one").category_groups
    groups = scoring.summarize(recs, "exact", sygns_groups)["groups"]
    assert {g: v["exact_match"] for g, v in groups.items()} == {"NUM": 0.5, "UNI": 0.0, "EXI": 1.0}
    assert list(groups) == ["EXI", "NUM", "UNI"]
    assert scoring.summarize([{"category": "in_distribution", "exact": True, "sem": None}], "exact",
                               sygns_groups)["groups"] == {}
    # proper-name rows (PN) are in no group and leave the others' groups as they are
    with_pn = scoring.summarize([*recs, {"category": "PN:ADJ", "exact": False, "sem": None}], "exact", sygns_groups)
    assert with_pn["groups"] == groups and with_pn["category_groups"]["PN:ADJ"] == []


def test_category_groups_are_declared_by_the_benchmarks():
    """COGS lexical / structural and SyGNS quantifier types are facts of the configs; SCAN and SLOG (whose
    categories are not COGS's) have none."""
    from hf_recogs.benchmarks import cogs, sygns
    from hf_recogs.registry import configs_of

    def declared(*families):
        configs = configs_of(*families).values()
        assert configs
        return {c.category_groups for c in configs}

    assert declared("cogs", "recogs") == {cogs.CATEGORY_GROUPS} and declared("sygns") == {sygns.CATEGORY_GROUPS}
    assert declared("scan") == {None} and declared("slog") == {None}
    groups = cogs.CATEGORY_GROUPS
    assert groups.names == ("lexical", "structural", "lexical_15")
    of = [groups.of(c) for c in cogs.GEN_CATEGORIES]
    assert (of.count(("structural",)), of.count(("lexical",)), of.count(("lexical", "lexical_15"))) == (3, 3, 15)
    assert groups.of("in_distribution") == () and groups.of("PP_3") == ()
    assert sygns.CATEGORY_GROUPS.names == ("EXI", "NUM", "UNI")
    assert [sygns.CATEGORY_GROUPS.of(c) for c in ("NUM:ADJ+NEG", "PN:ADJ", "depth2")] == [("NUM",), (), ()]


def test_summarize_infers_no_groups_from_category_names():
    from hf_recogs.benchmarks import cogs

    records = [_rec(c, True) for c in cogs.GEN_CATEGORIES]
    s = scoring.summarize(records, "exact")
    assert s["groups"] == {} and s["category_groups"] == {c: [] for c in cogs.GEN_CATEGORIES}
    assert scoring.summarize([_rec("EXI:NONE", True), _rec("UNI:ADJ", False)], "exact")["groups"] == {}
    assert scoring.highlighted(s) == set()
    grouped = scoring.summarize(records, "exact", cogs.CATEGORY_GROUPS)
    assert scoring.highlighted(grouped) == set(cogs.STRUCTURAL)


def test_summaries_score_cogs_recursion_rows_per_depth():
    """COGS's recursion categories are also scored per depth: embedded clauses (one *that* each) for cp_recursion,
    prepositional phrases for pp_recursion; other categories, and records without their input, have none."""
    from hf_recogs.benchmarks import cogs

    def row(category, sentence, right):
        return {**_rec(category, right, right), "input": sentence}

    records = [
        row("cp_recursion", "Emma said that a cat noticed that the dog knew that Liam slept .", True),
        row("cp_recursion", "A girl hoped that Ava believed that a boy said that the cake burned .", False),
        row("cp_recursion", "Noah said that a cat noticed that Emma knew that a boy liked that the girl smiled .", True),
        row("pp_recursion", "Ava ate the cake on the plate beside a box in the house .", False),
        row("subj_to_obj_common", "The cat on the mat smiled .", True),
    ]
    s = scoring.summarize(records, "sem", cogs.CATEGORY_GROUPS)
    assert {c: {d: (v["n"], v["sem_match"]) for d, v in depths.items()} for c, depths in s["per_depth"].items()} == {
        "cp_recursion": {"3": (2, 0.5), "4": (1, 1.0)}, "pp_recursion": {"3": (1, 0.0)}}
    without_inputs = [{k: v for k, v in r.items() if k != "input"} for r in records]
    assert "per_depth" not in scoring.summarize(without_inputs, "sem", cogs.CATEGORY_GROUPS)
    assert "per_depth" not in scoring.summarize(records, "sem")


def test_plots_and_aggregates_read_the_groups_from_the_summaries(tmp_path, monkeypatch):
    """Bars are red for the categories the summary puts in the structural group; results written before
    summaries recorded their categories' groups plot without colours."""
    import matplotlib.axes

    from hf_recogs.benchmarks import cogs

    colours = []
    bar = matplotlib.axes.Axes.bar

    def recording_bar(self, x, height, *args, color=None, **kwargs):
        colours.append(list(color) if isinstance(color, list) else color)
        return bar(self, x, height, *args, color=color, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "bar", recording_bar)
    legends = []
    legend = matplotlib.axes.Axes.legend

    def recording_legend(self, *args, handles=(), **kwargs):
        legends.append([h.get_label() for h in handles])
        return legend(self, *args, handles=handles, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "legend", recording_legend)
    gen = scoring.summarize([_rec("cp_recursion", True), _rec("subj_to_obj_common", False)], "exact",
                              cogs.CATEGORY_GROUPS)
    results = {"dataset": "cogs", "arch": "transformer", "seed": 1, "metric": "exact", "splits": {"gen": gen}}
    report.plot_per_category(results, tmp_path / "p.png")
    assert colours.pop() == ["tab:red", "tab:blue"] and legends.pop() == ["lexical", "structural"]
    agg = report.aggregate([results, dict(results, seed=2)])
    assert agg["splits"]["gen"]["category_groups"] == gen["category_groups"]
    report.plot_aggregate(agg, tmp_path / "a.png")
    assert colours.pop() == ["black"] + ["tab:gray"] * 3 + ["tab:red", "tab:blue"]  # overall, 3 groups
    old = {**results, "splits": {"gen": {k: v for k, v in gen.items() if k != "category_groups"}}}
    report.plot_per_category(old, tmp_path / "old.png")
    assert colours.pop() == ["tab:blue", "tab:blue"] and not legends


def test_what_reports_say_about_groups_comes_from_the_config(tmp_path):
    """The groups' explanation, the red group and the groups of one-line summaries are facts of the config's
    CategoryGroups: a COGS card explains lexical / structural, a SyGNS aggregate its quantifier types, a SCAN
    card (no groups, no SEM) neither, and no report names COGS's groups for another benchmark."""
    from hf_recogs.benchmarks import cogs, sygns
    from hf_recogs.registry import CategoryGroups

    with pytest.raises(ValueError, match="not among the groups"):
        CategoryGroups(("a", "b"), lambda c: (), highlighted="c")
    cogs_gen = scoring.summarize([_rec("cp_recursion", True, True), _rec("subj_to_obj_common", False, False)],
                                   "sem", cogs.CATEGORY_GROUPS)
    cogs_run = {"dataset": "cogs", "arch": "transformer", "metric": "sem", "seed": 1, "splits": {"gen": cogs_gen}}
    line = scoring.one_line(cogs_run)
    assert "gen/structural 100.0%" in line and "gen/lexical 0.0%" in line and "lexical_15" not in line
    card = str(report.render_model_card(cogs_run))
    assert "`lexical_15` is lexical without the three proper-noun categories" in card
    assert "| gen | *structural* | 1 | 100.0 | 100.0 |" in card  # SEM and exact match columns

    sygns_test = scoring.summarize([_rec("EXI:NONE", True), _rec("UNI:ADJ", False)], "exact",
                                     sygns.CATEGORY_GROUPS)
    sygns_run = {"dataset": "sygns_systematicity_one", "arch": "transformer", "metric": "exact", "seed": 1,
                 "splits": {"test": sygns_test}}
    md = report.aggregate_markdown(report.aggregate([sygns_run, dict(sygns_run, seed=2)]))
    assert "Groups: `EXI` / `NUM` / `UNI`" in md and "structural" not in md
    assert scoring.highlighted(sygns_test) == set()

    scan_test = scoring.summarize([_rec("simple", True), _rec("simple", False)], "exact")
    scan_run = {"dataset": "scan_simple", "arch": "lstm", "metric": "exact", "seed": 1, "splits": {"test": scan_test}}
    card = str(report.render_model_card(scan_run))
    assert "lexical" not in card and "structural" not in card and "SEM (%)" not in card
    assert "| test | **all** | 2 | 50.0 |" in card
    assert "Groups:" not in report.aggregate_markdown(report.aggregate([scan_run]))


def test_each_config_declares_how_it_is_scored():
    """The metric is a fact of the catalogue entry. Variable-free forms have no variables for SEM to rename:
    scored by SEM, a perfect model of cogs_variable_free or slog_varfree would read 0 % (that was the rule
    'SEM for the COGS families' before)."""
    from hf_recogs.registry import METRICS, all_configs

    def dataset_metric(name):
        return get_config(name).metric

    configs = all_configs()
    assert all(cfg.metric in METRICS for cfg in configs.values())
    expected = {"cogs": "sem", "recogs_pos": "sem", "slog": "sem", "cogs_variable_free": "exact",
                "slog_varfree": "exact", "scan_length": "exact", "sygns_systematicity_one": "sygns"}
    assert {name: dataset_metric(name) for name in expected} == expected
    variable_free = ["like ( agent = Mila , ccomp = offer ( theme = * cake , recipient = Emma ) )"]
    as_sem = scoring.summarize(scoring.score_rows(variable_free, variable_free, metric="sem"), "sem")
    as_declared = scoring.summarize(
        scoring.score_rows(variable_free, variable_free, metric=dataset_metric("cogs_variable_free")), "exact")
    assert as_sem["sem_match"] == 0.0 and as_declared[as_declared["primary"]] == 1.0
