"""The ``cfq_release_*`` configs and the CFQ question tree, on a release-shaped tarball built here.

The real release (``cfq.tar.gz``, 267 MB) is not reachable from the test machines. The fixture tarball has the
release's layout (``cfq/dataset.json``, ``cfq/splits/<name>.json``) and holds CFQ's ten public example items
(questions and queries verbatim, from the mirror) with rule trees that we wrote by hand in the release's format:
their rule names form a small invented grammar, not CFQ's own. It is read through the same code as the real
tarball (mirror lookup, checksum, streaming reader, configs); only the pin differs: the tests point
``cfq.release_file`` at a pin of the fixture, and the real pin stays as it is.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from hf_recogs import sources
from hf_recogs.benchmarks import cfq
from hf_recogs.registry import get_config
from hf_recogs.sources import ChecksumMismatch, SourceError, SourceUnavailable, UpstreamFile
from hf_recogs.structure.cfq import question_tree
from hf_recogs.structure.tree import ROOT

EXAMPLES = "google-research/google-research/a8e876be1a4a26501ce4840dfadd311b4dc5b42d/cfq/example_data/dataset.json"
EXAMPLES_SHA256 = "7afdab6357731b844258b5b579d59faafdc091fbbf58bdee7eb74b5b0805d692"
RELEASE_CONFIGS = ("cfq_release_mcd1", "cfq_release_mcd2", "cfq_release_mcd3", "cfq_release_random",
                   "cfq_release_kim2021_mcd", "cfq_release_kim2021_random")

# Hand-written derivations of the ten questions, in order: (rule, child, ...) with rules "LHS=RHS" whose
# right-hand side joins words and child symbols with "_"; "[ENTITY]" is filled by an entity M0 ... M9.
ENTITY = ("DP=[ENTITY]",)


def possessive(owner, noun_phrase):
    return ("DP=POSS_NP", ("POSS=DP_'s", owner), noun_phrase)


def adjective_role(adjective, role):
    return ("NP=ADJ_ROLE", (f"ADJ={adjective}",), (f"ROLE={role}",))


def enumeration(symbol, words):
    """The toy grammar's list 'a , b , ... , and z' (or 'a and b') of ``symbol`` leaves, as nested rules."""
    leaves = [ENTITY if w == "[ENTITY]" else (f"{symbol}={w}",) for w in words]
    if len(words) == 2:
        return (f"COMPLETED_AND={symbol}_and_{symbol}", *leaves)
    nested = (f"ENUMERATION={symbol}_,_{symbol}", *leaves[:2])
    for leaf in leaves[2:-1]:
        nested = (f"ENUMERATION=ENUMERATION_,_{symbol}", nested, leaf)
    return (f"COMPLETED_AND=ENUMERATION_,_and_{symbol}", nested, leaves[-1])


def yes_no(subject, verb_phrase):
    return ("S=YNQ", ("YNQ=Did_DP_VP", subject, verb_phrase))


def verb_object(verb, obj):
    return ("VP=VERB_DP", (f"VERB={verb}",), obj)


