"""The ``hf-recogs`` command line, run as a user runs it (a subprocess), on SCAN from the mirror.

Expected sizes are the official SCAN simple-split files (train 16,728 and test 4,182 commands, Lake & Baroni
2018's release), not numbers read from our code.
"""

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

SCAN_SIMPLE = {"train": 16_728, "test": 4_182}


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hf_recogs", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "hf-recogs"
    assert script.is_file(), "pip install -e . registers the hf-recogs console script"
    out = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "score" in out.stdout


@pytest.mark.parametrize("command", ["list", "show", "score", "train", "publish", "push", "export"])
def test_every_subcommand_has_help(tmp_path, command):
    out = run_cli(command, "--help", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "usage" in out.stdout.lower()


def test_list_names_every_config(tmp_path):
    import hf_recogs

    out = run_cli("list", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    listed = {line.split()[0] for line in out.stdout.splitlines() if line and not line.startswith(" ")}
    assert listed == set(hf_recogs.list_configs())
    assert "scan_simple" in listed and "BSD" in out.stdout


def test_unknown_config_is_one_line(tmp_path):
    out = run_cli("show", "scann_simple", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "valid configs" in out.stderr and "scan_simple" in out.stderr


@pytest.mark.mirror
def test_show_gives_sizes_rows_and_citation(mirror, tmp_path):
    out = run_cli("show", "scan_simple", "--rows", "2", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    for split, n in SCAN_SIMPLE.items():
        assert f"[{split}] {n:,} rows" in out.stdout
    assert "lake-baroni-2018" in out.stdout and '"input": "' in out.stdout


@pytest.mark.mirror
def test_score_jsonl_and_tsv(mirror, tmp_path, monkeypatch):
    import hf_recogs

    monkeypatch.chdir(tmp_path)
    rows = list(hf_recogs.load_dataset("scan_simple", split="test"))
    assert len(rows) == SCAN_SIMPLE["test"]
    wrong = 10  # the first ten predictions are wrong, the rest are the gold outputs
    preds = ["WRONG"] * wrong + [r["output"] for r in rows[wrong:]]
    jsonl = tmp_path / "preds.jsonl"
    jsonl.write_text("".join(json.dumps({"input": r["input"], "prediction": p}) + "\n" for r, p in zip(rows, preds)))
    out = run_cli("score", str(jsonl), "--config", "scan_simple", "--split", "test", "--json", "s.json",
                  cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    scores = json.loads((tmp_path / "s.json").read_text())
    assert scores["n"] == len(rows) and scores["exact_match"] == (len(rows) - wrong) / len(rows)
    assert "OVERALL" in out.stdout

    tsv = tmp_path / "preds.tsv"
    tsv.write_text("".join(f"{r['input']}\t{p}\n" for r, p in zip(rows, preds)))
    out = run_cli("score", str(tsv), "--config", "scan_simple", "--split", "test", "--json", "t.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "t.json").read_text())["exact_match"] == scores["exact_match"]


@pytest.mark.mirror
def test_score_refuses_misaligned_files_in_one_line(mirror, tmp_path, monkeypatch):
    import hf_recogs

    monkeypatch.chdir(tmp_path)
    rows = list(hf_recogs.load_dataset("scan_simple", split="test"))
    short = tmp_path / "short.txt"
    short.write_text("".join(r["output"] + "\n" for r in rows[:-1]))
    shuffled = tmp_path / "shuffled.jsonl"
    swapped = [rows[1], rows[0], *rows[2:]]
    shuffled.write_text("".join(json.dumps({"input": r["input"], "prediction": r["output"]}) + "\n" for r in swapped))
    for path, needle in ((short, "4,181 predictions for the 4,182 rows"), (shuffled, "row 1 is for input")):
        out = run_cli("score", str(path), "--config", "scan_simple", "--split", "test", cwd=tmp_path)
        assert out.returncode == 2 and out.stderr.count("\n") == 1 and needle in out.stderr, out.stderr


def test_train_with_launcher_options_checks_the_config_first(tmp_path):
    # `accelerate launch train.py` re-raises a failed run as its own traceback; `hf-recogs train` with launcher
    # options validates here first, so the user reads one line.
    from test_training import write_config

    cfg = write_config(tmp_path)
    out = run_cli("train", "--num_processes", "1", str(cfg), "bogus_key=1", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "bogus_key" in out.stderr and "Traceback" not in out.stderr


def test_train_through_accelerate_without_its_defaults_warning(tmp_path):
    from test_training import write_config

    cfg = write_config(tmp_path, num_train_epochs=1, max_train_samples=64, eval_splits=["validation"])
    out = run_cli("train", "--num_processes", "1", str(cfg), cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert (tmp_path / "out" / "seed_7" / "results.json").is_file()
    assert "were not passed to `accelerate launch`" not in out.stderr


@pytest.mark.mirror
def test_score_reports_the_configs_category_groups(mirror, tmp_path, monkeypatch):
    """COGS gen scored by `score` carries the groups the cogs config declares (lexical / structural /
    lexical_15, 1,000 rows per category) and records each category's groups."""
    import hf_recogs

    monkeypatch.chdir(tmp_path)
    rows = list(hf_recogs.load_dataset("cogs", split="gen"))
    preds = ["WRONG" if r["category"] == "cp_recursion" else r["output"] for r in rows]
    path = tmp_path / "predictions_gen.jsonl.gz"  # gzipped, as published runs store them
    path.write_bytes(gzip.compress("".join(json.dumps({"input": r["input"], "prediction": p}) + "\n"
                                           for r, p in zip(rows, preds)).encode()))
    out = run_cli("score", str(path), "--config", "cogs", "--split", "gen", "--json", "s.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    scores = json.loads((tmp_path / "s.json").read_text())
    assert list(scores["groups"]) == ["lexical", "structural", "lexical_15"]
    assert {g: (s["n"], s["sem_match"]) for g, s in scores["groups"].items()} == {
        "lexical": (18_000, 1.0), "structural": (3_000, 2 / 3), "lexical_15": (15_000, 1.0)}
    assert scores["category_groups"]["cp_recursion"] == ["structural"]
    # COGS gen nests its recursion rows 3 to 12 deep (Kim & Linzen 2020), 100 rows at each depth
    depths = [str(d) for d in range(3, 13)]
    assert {c: {d: (s["n"], s["sem_match"]) for d, s in by.items()} for c, by in scores["per_depth"].items()} == {
        "cp_recursion": {d: (100, 0.0) for d in depths}, "pp_recursion": {d: (100, 1.0) for d in depths}}
    assert "  depth 12 " in out.stdout
    assert scores["category_groups"]["subj_to_obj_proper"] == ["lexical"]
    assert "[structural]" in out.stdout


def test_score_says_a_broken_gzip_file_in_one_line(tmp_path):
    path = tmp_path / "preds.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"prediction": "x"}\n')[:-6])  # cut short, as by an interrupted copy
    out = run_cli("score", str(path), "--config", "cogs", cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "not a complete gzip file" in out.stderr
    damaged = bytearray(gzip.compress(b'{"prediction": "x"}\n' * 50))
    damaged[12:-8] = bytes(b ^ 0xFF for b in damaged[12:-8])  # header and trailer intact, deflate data not
    path.write_bytes(bytes(damaged))
    out = run_cli("score", str(path), "--config", "cogs", cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "not a complete gzip file" in out.stderr


def test_score_table_does_not_print_an_imperfect_score_as_100():
    from hf_recogs.cli import _table

    near = {"n": 30_000, "sem_match": 29_999 / 30_000, "exact_match": 29_999 / 30_000}
    summary = {"primary": "sem_match", **near, "per_category": {"cp_recursion": near}, "groups": {}}
    overall = next(line for line in _table(summary).splitlines() if line.startswith("OVERALL")).split()
    assert overall[-2:] == ["99.997", "99.997"]  # 99.99667: ".2f" printed 100.00


@pytest.mark.mirror
def test_score_imports_neither_torch_nor_transformers(mirror, tmp_path):
    """`hf-recogs score` reads the config's metric from the catalogue, not from the training package: importing
    torch and transformers would cost seconds before the first row is scored."""
    import hf_recogs

    path = tmp_path / "preds.txt"
    path.write_text("".join(r["output"] + "\n" for r in hf_recogs.load_dataset("scan_simple", split="test")))
    code = ("import json, sys\nfrom hf_recogs.cli import main\n"
            f"assert main(['score', {str(path)!r}, '--config', 'scan_simple', '--split', 'test']) == 0\n"
            "print(json.dumps([m for m in ('torch', 'transformers') if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and "OVERALL" in out.stdout, out.stderr[-2000:]
    assert json.loads(out.stdout.splitlines()[-1]) == []


def test_score_table_stays_aligned_with_long_category_names():
    from hf_recogs.cli import _table

    scores = {"n": 10, "exact_match": 0.5}
    long_name = "a_category_name_well_beyond_forty_characters_long"
    summary = {"primary": "exact_match", **scores, "per_category": {long_name: scores, "short": scores},
               "groups": {"group": scores}}
    lines = _table(summary).splitlines()
    assert [line.split()[0] for line in lines] == ["category", long_name, "short", "[group]", "OVERALL"]
    assert len({len(line) for line in lines}) == 1  # every column ends where the header's does
    assert lines[1].startswith(long_name + " ")


def test_publish_errors_are_one_line_from_the_cli_and_the_module(tmp_path):
    run = tmp_path / "run"
    (run / "seed_1").mkdir(parents=True)
    (run / "seed_1" / "results.json").write_text(json.dumps({"seed": 1, "splits": {}}))
    out = run_cli("publish", str(tmp_path / "nothing"), str(tmp_path / "dest"), cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith("hf-recogs publish: error:") and "no finished seed" in out.stderr
    out = subprocess.run([sys.executable, "-m", "hf_recogs.publish.results_folder", str(run), str(tmp_path / "dest"),
                          "--checkpoint", "best"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert "--checkpoint best: give 'median' or a seed number" in out.stderr
    assert not (tmp_path / "dest").exists()


# ---------------------------------------------------------------------------------------------------------
# What `score` reads: by content, not name; inputs on every row or none; one line for what it cannot read


def _jsonl(rows) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


@pytest.mark.parametrize("name", ["preds.txt", "preds.gz", "preds", "preds.tsv"])
def test_read_predictions_knows_jsonl_by_its_content(tmp_path, name):
    """A valid JSONL file named .txt, .gz or without extension was scored line by line as raw text."""
    from hf_recogs.cli import read_predictions

    rows = [{"input": "walk", "prediction": "I_WALK"}, {"input": "run", "prediction": "I_RUN"}]
    path = tmp_path / name
    path.write_text(_jsonl(rows))
    assert read_predictions(path) == (["I_WALK", "I_RUN"], ["walk", "run"])
    path.write_bytes(gzip.compress(_jsonl(rows).encode()))  # gzipped whatever its name
    assert read_predictions(path) == (["I_WALK", "I_RUN"], ["walk", "run"])


def test_read_predictions_keeps_form_feeds_and_drops_a_byte_order_mark(tmp_path):
    from hf_recogs.cli import read_predictions

    path = tmp_path / "preds.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + _jsonl([{"prediction": "a\u2028b"}, {"prediction": "c"}]).encode())
    assert read_predictions(path) == (["a\u2028b", "c"], None)  # not "line 1 is not JSON"
    text = tmp_path / "preds.txt"
    text.write_bytes("\ufeffI_WALK\nI_RUN\x0cI_JUMP\r\nI_LOOK\n".encode())
    assert read_predictions(text) == (["I_WALK", "I_RUN\x0cI_JUMP", "I_LOOK"], None)  # 3 rows, not 4


def test_read_predictions_tsv_blank_lines(tmp_path):
    from hf_recogs.cli import CliError, read_predictions

    path = tmp_path / "preds.tsv"
    path.write_text("walk\tI_WALK\nrun\tI_RUN\n\n\n")  # blank lines that end the file
    assert read_predictions(path) == (["I_WALK", "I_RUN"], ["walk", "run"])
    path.write_text("walk\tI_WALK\n\nrun\tI_RUN\n")
    with pytest.raises(CliError, match="line 2 is blank; a TSV file has 'input<TAB>prediction' on every line"):
        read_predictions(path)
    path.write_text("walk\tI_WALK\nI_RUN\n")
    with pytest.raises(CliError, match="line 2 has 1 columns"):
        read_predictions(path)


def test_read_predictions_needs_inputs_on_every_row_or_none(tmp_path):
    """One row without `input` switched the order check off for every row."""
    from hf_recogs.cli import CliError, read_predictions

    path = tmp_path / "preds.jsonl"
    path.write_text(_jsonl([{"input": "run", "prediction": "I_RUN"}, {"prediction": "I_WALK"},
                            {"input": "jump", "prediction": "I_JUMP"}]))
    with pytest.raises(CliError, match='line 2 has no string "input" field while other lines have one'):
        read_predictions(path)
    path.write_text(_jsonl([{"prediction": "I_RUN"}, {"prediction": "I_WALK"}]))
    assert read_predictions(path) == (["I_RUN", "I_WALK"], None)


def test_read_predictions_unreadable_is_one_line(tmp_path, monkeypatch):
    from hf_recogs.cli import CliError, read_predictions

    with pytest.raises(CliError, match="cannot be read"):
        read_predictions(tmp_path)  # a folder
    path = tmp_path / "preds.txt"
    path.write_text("x\n")

    def denied(self):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)
    with pytest.raises(CliError, match=r"cannot be read \(Permission denied\)"):
        read_predictions(path)


@pytest.mark.mirror
@pytest.mark.parametrize("where", ["folder", "missing_folder"])
def test_score_checks_the_json_path_before_the_table(mirror, tmp_path, where):
    """--json into a folder printed the table, then a traceback."""
    path = tmp_path / "preds.txt"
    path.write_text("I_WALK\n" * SCAN_SIMPLE["test"])
    (tmp_path / "out").mkdir()
    target = "out" if where == "folder" else "nowhere/s.json"
    out = run_cli("score", str(path), "--config", "scan_simple", "--split", "test", "--json", target, cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr
    assert out.stdout == "" and ("is a folder" if where == "folder" else "does not exist") in out.stderr


@pytest.mark.mirror
def test_score_shuffled_rows_with_one_input_missing_or_none(mirror, tmp_path, monkeypatch):
    """A shuffled JSONL where one row lacks `input` scored 0.07 instead of stopping; plain text, which cannot
    be checked, says so."""
    import hf_recogs

    monkeypatch.chdir(tmp_path)
    rows = list(hf_recogs.load_dataset("scan_simple", split="test"))
    swapped = [rows[1], rows[0], *rows[2:]]
    records = [{"input": r["input"], "prediction": r["output"]} for r in swapped]
    del records[5]["input"]
    shuffled = tmp_path / "shuffled.txt"  # JSONL by its content
    shuffled.write_text(_jsonl(records))
    out = run_cli("score", str(shuffled), "--config", "scan_simple", "--split", "test", cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and 'line 6 has no string "input"' in out.stderr
    text = tmp_path / "swapped.txt"
    text.write_text("".join(r["output"] + "\n" for r in swapped))
    out = run_cli("score", str(text), "--config", "scan_simple", "--split", "test", "--json", "s.json", cwd=tmp_path)
    assert out.returncode == 0 and "order not checked" in out.stdout, out.stderr
    assert json.loads((tmp_path / "s.json").read_text())["order_checked"] is False


def test_sygns_table_shows_exact_match_once_and_the_undecided_counts():
    from hf_recogs.cli import _table
    from hf_recogs.registry import get_config
    from hf_recogs.scoring import score_rows, summarize

    gold = "all x1.((cat(x1) & small(x1)) -> -dance(x1))"
    records = score_rows([gold, "all x1.(cat(x1) -> -dance(x1))"], [gold, gold], ["UNI:ADJ+NEG"] * 2, "sygns")
    records[1]["sygns"]["p_to_g"] = None  # as z3 leaves a direction it cannot settle within its budget
    summary = summarize(records, "sygns", get_config("sygns_systematicity_one").category_groups)
    lines = _table(summary).splitlines()
    assert lines[0].split() == ["category", "n", "exact_match", "G⇔P", "undecided"]
    overall = next(line for line in lines if line.startswith("OVERALL")).split()
    assert overall == ["OVERALL", "2", "50.00", "50.00", "1"]
    drs = "b1 REF x1 [SEP] b1 cat x1"
    records = score_rows([drs, "b1 REF x1"], [drs, drs], ["a", "a"], "sygns")
    lines = _table(summarize(records, "sygns")).splitlines()
    assert lines[0].split() == ["category", "n", "exact_match", "COUNTER", "F1", "undecided"]
    assert lines[-1].split()[-1] == "0"
