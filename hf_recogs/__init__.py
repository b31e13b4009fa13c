"""hf_recogs: COGS, ReCOGS, SCAN, SyGNS and SLOG on the current Hugging Face stack.

    import hf_recogs, datasets
    datasets.load_dataset("hf_recogs", "recogs_pos")      # or hf_recogs.load_dataset("recogs_pos")
    hf_recogs.sem_match(prediction, reference)              # Semantic Exact Match of two logical forms

Importing the package is light: it installs two small hooks that take effect when ``datasets`` /
``evaluate`` are imported, so that their bare names ``"hf_recogs"`` and ``"sem_match"`` resolve to us.
"""

from .evaluate_integration import SEM_MATCH_PATH, install_evaluate_hook
from .loading import install_datasets_hook, load_dataset
from .logical_forms import diagnose, exact_match, sem_match
from .registry import get_config, list_configs

__version__ = "0.1.0"
__all__ = [
    "load_dataset",
    "list_configs",
    "get_config",
    "sem_match",
    "exact_match",
    "diagnose",
    "SEM_MATCH_PATH",
    "__version__",
]

install_datasets_hook()
install_evaluate_hook()
