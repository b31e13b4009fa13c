"""Run a callback once a module has been imported, without importing it ourselves.

`import hf_recogs` must stay light (datasets costs ≈2 s to import, evaluate 7–9 s), yet the bare names
``load_dataset("hf_recogs", …)`` and ``evaluate.load("sem_match")`` need small patches inside those libraries.
We patch at once when the library is already imported, and otherwise right after its import finishes.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Callable

_PENDING: dict[str, list[Callable[[object], None]]] = {}


class _Loader(importlib.abc.Loader):
    def __init__(self, wrapped: importlib.abc.Loader):
        self._wrapped = wrapped

    def create_module(self, spec):
        return self._wrapped.create_module(spec)

    def exec_module(self, module):
        self._wrapped.exec_module(module)
        for callback in _PENDING.pop(module.__name__, []):
            callback(module)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname not in _PENDING:
            return None
        sys.meta_path.remove(self)  # find the real spec without finding ourselves again
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _Loader(spec.loader)
        return spec


_FINDER = _Finder()


def when_imported(module_name: str, callback: Callable[[object], None]) -> None:
    """Call ``callback(module)`` now if ``module_name`` is imported, else right after it is."""
    module = sys.modules.get(module_name)
    if module is not None:
        callback(module)
        return
    _PENDING.setdefault(module_name, []).append(callback)
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
