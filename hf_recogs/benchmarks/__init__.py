"""Benchmark modules. Each declares its configs and ends with them as a value, ``CONFIGS``; the catalogue
(``hf_recogs.registry``) collects them and is the only module that imports these."""
