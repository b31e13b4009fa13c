"""The model card of one trained seed, rendered from its ``results.json`` through ``model_cards/template.md``:
the results tables, ``model-index`` per split (and per group and category of the headline split), the
hyper-parameters, the command that trains it again, and the citations.

Rendering reads nothing but the results (and the registered config, for citations and for the group
explanation of results written before summaries recorded it), so a published card re-renders byte for byte.
"""

from __future__ import annotations

import json
import shlex
from importlib import resources
from pathlib import Path
from typing import Any

from ..form_rules import OLDER_VERSIONS
from ..scoring import SYGNS_LABELS, fraction_as_percent, group_display, headline_split, sygns_levels
from ..train.arguments import MACHINE_LOCAL_OPTIONS

# model_cards/ ships inside the package as hf_recogs.model_cards (see pyproject's package-dir).
TEMPLATE = Path(str(resources.files("hf_recogs.model_cards") / "template.md"))


def _citation_keys(dataset: str) -> list[str]:
    from ..registry import get_config

    try:
        return list(get_config(dataset).citations)
    except ValueError:  # a dataset outside our catalogue: its card cites nothing of ours
        return []


CLASSIFICATION_KEYS = ("roc_auc", "accuracy", "f1")


def _classification_table(results: dict[str, Any]) -> str:
    """ROC AUC, accuracy and F1 (fractions) per split, group, category and kind of negative."""
    def row(split, name, scores):
        cells = ["–" if scores.get(k) is None else f"{scores[k]:.3f}" for k in CLASSIFICATION_KEYS]
        return f"| {split} | {name} | {scores['n']} | " + " | ".join(cells) + " |"

    lines = ["| split | rows of | n | ROC AUC | accuracy | F1 |", "|---|---|---|---|---|---|"]
    for split, s in results["splits"].items():
        lines.append(row(split, "**all**", s))
        lines += [row(split, f"*{g}*", gs) for g, gs in s.get("groups", {}).items()]
        lines += [row(split, f"negatives: {kind}", ks) for kind, ks in s.get("per_negative_kind", {}).items()]
        if len(s["per_category"]) > 1:
            lines += [row(split, c, cs) for c, cs in s["per_category"].items()]
    return "\n".join(lines)


def _results_table(results: dict[str, Any]) -> str:
    if results.get("metric") == "classification":
        return _classification_table(results)
    levels = next((sygns_levels(s) for s in results["splits"].values() if sygns_levels(s)), ())
    if levels:
        return _sygns_results_table(results, levels)
    # SEM columns only for runs scored by SEM: a SCAN card has exact match alone
    scored_by_sem = any(s.get("sem_match") is not None for s in results["splits"].values())
    keys = ["sem_match", "exact_match"] if scored_by_sem else ["exact_match"]
    names = {"sem_match": "SEM (%)", "exact_match": "exact match (%)"}
    lines = ["| split | category | n | " + " | ".join(names[k] for k in keys) + " |",
             "|---|---|---|" + "---|" * len(keys)]
    lines += _table_rows(results, keys)
    return "\n".join(lines)


def _table_rows(results: dict[str, Any], keys: list[str]) -> list[str]:
    """Each split's overall, group and (when there are several) category rows, with the ``keys`` scores."""
    def row(split, name, scores):
        return f"| {split} | {name} | {scores['n']} | " + " | ".join(
            fraction_as_percent(scores.get(k)) for k in keys) + " |"

    lines = []
    for split, s in results["splits"].items():
        lines.append(row(split, "**all**", s))
        for g, gs in s.get("groups", {}).items():
            lines.append(row(split, f"*{g}*", gs))
        if len(s["per_category"]) > 1:
            for c, cs in s["per_category"].items():
                lines.append(row(split, c, cs))
    return lines


