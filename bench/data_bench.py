"""Data-loading benchmark: cold build and warm load of every config, against a plain ``datasets`` baseline.

    python bench/data_bench.py [--configs a,b] [--json out.json] [--no-new-process] [--no-baseline] [--all-modules]

For each config, in a fresh subprocess with an **empty temporary HF_HOME** (offline, reading the mirror named
by ``HF_RECOGS_MIRROR``, default ``../shared/mirror``):

- ``cold``: the first ``hf_recogs.load_dataset(name)`` — verifies the upstream files, generates every row and
  writes datasets' Arrow cache;
- ``warm``: a second call in the same process, served from the Arrow cache;
- ``warm`` is the median of three calls; ``warm_np``: the same call in a new process on the same HF_HOME (what
  a user sees on the next run; interpreter start-up and imports not counted, they are reported as ``import``),
  best of ``--np-repeat`` (default 2) because the machine may be shared.

Baseline, same run: ``datasets.load_dataset("csv"|"text", data_files=<the official upstream file(s)>)`` of the
files the config reads, where every split reads plain ``.tsv``/``.txt`` files (cold in its own empty cache,
then warm); ``ratio`` = our cold / baseline cold. Goals: cold ≤ 30 s, warm ≤ 1 s; misses are flagged. The machine
may be shared: the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLD_GOAL_S = 30.0
WARM_GOAL_S = 1.0


def _import_benchmarks() -> None:
    """Register every config: import each module of hf_recogs.benchmarks (a no-op for those already imported)."""
    import importlib
    import pkgutil

    import hf_recogs.benchmarks as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        try:
            importlib.import_module(f"{pkg.__name__}.{info.name}")
        except Exception as err:  # noqa: BLE001 - a broken module must not hide the others' figures
            print(f"[bench] cannot import hf_recogs.benchmarks.{info.name}: {type(err).__name__}: {err}",
                  file=sys.stderr)


def _baseline_files(cfg) -> dict[str, list[Path]] | None:
    """Mirror paths of the plain upstream files each split reads, or None when no fair baseline exists."""
    from hf_recogs.sources import mirror_dir

    root = mirror_dir()
    if root is None:
        return None
    out: dict[str, list[Path]] = {}
    for split in cfg.splits_for():
        try:
            files = list(cfg.sources(split))
        except Exception:  # noqa: BLE001
            return None
        if not files:
            return None
        paths = []
        for f in files:
            if not f.path.endswith((".tsv", ".txt")):
                return None
            plain = root / f.relpath
            packed = plain.with_name(plain.name + ".gz")
            if plain.is_file():
                paths.append(plain)
            elif packed.is_file():
                paths.append(packed)
            else:
                return None
        out[split] = sorted(set(paths))
    kinds = {p.name.removesuffix(".gz").rsplit(".", 1)[-1] for ps in out.values() for p in ps}
    return out if len(kinds) == 1 else None


def _load_baseline(files: dict[str, list[Path]], cache_dir: str):
    import datasets

    paths = {s: [str(p) for p in ps] for s, ps in files.items()}
    first = next(iter(files.values()))[0].name.removesuffix(".gz")
    if first.endswith(".tsv"):
        return datasets.load_dataset("csv", data_files=paths, delimiter="\t", header=None, quoting=3,
                                     keep_default_na=False, cache_dir=cache_dir)
    return datasets.load_dataset("text", data_files=paths, cache_dir=cache_dir)


def worker(name: str, phase: str, baseline: bool, extra_modules: bool) -> dict:
    """Runs inside the subprocess; returns the figures as a dict."""
    t0 = time.perf_counter()
    import datasets  # noqa: F401

    import hf_recogs

    if extra_modules:
        _import_benchmarks()
    result: dict = {"config": name, "import_s": time.perf_counter() - t0}
    cfg = hf_recogs.get_config(name)
    if phase == "cold":
        t = time.perf_counter()
        ds = hf_recogs.load_dataset(name)
        result["cold_s"] = time.perf_counter() - t
        result["rows"] = {s: ds[s].num_rows for s in ds}
        warm = []
        for _ in range(3):
            t = time.perf_counter()
            hf_recogs.load_dataset(name)
            warm.append(time.perf_counter() - t)
        result["warm_s"] = sorted(warm)[1]  # median of 3
        files = _baseline_files(cfg) if baseline else None
        if files:
            cache = tempfile.mkdtemp(prefix="hf_recogs_bench_base_")
            try:
                t = time.perf_counter()
                base = _load_baseline(files, cache)
                result["base_cold_s"] = time.perf_counter() - t
                result["base_rows"] = sum(base[s].num_rows for s in base)
                t = time.perf_counter()
                _load_baseline(files, cache)
                result["base_warm_s"] = time.perf_counter() - t
                result["base_files"] = sum(len(v) for v in files.values())
            finally:
                shutil.rmtree(cache, ignore_errors=True)
    else:
        t = time.perf_counter()
        ds = hf_recogs.load_dataset(name)
        result["warm_np_s"] = time.perf_counter() - t
    return result


def _env(hf_home: str) -> dict:
    env = dict(os.environ)
    env.update({
        "HF_HOME": hf_home, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1",
        "HF_UPDATE_DOWNLOAD_COUNTS": "0", "HF_HUB_DISABLE_TELEMETRY": "1", "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
        "TOKENIZERS_PARALLELISM": "false",
    })
    env.pop("HF_DATASETS_CACHE", None)
    env.pop("HF_RECOGS_CACHE", None)
    if not env.get("HF_RECOGS_MIRROR"):
        default = ROOT.parent / "shared" / "mirror"
        if (default / "MANIFEST.tsv").is_file():
            env["HF_RECOGS_MIRROR"] = str(default)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _run_worker(name: str, phase: str, hf_home: str, baseline: bool, timeout: int, extra: bool) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name, "--phase", phase]
    if not baseline:
        cmd.append("--no-baseline")
    if extra:
        cmd.append("--all-modules")
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, env=_env(hf_home), timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"config": name, "error": f"{phase} timed out after {timeout} s"}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        tail = (out.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"config": name, "error": f"{phase}: {tail[:200]}"}
    return json.loads(lines[-1])


def _load() -> str:
    try:
        one, five, fifteen = os.getloadavg()
        return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"
    except OSError:
        return "load average unavailable"


def _fmt(value, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", default="", help="comma-separated config names (default: all)")
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")
    parser.add_argument("--no-new-process", action="store_true", help="skip the warm load in a new process")
    parser.add_argument("--no-baseline", action="store_true", help="skip the plain-datasets baseline")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per subprocess")
    parser.add_argument("--np-repeat", type=int, default=2,
                        help="new-process warm loads per config; the best is reported (default 2)")
    parser.add_argument("--all-modules", action="store_true",
                        help="also import every module of hf_recogs.benchmarks (configs not yet wired in)")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--phase", default="cold", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        print(json.dumps(worker(args.worker, args.phase, not args.no_baseline, args.all_modules)))
        return 0

    sys.path.insert(0, str(ROOT))
    os.environ.update({k: v for k, v in _env(tempfile.gettempdir()).items() if k == "HF_RECOGS_MIRROR"})
    import hf_recogs
    from hf_recogs.registry import all_configs

    if args.all_modules:
        _import_benchmarks()
    configs = sorted(all_configs())
    if args.configs:
        wanted = [c.strip() for c in args.configs.split(",") if c.strip()]
        unknown = [c for c in wanted if c not in configs]
        if unknown:
            print(f"error: unknown config(s) {', '.join(unknown)}; valid: {', '.join(configs)}", file=sys.stderr)
            return 1
        configs = wanted
    import datasets

    print(f"[bench] hf_recogs {hf_recogs.__version__}, datasets {datasets.__version__}, python "
          f"{sys.version.split()[0]}; mirror {_env('x').get('HF_RECOGS_MIRROR', '(none)')}")
    print(f"[bench] before: {_load()}")
    results = []
    started = time.time()
    for name in configs:
        home = tempfile.mkdtemp(prefix="hf_recogs_bench_home_")
        try:
            res = _run_worker(name, "cold", home, not args.no_baseline, args.timeout, args.all_modules)
            if "error" not in res and not args.no_new_process:
                runs = [_run_worker(name, "warm", home, False, args.timeout, args.all_modules)
                        for _ in range(max(1, args.np_repeat))]
                times = [r["warm_np_s"] for r in runs if r.get("warm_np_s") is not None]
                res["warm_np_s"] = min(times) if times else None  # best of n: the machine may be shared
                res["warm_np_all_s"] = times
                errors = [r["error"] for r in runs if "error" in r]
                if errors:
                    res["error"] = errors[0]
        finally:
            shutil.rmtree(home, ignore_errors=True)
        flags = []
        if "error" in res:
            flags.append("ERROR")
        if (res.get("cold_s") or 0) > COLD_GOAL_S:
            flags.append(f"COLD>{COLD_GOAL_S:g}s")
        if max(res.get("warm_s") or 0, res.get("warm_np_s") or 0) > WARM_GOAL_S:
            flags.append(f"WARM>{WARM_GOAL_S:g}s")
        res["flags"] = flags
        if res.get("cold_s") and res.get("base_cold_s"):
            res["ratio"] = res["cold_s"] / res["base_cold_s"]
            ours_rows = sum((res.get("rows") or {}).values())
            res["same_rows"] = ours_rows == res.get("base_rows")
        results.append(res)
        print(f"[bench] {name}: cold {_fmt(res.get('cold_s'))} s, warm {_fmt(res.get('warm_s'), 3)} s, "
              f"warm (new process) {_fmt(res.get('warm_np_s'), 3)} s"
              + (f", baseline cold {_fmt(res.get('base_cold_s'))} s" if res.get("base_cold_s") else "")
              + (f"  {' '.join(flags)}" if flags else "") + (f"  [{res['error']}]" if "error" in res else ""),
              flush=True)
    print(f"[bench] after: {_load()}; total {time.time() - started:.0f} s")

    header = ("config", "rows", "import s", "cold s", "warm s", "warm new-proc s", "base rows", "base cold s",
              "base warm s", "cold/base", "flags")
    print()
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in results:
        rows = sum((r.get("rows") or {}).values()) if r.get("rows") else None
        print("| " + " | ".join([
            r["config"], f"{rows:,}" if rows is not None else "-", _fmt(r.get("import_s")), _fmt(r.get("cold_s")),
            _fmt(r.get("warm_s"), 3), _fmt(r.get("warm_np_s"), 3),
            f"{r['base_rows']:,}" if r.get("base_rows") is not None else "-", _fmt(r.get("base_cold_s")),
            _fmt(r.get("base_warm_s"), 3),
            _fmt(r.get("ratio"), 1) + ("" if r.get("same_rows", True) else "*"), " ".join(r["flags"]) or "ok",
        ]) + " |")
    if any(not r.get("same_rows", True) for r in results):
        print("\n* the baseline read the same upstream files but yields other rows (a file read for several splits, "
              "or a derived/generated config): its time is a floor, not a like-for-like comparison")
    print("warm = median of 3 calls in the building process; warm new-proc = first call in a fresh process "
          "(best of --np-repeat), imports excluded (import s = interpreter-side import of datasets + hf_recogs)")
    ok = [r for r in results if "error" not in r]
    if ok:
        worst_cold = max(ok, key=lambda r: r.get("cold_s") or 0)
        worst_warm = max(ok, key=lambda r: max(r.get("warm_s") or 0, r.get("warm_np_s") or 0))
        print(f"\nworst cold: {worst_cold['config']} {_fmt(worst_cold.get('cold_s'))} s (goal ≤ {COLD_GOAL_S:g} s); "
              f"worst warm: {worst_warm['config']} "
              f"{_fmt(max(worst_warm.get('warm_s') or 0, worst_warm.get('warm_np_s') or 0), 3)} s "
              f"(goal ≤ {WARM_GOAL_S:g} s); {sum(1 for r in results if r['flags'])} of {len(results)} flagged")
    if args.json:
        Path(args.json).write_text(json.dumps({"load_after": _load(), "results": results}, indent=2) + "\n")
    return 1 if any("ERROR" in r["flags"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
