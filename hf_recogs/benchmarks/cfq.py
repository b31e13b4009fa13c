"""CFQ (Keysers et al., ICLR 2020): question → SPARQL query, from two sources (docs/DATASETS.md §8).

``cfq_mcd1`` reads CFQ's MCD1 split (maximum compound divergence) from a copy that the LEAR repository
(``thousfeet/LEAR``, ``CFQ_experiment/cfq_data.zip``) keeps, pinned by commit and checksum like every upstream
file; it is in the offline mirror. The zip holds one question per line in ``data/mcd1/<split>/<split>_encode.txt``
and the matching query in ``<split>_decode.txt``; nothing else of it is used. Splits: ``train`` 95,743,
``validation`` (upstream ``dev``) 11,968, ``test`` 11,968.

The ``cfq_release_*`` configs read the official CFQ release, the tarball ``cfq.tar.gz`` (267,599,061 bytes,
pinned by SHA-256 in ``sources.RELEASE_FILES``), downloaded on first use: its ``cfq/dataset.json`` (every
item, about 4 GB of JSON, decoded one item at a time) and a split file of item indices (``trainIdxs``,
``devIdxs``, ``testIdxs``): CFQ's own ``cfq/splits/{mcd1,mcd2,mcd3,random_split}.json``, or the 50/25/25
splits of the structure-annotation paper (Kim et al. 2021), pinned in ``dalgu90/compositionality-classification``.
Rows come in the split file's index order and also carry ``rule_tree``, the question's grammar-rule derivation
(:func:`grammar_tree`), from which ``hf_recogs.structure.cfq.question_tree`` builds the question tree.

Both sources are in CFQ's standard preprocessing (:func:`preprocess_question`, :func:`preprocess_query`):
punctuation split off the question, entities anonymised as ``M0`` … ``M9``, ``count ( * )`` spelt out, the
``ns:`` prefix dropped at token starts, Freebase ids written ``m_…``. Rows: ``input`` = the question,
``output`` = the query, ``category`` = the query type, which is also the question type: ``yes_no``
(``SELECT count ( * ) WHERE …``, questions opening with Did / Was / Were) or ``wh`` (``SELECT DISTINCT ?x0
WHERE …``, questions opening with What / Which / Who). Scored by exact match of the query string, CFQ's own
metric.

Licence: CFQ's README says CC BY 4.0, the metadata block of its dataset says CC BY-SA 3.0. We keep both in the
notes and treat the data as share-alike (``CC BY-SA 3.0``), so the Hub export keeps it out of the main
repository.
"""

from __future__ import annotations

import itertools
import json
import string
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import IO, Any

from ..dataset_config import DatasetConfig, Row
from ..sources import (
    RELEASE_FILES,
    SourceError,
    UpstreamFile,
    fetch_bytes,
    fetch_path,
    open_zip_member,
    pinned,
)

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


# ---- the official CFQ release ----------------------------------------------------------------------------

QUESTION_FIELD = "questionPatternModEntities"  # the question with entities anonymised, as CFQ's tools read it
QUERY_FIELD = "sparqlPatternModEntities"  # the matching SPARQL query
RULE_TREE_FIELD = "ruleTree"  # the derivation: {"ruleId": {"type", "stringValue"}, "subTree": [...]}
GRAMMAR_RULE = "GRAMMAR_RULE"  # the ruleId type of the question grammar's rules
RULE_ID_SUFFIX = 12  # a grammar rule string is "LHS=RHS" then "_" and an 11-character identifier

RELEASE_DATASET = "cfq/dataset.json"
RELEASE_SPLIT_FILES = {
    "mcd1": "cfq/splits/mcd1.json",
    "mcd2": "cfq/splits/mcd2.json",
    "mcd3": "cfq/splits/mcd3.json",
    "random": "cfq/splits/random_split.json",
}
KIM2021_SPLIT_FILES = {"mcd": "scripts/cfq_splits/mcd.json", "random": "scripts/cfq_splits/random.json"}
INDEX_KEYS = {"train": "trainIdxs", "validation": "devIdxs", "test": "testIdxs"}

_PUNCTUATION_APART = str.maketrans({c: f" {c} " for c in string.punctuation})


def release_file() -> UpstreamFile:
    """The pinned release tarball (``sources.RELEASE_FILES["cfq"]``)."""
    return RELEASE_FILES["cfq"]


