"""``hf-recogs`` (or ``python -m hf_recogs``): the daily jobs from a shell.

    hf-recogs list [--sizes]                        configs, family, licence, splits (and row counts)
    hf-recogs show recogs_pos [-p seed=1] [--rows 3] splits, sizes, columns, a few rows, citation
    hf-recogs score preds.jsonl --config recogs_pos --split gen [--json out.json]
    hf-recogs errors preds.jsonl [--category pp_recursion]   where wrong rows first leave the gold form
    hf-recogs train configs/scan_simple.yaml seeds=[42]   same as train.py, in this process
    hf-recogs train --multi_gpu --num_processes 2 configs/x.yaml   checks the config, then accelerate launch
    hf-recogs publish outputs/<run> results/<run> [--checkpoint median|SEED]   a finished run into results/
    hf-recogs push outputs/<run>/seed_42 USER/REPO [--private]   one trained seed to the Hub, with our card
    hf-recogs export build … / hf-recogs export push …   the parquet Hub export (hf_recogs.publish.dataset_export)

A predictions file is JSONL with one object per row of the split, in the split's order, with a
``prediction`` field (and ``input`` on every row or none: with it, every row's input must equal the split's), or
TSV/plain text with one prediction per line (a TSV line ``input<TAB>prediction`` is checked the same way; plain
text cannot be, and ``score`` says so); any of them may be gzipped (``.jsonl.gz``, as in ``results/``). The
kind is read from the content, not the file name. COGS-family gen scores also list the recursion categories per
depth. Errors are one line on stderr with exit status 2 (status 1 from ``push`` and ``export``, as their
modules give it).
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import json
import os
import sys
import zlib
from pathlib import Path
from typing import Any


class CliError(ValueError):
    """Bad input to a subcommand; the message is one line and names the fix."""


def _params(pairs: list[str]) -> dict[str, str]:
    params = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CliError(f"-p {pair!r}: write parameters as name=value, e.g. -p seed=1")
        params[key] = value
    return params


# ---------------------------------------------------------------------------------------------------------
# list / show


def cmd_list(args) -> int:
    from . import load_dataset
    from .registry import all_configs

    for name, cfg in sorted(all_configs().items()):
        splits = cfg.splits_for()
        if args.sizes:
            try:
                data = load_dataset(name)
                splits_text = ", ".join(f"{s} {len(data[s]):,}" for s in splits if s in data)
            except Exception as exc:  # noqa: BLE001 - a listing goes on past one config that cannot load
                splits_text = f"not available here ({str(exc).splitlines()[0]})"
        else:
            splits_text = ", ".join(splits)
        print(f"{name:<34} {cfg.family:<8} {cfg.license:<14} {splits_text}")
        print(f"{'':<34} {cfg.description}")
    return 0


def cmd_show(args) -> int:
    from . import load_dataset
    from .citations import bibtex
    from .registry import get_config

    cfg = get_config(args.config)
    data = load_dataset(args.config, **_params(args.param))
    print(f"{cfg.name}: {cfg.description}")
    print(f"family {cfg.family}, licence {cfg.license}, scored by {cfg.metric} (hf-recogs score)")
    for split, ds in data.items():
        print(f"\n[{split}] {len(ds):,} rows; columns: {', '.join(ds.column_names)}")
        for row in ds.select(range(min(args.rows, len(ds)))):
            print("  " + json.dumps({k: row[k] for k in cfg.columns}, ensure_ascii=False))
    if cfg.notes:
        print(f"\nnotes: {cfg.notes}")
    print("\n" + bibtex(*cfg.citations))
    return 0


# ---------------------------------------------------------------------------------------------------------
# score


def read_predictions(path: Path) -> tuple[list[str], list[str] | None]:
    """(predictions, inputs or None) from a JSONL, TSV or plain-text predictions file, gzipped or not (the
    ``predictions_<split>.jsonl.gz`` of published runs). What a file is comes from its content, not its name:
    gzip by its magic bytes, JSONL when its first line is a JSON object (or the name ends in .jsonl/.json).
    Lines end at ``\n`` only (a form feed or a Unicode line separator inside a prediction stays in it), and a
    byte-order mark is dropped. Inputs are given on every row or none: a partial set is refused, since the
    rows without one could not be checked."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CliError(f"{path}: no such predictions file") from None
    except OSError as exc:
        raise CliError(f"{path}: cannot be read ({exc.strerror}); check its name and permissions") from None
    name = path.name.removesuffix(".gz")
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):  # cut short, or damaged inside
            raise CliError(f"{path}: not a complete gzip file; gzip it again or give the plain file") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CliError(f"{path}: not UTF-8 text; write predictions as UTF-8 JSONL or TSV") from None
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if lines and lines[-1] == "":  # the newline that ends the last line
        lines.pop()
    first = next((line for line in lines if line.strip()), "")
    if name.endswith((".jsonl", ".json")) or _is_json_object(first):
        return _read_jsonl(path, lines)
    rows = [line.split("\t") for line in lines]
    if not any(len(r) > 1 for r in rows):
        return lines, None
    while rows and rows[-1] == [""]:  # blank lines that end a TSV file
        rows.pop()
    for number, r in enumerate(rows, 1):
        if len(r) != 2:
            what = "is blank" if r == [""] else f"has {len(r)} columns"
            raise CliError(f"{path}: line {number} {what}; a TSV file has 'input<TAB>prediction' on every line")
    return [r[1] for r in rows], [r[0] for r in rows]


