"""docs/RESULTS.md is generated from results/ by hf_recogs.report.results_page, and its numbers are right.

The committed page must equal what the code renders from the committed runs (so a number cannot drift from its
run); a small results folder with hand-chosen scores renders the means and sample standard deviations worked
out by hand below.
"""

from __future__ import annotations

import json

import pytest
from conftest import ROOT

from hf_recogs.report import results_page
from hf_recogs.report.results_page import ResultsError, headline_table, main, render


def test_committed_page_equals_the_generated_one(capsys):
    page = ROOT / "docs/RESULTS.md"
    assert page.is_file(), "docs/RESULTS.md is missing: python -m hf_recogs.report.results_page"
    code = main(["--results", str(ROOT / "results"), "--output", str(page), "--check"])
    err = capsys.readouterr().err
    assert code == 0, err + "(regenerate: python -m hf_recogs.report.results_page)"


def test_every_published_run_has_a_section_and_known_paper_sources():
    page = render(ROOT / "results")
    runs = sorted(p.parent.parent.name for p in (ROOT / "results").glob("*/seed_*/results.json"))
    for run in set(runs):
        assert f"`results/{run}/`" in page, run
    for run, entries in results_page.PAPER.items():
        for key, (value, source) in entries.items():
            assert source in results_page.SOURCES, (run, key, source)
            assert value.strip(), (run, key)
    for run, *_ in results_page.HEADLINE:
        assert run in results_page.TITLES, run
    # a headline row without a paper number (the papers have no ReCOGS classifier) says so with a dash
    paper_cells = {(b, m.split("; seed")[0]): p for b, m, _, _, p in results_page.headline_rows(ROOT / "results")}
    for run, key, benchmark, model in results_page.HEADLINE:
        if (benchmark, model) in paper_cells:
            expected = results_page.PAPER[run][key][0] if key in results_page.PAPER.get(run, {}) else "—"
            assert paper_cells[(benchmark, model)] == expected, (run, key)


# ---------------------------------------------------------------------------------------------------------
# A synthetic results folder with hand-chosen scores


def _seed(seed: int, gen: float, lexical: float, structural: float, cats: dict[str, float],
          depth: dict[str, float] | None = None, test: float = 0.99) -> dict:
    def s(x: float) -> dict:
        return {"n": 100, "sem_match": x, "exact_match": x, "sem_undecided": 0}

    gen_split = {**s(gen), "primary": "sem_match", "per_category": {c: s(v) for c, v in cats.items()},
                 "groups": {"lexical": s(lexical), "structural": s(structural)}}
    if depth is not None:
        gen_split["per_depth"] = {"cp_recursion": {d: s(v) for d, v in depth.items()}}
    return {
        "dataset": "recogs_pos", "arch": "transformer", "metric": "sem", "seed": seed, "num_parameters": 1234,
        "mixed_precision": "no",
        "hyperparameters": {"learning_rate": 0.001, "per_device_train_batch_size": 64,
                            "gradient_accumulation_steps": 1, "world_size": 1, "num_train_epochs": 20.0,
                            "max_steps": -1, "data_order": "grouped", "loss_weighting": "batch",
                            "model_overrides": {}},
        "train": {"time": {"wall_s": 600.0}, "epochs_done": 20.0},
        "environment": {"cuda": None, "torch_threads": 2},
        "command": f"accelerate launch train.py configs/recogs_pos_transformer_fast.yaml --seeds {seed}",
        "splits": {"test": {**s(test), "primary": "sem_match", "per_category": {"in_distribution": s(test)},
                            "groups": {}},
                   "gen": gen_split},
    }


def _write(folder, run: str, seeds: list[dict]) -> None:
    for r in seeds:
        d = folder / run / f"seed_{r['seed']}"
        d.mkdir(parents=True)
        (d / "results.json").write_text(json.dumps(r), encoding="utf-8")


