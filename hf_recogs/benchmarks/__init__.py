"""Benchmark modules; importing one registers its configs in ``hf_recogs.registry``."""

from . import cogs, scan, slog, sygns  # noqa: F401