def _is_json_object(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def _read_jsonl(path: Path, lines: list[str]) -> tuple[list[str], list[str] | None]:
    predictions, inputs, missing = [], [], []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise CliError(f"{path}: line {number} is not JSON; one object per line, e.g. "
                           '{"prediction": "..."}') from None
        if not isinstance(row, dict) or not isinstance(row.get("prediction"), str):
            raise CliError(f'{path}: line {number} needs a string "prediction" field')
        predictions.append(row["prediction"])
        inputs.append(row.get("input"))
        if not isinstance(row.get("input"), str):
            missing.append(number)
    if not missing:
        return predictions, inputs
    if len(missing) == len(predictions):
        return predictions, None
    raise CliError(f'{path}: line {missing[0]} has no string "input" field while other lines have one; give an '
                   "input on every line (then the split's order is checked) or on none")


def score_file(path: Path, config: str, split: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Score a predictions file against ``config``'s ``split``: the summary of ``scoring.summarize``, scored by
    the config's own metric. Imports neither torch nor transformers, so scoring takes seconds to start."""
    from .registry import get_config
    from .scoring import summarize

    if get_config(config).metric == "classification":
        raise CliError(f"{config} is a classification config: hf-recogs score scores seq2seq predictions; "
                       "score its probabilities with hf_recogs.scoring.score_pairs")
    records, declared, order_checked = scored_records(path, config, split, params)
    return {"config": config, "split": split, "params": params or {}, "metric": declared.metric,
            "order_checked": order_checked, **summarize(records, declared.metric, declared.category_groups)}


def scored_records(path: Path, config: str, split: str, params: dict[str, Any] | None = None):
    """(each row's verdicts as ``scoring.score_rows`` gives them, the config, whether the rows' order was
    checked against their inputs) for a predictions file of ``config``'s ``split``."""
    from . import load_dataset
    from .registry import get_config
    from .scoring import score_rows

    predictions, inputs = read_predictions(path)
    data = load_dataset(config, split=split, **(params or {}))
    if len(predictions) != len(data):
        raise CliError(f"{path}: {len(predictions):,} predictions for the {len(data):,} rows of {config}/{split}; "
                       "write one prediction per row, in the split's order")
    if inputs is not None:
        for number, (given, expected) in enumerate(zip(inputs, data["input"], strict=True), 1):
            if " ".join(given.split()) != " ".join(expected.split()):
                raise CliError(f"{path}: row {number} is for input {given!r}, but {config}/{split} row {number} "
                               f"is {expected!r}; keep the split's order")
    declared = get_config(config)
    records = score_rows(predictions, data["output"], data["category"], declared.metric, inputs=data["input"])
    return records, declared, inputs is not None


def _undecided(s: dict[str, Any]) -> int | None:
    """How many pairs of a score were left undecided (counted as no match): SEM's search out of budget, a
    SyGNS entailment direction z3 did not settle, a DRS pair whose optimum was not proven; None if the metric
    has no such count."""
    if "sem_undecided" in s:
        return s["sem_undecided"]
    fraction = s.get("undecided", s.get("counter_unproven"))
    return None if fraction is None else round(fraction * s["n"])


def _table(summary: dict[str, Any]) -> str:
    """The scores as aligned columns: categories (with their depths), groups, then OVERALL. The first column is
    as wide as the longest name, so a long category name never shifts the numbers. Columns: the primary
    score, exact match (once), SyGNS's headline level, and the undecided count where the metric has one."""
    from .scoring import SYGNS_LABELS, percent_text, sygns_levels

    key = summary["primary"]
    rows = []
    for name, s in summary["per_category"].items():
        rows.append((name, s))
        depths = summary.get("per_depth", {}).get(name, {})
        rows += [(f"  depth {depth}", at_depth) for depth, at_depth in depths.items()]
    rows += [(f"[{name}]", s) for name, s in summary["groups"].items()]
    rows.append(("OVERALL", summary))
    width = max(len(name) for name in ["category", *(name for name, _ in rows)])
    scores = [key] + ["exact_match"] * (key != "exact_match") + list(sygns_levels(summary)[:1])
    labels = [k if k in (key, "exact_match") else SYGNS_LABELS[k] for k in scores]
    undecided = _undecided(summary) is not None

    def row(name, s):
        cells = [percent_text(None if s.get(k) is None else 100 * s[k], decimals=2) for k in scores]
        if undecided:
            cells.append(str(_undecided(s)))
        return f"{name:<{width}} {s['n']:>7}" + "".join(f" {c:>12}" for c in cells)

    header = f"{'category':<{width}} {'n':>7}" + "".join(f" {h:>12}" for h in labels + ["undecided"] * undecided)
    return "\n".join([header, *(row(name, s) for name, s in rows)])


def _checked_json_path(path: str | None) -> Path | None:
    """Where ``--json`` writes, checked before any scoring: a folder that exists and can be written, and not
    a folder itself."""
    if path is None:
        return None
    target = Path(path)
    if target.is_dir():
        raise CliError(f"--json {path}: is a folder; give a file name, e.g. --json {target / 'scores.json'}")
    parent = target.parent
    if not parent.is_dir():
        raise CliError(f"--json {path}: folder {parent} does not exist; create it first or write elsewhere")
    if not os.access(parent, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise CliError(f"--json {path}: cannot be written here (permissions); write elsewhere")
    return target


def cmd_score(args) -> int:
    json_path = _checked_json_path(args.json)
    summary = score_file(Path(args.predictions), args.config, args.split, _params(args.param))
    print(_table(summary))
    if not summary["order_checked"]:
        print(f"order not checked: {args.predictions} has no inputs, so its rows are taken to be in the split's "
              "order; JSONL with an 'input' on every row, or TSV 'input<TAB>prediction', is checked")
    if json_path is not None:
        try:
            json_path.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        except OSError as exc:
            raise CliError(f"--json {args.json}: cannot be written ({exc.strerror}); write elsewhere") from None
        print(f"written {args.json}")
    return 0


def cmd_errors(args) -> int:
    from . import load_dataset
    from .registry import get_config
    from .report.errors import error_tables, indices_are_word_positions, markdown

    if get_config(args.config).metric == "classification":
        raise CliError(f"{args.config} is a classification config: hf-recogs errors reads seq2seq predictions; "
                       "give --config recogs_pos (the default), cogs or another config whose indices are word "
                       "positions")
    params = _params(args.param)
    data = load_dataset(args.config, split=args.split, **params)
    wanted = set(args.category) if args.category else None
    if wanted and not wanted <= set(data["category"]):
        unknown = sorted(wanted - set(data["category"]))
        close = [m for name in unknown for m in difflib.get_close_matches(name, set(data["category"]), n=1)]
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise CliError(f"{', '.join(unknown)}: no such category in {args.config}/{args.split}{hint}; "
                       f"its categories: hf-recogs show {args.config}")
    # from the split's own gold forms, before the predictions are read and scored
    if not indices_are_word_positions({"input": row["input"], "gold": row["output"]} for row in data):
        raise CliError(f"{args.config}/{args.split}: its logical forms do not index a word by its position in the "
                       "sentence, which hf-recogs errors reads; give --config recogs_pos, cogs or a variant of them")
    records, declared, _ = scored_records(Path(args.predictions), args.config, args.split, params)
    groups = declared.category_groups
    tables = error_tables((r for r in records if wanted is None or r["category"] in wanted),
                          groups.depth if groups is not None else None)
    print(markdown(tables))
    return 0


# ---------------------------------------------------------------------------------------------------------
# train / publish / push / export


def _launch_defaults(options: list[str]) -> list[str]:
    """accelerate's own defaults, passed explicitly when no accelerate config file is in use, so that
    ``accelerate launch`` does not print its "values were not passed" warning."""
    from accelerate.commands.config.config_args import default_config_file

    if "--config_file" in options or Path(default_config_file).is_file():
        return []
    defaults = {"--num_processes": "1", "--num_machines": "1", "--mixed_precision": "no", "--dynamo_backend": "no"}
    return [item for key, value in defaults.items() if key not in options for item in (key, value)]


def cmd_train(args) -> int:
    """``hf-recogs train [accelerate launch options] CONFIG.yaml [overrides]``.

    Without launcher options it trains in this process (as ``python train.py``). With them it checks the
    config here first, so a mistake is one line, and only then starts ``accelerate launch --quiet`` (accelerate
    re-raises any non-zero exit of ``train.py`` as its own traceback unless it is quiet)."""
    import subprocess

    from .train import ConfigError, main, parse_args

    argv = args.forwarded
    config_at = next((i for i, a in enumerate(argv) if a.endswith((".yaml", ".yml"))), None)
    options, train_args = (argv[:config_at], argv[config_at:]) if config_at else ([], argv)
    if not options:
        return main(train_args)
    try:
        parse_args(train_args)
    except ConfigError as exc:
        print(f"hf-recogs train: error: {exc}", file=sys.stderr)
        return 2
    command = [sys.executable, "-m", "accelerate.commands.launch", "--quiet", *options, *_launch_defaults(options),
               "--module", "hf_recogs.train", *train_args]
    return subprocess.call(command)


def cmd_publish(args) -> int:
    """``hf-recogs publish RUN_DIR DEST [--checkpoint median|SEED]``: a finished run into ``results/``."""
    from .publish.results_folder import main

    return main(args.forwarded, prog="hf-recogs publish")


def cmd_push(args) -> int:
    """``hf-recogs push SEED_DIR USER/REPO [--private] [--endpoint URL]``: one seed to a Hub model repository."""
    from .publish.model_push import main

    return main(args.forwarded, prog="hf-recogs push")


def cmd_export(args) -> int:
    """``hf-recogs export build|push …``: the parquet Hub dataset export."""
    from .publish.dataset_export import main

    return main(args.forwarded)


# Subcommands whose own parser reads everything after their name, --help included (argparse cannot forward a
# leading option): the name -> the function that runs it.
FORWARDED = {"train": cmd_train, "publish": cmd_publish, "push": cmd_push, "export": cmd_export}


# ---------------------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hf-recogs", description="COGS, ReCOGS, SCAN, SyGNS and SLOG datasets, "
                                     "the SEM metric and the baselines, from the command line.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("list", help="list the dataset configs (family, licence, splits)")
    p.add_argument("--sizes", action="store_true", help="load every config and give its row counts (slow)")
    p.set_defaults(run=cmd_list)

    p = sub.add_parser("show", help="splits, sizes, columns, a few rows and the citation of one config")
    p.add_argument("config")
    p.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a config parameter, e.g. -p seed=1 (repeatable)")
    p.add_argument("--rows", type=int, default=3, help="rows to print per split (default 3)")
    p.set_defaults(run=cmd_show)

    p = sub.add_parser("score", help="score a predictions file against a config's split, per category")
    p.add_argument("predictions", help="JSONL with a 'prediction' field (optionally 'input'), or TSV/text")
    p.add_argument("--config", required=True)
    p.add_argument("--split", default="gen", help="default: gen")
    p.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the scores as JSON")
    p.set_defaults(run=cmd_score)

    p = sub.add_parser("errors", help="where the wrong rows of a ReCOGS_pos or COGS predictions file first leave "
                                      "the gold form, per category and depth")
    p.add_argument("predictions", help="as for score")
    p.add_argument("--config", default="recogs_pos", help="default: recogs_pos")
    p.add_argument("--split", default="gen", help="default: gen")
    p.add_argument("--category", action="append", default=[], help="only this category (repeatable)")
    p.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE")
    p.set_defaults(run=cmd_errors)

    forwarded = {
        "train": "train and evaluate from a YAML config (as train.py; accelerate launch options before the config)",
        "publish": "copy a finished run into results/ (scores, predictions, cards, aggregate, one checkpoint)",
        "push": "upload one trained seed folder to a Hub model repository with our model card",
        "export": "build or push the parquet Hub export (export build --help)",
    }
    for name, text in forwarded.items():  # listed in the help here; main() hands their arguments over
        p = sub.add_parser(name, help=text, add_help=False)
        p.add_argument("forwarded", nargs=argparse.REMAINDER)
        p.set_defaults(run=FORWARDED[name])
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in FORWARDED:
        return FORWARDED[argv[0]](argparse.Namespace(forwarded=argv[1:]))
    args = build_parser().parse_args(argv)
    from .sources import SourceError

    try:
        return args.run(args)
    except (CliError, SourceError, ValueError) as exc:
        print(f"hf-recogs {args.command}: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