def _sygns_results_table(results: dict[str, Any], levels: tuple[str, ...]) -> str:
    """Exact match and the SyGNS paper's levels (hf_recogs ``sygns_match`` metric) per split, group, category."""
    lines = ["| split | category | n | exact match (%) | " + " | ".join(f"{SYGNS_LABELS[lv]} (%)" for lv in levels)
             + " |", "|---|---|---|---|" + "---|" * len(levels)]
    lines += _table_rows(results, ["exact_match", *levels])
    note = ("\n\nG⇒P / G⇐P / G⇔P: gold entails prediction / the converse / both (z3, deterministic budget; "
            "undecided pairs count as not entailed and are listed); up/down F1: polarity of content words; "
            "COUNTER: exact optimum of DRS clause matching. See the `sygns_match` metric card of hf_recogs.")
    return "\n".join(lines) + note


def card_license(dataset: str | None) -> tuple[str, str]:
    """(the card's Hub licence id, a sentence saying why). A published run folder quotes its dataset's rows in
    its predictions files, so it carries the dataset's licence: share-alike data (SyGNS, CFQ) stays share-alike.
    A run on ``data_files`` (data we do not know) gets "other"."""
    from ..publish.dataset_export import hf_license_id
    from ..registry import all_configs

    config = all_configs().get(dataset) if dataset else None
    if config is None:
        return "other", (" Licence: the predictions files quote the training run's own data files; their licence "
                         "is that data's.")
    return hf_license_id(config.license), (f" Licence: the predictions files quote the `{dataset}` rows, so this "
                                           f"folder is shared under the data's licence, {config.license}.")


def _partial_run_warning(results: dict[str, Any]) -> str:
    """A loud line for cards of runs on a subset of the data (smoke tests, quick checks): their scores are not
    results."""
    hp = results.get("hyperparameters", {})
    parts = []
    if hp.get("max_train_samples"):
        parts.append(f"trained on {hp['max_train_samples']} rows only")
    if hp.get("max_eval_samples"):
        parts.append(f"scored on {hp['max_eval_samples']} rows per split only")
    if not parts:
        return ""
    return (f"\n\n> **A smoke / partial run, not a result:** {' and '.join(parts)}. Its scores say that the "
            "pipeline works, not how well the model generalises.")


def _target_order_note(results: dict[str, Any]) -> str:
    """A line for runs trained on reordered outputs (``target_order``): their scores compare, their outputs'
    order does not."""
    order = results.get("hyperparameters", {}).get("target_order", "dataset")
    if order == "dataset":
        return ""
    if order == "arguments_first":
        return ("\n\nTraining targets: the dataset's logical forms with each conjunct's arguments written before "
                "its predicate (`target_order: arguments_first`: `( 1 , 0 ) agent` for `agent ( 1 , 0 )`). The "
                "model writes that order; its config says so (`hf_recogs_target_order`), and hf_recogs' decoding "
                "gives its outputs back in the dataset's order before every split is scored against the dataset's "
                "own outputs (`hf_recogs.logical_forms.predicates_first` does it for outputs of your own).")
    if order == "nmod_last":
        return ("\n\nTraining targets: the dataset's logical forms with every `nmod` conjunct moved after the other "
                "`AND` conjuncts (`target_order: nmod_last`). SEM ignores conjunct order, and every split is scored "
                "against the dataset's own outputs.")
    return ("\n\nTraining targets: the dataset's logical forms with their `AND` conjuncts in depth-first order "
            "(`target_order: depth_first`: each noun's `nmod` right after the role that names it). SEM ignores "
            "conjunct order, and every split is scored against the dataset's own outputs.")


