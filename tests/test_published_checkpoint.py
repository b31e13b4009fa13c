"""The checkpoint committed under results/ still decodes and scores as it did when its run was published.

A regression test of the whole evaluation path (plain ``AutoModelForSeq2SeqLM`` loading, tokenizer, greedy
decoding, SEM scoring) against the per-row verdicts the training run wrote to ``predictions_gen.jsonl.gz``.
Rows: a fixed stratified 300-row sample of gen (every category present), not chosen by the code under test's
output. Needs no mirror: the predictions file carries inputs, gold forms and categories.
"""

import gzip
import json
import random

import pytest
from conftest import ROOT

CHECKPOINTS = sorted(p.parent for p in (ROOT / "results").glob("*/seed_*/model.safetensors"))
SAMPLE_ROWS = 300


def _sample(records: list[dict], n: int, seed: int = 0) -> list[dict]:
    by_category: dict[str, list[dict]] = {}
    for record in records:
        by_category.setdefault(record["category"], []).append(record)
    rng = random.Random(seed)
    pools = [rng.sample(rows, len(rows)) for _, rows in sorted(by_category.items())]
    picked: list[dict] = []
    while len(picked) < n:
        for pool in pools:
            if pool and len(picked) < n:
                picked.append(pool.pop())
    return picked


def test_a_checkpoint_is_committed():
    assert CHECKPOINTS, "no results/<run>/seed_<n>/model.safetensors: publish one with python -m hf_recogs.results"


@pytest.mark.parametrize("folder", CHECKPOINTS, ids=[f"{p.parent.name}/{p.name}" for p in CHECKPOINTS])
def test_checkpoint_reproduces_its_gen_verdicts(folder):
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from hf_recogs.training import cpu_has_native_bf16, greedy_decode, score_split

    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    bf16 = results["mixed_precision"] == "bf16"
    if bf16 and not cpu_has_native_bf16():
        pytest.skip("the run decoded under bf16 autocast; this CPU has no native bf16, so rounding may differ")
    with gzip.open(folder / "predictions_gen.jsonl.gz", "rt", encoding="utf-8") as f:
        stored = [json.loads(line) for line in f]
    rows = _sample(stored, SAMPLE_ROWS)
    assert len({r["category"] for r in rows}) == len({r["category"] for r in stored})

    torch.manual_seed(0)
    model = AutoModelForSeq2SeqLM.from_pretrained(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    max_length = results["hyperparameters"]["generation_max_length"]
    predictions = greedy_decode(model, tokenizer, [r["input"] for r in rows], max_length, bf16=bf16)
    scored = score_split([{"input": r["input"], "output": r["gold"], "category": r["category"]} for r in rows],
                         predictions, results["metric"])

    verdicts = [(r["sem"], r["exact"]) for r in scored]
    expected = [(r["sem"], r["exact"]) for r in rows]
    assert verdicts == expected
    # the stored file has both right and wrong rows in the sample, so the comparison means something
    assert 0 < sum(r["sem"] for r in rows) < len(rows)


@pytest.mark.parametrize("folder", CHECKPOINTS, ids=[f"{p.parent.name}/{p.name}" for p in CHECKPOINTS])
def test_committed_checkpoint_pushes_as_is(folder, tmp_path):
    """python -m hf_recogs.hub publishes the committed folder unchanged (loopback Hub): model, tokenizer,
    gzipped predictions, and a card whose model-index carries every gen category; nothing local is written."""
    import subprocess
    import sys

    import yaml
    from fake_hub import FakeHub, hub_env

    before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    with FakeHub() as hub:
        env = hub_env(hub.endpoint, hf_home=tmp_path / "hf_home")
        env["PYTHONPATH"] = str(ROOT)
        out = subprocess.run([sys.executable, "-m", "hf_recogs.hub", str(folder), "fake-user/published"],
                             capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        files = hub.files("fake-user/published")
    assert files["model.safetensors"] == (folder / "model.safetensors").read_bytes()
    assert {"tokenizer.json", "config.json", "results.json", "predictions_gen.jsonl.gz"} <= set(files)
    card = files["README.md"].decode()
    index = yaml.safe_load(card.split("---\n")[1])["model-index"][0]["results"]
    named = {m["name"] for result in index for m in result["metrics"]}
    with gzip.open(folder / "predictions_gen.jsonl.gz", "rt", encoding="utf-8") as f:
        categories = {json.loads(line)["category"] for line in f}
    assert all(any(f"({c})" in name for name in named) for c in categories)
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == before