RULE_TREES = [
    yes_no(possessive(ENTITY, adjective_role("female", "actor")),
           ("VP=COMPLETED_AND_DP", (enumeration("VERB", ["edit", "produce"])), ENTITY)),
    yes_no(possessive(ENTITY, ("NP=COMPLETED_AND", (enumeration("ROLE", ["writer", "director", "editor",
                                                                                  "star"])))),
           ("VP=COMPLETED_AND_DP", (enumeration("VERB", ["direct", "produce", "write"])), ENTITY)),
    yes_no(ENTITY, verb_object("employ", ("DP=a_NP", ("NP=ROLE_PP", ("ROLE=spouse",),
                                                       ("PP=of_DP", ("DP=a_NP", ("NP=ROLE", ("ROLE=character",)))))))),
    yes_no(possessive(ENTITY, ("NP=COMPLETED_AND", (enumeration(
        "ROLE", ["writer", "editor", "cinematographer", "producer", "director"])))),
           ("VP=COMPLETED_AND_DP", (enumeration("VERB", ["marry", "influence"])), ENTITY)),
    yes_no(possessive(ENTITY, adjective_role("male", "actor")), verb_object("marry", ENTITY)),
    yes_no(possessive(ENTITY, adjective_role("Spanish", "executive producer")), verb_object("edit", ENTITY)),
    yes_no(possessive(ENTITY, adjective_role("Canadian", "director")), verb_object("executive produce", ENTITY)),
    yes_no(possessive(possessive(possessive(ENTITY, adjective_role("male", "cinematographer")),
                                 adjective_role("Canadian", "spouse")), ("NP=ROLE", ("ROLE=spouse",))),
           verb_object("marry", ENTITY)),
    yes_no(possessive(ENTITY, ("NP=COMPLETED_AND", (enumeration("ROLE", ["cinematographer", "star"])))),
           ("VP=COMPLETED_AND_COMPLETED_AND", (enumeration("VERB", ["edit", "direct", "write"])),
            (enumeration("DP", ["[ENTITY]", "[ENTITY]", "[ENTITY]"])))),
    yes_no(possessive(ENTITY, ("NP=COMPLETED_AND", (enumeration(
        "ROLE", ["star", "director", "editor", "cinematographer", "writer"])))),
           ("VP=COMPLETED_AND_DP", (enumeration("VERB", ["write", "direct"])), ENTITY)),
]


def rule_id(rule: str) -> str:
    """A rule string as the release writes it: the rule, then "_" and an 11-character identifier."""
    return f"{rule}_{hashlib.sha1(rule.encode()).hexdigest()[:11]}"


def release_node(tree) -> dict:
    """A hand-written derivation in the release's ruleTree shape. Entity rules get a sibling of another rule
    type (an invented 'KNOWLEDGE' leaf), which the reader must skip."""
    rule, *children = tree
    node = {"ruleId": {"type": "GRAMMAR_RULE", "stringValue": rule_id(rule)}}
    if children:
        node["subTree"] = [release_node(child) for child in children]
        if any(child == ENTITY for child in children):
            node["subTree"].append({"ruleId": {"type": "KNOWLEDGE", "stringValue": "M0 is a film"}})
    return node


def release_rule_tree(tree) -> dict:
    """The whole ruleTree: a root of another type above the grammar's root, as the reader must expect."""
    return {"ruleId": {"type": "ROOT_OF_OTHER_TYPE", "stringValue": "x"}, "subTree": [release_node(tree)]}


def public_items(mirror_root: Path) -> list[dict]:
    data = (mirror_root / EXAMPLES).read_bytes()
    assert hashlib.sha256(data).hexdigest() == EXAMPLES_SHA256
    return json.loads(data)


SPLITS = {  # hand-made split files (the format of CFQ's own: three index lists into dataset.json)
    "cfq/splits/mcd1.json": {"trainIdxs": [1, 2, 3, 4, 5, 6], "devIdxs": [7, 8], "testIdxs": [9, 0]},
    "cfq/splits/random_split.json": {"trainIdxs": [0, 1], "devIdxs": [2, 10], "testIdxs": [3]},  # 10: no such item
}


def tarball(items: list[dict], splits: dict = SPLITS) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        members = {"cfq/dataset.json": json.dumps(items, indent=2).encode(),
                   **{name: json.dumps(value).encode() for name, value in splits.items()}}
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def pin_of(data: bytes) -> UpstreamFile:
    """A release-file pin of the fixture (same kind as the real one: a fixed address, size and SHA-256)."""
    return UpstreamFile("example.invalid/cfq_fixture", "", "cfq.tar.gz", None, hashlib.sha256(data).hexdigest(),
                        len(data))