@pytest.fixture
def synthetic(tmp_path):
    results = tmp_path / "results"
    # gen 70 / 80 / 90: mean 80, sample sd sqrt((100 + 0 + 100) / 2) = 10.
    # cp_recursion 10 / 10 / 40: mean 20, sd sqrt((100 + 100 + 400) / 2) = sqrt(300) = 17.32.
    # lexical 90 / 95 / 100: mean 95, sd 5.  structural 1 / 2 / 6: mean 3, sd sqrt((4 + 1 + 9) / 2) = 2.65.
    # cp_recursion at depth 3, recorded by seeds 1 and 2 only: 50 / 70: mean 60, sd sqrt(200) = 14.14.
    _write(results, "recogs_pos_transformer_fast", [
        _seed(1, 0.70, 0.90, 0.01, {"cp_recursion": 0.10, "active_to_passive": 1.0}, {"3": 0.5, "4": 0.0}),
        _seed(2, 0.80, 0.95, 0.02, {"cp_recursion": 0.10, "active_to_passive": 1.0}, {"3": 0.7, "4": 0.0}),
        _seed(3, 0.90, 1.00, 0.06, {"cp_recursion": 0.40, "active_to_passive": 1.0}),
    ])
    # one seed: its number, no sd
    _write(results, "my_single_seed_run",
           [_seed(7, 0.42, 0.5, 0.0, {"cp_recursion": 0.25, "active_to_passive": 0.5})])
    return results


def _row(page: str, section: str, label: str) -> str:
    part = page.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    return next(line for line in part.splitlines() if line.startswith(f"| {label} |"))


def test_hand_computed_means_and_sample_sds(synthetic):
    page = render(synthetic)
    title = results_page.TITLES["recogs_pos_transformer_fast"]
    assert _row(page, title, "gen") == "| gen | 80.0 ± 10.0 | 3 | 70.0 (1), 80.0 (2), 90.0 (3) | 88.55 |"
    assert _row(page, title, "cp_recursion") == \
        "| cp_recursion | 20.0 ± 17.3 | 3 | 10.0 (1), 10.0 (2), 40.0 (3) | 52.4 |"
    assert _row(page, title, "lexical") == "| lexical | 95.0 ± 5.0 | 3 | 90.0 (1), 95.0 (2), 100.0 (3) |  |"
    assert _row(page, title, "structural") == "| structural | 3.0 ± 2.6 | 3 | 1.0 (1), 2.0 (2), 6.0 (3) |  |"
    assert _row(page, title, "cp_recursion, depth 3") == \
        "| cp_recursion, depth 3 | 60.0 ± 14.1 | 2 | 50.0 (1), 70.0 (2) |  |"
    assert _row(page, title, "test") == "| test | 99.0 ± 0.0 | 3 | 99.0 (1), 99.0 (2), 99.0 (3) | ≈ 100 |"
    assert "sample standard" in page and "n − 1" in page
    assert "- 20 epochs of batch 64; learning rate 0.001; data order grouped; loss weighting batch." in page
    assert "seed 1: fp32 on CPU, 2 threads, 10.0 min" in page
    # the headline table, as the README prints it
    assert headline_table(synthetic).splitlines()[2] == \
        "| ReCOGS_pos, gen | Transformer (fast recipe) | 80.0 ± 10.0 | 3 | 88.55 |"
    assert headline_table(synthetic) in page


def test_the_headline_leaves_out_the_seed_a_setting_was_chosen_on(tmp_path):
    """Settings screened on one seed's gen: the README's mean is over the seeds trained after the choice."""
    results = tmp_path / "results"
    best = results_page.BEST_STRUCTURE_RUN
    assert results_page.CHOSEN_ON_SEED[best] == 66
    # gen 90 (42) / 99 (66, left out) / 80 (77): mean 85, sample sd sqrt((25 + 25) / 1) = 7.07
    _write(results, best, [_seed(42, 0.90, 0.9, 0.5, {"cp_recursion": 0.5}),
                           _seed(66, 0.99, 0.9, 0.5, {"cp_recursion": 0.9}),
                           _seed(77, 0.80, 0.9, 0.5, {"cp_recursion": 0.3})])
    rows = [r for r in results_page.headline_rows(results) if r[0] == "ReCOGS_pos, gen"]
    assert rows == [("ReCOGS_pos, gen", results_page.BEST_STRUCTURE_LABEL
                     + "; seed 66, which chose the setting, left out", "85.0 ± 7.1", 2, "88.55")]
    # the run's own section still gives every seed
    assert "99.0 (66)" in render(results)


