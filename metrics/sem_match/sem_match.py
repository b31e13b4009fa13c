"""Semantic Exact Match (SEM) for COGS / ReCOGS / SLOG logical forms, as an `evaluate` metric.

A thin wrapper: the logic lives in ``hf_recogs.logical_forms`` (evaluate copies only this file into its
module cache, so the package is imported as an ordinary library). See README.md for the metric card.
"""

import datasets
import evaluate

from hf_recogs.citations import CITATIONS
from hf_recogs.scoring import score_rows, summarize

_DESCRIPTION = "SEM: a bijection of variables makes the two multisets of atoms equal (order- and renaming-invariant)."
_KWARGS_DESCRIPTION = """
Args:
    predictions (sequence of str: list, tuple, datasets Column, numpy array, ...): predicted logical forms.
    references (sequence of str): gold logical forms.
    categories (list of str, optional, compute kwarg): a category per item, for per-category means.
    fmt (str, optional, compute kwarg): "auto" (default), "cogs", "recogs" or "token_removal".
Returns:
    sem_match (float), exact_match (float, whitespace-normalised string EM), n (int), undecided (int: pairs
    whose search for a variable map ran out of its work budget; they count as not matching, see the card),
    and with categories per_category: {category: {"sem_match", "exact_match", "n"}}.
Examples:
    >>> m = evaluate.load("sem_match")
    >>> m.compute(predictions=["cat ( 7 ) AND run ( 2 ) AND agent ( 2 , 7 )"],
    ...           references=["cat ( 1 ) ; run ( 2 ) AND agent ( 2 , 1 )"])
    {'sem_match': 1.0, 'exact_match': 0.0, 'n': 1, 'undecided': 0}
"""


def _as_list(name, values):
    """Any sequence of strings (list, tuple, datasets Column, numpy array, pandas Series) as a list."""
    if values is None or isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise ValueError(f"sem_match: {name} must be a sequence of strings, got {type(values).__name__}")
    return [v.item() if hasattr(v, "item") and not isinstance(v, str) else v for v in values]


def _check(name, values, n=None):
    values = _as_list(name, values)
    bad = next((i for i, v in enumerate(values) if not isinstance(v, str)), None)
    if bad is not None:
        raise ValueError(f"sem_match: {name}[{bad}] is {type(values[bad]).__name__}, not str")
    if n is not None and len(values) != n:
        raise ValueError(f"sem_match: {len(values)} {name} for {n} predictions; lengths must match")
    return values


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SemMatch(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION, citation=CITATIONS["recogs"],
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")}),
        )

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """evaluate's add_batch, after checking types and lengths (evaluate checks only the first item)."""
        predictions = _check("predictions", predictions)
        references = _check("references", references, len(predictions))
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """evaluate's add, after checking types."""
        _check("prediction", [prediction])
        _check("reference", [reference])
        return super().add(prediction=prediction, reference=reference, **kwargs)

    def compute(self, *, predictions=None, references=None, categories=None, **kwargs):
        """Validate the inputs (one-line ValueErrors), then evaluate's compute; categories is a kwarg."""
        if predictions is not None or references is not None:
            predictions = _check("predictions", predictions)
            references = _check("references", references, len(predictions))
            if categories is not None:
                categories = _check("categories", categories, len(predictions))
        return super().compute(predictions=predictions, references=references, categories=categories, **kwargs)

    def _compute(self, predictions, references, categories=None, fmt="auto"):
        if categories is not None and len(categories) != len(predictions):
            raise ValueError(f"sem_match: {len(categories)} categories for {len(predictions)} predictions")
        records = score_rows(predictions, references, categories, "sem", fmt)
        summary = summarize(records, "sem")
        out = {"sem_match": summary["sem_match"] or 0.0, "exact_match": summary["exact_match"] or 0.0,
               "n": summary["n"], "undecided": summary.get("sem_undecided", 0)}
        if categories is not None:
            out["per_category"] = {c: {"sem_match": v["sem_match"], "exact_match": v["exact_match"], "n": v["n"]}
                                   for c, v in summary["per_category"].items()}
        return out
