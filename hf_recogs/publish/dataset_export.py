"""Export every hf_recogs config as a script-free Hub dataset repository, and push it.

    hf-recogs export build [--out hub_export] [--configs a,b] [--variant NAME:k=v,...]
                           [--all-variants] [--repo-id ORG/hf_recogs] [--no-separate-sharealike]
    hf-recogs export push hub_export ORG/hf_recogs [--token T] [--endpoint URL] [--private]

(``hf-recogs export`` and ``python -m hf_recogs.publish.dataset_export`` take the same arguments.)

``build`` writes, under ``--out`` (default ``hub_export/``, git-ignored):

    hf_recogs/                       the MIT/BSD data (COGS, ReCOGS, SCAN, SLOG …)
        README.md                    dataset card: YAML ``configs:``/``dataset_info:``/``license:``, then per-config
                                     licence, upstream pins, citations, what was left out and why
        hf_recogs_export.json        machine-readable manifest (pins, row counts, sha256 of every parquet file)
        <config>/<split>-00000-of-00001.parquet
    hf_recogs_sygns/                 share-alike (CC BY-SA 4.0) configs, kept in their own repository
        README.md, hf_recogs_export.json, <config>/<split>-00000-of-00001.parquet

Rules it enforces: only ``cfg.publishable_splits`` are written (SLOG's gen split stays inside its encrypted
upstream zip — it is refused even if a config forgets to withhold it); a split whose upstream files cannot
be had offline is skipped and listed in the card as "not available offline"; share-alike configs never
share a repository with differently licensed data unless ``--no-separate-sharealike`` is given (then the
card still labels them). Parameterised configs (e.g. SCAN few-shot ``num``/``rep``) are exported with their
default parameters under their plain name; ``--variant scan_fewshot:num=2,rep=3`` (repeatable) or
``--all-variants`` adds variants as extra configs named ``<name>--num-2--rep-3``.

``push`` uploads a built repository folder (or, given the export root, ``hf_recogs/`` to ``ORG/hf_recogs``
and ``hf_recogs_sygns/`` to ``ORG/hf_recogs_sygns``) with ``HfApi.create_repo(repo_type="dataset",
exist_ok=True)`` and ``upload_folder``. Load it back with ``datasets.load_dataset("ORG/hf_recogs", "recogs_pos")``.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PACKAGE_DIR = Path(__file__).resolve().parent  # its git commit goes into the manifest, when it is a checkout

MAIN_REPO = "hf_recogs"
SHAREALIKE_REPO = "hf_recogs_sygns"
MANIFEST = "hf_recogs_export.json"
SHARD = "{split}-00000-of-00001.parquet"
DEFAULT_CONFIG = {MAIN_REPO: "recogs_pos", SHAREALIKE_REPO: "sygns_systematicity_one"}  # else the first config

HF_LICENSE_IDS = {
    "mit": "mit",
    "bsd-3-clause": "bsd-3-clause",
    "bsd-2-clause": "bsd-2-clause",
    "apache-2.0": "apache-2.0",
    "cc-by-4.0": "cc-by-4.0",
    "cc-by-sa-4.0": "cc-by-sa-4.0",
    "cc-by-sa-3.0": "cc-by-sa-3.0",
    "cc0-1.0": "cc0-1.0",
}


def hf_license_id(license: str) -> str:
    """Our licence string ("MIT", "BSD-3-Clause", "CC BY-SA 4.0") as a Hub licence id, or "other"."""
    key = license.strip().lower().replace(" ", "-").replace("_", "-")
    return HF_LICENSE_IDS.get(key, "other")


class ExportError(RuntimeError):
    """A one-line reason the export or push cannot go on."""


# ---------------------------------------------------------------------------------------------------- build


@dataclass
class ExportedConfig:
    name: str  # config name in the repository
    base: str  # registry name
    params: dict[str, Any]
    description: str
    family: str
    license: str
    citations: tuple[str, ...]
    notes: str
    splits: dict[str, int] = field(default_factory=dict)  # split → rows written
    num_bytes: dict[str, int] = field(default_factory=dict)  # split → Arrow bytes (dataset_info)
    file_bytes: int = 0  # parquet bytes written
    features: dict[str, str] = field(default_factory=dict)  # column → dtype
    files: dict[str, str] = field(default_factory=dict)  # split → path in repo
    sha256: dict[str, str] = field(default_factory=dict)  # path → sha256 of the parquet file
    unavailable: dict[str, str] = field(default_factory=dict)  # split → reason
    withheld: dict[str, str] = field(default_factory=dict)  # split → reason
    pins: list[str] = field(default_factory=list)  # "repo@commit" read by the exported splits
    rule_pins: list[str] = field(default_factory=list)  # "repo@commit" whose rules a generated config follows
    upstream_files: list[str] = field(default_factory=list)  # "repo@commit:path"


def variant_name(base: str, params: dict[str, Any], defaults: dict[str, Any]) -> str:
    changed = [(k, v) for k, v in params.items() if v != defaults.get(k)]
    if not changed:
        return base
    return base + "".join(f"--{k}-{v}" for k, v in changed)


def parse_variant(text: str) -> tuple[str, dict[str, str]]:
    name, _, rest = text.partition(":")
    params = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise ExportError(f"--variant {text!r}: parameters are written NAME:key=value,key=value")
        params[key.strip()] = value.strip()
    return name.strip(), params


def _features(cfg):
    from hf_recogs.builder import features

    return features(cfg)


def _split_sources(cfg, split: str, params: dict) -> list:
    try:
        return list(cfg.sources(split, **params))
    except Exception as err:  # noqa: BLE001 - a config whose sources cannot even be listed is reported, not fatal
        raise ExportError(f"config {cfg.name!r}: cannot list the upstream files of {split!r}: {err}") from None


def export_config(cfg, params: dict[str, Any], repo_dir: Path, name: str) -> ExportedConfig:
    """Write the parquet files of one config (one parameter setting) into ``repo_dir/<name>/``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hf_recogs.sources import SourceError, is_available

    resolved = cfg.resolve_params(params)
    out = ExportedConfig(name=name, base=cfg.name, params=resolved, description=cfg.description,
                         family=cfg.family, license=cfg.license, citations=tuple(cfg.citations), notes=cfg.notes)
    feats = _features(cfg)
    out.features = {k: v.dtype for k, v in feats.items()}
    schema = feats.arrow_schema
    columns = list(feats)
    splits = cfg.splits_for(resolved)
    publishable = set(splits if cfg.hub_splits is None else cfg.hub_splits)
    pins, files = set(), set()
    for split in splits:
        if split not in publishable:
            out.withheld[split] = ("never exported: upstream keeps it in a protected form "
                                   "(hf_recogs docs/DATASETS.md §6.3)")
            continue
        sources = _split_sources(cfg, split, resolved)
        missing = [f for f in sources if not is_available(f)]
        if missing:
            out.unavailable[split] = f"upstream file {missing[0]} is not available offline"
            continue
        try:
            rows = list(cfg.rows(split, **resolved))
        except SourceError as err:
            out.unavailable[split] = str(err).removeprefix("hf_recogs: ")
            continue
        try:
            table = pa.Table.from_pydict({c: [row[c] for row in rows] for c in columns}, schema=schema)
        except KeyError as err:
            raise ExportError(f"config {cfg.name!r} split {split!r}: a row has no column {err}") from None
        rel = f"{name}/{SHARD.format(split=split)}"
        target = repo_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, target, compression="zstd")
        out.splits[split] = len(rows)
        out.num_bytes[split] = table.nbytes
        out.file_bytes += target.stat().st_size
        out.files[split] = rel
        out.sha256[rel] = hashlib.sha256(target.read_bytes()).hexdigest()
        for f in sources:
            pins.add(f"{f.repo}@{f.commit}")
            files.add(str(f))
    out.pins = sorted(pins)
    out.upstream_files = sorted(files)
    if not pins and out.splits:
        from hf_recogs.sources import PINS

        if cfg.family in PINS:  # generated data (e.g. SyGNS): name the revision whose grammar/rules it follows
            out.rule_pins = ["{}@{}".format(*PINS[cfg.family])]
    return out


