"""dataset_scripts/make_model_negatives.py on a tiny synthetic ReCOGS_pos-like config: the leak-free folds, the
generators' train.py commands, beam decoding on tiny random models, the selection rule, a deterministic shipment
and ``verify_shipment`` (which must flag leaks and broken filters). No training."""

import gzip
import io
import json
import shlex

import pytest

from dataset_scripts import make_model_negatives as mmn
from hf_recogs.benchmarks import classification

NAMES = ["Liam", "Emma", "Noah", "Ava", "Mia", "Leo", "Zoe", "Max", "Ivy", "Eli"]
CONFIG = "recogs_pos_cls"


def lf(name: str, verb: str = "run", role: str = "agent") -> str:
    return f"{name} ( 0 ) ; {verb} ( 1 ) AND {role} ( 1 , 0 )"


def synthetic_rows(train: int = 40, validation: int = 4, test: int = 4, gen: int = 6) -> dict[str, list[dict]]:
    def rows(n, category, offset):
        return [{"input": f"{NAMES[(i + offset) % len(NAMES)]} ran .", "output": lf(NAMES[(i + offset) % len(NAMES)]),
                 "category": category} for i in range(n)]

    return {"train": rows(train, "in_distribution", 0), "validation": rows(validation, "in_distribution", 1),
            "test": rows(test, "in_distribution", 2), "gen": rows(gen, "subj_to_obj", 3)}


def fake_beams(arch: str, rid: str, positive: str) -> list[str]:
    """Hand-made beams: the positive, SEM-equivalents, unparsable strings, duplicates across generators and three
    distinct negatives; rows whose index is a multiple of 5 get nothing usable (no back-fill: 0 negatives)."""
    name = positive.split()[0]
    if mmn.split_id(rid)[1] % 5 == 0:
        return [positive, f"{name} ( 0 ) ; run (", lf(name, role="agent"), ""]
    if arch == "transformer_fast":
        return [positive, lf(name, role="theme"), f"{name} ( 0 ) ; run (", lf(name, verb="walk")]
    return [f"{name} ( 0 ) ; agent ( 1 , 0 ) AND run ( 1 )", lf(name, role="theme"), lf(name, verb="smile"), ""]


def fake_candidates(work, plan):
    """Write every generator's candidates (4 beams per row it decodes) and its finished-file marker."""
    for name in plan["rotation"]:
        gen = plan["generators"][name]
        rows = mmn.read_jsonl(work / "folds" / f"{gen['trained_on']}.decode.jsonl")
        records = []
        for r in rows:
            rid = mmn.row_id(r["split"], r["row"])
            for rank, text in enumerate(fake_beams(gen["arch"], rid, r["output"])):
                records.append({"row": rid, "generator": name, "rank": rank, "text": text, "score": -0.1 * (rank + 1)})
        mmn.write_jsonl(work / "candidates" / f"{name}.jsonl", records)
        mmn.write_json(work / "candidates" / f"{name}.json", {"generator": name, "rows": len(rows), "beams": 4})


@pytest.fixture
def built(tmp_path):
    """Stages 1 and 2 (commands only) on the synthetic rows, fake candidates, stages 4 and 5."""
    work = tmp_path / "work"
    mmn.folds(CONFIG, work, rows=synthetic_rows())
    plan = mmn.train_generators(CONFIG, work)
    fake_candidates(work, plan)
    mmn.select_negatives(CONFIG, work)
    folder = mmn.write_shipment(CONFIG, work)
    return work, plan, folder


# --- stage 1 -------------------------------------------------------------------------------------------


