"""CFQ (Keysers et al., ICLR 2020): question → SPARQL query, as the config ``cfq_mcd1``.

The data are CFQ's MCD1 split (maximum compound divergence) in the standard CFQ preprocessing: punctuation
split off the question, entities anonymised as ``M0`` … ``M9``, ``count ( * )`` spelt out, the ``ns:`` prefix
dropped at token starts, Freebase ids written ``m_…``. The full CFQ release (a 267 MB tarball with every split
and the questions' rule trees) is not pinned here; the MCD1 split is read from a copy that the LEAR repository
(``thousfeet/LEAR``, ``CFQ_experiment/cfq_data.zip``) keeps, pinned by commit and checksum like every upstream
file (docs/DATASETS.md §8). The zip holds one question per line in ``data/mcd1/<split>/<split>_encode.txt`` and
the matching query in ``<split>_decode.txt``; nothing else of it is used.

Splits: ``train`` 95,743, ``validation`` (upstream ``dev``) 11,968, ``test`` 11,968. Rows: ``input`` = the
question, ``output`` = the query, ``category`` = the query type, which is also the question type: ``yes_no``
(``SELECT count ( * ) WHERE …``, questions opening with Did / Was / Were) or ``wh`` (``SELECT DISTINCT ?x0
WHERE …``, questions opening with What / Which / Who). Scored by exact match of the query string, CFQ's own
metric.

Licence: CFQ's README says CC BY 4.0, the metadata block of its dataset says CC BY-SA 3.0. We keep both in the
notes and treat the data as share-alike (``CC BY-SA 3.0``), so the Hub export keeps it out of the main
repository.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

from ..dataset_config import DatasetConfig, Row
from ..sources import SourceError, UpstreamFile, open_zip_member, pinned

FAMILY = "cfq"
LICENSE = "CC BY-SA 3.0"
CITATIONS = ("cfq",)

ZIP = "CFQ_experiment/cfq_data.zip"
SPLIT_NAME = {"train": "train", "validation": "dev", "test": "test"}
SIZES = {"train": 95_743, "validation": 11_968, "test": 11_968}

CATEGORY_OF_HEADER = {"SELECT count ( * ) WHERE {": "yes_no", "SELECT DISTINCT ?x0 WHERE {": "wh"}


def zip_file() -> UpstreamFile:
    """The pinned zip (``sources.PINS["cfq_mcd1"]``)."""
    return pinned("cfq_mcd1", ZIP)


def members(split: str) -> tuple[str, str]:
    """The zip members of a split: (questions, queries)."""
    name = SPLIT_NAME[split]
    return f"data/mcd1/{name}/{name}_encode.txt", f"data/mcd1/{name}/{name}_decode.txt"


def _lines(member: str) -> list[str]:
    text = open_zip_member(zip_file(), member).decode("utf-8")
    if not text.endswith("\n"):
        raise SourceError(f"hf_recogs: {zip_file()} member {member} does not end with a newline; re-fetch the zip")
    return text.split("\n")[:-1]


def query_category(query: str) -> str:
    """``yes_no`` or ``wh`` from the query's header; SourceError for a query of neither kind."""
    for header, category in CATEGORY_OF_HEADER.items():
        if query.startswith(header + " "):
            return category
    raise SourceError(f"hf_recogs: CFQ query with an unknown header: {query[:60]!r}; the zip is not CFQ MCD1")


@lru_cache(maxsize=1)
def _pairs(split: str) -> tuple[tuple[str, str], ...]:
    """(question, query) pairs of a split in file order (the last split read stays cached)."""
    questions, queries = (_lines(m) for m in members(split))
    if len(questions) != len(queries):
        raise SourceError(
            f"hf_recogs: CFQ {split}: {len(questions)} questions but {len(queries)} queries; re-fetch the zip"
        )
    return tuple(zip(questions, queries))


def _generate(split: str, **params) -> Iterator[Row]:
    for question, query in _pairs(split):
        yield {"input": question, "output": query, "category": query_category(query)}


def _sources(split: str, **params) -> list[UpstreamFile]:
    return [zip_file()]


_DECLARED: list[DatasetConfig] = []

_NOTES = (
    "Licence: CFQ's README says CC BY 4.0, the metadata of its dataset says CC BY-SA 3.0; hf_recogs treats "
    "the data as share-alike (CC BY-SA 3.0) and exports it apart from the MIT/BSD configs. The rows come "
    "from the MCD1 copy in thousfeet/LEAR (CFQ_experiment/cfq_data.zip, a repository without a licence of "
    "its own); category is the query type: yes_no (SELECT count) or wh (SELECT DISTINCT)."
)


def _declare(name: str, description: str) -> None:
    """Declare one CFQ config (only MCD1 is reachable; MCD2/3 and the random split need the full release)."""
    _DECLARED.append(
        DatasetConfig(
            name=name,
            description=description,
            family=FAMILY,
            license=LICENSE,
            citations=CITATIONS,
            splits=("train", "validation", "test"),
            generate=_generate,
            sources=_sources,
            metric="exact",
            notes=_NOTES,
        )
    )


_declare(
    "cfq_mcd1",
    "CFQ (Freebase questions to SPARQL) maximum-compound-divergence split MCD1, standard preprocessing: "
    "train 95,743 / validation (upstream dev) 11,968 / test 11,968; category yes_no or wh.",
)

CONFIGS: tuple[DatasetConfig, ...] = tuple(_DECLARED)  # collected by hf_recogs.registry
