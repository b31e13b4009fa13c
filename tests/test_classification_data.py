"""The compositional classification configs (recogs_pos_cls, cfq_mcd1_cls, sygns_systematicity_one_cls):
splits, columns, the hold-out rule, and the filters of the random and the shipped model negatives on every row."""

from __future__ import annotations

import random
from collections import Counter, defaultdict

import numpy as np
import pytest

import hf_recogs
from hf_recogs.benchmarks import classification as C
from hf_recogs.logical_forms import sem_verdict
from hf_recogs.registry import get_config

CLS = {"recogs_pos_cls": "recogs_pos", "cfq_mcd1_cls": "cfq_mcd1",
       "sygns_systematicity_one_cls": "sygns_systematicity_one"}
COLUMNS = ["input", "candidate", "category", "label", "negative_source", "negative_score", "source_row"]


def _groups(rows):
    """The rows of each source row in output order: [(positive, [negatives])]."""
    out = []
    for row in rows:
        if row["label"] == 1:
            out.append((row, []))
        else:
            assert out and out[-1][0]["source_row"] == row["source_row"], "a negative must follow its positive"
            out[-1][1].append(row)
    return out


def _check_split(rows, source_rows, split, same, key, per_row=3, kind="random"):
    """Positives are the source rows in order; negatives follow their positive, come from the split's pool
    (random) or a generator's beam (model), and are equivalent neither to it nor to each other."""
    groups = _groups(rows)
    expected = C.split_rows(source_rows, split)
    assert [p["source_row"] for p, _ in groups] == expected
    pool = {source_rows[i]["output"] for i in expected}
    for positive, negatives in groups:
        src = source_rows[positive["source_row"]]
        assert (positive["input"], positive["candidate"], positive["category"]) == (
            src["input"], src["output"], src["category"])
        assert positive["negative_source"] == "" and positive["negative_score"] is None
        assert len(negatives) <= per_row
        keys = [key(positive["candidate"])]
        for neg in negatives:
            assert (neg["input"], neg["category"]) == (positive["input"], positive["category"])
            if kind == "random":
                assert neg["negative_source"] == "random" and neg["negative_score"] is None
                assert neg["candidate"] in pool, "a negative from another split"
            else:
                assert neg["negative_source"].startswith("model:") and isinstance(neg["negative_score"], float)
            k = key(neg["candidate"])
            assert not any(same(k, other) for other in keys), (positive["input"], neg["candidate"])
            keys.append(k)
    return groups


# ---- without data ----------------------------------------------------------------------------------------


def test_configs_are_declared_as_classification_data():
    for name, source in CLS.items():
        cfg, src = get_config(name), get_config(source)
        assert cfg.metric == "classification" and cfg.family == src.family + "_cls"
        assert cfg.license == src.license and cfg.citations == (*src.citations, "kim2021structure")
        assert cfg.category_groups is src.category_groups
        assert cfg.splits[:2] == ("train", "train_holdout") and set(cfg.splits) - {"train_holdout"} == set(src.splits)
        assert [p.name for p in cfg.params] == ["negatives", "seed", "per_row"]
        shipped = name in ("cfq_mcd1_cls", "recogs_pos_cls")  # the configs with model negatives in the package
        assert cfg.resolve_params({}) == {"negatives": "model" if shipped else "random", "seed": 0, "per_row": 3}
    assert get_config("recogs_pos_cls").splits[-1] == "gen"
    from hf_recogs.builder import features
    from hf_recogs.citations import bibtex

    assert list(features(get_config("recogs_pos_cls"))) == COLUMNS
    assert "Kim, Juyong and Ravikumar, Pradeep and Ainslie, Joshua" in bibtex("kim2021structure")
    with pytest.raises(ValueError, match="per_row=4 must be between 1 and 3"):
        get_config("cfq_mcd1_cls").resolve_params({"per_row": 4})


def test_model_negatives_of_a_config_without_a_shipment_are_a_one_line_error(monkeypatch):
    monkeypatch.setattr(C, "MODEL_NEGATIVES", {})
    for load in (lambda: list(get_config("recogs_pos_cls").rows("validation", negatives="model")),
                 lambda: hf_recogs.load_dataset("sygns_systematicity_one_cls", negatives="model")):
        with pytest.raises(ValueError, match="no model negatives are shipped for it") as err:
            load()
        assert "\n" not in str(err.value) and "negatives='random'" in str(err.value)
        assert "make_model_negatives.py build" in str(err.value)