def test_folds_are_the_papers_halves_and_leak_free(tmp_path, capsys):
    rows = synthetic_rows()
    work = tmp_path / "work"
    manifest = mmn.folds(CONFIG, work, rows=rows)
    folds = manifest["folds"]
    train_rows = classification.split_rows(rows["train"], "train")
    a, b = set(folds["train_A"]["rows"]), set(folds["train_B"]["rows"])
    assert not a & b and a | b == set(train_rows) and abs(len(a) - len(b)) <= 1
    assert folds["train_holdout"]["rows"] == classification.split_rows(rows["train"], "train_holdout")
    assert len(folds["train_holdout"]["rows"]) == 2  # len // 20, the classification config's own cut
    assert not set(folds["train_holdout"]["rows"]) & (a | b)
    ga, gb = set(folds["gen_A"]["rows"]), set(folds["gen_B"]["rows"])
    assert not ga & gb and ga | gb == set(range(6))
    assert manifest["training_folds"] == ["train_A", "train_B", "gen_A", "gen_B"]
    assert manifest["decodes"] == {"train_A": ["train_B", "train_holdout", "validation", "test"],
                                   "train_B": ["train_A", "train_holdout", "validation", "test"],
                                   "gen_A": ["gen_B"], "gen_B": ["gen_A"]}
    for fold, targets in manifest["decodes"].items():  # nothing a fold trains on is among what it decodes
        trained = mmn.fold_ids(folds[fold])
        assert not trained & set().union(*(mmn.fold_ids(folds[t]) for t in targets))
    # the data_files rows carry their source row ids and the source's text
    for r in mmn.read_jsonl(work / "folds" / "train_B.jsonl"):
        assert r["split"] == "train" and r["row"] in b and r["output"] == rows["train"][r["row"]]["output"]
    decode = mmn.read_jsonl(work / "folds" / "train_A.decode.jsonl")
    assert len(decode) == len(b) + 2 + 4 + 4
    # the same seed gives the same halves; a rerun skips the stage, a changed file rewrites it
    again = mmn.fold_plan(mmn.SPECS[CONFIG], {s: len(r) for s, r in rows.items()}, rows["train"])[0]
    assert again["train_A"]["rows"] == folds["train_A"]["rows"]
    capsys.readouterr()
    mmn.folds(CONFIG, work, rows=rows)
    assert "skipped" in capsys.readouterr().out
    (work / "folds" / "test.jsonl").write_text("{}\n")
    mmn.folds(CONFIG, work, rows=rows)
    assert "rewriting" in capsys.readouterr().out
    assert len(mmn.read_jsonl(work / "folds" / "test.jsonl")) == 4


def test_cfq_dev_and_test_decode_each_other():
    folds, decodes = mmn.fold_plan(mmn.SPECS["cfq_mcd1_cls"], {"train": 100, "validation": 10, "test": 12})
    assert decodes == {"train_A": ["train_B", "train_holdout"], "train_B": ["train_A", "train_holdout"],
                       "validation": ["test"], "test": ["validation"]}
    assert len(folds["validation"]["rows"]) == 10 and len(folds["train_holdout"]["rows"]) == 5


def test_train_commands_are_train_py_commands(built):
    from hf_recogs.train.arguments import parse_args

    work, plan, _ = built
    assert plan["rotation"] == [f"{arch}-{fold}" for fold in ("train_A", "train_B", "gen_A", "gen_B")
                                for arch in ("transformer_fast", "lstm")]
    for name in plan["rotation"]:
        gen = plan["generators"][name]
        argv = shlex.split(gen["command"])
        assert argv[:2] == ["accelerate", "launch"] and gen["seed"] == 42 and gen["recipe_sha256"]
        exp, targs = parse_args(argv[3:])  # train.py accepts it
        assert exp.dataset is None and exp.seeds == [42] and exp.metric == "sem"
        assert exp.data_files["train"].endswith(f"folds/{gen['trained_on']}.jsonl")
        assert exp.data_files["validation"].endswith(f"folds/{gen['trained_on']}.decode.jsonl")
        assert exp.arch == ("lstm" if name.startswith("lstm") else "transformer")
        assert targs.output_dir == str((work / "generators" / name).resolve())


# --- stage 4 -------------------------------------------------------------------------------------------