def _structure_track_note(results: dict[str, Any]) -> str:
    """The structure track of a run whose model read its inputs' parse trees (nothing for other runs)."""
    structure = results.get("input_structure")
    offsets = (structure or {}).get("pointer_offsets")
    offsets_note = (f" The decoder's cross-attention read each source word's offset from the word the output last "
                    f"named by its position, clipped to ±{offsets} (`pointer_offsets`)." if offsets else "")
    if offsets and (structure or {}).get("pointer_offsets_by", "position") == "relation":
        offsets_note = (f" The decoder's cross-attention read each source word's rank, clipped to ±{offsets}, among "
                        "the words in the same tree relation to the word the output last named by its position, "
                        "counted outward on its side (`pointer_offsets`, `pointer_offsets_by: relation`).")
    if offsets and (structure or {}).get("pointer_offsets_by", "position") == "both":
        offsets_note = (f" The decoder's cross-attention read two offset terms side by side, each clipped to "
                        f"±{offsets}: each source word's offset from the word the output last named by its "
                        "position, and its rank among the words in the same tree relation to that word, counted "
                        "outward on its side (`pointer_offsets`, `pointer_offsets_by: both`).")
    if offsets and (structure or {}).get("pointer_offsets_scope", "all") == "noun_list":
        offsets_note += (" The offset term applied only until the output's first `AND` (the noun "
                         "list; `pointer_offsets_scope: noun_list`).")
    keys_note = (" Its pointer terms also depended on the decoder token: a learned vector per label added to the "
                 "keys (`pointer_keys`)." if (structure or {}).get("pointer_keys") else "")
    keys_note += (" Each head's output also said how much of its attention went to each tree label: a learned "
                  "vector per label added to the values (`pointer_values`)."
                  if (structure or {}).get("pointer_values") else "")
    coverage_note = (" Its cross-attention also read how many times the output had named each source word so far "
                     "(`pointer_coverage`)." if (structure or {}).get("pointer_coverage") else "")
    coverage_note += (" At the step after a conjunct's first argument (where it writes `,` or `)`), every "
                      "cross-attention head saw only the word that argument names (`pointer_arity_mask`)."
                      if (structure or {}).get("pointer_arity_mask") else "")
    coverage_note += (" Each cross-attention head's output also said how many conjuncts so far had the words it "
                      "attended to as their first argument: a learned vector per count, 0, 1 or 2 and more "
                      "(`pointer_head_counts`)." if (structure or {}).get("pointer_head_counts") else "")
    shift = (structure or {}).get("decoder_position_shift")
    shift_note = (f" In training, the decoder's positions of each target started at a random offset of 0 to {shift} "
                  "(`decoder_position_shift`, SHAPE); decoding starts at 0." if shift else "")
    relative = (structure or {}).get("decoder_relative_positions")
    relative_note = (f" The decoder had no learned positions: its self-attention read the distance back to each "
                     f"token, a learned term per head for 0 to {relative - 1} and one for {relative} or more "
                     "(`decoder_relative_positions`)." if relative else "")
    window = (structure or {}).get("decoder_attention_window")
    relative_note += (f" Each decoder token's self-attention saw only itself and the {window - 1} tokens before it "
                      "(`decoder_attention_window`)." if window else "")
    copy_note = (" Its output layer could also copy a source token: a learned attention over the encoder's outputs "
                 "and a gate mixed that copy distribution with the vocabulary's (`output_copy`, a "
                 "pointer-generator)." if (structure or {}).get("output_copy") else "")
    if (structure or {}).get("output_copy_lexicon"):
        copy_note += (" A copy wrote the output word aligned with the source word on the training pairs (the "
                      "highest Dice coefficient over rows: `blessed` wrote `bless`; `output_copy_lexicon`), not "
                      "always the word itself.")
    if (structure or {}).get("output_copy_positions"):
        copy_note += (" The output's positions were written by pointing only: a second learned attention over the "
                      "source's words gave each word's share to the token naming its position, and the "
                      "vocabulary gave position tokens nothing (`output_copy_positions`).")
    if (structure or {}).get("pointer_named_words"):
        copy_note += (" A written noun, name or lemma also counted as naming a source word, the one the lexicon "
                      "writes as it, for the pointer terms (`scream` named `screamed`; `pointer_named_words`).")
    offsets_note += keys_note + coverage_note + shift_note + relative_note + copy_note
    if not structure or structure.get("track") != "with input structure":
        return f"\n\nTrack: without input structure.{offsets_note}" if offsets_note else ""
    unparsed = ", ".join(f"{n} in {split}" for split, n in structure.get("unparsed_inputs", {}).items())
    pointer = (" The decoder's cross-attention also read the tree: a learned term per relation between each "
               "source word and the one the output last named by its position (`cross_attention_structure: "
               "pointer`)." if structure.get("cross_attention_structure") == "pointer" else "")
    if pointer and structure.get("pointer_sides"):
        pointer += (" Its tree labels also said on which side of that word a source word stands "
                    "(`pointer_sides`).")
    if pointer and structure.get("pointer_argument_mask"):
        pointer += (" While writing a conjunct's second argument, every cross-attention head saw only the children "
                    "and siblings of its first (`pointer_argument_mask`).")
    classes = (" Every encoder token's embedding also had a learned vector of its word class in our parser's "
               "lexicon: function word, name, noun, verb or other (`encoder_word_classes`)."
               if structure.get("encoder_word_classes") else "")
    if structure.get("encoder_functions"):
        classes += (" Every encoder word's embedding also had a learned vector of its syntactic function in that "
                    "parse: the noun of a subject, of a fronted object, of an object, of the first of two objects, "
                    "of a prepositional phrase, a verb, or other (`encoder_functions`; functions, not roles).")
    return (f"\n\nTrack: **with input structure**. The encoder read the parse tree of every input from hf_recogs' "
            f"own parser (`{structure.get('parser')}`, which reads the sentence alone, never the gold output): "
            f"`{structure.get('encoder_structure')}` attention on {structure.get('structure_heads')} of "
            f"{structure.get('of_heads')} heads in encoder layers {structure.get('structure_layers')}, over the "
            f"{structure.get('tree')}.{classes}{pointer}{offsets_note} Inputs without a parse: "
            f"{unparsed or 'not counted'}. To decode, "
            "lay the inputs out with `hf_recogs.train.data.SourceLayout.for_model(model, tokenizer).batch(sentences)` "
            "(it adds the `relation_ids`, and the `function_ids` of a model that reads them) and pass them to "
            "`model.generate`.")


