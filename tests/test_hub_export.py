"""The Hub export (hf_recogs.publish.dataset_export, `hf-recogs export`) and the loopback fake Hub
(tests/fake_hub.py).

Fixture configs defined here cover the rules without the mirror: layout, card YAML, licences, SLOG gen
never exported, SyGNS-style share-alike data in its own repository, unavailable splits listed, variants. The
built folder is loaded with plain ``datasets`` in a subprocess that never imports hf_recogs, then pushed to the
fake Hub and loaded back from it. With the mirror, one real config goes through the same round trip.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from fake_hub import FakeHub, hub_env

from hf_recogs.registry import DatasetConfig, Param, all_configs
from hf_recogs.sources import UpstreamFile

ROOT = Path(__file__).resolve().parents[1]
from hf_recogs.publish import dataset_export  # noqa: E402

ABSENT = UpstreamFile("fixture/hub", "f" * 40, "data/absent.tsv", "0" * 40, None, 10)

ROWS = {
    "train": [("Emma ate the cake .", "cake ( 1 ) ; eat ( 2 ) AND agent ( 2 , Emma )", "in_distribution"),
              ("A dog ran .", "dog ( 1 ) ; run ( 2 ) AND agent ( 2 , 1 )", "in_distribution")],
    "test": [("Liam saw a cat .", "cat ( 3 ) ; see ( 1 ) AND agent ( 1 , Liam )", "in_distribution")],
    "gen": [("The cat ran .", "* cat ( 1 ) ; run ( 2 ) AND agent ( 2 , 1 )", "subj_to_obj_common")],
}


def _gen(split, upper=False, **_):
    for sentence, lf, category in ROWS[split]:
        yield {"input": sentence.upper() if upper else sentence, "output": lf, "category": category,
               "depth": len(sentence.split())}


def _fixture(name, **kw):
    base = dict(name=name, description=f"Fixture {name} for export tests.", family="fixture", license="MIT",
                citations=("cogs",), splits=("train", "test", "gen"), generate=_gen)
    base.update(kw)
    return DatasetConfig(**base)


FIXTURES = {
    "hubfix_main": _fixture("hubfix_main", params=(Param("upper", False, "upper-case the input", (False, True)),),
                            extra_features={"depth": "int32"}),
    # A SLOG-family config that forgets to withhold gen: the exporter must still refuse it.
    "hubfix_slog": _fixture("hubfix_slog", family="slog", citations=("slog",), hub_splits=("train", "test")),
    "hubfix_sygns": _fixture("hubfix_sygns", family="sygns", license="CC BY-SA 4.0", citations=("sygns",),
                             splits=("train", "test")),
    "hubfix_partial": _fixture("hubfix_partial", license="BSD-3-Clause", citations=("scan",),
                               hub_splits=("train", "test"),
                               sources=lambda split, **p: [ABSENT] if split == "test" else []),
}  # passed to dataset_export.build(configs=...), never registered: other tests' view of the catalogue is unchanged


def fixture_rows(name: str, split: str, **params) -> list[dict]:
    cfg = FIXTURES[name]
    cols = ["input", "output", "category", *cfg.extra_features]
    return [{c: r[c] for c in cols} for r in cfg.rows(split, **params)]


def read_card(folder: Path) -> tuple[dict, str]:
    text = (folder / "README.md").read_text()
    _, front, body = text.split("---\n", 2)
    return yaml.safe_load(front), body


def run_py(code: str, env: dict | None = None, timeout: int = 240) -> subprocess.CompletedProcess:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         env=env, timeout=timeout, cwd="/")
    assert out.returncode == 0, f"subprocess failed:\n{out.stdout[-3000:]}\n{out.stderr[-6000:]}"
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("hub_export")
    folders = dataset_export.build(out, list(FIXTURES), variants=["hubfix_main:upper=True"],
                                   repo_id="org/hf_recogs", configs=FIXTURES, log=lambda *a: None)
    return out, folders


# ---- build ------------------------------------------------------------------------------------------------


def test_layout_and_manifest(built):
    out, folders = built
    assert set(folders) == {"hf_recogs", "hf_recogs_sygns"}
    main, sa = out / "hf_recogs", out / "hf_recogs_sygns"
    files = sorted(str(p.relative_to(main)) for p in main.rglob("*") if p.is_file())
    assert files == [
        "README.md", "hf_recogs_export.json",
        "hubfix_main--upper-True/gen-00000-of-00001.parquet",
        "hubfix_main--upper-True/test-00000-of-00001.parquet",
        "hubfix_main--upper-True/train-00000-of-00001.parquet",
        "hubfix_main/gen-00000-of-00001.parquet", "hubfix_main/test-00000-of-00001.parquet",
        "hubfix_main/train-00000-of-00001.parquet",
        "hubfix_partial/train-00000-of-00001.parquet",
        "hubfix_slog/test-00000-of-00001.parquet", "hubfix_slog/train-00000-of-00001.parquet",
    ]
    assert sorted(str(p.relative_to(sa)) for p in sa.rglob("*.parquet")) == [
        "hubfix_sygns/test-00000-of-00001.parquet", "hubfix_sygns/train-00000-of-00001.parquet"]
    manifest = json.loads((main / "hf_recogs_export.json").read_text())
    entry = manifest["configs"]["hubfix_main"]
    assert entry["splits"] == {"train": 2, "test": 1, "gen": 1} and entry["params"] == {"upper": False}
    for rel, sha in entry["sha256"].items():
        assert hashlib.sha256((main / rel).read_bytes()).hexdigest() == sha
    assert manifest["configs"]["hubfix_slog"]["withheld"].keys() == {"gen"}
    assert "not available offline" in manifest["configs"]["hubfix_partial"]["not_available_offline"]["test"]
    assert manifest["configs"]["hubfix_partial"]["withheld"].keys() == {"gen"}
    assert "code_hash" in manifest["built_by"]


def test_card_yaml_licences_and_sections(built):
    out, _ = built
    meta, body = read_card(out / "hf_recogs")
    names = [c["config_name"] for c in meta["configs"]]
    assert names == ["hubfix_main", "hubfix_main--upper-True", "hubfix_partial", "hubfix_slog"]
    # what Hub users expect in the YAML: task, size bucket (2+1+1 + 2+1+1 + 1 + 2 fixture rows), provenance
    assert meta["task_categories"] == ["text2text-generation"] and meta["size_categories"] == ["n<1K"]
    assert meta["source_datasets"] == ["extended"] and meta["language"] == ["en"]
    assert [c.get("default") for c in meta["configs"]] == [True, None, None, None]  # no recogs_pos: the first
    sygns_meta, _ = read_card(out / "hf_recogs_sygns")
    assert [c.get("default") for c in sygns_meta["configs"]] == [True]  # the share-alike repo has one too
    assert dataset_export.size_category(999) == "n<1K" and dataset_export.size_category(24_155) == "10K<n<100K"
    main_cfg = meta["configs"][0]
    assert main_cfg["data_files"] == [{"split": s, "path": f"hubfix_main/{s}-00000-of-00001.parquet"}
                                      for s in ("train", "test", "gen")]
    assert sorted(meta["license"]) == ["bsd-3-clause", "mit"]  # no share-alike licence in the main repository
    info = {i["config_name"]: i for i in meta["dataset_info"]}
    assert {"name": "depth", "dtype": "int32"} in info["hubfix_main"]["features"]
    assert [s["num_examples"] for s in info["hubfix_main"]["splits"]] == [2, 1, 1]
    # Every data file the YAML lists exists, and no SLOG gen file is listed or written anywhere.
    listed = [f["path"] for c in meta["configs"] for f in c["data_files"]]
    assert all((out / "hf_recogs" / p).is_file() for p in listed)
    assert not [p for p in out.rglob("*") if "slog" in str(p) and "gen" in p.name]
    assert "## Splits withheld on purpose" in body and "`hubfix_slog` / `gen`" in body
    assert "## Not available offline" in body and "`hubfix_partial` / `test`" in body
    assert "@inproceedings{kim-linzen-2020-cogs" in body and "@inproceedings{li-etal-2023-slog" in body
    assert "| `hubfix_partial` | BSD-3-Clause |" in body
    assert 'load_dataset("org/hf_recogs", "hubfix_main")' in body
    assert "org/hf_recogs_sygns" in body

    sa_meta, sa_body = read_card(out / "hf_recogs_sygns")
    assert sa_meta["license"] == "cc-by-sa-4.0"
    assert [c["config_name"] for c in sa_meta["configs"]] == ["hubfix_sygns"]
    assert "CC BY-SA 4.0" in sa_body and "@inproceedings{yanaka-etal-2021-sygns" in sa_body


def test_share_alike_configs_of_two_licences_share_the_share_alike_repository(tmp_path):
    """CFQ (CC BY-SA 3.0) beside SyGNS (CC BY-SA 4.0): both share-alike, so one repository may hold them."""
    configs = {**FIXTURES, "hubfix_cfq": _fixture("hubfix_cfq", family="cfq", license="CC BY-SA 3.0",
                                                  citations=("cfq",), splits=("train", "test"))}
    folders = dataset_export.build(tmp_path, ["hubfix_main", "hubfix_sygns", "hubfix_cfq"], configs=configs,
                                   log=lambda *a: None)
    assert set(folders) == {"hf_recogs", "hf_recogs_sygns"}
    dataset_export.check_folder(tmp_path / "hf_recogs_sygns")  # no refusal
    meta, body = read_card(tmp_path / "hf_recogs_sygns")
    assert sorted(meta["license"]) == ["cc-by-sa-3.0", "cc-by-sa-4.0"] and "CC BY-SA 3.0" in body


def test_mixed_sharealike_needs_opt_in_and_is_refused_at_push(tmp_path):
    folders = dataset_export.build(tmp_path, ["hubfix_main", "hubfix_sygns"], separate_sharealike=False,
                                   configs=FIXTURES, log=lambda *a: None)
    assert set(folders) == {"hf_recogs"}
    meta, body = read_card(tmp_path / "hf_recogs")
    assert sorted(meta["license"]) == ["cc-by-sa-4.0", "mit"] and "| `hubfix_sygns` | CC BY-SA 4.0 |" in body
    with pytest.raises(dataset_export.ExportError, match="mixes share-alike data"):
        dataset_export.check_folder(tmp_path / "hf_recogs")


def test_unknown_config_and_bad_variant_are_one_line_errors(tmp_path):
    with pytest.raises(dataset_export.ExportError, match="unknown config"):
        dataset_export.build(tmp_path, ["nope"], configs=FIXTURES)
    with pytest.raises(dataset_export.ExportError, match="key=value"):
        dataset_export.build(tmp_path, ["hubfix_main"], variants=["hubfix_main:upper"], configs=FIXTURES)


def test_push_refuses_a_split_that_must_stay_protected_whatever_the_manifest_says(built, tmp_path):
    """The catalogue decides (SLOG gen stays in its encrypted zip); the build-time record decides for configs
    from another catalogue. A manifest edited by hand cannot smuggle either through."""
    import json
    import shutil

    out, _ = built
    folder = tmp_path / "copy"
    shutil.copytree(out / "hf_recogs", folder)
    path = folder / dataset_export.MANIFEST
    original = json.loads(path.read_text())
    dataset_export.check_folder(folder)  # as built: fine

    data = json.loads(path.read_text())
    entry = data["configs"]["hubfix_slog"]
    entry["splits"]["gen"] = 1
    path.write_text(json.dumps(data))
    with pytest.raises(dataset_export.ExportError, match="hubfix_slog gen, which is never published"):
        dataset_export.check_folder(folder)

    entry.update(registry_config="slog", withheld={})
    path.write_text(json.dumps(data))
    with pytest.raises(dataset_export.ExportError, match="slog gen, which is never published"):
        dataset_export.check_folder(folder)
    path.write_text(json.dumps(original))


def test_built_folder_loads_with_plain_datasets(built, tmp_path):
    out, _ = built
    code = f"""
        import json, sys, datasets
        assert "hf_recogs" not in sys.modules
        res = {{}}
        for root, name in [("hf_recogs", "hubfix_main"), ("hf_recogs", "hubfix_main--upper-True"),
                           ("hf_recogs", "hubfix_slog"), ("hf_recogs", "hubfix_partial"),
                           ("hf_recogs_sygns", "hubfix_sygns")]:
            ds = datasets.load_dataset({str(out)!r} + "/" + root, name)
            res[name] = {{s: ds[s].to_list() for s in ds}}
            res[name + "/features"] = {{k: v.dtype for k, v in ds["train"].features.items()}}
        res["configs"] = datasets.get_dataset_config_names({str(out)!r} + "/hf_recogs")
        assert "hf_recogs" not in sys.modules, "the plain load must not import hf_recogs"
        print(json.dumps(res))
    """
    env = {**os.environ, "HF_HOME": str(tmp_path / "home")}
    env.pop("PYTHONPATH", None)
    res = json.loads(run_py(code, env).stdout.splitlines()[-1])
    assert res["hubfix_main"] == {s: fixture_rows("hubfix_main", s) for s in ("train", "test", "gen")}
    assert res["hubfix_main--upper-True"]["train"] == fixture_rows("hubfix_main", "train", upper=True)
    assert res["hubfix_main/features"]["depth"] == "int32"
    assert set(res["hubfix_slog"]) == {"train", "test"}
    assert set(res["hubfix_partial"]) == {"train"}
    assert res["hubfix_sygns"]["train"] == fixture_rows("hubfix_sygns", "train")
    assert res["configs"] == ["hubfix_main", "hubfix_main--upper-True", "hubfix_partial", "hubfix_slog"]


# ---- push ---------------------------------------------------------------------------------------------------


def test_push_to_fake_hub_and_load_back(built, tmp_path):
    out, _ = built
    with FakeHub() as hub:
        env = hub_env(hub.endpoint, hf_home=tmp_path / "home")
        push = subprocess.run([sys.executable, "-m", "hf_recogs", "export", "push", str(out), "org/hf_recogs"],
                              capture_output=True, text=True, env=env, timeout=240)
        assert push.returncode == 0, push.stderr[-4000:]
        local = {str(p.relative_to(out / "hf_recogs")): p.read_bytes()
                 for p in (out / "hf_recogs").rglob("*") if p.is_file()}
        assert hub.files("org/hf_recogs", "dataset") == local
        assert set(hub.files("org/hf_recogs_sygns", "dataset")) == {
            "README.md", "hf_recogs_export.json", "hubfix_sygns/train-00000-of-00001.parquet",
            "hubfix_sygns/test-00000-of-00001.parquet"}
        assert all(p.endswith(".parquet") for p in hub.lfs_files("org/hf_recogs", "dataset"))
        code = """
            import json, datasets
            a = datasets.load_dataset("org/hf_recogs", "hubfix_main")
            b = datasets.load_dataset("org/hf_recogs_sygns", "hubfix_sygns", split="train")
            print(json.dumps({"main": {s: a[s].to_list() for s in a}, "sygns": b.to_list(),
                              "configs": datasets.get_dataset_config_names("org/hf_recogs")}))
        """
        res = json.loads(run_py(code, env).stdout.splitlines()[-1])
        assert res["main"] == {s: fixture_rows("hubfix_main", s) for s in ("train", "test", "gen")}
        assert res["sygns"] == fixture_rows("hubfix_sygns", "train")
        assert "hubfix_slog" in res["configs"]
        # Pushing the same folder again changes nothing (every file is skipped as unchanged).
        before = len(hub.commits("org/hf_recogs", "dataset"))
        again = subprocess.run([sys.executable, "-m", "hf_recogs", "export", "push", str(out / "hf_recogs"), "org/hf_recogs"],
                               capture_output=True, text=True, env=env, timeout=120)
        assert again.returncode == 0, again.stderr[-3000:]
        assert len(hub.commits("org/hf_recogs", "dataset")) == before


def test_push_errors_are_one_line(built, tmp_path):
    out, _ = built
    with FakeHub() as hub:
        env = hub_env(hub.endpoint, token=None, hf_home=tmp_path / "home")
        res = subprocess.run([sys.executable, "-m", "hf_recogs", "export", "push", str(out), "org/hf_recogs"],
                             capture_output=True, text=True, env=env, timeout=120)
        assert res.returncode == 1 and res.stderr.count("\n") == 1, res.stderr
        assert "no Hugging Face token" in res.stderr
        assert not hub.repos
    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = hub_env(f"http://127.0.0.1:{port}", hf_home=tmp_path / "home")
    res = subprocess.run([sys.executable, "-m", "hf_recogs", "export", "push", str(out), "org/hf_recogs",
                          "--endpoint", f"http://127.0.0.1:{port}"], capture_output=True, text=True, env=env,
                         timeout=120)
    assert res.returncode == 1 and res.stderr.count("\n") == 1, res.stderr
    assert f"cannot reach the Hub at http://127.0.0.1:{port}" in res.stderr


# ---- the fake Hub itself ------------------------------------------------------------------------------------


def test_fake_hub_round_trips_hub_client_calls(tmp_path):
    code = """
        import json, os, pathlib, tempfile
        from huggingface_hub import HfApi, hf_hub_download, snapshot_download
        from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError
        api = HfApi()
        d = pathlib.Path(tempfile.mkdtemp())
        (d / "config.json").write_text('{"a": 1}')
        (d / "model.safetensors").write_bytes(bytes(range(256)) * 40)
        (d / "sub").mkdir(); (d / "sub" / "x.txt").write_text("hello")
        api.create_repo("org/m", exist_ok=True); api.create_repo("org/m", exist_ok=True)
        first = api.upload_folder(folder_path=d, repo_id="org/m").oid
        (d / "config.json").write_text('{"a": 2}')
        second = api.upload_folder(folder_path=d, repo_id="org/m").oid
        info = api.model_info("org/m")
        out = {"shas": [first, second, info.sha], "siblings": sorted(s.rfilename for s in info.siblings),
               "lfs": sorted(s.rfilename for s in api.model_info("org/m", files_metadata=True).siblings if s.lfs)}
        out["download"] = pathlib.Path(hf_hub_download("org/m", "model.safetensors")).read_bytes() == \\
            (d / "model.safetensors").read_bytes()
        out["old"] = pathlib.Path(hf_hub_download("org/m", "config.json", revision=first)).read_text()
        snap = pathlib.Path(snapshot_download("org/m"))
        out["snapshot"] = sorted(str(p.relative_to(snap)) for p in snap.rglob("*") if p.is_file())
        out["tree"] = sorted(f.path for f in api.list_repo_tree("org/m", recursive=True))
        out["paths"] = [type(p).__name__ for p in api.get_paths_info("org/m", ["config.json", "sub", "nope"])]
        out["exists"] = [api.file_exists("org/m", "config.json"), api.file_exists("org/m", "nope")]
        try:
            hf_hub_download("org/m", "nope.txt")
        except EntryNotFoundError:
            out["missing"] = "EntryNotFound"
        try:
            api.model_info("org/none")
        except RepositoryNotFoundError:
            out["norepo"] = "RepoNotFound"
        out["whoami"] = api.whoami()["name"]
        print(json.dumps(out))
    """
    with FakeHub() as hub:
        res = json.loads(run_py(code, hub_env(hub.endpoint, hf_home=tmp_path / "home")).stdout.splitlines()[-1])
        first, second, head = res["shas"]
        assert first != second == head  # a new sha per commit
        assert res["siblings"] == ["config.json", "model.safetensors", "sub/x.txt"]
        assert res["lfs"] == ["model.safetensors"]
        assert res["download"] and res["old"] == '{"a": 1}'
        assert res["snapshot"] == res["siblings"] and res["tree"] == ["config.json", "model.safetensors", "sub",
                                                                      "sub/x.txt"]
        assert res["paths"] == ["RepoFile", "RepoFolder"] and res["exists"] == [True, False]
        assert res["missing"] == "EntryNotFound" and res["norepo"] == "RepoNotFound"
        assert res["whoami"] == "fake-user"
        assert hub.files("org/m")["config.json"] == b'{"a": 2}'
        assert hub.files("org/m", revision=first)["config.json"] == b'{"a": 1}'
        # HEAD answers carry the headers and no body; LFS PUTs with a wrong sha256 are refused; writes need a token.
        req = urllib.request.Request(f"{hub.endpoint}/org/m/resolve/main/model.safetensors", method="HEAD")
        with urllib.request.urlopen(req) as resp:
            assert resp.headers["X-Repo-Commit"] == head and resp.headers["ETag"].strip('"') == hashlib.sha256(
                bytes(range(256)) * 40).hexdigest()
            assert resp.headers["Content-Length"] == "10240" and resp.read() == b""
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(urllib.request.Request(f"{hub.endpoint}/__lfs__/{'0' * 64}", data=b"x",
                                                          method="PUT"))
        assert err.value.code == 400
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(urllib.request.Request(f"{hub.endpoint}/api/repos/create", method="POST",
                                                          data=b'{"name": "x"}'))
        assert err.value.code == 401
    with pytest.raises(ValueError, match="loopback"):
        FakeHub(host="0.0.0.0")
    with pytest.raises(ValueError, match="loopback"):
        hub_env("http://10.0.0.1:80")


# ---- with the mirror: one real config ----------------------------------------------------------------------

REAL = ("recogs_pos", "slog")


def _digest(rows) -> str:
    h = hashlib.sha256()
    for row in rows:
        h.update(json.dumps(row, sort_keys=True).encode() + b"\n")
    return h.hexdigest()


DIGEST_CODE = """
    import hashlib, json, datasets
    def digest(rows):
        h = hashlib.sha256()
        for row in rows:
            h.update(json.dumps(row, sort_keys=True).encode() + b"\\n")
        return h.hexdigest()
    out = {}
    for name in NAMES:
        ds = datasets.load_dataset(WHERE, name)
        out[name] = {s: digest(ds[s]) for s in ds}
    print(json.dumps(out))
