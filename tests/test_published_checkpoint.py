"""The checkpoints committed under results/ still decode and score as they did when their runs were published
(a classifier: still give the stored probabilities).

A regression test of the whole evaluation path (plain ``AutoModelForSeq2SeqLM`` loading, tokenizer, greedy
decoding, scoring by the run's metric) against the per-row verdicts the training run wrote to its predictions
file for gen (test where the benchmark has no gen split, as SCAN). Rows: a fixed stratified 300-row sample
(every category present), not chosen by the code under test's output. Needs no mirror: the predictions file
carries inputs, gold outputs and categories. A seq2seq run that decoded under bf16 autocast is replayed only on a
CPU with native bf16 (one flipped argmax changes a verdict); a classifier scored under bf16 is replayed everywhere,
under bf16 autocast, which PyTorch emulates where the CPU lacks it; the fp32 SCAN checkpoint is replayed everywhere.
"""

import ast
import contextlib
import gzip
import io
import json
import random
import re

import pytest
from conftest import HAVE_MIRROR, ROOT

CHECKPOINTS = sorted(p.parent for p in (ROOT / "results").glob("*/seed_*/model.safetensors"))
SAMPLE_ROWS = 300


def _predictions(folder) -> tuple[str, list[dict]]:
    """The split a run is judged on (gen, else test) and its stored predictions."""
    split = "gen" if (folder / "predictions_gen.jsonl.gz").exists() else "test"
    with gzip.open(folder / f"predictions_{split}.jsonl.gz", "rt", encoding="utf-8") as f:
        return split, [json.loads(line) for line in f]


def _sample(records: list[dict], n: int, seed: int = 0) -> list[dict]:
    by_category: dict[str, list[dict]] = {}
    for record in records:
        by_category.setdefault(record["category"], []).append(record)
    rng = random.Random(seed)
    pools = [rng.sample(rows, len(rows)) for _, rows in sorted(by_category.items())]
    picked: list[dict] = []
    n = min(n, len(records))  # a split smaller than the sample is taken whole
    while len(picked) < n:
        for pool in pools:
            if pool and len(picked) < n:
                picked.append(pool.pop())
    return picked


def test_a_checkpoint_is_committed():
    assert CHECKPOINTS, "no results/<run>/seed_<n>/model.safetensors: publish one with hf-recogs publish"


@pytest.mark.parametrize("folder", CHECKPOINTS, ids=[f"{p.parent.name}/{p.name}" for p in CHECKPOINTS])
def test_checkpoint_reproduces_its_stored_verdicts(folder):
    from hf_recogs.train.hardware import cpu_has_native_bf16

    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    bf16 = results["mixed_precision"] == "bf16"
    if results["metric"] == "classification":
        _replay_classifier(folder, results, bf16)
        return
    if bf16 and not cpu_has_native_bf16():
        pytest.skip("the run decoded under bf16 autocast; this CPU has no native bf16, so rounding may differ")
    _replay_seq2seq(folder, results, bf16)