# The card's reproduce command names the seed itself and leaves out what only says how one machine ran it.
RUN_LOCAL_OPTIONS = MACHINE_LOCAL_OPTIONS | {"seeds"}


def reproduce_command(results: dict[str, Any]) -> str:
    """The command a reader copies to train this seed again, from the command ``train.py`` recorded: the config
    from the repository's ``configs/`` (runs may have used a copy of the code elsewhere), the options that change
    the experiment, and ``--seeds <seed>``; paths and thread counts of the machine that ran it are dropped."""
    if not results.get("command"):
        return "accelerate launch train.py configs/<name>.yaml"
    config, options = _recorded_arguments(results)
    kept: list[str] = []
    if config:
        kept.append(f"configs/{config.name}" if config.parent.name == "configs" else str(config))
    kept += ["--seeds", str(results["seed"])]
    for name, _, written in options:
        if name not in RUN_LOCAL_OPTIONS:
            kept += written
    return "accelerate launch train.py " + " ".join(shlex.quote(w) for w in kept)


def _recorded_arguments(results: dict[str, Any]) -> tuple[Path | None, list[tuple[str, list[str], list[str]]]]:
    """The config and the options of the recorded ``train.py`` command: each option as (name, values, the words
    as written), from ``--name v [v ...]``, ``--name=v`` or a ``name=v`` override."""
    words = shlex.split(results.get("command") or "")
    args = words[words.index("train.py") + 1:] if "train.py" in words else words
    config = Path(args.pop(0)) if args and args[0].endswith((".yaml", ".yml")) else None
    options = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word.startswith("--"):
            name, inline, value = word[2:].partition("=")
            values, written = ([value] if inline else []), [word]
            while not inline and i < len(args) and not args[i].startswith("--") and not _is_override(args[i]):
                values.append(args[i])
                written.append(args[i])
                i += 1
        else:
            name, _, value = word.partition("=")
            values, written = [value], [word]
        options.append((name.strip(), values, written))
    return config, options