def kim2021_split_file(name: str) -> UpstreamFile:
    """The structure-annotation paper's split file ``mcd`` or ``random`` (indices into the release)."""
    return pinned("cfq_kim2021_splits", KIM2021_SPLIT_FILES[name])


def preprocess_question(question: str) -> str:
    """CFQ's standard question preprocessing: every ASCII punctuation character a token of its own
    (``M1's`` → ``M1 ' s``), tokens separated by single spaces."""
    return " ".join(question.translate(_PUNCTUATION_APART).split())


def preprocess_query(query: str) -> str:
    """CFQ's standard query preprocessing: ``count(*)`` → ``count ( * )``; in each whitespace token a leading
    ``ns:`` is dropped, then a leading ``m.`` is written ``m_``; tokens separated by single spaces."""
    tokens = []
    for token in query.replace("count(*)", "count ( * )").split():
        token = token.removeprefix("ns:")
        if token.startswith("m."):
            token = "m_" + token[2:]
        tokens.append(token)
    return " ".join(tokens)


def _rule_string(rule_id: dict, where: str) -> str:
    value = rule_id["stringValue"]
    rule, suffix = value[:-RULE_ID_SUFFIX], value[-RULE_ID_SUFFIX:]
    if "=" not in rule or suffix[0] != "_" or "_" in suffix[1:]:
        raise SourceError(f"hf_recogs: {where}: grammar rule {value!r} is not 'LHS=RHS' followed by a "
                          f"{RULE_ID_SUFFIX}-character '_…' identifier")
    return rule


def _grammar_nodes(node: dict, where: str) -> list[list]:
    children = [tree for sub in node.get("subTree", ()) for tree in _grammar_nodes(sub, where)]
    if node["ruleId"]["type"] == GRAMMAR_RULE:
        return [[_rule_string(node["ruleId"], where), *children]]
    return children  # a rule of another kind: its grammar-rule descendants take its place


def grammar_tree(rule_tree: dict, where: str = "ruleTree") -> list:
    """The question's grammar-rule derivation inside a release item's ``ruleTree``: nested lists ``[rule,
    child, …]`` of its GRAMMAR_RULE nodes in order, each rule ``LHS=RHS`` without its identifier. Nodes of
    other kinds are left out and their grammar-rule descendants take their place; there must be one root."""
    try:
        roots = _grammar_nodes(rule_tree, where)
    except (KeyError, TypeError, AttributeError, IndexError) as err:
        raise SourceError(f"hf_recogs: {where} is not a CFQ rule tree ({type(err).__name__}: {err})") from None
    if len(roots) != 1:
        raise SourceError(f"hf_recogs: {where} has {len(roots)} top grammar rules, expected one")
    return roots[0]


@dataclass(frozen=True, slots=True)
class ReleaseItem:
    """One item of the release, preprocessed; ``rule_tree`` is :func:`grammar_tree` as compact JSON ("" for
    an item without a ``ruleTree``, like the ten example items CFQ publishes)."""

    question: str
    query: str
    rule_tree: str


def release_item(record: Any, index: int, where: str = RELEASE_DATASET) -> ReleaseItem:
    """The row material of item ``index`` of the release's ``dataset.json``."""
    label = f"{where} item {index}"
    texts = (record.get(QUESTION_FIELD), record.get(QUERY_FIELD)) if isinstance(record, dict) else (None, None)
    if not all(isinstance(text, str) for text in texts):
        raise SourceError(f"hf_recogs: {label} has no {QUESTION_FIELD} and {QUERY_FIELD} strings")
    tree = record.get(RULE_TREE_FIELD)
    rule_tree = "" if tree is None else json.dumps(grammar_tree(tree, f"{label} {RULE_TREE_FIELD}"),
                                                   ensure_ascii=False, separators=(",", ":"))
    return ReleaseItem(preprocess_question(record[QUESTION_FIELD]), preprocess_query(record[QUERY_FIELD]), rule_tree)


def json_array_items(stream: IO[bytes], where: str, buf_size: int = 1 << 20) -> Iterator[Any]:
    """The elements of the JSON array in a binary stream, decoded one at a time by ijson (the release's
    dataset.json is about 4 GB); :class:`SourceError` for anything but an array."""
    import ijson

    events = ijson.parse(stream, buf_size=buf_size, use_float=True)
    try:
        first = next(events, None)
        if first is None or first[1] != "start_array":
            raise SourceError(f"hf_recogs: {where} is not a JSON array of items: it does not start with '['")
        yield from ijson.items(itertools.chain([first], events), "item")
    except ijson.JSONError as err:
        raise SourceError(f"hf_recogs: {where} is not a JSON array of items: {err}") from None


