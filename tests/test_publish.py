"""``hf-recogs publish`` on hand-made run folders (no training): what it refuses, and that it never reads,
copies or removes a file outside the seed folders, nor silently replaces a published seed.

A seed's results.json is a published one of this repository (``results/cogs_transformer_fast``) with its seed
and options changed; the weights are a few bytes, which is all that publishing reads of them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hf_recogs.publish.results_folder import main as publish_main
from hf_recogs.publish.results_folder import model_code_files

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "results" / "cogs_transformer_fast" / "seed_42" / "results.json"


def make_seed(run: Path, seed: int, *, weights: bytes = b"weights", splits=("gen",), auto_map=None,
              **hyperparameters) -> Path:
    """A finished seed folder: results.json, predictions of ``splits``, a small model."""
    folder = run / f"seed_{seed}"
    folder.mkdir(parents=True)
    results = json.loads(TEMPLATE.read_text(encoding="utf-8"))
    results["seed"] = seed
    results["hyperparameters"].update(hyperparameters)
    (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
    for split in splits:
        (folder / f"predictions_{split}.jsonl").write_text('{"input": "A cat ran .", "prediction": "x"}\n')
    (folder / "model.safetensors").write_bytes(weights)
    config = {"model_type": "test"} if auto_map is None else {"model_type": "test", "auto_map": auto_map}
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def snapshot(folder: Path) -> dict:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} if folder.exists() else {}


def refused(capsys, argv: list[str], *needles: str) -> str:
    capsys.readouterr()
    assert publish_main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


def test_auto_map_names_only_plain_modules_of_the_seed_folder(tmp_path, capsys):
    """A config.json whose auto_map holds a path made publishing of another seed unlink that file."""
    victim_dir = tmp_path / "some" / "dir"
    victim_dir.mkdir(parents=True)
    victim = victim_dir / "victim.py"
    victim.write_text("precious = True\n")
    auto_map = {"AutoConfig": f"{victim_dir}/victim.Cfg", "AutoModel": "../../victim.Model",
                "AutoModelForSeq2SeqLM": "modeling_lstm.LSTM", "AutoTokenizer": [None, "user/repo--tok.Fast"]}
    run = tmp_path / "run"
    seed_7 = make_seed(run, 7, auto_map=auto_map)
    assert model_code_files(seed_7) == ("modeling_lstm.py",)
    (seed_7 / "modeling_lstm.py").write_text("class LSTM: ...\n")
    dest = tmp_path / "published"
    assert publish_main([str(run), str(dest), "--checkpoint", "7"]) == 0
    assert (dest / "seed_7" / "modeling_lstm.py").is_file()
    make_seed(tmp_path / "later", 8)
    assert publish_main([str(tmp_path / "later"), str(dest), "--checkpoint", "8"]) == 0
    assert victim.read_text() == "precious = True\n"
    assert not (dest / "seed_7" / "modeling_lstm.py").exists() and (dest / "seed_8" / "model.safetensors").is_file()


def test_a_link_out_of_a_seed_folder_is_refused_before_anything_is_written(tmp_path, capsys):
    outside = tmp_path / "outside.txt"
    outside.write_text("not ours")
    run = tmp_path / "run"
    folder = make_seed(run, 7)
    (folder / "curves.jsonl").symlink_to(outside)
    dest = tmp_path / "published"
    refused(capsys, [str(run), str(dest)], "leads outside")
    assert not dest.exists()
    # nor is a file written through a link in the destination
    (folder / "curves.jsonl").unlink()
    (dest / "seed_7").mkdir(parents=True)
    (dest / "seed_7" / "README.md").symlink_to(outside)
    refused(capsys, [str(run), str(dest)], "leads outside")
    assert outside.read_text() == "not ours"


def test_a_published_seed_is_refused_unless_identical_or_replaced_whole(tmp_path, capsys):
    """Seed 42 published from lr 1e-3, then another seed 42 trained with lr 5e-4: the card and results.json
    described the new one while model.safetensors was the old one, and stale predictions stayed."""
    first, dest = tmp_path / "first", tmp_path / "published"
    make_seed(first, 42, weights=b"old model", splits=("gen", "test"), learning_rate=1e-3)
    assert publish_main([str(first), str(dest), "--checkpoint", "42"]) == 0
    assert publish_main([str(first), str(dest), "--checkpoint", "42"]) == 0  # the same training: fine
    before = snapshot(dest)
    other = tmp_path / "other"
    make_seed(other, 42, weights=b"new model", splits=("gen",), learning_rate=5e-4)
    refused(capsys, [str(other), str(dest)], "seed 42 is already published", "learning_rate", "--replace")
    assert snapshot(dest) == before
    # same options, another training (its weights differ): refused too
    again = tmp_path / "again"
    make_seed(again, 42, weights=b"retrained", splits=("gen", "test"), learning_rate=1e-3)
    refused(capsys, [str(again), str(dest), "--checkpoint", "42"], "model.safetensors")
    assert snapshot(dest) == before
    assert publish_main([str(other), str(dest), "--replace"]) == 0
    seed = dest / "seed_42"
    assert json.loads((seed / "results.json").read_text())["hyperparameters"]["learning_rate"] == 5e-4
    assert not (seed / "model.safetensors").exists()  # the old model went with the old training
    assert not (seed / "predictions_test.jsonl.gz").exists() and (seed / "predictions_gen.jsonl.gz").is_file()
    assert publish_main([str(other), str(dest), "--checkpoint", "42"]) == 0
    assert (seed / "model.safetensors").read_bytes() == b"new model"


def test_a_republished_seed_keeps_only_the_new_copys_predictions(tmp_path):
    run, dest = tmp_path / "run", tmp_path / "published"
    folder = make_seed(run, 7, splits=("gen", "test"))
    assert publish_main([str(run), str(dest)]) == 0
    (folder / "predictions_test.jsonl").unlink()
    assert publish_main([str(run), str(dest)]) == 0
    assert sorted(p.name for p in (dest / "seed_7").glob("predictions_*")) == ["predictions_gen.jsonl.gz"]


@pytest.mark.parametrize("case", ["truncated", "empty_object", "not_an_object", "wrong_seed", "dest_corrupt",
                                  "dest_empty_object", "dest_is_a_file", "dest_is_the_run", "dest_in_the_run",
                                  "checkpoint_abc", "bad_config"])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, case):
    run, dest = tmp_path / "run", tmp_path / "published"
    folder = make_seed(run, 7)
    make_seed(run, 8)
    argv = [str(run), str(dest)]
    needle = {"truncated": "cut short", "empty_object": "no dataset", "not_an_object": "an object",
              "wrong_seed": "seed 9", "dest_corrupt": "repair it", "dest_empty_object": "repair it",
              "dest_is_a_file": "is a file", "dest_is_the_run": "run folder", "dest_in_the_run": "run folder",
              "checkpoint_abc": "give 'median' or a seed number", "bad_config": "not a model config"}[case]
    results = folder / "results.json"
    if case == "truncated":
        results.write_text(results.read_text()[:200])
    elif case == "empty_object":
        results.write_text("{}")
    elif case == "not_an_object":
        results.write_text("[1, 2]")
    elif case == "wrong_seed":
        results.write_text(results.read_text().replace('"seed": 7', '"seed": 9'))
    elif case in ("dest_corrupt", "dest_empty_object"):
        make_seed(tmp_path / "earlier", 5)
        assert publish_main([str(tmp_path / "earlier"), str(dest)]) == 0
        (dest / "seed_5" / "results.json").write_text('{"seed": 5, "spl' if case == "dest_corrupt" else "{}")
    elif case == "dest_is_a_file":
        dest.write_text("a file")
    elif case == "dest_is_the_run":
        argv = [str(run), str(run / ".")]
    elif case == "dest_in_the_run":
        argv = [str(run), str(run / "published")]
    elif case == "checkpoint_abc":
        argv += ["--checkpoint", "abc"]
    elif case == "bad_config":
        (folder / "config.json").write_text("{not json")
        argv += ["--checkpoint", "7"]
    before, run_before = snapshot(dest) if dest.is_dir() else None, snapshot(run)
    refused(capsys, argv, needle)
    assert (snapshot(dest) if dest.is_dir() else None) == before
    assert snapshot(run) == run_before and not (run / "published").exists()
    if case == "dest_is_a_file":
        assert dest.read_text() == "a file"


def test_evaluations_of_each_seeds_own_model_publish_together_when_the_models_agree(tmp_path, capsys):
    """``do_train=false`` seeds score one model each, so their model_name_or_path differs by design: publish takes
    them together when the scored models' config.json agree, refuses them when they do not, and still refuses
    training runs started from different models."""
    models = tmp_path / "models"

    def evaluation(run: Path, seed: int, window: int) -> None:
        model = models / f"{run.name}_{seed}"
        model.mkdir(parents=True)
        config = {"model_type": "structure_transformer", "decoder_attention_window": window}
        (model / "config.json").write_text(json.dumps({**config, "_name_or_path": str(model)}))
        folder = make_seed(run, seed, model_name_or_path=str(model), do_train=False)
        results = json.loads((folder / "results.json").read_text())
        results.pop("train")
        results["evaluated_model"] = str(model)
        (folder / "results.json").write_text(json.dumps(results))

    same, mixed, trained = tmp_path / "same", tmp_path / "mixed", tmp_path / "trained"
    evaluation(same, 42, 8)
    evaluation(same, 66, 8)
    assert publish_main([str(same), str(tmp_path / "out_same")]) == 0
    assert {p.name for p in (tmp_path / "out_same").glob("seed_*")} == {"seed_42", "seed_66"}
    evaluation(mixed, 42, 8)
    evaluation(mixed, 66, 0)
    refused(capsys, [str(mixed), str(tmp_path / "out_mixed")], "evaluated_model_config")
    assert not (tmp_path / "out_mixed").exists()
    # an evaluation made before the model's training wrote its results.json records no seed: say what to redo
    early = tmp_path / "early"
    evaluation(early, 77, 8)
    record = json.loads((early / "seed_77" / "results.json").read_text())
    (early / "seed_77" / "results.json").write_text(json.dumps({**record, "seed": None}))
    refused(capsys, [str(early), str(tmp_path / "out_early")], "seed unknown", "evaluate it again")
    assert not (tmp_path / "out_early").exists()
    make_seed(trained, 42, model_name_or_path="a")
    make_seed(trained, 66, model_name_or_path="b")
    refused(capsys, [str(trained), str(tmp_path / "out_trained")], "(model_name_or_path)")
