"""The ``datasets`` builder behind ``load_dataset("hf_recogs", name)``.

datasets 5.x runs no loading scripts, but its builder classes still work as ordinary Python. This builder
turns each catalogue entry (``hf_recogs.registry``) into a builder config, generates rows through it, and
lets datasets write and reuse its Arrow cache. Splits whose upstream files cannot be had are left out with a
warning (the others load); asking for such a split raises the one-line reason.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import logging
import sys
from functools import lru_cache
from pathlib import Path

import datasets
import pyarrow as pa
from datasets.builder import Key
from datasets.utils.py_utils import classproperty

from .registry import DatasetConfig, all_configs, get_config
from .sources import SourceError, SourceUnavailable, fetch_bytes, fetch_path, is_available, is_large

logger = logging.getLogger(__name__)

DATASET_NAME = "hf_recogs"
_BATCH_ROWS = 10_000
_DTYPES = {"string": "string", "int32": "int32", "int64": "int64", "float32": "float32", "bool": "bool"}


def row_modules(config: DatasetConfig | None = None) -> list[Path]:
    """The files that can decide a generated row of ``config``: this builder, the module that declares the
    config and every module of the package it imports (found statically, lazy imports inside functions
    included), and the pinned-file table. Without a config: every benchmark module instead of one. Editing
    anything else (another benchmark, the catalogue, training, reporting, the CLI, …) keeps the config's Arrow
    caches. The builder's own imports are not followed: they are the catalogue, which builds no row, and types
    and sources that the declaring module imports itself."""
    package = Path(__file__).resolve().parent
    if config is None:
        declaring = sorted((package / "benchmarks").glob("*.py"))
    else:
        declaring = [path] if (path := _declaring_file(config)) else []
    todo = list(declaring)
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = path.parent
                for _ in range(node.level - 1):
                    base = base.parent
                stem = base.joinpath(*node.module.split(".")) if node.module else base
                names = [stem] if node.module else [stem / alias.name for alias in node.names]
                if node.module:
                    names += [stem / alias.name for alias in node.names]  # `from .pkg import module`
                for name in names:
                    todo += [name.with_suffix(".py"), name / "__init__.py"]
            absolute = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and not node.level and node.module else [])
            for module in absolute:
                if module.split(".")[0] == package.name:  # `import hf_recogs.x` / `from hf_recogs.x import y`
                    name = package.joinpath(*module.split(".")[1:])
                    todo += [name.with_suffix(".py"), name / "__init__.py"]
    # a config declared outside the package (a user's own module) counts its module too
    return sorted({package / "builder.py", *(p for p in seen if package in p.parents or p in declaring),
                   *package.glob("*.tsv")})


def _declaring_file(config: DatasetConfig) -> Path | None:
    """The file of the module that defines the config's ``generate`` (None for one typed into a notebook)."""
    generate = getattr(config.generate, "func", config.generate)  # unwrap a functools.partial
    file = getattr(sys.modules.get(getattr(generate, "__module__", None) or ""), "__file__", None)
    return Path(file).resolve() if file else None