def _selected(configs: dict, names: Iterable[str] | None) -> list:
    if not names:
        return [configs[n] for n in sorted(configs)]
    unknown = [n for n in names if n not in configs]
    if unknown:
        raise ExportError(f"unknown config(s) {', '.join(unknown)}; valid: {', '.join(sorted(configs))}")
    return [configs[n] for n in names]


def _all_variants(cfg) -> list[dict[str, Any]]:
    if not cfg.params or any(p.choices is None for p in cfg.params):
        return []
    names = [p.name for p in cfg.params]
    return [dict(zip(names, combo)) for combo in itertools.product(*(p.choices for p in cfg.params))]


def build(out_dir: Path, config_names: list[str] | None = None, variants: list[str] = (),
          all_variants: bool = False, repo_id: str | None = None, separate_sharealike: bool = True,
          configs: dict | None = None, log=print) -> dict[str, Path]:
    """Build the repository folder(s); returns {repository name: folder}. Replaces earlier exports there."""
    from hf_recogs.registry import all_configs

    registry = all_configs() if configs is None else configs
    chosen = _selected(registry, config_names)
    jobs: list[tuple[Any, dict]] = []
    for cfg in chosen:
        defaults = cfg.resolve_params({})
        jobs.append((cfg, defaults))
        if all_variants:
            jobs += [(cfg, cfg.resolve_params(v)) for v in _all_variants(cfg) if cfg.resolve_params(v) != defaults]
    for text in variants:
        base, given = parse_variant(text)
        cfg = _selected(registry, [base])[0]
        resolved = cfg.resolve_params(given)
        if (cfg.name, resolved) not in [(c.name, p) for c, p in jobs]:
            jobs.append((cfg, resolved))

    groups: dict[str, list[tuple[Any, dict]]] = {}
    for cfg, params in jobs:
        repo = SHAREALIKE_REPO if separate_sharealike and cfg.share_alike else MAIN_REPO
        groups.setdefault(repo, []).append((cfg, params))

    out_dir.mkdir(parents=True, exist_ok=True)
    built = {}
    for repo, members in groups.items():
        final = out_dir / repo
        staging = Path(tempfile.mkdtemp(prefix=f".{repo}.", dir=out_dir))
        try:
            exported = []
            for cfg, params in members:
                name = variant_name(cfg.name, params, cfg.resolve_params({}))
                log(f"[export] {repo}: {name} …")
                done = export_config(cfg, params, staging, name)
                skipped = {**done.unavailable, **done.withheld}
                log(f"[export] {repo}: {name}: " + ", ".join(f"{s}={n}" for s, n in done.splits.items())
                    + (f"; skipped {', '.join(sorted(skipped))}" if skipped else ""))
                exported.append(done)
            exported.sort(key=lambda e: e.name)
            if not any(e.splits for e in exported):
                log(f"[export] {repo}: nothing could be exported (no split available); folder not written")
                shutil.rmtree(staging)
                continue
            full_repo_id = _sibling_repo_id(repo_id, repo) if repo_id else f"<org>/{repo}"
            (staging / "README.md").write_text(card(exported, full_repo_id, repo), encoding="utf-8")
            (staging / MANIFEST).write_text(json.dumps(manifest(exported, repo), indent=2) + "\n", encoding="utf-8")
            if final.exists():
                shutil.rmtree(final)
            os.replace(staging, final)
            built[repo] = final
            log(f"[export] wrote {final}")
        finally:
            if staging.exists():
                shutil.rmtree(staging)
    return built


