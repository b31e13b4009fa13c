"""SyGNS meanings scored at the levels of the SyGNS paper, as an `evaluate` metric.

A thin wrapper: the logic lives in ``hf_recogs.sygns_eval`` and ``hf_recogs.scoring`` (evaluate copies only
this file into its module cache, so the package is imported as an ordinary library). See README.md for the
metric card.
"""

import datasets
import evaluate

from hf_recogs.benchmarks.sygns import CATEGORY_GROUPS
from hf_recogs.citations import CITATIONS
from hf_recogs.scoring import score_rows, summarize
from hf_recogs.sygns_eval import FORMS, LEVELS, detect_form

_DESCRIPTION = (
    "SyGNS evaluation: exact match, FOL/VF entailment both ways (z3), polarity of content words, and exact "
    "COUNTER-style DRS clause matching."
)
_KWARGS_DESCRIPTION = """
Args:
    predictions (sequence): predicted meanings; anything that is not a well-formed string of the form is
        scored as wrong (never an exception).
    references (sequence of str): gold meanings, all of one form.
    form (str, compute kwarg): "fol", "drs", "vf", or "auto" (default: read from the first reference).
    categories (sequence of str, optional, compute kwarg): a category per item, for per-category scores.
Returns:
    exact_match (float), n (int), and for fol/vf: entailment_g_to_p, entailment_p_to_g, equivalence,
    undecided, malformed, polarity_{up,down}_{precision,recall,f1}; for drs: counter_precision,
    counter_recall, counter_f1, counter_mean_f1, counter_unproven, malformed. With categories,
    per_category: {category: the same fields}. All scores in [0, 1].
Examples:
    >>> m = evaluate.load("sygns_match")
    >>> out = m.compute(predictions=["all x2.(cat(x2) -> -dance(x2))"],
    ...                 references=["all x1.((cat(x1) & small(x1)) -> -dance(x1))"], form="fol")
    >>> out["entailment_p_to_g"], out["entailment_g_to_p"], out["exact_match"]
    (1.0, 0.0, 0.0)
"""


def _as_list(name, values):
    """Any sequence (list, tuple, datasets Column, numpy array, generator) as a list of Python objects."""
    if values is None or isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise ValueError(f"sygns_match: {name} must be a sequence, got {type(values).__name__}")
    return [v.item() if hasattr(v, "item") and not isinstance(v, str) else v for v in values]


def _strings(name, values, n=None):
    values = _as_list(name, values)
    bad = next((i for i, v in enumerate(values) if not isinstance(v, str)), None)
    if bad is not None:
        raise ValueError(f"sygns_match: {name}[{bad}] is {type(values[bad]).__name__}, not str")
    if n is not None and len(values) != n:
        raise ValueError(f"sygns_match: {len(values)} {name} for {n} predictions; lengths must match")
    return values


# What a prediction that is not a string is stored as (evaluate type-checks the first item of a batch, so
# None there would raise); no model writes a NUL, and _compute reads it back as None, scored as malformed
# ("not_a_string") at every index.
_NOT_A_STRING = "\x00sygns_match: not a string\x00"


def _predictions(values):
    return [_prediction(v) for v in _as_list("predictions", values)]


def _prediction(value):
    return value if isinstance(value, str) and value != _NOT_A_STRING else _NOT_A_STRING


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SygnsMatch(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION, citation=CITATIONS["sygns"],
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")}),
        )

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """evaluate's add_batch, after checking the references (predictions of any type are kept)."""
        predictions = _predictions(predictions)
        references = _strings("references", references, len(predictions))
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """evaluate's add, after checking the reference."""
        _strings("reference", [reference])
        return super().add(prediction=_prediction(prediction), reference=reference, **kwargs)

    def compute(self, *, predictions=None, references=None, categories=None, form="auto", **kwargs):
        """Validate the inputs (one-line ValueErrors), then evaluate's compute; form and categories are
        kwargs."""
        if form != "auto" and form not in FORMS:
            raise ValueError(f"sygns_match: form must be one of {', '.join(FORMS)} or 'auto', not {form!r}")
        if predictions is not None or references is not None:
            predictions = _predictions(predictions)
            references = _strings("references", references, len(predictions))
            if categories is not None:
                categories = _strings("categories", categories, len(predictions))
        return super().compute(predictions=predictions, references=references, categories=categories,
                               form=form, **kwargs)

    def _compute(self, predictions, references, categories=None, form="auto"):
        if categories is not None and len(categories) != len(predictions):
            raise ValueError(f"sygns_match: {len(categories)} categories for {len(predictions)} predictions")
        if form == "auto":
            form = detect_form(references[0]) if references else "fol"
        predictions = [None if p == _NOT_A_STRING else p for p in predictions]
        try:
            summary = summarize(score_rows(predictions, references, categories, "sygns", form), "sygns",
                                CATEGORY_GROUPS)
        except ValueError as err:
            raise ValueError(f"sygns_match: {err}") from None
        keys = ("exact_match", "n", *LEVELS[form])

        def pick(scores):
            return {k: scores[k] for k in keys if k in scores}

        out = pick(summary)
        if not references:
            out["exact_match"] = 0.0
        if categories is not None:
            out["per_category"] = {c: pick(v) for c, v in summary["per_category"].items()}
        return out