def test_negatives_default_to_the_model_ones_where_they_are_shipped(monkeypatch):
    monkeypatch.setattr(C, "MODEL_NEGATIVES", {"cfq_mcd1_cls": "0" * 64})
    assert C._params("cfq_mcd1_cls")[0].default == "model"
    assert C._params("recogs_pos_cls")[0].default == "random"
    assert "default where shipped" in C._params("recogs_pos_cls")[0].help


def _ship(folder, name, records_by_split):
    """A shipment in the layout make_model_negatives.py writes: <split>.jsonl.gz + manifest.json."""
    import gzip
    import hashlib
    import json

    files = {}
    (folder / name).mkdir(parents=True)
    for split, records in records_by_split.items():
        data = gzip.compress("".join(json.dumps(r) + "\n" for r in records).encode(), mtime=0)
        (folder / name / f"{split}.jsonl.gz").write_bytes(data)
        files[f"{split}.jsonl.gz"] = {"split": split, "sha256": hashlib.sha256(data).hexdigest()}
    manifest = json.dumps({"config": name, "files": files}).encode()
    (folder / name / "manifest.json").write_bytes(manifest)
    return hashlib.sha256(manifest).hexdigest()


def test_shipped_model_negatives_join_their_rows_and_are_checked_before_use(tmp_path, monkeypatch):
    rows = [{"input": f"q{i}", "output": f"a{i}", "category": "c"} for i in range(3)]
    neg = [{"candidate": f"w{i}{k}", "negative_source": f"model:g{k % 2}:{k // 2}", "negative_score": -0.5 * k}
           for i in range(3) for k in range(3)]
    records = [{"source_row": i, "category": "c", "output": f"a{i}", "negatives": neg[3 * i:3 * i + (3 - i)]}
               for i in (2, 0, 1)]  # any order; row 2 keeps one negative (no back-fill)
    pin = _ship(tmp_path, "toy_cls", {"validation": records})
    monkeypatch.setattr(C, "SHIPMENTS", tmp_path)
    monkeypatch.setattr(C, "MODEL_NEGATIVES", {"toy_cls": pin})
    got = C._model_negatives("toy_cls", "validation", rows, [0, 1, 2], per_row=2)
    assert got == [neg[0:2], neg[3:5], neg[6:7]]  # the first per_row, in shipped order
    with pytest.raises(C.ShipmentError, match="cover 3 rows, the split has 4"):
        C._model_negatives("toy_cls", "validation", [*rows, rows[0]], [0, 1, 2, 3], 3)
    with pytest.raises(C.ShipmentError, match="row 1 were made for another output"):
        C._model_negatives("toy_cls", "validation", [rows[0], {**rows[1], "output": "b"}, rows[2]], [0, 1, 2], 3)
    with pytest.raises(C.ShipmentError, match="no split 'test'"):
        C._model_negatives("toy_cls", "test", rows, [0, 1, 2], 3)
    data = (tmp_path / "toy_cls" / "validation.jsonl.gz").read_bytes()
    (tmp_path / "toy_cls" / "validation.jsonl.gz").write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(C.ShipmentError, match="validation.jsonl.gz: SHA-256 differs from its manifest"):
        C._model_negatives("toy_cls", "validation", rows, [0, 1, 2], 3)
    monkeypatch.setattr(C, "MODEL_NEGATIVES", {"toy_cls": "0" * 64})
    with pytest.raises(C.ShipmentError, match="manifest.json: SHA-256 differs from the pinned one"):
        C._model_negatives("toy_cls", "validation", rows, [0, 1, 2], 3)


def test_holdout_is_a_fixed_five_percent_of_train():
    rows = [{"output": str(i)} for i in range(1001)]
    held, kept = C.split_rows(rows, "train_holdout"), C.split_rows(rows, "train")
    assert len(held) == 1001 // 20 == 50 and held == sorted(held) == C.holdout_rows(1001)
    assert sorted(held + kept) == list(range(1001)) and not set(held) & set(kept)
    assert C.split_rows(rows, "gen") == list(range(1001))


