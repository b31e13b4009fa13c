"""Test environment: offline Hugging Face libraries, a private HF_HOME, and the mirror when present.

The variables are read by the HF libraries at import time, so they are set here, before any test imports them.
"""

import os
import tempfile
from pathlib import Path

import pytest

_HF_HOME = tempfile.mkdtemp(prefix="hf_recogs_test_home_")
for _name, _value in {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_EVALUATE_OFFLINE": "1",
    "HF_UPDATE_DOWNLOAD_COUNTS": "0",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "HF_HOME": _HF_HOME,
}.items():
    os.environ[_name] = _value
if os.environ.get("PYTEST_XDIST_WORKER"):
    # Under `pytest -n N` the N workers already fill the cores: one BLAS thread each, set before torch is imported
    # (a test's subprocesses inherit it), instead of N workers each starting a thread per core.
    os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parents[1]
_DEFAULT_MIRROR = ROOT.parent / "shared" / "mirror"
MIRROR = Path(os.environ.get("HF_RECOGS_MIRROR") or _DEFAULT_MIRROR)
HAVE_MIRROR = (MIRROR / "MANIFEST.tsv").is_file()
if HAVE_MIRROR:
    os.environ["HF_RECOGS_MIRROR"] = str(MIRROR)
else:
    os.environ.pop("HF_RECOGS_MIRROR", None)

needs_mirror = pytest.mark.skipif(
    not HAVE_MIRROR,
    reason=f"offline mirror not found at {MIRROR} (put the shared mirror there or set HF_RECOGS_MIRROR)",
)


@pytest.fixture
def mirror() -> Path:
    if not HAVE_MIRROR:
        pytest.skip(f"offline mirror not found at {MIRROR}")
    return MIRROR


@pytest.fixture
def no_mirror(monkeypatch):
    """Run a test as a user without a mirror (loading logic tests use fixtures they write themselves)."""
    monkeypatch.delenv("HF_RECOGS_MIRROR", raising=False)
    from hf_recogs import sources

    sources.fetch_bytes.cache_clear()
    yield
    sources.fetch_bytes.cache_clear()


PUBLISHED_FAST = ROOT / "results" / "recogs_pos_transformer_fast" / "seed_77"


@pytest.fixture(scope="module")
def published_fast():
    """The published fast-recipe Transformer (seed 77) and its tokenizer, on one thread."""
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield AutoModelForSeq2SeqLM.from_pretrained(PUBLISHED_FAST).eval(), AutoTokenizer.from_pretrained(PUBLISHED_FAST)
    torch.set_num_threads(threads)
