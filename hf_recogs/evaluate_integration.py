"""Make ``evaluate.load("sem_match")`` and ``evaluate.load("sygns_match")`` find our metrics from any working
directory, offline.

evaluate resolves a bare name against the working directory, then the Hub, then its module cache
(evaluate 0.4.6), so a metric shipped inside a pip package is unreachable by name. We wrap
``evaluate.loading.evaluation_module_factory`` so that each bare name of :data:`METRIC_PATHS` maps to the
directory of our metric, unless ``./<name>/<name>.py`` exists in the working directory (evaluate's own first
choice, which we keep). Explicit paths (``evaluate.load(SEM_MATCH_PATH)``, ``"<repo>/metrics/sem_match"``)
need no hook.

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

__all__ = ["METRIC_PATHS", "SEM_MATCH_PATH", "SYGNS_MATCH_PATH", "install_evaluate_hook"]

METRIC_NAMES = ("sem_match", "sygns_match")


def _metric_dir(name: str) -> str:
    """The folder of metric ``name``: under ``hf_recogs.metrics`` (``metrics/`` mapped by pyproject's
    package-dir), or the source tree's ``metrics/`` when the package is used uninstalled from a checkout."""
    try:
        path = Path(str(importlib.resources.files("hf_recogs.metrics") / name))
        if (path / f"{name}.py").is_file():
            return str(path.resolve())
    except ModuleNotFoundError:
        pass
    return str((Path(__file__).resolve().parent.parent / "metrics" / name).resolve())


METRIC_PATHS: dict[str, str] = {name: _metric_dir(name) for name in METRIC_NAMES}
"""Bare metric name -> absolute path of its directory (``evaluate.load(path)`` works from any CWD)."""
SEM_MATCH_PATH: str = METRIC_PATHS["sem_match"]
SYGNS_MATCH_PATH: str = METRIC_PATHS["sygns_match"]

_MODULES = ("evaluate.loading", "evaluate.inspect", "evaluate.evaluation_suite")


_WRAPPERS: dict = {}  # original factory -> its wrapper, so every module that holds it gets the same one


def _wrap(factory):
    if getattr(factory, "_hf_recogs_wrapped", False):
        return factory
    if factory in _WRAPPERS:
        return _WRAPPERS[factory]

    @functools.wraps(factory)
    def evaluation_module_factory(path, *args, **kwargs):
        if isinstance(path, str) and path in METRIC_PATHS and not os.path.isfile(os.path.join(path, f"{path}.py")):
            path = METRIC_PATHS[path]
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
    """Route ``evaluate.load("<name>")`` to ``METRIC_PATHS[name]`` for each of our metrics. Idempotent and
    cheap: it does not import evaluate (the patch is applied when evaluate gets imported, or now if it
    already is)."""
    global _installed
    if _installed:
        return
    _installed = True
    for name in _MODULES:
        when_imported(name, _patch)