def place(root: Path, file: UpstreamFile, data: bytes) -> Path:
    target = root / file.relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """An empty fixture mirror and cache; caches of earlier reads forgotten."""
    mirror_root = tmp_path / "fixture_mirror"
    monkeypatch.setenv("HF_RECOGS_MIRROR", str(mirror_root))
    monkeypatch.setenv("HF_RECOGS_CACHE", str(tmp_path / "cache"))
    sources.fetch_bytes.cache_clear()
    cfq.read_release.cache_clear()
    yield mirror_root
    sources.fetch_bytes.cache_clear()
    cfq.read_release.cache_clear()


@pytest.fixture
def items(mirror) -> list[dict]:
    """The ten public items with our hand-written rule trees added."""
    records = public_items(mirror)
    assert len(records) == len(RULE_TREES) == 10
    return [{**record, "ruleTree": release_rule_tree(tree)} for record, tree in zip(records, RULE_TREES)]


@pytest.fixture
def release(items, fresh, monkeypatch) -> UpstreamFile:
    """The fixture tarball in the fixture mirror, and the configs pointed at its pin."""
    data = tarball(items)
    file = pin_of(data)
    place(fresh, file, data)
    monkeypatch.setattr(cfq, "release_file", lambda: file)
    return file


# ---- the pin and the offline message ---------------------------------------------------------------------

def test_the_real_release_is_pinned_as_tfds_registers_it():
    file = cfq.release_file()
    assert file.url == "https://storage.googleapis.com/cfq_dataset/cfq.tar.gz"
    assert (file.size, file.sha256) == (267_599_061,
                                        "979d719271eae12611643b89151f639d94092800e7e71f2d23a754c43f3eb1ba")
    assert file.relpath == "storage.googleapis.com/cfq_dataset/cfq.tar.gz" and sources.is_large(file)
    for name in RELEASE_CONFIGS:
        cfg = get_config(name)
        assert cfg.sources("train")[0] == file and cfg.extra_features == {"rule_tree": "string"}
        assert cfg.family == "cfq" and cfg.metric == "exact" and cfg.license == "CC BY-SA 3.0"
    assert get_config("cfq_release_kim2021_mcd").citations == ("cfq", "kim2021structure")
    assert [f.path for f in get_config("cfq_release_kim2021_random").sources("test")][1:] == [
        "scripts/cfq_splits/random.json"]


def test_offline_without_the_tarball_is_one_line_everywhere(fresh, tmp_path):
    import hf_recogs
    from hf_recogs.publish import dataset_export

    cfg = get_config("cfq_release_mcd2")
    assert not sources.is_available(cfq.release_file())
    with pytest.raises(SourceUnavailable) as err:
        list(cfg.rows("train"))
    message = str(err.value)
    assert "\n" not in message and "HF_RECOGS_MIRROR" in message
    assert cfq.release_file().url in message and cfq.release_file().relpath in message
    with pytest.raises(SourceUnavailable) as err:
        hf_recogs.load_dataset("cfq_release_mcd2", cache_dir=str(tmp_path / "hf"))
    assert "\n" not in str(err.value) and "cfq_release_mcd2" in str(err.value)
    exported = dataset_export.export_config(cfg, {}, tmp_path / "export", "cfq_release_mcd2")
    assert not exported.splits and set(exported.unavailable) == {"train", "validation", "test"}
    assert all("not available offline" in reason for reason in exported.unavailable.values())


# ---- reading the release ---------------------------------------------------------------------------------

def test_preprocessing_by_hand():
    """Item 5, preprocessed by hand as CFQ's tools do (punctuation apart; count(*) spelt out; ns: and m.)."""
    assert cfq.preprocess_question("Did M1 's Spanish executive producer edit M0") == (
        "Did M1 ' s Spanish executive producer edit M0")
    raw = ("SELECT count(*) WHERE {\n?x0 ns:film.editor.film M0 .\n?x0 ns:film.producer.films_executive_produced "
           "M1 .\n?x0 ns:people.person.nationality ns:m.06mkj\n}")
    assert cfq.preprocess_query(raw) == (
        "SELECT count ( * ) WHERE { ?x0 film.editor.film M0 . ?x0 film.producer.films_executive_produced M1 . "
        "?x0 people.person.nationality m_06mkj }")
    # a leading ns: only: inside a property path it stays
    assert cfq.preprocess_query("?x0 ns:a.b/ns:c.d M1") == "?x0 a.b/ns:c.d M1"