def _replay_classifier(folder, results: dict, bf16: bool) -> None:
    """A published (input, candidate) classifier gives the sample's pairs the probabilities its run stored."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    import hf_recogs.models  # noqa: F401 - registers the classifiers with the Auto classes
    from hf_recogs.train.data import PairCollator, annotator_of
    from hf_recogs.train.decode import classify

    _, stored = _predictions(folder)
    rows = _sample(stored, SAMPLE_ROWS)
    model = AutoModelForSequenceClassification.from_pretrained(folder)
    collator = PairCollator(AutoTokenizer.from_pretrained(folder), annotator_of(results["dataset"]),
                            structure_tokens=getattr(model.config, "structure_tokens", True),
                            max_length=model.config.max_position_embeddings,
                            relations=getattr(model, "reads_relations", True))
    pairs = [{"input": r["input"], "candidate": r["candidate"]} for r in rows]
    probabilities = classify(model, collator, pairs, bf16=bf16, shared=False)
    # bf16 rounding differs from one CPU to another: one row of 300 was 2.9e-3 off on a CPU other than the run's,
    # at most 1.4e-3 under the emulated bf16 of an AVX2 CPU (in fp32 there, 6 rows were over 5e-3: up to 9.4e-3)
    assert probabilities == pytest.approx([r["probability"] for r in rows], abs=5e-3 if bf16 else 1e-5)
    assert {r["label"] for r in rows} == {0, 1}  # both kinds of pair, so the comparison means something


def _replay_seq2seq(folder, results: dict, bf16: bool) -> None:
    from hf_recogs.scoring import score_rows

    _, stored = _predictions(folder)
    rows = _sample(stored, SAMPLE_ROWS)
    assert len({r["category"] for r in rows}) == len({r["category"] for r in stored})
    predictions = _decoded_again(folder, results, rows, bf16)
    scored = score_rows(predictions, [r["gold"] for r in rows], [r["category"] for r in rows], results["metric"],
                        inputs=[r["input"] for r in rows])

    verdicts = [(r.get("sem"), r["exact"]) for r in scored]
    expected = [(r.get("sem"), r["exact"]) for r in rows]
    assert verdicts == expected
    # the sample has both right and wrong rows, so the comparison means something
    assert 0 < sum(r["exact"] if r.get("sem") is None else r["sem"] for r in rows) < len(rows)


def _decoded_again(folder, results: dict, rows: list[dict], bf16: bool) -> list[str]:
    """Greedy predictions of the published model for ``rows``' inputs, as a user gets them: plain Auto loading,
    and for a structure_transformer the inputs laid out with their trees (``SourceLayout.for_model``)."""
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    import hf_recogs.models  # noqa: F401 - registers the custom models with the Auto classes, as the cards say
    from hf_recogs.train.data import SourceLayout
    from hf_recogs.train.decode import decode

    torch.manual_seed(0)
    model = AutoModelForSeq2SeqLM.from_pretrained(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    encode = None
    if model.config.model_type == "hf_recogs_structure_transformer":
        if not HAVE_MIRROR:
            pytest.skip("a structure model's parser learns its verb classes from ReCOGS_pos train: needs the mirror")
        encode = SourceLayout.for_model(model, tokenizer).batch
    max_length = results["hyperparameters"]["generation_max_length"]
    return decode(model, tokenizer, [r["input"] for r in rows], max_length, bf16=bf16, encode=encode)


@pytest.mark.parametrize("folder", CHECKPOINTS, ids=[f"{p.parent.name}/{p.name}" for p in CHECKPOINTS])
def test_committed_checkpoint_pushes_as_is(folder, tmp_path):
    """hf-recogs push publishes the committed folder unchanged (loopback Hub): model, tokenizer,
    gzipped predictions, and a card whose model-index carries every gen category; nothing local is written."""
    _pushes_as_is(folder, tmp_path)


def _pushes_as_is(folder, tmp_path):
    import subprocess
    import sys

    import yaml
    from fake_hub import FakeHub, hub_env

    before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    with FakeHub() as hub:
        env = hub_env(hub.endpoint, hf_home=tmp_path / "hf_home")
        env["PYTHONPATH"] = str(ROOT)
        out = subprocess.run([sys.executable, "-m", "hf_recogs", "push", str(folder), "fake-user/published"],
                             capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        files = hub.files("fake-user/published")
    assert files["model.safetensors"] == (folder / "model.safetensors").read_bytes()
    split, stored = _predictions(folder)
    assert {"tokenizer.json", "config.json", "results.json", f"predictions_{split}.jsonl.gz"} <= set(files)
    card = files["README.md"].decode()
    index = yaml.safe_load(card.split("---\n")[1])["model-index"][0]["results"]
    named = {m["name"] for result in index for m in result["metrics"]}
    categories = {r["category"] for r in stored}
    assert all(any(f"({c})" in name for name in named) for c in categories)
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == before


CUSTOM = [p for p in CHECKPOINTS if "auto_map" in json.loads((p / "config.json").read_text(encoding="utf-8"))]


@pytest.mark.parametrize("folder", CUSTOM, ids=[f"{p.parent.name}/{p.name}" for p in CUSTOM])
def test_custom_checkpoint_loads_without_hf_recogs(folder, tmp_path):
    """A custom architecture's published folder carries its code: plain transformers loads it (seq2seq or
    classifier, by the run's metric) with trust_remote_code=True, in a process that never imports hf_recogs."""
    _loads_without_hf_recogs(folder, tmp_path)