def test_a_setting_with_only_its_choosing_seed_has_no_headline_row(tmp_path):
    results = tmp_path / "results"
    _write(results, results_page.BEST_STRUCTURE_RUN, [_seed(66, 0.99, 0.9, 0.5, {"cp_recursion": 0.9})])
    assert results_page.headline_rows(results) == []


def test_a_run_resumed_with_another_thread_count_names_both(tmp_path):
    """The environment records the last part's threads; a run trained on 1 thread and resumed on 2 says 1–2."""
    seed = _seed(5, 0.5, 0.9, 0.1, {"cp_recursion": 0.1})
    seed["train"]["time"] = {"wall_s": 3600.0, "cpu_thread_s": 5400.0, "parts": [
        {"from_step": 0, "to_step": 100, "wall_s": 1800.0, "threads": 1, "processes": 1},
        {"from_step": 100, "to_step": 200, "wall_s": 1800.0, "threads": 2, "processes": 1}]}
    _write(tmp_path / "results", "recogs_pos_transformer_fast", [seed])
    page = render(tmp_path / "results")
    assert "seed 5: fp32 on CPU, 1–2 threads, 60.0 min (1.50 CPU thread-hours)" in page


def test_one_seed_shows_no_sd(synthetic):
    page = render(synthetic)
    section = page.split("## recogs_pos, transformer", 1)[1]
    assert "`results/my_single_seed_run/`, 1 seed (7)" in section
    assert "| gen | 42.0 | 1 | 42.0 (7) |  |" in section
    assert "| cp_recursion | 25.0 | 1 | 25.0 (7) |  |" in section
    assert "±" not in "".join(line for line in section.splitlines() if line.startswith("| gen |"))


def test_a_run_on_reordered_targets_says_so(tmp_path):
    seed = _seed(5, 0.5, 0.6, 0.1, {"cp_recursion": 0.2})
    seed["hyperparameters"]["target_order"] = "depth_first"
    _write(tmp_path, "my_reordered_run", [seed])
    assert ("- 20 epochs of batch 64; learning rate 0.001; data order grouped; loss weighting batch; training "
            "targets in depth_first order.") in render(tmp_path)


def test_an_evaluation_only_run_describes_the_scored_models_training_and_its_decoding(tmp_path):
    trained = _seed(5, 0.5, 0.6, 0.1, {"cp_recursion": 0.2})
    trained["hyperparameters"].update(max_steps=8520, per_device_train_batch_size=32)
    trained["train"] = {"time": {"wall_s": 1200.0, "cpu_thread_s": 7200.0}, "epochs_done": 16.0}
    evaluation = _seed(5, 0.6, 0.6, 0.3, {"cp_recursion": 0.4})
    evaluation.update(train=None, evaluated_model="/somewhere/results/my_run/seed_5",
                      model_record={k: v for k, v in trained.items() if k != "splits"})
    evaluation["hyperparameters"]["constrained_decoding"] = True
    evaluation["splits"]["gen"]["constrained_decoding"] = {"rows_at_dead_end": 3, "rules_version": 2}
    evaluation["splits"]["test"]["constrained_decoding"] = {"rows_at_dead_end": 0, "rules_version": 2}
    _write(tmp_path, "my_constrained_run", [evaluation])
    page = render(tmp_path)
    # the schedule and the training's time are the scored model's, not the evaluation config's 20 epochs
    assert "- 8,520 updates of batch 32 (16.00 epochs); learning rate 0.001" in page
    assert "seed 5: fp32 on CPU, 2 threads, 20.0 min (2.00 CPU thread-hours)" in page
    assert "- Evaluated again with no new training (the lines above say how the model trained): " \
           "`results/my_run/seed_5`." in page
    assert ("- Decoding: greedy under the rules of ReCOGS_pos forms (`constrained_decoding`); rows left with no "
            "allowed word, which then ended: seed 5: 0 in test; 3 in gen.") in page
    evaluation["hyperparameters"]["constrained_any_order"] = True
    _write(tmp_path, "my_any_order_run", [evaluation])
    assert ("- Decoding: greedy under the rules of ReCOGS_pos forms (`constrained_decoding`; conjuncts in any order, "
            "`constrained_any_order`); rows left") in render(tmp_path)
    # a run decoded before the rules had versions decoded under version 1, and the page says what it let through
    for split in ("gen", "test"):
        del evaluation["splits"][split]["constrained_decoding"]["rules_version"]
    _write(tmp_path, "my_version_1_run", [evaluation])
    assert ("(`constrained_decoding`; conjuncts in any order, `constrained_any_order`; version 1 of the rules, under "
            "which a position could also name the sentence's final period); rows left") in render(tmp_path)