def test_rows_follow_the_split_file(release, items):
    cfg = get_config("cfq_release_mcd1")
    rows = {split: list(cfg.rows(split)) for split in ("train", "validation", "test")}
    assert {s: len(r) for s, r in rows.items()} == {"train": 6, "validation": 2, "test": 2}
    item0 = rows["test"][1]  # testIdxs [9, 0]: item 0 comes second
    assert item0["input"] == "Did M1 ' s female actor edit and produce M0"
    assert item0["output"] == (
        "SELECT count ( * ) WHERE { ?x0 film.actor.film/ns:film.performance.character M1 . ?x0 film.editor.film M0 . "
        "?x0 film.producer.film|ns:film.production_company.films M0 . ?x0 people.person.gender m_02zsn }")
    assert item0["category"] == "yes_no"
    by_question = {row["input"]: row for split in rows.values() for row in split}
    assert len(by_question) == 10
    for record in items:
        row = by_question[cfq.preprocess_question(record["questionPatternModEntities"])]
        assert row["output"] == cfq.preprocess_query(record["sparqlPatternModEntities"])
        assert set(row) == {"input", "output", "category", "rule_tree"}
    assert json.loads(item0["rule_tree"]) == list_form(RULE_TREES[0])  # identifiers and other rule types gone


def list_form(tree) -> list:
    rule, *children = tree
    return [rule, *(list_form(child) for child in children)]


def test_bad_split_files_are_clear_errors(release):
    with pytest.raises(SourceError, match=r"lists item 10 in devIdxs, but the release has items 0 to 9") as err:
        list(get_config("cfq_release_random").rows("validation"))
    assert "\n" not in str(err.value)
    assert [r["input"][:9] for r in get_config("cfq_release_random").rows("train")] == ["Did M1 ' ", "Did M0 ' "]
    with pytest.raises(SourceError, match=r"has no member cfq/splits/mcd3.json"):
        list(get_config("cfq_release_mcd3").rows("test"))
    contents = cfq.read_release(release)
    with pytest.raises(SourceError, match="no index list 'testIdxs'"):
        list(cfq.release_rows(contents, {"trainIdxs": [0]}, "hand.json", "test"))
    with pytest.raises(SourceError, match=r"lists item -1"):
        list(cfq.release_rows(contents, {"trainIdxs": [0, -1]}, "hand.json", "train"))


def test_kim2021_split_file_is_read_through_its_pin(release, fresh, monkeypatch):
    data = json.dumps({"trainIdxs": [4, 3], "devIdxs": [0, 1, 2], "testIdxs": [5]}).encode()
    file = UpstreamFile("fixture/kim", "0" * 40, "scripts/cfq_splits/mcd.json", None,
                        hashlib.sha256(data).hexdigest(), len(data))
    place(fresh, file, data)
    monkeypatch.setattr(cfq, "kim2021_split_file", lambda name: file)
    cfg = get_config("cfq_release_kim2021_mcd")
    assert cfg.sources("train") == [release, file]
    assert [r["input"].split()[1] for r in cfg.rows("train")] == ["M0", "M0"]  # items 4 and 3
    assert len(list(cfg.rows("validation"))) == 3


def test_a_gz_mirror_copy_is_unpacked_and_a_wrong_copy_refused(items, fresh, monkeypatch):
    data = tarball(items)
    file = pin_of(data)
    monkeypatch.setattr(cfq, "release_file", lambda: file)
    packed = place(fresh, file, gzip.compress(data))
    packed.rename(packed.with_name(packed.name + ".gz"))
    assert len(list(get_config("cfq_release_mcd1").rows("train"))) == 6
    assert (Path(sources.cache_dir()) / file.relpath).read_bytes() == data
    sources.fetch_bytes.cache_clear()
    cfq.read_release.cache_clear()
    place(fresh, file, data[:-1] + b"x")
    with pytest.raises(ChecksumMismatch, match="sha256 is"):
        list(get_config("cfq_release_mcd1").rows("train"))