def test_selection_follows_the_rotation_and_skips(built):
    work, _, _ = built
    train = {r["source_row"]: r for r in mmn.read_jsonl(work / "selection" / "train.jsonl")}
    validation = {r["source_row"]: r for r in mmn.read_jsonl(work / "selection" / "validation.jsonl")}
    row = next(r for i, r in train.items() if i % 5)
    name = row["output"].split()[0]
    fold = "train_A" if row["source_row"] in set(mmn.read_json(work / "folds" / "manifest.json")["folds"]["train_B"]
                                                 ["rows"]) else "train_B"
    # depth 0: the positive and a SEM-equivalent skipped; depth 1: the theme negative, then its duplicate skipped;
    # depth 2: unparsable skipped, the smile negative; depth 3: the walk negative (3: stop)
    assert [(n["candidate"], n["negative_source"]) for n in row["negatives"]] == [
        (lf(name, role="theme"), f"model:transformer_fast-{fold}:1"),
        (lf(name, verb="smile"), f"model:lstm-{fold}:2"),
        (lf(name, verb="walk"), f"model:transformer_fast-{fold}:3")]
    assert row["negatives"][0]["negative_score"] == pytest.approx(-0.2)
    # validation rows are decoded by the four train-half generators; the first taken is train_A's
    some = next(r for i, r in validation.items() if i % 5)
    assert [n["negative_source"] for n in some["negatives"]] == [
        "model:transformer_fast-train_A:1", "model:lstm-train_A:2", "model:transformer_fast-train_A:3"]
    # no back-fill: rows with nothing usable keep no negative, and are still listed
    assert all(not r["negatives"] for i, r in train.items() if i % 5 == 0) and not validation[0]["negatives"]
    assert sorted(train) == classification.split_rows(synthetic_rows()["train"], "train")
    holdout = mmn.read_jsonl(work / "selection" / "train_holdout.jsonl")
    assert [r["source_row"] for r in holdout] == classification.split_rows(synthetic_rows()["train"],
                                                                            "train_holdout")


def test_choose_rule_on_sparql():
    q = "SELECT DISTINCT ?x0 WHERE { ?x0 a M1 . ?x0 p M2 }"
    beams = [("t", [(0, "SELECT DISTINCT ?x0 WHERE { ?x0 p M2 . ?x0 a M1 . ?x0 a M1 }", -0.1),  # same clause set
                    (1, "SELECT DISTINCT ?x0 WHERE { ?x0 a M1", -0.2),  # does not parse
                    (2, "SELECT count ( * ) WHERE { ?x0 a M1 . ?x0 p M2 }", -0.3)]),  # another query type
             ("l", [(0, "SELECT DISTINCT ?x0 WHERE { ?x0 a M3 }", -0.4),
                    (1, "SELECT DISTINCT ?x0 WHERE { ?x0 a M3 . ?x0 a M3 }", -0.5)])]  # same as the chosen
    spec = mmn.SPECS["cfq_mcd1_cls"]
    chosen = mmn.choose(q, beams, lambda t: mmn.parses("sparql", t), spec.key, spec.same)
    assert [c["negative_source"] for c in chosen] == ["model:l:0", "model:t:2"]
    assert mmn.choose(q, beams, lambda t: mmn.parses("sparql", t), spec.key, spec.same, per_row=1) == chosen[:1]


def test_select_refuses_a_candidate_of_a_training_row(built):
    work, _, _ = built
    name = "lstm-train_A"
    path = work / "candidates" / f"{name}.jsonl"
    trained = mmn.read_json(work / "folds" / "manifest.json")["folds"]["train_A"]["rows"][0]
    records = mmn.read_jsonl(path) + [{"row": f"train:{trained}", "generator": name, "rank": 0, "text": "x",
                                       "score": 0.0}]
    mmn.write_jsonl(path, records)
    with pytest.raises(mmn.NegativesError, match="may not decode"):
        mmn.select_negatives(CONFIG, work)


# --- stage 5 and verify_shipment -------------------------------------------------------------------------


