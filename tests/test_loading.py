"""Loading machinery on fixtures written here: verified sources, the datasets builder and the bare-name hook."""

import gzip
import hashlib
import os
import subprocess
import sys
import types
from pathlib import Path
from unittest import mock

import pytest

import hf_recogs
from hf_recogs import registry, sources
from hf_recogs.registry import DatasetConfig, Param, all_configs, get_config
from hf_recogs.sources import ChecksumMismatch, SourceUnavailable, UpstreamFile

ROOT = Path(__file__).resolve().parents[1]
COMMIT = "0123456789abcdef0123456789abcdef01234567"
GOOD = b"Emma ate the cake .\teat . agent ( x _ 1 , Emma )\tin_distribution\nA dog ran .\tdog ( x _ 1 )\tgen_case\n"


def upstream(path: str, content: bytes, with_sha256: bool = True) -> UpstreamFile:
    git_blob = hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()
    sha = hashlib.sha256(content).hexdigest() if with_sha256 else None
    return UpstreamFile("fixture/repo", COMMIT, path, git_blob, sha, len(content))


def put(mirror: Path, file: UpstreamFile, content: bytes, packed: bool = False) -> Path:
    target = mirror / file.relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    if packed:
        target = target.with_name(target.name + ".gz")
        content = gzip.compress(content)
    target.write_bytes(content)
    return target


