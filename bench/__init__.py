"""Benchmarks and checks of hf_recogs; run each as a script: ``python bench/<name>.py``. A package so
that the tests can import their pair generators and checks as ``bench.<name>`` instead of copying them."""
