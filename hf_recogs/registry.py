"""The catalogue of dataset configs: the ``CONFIGS`` every benchmark module ends with, and the users' own.

This module is the only importer of ``hf_recogs.benchmarks``, and it imports them on the first lookup, never
at import time, so ``import hf_recogs`` stays light. The types a config is made of live in
``hf_recogs.dataset_config`` (re-exported here for users who declare their own configs with :func:`register`).
"""

from __future__ import annotations

import difflib
import functools

from .dataset_config import METRICS, SPLITS, CategoryGroups, DatasetConfig, Param, Row

__all__ = ["METRICS", "SPLITS", "CategoryGroups", "DatasetConfig", "Param", "Row", "all_configs", "configs_of",
           "get_config", "list_configs", "register"]

_USERS_CONFIGS: dict[str, DatasetConfig] = {}


@functools.cache
def _declared() -> dict[str, DatasetConfig]:
    """The configs the benchmark modules declare, by name, in declaration order."""
    from .benchmarks import cfq, classification, cogs, scan, slog, sygns

    configs: dict[str, DatasetConfig] = {}
    for module in (cogs, scan, slog, sygns, cfq, classification):
        for config in module.CONFIGS:
            if config.name in configs:
                raise ValueError(f"dataset config {config.name!r} declared twice")
            configs[config.name] = config
    return configs


def register(config: DatasetConfig) -> DatasetConfig:
    """Add a config of your own to the catalogue (``load_dataset``, ``hf-recogs``, training and the Hub export
    then know it)."""
    if config.name in _declared() or config.name in _USERS_CONFIGS:
        raise ValueError(f"dataset config {config.name!r} registered twice")
    _USERS_CONFIGS[config.name] = config
    return config


def all_configs() -> dict[str, DatasetConfig]:
    return {**_declared(), **_USERS_CONFIGS}


def configs_of(*families: str) -> dict[str, DatasetConfig]:
    """The configs of the given families (``"scan"``; ``"cogs", "recogs"``), in declaration order."""
    return {name: cfg for name, cfg in all_configs().items() if cfg.family in families}


def get_config(name: str) -> DatasetConfig:
    configs = all_configs()
    if name not in configs:
        close = difflib.get_close_matches(str(name), list(configs), n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ValueError(f"unknown hf_recogs config {name!r}; {hint}valid configs: {', '.join(sorted(configs))}")
    return configs[name]


def list_configs() -> dict[str, str]:
    """Config name → one-line description, sorted by name."""
    return {name: cfg.description for name, cfg in sorted(all_configs().items())}