@pytest.fixture
def fixture_mirror(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    monkeypatch.setenv("HF_RECOGS_MIRROR", str(mirror))
    monkeypatch.setenv("HF_RECOGS_CACHE", str(tmp_path / "cache"))
    sources.fetch_bytes.cache_clear()
    yield mirror
    sources.fetch_bytes.cache_clear()


def test_git_blob_sha1_matches_git():
    # `git hash-object` is the authority for blob ids.
    out = subprocess.run(["git", "hash-object", "--stdin"], input=GOOD, capture_output=True, check=True)
    assert sources.git_blob_sha1(GOOD) == out.stdout.decode().strip()


@pytest.mark.parametrize("packed", [False, True])
def test_mirror_file_is_verified_and_read(fixture_mirror, packed):
    file = upstream("data/train.tsv", GOOD)
    put(fixture_mirror, file, GOOD, packed=packed)
    assert sources.read_tsv(file) == [
        ["Emma ate the cake .", "eat . agent ( x _ 1 , Emma )", "in_distribution"],
        ["A dog ran .", "dog ( x _ 1 )", "gen_case"],
    ]


def test_every_single_bit_flip_in_a_mirror_gz_is_the_one_line_message(fixture_mirror):
    """Each bit of the deflate stream flipped in turn: zlib.error, EOFError and BadGzipFile (or a checksum
    mismatch when the stream still inflates to other bytes) all become ChecksumMismatch, never an uncaught
    exception; a flip that changes nothing (padding bits) reads the verified content."""
    import zlib

    content = GOOD * 20
    file = upstream("data/train.tsv", content)
    packed = bytearray(gzip.compress(content, mtime=0))
    target = put(fixture_mirror, file, content, packed=True)
    kinds = set()
    for byte in range(10, len(packed) - 8):  # the deflate stream, between the gzip header and trailer
        for bit in (0, 3, 7):
            bad = bytearray(packed)
            bad[byte] ^= 1 << bit
            try:
                harmless = gzip.decompress(bytes(bad)) == content  # e.g. a flip in the final padding bits
            except (zlib.error, EOFError, OSError) as exc:
                kinds.add(type(exc).__name__)
                harmless = False
            target.write_bytes(bytes(bad))
            sources.fetch_bytes.cache_clear()
            if harmless:
                assert sources.fetch_bytes(file) == content
            else:
                with pytest.raises(ChecksumMismatch):
                    sources.fetch_bytes(file)
    assert "error" in kinds  # zlib.error did occur among the flips, and was caught


def test_corrupt_cache_entry_is_reported_not_dropped_silently(fixture_mirror, tmp_path):
    """Offline, no mirror copy, a corrupt cached copy: the message says it failed verification and was removed."""
    file = upstream("data/dev.tsv", GOOD)
    cached = tmp_path / "cache" / file.relpath
    cached.parent.mkdir(parents=True)
    cached.write_bytes(GOOD[:-5])
    with pytest.raises(SourceUnavailable) as err:
        sources.fetch_bytes(file)
    message = str(err.value)
    assert f"the cached copy {cached} failed verification" in message and "was removed" in message
    assert "HF_RECOGS_MIRROR" in message and not cached.exists()


@pytest.mark.parametrize("with_sha256", [True, False])
def test_corrupt_and_truncated_files_are_refused(fixture_mirror, with_sha256):
    file = upstream("data/train.tsv", GOOD, with_sha256=with_sha256)
    put(fixture_mirror, file, GOOD.replace(b"cake", b"cafe"))
    with pytest.raises(ChecksumMismatch) as err:
        sources.fetch_bytes(file)
    message = str(err.value)
    assert "\n" not in message and file.url in message
    assert (file.sha256 or file.git_blob) in message
    sources.fetch_bytes.cache_clear()
    put(fixture_mirror, file, GOOD[:-10])
    with pytest.raises(ChecksumMismatch, match="truncated"):
        sources.fetch_bytes(file)


def test_offline_without_mirror_or_cache_names_the_fix(fixture_mirror):
    file = upstream("data/missing.tsv", GOOD)
    with pytest.raises(SourceUnavailable) as err:
        sources.fetch_bytes(file)
    message = str(err.value)
    assert "\n" not in message
    assert "HF_RECOGS_MIRROR" in message and file.url in message and file.sha256 in message


def test_verified_cache_is_used_and_corrupt_cache_is_discarded(fixture_mirror, tmp_path):
    file = upstream("data/cached.tsv", GOOD)
    cached = tmp_path / "cache" / file.relpath
    cached.parent.mkdir(parents=True)
    cached.write_bytes(GOOD)
    assert sources.fetch_bytes(file) == GOOD
    sources.fetch_bytes.cache_clear()
    cached.write_bytes(b"garbage")
    with pytest.raises(SourceUnavailable):  # offline: the bad copy is dropped, never returned
        sources.fetch_bytes(file)
    assert not cached.exists()


def test_registry_pins_every_upstream_file_with_a_checksum():
    registry = sources._registry()
    assert len(registry) > 300
    assert all(f.git_blob or f.sha256 for f in registry.values())
    cogs_train = sources.pinned("cogs", "data/train.tsv")
    assert cogs_train.size == 4146574 and cogs_train.git_blob.startswith("eb101d57")
    with pytest.raises(KeyError, match="not in hf_recogs/upstream_files.tsv"):
        sources.pinned("cogs", "data/nope.tsv")


# ---- the datasets builder, on fixture configs ---------------------------------------------------------

TRAIN = upstream("fixture/train.tsv", GOOD)
ABSENT = upstream("fixture/absent.tsv", b"never written\n")
CALLS = {"n": 0}


def _rows(split, upper):
    CALLS["n"] += 1
    for sentence, lf, category in sources.read_tsv(TRAIN):
        yield {"input": sentence.upper() if upper else sentence, "output": lf, "category": category}


def _fixture_sources(split, upper):
    return [TRAIN] if split == "train" else [ABSENT]


# Registered only for the tests that ask for it (monkeypatch undoes it), so the catalogue other tests see
# stays the real one.
FIXTURE_CONFIG = DatasetConfig(
    name="fixture_cfg",
    description="A fixture config for loading tests.",
    family="fixture",
    license="MIT",
    citations=("cogs",),
    splits=("train", "gen"),
    generate=_rows,
    sources=_fixture_sources,
    params=(Param("upper", False, "upper-case the input"),),
)


@pytest.fixture
def fixture_registered(monkeypatch):
    all_configs()  # the real configs first, so the lazy import cannot run while the fixture is in place
    monkeypatch.setitem(registry._USERS_CONFIGS, FIXTURE_CONFIG.name, FIXTURE_CONFIG)
    return FIXTURE_CONFIG


@pytest.fixture
def fixture_data(fixture_mirror, fixture_registered):
    put(fixture_mirror, TRAIN, GOOD)
    CALLS["n"] = 0
    return fixture_mirror


def test_load_dataset_builds_once_then_reads_the_arrow_cache(fixture_data, tmp_path):
    cache = tmp_path / "datasets"
    first = hf_recogs.load_dataset("fixture_cfg", cache_dir=str(cache))
    assert list(first) == ["train"]  # gen's upstream file is unavailable: left out, train still loads
    assert first["train"]["input"] == ["Emma ate the cake .", "A dog ran ."]
    assert first["train"].features["category"].dtype == "string"
    assert CALLS["n"] == 1
    again = hf_recogs.load_dataset("fixture_cfg", cache_dir=str(cache))
    assert CALLS["n"] == 1, "second load must come from the Arrow cache"
    assert again["train"][:] == first["train"][:]
    upper = hf_recogs.load_dataset("fixture_cfg", upper=True, cache_dir=str(cache), split="train")
    assert upper["input"][0] == "EMMA ATE THE CAKE ."


def test_a_left_out_split_is_reported_on_every_load(fixture_data, tmp_path, caplog):
    cache = str(tmp_path / "datasets")
    for load in ("cold", "warm"):
        caplog.clear()
        with caplog.at_level("WARNING", logger="hf_recogs"):
            assert list(hf_recogs.load_dataset("fixture_cfg", cache_dir=cache)) == ["train"]
        warnings = [r.getMessage() for r in caplog.records if "fixture_cfg" in r.getMessage()]
        assert len(warnings) == 1 and "'gen'" in warnings[0], (load, warnings)
    assert CALLS["n"] == 1  # the warm load came from the cache


def test_a_split_left_out_comes_back_when_its_file_does(fixture_data, tmp_path):
    """The partial build (gen's file missing) is cached apart from the complete one: once the file is there,
    the next plain load has gen, with no force_redownload."""
    cache = str(tmp_path / "datasets")
    assert list(hf_recogs.load_dataset("fixture_cfg", cache_dir=cache)) == ["train"]
    put(fixture_data, ABSENT, b"never written\n")
    sources.fetch_bytes.cache_clear()
    complete = hf_recogs.load_dataset("fixture_cfg", cache_dir=cache)
    assert list(complete) == ["train", "gen"] and len(complete["gen"]) == 2
    assert len(hf_recogs.load_dataset("fixture_cfg", split="gen", cache_dir=cache)) == 2


def test_cached_data_is_served_alike_for_a_full_load_and_one_split(fixture_data, tmp_path):
    """One rule: data verified when it was cached is served; a full load and split= agree after the mirror
    file is corrupted (both from the cache), and a fresh cache refuses the corrupt file."""
    cache = str(tmp_path / "datasets")
    first = hf_recogs.load_dataset("fixture_cfg", cache_dir=cache)
    put(fixture_data, TRAIN, GOOD.replace(b"cake", b"cafe"))
    sources.fetch_bytes.cache_clear()
    assert hf_recogs.load_dataset("fixture_cfg", cache_dir=cache)["train"][:] == first["train"][:]
    assert hf_recogs.load_dataset("fixture_cfg", split="train", cache_dir=cache)[:] == first["train"][:]
    with pytest.raises(ChecksumMismatch):
        hf_recogs.load_dataset("fixture_cfg", split="train", cache_dir=str(tmp_path / "fresh"))


def test_unavailable_split_gives_the_reason(fixture_data, tmp_path):
    with pytest.raises(SourceUnavailable, match="split 'gen' of config 'fixture_cfg' is unavailable"):
        hf_recogs.load_dataset("fixture_cfg", split="gen", cache_dir=str(tmp_path / "c"))


def test_bad_names_and_parameters_get_clear_errors(fixture_data):
    with pytest.raises(ValueError, match="valid configs: .*fixture_cfg"):
        hf_recogs.load_dataset("no_such_config")
    with pytest.raises(ValueError, match="has no parameter colour; it accepts: upper"):
        hf_recogs.load_dataset("fixture_cfg", colour=1)
    with pytest.raises(ValueError, match="has no split 'dev'; splits: train, gen$"):
        hf_recogs.load_dataset("fixture_cfg", split="dev")
    # upstream's dev is our validation: a config that has one says so (checked before any file is read)
    from hf_recogs.registry import get_config

    with pytest.raises(ValueError, match=r"has no split 'dev'; .* \(upstream's dev split is named validation here\)"):
        get_config("recogs_pos").check_split("dev")


def test_bare_name_through_datasets(fixture_data, tmp_path, monkeypatch):
    import datasets

    monkeypatch.chdir(tmp_path)  # any working directory
    loaded = datasets.load_dataset("hf_recogs", "fixture_cfg", cache_dir=str(tmp_path / "c"))
    assert loaded["train"]["output"][0] == "eat . agent ( x _ 1 , Emma )"
    assert "fixture_cfg" in datasets.get_dataset_config_names("hf_recogs")


def test_bare_name_in_the_checkout_root_and_beside_a_users_folder(fixture_data, tmp_path, monkeypatch):
    """In the repository root ./hf_recogs is the package itself: still our builder. A user's own folder named
    hf_recogs is a local dataset folder, as datasets resolves it."""
    import datasets

    monkeypatch.chdir(Path(hf_recogs.__file__).parents[1])
    loaded = datasets.load_dataset("hf_recogs", "fixture_cfg", cache_dir=str(tmp_path / "c"))
    assert loaded["train"]["output"][0] == "eat . agent ( x _ 1 , Emma )"
    users = tmp_path / "work"
    (users / "hf_recogs").mkdir(parents=True)
    (users / "hf_recogs" / "rows.csv").write_text("text\nhello\n")
    monkeypatch.chdir(users)
    assert datasets.load_dataset("hf_recogs", cache_dir=str(tmp_path / "c"))["train"]["text"] == ["hello"]


def test_list_configs_has_one_line_descriptions(fixture_registered):
    listed = hf_recogs.list_configs()
    assert listed["fixture_cfg"] == "A fixture config for loading tests."
    assert all(desc and "\n" not in desc for desc in listed.values())


def test_import_is_light_and_hooks_datasets_later():
    code = (
        "import sys, hf_recogs; assert 'datasets' not in sys.modules, 'import hf_recogs pulled in datasets'; "
        "import datasets.load, datasets.inspect; "
        "assert datasets.load.dataset_module_factory._hf_recogs_wrapped; "
        "assert datasets.inspect.dataset_module_factory._hf_recogs_wrapped; print('ok')"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/")
    assert out.stdout.strip() == "ok", out.stderr


# ---- real configs, from the mirror ---------------------------------------------------------------------


def test_real_configs_through_the_bare_name(mirror, tmp_path, monkeypatch):
    import datasets

    from hf_recogs import builder

    monkeypatch.chdir(tmp_path)
    loaded = datasets.load_dataset("hf_recogs", "recogs_pos", cache_dir=str(tmp_path / "c"))
    # sizes from docs/DATASETS.md §3.8
    assert {k: v.num_rows for k, v in loaded.items()} == {"train": 27227, "validation": 3000, "test": 3000, "gen": 21000}
    assert loaded["validation"][0]["output"].startswith("Liam ( 0 ) ; box ( 4 ) ; girl ( 9 ) ; hope ( 1 )")
    assert len(set(loaded["gen"]["category"])) == 21
    # v2's train and gen are not in the mirror: left out, the official dev/test still load
    v2 = datasets.load_dataset("hf_recogs", "recogs_v2", cache_dir=str(tmp_path / "c"))
    assert sorted(v2) == ["test", "validation"]
    with pytest.raises(SourceUnavailable, match="recogs_v2/train.tsv"):
        datasets.load_dataset("hf_recogs", "recogs_v2", split="train", cache_dir=str(tmp_path / "c"))
    assert builder.HfRecogs.DEFAULT_CONFIG_NAME == "recogs_pos"


def test_the_arrow_cache_key_covers_what_builds_rows_and_nothing_else():
    """Editing training or reporting code must not rebuild every dataset; editing a benchmark module, the
    catalogue, the sources or anything they import must."""
    from hf_recogs.builder import row_modules

    package = Path(hf_recogs.__file__).resolve().parent
    names = {str(p.relative_to(package)) for p in row_modules()}
    assert {"builder.py", "dataset_config.py", "sources.py", "upstream_files.tsv", "benchmarks/cogs.py",
            "benchmarks/recogs_derive.py", "benchmarks/sygns_semantics.py"} <= names
    assert not names & {"registry.py", "train/run.py", "train/trainer.py", "scoring.py", "report/card.py", "cli.py",
                         "publish/model_push.py", "publish/results_folder.py", "sygns_eval.py"}


def test_each_config_cache_is_keyed_on_its_own_benchmark_module():
    """Editing benchmarks/cogs.py (or the SEM grammar it imports) rebuilds the COGS family's caches, not SCAN's."""
    from hf_recogs.builder import code_hash, row_modules

    package = Path(hf_recogs.__file__).resolve().parent

    def names(config):
        return {str(p.relative_to(package)) for p in row_modules(get_config(config))}

    scan, recogs = names("scan_length"), names("recogs_pos")
    assert {"builder.py", "dataset_config.py", "sources.py", "upstream_files.tsv", "benchmarks/scan.py"} <= scan
    assert not scan & {"benchmarks/cogs.py", "benchmarks/recogs_derive.py", "logical_forms.py", "benchmarks/sygns.py"}
    assert {"benchmarks/cogs.py", "benchmarks/recogs_derive.py", "logical_forms.py"} <= recogs
    assert "benchmarks/scan.py" not in recogs
    assert code_hash("scan_length") == code_hash("scan_simple") != code_hash("recogs_pos")
    # a config typed into a notebook has no declaring file: its key covers the builder and the package's tables
    notebook = types.ModuleType("notebook_cell")

    def generate(split, **params):
        yield {"input": "a", "output": "b", "category": "c"}

    generate.__module__ = notebook.__name__
    with mock.patch.dict(sys.modules, {notebook.__name__: notebook}):
        spec = DatasetConfig(name="typed_in", description="", family="x", license="MIT", citations=(),
                             splits=("train",), generate=generate)
        names_typed = {str(p.relative_to(package)) for p in row_modules(spec)}
    assert "builder.py" in names_typed and not any(n.startswith("benchmarks/") for n in names_typed)


def test_a_misspelt_config_name_gets_the_closest_one():
    """Both ways of loading name the config meant, in one line, instead of a list of eighty names alone."""
    import datasets

    for load in (lambda: hf_recogs.load_dataset("recogs_po"), lambda: datasets.load_dataset("hf_recogs", "recogs_po")):
        with pytest.raises(ValueError) as info:
            load()
        message = str(info.value)
        assert "unknown hf_recogs config 'recogs_po'; did you mean 'recogs_pos'?" in message and "\n" not in message
    with pytest.raises(ValueError, match="unknown hf_recogs config 'zzz'; valid configs: cfq_mcd1, cfq_mcd1_cls, ") as info:
        hf_recogs.load_dataset("zzz")
    listed = str(info.value).split("valid configs: ")[1].split(", ")
    assert listed == sorted(listed) and "cogs" in listed