def test_download_on_first_use_goes_to_the_cache_verified(items, fresh, monkeypatch):
    """Online (the network faked): the tarball is downloaded once into the cache, in chunks, and checked; a
    download with other bytes leaves nothing behind."""
    data = tarball(items)
    file = pin_of(data)
    monkeypatch.setattr(cfq, "release_file", lambda: file)
    for name in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    served = {"body": data, "calls": []}

    def urlopen(url, timeout):
        served["calls"].append(url)
        return io.BytesIO(served["body"])

    monkeypatch.setattr(sources.urllib.request, "urlopen", urlopen)
    assert len(list(get_config("cfq_release_mcd1").rows("validation"))) == 2
    cached = Path(sources.cache_dir()) / file.relpath
    assert served["calls"] == ["https://example.invalid/cfq_fixture/cfq.tar.gz"] and cached.read_bytes() == data
    sources.fetch_bytes.cache_clear()
    cfq.read_release.cache_clear()
    assert sources.fetch_path(file) == cached and len(served["calls"]) == 1  # the verified cache copy is used
    cached.unlink()
    served["body"] = data[:-1] + b"x"
    with pytest.raises(ChecksumMismatch, match="download of .* sha256 is"):
        sources.fetch_path(file)
    assert not cached.exists() and not list(cached.parent.iterdir())


def test_streaming_reader_across_chunk_boundaries(items):
    text = json.dumps(items, indent=1)
    for chunk in (1, 7, 4096):
        assert list(cfq.json_array_items(io.BytesIO(text.encode()), "fixture", buf_size=chunk)) == items
    assert list(cfq.json_array_items(io.BytesIO(b" [ 1 , 22 ,333 ] "), "numbers", buf_size=2)) == [1, 22, 333]
    for bad in ('{"a": 1}', "[1, 2", "[1 2]", "[1,]"):
        with pytest.raises(SourceError, match="is not a JSON array of items"):
            list(cfq.json_array_items(io.BytesIO(bad.encode()), "bad", buf_size=3))


def test_rule_strings_need_their_identifier():
    good = {"ruleId": {"type": "GRAMMAR_RULE", "stringValue": rule_id("DP=[ENTITY]")}}
    assert cfq.grammar_tree(good) == ["DP=[ENTITY]"]
    with pytest.raises(SourceError, match="is not 'LHS=RHS' followed by"):
        cfq.grammar_tree({"ruleId": {"type": "GRAMMAR_RULE", "stringValue": "DP=[ENTITY]"}})
    with pytest.raises(SourceError, match="2 top grammar rules"):
        cfq.grammar_tree({"ruleId": {"type": "OTHER"}, "subTree": [good, good]})
    with pytest.raises(SourceError, match="is not a CFQ rule tree"):
        cfq.grammar_tree({"subTree": []})


# ---- the question tree -----------------------------------------------------------------------------------

def test_question_tree_by_hand():
    """Item 0: 'Did M1 ' s female actor edit and produce M0', derived by hand (see RULE_TREES[0])."""
    tree = question_tree("Did M1 ' s female actor edit and produce M0", json.dumps(list_form(RULE_TREES[0])))
    assert tree.n_words == 10
    assert tree.tokens[10:] == ("YNQ", "DP", "POSS", "NP", "VP", "COMPLETED_AND")
    #                  Did M1 '   s     female actor edit and   produce M0
    assert tree.heads == (10, 12, 12, None, 13, 13, 15, None, 15, 14,
                          ROOT, 10, 11, 11, 10, 14)