def _accelerator(results: dict[str, Any]) -> str | None:
    """The GPU a run trained on, and its matmul precision where that was not plain fp32; None for a CPU run."""
    gpu = (results.get("environment") or {}).get("cuda")
    tf32 = (results.get("hyperparameters") or {}).get("tf32")
    if tf32 is None:  # recorded from the command before results.json kept tf32
        given = [values for name, values, _ in _recorded_arguments(results)[1] if name == "tf32"]
        tf32 = bool(given) and " ".join(given[-1]).lower() in ("true", "1", "yes")
    return f"{gpu}, TF32 matmuls" if gpu and tf32 else gpu


def _is_override(word: str) -> bool:
    """train.py's own rule for a key=value override (``parse_args`` of the training options), wherever it
    stands."""
    return "=" in word and not word.startswith("-")


def _with_group_display(results: dict[str, Any]) -> dict[str, Any]:
    """``results`` whose split summaries all say how their groups display: summaries written before that was
    recorded take it from the dataset's registered config (a re-rendered card keeps the groups' explanation)."""
    missing = [name for name, s in results["splits"].items() if s.get("groups") and "group_display" not in s]
    if not missing:
        return results
    from ..registry import get_config

    try:
        groups = get_config(results["dataset"]).category_groups
    except ValueError:  # a dataset this version does not register
        return results
    if groups is None:
        return results
    splits = {name: ({**s, "group_display": groups.display()} if name in missing else s)
              for name, s in results["splits"].items()}
    return {**results, "splits": splits}


def _eval_results(results: dict[str, Any]) -> list:
    """The ``model-index`` entries: every split's SEM, exact match and SyGNS headline level, then the headline
    split's groups and categories under its primary metric."""
    from huggingface_hub import EvalResult

    dataset = results["dataset"]
    classifier = results.get("metric") == "classification"
    task = ("text-classification", "Compositional classification") if classifier else (
        "text2text-generation", "Semantic parsing")
    labels = {"sem_match": "Semantic exact match", "exact_match": "Exact match", "roc_auc": "ROC AUC",
              "accuracy": "Accuracy", "f1": "F1"}
    entries = []

    def add(split, scores, metrics, part=""):
        for metric in metrics:
            if scores.get(metric) is None:
                continue
            label = labels.get(metric, f"SyGNS {SYGNS_LABELS.get(metric, metric)}")
            value = scores[metric] if classifier else 100 * scores[metric]  # AUC reads as a fraction
            entries.append(EvalResult(
                task_type=task[0], task_name=task[1],
                dataset_type="hf_recogs", dataset_name=f"hf_recogs {dataset}", dataset_config=dataset,
                dataset_split=split, metric_type=metric, metric_name=f"{label} ({part})" if part else label,
                metric_value=round(value, 4 if classifier else 2),
            ))

    for split, s in results["splits"].items():
        add(split, s, CLASSIFICATION_KEYS if classifier else ("sem_match", "exact_match", *sygns_levels(s)[:1]))
    split = headline_split(results["splits"])
    if split is not None:
        s = results["splits"][split]
        for group, scores in s.get("groups", {}).items():
            add(split, scores, (s["primary"],), group)
        if len(s.get("per_category", {})) > 1:
            for category, scores in s["per_category"].items():
                add(split, scores, (s["primary"],), category)
    return entries


