"""Resume check: a run killed with SIGKILL mid-epoch and restarted from its last checkpoint ends exactly like an
uninterrupted run (CPU, fixed seed).

    python bench/resume_check.py [--workdir DIR] [--data_order reshuffle|fixed]

1. trains a tiny Transformer on a synthetic copy task for 3 epochs (20 steps each), checkpointing every 7
   steps, without interruption (run A);
2. starts the same run again (B), waits until checkpoint-28 is complete (epoch 2, step 8 of 20), kills the
   process with SIGKILL, then restarts it with ``resume_from_checkpoint=true``;
3. compares A and B: per-step logged losses, final weights, metrics on validation/test/gen and every
   prediction. Prints a JSON report; exits 1 if anything differs.

Uses ``python train.py`` (one process) so that the kill reaches the training process itself; the same holds
under ``accelerate launch``, whose child gets the same arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAVE_STEPS = 7
KILL_AFTER = 28  # a checkpoint in the middle of the second epoch (20 steps per epoch)


def write_task(folder: Path, data_order: str) -> Path:
    rng = random.Random(0)
    letters = list("abcdefgh")
    files = {}
    for split, n in (("train", 320), ("validation", 24), ("test", 24), ("gen", 24)):
        path = folder / f"{split}.jsonl"
        with open(path, "w") as f:
            for i in range(n):
                words = " ".join(rng.choice(letters) for _ in range(rng.randint(2, 5)))
                cat = ("cp_recursion", "subj_to_obj_common", "pp_recursion")[i % 3] if split == "gen" else "in_dist"
                f.write(json.dumps({"input": words, "output": words, "category": cat}) + "\n")
        files[split] = str(path)
    import yaml

    config = {
        "data_files": files, "arch": "transformer", "metric": "exact", "seeds": [11], "max_positions": 32,
        "model_overrides": {"d_model": 32, "encoder_layers": 1, "decoder_layers": 1, "encoder_ffn_dim": 64,
                            "decoder_ffn_dim": 64, "encoder_attention_heads": 2, "decoder_attention_heads": 2},
        "data_order": data_order, "learning_rate": 3.0e-3, "per_device_train_batch_size": 16,
        "per_device_eval_batch_size": 32, "num_train_epochs": 3, "warmup_steps": 0.1, "max_grad_norm": 0,
        "generation_max_length": 16, "logging_steps": 1, "save_strategy": "steps", "save_steps": SAVE_STEPS,
        "save_total_limit": 3, "report_to": "none", "cpu_threads": 1,
    }
    path = folder / "resume.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _cmd(config: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, str(ROOT / "train.py"), str(config), f"output_dir={out}", *extra]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _run(cmd, timeout):
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")


def _weights(folder: Path):
    from safetensors.numpy import load_file

    return load_file(str(folder / "model.safetensors"))


def check_resume(workdir: Path, data_order: str = "reshuffle", timeout: float = 300) -> dict:
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    config = write_task(workdir, data_order)
    a, b = workdir / "uninterrupted", workdir / "interrupted"
    t0 = time.time()
    _run(_cmd(config, a), timeout)
    t_a = time.time() - t0

    # Run B, killed with SIGKILL once checkpoint-KILL_AFTER is complete.
    seed_dir = b / "seed_11"
    ckpt = seed_dir / f"checkpoint-{KILL_AFTER}"
    proc = subprocess.Popen(_cmd(config, b), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env(),
                            start_new_session=True)
    killed_at = None
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        if (ckpt / "trainer_state.json").is_file() and (ckpt / "rng_state.pth").is_file():
            time.sleep(0.05)  # let the checkpoint's last file be closed
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            killed_at = sorted(int(p.name.split("-")[1]) for p in seed_dir.glob("checkpoint-*"))
            break
        time.sleep(0.02)
    else:
        proc.kill()
        proc.wait()
    finished_early = (seed_dir / "results.json").is_file()
    t0 = time.time()
    _run(_cmd(config, b, "resume_from_checkpoint=true"), timeout)
    t_b = time.time() - t0

    ra = json.loads((a / "seed_11" / "results.json").read_text())
    rb = json.loads((seed_dir / "results.json").read_text())
    hist_a = {h["step"]: h["loss"] for h in ra["train"]["loss_history"]}
    hist_b = {h["step"]: h["loss"] for h in rb["train"]["loss_history"]}
    common = sorted(set(hist_a) & set(hist_b))
    wa, wb = _weights(a / "seed_11"), _weights(seed_dir)
    max_diff = max(float(abs(wa[k] - wb[k]).max()) for k in wa)
    metrics = lambda r: {s: (v["exact_match"], v["sem_match"]) for s, v in r["splits"].items()}  # noqa: E731
    preds_same = all(
        (a / "seed_11" / f"predictions_{s}.jsonl").read_text() == (seed_dir / f"predictions_{s}.jsonl").read_text()
        for s in ra["splits"]
    )
    return {
        "data_order": data_order,
        "killed_after_checkpoint": killed_at is not None and not finished_early,
        "checkpoints_at_kill": killed_at,
        "resumed_from": rb["train"]["resumed_from"],
        "global_step": [ra["train"]["global_step"], rb["train"]["global_step"]],
        "same_loss": bool(common) and all(hist_a[s] == hist_b[s] for s in common) and len(common) == len(hist_a),
        "final_logged_loss": [hist_a.get(max(hist_a)), hist_b.get(max(hist_b))],
        "max_weight_diff": max_diff,
        "same_metrics": metrics(ra) == metrics(rb),
        "same_predictions": preds_same,
        "metrics": metrics(ra),
        "seconds": {"uninterrupted": round(t_a, 1), "resumed_part": round(t_b, 1)},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--data_order", default="reshuffle", choices=("reshuffle", "fixed"))
    args = parser.parse_args()
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="resume_check_"))
    report = check_resume(workdir, args.data_order)
    print(json.dumps(report, indent=2))
    ok = report["killed_after_checkpoint"] and report["same_loss"] and report["same_metrics"] \
        and report["same_predictions"] and report["max_weight_diff"] == 0.0
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
