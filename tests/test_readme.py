"""What README.md tells a user to run is run by a test, and what it states is true.

Every shell command in README's ```bash blocks must start with one of the prefixes of ``RUN_BY``, which names
the test(s) that run it, or a shortened run of it where the real one trains for minutes or hours (the same
code path on a smaller slice). A command nobody runs fails here, and so does an entry that names a test which
no longer exists or a prefix that no README command uses any more.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from conftest import ROOT

README = ROOT / "README.md"

# The second of README's two top commands: CI (.ci/run) runs it verbatim, so it must not change by a byte.
TEST_COMMAND = ('python3 -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 && '
                'pip install -e ".[test]" && python -m pytest -n 2 --dist worksteal')

# command prefix -> the tests that run it (tests/<file>.py::<test>)
RUN_BY: dict[str, tuple[str, ...]] = {
    # 1. the smoke job: the same config on a smaller slice, and the launcher on a tiny config
    "python3 -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 && pip install -e . && "
    "HF_RECOGS_MIRROR=../shared/mirror accelerate launch train.py configs/smoke.yaml": (
        "tests/test_training.py::test_smoke_config_runs",
        "tests/test_cli.py::test_train_through_accelerate_without_its_defaults_warning",
    ),
    # 2. the test command: CI runs it (.ci/run), this file checks that it is the one CI reads
    TEST_COMMAND: ("tests/test_readme.py::test_ci_runs_the_readme_test_command",),
    "hf-recogs list": ("tests/test_cli.py::test_list_names_every_config",),
    "hf-recogs show": ("tests/test_cli.py::test_show_gives_sizes_rows_and_citation",),
    "hf-recogs score": ("tests/test_cli.py::test_score_jsonl_and_tsv",),
    "hf-recogs errors": ("tests/test_errors.py::test_the_published_seed_66_analysis_is_recomputed",),
    # training runs of the shipped configs take minutes to hours: every config parses with its overrides, and
    # the launcher trains a small config end to end
    "accelerate launch train.py configs/recogs_pos_transformer_fast.yaml seeds=": (
        "tests/test_training.py::test_paper_configs_parse",
        "tests/test_cli.py::test_train_through_accelerate_without_its_defaults_warning",
    ),
    "accelerate launch train.py configs/recogs_pos_transformer.yaml seeds=[42] learning_rate=": (
        "tests/test_training.py::test_paper_configs_parse",
        "tests/test_training.py::test_yaml_plus_overrides",
    ),
    "accelerate launch train.py configs/recogs_pos_structure_best_transformer_fast.yaml seeds=": (
        "tests/test_training.py::test_best_structure_config_trains_the_published_runs",
        "tests/test_structure_transformer.py::test_a_tiny_train_run_records_the_structure_track",
    ),
    "accelerate launch train.py configs/recogs_pos_transformer_fast.yaml do_train=false "
    "model_name_or_path=": (
        "tests/test_training.py::test_readme_evaluation_command_on_the_published_fast_model",
    ),
    "accelerate launch train.py configs/smoke.yaml resume_from_checkpoint=true": (
        "tests/test_training.py::test_resume_after_sigkill_matches_uninterrupted",
    ),
    "accelerate launch --multi_gpu --num_processes 2 train.py": (
        "tests/test_training.py::test_ddp_two_processes_cpu",
    ),
    "accelerate launch train.py configs/smoke.yaml report_to=tensorboard": (
        "tests/test_training.py::test_tensorboard_logging_writes_events",
    ),
    "tensorboard --logdir ": (
        "tests/test_readme.py::test_tensorboard_event_files_go_to_the_seed_folders_runs",
        "tests/test_training.py::test_tensorboard_logging_writes_events",
    ),
    "hf-recogs publish ": ("tests/test_training.py::test_publish_run_to_results_folder",
                           "tests/test_cli.py::test_publish_errors_are_one_line_from_the_cli_and_the_module"),
    "hf-recogs push ": ("tests/test_model_push.py::test_push_roundtrip_lstm",),
    "python -c \"import hf_recogs; print(hf_recogs.load_dataset('recogs_pos_cls'": (
        "tests/test_classification_data.py::test_recogs_pos_cls_loads_and_every_row_keeps_the_filters",
    ),
    "accelerate launch train.py configs/recogs_pos_cls_structure.yaml": (
        "tests/test_classification_training.py::test_readme_classification_command_through_the_launcher",
        "tests/test_training.py::test_paper_configs_parse",
    ),
    "python -m hf_recogs.report.results_page": (
        "tests/test_results_page.py::test_committed_page_equals_the_generated_one",
        "tests/test_results_page.py::test_check_reports_a_stale_page_in_one_line",
    ),
}


def readme_commands(text: str) -> list[str]:
    """The shell commands of the ```bash blocks: one per line (a trailing backslash continues it), comments
    and trailing ``# ...`` remarks dropped."""
    out = []
    for block in re.findall(r"^```bash\n(.*?)^```", text, flags=re.M | re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#\s.*$", "", line).strip()
            if line and not line.startswith("#"):
                out.append(line)
    return out


def _test_exists(test_id: str) -> bool:
    path, _, name = test_id.partition("::")
    file = ROOT / path
    pattern = rf"^(?:async )?def {re.escape(name)}\("
    return file.is_file() and re.search(pattern, file.read_text(encoding="utf-8"), flags=re.M) is not None


def test_every_readme_command_is_run_by_a_test():
    commands = readme_commands(README.read_text(encoding="utf-8"))
    assert len(commands) >= 10, commands
    unrun = [c for c in commands if not any(c.startswith(prefix) for prefix in RUN_BY)]
    assert not unrun, ("README commands no test runs (run them in a test and add them to RUN_BY in "
                       "tests/test_readme.py):\n" + "\n".join(unrun))
    unused = [p for p in RUN_BY if not any(c.startswith(p) for c in commands)]
    assert not unused, f"RUN_BY entries no README command uses any more: {unused}"
    missing = sorted({t for tests in RUN_BY.values() for t in tests if not _test_exists(t)})
    assert not missing, f"RUN_BY names tests that do not exist: {missing}"


def test_command_extraction():
    text = ("```bash\n# a comment\nhf-recogs list   # with a remark\nfoo \\\n  --bar\n```\n"
            "```python\nx = 1\n```\n")
    assert readme_commands(text) == ["hf-recogs list", "foo    --bar"]


