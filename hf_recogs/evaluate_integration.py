"""Make ``evaluate.load("sem_match")`` find our metric from any working directory, offline.

evaluate resolves a bare name against the working directory, then the Hub, then its module cache
(docs/HF_STACK.md §3), so a metric shipped inside a pip package is unreachable by name. We wrap
``evaluate.loading.evaluation_module_factory`` so that the bare ``"sem_match"`` maps to the directory of our
metric, unless ``./sem_match/sem_match.py`` exists in the working directory (evaluate's own first choice,
which we keep). Explicit paths (``evaluate.load(SEM_MATCH_PATH)``, ``"<repo>/metrics/sem_match"``) need no hook.

``import evaluate`` costs 7–9 s (it imports transformers and torch), so nothing here imports it: the wrapper
is installed through :func:`hf_recogs._import_hooks.when_imported`, immediately if ``evaluate.loading`` is
already imported, else right after it is. ``evaluate.inspect`` and ``evaluate.evaluation_suite`` bind the
factory by name at their import; they are patched the same way.
"""

from __future__ import annotations

import functools
import importlib.resources
import os
from pathlib import Path

from ._import_hooks import when_imported

__all__ = ["SEM_MATCH_PATH", "install_evaluate_hook"]

METRIC_NAME = "sem_match"


def _metric_dir() -> str:
    """The metric folder: ``hf_recogs.metrics`` (``metrics/`` mapped by pyproject's package-dir), or the
    source tree's ``metrics/`` when the package is used uninstalled from a checkout."""
    try:
        path = Path(str(importlib.resources.files("hf_recogs.metrics") / METRIC_NAME))
        if (path / f"{METRIC_NAME}.py").is_file():
            return str(path.resolve())
    except ModuleNotFoundError:
        pass
    return str((Path(__file__).resolve().parent.parent / "metrics" / METRIC_NAME).resolve())


SEM_MATCH_PATH: str = _metric_dir()
"""Absolute path of the metric directory: ``evaluate.load(SEM_MATCH_PATH)`` works from any CWD."""

_MODULES = ("evaluate.loading", "evaluate.inspect", "evaluate.evaluation_suite")


_WRAPPERS: dict = {}  # original factory -> its wrapper, so every module that holds it gets the same one


def _wrap(factory):
    if getattr(factory, "_hf_recogs_wrapped", False):
        return factory
    if factory in _WRAPPERS:
        return _WRAPPERS[factory]

    @functools.wraps(factory)
    def evaluation_module_factory(path, *args, **kwargs):
        if path == METRIC_NAME and not os.path.isfile(os.path.join(METRIC_NAME, f"{METRIC_NAME}.py")):
            path = SEM_MATCH_PATH
        return factory(path, *args, **kwargs)

    evaluation_module_factory._hf_recogs_wrapped = True
    _WRAPPERS[factory] = evaluation_module_factory
    return evaluation_module_factory


def _patch(module) -> None:
    factory = getattr(module, "evaluation_module_factory", None)
    if factory is not None:
        module.evaluation_module_factory = _wrap(factory)


_installed = False


def install_evaluate_hook() -> None:
    """Route ``evaluate.load("sem_match")`` to :data:`SEM_MATCH_PATH`. Idempotent and cheap: it does not
    import evaluate (the patch is applied when evaluate gets imported, or now if it already is)."""
    global _installed
    if _installed:
        return
    _installed = True
    for name in _MODULES:
        when_imported(name, _patch)