def _decode_json(data: bytes, where: str) -> Any:
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise SourceError(f"hf_recogs: {where} is not JSON ({err})") from None


@dataclass(frozen=True)
class ReleaseContents:
    """What the config readers use of a release tarball: every item, and the split files it holds."""

    items: tuple[ReleaseItem, ...]
    split_files: dict[str, Any]  # member name → the decoded split file (those of RELEASE_SPLIT_FILES found)


def _read_items(stream: IO[bytes], where: str) -> tuple[ReleaseItem, ...]:
    records = json_array_items(stream, where)
    return tuple(release_item(record, index, where) for index, record in enumerate(records))


def _read_tarball(path: Path, file: UpstreamFile) -> ReleaseContents:
    items, split_files = None, {}
    wanted = set(RELEASE_SPLIT_FILES.values())
    with tarfile.open(path, mode="r|gz") as archive:
        for member in archive:
            name = member.name.removeprefix("./")
            if not member.isfile() or (name != RELEASE_DATASET and name not in wanted):
                continue
            stream = archive.extractfile(member)
            if name == RELEASE_DATASET:
                items = _read_items(stream, f"{file}:{name}")
            else:
                split_files[name] = _decode_json(stream.read(), f"{file}:{name}")
    if items is None:
        raise SourceError(f"hf_recogs: {file} has no member {RELEASE_DATASET}; it is not the CFQ release")
    return ReleaseContents(items, split_files)


@lru_cache(maxsize=1)
def read_release(file: UpstreamFile) -> ReleaseContents:
    """Every item of the release's ``dataset.json``, preprocessed, and its split files, in one streaming
    pass over the verified tarball (the last release read stays cached)."""
    path = fetch_path(file)
    try:
        return _read_tarball(path, file)
    except (tarfile.TarError, OSError, EOFError, zlib.error, UnicodeDecodeError) as err:
        raise SourceError(f"hf_recogs: {path} ({file}) is not a readable tar.gz archive ({err})") from None


def split_indices(split_file: Any, split: str, where: str, n_items: int) -> list[int]:
    """The item indices of ``split`` in a CFQ split file (``trainIdxs``, ``devIdxs``, ``testIdxs``), each
    checked to be an item of a release with ``n_items`` items."""
    key = INDEX_KEYS[split]
    indices = split_file.get(key) if isinstance(split_file, dict) else None
    if not isinstance(indices, list):
        raise SourceError(f"hf_recogs: {where} has no index list {key!r}; a CFQ split file maps "
                          f"{', '.join(INDEX_KEYS.values())} to item indices")
    for index in indices:
        if type(index) is not int or not 0 <= index < n_items:
            raise SourceError(f"hf_recogs: {where} lists item {index!r} in {key}, but the release has items 0 to "
                              f"{n_items - 1}; the split file does not belong to this dataset.json")
    return indices


def release_rows(contents: ReleaseContents, split_file: Any, where: str, split: str) -> Iterator[Row]:
    """The rows of ``split``: the release items that the split file lists, in its order."""
    for index in split_indices(split_file, split, where, len(contents.items)):
        item = contents.items[index]
        yield {"input": item.question, "output": item.query, "category": query_category(item.query),
               "rule_tree": item.rule_tree}


@dataclass(frozen=True)
class ReleaseSplit:
    """Where a release config's split file is: a member of the tarball (CFQ's own splits, ``member``) or a
    pinned file of the structure-annotation paper's repository (``kim2021``: ``mcd`` or ``random``)."""

    member: str | None = None
    kim2021: str | None = None

    def files(self) -> list[UpstreamFile]:
        return [release_file()] + ([kim2021_split_file(self.kim2021)] if self.kim2021 else [])

    def load(self, contents: ReleaseContents) -> tuple[Any, str]:
        """The decoded split file and where it came from (for messages)."""
        if self.kim2021:
            file = kim2021_split_file(self.kim2021)
            return _decode_json(fetch_bytes(file), str(file)), str(file)
        where = f"{release_file()}:{self.member}"
        if self.member not in contents.split_files:
            raise SourceError(f"hf_recogs: {release_file()} has no member {self.member}; it is not the CFQ release")
        return contents.split_files[self.member], where

    def rows(self, split: str, **params) -> Iterator[Row]:
        contents = read_release(release_file())
        split_file, where = self.load(contents)
        yield from release_rows(contents, split_file, where, split)

    def sources(self, split: str, **params) -> list[UpstreamFile]:
        return self.files()