"""


@pytest.mark.mirror
def test_real_configs_export_push_and_load_back(mirror, tmp_path):
    configs = all_configs()
    missing = [n for n in REAL if n not in configs]
    if missing:
        pytest.skip(f"config(s) {', '.join(missing)} not registered yet")
    out = tmp_path / "export"
    dataset_export.build(out, list(REAL), log=lambda *a: None)
    meta, body = read_card(out / "hf_recogs")
    assert [c["config_name"] for c in meta["configs"]] == sorted(REAL)
    assert [c.get("default") for c in meta["configs"] if c["config_name"] == "recogs_pos"] == [True]
    assert "frankaging/ReCOGS@1b6eca8ff4dc" in body and "bingzhilee/SLOG@1c55df85006d" in body
    # SLOG gen: withheld, in no YAML entry and no file.
    slog = next(c for c in meta["configs"] if c["config_name"] == "slog")
    assert "gen" not in [f["split"] for f in slog["data_files"]] and "`slog` / `gen`" in body
    assert not list((out / "hf_recogs" / "slog").glob("gen*"))

    env = {**os.environ, "HF_HOME": str(tmp_path / "home")}
    code = DIGEST_CODE.replace("NAMES", repr(list(REAL))).replace("WHERE", repr(str(out / "hf_recogs")))
    theirs = json.loads(run_py(code, env).stdout.splitlines()[-1])
    from hf_recogs.builder import features

    for name in REAL:  # every exported split has exactly the rows our generator yields
        cfg = configs[name]
        cols = list(features(cfg))
        assert theirs[name] == {s: _digest({c: r[c] for c in cols} for r in cfg.rows(s)) for s in theirs[name]}
    assert "train" in theirs["recogs_pos"] and "gen" in theirs["recogs_pos"]

    import hf_recogs

    loaded = hf_recogs.load_dataset("recogs_pos", cache_dir=str(tmp_path / "cache"))
    assert {s: _digest(loaded[s]) for s in theirs["recogs_pos"]} == theirs["recogs_pos"]

    with FakeHub() as hub:
        env = hub_env(hub.endpoint, hf_home=tmp_path / "home2")
        push = subprocess.run([sys.executable, "-m", "hf_recogs", "export", "push", str(out), "org/hf_recogs"],
                              capture_output=True, text=True, env=env, timeout=240)
        assert push.returncode == 0, push.stderr[-4000:]
        assert not [p for p in hub.files("org/hf_recogs", "dataset") if p.startswith("slog/gen")]
        code = DIGEST_CODE.replace("NAMES", repr(list(REAL))).replace("WHERE", repr("org/hf_recogs"))
        assert json.loads(run_py(code, env).stdout.splitlines()[-1]) == theirs
