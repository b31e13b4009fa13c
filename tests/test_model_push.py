"""hf_recogs.publish.model_push.push (`hf-recogs push`) and train.py's push_to_hub against the loopback fake Hub
(tests/fake_hub.py).

The HF libraries read HF_ENDPOINT at import time, so every push/load runs in a subprocess with
``hub_env(endpoint)``. Covered: the uploaded files (model, tokenizer, config, card, results, plot; no
checkpoints or pickles), our model card with ``model-index`` (not the Trainer's), loading the pushed custom LSTM
back with ``AutoModelForSeq2SeqLM.from_pretrained(repo)`` and generating the same output as the local copy,
the one-line errors for a missing token and an unreachable endpoint (local output untouched), and
``push_to_hub: true`` in a training config.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from fake_hub import FakeHub, hub_env
from test_training import write_config

ROOT = Path(__file__).resolve().parents[1]

LOAD_AND_GENERATE = r"""
import json, sys
import torch
import hf_recogs.models  # registers the custom LSTM with the Auto classes
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer
src, inputs = sys.argv[1], json.loads(sys.argv[2])
tok = AutoTokenizer.from_pretrained(src)
model = AutoModelForSeq2SeqLM.from_pretrained(src).eval()
enc = tok(inputs, return_tensors="pt", padding=True, return_token_type_ids=False)
with torch.no_grad():
    out = model.generate(**enc, max_length=16)