def _sibling_repo_id(repo_id: str, repo: str) -> str:
    namespace = repo_id.split("/")[0] if "/" in repo_id else repo_id
    return f"{namespace}/{repo}" if repo != MAIN_REPO or "/" not in repo_id else repo_id


def _provenance() -> dict[str, str]:
    import datasets
    import pyarrow

    import hf_recogs
    from hf_recogs.builder import code_hash

    info = {"hf_recogs": hf_recogs.__version__, "code_hash": code_hash(), "datasets": datasets.__version__,
            "pyarrow": pyarrow.__version__}
    try:
        import subprocess

        rev = subprocess.run(["git", "-C", str(PACKAGE_DIR), "rev-parse", "HEAD"], capture_output=True, text=True)
        if rev.returncode == 0:
            info["git_commit"] = rev.stdout.strip()
    except OSError:
        pass
    return info


def manifest(exported: list[ExportedConfig], repo: str) -> dict:
    return {
        "repository": repo,
        "built_by": _provenance(),
        "configs": {
            e.name: {
                "registry_config": e.base, "params": e.params, "license": e.license, "family": e.family,
                "splits": e.splits, "files": e.files, "sha256": e.sha256, "pins": e.pins,
                "rule_pins": e.rule_pins, "upstream_files": e.upstream_files, "not_available_offline": e.unavailable, "withheld": e.withheld,
                "citations": list(e.citations),
            }
            for e in exported
        },
    }