def test_check_reports_a_stale_page_in_one_line(synthetic, tmp_path, capsys):
    out = tmp_path / "page.md"
    assert main(["--results", str(synthetic), "--output", str(out), "--check"]) == 1
    assert main(["--results", str(synthetic), "--output", str(out)]) == 0
    assert main(["--results", str(synthetic), "--output", str(out), "--check"]) == 0
    out.write_text(out.read_text(encoding="utf-8").replace("80.0 ± 10.0", "81.0 ± 10.0"), encoding="utf-8")
    capsys.readouterr()
    assert main(["--results", str(synthetic), "--output", str(out), "--check"]) == 1
    err = capsys.readouterr().err.strip()
    assert "out of date" in err and "\n" not in err


def test_an_aggregate_that_disagrees_with_its_seeds_is_refused(synthetic):
    run = synthetic / "recogs_pos_transformer_fast"
    (run / "aggregate.json").write_text(json.dumps({"seeds": [1, 2], "splits": {}}), encoding="utf-8")
    with pytest.raises(ResultsError, match="lists seeds"):
        render(synthetic)
    agg = {"seeds": [1, 2, 3], "splits": {"gen": {"primary": "sem_match", "overall": {"mean": 80.0}}}}
    (run / "aggregate.json").write_text(json.dumps(agg), encoding="utf-8")
    render(synthetic)
    agg["splits"]["gen"]["overall"]["mean"] = 79.0
    (run / "aggregate.json").write_text(json.dumps(agg), encoding="utf-8")
    with pytest.raises(ResultsError, match="differs"):
        render(synthetic)


def test_a_classifier_run_shows_auc_per_kind_of_negative_accuracy_and_f1(tmp_path):
    def s(auc: float, acc: float, f1: float) -> dict:
        return {"n": 40, "positives": 10, "roc_auc": auc, "accuracy": acc, "f1": f1}

    def seed(number: int, auc: float) -> dict:
        split = {**s(auc, 0.8, 0.5), "primary": "roc_auc", "groups": {},
                 "per_category": {"wh": s(auc, 0.8, 0.5), "yes_no": s(auc - 0.1, 0.7, 0.4)},
                 "per_negative_kind": {"model:lstm-test": s(auc - 0.2, 0.6, 0.3), "random": s(0.99, 0.9, 0.9)}}
        return {"dataset": "cfq_mcd1_cls", "dataset_params": {"negatives": "model"}, "arch": "structure_encoder",
                "metric": "classification", "seed": number, "num_parameters": 10,
                "hyperparameters": {"learning_rate": 0.001, "per_device_train_batch_size": 112, "max_steps": 3000,
                                    "model_overrides": {"attention": "hard"}},
                "train": {"time": {"wall_s": 60.0}}, "environment": {"torch_threads": 1},
                "command": "accelerate launch train.py configs/cfq_mcd1_cls_structure.yaml",
                "splits": {"validation": split}}

    results = tmp_path / "results"
    # validation AUC 0.90 / 0.80: mean 85.0, sd sqrt(50) = 7.07; against the LSTM's negatives 70 / 60
    _write(results, "cfq_cls_hard", [seed(1, 0.90), seed(2, 0.80)])
    page = render(results)
    section = page.split("## cfq_mcd1_cls, structure_encoder", 1)[1]
    assert "`structure_encoder` (attention=\"hard\")" in section
    assert "Dataset `cfq_mcd1_cls` (negatives=model); score: ROC AUC pooled" in section
    assert "| validation | 85.0 ± 7.1 | 2 | 90.0 (1), 80.0 (2) |  |" in section
    assert "| validation, model:lstm-test | 65.0 ± 7.1 | 2 | 70.0 (1), 60.0 (2) |  |" in section
    assert "| validation, random | 99.0 ± 0.0 | 2 | 99.0 (1), 99.0 (2) |  |" in section
    assert "| yes_no | 75.0 ± 7.1 | 2 | 80.0 (1), 70.0 (2) |  |" in section
    accuracy = section.split("accuracy at probability 0.5:", 1)[1].split("F1 of", 1)[0]
    assert "| validation | 80.0 ± 0.0 | 2 | 80.0 (1), 80.0 (2) |  |" in accuracy
    assert "| validation | 50.0 ± 0.0 | 2 |" in section.split("F1 of the positive class at probability 0.5:", 1)[1]