def test_ci_runs_the_readme_test_command():
    lines = README.read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("# 1. "))
    second = next(i for i, line in enumerate(lines) if line.startswith("# 2. "))
    assert lines[0].startswith("# ") and first < second and second < 12, "the two commands open the README"
    assert lines[second + 1] == TEST_COMMAND
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "awk '/^# 2\\. /{getline; print; exit}' README.md" in ci


def test_readme_subcommands_exist():
    from hf_recogs.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    commands = readme_commands(README.read_text(encoding="utf-8"))
    used = {c.split()[1] for c in commands if c.startswith("hf-recogs ")}
    assert used and used <= set(sub.choices), f"hf-recogs lacks README's {sorted(used - set(sub.choices))}"


def test_readme_headline_table_is_the_generated_one():
    from hf_recogs.report.results_page import headline_table

    table = headline_table(ROOT / "results")
    assert table in README.read_text(encoding="utf-8"), (
        "README's results table differs from hf_recogs.report.results_page.headline_table(results/):\n"
        + table)
    assert table in (ROOT / "docs/RESULTS.md").read_text(encoding="utf-8")


def test_tensorboard_event_files_go_to_the_seed_folders_runs():
    """README: with report_to=tensorboard the Trainer writes to <output_dir>/seed_<n>/runs/<date>_<host>/.
    The Trainer's output_dir is the seed folder (tests/test_training.py checks that the event files appear
    under the run), transformers 5 has no logging_dir option, and its TensorBoard callback defaults to
    output_dir/runs/."""
    from pathlib import PurePath

    from transformers import Seq2SeqTrainingArguments
    from transformers.integrations.integration_utils import TensorBoardCallback, default_logdir

    assert PurePath(default_logdir()).parts[0] == "runs"
    assert "logging_dir" not in Seq2SeqTrainingArguments.__dataclass_fields__
    import inspect

    assert "TENSORBOARD_LOGGING_DIR" in inspect.getsource(TensorBoardCallback)


@pytest.mark.skipif(not (ROOT / "results" / "scan_length_lstm" / "seed_66" / "model.safetensors").exists(),
                    reason="the published LSTM checkpoint is not in this checkout")
def test_lstm_checkpoint_needs_hf_recogs_models_or_remote_code():
    """README: plain from_pretrained refuses the published LSTM after `import hf_recogs` alone and loads it
    after `import hf_recogs.models` (trust_remote_code=True: tests/test_published_checkpoint.py)."""
    folder = ROOT / "results" / "scan_length_lstm" / "seed_66"
    script = (
        "import hf_recogs\n"
        "from transformers import AutoModelForSeq2SeqLM\n"
        "try:\n"
        f"    AutoModelForSeq2SeqLM.from_pretrained({str(folder)!r})\n"
        "    print('loaded without registration')\n"
        "except ValueError as exc:\n"
        "    assert 'trust_remote_code' in str(exc), exc\n"
        "import hf_recogs.models\n"
        f"model = AutoModelForSeq2SeqLM.from_pretrained({str(folder)!r})\n"
        "print(type(model).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         check=False, stdin=subprocess.DEVNULL)  # on a terminal transformers asks
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("LstmSeq2SeqForConditionalGeneration"), out.stdout
    assert "loaded without registration" not in out.stdout