# ----------------------------------------------------------------------------------------------------- card


def _yaml_header(exported: list[ExportedConfig], repo: str) -> str:
    licenses = sorted({hf_license_id(e.license) for e in exported if e.splits})
    with_data = [e for e in exported if e.splits]
    default = default_config(with_data, repo)
    configs = []
    infos = []
    for e in with_data:
        entry: dict[str, Any] = {"config_name": e.name}
        if e.name == default:
            entry["default"] = True
        entry["data_files"] = [{"split": s, "path": e.files[s]} for s in e.splits]
        configs.append(entry)
        if e.features:
            infos.append({
                "config_name": e.name,
                "features": [{"name": k, "dtype": v} for k, v in e.features.items()],
                "splits": [{"name": s, "num_bytes": e.num_bytes[s], "num_examples": n} for s, n in e.splits.items()],
                "download_size": e.file_bytes,
                "dataset_size": sum(e.num_bytes.values()),
            })
    from huggingface_hub import DatasetCardData

    rows = sum(n for e in with_data for n in e.splits.values())
    card_data = DatasetCardData(
        pretty_name="hf_recogs: COGS, ReCOGS, SCAN and SLOG" if repo == MAIN_REPO
        else "hf_recogs (share-alike part): SyGNS-derived data and CFQ",
        license=licenses if len(licenses) > 1 else licenses[0],
        language=["en"],
        task_categories=["text2text-generation"],
        size_categories=[size_category(rows)],
        source_datasets=["extended"],  # republished and derived from the upstream releases, not new data
        tags=["compositional-generalization", "semantic-parsing", "seq2seq"],
        configs=configs,
        dataset_info=infos if len(infos) == len(with_data) else None,
    )
    return "---\n" + card_data.to_yaml() + "\n---\n"


def default_config(with_data: list[ExportedConfig], repo: str) -> str | None:
    """The config ``load_dataset(repo_id)`` gives without a name: the repository's preferred one, else the first."""
    names = [e.name for e in with_data]
    preferred = DEFAULT_CONFIG.get(repo)
    return preferred if preferred in names else (names[0] if names else None)


def size_category(rows: int) -> str:
    """The Hub's ``size_categories`` bucket of a row count."""
    for limit, label in ((10**3, "n<1K"), (10**4, "1K<n<10K"), (10**5, "10K<n<100K"), (10**6, "100K<n<1M"),
                         (10**7, "1M<n<10M"), (10**8, "10M<n<100M")):
        if rows < limit:
            return label
    return "n>100M"


def card(exported: list[ExportedConfig], repo_id: str, repo: str) -> str:
    """The repository's README: what it holds, how to load it, every config, its licences, how it was built and
    verified, what to cite."""
    with_data = [e for e in exported if e.splits]
    lines = [_yaml_header(exported, repo), f"# {repo}", "", *_card_intro(repo, repo_id), ""]
    lines += ["## Loading", "", "```python", "import datasets", ""]
    example = default_config(with_data, repo) or "<config>"
    lines += [f'ds = datasets.load_dataset("{repo_id}", "{example}")', "```", "",
              "No loading script is involved (datasets ≥ 4 runs none); the `configs:` block above maps each",
              "config to its parquet files. With the package installed, `hf_recogs.load_dataset(name)` builds",
              "the same rows locally from the upstream files.", ""]
    lines += _card_configs(with_data)
    lines += _card_missing_splits(exported)
    lines += _card_licences(with_data)
    lines += _card_provenance(with_data)
    lines += _card_citations(with_data)
    return "\n".join(lines).rstrip() + "\n"


