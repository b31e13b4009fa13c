"""Publishing: what leaves the machine a run trained on. Each module is one destination and one subcommand:

- ``results_folder``: a finished run into the repository's ``results/`` (``hf-recogs publish``);
- ``model_push``: one trained seed to a Hub model repository with our card (``hf-recogs push``);
- ``dataset_export``: every config as parquet Hub dataset repositories (``hf-recogs export build|push``).

Nothing is imported here, so ``python -m hf_recogs.publish.<module>`` runs each module exactly once.
"""
