"""Benchmark modules; importing one registers its configs in ``hf_recogs.registry``."""

from . import scan, slog  # noqa: F401