def test_sparql_equivalence_is_query_type_and_set_of_clauses():
    q = "SELECT DISTINCT ?x0 WHERE { ?x0 a film.actor . ?x0 film.actor.film M1 . FILTER ( ?x0 != M1 ) }"
    reordered = "SELECT DISTINCT ?x0 WHERE { FILTER ( M1 != ?x0 ) . ?x0 film.actor.film M1 . ?x0 a film.actor }"
    repeated = q.replace("{ ", "{ ?x0 a film.actor . ")
    assert C.sparql_key(q) == C.sparql_key(reordered) == C.sparql_key(repeated)
    assert C.sparql_key(q) != C.sparql_key(q.replace("SELECT DISTINCT ?x0", "SELECT count ( * )"))
    assert C.sparql_key(q) != C.sparql_key(q.replace("film.actor.film M1", "film.actor.film M2"))
    assert C.sparql_key("not a query") == ("not a query", frozenset())


def test_random_negatives_redraw_collisions_and_then_keep_fewer():
    outputs = ["a"] * 5 + ["b", "c"]  # "a" rows can get only b and c, a "b" row only a and c
    stats = C.DrawStats()
    drawn = C.random_negatives(outputs, C.string_key, C.equal, 3, random.Random(0), stats)
    for i, negs in enumerate(drawn):
        kinds = [outputs[j] for j in negs]
        assert outputs[i] not in kinds and len(set(kinds)) == len(kinds)
    assert max(map(len, drawn)) == 2 and stats.short == len(outputs) and stats.redraws > 0
    assert stats.draws <= C.MAX_DRAWS_PER_ROW * len(outputs)


def test_sem_equivalence_filters_renamed_indices():
    assert C.sem_same("cat ( 1 ) ; smile ( 2 ) AND agent ( 2 , 1 )", "cat ( 5 ) ; smile ( 7 ) AND agent ( 7 , 5 )")
    assert not C.sem_same("cat ( 1 ) ; smile ( 2 ) AND agent ( 2 , 1 )", "dog ( 1 ) ; smile ( 2 ) AND agent ( 2 , 1 )")


def test_sygns_pilot_filters_and_determinism():
    cfg, source = get_config("sygns_systematicity_one_cls"), get_config("sygns_systematicity_one")
    source_rows = list(source.rows("validation"))
    rows = list(cfg.rows("validation"))
    _check_split(rows, source_rows, "validation", C.equal, C.string_key)
    assert rows == list(cfg.rows("validation", seed=0))
    other = list(cfg.rows("validation", seed=1))
    assert [r for r in other if r["label"] == 1] == [r for r in rows if r["label"] == 1] and other != rows
    one = list(cfg.rows("validation", per_row=1))
    assert Counter(r["label"] for r in one) == {1: 1200, 0: 1200}


# ---- from the mirror -------------------------------------------------------------------------------------


@pytest.mark.mirror
def test_recogs_pos_cls_loads_and_every_row_keeps_the_filters(mirror, tmp_path):
    loaded = hf_recogs.load_dataset("recogs_pos_cls", cache_dir=str(tmp_path / "c"))  # its default: model
    assert list(loaded) == ["train", "train_holdout", "validation", "test", "gen"]
    assert loaded["validation"].column_names == COLUMNS
    cfg, source = get_config("recogs_pos_cls"), get_config("recogs_pos")
    same = lambda a, b: sem_verdict(a, b) is not False
    positives, negatives = {}, {}
    for split, ds in loaded.items():
        source_rows = list(source.rows(C._source_split(split)))
        groups = _check_split(ds.to_list(), source_rows, split, same, C.sem_key, kind="model")
        positives[split], negatives[split] = len(groups), sum(len(n) for _, n in groups)
        drawn = _check_split(list(cfg.rows(split, negatives="random")), source_rows, split, same, C.sem_key)
        assert Counter(len(n) for _, n in drawn) == {3: len(drawn)}  # collisions are rare: none ran short
    assert positives == {"train": 27227 - 27227 // 20, "train_holdout": 27227 // 20, "validation": 3000,
                         "test": 3000, "gen": 21000}
    # the shipment's report (make_model_negatives.py report): no back-fill, so some rows keep fewer than 3
    assert negatives == {"train": 77_043, "train_holdout": 4_079, "validation": 9_000, "test": 9_000, "gen": 62_212}
    per_category = defaultdict(int)
    for row in loaded["gen"]:
        per_category[row["category"]] += row["label"]
    assert len(per_category) == 21 and set(per_category.values()) == {1000}


