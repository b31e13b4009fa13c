"""Training and evaluation of the from-scratch baselines: ``accelerate launch train.py configs/<name>.yaml``.

One module per stage, in the order a run goes through them:

- ``arguments``: the options (:class:`ExperimentArguments` + ``Seq2SeqTrainingArguments``) and their language
  (YAML file, then ``key=value`` / ``--key value`` overrides), one-line :class:`ConfigError` for any mistake;
- ``hardware``: CPU threads, native bf16;
- ``data``: the config's splits (or JSON-lines ``data_files``), subsets, the vocabulary, tokens, and for
  (input, candidate) classification the ``PairCollator`` that annotates and lays out each pair;
- ``trainer``: ``BaselineTrainer`` (a ``Seq2SeqTrainer``), ``ClassifierTrainer``, and their callbacks (source gap,
  training clock);
- ``decode``: predictions for a split (decoding, or a classifier's probabilities), one path for one process and
  DDP;
- ``record``: :class:`RunRecord`, the schema of ``results.json``;
- ``run``: ``main`` — the stages above, seed by seed, then the report (``hf_recogs.report``).

Command lines (tested):

    accelerate launch train.py configs/smoke.yaml                     # one process; CPU or one GPU
    python train.py configs/smoke.yaml                                 # the same without accelerate
    accelerate launch train.py configs/recogs_pos_transformer.yaml seeds=[42] learning_rate=3e-4
    accelerate launch --multi_gpu --num_processes 2 train.py configs/smoke.yaml   # DDP; on CPU too (gloo)
    torchrun --nproc_per_node 2 train.py configs/smoke.yaml                       # the same DDP run
    accelerate launch train.py configs/smoke.yaml resume_from_checkpoint=true     # continue a killed run
    python train.py configs/smoke.yaml do_train=false model_name_or_path=outputs/smoke/seed_42  # evaluate only

Each seed trains in ``<output_dir>/seed_<seed>/`` and writes the model, tokenizer and config,
``predictions_<split>.jsonl``, ``results.json``, ``per_category.png``, ``curves.png`` and the model card
``README.md``; several seeds also give ``aggregate.json`` / ``.md`` / ``.png`` in ``<output_dir>``. Seeds whose
``results.json`` exists are skipped (``overwrite_output_dir: true`` retrains them, moving the old folder aside).
On CPU, ``accelerate launch`` exports ``OMP_NUM_THREADS=1``; :func:`hardware.configure_cpu_threads` gives torch
the idle physical cores again (``cpu_threads: N`` to choose). ``accelerate launch --multi_gpu`` works on a
CPU-only machine because ``use_cpu`` is then set automatically (accelerate picks gloo).
"""

from .arguments import ConfigError, ExperimentArguments, parse_args


def main(argv=None) -> int:
    """``train.py``'s entry point (:func:`run.main`), imported on call: reading the options (as ``report`` and
    ``publish`` do) does not load the training stack."""
    from .run import main as run_main

    return run_main(argv)

__all__ = ["ConfigError", "ExperimentArguments", "main", "parse_args"]
