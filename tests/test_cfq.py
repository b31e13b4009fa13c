"""The ``cfq_mcd1`` config: the pinned zip, split sizes, categories, rows checked by hand against the zip, the
licence handling (share-alike, so exported apart from the main Hub repository)."""

from __future__ import annotations

import hashlib
import zipfile
from collections import Counter

import pytest

from hf_recogs.benchmarks import cfq
from hf_recogs.citations import CITATIONS
from hf_recogs.registry import get_config

SHA256 = "23f530a385014d0a390f6bfc5e331abead3efb2c1586a911a9535e48dc22c4b5"
GIT_BLOB = "11f2f9f4cb1d699294b387f5cd9fab61daebe021"
SIZES = {"train": 95_743, "validation": 11_968, "test": 11_968}
CATEGORIES = {  # counted by the query header of each line of the zip's decode files
    "train": {"yes_no": 55_662, "wh": 40_081},
    "validation": {"yes_no": 5_323, "wh": 6_645},
    "test": {"yes_no": 5_294, "wh": 6_674},
}
# (split, line number from 1, question, query), read off the zip's encode/decode files by hand
HAND_ROWS = [
    ("train", 2, "Which male Swedish costume designer executive produced M2 and wrote M1",
     ("SELECT DISTINCT ?x0 WHERE { ?x0 a film.film_costumer_designer . ?x0 film.producer.films_executive_produced "
      "M2 . ?x0 film.writer.film M1 . ?x0 people.person.gender m_05zppz . ?x0 people.person.nationality m_0d0vqn }")),
    ("train", 786, "Was M0 a editor of M1", "SELECT count ( * ) WHERE { M0 film.editor.film M1 }"),
    ("validation", 5812, "Was M0 a actor", "SELECT count ( * ) WHERE { M0 a film.actor }"),
    ("test", 1823, "Was a film editor M0", "SELECT count ( * ) WHERE { M0 a film.editor }"),
    ("test", 11_968, "Who was a French editor , costume designer , writer , art director , and director of M1",
     ("SELECT DISTINCT ?x0 WHERE { ?x0 a people.person . ?x0 film.director.film M1 . ?x0 film.editor.film M1 . "
      "?x0 film.film_art_director.films_art_directed M1 . ?x0 film.film_costumer_designer.costume_design_for_film "
      "M1 . ?x0 film.writer.film M1 . ?x0 people.person.nationality m_0f8l9c }")),
]


def test_the_zip_is_pinned_with_its_checksums():
    file = cfq.zip_file()
    assert (file.repo, file.commit, file.path) == ("thousfeet/LEAR", "e26c9d875c593de6e2e51b9d66f65c6f07be9575", cfq.ZIP)
    assert (file.sha256, file.git_blob, file.size) == (SHA256, GIT_BLOB, 3_092_612)
    assert cfq.members("validation") == ("data/mcd1/dev/dev_encode.txt", "data/mcd1/dev/dev_decode.txt")


def test_config_facts():
    cfg = get_config("cfq_mcd1")
    assert cfg.family == "cfq" and cfg.metric == "exact" and cfg.citations == ("cfq",)
    assert cfg.splits == ("train", "validation", "test") and cfg.hub_splits is None
    assert cfg.license == "CC BY-SA 3.0" and cfg.share_alike
    assert "CC BY 4.0" in cfg.notes and "CC BY-SA 3.0" in cfg.notes
    assert "Keysers" in CITATIONS["cfq"] and "ICLR" in CITATIONS["cfq"]
    assert [f.path for f in cfg.sources("train")] == [cfq.ZIP]


def test_query_category():
    assert cfq.query_category("SELECT count ( * ) WHERE { M0 a film.actor }") == "yes_no"
    assert cfq.query_category("SELECT DISTINCT ?x0 WHERE { ?x0 a film.actor }") == "wh"
    with pytest.raises(cfq.SourceError, match="unknown header"):
        cfq.query_category("ASK WHERE { M0 a film.actor }")


@pytest.mark.mirror
def test_the_mirror_file_verifies(mirror):
    data = (mirror / cfq.zip_file().repo / cfq.zip_file().commit / cfq.ZIP).read_bytes()
    assert hashlib.sha256(data).hexdigest() == SHA256


@pytest.mark.mirror
def test_split_sizes_categories_and_hand_checked_rows(mirror):
    cfg = get_config("cfq_mcd1")
    rows = {split: list(cfg.rows(split)) for split in SIZES}
    assert {split: len(r) for split, r in rows.items()} == SIZES
    assert {split: dict(Counter(row["category"] for row in r)) for split, r in rows.items()} == CATEGORIES
    for split, line, question, query in HAND_ROWS:
        assert rows[split][line - 1] == {"input": question, "output": query,
                                          "category": cfq.query_category(query)}
    # the first and last rows equal the zip's lines, read here without the package
    with zipfile.ZipFile(mirror / cfq.zip_file().repo / cfq.zip_file().commit / cfq.ZIP) as archive:
        for split, (enc, dec) in ((s, cfq.members(s)) for s in SIZES):
            questions = archive.read(enc).decode("utf-8").split("\n")
            queries = archive.read(dec).decode("utf-8").split("\n")
            assert questions[-1] == queries[-1] == ""
            for row, line in ((0, 0), (-1, -2)):  # the text's last item is the empty string after the final \n
                assert (rows[split][row]["input"], rows[split][row]["output"]) == (questions[line], queries[line])


@pytest.mark.mirror
def test_every_row_is_single_spaced_and_anonymised(mirror):
    for row in get_config("cfq_mcd1").rows("validation"):
        for text in (row["input"], row["output"]):
            assert text == " ".join(text.split())
        assert not any(tok.startswith("ns:") for tok in row["output"].split(" "))  # prefix dropped at token starts