def test_enumerations_keep_every_conjunct_and_drop_commas():
    """Item 1: the four roles and the three verbs hang from one COMPLETED_AND each; ',' and 'and' are out."""
    question = "Did M0 ' s writer , director , editor , and star direct , produce , and write M1"
    tree = question_tree(question, list_form(RULE_TREES[1]))
    words = question.split()
    assert tree.tokens[len(words):] == ("YNQ", "DP", "POSS", "COMPLETED_AND", "VP", "COMPLETED_AND")
    poss, roles, verbs = [[words[c] for c in tree.children(len(words) + k)] for k in (2, 3, 5)]
    assert poss == ["M0", "'"] and roles == ["writer", "director", "editor", "star"]
    assert verbs == ["direct", "produce", "write"]
    outside = [w for w, h in zip(words, tree.heads) if h is None]
    assert outside == ["s", ",", ",", ",", "and", ",", ",", "and"]


def test_every_public_item_gets_a_tree_over_its_tokens(release):
    """All ten, through the configs: one tree, the question's tokens first and unchanged, every word in the
    tree except ',', 'and' and the s of ' s, and structure tokens labelled by left-hand sides."""
    labels = {"YNQ", "DP", "POSS", "NP", "VP", "PP", "COMPLETED_AND", "ENUMERATION",
              "ROLE", "VERB"}  # ROLE, VERB: the two-word leaves 'executive producer', 'executive produce'
    rows = [r for name in ("cfq_release_mcd1",) for s in ("train", "validation", "test")
            for r in get_config(name).rows(s)]
    assert len(rows) == 10
    for row in rows:
        tree = question_tree(row["input"], row["rule_tree"])
        words = row["input"].split(" ")
        assert tree.tokens[:tree.n_words] == tuple(words)
        assert set(tree.tokens[tree.n_words:]) <= labels and tree.root == tree.n_words  # YNQ on top
        tree.check()
        for i, (word, head) in enumerate(zip(words, tree.heads)):
            expected_out = word in (",", "and") or (word == "s" and words[i - 1] == "'")
            assert (head is None) == expected_out, (row["input"], word)
        assert all(tree.children(n) for n in range(tree.n_words, len(tree.tokens)))


def test_question_tree_errors_are_one_line():
    tree = list_form(RULE_TREES[4])  # 'Did M0 's male actor marry M2'
    for question, match in (("Did M0 ' s male actor marry M2 now", "spells 8 of the question's 9 tokens"),
                            ("Did M0 ' s female actor marry M2", "wants 'male' at token 4"),
                            ("Did M0 ' s male actor marry", "after the question's last token"),
                            ("Did Emma ' s male actor marry M2", r"wants '\[ENTITY\]' at token 1")):
        with pytest.raises(ValueError, match=match) as err:
            question_tree(question, tree)
        assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="does not name its child"):
        question_tree("Did M0", ["YNQ=Did_[ENTITY]", ["VP=x"]])
    with pytest.raises(ValueError, match="not JSON"):
        question_tree("Did M0", "[")


# ---- the real files in the mirror ------------------------------------------------------------------------

@pytest.mark.mirror
def test_the_papers_split_files_verify_and_cut_80_percent_of_cfq(mirror):
    for name in ("mcd", "random"):
        indices = json.loads(sources.fetch_bytes(cfq.kim2021_split_file(name)))
        sizes = {key: len(value) for key, value in indices.items()}
        assert sizes == {"trainIdxs": 95_743, "devIdxs": 47_872, "testIdxs": 47_871}
        every = [i for value in indices.values() for i in value]
        assert len(set(every)) == len(every) and 0 <= min(every) and max(every) < 239_357


@pytest.mark.mirror
def test_our_preprocessing_gives_the_mcd1_copys_strings(mirror):
    """The ten public items, preprocessed by our code, against the LEAR copy of MCD1 (same preprocessing by
    CFQ's tools): eight of them are in MCD1, and their question and query strings are the copy's exactly."""
    copy = {}
    for split in ("train", "validation", "test"):
        for row in get_config("cfq_mcd1").rows(split):
            copy[row["input"]] = row["output"]
    found = 0
    for record in public_items(mirror):
        question = cfq.preprocess_question(record["questionPatternModEntities"])
        if question in copy:
            found += 1
            assert copy[question] == cfq.preprocess_query(record["sparqlPatternModEntities"])
    assert found == 8
