"""``hf_recogs.load_dataset`` and the hook that makes ``datasets.load_dataset("hf_recogs", name)`` work.

datasets resolves a bare name as a local folder or a Hub repository and has no plugin mechanism. We wrap
its ``dataset_module_factory`` (``datasets.load``) so that exactly the name ``"hf_recogs"`` resolves to
our builder module (also in a checkout's root, where ``./hf_recogs`` is the Python package; a user's own
data folder of that name stays theirs); every other name goes through untouched. The wrapper is installed
when datasets is imported (or at once if it already is), from ``import hf_recogs``.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from ._import_hooks import when_imported
from .registry import get_config

NAME = "hf_recogs"


def _dataset_module():
    from datasets.load import DatasetModule

    from . import builder

    # no hash here: the builder keys each config's cache on the code that builds that config (builder.code_hash)
    return DatasetModule(module_path=builder.__name__, hash=None, builder_kwargs={"dataset_name": NAME})


def _is_source_folder(folder: str) -> bool:
    # In a checkout's root, ./hf_recogs is our Python package (installed editable or not), not a data folder.
    return os.path.isfile(os.path.join(folder, "__init__.py"))


def _wrap_factory(factory):
    if getattr(factory, "_hf_recogs_wrapped", False):
        return factory

    @functools.wraps(factory)
    def dataset_module_factory(path, *args, **kwargs):
        if path == NAME and (not os.path.isdir(path) or _is_source_folder(path)):
            return _dataset_module()
        return factory(path, *args, **kwargs)

    dataset_module_factory._hf_recogs_wrapped = True
    return dataset_module_factory


def _patch(module) -> None:
    module.dataset_module_factory = _wrap_factory(module.dataset_module_factory)


def install_datasets_hook() -> None:
    """Make the bare name ``"hf_recogs"`` resolve to our builder in ``datasets.load`` and ``datasets.inspect``."""
    when_imported("datasets.load", _patch)
    when_imported("datasets.inspect", _patch)


def load_dataset(name: str, split: str | None = None, **kwargs: Any):
    """Load a config as a ``DatasetDict`` (or one ``Dataset`` with ``split=``), with datasets' Arrow caching.

    Keyword arguments are the config's parameters (``seed=``, ``num=``…) and datasets' own
    (``cache_dir=``, ``download_mode=``…). This entry point does not depend on the bare-name hook.
    """
    spec = get_config(name)  # unknown name → ValueError listing the valid ones
    params = {key: kwargs.pop(key) for key in [p.name for p in spec.params] if key in kwargs}
    resolved = spec.resolve_params(params)  # bad values → ValueError naming the parameter
    if split is not None:
        spec.check_split(split, resolved)
    from . import builder

    instance = builder.HfRecogs(config_name=name, cache_dir=kwargs.pop("cache_dir", None), **params)
    # One rule for a whole load and for split=: data already verified and cached is served as is; anything
    # not yet cached is built from sources verified now.
    cached = instance.info.splits is not None and split in (instance.info.splits or {})
    if split is not None and not cached:
        reason = builder.missing_split_reason(spec, split, resolved)
        if reason:
            from .sources import SourceUnavailable

            raise SourceUnavailable(reason)
    instance.download_and_prepare(
        download_mode=kwargs.pop("download_mode", None),
        verification_mode=kwargs.pop("verification_mode", None),
        num_proc=kwargs.pop("num_proc", None),
    )
    in_memory = bool(kwargs.pop("keep_in_memory", False))
    if kwargs:  # neither a datasets option nor a parameter of this config
        spec.resolve_params(kwargs)
    return instance.as_dataset(split=split, in_memory=in_memory)