def _card_intro(repo: str, repo_id: str) -> list[str]:
    if repo == MAIN_REPO:
        return [
            "COGS, ReCOGS (and its variants), SCAN and SLOG as a script-free dataset repository: one parquet",
            "file per config and split, built by the `hf_recogs` Python package from pinned,",
            "checksum-verified upstream files. Share-alike configs (SyGNS-derived, CC BY-SA 4.0; CFQ) are published",
            f"separately in `{_sibling_repo_id(repo_id, SHAREALIKE_REPO)}` so that their licence stays with them.",
        ]
    return [
        "The share-alike part of hf_recogs: configs derived from SyGNS (Yanaka et al., 2021), licensed",
        "**CC BY-SA 4.0**, and CFQ (Keysers et al., 2020), whose README says CC BY 4.0 and whose dataset",
        "metadata says CC BY-SA 3.0 (we treat it as **CC BY-SA 3.0**). Anything built from this data must be",
        "shared under the licence of the config it comes from; it is kept apart from the MIT/BSD-licensed",
        "configs of the main `hf_recogs` repository on purpose.",
    ]


def _short_pin(pin: str) -> str:
    """``owner/repo@commit`` as the card shows it: the commit cut to 12 digits, and the pin's name if it has one."""
    from hf_recogs.sources import PINS

    names = {f"{r}@{c}": key for key, (r, c) in PINS.items()}
    repo_name, commit = pin.split("@")[0], pin.split("@")[1]
    if not commit:  # a release file at a fixed address, pinned by SHA-256 (sources.RELEASE_FILES)
        return f"`{repo_name}` (release, SHA-256 pinned)"
    return f"`{repo_name}@{commit[:12]}`" + (f" ({names[pin]})" if pin in names else "")


def _card_configs(with_data: list[ExportedConfig]) -> list[str]:
    lines = ["## Configs", "",
             "| config | licence | splits (rows) | upstream (repo@commit) | description |",
             "|---|---|---|---|---|"]
    for e in with_data:
        splits = ", ".join(f"{s} ({n:,})" for s, n in e.splits.items())
        pins = "<br>".join(_short_pin(p) for p in e.pins) or (
            "generated; rules of " + ", ".join(_short_pin(p) for p in e.rule_pins) if e.rule_pins else "generated")
        desc = e.description.replace("|", "\\|")
        if e.params:
            desc += " Parameters: " + ", ".join(f"`{k}={v}`" for k, v in e.params.items()) + "."
        lines.append(f"| `{e.name}` | {e.license} | {splits} | {pins} | {desc} |")
    lines.append("")
    notes = [e for e in with_data if e.notes]
    if notes:
        lines += ["Notes:", ""] + [f"- `{e.name}`: {e.notes}" for e in notes] + [""]
    return lines


def _card_missing_splits(exported: list[ExportedConfig]) -> list[str]:
    """The splits withheld on purpose (SLOG's generalization sets), those the build could not read, and the
    configs left with none."""
    lines: list[str] = []
    withheld = [(e.name, s, r) for e in exported for s, r in e.withheld.items()]
    missing = [(e.name, s, r) for e in exported for s, r in e.unavailable.items()]
    if withheld:
        lines += ["## Splits withheld on purpose", ""]
        lines += [f"- `{n}` / `{s}`: {r}" for n, s, r in withheld]
        lines += ["", "SLOG's generalization sets stay inside the password-protected zip of the SLOG repository, as",
                  "its authors intend (to keep them out of web-scraped training data); `hf_recogs.load_dataset`",
                  "reads them from that zip locally.", ""]
    if missing:
        lines += ["## Not available offline", "",
                  "These splits exist upstream but their files could not be had when this export was built",
                  "(the build ran offline against a partial mirror); they are not in this repository:", ""]
        lines += [f"- `{n}` / `{s}`: {r}" for n, s, r in missing] + [""]
    nothing = [e.name for e in exported if not e.splits]
    if nothing:
        lines += ["Configs with no exported split: " + ", ".join(f"`{n}`" for n in nothing) + ".", ""]
    return lines


