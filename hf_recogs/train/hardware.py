"""The machine a run trains on: torch threads on CPU, and whether the CPU computes in bf16 natively."""

from __future__ import annotations

import os


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def physical_cores() -> int:
    try:
        import psutil

        cores = psutil.cpu_count(logical=False) or os.cpu_count() or 1
    except Exception:  # pragma: no cover - psutil comes with accelerate
        cores = os.cpu_count() or 1
    try:
        cores = min(cores, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        pass
    return max(1, cores)


def configure_cpu_threads(requested: int | None = None) -> int | None:
    """Set torch's intra-op threads on CPU-only runs; returns the number set (None when left alone).

    ``accelerate launch`` without ``--cpu --num_processes 1`` (or a config file) exports ``OMP_NUM_THREADS=1``,
    which halves CPU training speed; torchrun does the same. Unless ``requested`` says otherwise,
    a CPU run uses physical cores / processes on this machine, reduced to the cores not already busy (1-minute
    load average) since oversubscribed OpenMP threads are much slower than fewer threads. GPU runs are left alone.
    """
    import torch

    if torch.cuda.is_available() and requested is None:
        return None
    local = int(os.environ.get("LOCAL_WORLD_SIZE") or os.environ.get("WORLD_SIZE") or 1)
    threads = requested or max(1, physical_cores() // max(1, local))
    if requested is None and threads > 1:
        # On cores already busy with other work, extra OpenMP threads spin and wait for each other: measured
        # 3-10x slower with 2 threads than with 1 on 2 cores at load average 4-5. Use only the idle cores.
        try:
            idle = physical_cores() - os.getloadavg()[0]
        except OSError:  # pragma: no cover
            idle = threads
        threads = max(1, min(threads, int(idle + 0.5)))
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return threads


def cpu_has_native_bf16() -> bool:
    """True on CPUs with bf16 instructions (AVX-512 BF16 or AMX), where bf16 autocast speeds training up.

    ``HF_RECOGS_CPU_NATIVE_BF16=0`` / ``=1`` overrides the answer: the test suite runs both ways on one machine
    with it (on a CPU without bf16 instructions, ``1`` emulates bf16: slow, but the same code path)."""
    forced = os.environ.get("HF_RECOGS_CPU_NATIVE_BF16")
    if forced in ("0", "1"):
        return forced == "1"
    import torch

    try:
        return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported()
                    and (torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()))
    except (AttributeError, RuntimeError):  # pragma: no cover - other builds
        return False


def use_cpu_bf16(setting: str, use_cpu: bool) -> bool:
    """Whether the training steps autocast to bf16 on the CPU: ``setting`` is the ``cpu_bf16`` option (auto |
    true | false); a GPU run never does (its precision is the Trainer's bf16 / fp16 options)."""
    if cuda_available() and not use_cpu:
        return False
    if setting == "auto":
        return cpu_has_native_bf16()
    return setting == "true"