def _loads_without_hf_recogs(folder, tmp_path):
    import subprocess
    import sys

    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    auto = "AutoModelForSequenceClassification" if results["metric"] == "classification" else "AutoModelForSeq2SeqLM"
    script = (
        "import sys\n"
        f"from transformers import {auto}\n"
        f"model = {auto}.from_pretrained({str(folder)!r}, trust_remote_code=True)\n"
        "assert 'hf_recogs' not in sys.modules, 'hf_recogs was imported'\n"
        "print(type(model).__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                         env={"HF_HOME": str(tmp_path / "hf_home"), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
                         check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().startswith("transformers_modules.")


def test_model_code_next_to_a_checkpoint_is_the_packages():
    """A published LSTM folder carries the model code for ``trust_remote_code=True``; it must be the code the
    package runs, or a user without hf_recogs would load another model than the one we test."""
    copies = sorted((ROOT / "results").glob("*/seed_*/*.py"))
    for copy in copies:
        assert copy.read_bytes() == (ROOT / "hf_recogs" / "models" / copy.name).read_bytes(), (
            f"{copy} differs from hf_recogs/models/{copy.name}: republish the run (hf-recogs publish) or delete it")


def test_a_published_classifier_replays_its_stored_probabilities(tmp_path):
    """The replay, push and plain-transformers loading above on a classifier trained here and published with
    hf-recogs publish (results/ holds no classifier checkpoint yet)."""
    from test_classification_training import write_config

    from hf_recogs.publish.results_folder import publish
    from hf_recogs.train import main

    assert main([str(write_config(tmp_path))]) == 0
    publish(tmp_path / "out", tmp_path / "results" / "pairs", checkpoint="3")
    folder = tmp_path / "results" / "pairs" / "seed_3"
    assert (folder / "model.safetensors").is_file() and (folder / "predictions_test.jsonl.gz").is_file()
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    _replay_classifier(folder, results, results["mixed_precision"] == "bf16")
    # the other checks of a committed checkpoint, on this one
    (tmp_path / "push").mkdir()
    _pushes_as_is(folder, tmp_path / "push")
    _loads_without_hf_recogs(folder, tmp_path)
    # a changed weight is caught
    from safetensors.torch import load_file, save_file

    weights = load_file(folder / "model.safetensors")
    name = next(k for k in weights if k.endswith("weight") and weights[k].dim() == 2)
    weights[name] = weights[name] * 0.5
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(AssertionError):
        _replay_classifier(folder, results, results["mixed_precision"] == "bf16")


@pytest.mark.mirror
def test_a_published_structure_model_decodes_as_its_run_did(tmp_path, mirror):
    """A structure_transformer (tree mask, both pointer terms, keys, shifted decoder positions) trained here, published with its checkpoint
    and loaded as a user loads it: its inputs laid out by ``SourceLayout.for_model`` give the predictions its run
    stored, and so does the usage snippet of its card; without the layout (no relation_ids) the model refuses to
    run."""
    from test_structure_transformer import CONFIG, TINY
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from hf_recogs.publish.results_folder import publish
    from hf_recogs.train import main
    from hf_recogs.train.decode import decode

    model = json.dumps({**TINY, "structure_heads": 1, "cross_attention_structure": "pointer", "pointer_offsets": 4,
                        "pointer_keys": True, "decoder_position_shift": 8})
    assert main([CONFIG, f"output_dir={tmp_path / 'out'}", "seeds=[3]", "max_train_samples=48", "max_steps=3",
                 "eval_strategy=no", "save_strategy=no", "eval_splits=[gen]", "max_eval_samples=6",
                 "generation_max_length=12", "source_check=false", "cpu_threads=1",
                 f"model_overrides={model}"]) == 0
    publish(tmp_path / "out", tmp_path / "results" / "tiny", checkpoint="3")
    folder = tmp_path / "results" / "tiny" / "seed_3"
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    _, stored = _predictions(folder)
    bf16 = results["mixed_precision"] == "bf16"
    assert _decoded_again(folder, results, stored, bf16) == [r["prediction"] for r in stored]
    with pytest.raises(ValueError, match="needs relation_ids"):
        decode(AutoModelForSeq2SeqLM.from_pretrained(folder), AutoTokenizer.from_pretrained(folder),
               [stored[0]["input"]], 12)
    # the card's usage snippet, run as written against the folder, gives its example the stored prediction
    card = (folder / "README.md").read_text(encoding="utf-8")
    snippet = re.search(r"## Usage\n\n```python\n(.*?)```", card, re.DOTALL).group(1)
    assert f".batch([{json.dumps(stored[0]['input'])}])" in snippet
    snippet = snippet.replace('"<user>/<repo>"', repr(str(folder))).replace("max_length=512", "max_length=12")
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        exec(snippet, {})
    assert [" ".join(p.split()) for p in ast.literal_eval(printed.getvalue())] == [stored[0]["prediction"]]