def _classifier_seed(number: int, dev: float, holdout: float, hours: float) -> dict:
    """A cfq_mcd1_cls seed's results.json: AUC on dev and train_holdout, 10,000 steps, ``hours`` of one thread."""
    def split(auc):
        return {"n": 40, "positives": 10, "roc_auc": auc, "accuracy": 0.8, "f1": 0.5, "primary": "roc_auc",
                "groups": {}, "per_category": {}, "per_negative_kind": {}}
    return {"dataset": "cfq_mcd1_cls", "dataset_params": {"negatives": "model"}, "arch": "structure_encoder",
            "metric": "classification", "seed": number, "num_parameters": 10,
            "hyperparameters": {"learning_rate": 0.001, "per_device_train_batch_size": 112,
                                "max_steps": 10000, "model_overrides": {}},
            "train": {"time": {"wall_s": hours * 3600, "cpu_thread_s": hours * 3600}, "epochs_done": 3.1098},
            "environment": {"torch_threads": 1},
            "command": "accelerate launch train.py configs/cfq_mcd1_cls_structure.yaml",
            "splits": {"train_holdout": split(holdout), "validation": split(dev)}}


def test_classifier_settings_side_by_side_with_schedule_and_thread_hours(tmp_path):
    seed = _classifier_seed
    results = tmp_path / "results"
    # hard + links: dev 0.70 / 0.60 -> 65.0 ± 7.1; the Transformer, one seed: dev 0.62
    _write(results, "cfq_mcd1_cls_hard_links", [seed(42, 0.70, 0.80, 2.5), seed(66, 0.60, 0.78, 3.0)])
    _write(results, "cfq_mcd1_cls_transformer", [seed(42, 0.62, 0.75, 0.75)])
    _write(results, "some_other_cls_run", [seed(1, 0.5, 0.5, 1.0)])
    page = render(results)
    table = page.split("## cfq_mcd1_cls: the settings side by side", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    assert rows[0] == ("| setting | train_holdout | validation | seeds | schedule | CPU thread-hours per seed "
                       "| paper |")
    # the paper's table order (Transformer before the masked encoder), runs outside the table left out
    assert rows[1] == ("| Transformer (post-LN, no mask) (`cfq_mcd1_cls_transformer`) | 75.0 | 62.0 | 1 | "
                       "10,000 updates of batch 112 (3.11 epochs) | 0.8 | validation 87.4 |")
    assert rows[2] == ("| hard mask + cross-links (`cfq_mcd1_cls_hard_links`) | 79.0 ± 1.4 (80.0 (42), 78.0 (66)) "
                       "| 65.0 ± 7.1 (70.0 (42), 60.0 (66)) | 2 | 10,000 updates of batch 112 (3.11 epochs) | "
                       "2.5, 3.0 | validation 96.6 |")
    assert len(rows) == 3 and "some_other_cls_run" not in table
    assert "seed 66: fp32 on CPU, 1 thread, 180.0 min (3.00 CPU thread-hours)" in page
    assert headline_table(results).splitlines()[2] == \
        "| CFQ MCD1 classification, dev (ROC AUC) | Transformer | 62.0 | 1 | 87.4 |"
    assert "Each setting minus" not in page  # the Transformer has one seed: no interval to give


def test_classifier_settings_minus_the_transformer_with_welch_intervals(tmp_path):
    results = tmp_path / "results"
    # dev: hard 70, 72 / Transformer 66, 68: difference 4.0; both variances 2, so the standard error is
    # sqrt(2/2 + 2/2) = 1.414 on 2 degrees of freedom, and t(0.975, 2) = 4.303 (any t table): 4.0 +- 6.085.
    # train_holdout: every seed 80 / 75: difference 5.0 with no spread at all.
    _write(results, "cfq_mcd1_cls_hard_links", [_classifier_seed(42, 0.70, 0.80, 2.5),
                                                _classifier_seed(66, 0.72, 0.80, 2.5)])
    _write(results, "cfq_mcd1_cls_transformer", [_classifier_seed(42, 0.66, 0.75, 1.0),
                                                 _classifier_seed(66, 0.68, 0.75, 1.0)])
    _write(results, "cfq_mcd1_cls_soft", [_classifier_seed(42, 0.90, 0.90, 2.0)])  # one seed: no row
    section = render(results).split("Each setting minus Transformer (post-LN, no mask)", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    assert rows == ["| setting | train_holdout | validation |",
                    "| hard mask + cross-links | +5.0 [+5.0, +5.0] | +4.0 [-2.1, +10.1] |"]


def test_seq2seq_settings_side_by_side_with_the_paper_and_welch_intervals(synthetic):
    """The ReCOGS_pos table: one row per published setting of the table (the fixture's fast recipe, gen 70 / 80
    / 90, and a structure run added here), the paper's row, and the structure run minus the fast recipe. Both
    have three seeds and the same sd, so Welch's degrees of freedom are 2 (n - 1) = 4, and t(0.975, 4) = 2.776
    (any t table): gen 90 - 80 = 10 ± 2.776 · sqrt(100/3 + 100/3) = 10 ± 22.67; cp_recursion (sd 17.32 both)
    60 - 20 = 40 ± 2.776 · sqrt(200) = 40 ± 39.26; structural (sd 2.65 both) 13 - 3 = 10 ± 2.776 · sqrt(14/3)
    = 10 ± 6.00."""
    _write(synthetic, "recogs_pos_structure_pointer_keys_sides_transformer_fast", [
        _seed(1, 0.80, 0.90, 0.11, {"cp_recursion": 0.50}),
        _seed(2, 0.90, 0.95, 0.12, {"cp_recursion": 0.50}),
        _seed(3, 1.00, 1.00, 0.16, {"cp_recursion": 0.80}),
    ])
    table = render(synthetic).split("## recogs_pos: the settings side by side", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    assert rows[0] == ("| setting | gen | lexical | structural | obj_pp_to_subj_pp | cp_recursion | pp_recursion "
                       "| seeds | schedule | CPU thread-hours per seed |")
    assert rows[1].startswith("| standard: the fast recipe (`recogs_pos_transformer_fast`) | 80.0 ± 10.0 (70.0 (1), "
                              "80.0 (2), 90.0 (3)) | 95.0 ± 5.0 (90.0 (1), 95.0 (2), 100.0 (3)) | 3.0 ± 2.6 (1.0 (1), "
                              "2.0 (2), 6.0 (3)) | – | 20.0 ± 17.3 (10.0 (1), 10.0 (2), 40.0 (3)) | – | 3 | "
                              "20 epochs of batch 64 |")
    assert rows[2].startswith("| structure: + sides, keys (`recogs_pos_structure_pointer_keys_sides_transformer_fast`)"
                              " | 90.0 ± 10.0 (80.0 (1), 90.0 (2), 100.0 (3)) | 95.0 ± 5.0 (90.0 (1), 95.0 (2), "
                              "100.0 (3)) | 13.0 ± 2.6 (11.0 (1), 12.0 (2), 16.0 (3)) | – | 60.0 ± 17.3 (50.0 (1), "
                              "50.0 (2), 80.0 (3)) | – | 3 |")
    assert rows[3] == "| paper (Bruns (2025)) | 88.55 | – | – | 19.7 | 52.4 | 40.2 | | | |"
    assert "my_single_seed_run" not in table  # not a setting of the table
    assert "Each setting minus standard: the fast recipe, in SEM points" in table
    assert rows[-1] == ("| structure: + sides, keys | +10.0 [-12.7, +32.7] | +0.0 [-11.3, +11.3] | +10.0 [+4.0, "
                        "+16.0] | – | +40.0 [+0.7, +79.3] | – |")
