"""What every benchmark shares: arguments, timers, the device's name, and the JSON record.

A benchmark is ``benchmarks/<name>.py`` with ``run(args, record)``; it times our code and
a baseline it runs itself in the same process, and calls ``record.row(...)`` with both
times and their ratio. ``python benchmarks/<name>.py [--quick] [--json PATH]`` runs it;
scripts/gpu-check runs them all and gathers their JSON.
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from morphgpu import backend  # noqa: E402
from morphgpu.report import _plain  # noqa: E402

ROAD_NETWORKS = ("NY", "BAY", "COL")


def road_graph_thunks(side: str = "gpu") -> list[tuple[str, Callable[[], Any]]]:
    """("road NAME", thunk reading it onto ``side``) for each shared road network present."""
    from morphgpu import graph_io, testing  # noqa: PLC0415

    out: list[tuple[str, Callable[[], Any]]] = []
    for name in ROAD_NETWORKS:
        path = testing.shared_path("data", "roads", f"{name}.gr.xz")
        if path is not None:
            out.append((f"road {name}", lambda p=path: graph_io.read_graph(p).to(side)))
    return out


class TimeLimitReached(BaseException):
    """Raised by SIGTERM (gpu-check's `timeout`): a BaseException, so a benchmark's own
    `except Exception` around one graph cannot swallow it and run on past the limit."""


def gpu_seconds(fn: Callable[[], Any], *, repeat: int = 10, warmup: int = 2,
                after: Callable[[], Any] | None = None) -> float:
    """Median wall time of ``fn`` on the GPU, measured with CUDA events. ``after`` runs,
    untimed, after every call of ``fn`` (warm-ups too): an undo step, so that every timed
    call starts from the same state."""
    cp = backend.cupy_module()
    for _ in range(warmup):
        fn()
        if after is not None:
            after()
    cp.cuda.get_current_stream().synchronize()
    times = []
    for _ in range(repeat):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
        if after is not None:
            after()
    return statistics.median(times)


def event_seconds(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(seconds between CUDA events around one ``fn()`` call, its result): the GPU's time
    for the call, host work before its first launch included when the GPU was idle."""
    cp = backend.cupy_module()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    out = fn()
    stop.record()
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop) / 1e3, out


def cpu_seconds(fn: Callable[[], Any], *, repeat: int = 3, warmup: int = 0) -> float:
    """Median wall time of ``fn`` on the host (synchronising the GPU after each call)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        backend.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


class Record:
    def __init__(self, name: str, side: str) -> None:
        self.data: dict[str, Any] = {
            "benchmark": name,
            "device": backend.device_name(side),  # type: ignore[arg-type]
            "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "notes": [],
            "rows": [],
        }

    def note(self, text: str) -> None:
        self.data["notes"].append(text)
        print(f"# {text}", flush=True)

    def row(self, **fields: Any) -> None:
        self.data["rows"].append(_plain(fields))
        parts = []
        for k, v in fields.items():
            parts.append(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}")
        print("  ".join(parts), flush=True)


def main(name: str, run: Callable[[argparse.Namespace, Record], None],
         add_args: Callable[[argparse.ArgumentParser], None] | None = None) -> None:
    parser = argparse.ArgumentParser(description=f"morphgpu benchmark: {name}")
    parser.add_argument("--quick", action="store_true", help="smaller inputs, fewer repeats")
    parser.add_argument("--device", default="auto", choices=["auto", "gpu", "cpu"])
    parser.add_argument("--json", type=Path, help="write the record here")
    if add_args:
        add_args(parser)
    args = parser.parse_args()
    side = backend.resolve_device(args.device, who=f"benchmark {name}")
    args.side = side
    record = Record(name, side)

    def _stop(signum: int, frame: Any) -> None:
        # scripts/gpu-check bounds each benchmark with `timeout`: keep the rows measured so far.
        raise TimeLimitReached(f"stopped by signal {signum} (time limit): rows so far are kept")

    signal.signal(signal.SIGTERM, _stop)
    print(f"# {name} on {record.data['device']}", flush=True)
    t0 = time.perf_counter()
    try:
        run(args, record)
        record.data["status"] = "ok"
    except (Exception, TimeLimitReached) as exc:
        record.data["status"] = f"error: {type(exc).__name__}: {exc}"
        raise
    finally:
        record.data["seconds"] = time.perf_counter() - t0
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(record.data, indent=1))