def render_model_card(results: dict[str, Any], repo_id: str | None = None, template_path: Path | None = None,
                      example: str | None = None, example_candidate: str | None = None):
    """A ``huggingface_hub.ModelCard`` for one trained seed, with ``model-index`` results per split; ``example``
    is the input of its usage snippet (default: a COGS sentence)."""
    from huggingface_hub import ModelCard, ModelCardData

    results = _with_group_display(results)
    dataset = results["dataset"]
    eval_results = _eval_results(results)
    name = repo_id or f"{dataset}-{results['arch']}-seed{results['seed']}"
    card_data = ModelCardData(
        language="en", license=card_license(dataset)[0], library_name="transformers",
        tags=["hf_recogs", "compositional-generalization", "semantic-parsing", dataset],
        model_name=name, eval_results=eval_results or None,
        pipeline_tag="text-classification" if results.get("metric") == "classification" else "text2text-generation",
    )
    template = Path(template_path) if template_path else TEMPLATE
    return ModelCard.from_template(card_data, template_path=str(template), model_name=name,
                                   repo_id=repo_id or "<user>/<repo>",
                                   **_template_fields(results, example, example_candidate))


def _decode_cap_note(results: dict[str, Any]) -> str:
    """A line for runs whose greedy decoding stopped each row at its own cap (``decode_cap_per_source_word``):
    how many rows it cut, and whether any verdict can be the cap's."""
    caps = {split: s["decode_cap"] for split, s in results["splits"].items() if s.get("decode_cap")}
    if not caps:
        return ""
    first = next(iter(caps.values()))
    cut = ", ".join(f"{cap['rows_cut']} in {split}" for split, cap in caps.items())
    over = sum(cap["gold_over_cap"] for cap in caps.values())
    verdicts = ("every gold form fits in its row's cap, so a cut row, which had not ended there, was wrong either "
                "way" if not over else f"{over} gold forms were longer than their row's cap: a cut row among those "
                "may have been scored wrong for the cut alone")
    return (f"\n\nDecoding stopped each row at {first['per_source_word']:g} tokens per source word plus "
            f"{first['margin']} (`decode_cap_per_source_word`), so that a row that does not end does not keep its "
            f"batch decoding to the length limit; it cut {cut}; {verdicts}.")


def form_rules_version(results: dict[str, Any]) -> int | None:
    """The version of the form rules (``hf_recogs.form_rules.RULES_VERSION``) a run decoded under; None for a
    run decoded without them. Runs made before versions were recorded decoded under version 1."""
    records = [s["constrained_decoding"] for s in results["splits"].values() if s.get("constrained_decoding")]
    return min(r.get("rules_version", 1) for r in records) if records else None


def _constrained_note(results: dict[str, Any]) -> str:
    """A line for runs decoded under the rules of ReCOGS_pos forms (``constrained_decoding``)."""
    dead = {split: s["constrained_decoding"]["rows_at_dead_end"] for split, s in results["splits"].items()
            if s.get("constrained_decoding")}
    if not dead:
        return ""
    ends = ", ".join(f"{n} in {split}" for split, n in dead.items())
    rules = ("arity, positions, heads, dependents and ending, conjuncts in any order (`constrained_any_order`)"
             if results.get("hyperparameters", {}).get("constrained_any_order")
             else "arity, positions, conjunct order, heads, dependents and ending")
    older = OLDER_VERSIONS.get(form_rules_version(results))
    rules += f"; {older}" if older else ""
    return ("\n\nDecoding kept the rules of ReCOGS_pos logical forms (`constrained_decoding`: " + rules + "; "
            "`hf_recogs/form_rules.py`, checked on every training target first): at each step the model's best "
            "word among those that keep its output the beginning of a form within the rules. Rows left with no "
            f"such word, which then ended: {ends}.")


def evaluated_model_name(results: dict[str, Any]) -> str:
    """The model an evaluation-only run scored, from the repository's ``results/`` on where it lies there."""
    model = str(results.get("evaluated_model") or "")
    return model[model.index("results/"):] if "results/" in model else model