@pytest.mark.mirror
def test_recogs_pos_cls_through_the_bare_name_is_deterministic(mirror, tmp_path, monkeypatch):
    import datasets

    monkeypatch.chdir(tmp_path)
    ds = datasets.load_dataset("hf_recogs", "recogs_pos_cls", split="validation", cache_dir=str(tmp_path / "c"))
    as_stored = lambda score: None if score is None else float(np.float32(score))  # a float32 column
    assert ds.to_list() == [{**r, "negative_score": as_stored(r["negative_score"])}
                            for r in get_config("recogs_pos_cls").rows("validation")]
    assert {s.split(":")[0] for s in ds["negative_source"]} == {"", "model"}
    drawn = hf_recogs.load_dataset("recogs_pos_cls", split="validation", negatives="random",
                                   cache_dir=str(tmp_path / "d"))
    again = hf_recogs.load_dataset("recogs_pos_cls", split="validation", negatives="random", seed=3,
                                   cache_dir=str(tmp_path / "e"))
    assert again["candidate"] != drawn["candidate"] and again.filter(lambda r: r["label"] == 1)["candidate"] == (
        drawn.filter(lambda r: r["label"] == 1)["candidate"]) == ds.filter(lambda r: r["label"] == 1)["candidate"]


@pytest.mark.mirror
def test_cfq_mcd1_cls_sizes_and_filters(mirror):
    cfg, source = get_config("cfq_mcd1_cls"), get_config("cfq_mcd1")
    sizes, negatives = {}, Counter()
    for split in cfg.splits:
        source_rows = list(source.rows(C._source_split(split)))
        for kind in ("random", "model"):
            rows = list(cfg.rows(split, negatives=kind))
            groups = _check_split(rows, source_rows, split, C.equal, C.sparql_key, kind=kind)
            sizes[split] = len(groups)
            negatives[split, kind] = len(rows) - len(groups)
    # the paper's hold-out rule gives its sizes: 95,743 → 90,956 + 4,787
    assert sizes == {"train": 90_956, "train_holdout": 4_787, "validation": 11_968, "test": 11_968}
    # the shipment's report (make_model_negatives.py report): no back-fill, so a few rows keep fewer than 3
    assert {split: negatives[split, "model"] for split in sizes} == {
        "train": 269_177, "train_holdout": 14_346, "validation": 34_971, "test": 35_112}


def test_shipped_model_negatives_are_the_pinned_ones_and_check_out():
    """Each shipment in the package is the one pinned, and passes every check of the builder (checksums,
    generators never decoding rows they trained on, rotation order, parsing, no equivalent negatives)."""
    from dataset_scripts import make_model_negatives as mmn

    assert C.MODEL_NEGATIVES, "no shipment pinned"
    for name, pin in C.MODEL_NEGATIVES.items():
        folder = C.SHIPMENTS / name
        assert mmn.sha256_file(folder / "manifest.json") == pin
        assert mmn.verify_shipment(folder) == []
        manifest = mmn.read_json(folder / "manifest.json")
        archs = {gen["arch"] for gen in manifest["generators"].values()}
        assert len(archs) >= 2, f"{name}: negatives from one architecture only ({archs})"


def test_seq2seq_scoring_refuses_classification_configs(tmp_path):
    """Scoring the candidates as seq2seq outputs would read every negative as a wrong prediction."""
    from hf_recogs import scoring
    from hf_recogs.cli import CliError, score_file

    with pytest.raises(ValueError, match="score_pairs"):
        scoring.score_rows(["a"], ["a"], metric="classification")
    with pytest.raises(CliError, match="recogs_pos_cls is a classification config") as err:
        score_file(tmp_path / "none.jsonl", "recogs_pos_cls", "validation")
    assert "\n" not in str(err.value)