@lru_cache(maxsize=256)
def code_hash(config_name: str | None = None) -> str:
    """Hash of everything that decides the generated rows (of one config, or of every config), so that edits
    never reuse a stale Arrow cache."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in row_modules(get_config(config_name) if config_name else None):
        name = path.relative_to(package) if package in path.parents else path.name
        digest.update(str(name).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


@dataclasses.dataclass
class HfRecogsConfig(datasets.BuilderConfig):
    """A builder config; per-catalogue subclasses add one dataclass field per config parameter."""

    def params(self) -> dict:
        spec = get_config(self.name)
        return spec.resolve_params({p.name: getattr(self, p.name) for p in spec.params})


_BUILDER_CONFIGS: dict[str, HfRecogsConfig] = {}


def builder_configs() -> list[HfRecogsConfig]:
    """One builder config per catalogue entry, including entries registered after this module was imported."""
    for name, spec in all_configs().items():
        if name not in _BUILDER_CONFIGS:
            _BUILDER_CONFIGS[name] = _builder_config(spec)
    return list(_BUILDER_CONFIGS.values())


def _builder_config(spec: DatasetConfig) -> HfRecogsConfig:
    if spec.params:
        fields = [(p.name, type(p.default), dataclasses.field(default=p.default)) for p in spec.params]
        cls = dataclasses.make_dataclass(f"HfRecogsConfig_{spec.name}", fields, bases=(HfRecogsConfig,))
        # make_dataclass classes live in no importable module; pickling (datasets' fingerprints) needs one.
        cls.__module__ = __name__
        globals()[cls.__name__] = cls
    else:
        cls = HfRecogsConfig
    return cls(name=spec.name, version=datasets.Version("1.0.0"), description=spec.description)


def features(spec: DatasetConfig) -> datasets.Features:
    columns = {**dict.fromkeys(spec.columns, "string"), **spec.extra_features}
    return datasets.Features({name: datasets.Value(_DTYPES[dtype]) for name, dtype in columns.items()})


def availability_key(spec: DatasetConfig, params: dict) -> str:
    """"" when every split's upstream files can be had now, else a key naming the splits that can.

    It is part of the Arrow cache's hash: a build that had to leave splits out is cached apart from the complete
    one, so that when a missing file comes back the next load builds the complete config instead of serving
    the partial build forever. Only existence is checked here (cheap); contents are verified when read.
    """
    splits = spec.splits_for(params)
    available = [s for s in splits if all(is_available(f) for f in spec.sources(s, **params))]
    return "" if len(available) == len(splits) else "-only-" + "+".join(available)


def _params_from_kwargs(config_name: str | None, kwargs: dict) -> dict | None:
    try:
        spec = get_config(config_name or HfRecogs.DEFAULT_CONFIG_NAME)
        return spec.resolve_params({p.name: kwargs[p.name] for p in spec.params if p.name in kwargs})
    except (ValueError, TypeError):
        return None  # datasets reports the bad name or value itself


def missing_split_reason(spec: DatasetConfig, split: str, params: dict) -> str | None:
    """Why ``split`` cannot be built now (its first unavailable upstream file), or None."""
    for file in spec.sources(split, **params):
        try:
            fetch_path(file) if is_large(file) else fetch_bytes(file)  # a release tarball is not read into memory
        except SourceUnavailable as err:
            return f"split {split!r} of config {spec.name!r} is unavailable: {str(err).removeprefix('hf_recogs: ')}"
    return None


class HfRecogs(datasets.ArrowBasedBuilder):
    BUILDER_CONFIG_CLASS = HfRecogsConfig
    BUILDER_CONFIGS = builder_configs()
    DEFAULT_CONFIG_NAME = "recogs_pos" if "recogs_pos" in all_configs() else None

    @classproperty
    @classmethod
    def builder_configs(cls) -> dict[str, datasets.BuilderConfig]:
        # datasets memoizes this per class; ours follows the registry so late registrations are seen.
        cls.BUILDER_CONFIGS = builder_configs()
        return {config.name: config for config in cls.BUILDER_CONFIGS}

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("dataset_name", DATASET_NAME)
        name = kwargs.get("config_name") or self.DEFAULT_CONFIG_NAME
        if name is not None and not isinstance(name, datasets.BuilderConfig):
            get_config(name)  # an unknown name: our message, with the closest name, instead of datasets' list
        params = _params_from_kwargs(name, kwargs)
        if params is None:  # a bad parameter: datasets reports it
            base = code_hash()
        else:  # each config's cache is keyed on the code that builds it (and on which splits can be had)
            base = code_hash(name) + availability_key(get_config(name), params)
        kwargs["hash"] = base
        super().__init__(*args, **kwargs)

    @property
    def spec(self) -> DatasetConfig:
        return get_config(self.config.name)

    def _info(self) -> datasets.DatasetInfo:
        spec = self.spec
        from .citations import bibtex

        return datasets.DatasetInfo(
            description=spec.description,
            features=features(spec),
            license=spec.license,
            citation=bibtex(*spec.citations),
        )

    def _split_generators(self, dl_manager):
        spec, params = self.spec, self.config.params()
        generators = []
        splits = spec.splits_for(params)
        for split in splits:
            if missing_split_reason(spec, split, params):
                continue  # as_dataset says so, on this load and on every warm load of this partial build
            generators.append(datasets.SplitGenerator(name=split, gen_kwargs={"split": split, "params": params}))
        if not generators:
            raise SourceUnavailable(
                f"hf_recogs: no split of config {spec.name!r} can be built: "
                + missing_split_reason(spec, splits[0], params)
            )
        return generators

    def _generate_tables(self, split: str, params: dict):
        # Rows go to Arrow in batches: writing them one example at a time cost ~4× the generation itself.
        schema = features(self.spec)
        columns = list(schema)
        batch: list[dict] = []
        batch_index = 0
        for row in self.spec.rows(split, **params):
            batch.append(row)
            if len(batch) == _BATCH_ROWS:
                yield Key(0, batch_index), self._table(batch, columns, schema)
                batch, batch_index = [], batch_index + 1
        if batch:
            yield Key(0, batch_index), self._table(batch, columns, schema)

    def _table(self, batch: list[dict], columns: list[str], schema: datasets.Features) -> pa.Table:
        try:
            data = {name: [row[name] for row in batch] for name in columns}
        except KeyError as err:
            raise SourceError(f"hf_recogs: config {self.spec.name!r} produced a row without {err}") from None
        return pa.Table.from_pydict(data, schema=schema.arrow_schema)

    def as_dataset(self, split=None, *args, **kwargs):
        requested = str(split) if split is not None else None
        if requested in self.spec.splits:
            self.spec.check_split(requested, self.config.params())
        if requested in self.spec.splits and self.info.splits and requested not in self.info.splits:
            reason = missing_split_reason(self.spec, requested, self.config.params())
            raise SourceUnavailable(
                reason
                or f"split {requested!r} of {self.config.name!r} was unavailable when this config was prepared; "
                "load it again (a complete build is cached apart from a partial one)"
            )
        if requested is None and self.info.splits:
            params = self.config.params()
            for left_out in (s for s in self.spec.splits_for(params) if s not in self.info.splits):
                reason = missing_split_reason(self.spec, left_out, params) or (
                    f"split {left_out!r} of {self.config.name!r} was unavailable when this config was prepared")
                logger.warning("hf_recogs: %s (the other splits still load)", reason)
        return super().as_dataset(split, *args, **kwargs)