# ---- the configs -------------------------------------------------------------------------------------------

_DECLARED: list[DatasetConfig] = []

_LICENCE_NOTE = (
    "Licence: CFQ's README says CC BY 4.0, the metadata of its dataset says CC BY-SA 3.0; hf_recogs treats "
    "the data as share-alike (CC BY-SA 3.0) and exports it apart from the MIT/BSD configs."
)
_NOTES = (
    f"{_LICENCE_NOTE} The rows come from the MCD1 copy in thousfeet/LEAR (CFQ_experiment/cfq_data.zip, a "
    "repository without a licence of its own); category is the query type: yes_no (SELECT count) or wh "
    "(SELECT DISTINCT)."
)
_RELEASE_NOTES = (
    f"{_LICENCE_NOTE} The rows come from the official CFQ release (cfq.tar.gz, 267,599,061 bytes, downloaded on "
    "first use and checked by SHA-256; about 4 GB of JSON inside, read in one pass); category is the query "
    "type: yes_no or wh; rule_tree is the question's grammar-rule derivation as JSON nested lists "
    "[\"LHS=RHS\", child, ...] (hf_recogs.structure.cfq.question_tree turns it into the question tree)."
)


def _declare(name: str, description: str, **fields: Any) -> None:
    """Declare one CFQ config (three splits, exact-match scoring); ``fields`` adds to or overrides the
    MCD1-copy defaults."""
    config = {"family": FAMILY, "license": LICENSE, "citations": CITATIONS, "splits": ("train", "validation", "test"),
              "generate": _generate, "sources": _sources, "metric": "exact", "notes": _NOTES, **fields}
    _DECLARED.append(DatasetConfig(name=name, description=description, **config))


def _declare_release(name: str, description: str, source: ReleaseSplit, notes: str = _RELEASE_NOTES,
                     citations: tuple[str, ...] = CITATIONS) -> None:
    _declare(name, description, generate=source.rows, sources=source.sources, notes=notes, citations=citations,
             extra_features={"rule_tree": "string"})


_declare(
    "cfq_mcd1",
    "CFQ (Freebase questions to SPARQL) maximum-compound-divergence split MCD1, standard preprocessing: "
    "train 95,743 / validation (upstream dev) 11,968 / test 11,968; category yes_no or wh.",
)
for _number in (1, 2, 3):
    _declare_release(
        f"cfq_release_mcd{_number}",
        f"CFQ's maximum-compound-divergence split MCD{_number} read from the official CFQ release (downloaded, "
        "267 MB), standard preprocessing, with each question's rule tree; category yes_no or wh.",
        ReleaseSplit(member=RELEASE_SPLIT_FILES[f"mcd{_number}"]),
    )
_declare_release(
    "cfq_release_random",
    "CFQ's random split read from the official CFQ release (downloaded, 267 MB), standard preprocessing, with "
    "each question's rule tree; category yes_no or wh.",
    ReleaseSplit(member=RELEASE_SPLIT_FILES["random"]),
)
_KIM2021_NOTES = (
    f"{_RELEASE_NOTES} The split is the structure-annotation paper's own (Kim et al. 2021: 80 % of CFQ cut "
    "50/25/25), from its index file in dalgu90/compositionality-classification (Apache 2.0)."
)
for _kind, _how in (("mcd", "by maximum compound divergence"), ("random", "at random")):
    _declare_release(
        f"cfq_release_kim2021_{_kind}",
        f"CFQ cut 50/25/25 {_how} as in the structure-annotation paper (Kim et al. 2021), read from the "
        "official CFQ release (downloaded, 267 MB), standard preprocessing, with each question's rule tree: "
        "train 95,743 / validation 47,872 / test 47,871; category yes_no or wh.",
        ReleaseSplit(kim2021=_kind),
        notes=_KIM2021_NOTES,
        citations=(*CITATIONS, "kim2021structure"),
    )

CONFIGS: tuple[DatasetConfig, ...] = tuple(_DECLARED)  # collected by hf_recogs.registry