print(json.dumps(tok.batch_decode(out, skip_special_tokens=True)))
"""

PUSH = r"""
import sys
from hf_recogs.publish.model_push import push
print(push(sys.argv[1], sys.argv[2]))
"""


@pytest.fixture(scope="module")
def trained_lstm(tmp_path_factory) -> Path:
    from hf_recogs.train import main

    folder = tmp_path_factory.mktemp("lstm")
    cfg = write_config(folder, arch="lstm", model_overrides={"hidden_size": 16}, num_train_epochs=1,
                       save_strategy="steps", save_steps=10)
    assert main([str(cfg)]) == 0
    out = folder / "out" / "seed_7"
    assert list(out.glob("checkpoint-*")), "the fixture should include a checkpoint folder (it must not be pushed)"
    return out


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.rglob("*") if p.is_file()}


def _py(code_or_args, env, cwd=None, timeout=180):
    args = ["-c", code_or_args[0], *code_or_args[1:]] if isinstance(code_or_args, tuple) else code_or_args
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd or ROOT,
                          timeout=timeout)


def test_push_roundtrip_lstm(trained_lstm, tmp_path):
    inputs = ["a b c", "h g f e", "d d"]
    local = _py((LOAD_AND_GENERATE, str(trained_lstm), json.dumps(inputs)), env=None)
    assert local.returncode == 0, local.stderr[-2000:]
    with FakeHub() as hub:
        env = hub_env(hub.endpoint, hf_home=tmp_path / "hf_home")
        env["PYTHONPATH"] = str(ROOT)
        pushed = _py((PUSH, str(trained_lstm), "fake-user/tiny-lstm"), env)
        assert pushed.returncode == 0, pushed.stderr[-2000:]
        files = hub.files("fake-user/tiny-lstm")
        for name in ("config.json", "model.safetensors", "generation_config.json", "tokenizer.json",
                     "tokenizer_config.json", "README.md", "results.json", "per_category.png",
                     "predictions_gen.jsonl"):
            assert name in files, sorted(files)
        assert not [f for f in files if f.startswith("checkpoint-") or f.endswith((".bin", ".pt", ".pth"))]
        assert files["model.safetensors"] == (trained_lstm / "model.safetensors").read_bytes()
        card = files["README.md"].decode()
        assert card.startswith("---\n") and "model-index:" in card and "hf_recogs" in card
        assert 'from_pretrained("fake-user/tiny-lstm")' in card  # re-rendered with the final repo id
        assert "![Per-category results](per_category.png)" in card
        assert "kim-linzen-2020-cogs" not in card  # data_files run: no dataset citation to invent
        # one upload_folder commit after the repo's initial commit, no Trainer card on top
        assert [c.title for c in hub.commits("fake-user/tiny-lstm")][:-1] == ["Upload lstm trained on data_files"]
        loaded = _py((LOAD_AND_GENERATE, "fake-user/tiny-lstm", json.dumps(inputs)), env)
        assert loaded.returncode == 0, loaded.stderr[-2000:]
    assert json.loads(loaded.stdout) == json.loads(local.stdout)


def test_push_without_token_is_one_clear_line(trained_lstm, tmp_path):
    before = _snapshot(trained_lstm)
    with FakeHub() as hub:
        env = hub_env(hub.endpoint, token=None, hf_home=tmp_path / "hf_home")
        env["PYTHONPATH"] = str(ROOT)
        proc = _py(["-m", "hf_recogs.publish.model_push", str(trained_lstm), "fake-user/x"], env)
        assert not hub.repos
    assert proc.returncode == 1
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: no Hugging Face token"), proc.stderr
    assert "hf auth login" in lines[0] and "is intact" in lines[0]
    assert _snapshot(trained_lstm) == before


def test_push_to_unreachable_endpoint_is_one_clear_line(trained_lstm, tmp_path):
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    before = _snapshot(trained_lstm)
    env = hub_env(f"http://127.0.0.1:{port}", hf_home=tmp_path / "hf_home")
    env["PYTHONPATH"] = str(ROOT)
    proc = _py(["-m", "hf_recogs", "push", str(trained_lstm), "fake-user/x"], env, timeout=120)
    assert proc.returncode == 1
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot reach the Hub at http://127.0.0.1:{port}"), \
        proc.stderr
    assert _snapshot(trained_lstm) == before


def test_push_refuses_unfinished_folder(tmp_path):
    from hf_recogs.publish.model_push import HubPushError, push

    with pytest.raises(HubPushError, match="not a finished training output"):
        push(tmp_path, "fake-user/x", token="t")


def test_train_with_push_to_hub(tmp_path):
    cfg = write_config(tmp_path, num_train_epochs=1, push_to_hub=True, hub_model_id="fake-user/tiny-tf")
    with FakeHub() as hub:
        env = hub_env(hub.endpoint, hf_home=tmp_path / "hf_home")
        env["PYTHONPATH"] = str(ROOT)
        proc = _py([str(ROOT / "train.py"), str(cfg)], env, cwd=tmp_path, timeout=240)
        assert proc.returncode == 0, proc.stderr[-3000:]
        files = hub.files("fake-user/tiny-tf")
        assert {"config.json", "model.safetensors", "README.md", "results.json", "per_category.png"} <= set(files)
        assert "model-index:" in files["README.md"].decode()
        assert len([c for c in hub.commits("fake-user/tiny-tf") if c.title != "initial commit"]) == 1


def test_failed_upload_after_repo_creation_leaves_the_folder_untouched(trained_lstm, tmp_path):
    """The Hub creates the repository, then the upload fails: one line, and not a byte of the local folder
    (README.md included) has changed, as the message says."""
    before = _snapshot(trained_lstm)
    card = (trained_lstm / "README.md").read_bytes()
    with FakeHub() as hub:
        hub.fail_actions = {"preupload", "commit"}
        env = hub_env(hub.endpoint, hf_home=tmp_path / "hf_home")
        env["PYTHONPATH"] = str(ROOT)
        proc = _py(["-m", "hf_recogs", "push", str(trained_lstm), "fake-user/half"], env)
        assert ("model", "fake-user/half") in hub.repos  # the repository was created
    assert proc.returncode == 1
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "HTTP 400" in lines[0] and "is intact" in lines[0], proc.stderr
    assert _snapshot(trained_lstm) == before and (trained_lstm / "README.md").read_bytes() == card


def test_push_error_lines_are_shared_by_model_and_dataset_pushes():
    """One mapping of Hub failures to one line (model_push.push_error_line, used by model_push.push and
    dataset_export.push).
    HfHubHTTPError is an OSError: a rejected token must not read as an unreachable Hub (the dataset push's
    own mapping used to check OSError first)."""
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError

    from hf_recogs.publish.model_push import push_error_line

    request = httpx2.Request("POST", "http://hub.test/api/repos/create")

    def http(code):
        return HfHubHTTPError(f"{code} error: refused", response=httpx2.Response(code, request=request))

    assert push_error_line(http(401), "http://hub.test", "u/r", "set HF_TOKEN") == (
        "the Hub at http://hub.test rejected the token (401); set HF_TOKEN")
    assert "no write access to u/r" in push_error_line(http(403), "http://hub.test", "u/r", "set HF_TOKEN")
    assert "HTTP 500" in push_error_line(http(500), "http://hub.test", "u/r", "set HF_TOKEN")
    try:
        try:
            raise ConnectionRefusedError(111, "refused")
        except OSError as inner:
            raise RuntimeError("upload failed") from inner
    except RuntimeError as wrapped:
        line = push_error_line(wrapped, "http://hub.test", "u/r", "set HF_TOKEN", "(local files intact)")
    assert line.startswith("cannot reach the Hub at http://hub.test") and line.endswith("(local files intact)")
    assert "\n" not in push_error_line(ValueError("first\nsecond"), "http://hub.test", "u/r", "set HF_TOKEN")