def test_shipment_is_deterministic_and_verifies(built, tmp_path, capsys):
    work, _, folder = built
    manifest = mmn.read_json(folder / "manifest.json")
    assert set(manifest["files"]) == {f"{s}.jsonl.gz" for s in ("train", "train_holdout", "validation", "test", "gen")}
    for name, entry in manifest["files"].items():
        data = (folder / name).read_bytes()
        assert data[4:8] == b"\0\0\0\0"  # gzip mtime 0
        assert mmn.sha256_file(folder / name) == entry["sha256"]
    assert manifest["generators"]["lstm-gen_A"]["trained_on"] == "gen_A"
    assert manifest["folds"]["gen_A"]["rows"] and manifest["commit"] and manifest["selection"]["beams"] == 4
    again = mmn.write_shipment(CONFIG, work, tmp_path / "again")
    for name in manifest["files"]:
        assert (again / name).read_bytes() == (folder / name).read_bytes()
    assert mmn.verify_shipment(folder) == []
    mmn.select_negatives(CONFIG, work)  # a rerun: both stages see their outputs check out
    assert mmn.write_shipment(CONFIG, work) == folder
    assert capsys.readouterr().out.count("skipped") == 2
    line = gzip.decompress((folder / "train.jsonl.gz").read_bytes()).decode().splitlines()[1]
    assert line == json.dumps(json.loads(line), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert mmn.main(["verify", str(folder)]) == 0


def _rewrite(folder, split, edit):
    """Change one shipped file's rows with ``edit`` and re-pin its checksum (a shipment edited by hand)."""
    path = folder / f"{split}.jsonl.gz"
    rows = [json.loads(x) for x in gzip.decompress(path.read_bytes()).decode().splitlines()]
    edit(rows)
    path.write_bytes(mmn.gzip_bytes("".join(mmn.dump_line(r) + "\n" for r in rows)))
    manifest = mmn.read_json(folder / "manifest.json")
    manifest["files"][path.name]["sha256"] = mmn.sha256_file(path)
    mmn.write_json(folder / "manifest.json", manifest)


def test_the_manifest_says_how_each_generator_was_really_trained(built, tmp_path):
    """The plan's command is the one the building code would give; what ran is in the generator's run record
    (another commit, extra overrides), and the manifest carries that."""
    work, plan, _ = built
    gen = plan["generators"]["lstm-gen_A"]
    record = {"command": "accelerate launch train.py configs/recogs_pos_lstm.yaml save_steps=250",
              "environment": {"git_commit": "1979fb1" + "0" * 33, "git_dirty": False},
              "train": {"global_step": 3300, "runtime_s": 4800.5}}
    mmn.write_json(mmn.generator_dir(work, "lstm-gen_A", gen["seed"]) / "results.json", record)
    manifest = mmn.read_json(mmn.write_shipment(CONFIG, work, tmp_path / "with_record") / "manifest.json")
    assert manifest["generators"]["lstm-gen_A"]["trained"] == {
        "commit": "1979fb1" + "0" * 33, "dirty": False, "command": record["command"], "steps": 3300,
        "runtime_s": 4800.5}
    assert manifest["generators"]["lstm-gen_B"]["trained"] is None  # no record: not trained here


def test_verify_flags_a_generator_that_decoded_its_training_row(built):
    _, _, folder = built
    manifest = mmn.read_json(folder / "manifest.json")
    validation = [json.loads(x) for x in gzip.decompress((folder / "validation.jsonl.gz").read_bytes()).splitlines()]
    row = next(r for r in validation if r["negatives"])
    # transformer_fast-train_A decoded this validation row; pretend it had trained on validation
    manifest["generators"]["transformer_fast-train_A"]["trained_on"] = "validation"
    mmn.write_json(folder / "manifest.json", manifest)
    problems = mmn.verify_shipment(folder)
    assert any("rows it trained on" in p for p in problems)
    assert any(f"validation row {row['source_row']}: negative from transformer_fast-train_A, which trained on this row"
               in p for p in problems)


def test_verify_flags_broken_filters_and_checksums(built):
    _, _, folder = built

    def spoil(rows):
        row = next(r for r in rows if len(r["negatives"]) == 3)
        row["negatives"][0]["candidate"] = row["output"].replace(" AND", " ;").replace("agent (", "agent")  # no LF
        row["negatives"][1]["candidate"] = row["output"]  # the positive itself
        row["negatives"][2]["candidate"] = row["negatives"][1]["candidate"]
        row["negatives"].append({**row["negatives"][2], "negative_source": "model:nobody:0"})

    _rewrite(folder, "train", spoil)
    problems = mmn.verify_shipment(folder)
    for words in ("does not parse", "equivalent to the positive", "more than 3", "unknown source"):
        assert any(words in p for p in problems), words
    (folder / "test.jsonl.gz").write_bytes(b"")
    assert mmn.verify_shipment(folder) == ["test.jsonl.gz: SHA-256 differs from the manifest"]
    assert mmn.main(["verify", str(folder)]) == 1


def test_report_counts_negatives_and_changed_conjuncts(built):
    _, _, folder = built
    out = io.StringIO()
    summary = mmn.report(folder, out)
    train = summary["train"]
    zero = sum(1 for i in classification.split_rows(synthetic_rows()["train"], "train") if i % 5 == 0)
    assert train["per_row"] == {0: zero, 3: train["rows"] - zero}
    assert train["changed"] == {1: 3 * (train["rows"] - zero)}  # one conjunct replaced in each
    assert train["ranks"] == {1: train["rows"] - zero, 2: train["rows"] - zero, 3: train["rows"] - zero}
    assert set(summary) == {"train", "train_holdout", "validation", "test", "gen"}
    assert "| subj_to_obj |" in out.getvalue() and "conjuncts changed: 1:" in out.getvalue()
    assert mmn.difference("lf", lf("Emma"), "Emma ( 0 ) ; walk ( 1 ) AND theme ( 1 , 0 )") == 2


# --- stage 3 (tiny random models) ---------------------------------------------------------------------------


@pytest.mark.parametrize("arch, overrides", [
    ("transformer", {"d_model": 16, "encoder_layers": 1, "decoder_layers": 1, "encoder_ffn_dim": 32,
                     "decoder_ffn_dim": 32, "encoder_attention_heads": 2, "decoder_attention_heads": 2}),
    ("lstm", {"hidden_size": 16}),
])
def test_decode_candidates_on_a_tiny_model(tmp_path, arch, overrides):
    import torch

    from hf_recogs.models import build_model
    from hf_recogs.tokenization import build_tokenizer

    rows = synthetic_rows(train=6, validation=0, test=0, gen=0)
    work = tmp_path / "work"
    mmn.folds(CONFIG, work, rows=rows)
    plan = mmn.train_generators(CONFIG, work, archs={"tiny": "configs/smoke.yaml"})
    assert plan["rotation"] == ["tiny-train_A", "tiny-train_B"]
    tokenizer = build_tokenizer([r["input"] for r in rows["train"]], [r["output"] for r in rows["train"]])
    torch.manual_seed(0)
    model = build_model(arch, tokenizer, max_positions=32, **overrides)
    folder = mmn.generator_dir(work, "tiny-train_A", 42)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    (folder / "results.json").write_text(json.dumps({"bf16": False}))
    beams = mmn.generate_beams(*mmn.load_generator(folder, "cpu"), ["Liam ran ."], max_length=10)
    assert len(beams) == 1 and len(beams[0]) == 4
    assert [s for _, s in beams[0]] == sorted((s for _, s in beams[0]), reverse=True)

    decode_rows = mmn.read_jsonl(work / "folds" / "train_A.decode.jsonl")
    assert len(decode_rows) == 3  # train_B's rows: no hold-out at 6 rows
    first = mmn.row_id(decode_rows[0]["split"], decode_rows[0]["row"])
    partial = work / "candidates" / "tiny-train_A.jsonl.partial"  # a killed run: one row done, one line cut
    partial.parent.mkdir(parents=True)
    partial.write_text("".join(mmn.dump_line({"row": first, "generator": "tiny-train_A", "rank": k, "text": "x",
                                              "score": -1.0 - k}) + "\n" for k in range(4)) + '{"row": "tr')
    mmn.decode_candidates(work, ["tiny-train_A"], batch_size=2, max_length=10, device="cpu")
    candidates = mmn.read_jsonl(work / "candidates" / "tiny-train_A.jsonl")
    assert len(candidates) == 12 and not partial.exists()
    trained = mmn.fold_ids(mmn.read_json(work / "folds" / "manifest.json")["folds"]["train_A"])
    by_row = {}
    for c in candidates:
        assert c["generator"] == "tiny-train_A" and c["row"] not in trained and isinstance(c["score"], float)
        by_row.setdefault(c["row"], []).append(c)
    assert set(by_row) == {mmn.row_id(r["split"], r["row"]) for r in decode_rows}
    for group in by_row.values():
        assert [c["rank"] for c in group] == [0, 1, 2, 3]
        assert [c["score"] for c in group] == sorted((c["score"] for c in group), reverse=True)
    assert [c["text"] for c in by_row[first]] == ["x"] * 4  # kept from the killed run
    meta = mmn.read_json(work / "candidates" / "tiny-train_A.json")
    assert meta["beams"] == 4 and meta["rows"] == 3 and meta["bf16"] is False
    with pytest.raises(mmn.NegativesError, match="not trained"):
        mmn.decode_candidates(work, ["tiny-train_B"], device="cpu")


def test_beams_stop_at_a_transformer_generators_position_table(tmp_path):
    """A beam that never ends (an untrained model) is cut where Bart's learned positions end, not at a longer
    ``max_length`` (recogs_pos_cls asks 547: 1.5 x its longest gen output, past the fast recipe's 512)."""
    import torch

    from hf_recogs.models import build_model
    from hf_recogs.tokenization import build_tokenizer

    rows = synthetic_rows(train=6, validation=0, test=0, gen=0)
    tokenizer = build_tokenizer([r["input"] for r in rows["train"]], [r["output"] for r in rows["train"]])
    torch.manual_seed(0)
    model = build_model("transformer", tokenizer, max_positions=12, d_model=16, encoder_layers=1, decoder_layers=1,
                        encoder_ffn_dim=32, decoder_ffn_dim=32, encoder_attention_heads=2, decoder_attention_heads=2)
    model.eval()
    assert mmn.beam_length_limit(model, 40) == 12 and mmn.beam_length_limit(model, 8) == 8
    beams = mmn.generate_beams(model, tokenizer, ["Liam ran ."], max_length=40)
    assert len(beams[0]) == 4
    assert max(len(tokenizer(text)["input_ids"]) for text, _ in beams[0]) <= 12


# --- the real folds (mirror) ---------------------------------------------------------------------------------


@pytest.mark.mirror
def test_recogs_pos_folds_agree_with_the_classification_config(mirror, tmp_path):
    spec = mmn.SPECS[CONFIG]
    rows = mmn.load_rows(spec)
    folds, decodes = mmn.fold_plan(spec, {s: len(r) for s, r in rows.items()}, rows["train"])
    train = classification.split_rows(rows["train"], "train")
    assert sorted(folds["train_A"]["rows"] + folds["train_B"]["rows"]) == train
    assert folds["train_holdout"]["rows"] == classification.holdout_rows(len(rows["train"]))
    assert sorted(folds["gen_A"]["rows"] + folds["gen_B"]["rows"]) == list(range(len(rows["gen"])))
    assert decodes["train_A"] == ["train_B", "train_holdout", "validation", "test"]


def test_installed_shipment_is_what_the_classification_config_reads(built, tmp_path, monkeypatch, capsys):
    _, _, folder = built
    package = tmp_path / "package"
    target = mmn.install(folder, package)
    pin = capsys.readouterr().out.split("MODEL_NEGATIVES['recogs_pos_cls'] = ")[1].strip().strip("'")
    assert pin == mmn.sha256_file(target / "manifest.json")
    monkeypatch.setattr(classification, "SHIPMENTS", package)
    monkeypatch.setattr(classification, "MODEL_NEGATIVES", {CONFIG: pin})
    rows = synthetic_rows()
    _, shipped = mmn.read_shipment(folder)
    for split in ("train", "train_holdout", "validation", "gen"):
        source = rows["train" if split == "train_holdout" else split]
        picked = classification.split_rows(source, split)
        got = classification._model_negatives(CONFIG, split, source, picked, per_row=3)
        by_row = {r["source_row"]: r["negatives"] for r in shipped[split]}
        assert got == [by_row[i] for i in picked]
        assert all(n["negative_source"].startswith("model:") for negs in got for n in negs)
    assert any(len(n) == 0 for n in got) and any(len(n) == 3 for n in got)  # no back-fill, as selected


def test_install_refuses_a_shipment_that_does_not_verify(built, tmp_path, capsys):
    _, _, folder = built

    def duplicate_a_negative(rows):
        row = next(r for r in rows if r["negatives"])
        row["negatives"].append(dict(row["negatives"][0]))

    _rewrite(folder, "validation", duplicate_a_negative)
    with pytest.raises(mmn.NegativesError, match="does not check out") as err:
        mmn.install(folder, tmp_path / "package")
    assert "\n" not in str(err.value) and not (tmp_path / "package").exists()