def _evaluation_summary(results: dict[str, Any]) -> str:
    """The first sentence of an evaluation-only card: which saved model it scored."""
    model = evaluated_model_name(results)
    return (f"An evaluation, with no new training, of the saved `{results['arch']}` model `{model}` (seed "
            f"{results['seed']}), trained from scratch on the hf_recogs `{results['dataset']}` config.")


def _template_fields(results: dict[str, Any], example: str | None,
                     example_candidate: str | None = None) -> dict[str, Any]:
    """What ``model_cards/template.md`` reads besides the model's name and repository."""
    from ..citations import CITATIONS

    classifier = results.get("metric") == "classification"
    kind = "classifier of (input, candidate) pairs" if classifier else "sequence-to-sequence model"
    dataset = results["dataset"]
    keys = [k for k in _citation_keys(dataset) if k in CITATIONS]
    hp = results.get("hyperparameters", {})
    hp_table = "\n".join(["| hyper-parameter | value |", "|---|---|"] + [
        f"| {k} | `{json.dumps(v) if isinstance(v, (dict, list)) else v}` |" for k, v in hp.items()])
    environment = results.get("environment") or {}
    evaluation_only = not results.get("train") and bool(results.get("evaluated_model"))
    return dict(
        dataset=dataset,
        arch=results["arch"],
        seed=results["seed"],
        metric=results["metric"],
        num_parameters=f"{results.get('num_parameters', 0):,}",
        vocab_size=results.get("vocab_size"),
        train=results.get("train", {}),
        hyperparameters_table=hp_table,
        results_table=_results_table(results),
        groups_explanation=" ".join(dict.fromkeys(
            e for e in (group_display(sp)["explanation"] for sp in results["splits"].values()) if e)),
        summary=((_evaluation_summary(results) if evaluation_only else
                  f"A `{results['arch']}` {kind} trained from scratch on the hf_recogs `{dataset}` config (seed "
                  f"{results['seed']}).") + _partial_run_warning(results) + _structure_track_note(results)
                 + _target_order_note(results) + _decode_cap_note(results) + _constrained_note(results)
                 + card_license(dataset)[1]),
        evaluation_only=evaluation_only,
        constrained=bool(hp.get("constrained_decoding")),
        any_order=bool(hp.get("constrained_any_order")),
        classifier=classifier,
        structure=results["arch"] == "structure_transformer",  # its inputs carry their trees
        reproduce=reproduce_command(results),
        # a GPU run's wall time is GPU time: its CPU thread count says nothing of its cost
        accelerator=_accelerator(results),
        commit=environment.get("git_commit"),
        commit_dirty=environment.get("git_dirty"),
        citations=("\n\n".join(CITATIONS[k] for k in keys) if keys else "") or "see hf_recogs/citations.py",
        has_plot=True,
        example=json.dumps(example if isinstance(example, str) and example else "A cat smiled ."),
        example_candidate=json.dumps(example_candidate or ""),
    )


def example_input(folder: Path, field: str = "input") -> str | None:
    """The first input (or another ``field``, e.g. a classifier's ``candidate``) of the first predictions file
    in ``folder`` (plain or gzipped): the usage example of the model card, a row of the model's own dataset."""
    import gzip

    for path in sorted(Path(folder).glob("predictions_*.jsonl*")):
        with (gzip.open if path.suffix == ".gz" else open)(path, "rt", encoding="utf-8") as f:
            line = f.readline()
        if line.strip():
            return json.loads(line).get(field)
    return None


def write_model_card(folder: Path, results: dict[str, Any], repo_id: str | None = None) -> Path:
    """Render the card of the seed in ``folder`` (its usage example from its own predictions) as README.md."""
    card = render_model_card(results, repo_id=repo_id, example=example_input(folder),
                             example_candidate=example_input(folder, "candidate"))
    path = Path(folder) / "README.md"
    card.save(str(path))
    return path