def _card_licences(with_data: list[ExportedConfig]) -> list[str]:
    from hf_recogs.sources import LICENCE_NOTICES

    lines = ["## Licences", ""]
    by_license: dict[str, list[str]] = {}
    for e in with_data:
        by_license.setdefault(e.license, []).append(e.name)
    for lic, names in sorted(by_license.items()):
        lines.append(f"- **{lic}**: " + ", ".join(f"`{n}`" for n in names))
    used_repos = {p.split("@")[0] for e in with_data for p in (*e.pins, *e.rule_pins)}
    notices = [text for repo_name, text in LICENCE_NOTICES.items() if repo_name in used_repos]
    lines += ["", "Each config keeps the licence of the upstream data it is built from, and its copyright notice:", ""]
    lines += [f"- {text}" for text in notices]
    lines += ["", "The repository-level `license:` field lists every licence present; the table above is authoritative",
              "per config.", ""]
    return lines


def _card_provenance(with_data: list[ExportedConfig]) -> list[str]:
    from hf_recogs.sources import PINS, RELEASE_FILES

    prov = _provenance()
    lines = ["## How this repository was built and verified", "",
             "- Every upstream file was read at a pinned commit and checked against the git blob SHA-1 and/or",
             "  SHA-256 recorded in `hf_recogs/upstream_files.tsv` before any row was generated; nothing",
             "  unverified was exported.",
             "- Rows are exactly what `hf_recogs.load_dataset(config)` yields (same generator, same column types),",
             "  written with pyarrow; `hf_recogs_export.json` lists every file's SHA-256, the row counts, the",
             "  parameters and the upstream files of each config.",
             f"- Built with hf_recogs {prov.get('hf_recogs')} (code hash `{prov.get('code_hash')}`"
             + (f", commit `{prov['git_commit'][:12]}`" if prov.get("git_commit") else "")
             + f"), datasets {prov.get('datasets')}, pyarrow {prov.get('pyarrow')}.",
             "- Pinned upstream revisions:", ""]
    used = sorted({p for e in with_data for p in (*e.pins, *e.rule_pins)})
    for key, (r, c) in PINS.items():
        if f"{r}@{c}" in used:
            lines.append(f"  - {key}: [`{r}@{c}`](https://github.com/{r}/tree/{c})")
    for key, file in RELEASE_FILES.items():
        if f"{file.repo}@" in used:
            lines.append(f"  - {key} release: <{file.url}> ({file.size:,} bytes, SHA-256 `{file.sha256}`)")
    lines.append("")
    return lines


def _card_citations(with_data: list[ExportedConfig]) -> list[str]:
    from hf_recogs.citations import CITATIONS

    lines = ["## Citation", "", "Please cite the papers of the configs you use:", ""]
    cited: dict[str, list[str]] = {}
    for e in with_data:
        for key in e.citations:
            cited.setdefault(key, []).append(e.name)
    for key, names in cited.items():
        shown = ", ".join(f"`{n}`" for n in names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        lines += [f"For {shown}:", "", "```bibtex", CITATIONS[key], "```", ""]
    return lines


# ------------------------------------------------------------------------------------------------------ push


def _repo_folders(folder: Path, repo_id: str) -> list[tuple[Path, str]]:
    """(folder, repo id) pairs to push: a repository folder, or an export root holding several."""
    if (folder / "README.md").is_file():
        return [(folder, repo_id)]
    found = []
    for sub in (MAIN_REPO, SHAREALIKE_REPO):
        if (folder / sub / "README.md").is_file():
            found.append((folder / sub, _sibling_repo_id(repo_id, sub) if sub != MAIN_REPO else repo_id))
    if not found:
        raise ExportError(f"{folder} holds no README.md nor {MAIN_REPO}/ or {SHAREALIKE_REPO}/ export; "
                          f"run `hf-recogs export build --out {folder}` first")
    return found


def check_folder(folder: Path) -> None:
    """Refuse to push what must not be published, whatever built the folder."""
    from hf_recogs.registry import all_configs

    catalogue = all_configs()
    data = json.loads((folder / MANIFEST).read_text()) if (folder / MANIFEST).is_file() else None
    if data is None:
        raise ExportError(f"{folder} has no {MANIFEST}; push only folders built by this script")
    licences = {c["license"] for c in data["configs"].values() if c["splits"]}
    sharealike = {lic for lic in licences if "-sa" in lic.lower().replace(" ", "-")}
    if sharealike and licences - sharealike and not data.get("allow_mixed"):
        raise ExportError(f"{folder} mixes share-alike data ({', '.join(sorted(sharealike))}) with "
                          f"{', '.join(sorted(licences - sharealike))}; rebuild without --no-separate-sharealike")
    for name, c in data["configs"].items():
        # the catalogue says what may be published, whatever the manifest claims; a config built from another
        # catalogue (dataset_export.build(configs=...)) has only its build-time record of withheld splits
        known = catalogue.get(c["registry_config"])
        for split in c["splits"]:
            withheld = split in c.get("withheld", {}) or (
                known is not None and known.hub_splits is not None and split not in known.hub_splits)
            if withheld:
                raise ExportError(f"{folder}: config {name!r} contains {c['registry_config']} {split}, which is "
                                  "never published")


def push(folder: Path, repo_id: str, token: str | None = None, endpoint: str | None = None,
         private: bool = False, log=print) -> list[str]:
    if "/" not in repo_id:
        raise ExportError(f"repository id {repo_id!r} must be namespaced: <org or user>/hf_recogs")
    if endpoint:
        os.environ["HF_ENDPOINT"] = endpoint.rstrip("/")  # read at import time by huggingface_hub
    pairs = _repo_folders(folder, repo_id)
    for path, _ in pairs:
        check_folder(path)
    from huggingface_hub import HfApi, constants, get_token

    token = token or get_token()
    if not token:
        raise ExportError("no Hugging Face token: pass --token, set HF_TOKEN, or run `hf auth login`")
    target = (endpoint or constants.ENDPOINT).rstrip("/")
    api = HfApi(endpoint=target, token=token)
    urls = []
    for path, rid in pairs:
        try:
            api.create_repo(rid, repo_type="dataset", exist_ok=True, private=private)
            info = api.upload_folder(folder_path=str(path), repo_id=rid, repo_type="dataset",
                                     commit_message=f"hf_recogs export ({path.name})")
        except Exception as err:  # noqa: BLE001 - turned into one line below
            from .model_push import push_error_line

            raise ExportError(push_error_line(err, target, rid, "pass --token or set HF_TOKEN")) from None
        log(f"[push] {path} -> {target}/datasets/{rid} @ {info.oid}")
        urls.append(f"{target}/datasets/{rid}")
    return urls


# ------------------------------------------------------------------------------------------------------- CLI


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hf-recogs export", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="write the Hub-ready repository folder(s)")
    b.add_argument("--out", default="hub_export", help="output folder (default: ./hub_export/)")
    b.add_argument("--configs", default="", help="comma-separated config names (default: all)")
    b.add_argument("--variant", action="append", default=[], metavar="NAME:k=v,...",
                   help="also export a non-default parameter setting (repeatable)")
    b.add_argument("--all-variants", action="store_true",
                   help="also export every setting of configs whose parameters all have fixed choices")
    b.add_argument("--repo-id", default=None, help="ORG/hf_recogs, used in the card's loading example")
    b.add_argument("--no-separate-sharealike", action="store_true",
                   help="put CC BY-SA configs in the main repository too (not recommended)")
    p = sub.add_parser("push", help="upload a built folder with create_repo + upload_folder")
    p.add_argument("folder")
    p.add_argument("repo_id", help="ORG/hf_recogs (the share-alike part goes to ORG/hf_recogs_sygns)")
    p.add_argument("--token", default=None, help="Hub token (default: HF_TOKEN or the saved login)")
    p.add_argument("--endpoint", default=None, help="Hub endpoint (default: HF_ENDPOINT or huggingface.co)")
    p.add_argument("--private", action="store_true")
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            names = [n.strip() for n in args.configs.split(",") if n.strip()] or None
            built = build(Path(args.out), names, args.variant, args.all_variants, args.repo_id,
                          separate_sharealike=not args.no_separate_sharealike)
            if not built:
                raise ExportError("nothing was exported (no config had an available split)")
            if args.no_separate_sharealike:
                for folder in built.values():
                    data = json.loads((folder / MANIFEST).read_text())
                    data["allow_mixed"] = True
                    (folder / MANIFEST).write_text(json.dumps(data, indent=2) + "\n")
        else:
            push(Path(args.folder), args.repo_id, args.token, args.endpoint, args.private)
    except ExportError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
