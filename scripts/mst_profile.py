"""Where the Borůvka kernel and the SciPy door spend their time, pass by pass and round by
round, and optionally an earlier kernel timed in the same process. Needs a GPU.

    python3 scripts/mst_profile.py [--graphs "random 2^23" "kron 21"] [--repeat 5]
                                   [--before BORUVKA_CU]

--before names a copy of morphgpu/mst/kernels/boruvka.cu as of 5a99125 (its argument list),
kept outside the repository, e.g. ``git show 5a99125:morphgpu/mst/kernels/boruvka.cu >
/tmp/boruvka_5a99125.cu``; without it the ``rounds`` rows time this kernel alone.

Per graph (benchmarks/mst.py's graphs, ECL-MST's weight rule), all CUDA-event medians:
- ``rounds``: the persistent rounds kernel alone (no forest writer), before and after, in
  boruvka()'s configuration (int32 weights, declared symmetric) and the SciPy door's
  (float64 weights; before: read as general, after: symmetry found by the kernel, the
  verdict kept from the warm-up launch), and with the float64 weights negated;
- ``calls``: boruvka() on the CSRGraph, the door's kernels (rounds, forest writer, CSR
  result) on a runner, and minimum_spanning_tree() on a cupyx csr_matrix (float64): the
  door's host share is the last minus the one before;
- ``door host``: the door's host steps one at a time (microseconds per call of each, the
  GPU's work queued, not waited for; the reads on an idle GPU), and the functions where a
  profiled run of door calls spends its host time (cProfile, own time per call);
- ``phases``: MST_PROFILE stamps of the new kernel under its own pass rule (int32,
  declared symmetric; and the door's float64 with symmetry found), the same with rows of
  9-32 entries walked by the warp as before (MST_SMALL_ROW 8), with the live rule off
  (MST_LIVE_SPLIT_SHARE 0: every planned split, the plan before) and ECL-MST's plan (3 per
  vertex, two passes). Each phase's microseconds (block 0's clock64 between
  barriers, scaled to the %globaltimer total) and the worklist size after it (a flatten:
  the live sample out of 1024 that decided the pass). Every forest equals the default
  build's.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import harness  # noqa: E402
import numpy as np  # noqa: E402

from morphgpu import backend, barrier, kernels  # noqa: E402
from morphgpu.mst import boruvka, minimum_spanning_tree  # noqa: E402
from morphgpu.mst import gpu as mst_gpu  # noqa: E402
from morphgpu.mst import keys as keymod  # noqa: E402
from morphgpu.mst.ecl_weights import ecl_weights  # noqa: E402

BEFORE: Path | None = None  # --before
PLANS = {
    "live rule (this kernel)": {},
    "live rule, rows of 9-32 by the warp (MST_SMALL_ROW=8, as before)": {"MST_SMALL_ROW": 8},
    "live rule off (doubling, the plan before)": {"MST_LIVE_SPLIT_SHARE": 0},
    "ECL-MST's plan (3/vertex, 2 passes)": {"MST_FIRST_PASS_HALVES": 6, "MST_MAX_PASSES": 2},
}
PHASES = {1: "init", 2: "narrow", 3: "flatten", 4: "build", 5: "huge", 6: "join", 7: "filter",
          8: "verify"}
DEFAULT_GRAPHS = ["road NY", "random 2^20 deg 4", "kron 21", "random 2^23 deg 8"]


def say(*parts: Any) -> None:
    print(*parts, flush=True)


def event_ms(fn: Any, repeat: int) -> float:
    """Median milliseconds of ``fn`` (CUDA events): benchmarks/harness.py."""
    return harness.gpu_seconds(fn, repeat=repeat) * 1e3


def before_kernel(g: Any, weights: Any, symmetric: bool) -> Any:
    """A launcher of the kernel before (its own buffers, its argument list)."""
    cp = backend.cupy_module()
    kind = keymod.key_kind(weights)
    defines = kernels.index_defines(g.indices.dtype, g.indptr.dtype)
    defines.update(MST_KEY_KIND=mst_gpu._KEY_KIND_CODE[kind], MST_BLOCK=mst_gpu.BLOCK,
                   MST_WEIGHT_T=mst_gpu._WEIGHT_CTYPE[np.dtype(weights.dtype)],
                   MST_WEIGHT_FLOAT=int(weights.dtype.kind == "f"))
    grid = barrier.PersistentGrid(kernels.get_kernel(BEFORE, "mst_boruvka", defines=defines),
                                  block=mst_gpu.BLOCK)
    n, m = g.n_vertices, g.n_edges
    vid = np.dtype(g.indices.dtype)
    capacity = m // 2 + 1 if symmetric else max(m, 1)
    huge = m // mst_gpu.HUGE_ROW + 1
    edge_bytes = 16 if vid.itemsize == 4 else 24
    stats = cp.zeros(10, dtype=cp.uint64)
    narrowed = m if kind in ("float64", "int64") else 0
    args = (g.indptr, g.indices, weights, weights, np.int64(n), np.int64(m),
            np.int32(symmetric), np.int64(capacity), np.int64(huge),
            cp.empty(n, dtype=vid), cp.empty(n, dtype=cp.uint64),
            cp.empty(capacity * edge_bytes, dtype=cp.uint8),
            cp.empty(capacity * edge_bytes, dtype=cp.uint8), cp.zeros(4, dtype=cp.uint64),
            cp.empty(huge, dtype=vid), cp.empty(max(narrowed, 1), dtype=cp.uint32),
            cp.empty(-(-m // 32) + 1, dtype=cp.uint32),
            cp.empty(2 * grid.grid, dtype=cp.uint64), stats)

    def launch() -> None:
        grid.launch(*args)

    launch.rounds = lambda: int(stats[0].get())  # type: ignore[attr-defined]
    return launch


def door_runner(g: Any, weights: Any, **extra: Any) -> Any:
    """A runner in the door's configuration (symmetry found, its own memo)."""
    return mst_gpu.BoruvkaGPU(g.n_vertices, g.indptr, g.indices, weights, symmetric=False,
                              find_symmetry=True, **extra)


def rounds_rows(label: str, g: Any, repeat: int) -> None:
    """The rounds kernel before and after, in boruvka's and the door's configurations."""
    cp = backend.cupy_module()
    f64 = g.weights.astype(cp.float64)
    for config, weights, symmetric in (("int32 symmetric", g.weights, True),
                                       ("float64 door", f64, False),
                                       ("float64 negated door", -f64, False)):
        if symmetric:
            after = mst_gpu.BoruvkaGPU(g.n_vertices, g.indptr, g.indices, weights,
                                       symmetric=True)
        else:
            after = door_runner(g, weights)
        new_ms = event_ms(lambda r=after: r.launch(write_forest=False), repeat)
        after.launch()
        new_rounds = after.collect()[1]
        found = "" if symmetric else (
            f", found {'symmetric' if after.last_stats[mst_gpu.STAT_SYMMETRIC_RUN] else 'general'}")
        now = (f"{new_ms:.3f} ms ({new_rounds} rounds, "
               f"{int(after.last_stats[mst_gpu.STAT_PASSES])} passes{found})")
        if BEFORE is None:
            say(f"{label} | rounds kernel, {config}: {now}")
        else:
            old = before_kernel(g, weights, symmetric)
            old_ms = event_ms(old, repeat)
            say(f"{label} | rounds kernel, {config}: before {old_ms:.3f} ms ({old.rounds()} "
                f"rounds) | after {now} | after/before {new_ms / old_ms:.3f}")
            del old
        del after
        cp.get_default_memory_pool().free_all_blocks()


def call_rows(label: str, g: Any, repeat: int) -> None:
    """Whole calls: boruvka, the door's kernels on a runner, the door itself."""
    import cupyx.scipy.sparse as cusp  # noqa: PLC0415

    cp = backend.cupy_module()
    whole = event_ms(lambda: boruvka(g, device="gpu"), repeat)
    matrix = cusp.csr_matrix(g.to_scipy().astype(np.float64))
    runner = door_runner(g, matrix.data)

    def kernels_only(r: Any = runner) -> None:
        r.launch(write_matrix=True)
        r.matrix()

    kernels_ms = event_ms(kernels_only, repeat)
    door = event_ms(lambda a=matrix: minimum_spanning_tree(a, device="gpu"), repeat)
    say(f"{label} | calls: boruvka {whole:.3f} ms | door kernels and read {kernels_ms:.3f} ms | "
        f"door {door:.3f} ms (host share {door - kernels_ms:.3f} ms)")
    del runner, matrix
    cp.get_default_memory_pool().free_all_blocks()


def host_us(fn: Any, calls: int) -> float:
    """Host microseconds per call of ``fn`` (the GPU's work queued, waited for after)."""
    cp = backend.cupy_module()
    cp.cuda.get_current_stream().synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - start
    cp.cuda.get_current_stream().synchronize()
    return elapsed / calls * 1e6


def door_host_rows(label: str, g: Any, calls: int = 200) -> None:
    """The door's host steps one by one, and cProfile's view of whole door calls."""
    import cProfile  # noqa: PLC0415
    import pstats  # noqa: PLC0415

    import cupyx.scipy.sparse as cusp  # noqa: PLC0415

    from morphgpu import graph_cache  # noqa: PLC0415
    from morphgpu.mst import api  # noqa: PLC0415

    cp = backend.cupy_module()
    matrix = cusp.csr_matrix(g.to_scipy().astype(np.float64))
    minimum_spanning_tree(matrix, device="gpu")  # caches, runner, verdict
    prep = api._prepare(matrix, None, api._MST_WHAT)
    runner = mst_gpu.kept_runner(prep.graph, None, matrix.data, symmetric=False,
                                 what=api._MST_WHAT, find_symmetry=True)
    runner.launch(write_matrix=True)
    data, indices, indptr = runner.matrix()
    n = g.n_vertices
    steps = {
        "whole call (waits for the GPU)": lambda: minimum_spanning_tree(matrix, device="gpu"),
        "_prepare + fingerprint launches": lambda: api._prepare(matrix, None, api._MST_WHAT,
                                                                pending=[]),
        "kept_runner (weights rebound)": lambda: mst_gpu.kept_runner(
            prep.graph, None, matrix.data, symmetric=False, what=api._MST_WHAT,
            find_symmetry=True),
        "launch (reset, 3 kernels, result buffer)": lambda: runner.launch(write_matrix=True),
        "stats read, GPU idle": lambda: runner.stats.get(),
        "fingerprints' read, GPU idle": lambda: cp.zeros(2, dtype=cp.uint64).get(),
        "cupyx csr_matrix of the result": lambda: cusp.csr_matrix((data, indices, indptr),
                                                                  shape=(n, n)),
    }
    for name, fn in steps.items():
        say(f"{label} | door host: {name} {host_us(fn, calls):.1f} us")
    runner.launch(write_matrix=True)
    runner.matrix()
    profiler = cProfile.Profile()
    cp.cuda.get_current_stream().synchronize()
    profiler.enable()
    for _ in range(calls):
        minimum_spanning_tree(matrix, device="gpu")
    profiler.disable()
    table = pstats.Stats(profiler)
    rows = sorted(table.stats.items(), key=lambda kv: -kv[1][2])[:14]  # type: ignore[attr-defined]
    for (path, line, func), (_, ncalls, own, cumulative, _) in rows:
        where = f"{Path(path).name}:{line}({func})" if line else func
        say(f"{label} | door host profile: {where} own {own / calls * 1e6:.1f} us, cumulative "
            f"{cumulative / calls * 1e6:.1f} us per call ({ncalls // calls} calls)")
    graph_cache.forget(matrix)


def phase_rows(label: str, g: Any, reference: np.ndarray) -> None:
    """MST_PROFILE stamps of the new kernel under each pass plan (and in the door's
    configuration under its own)."""
    f64 = g.weights.astype(backend.cupy_module().float64)
    configs = [(plan, defines, "int32 symmetric") for plan, defines in PLANS.items()]
    configs.insert(1, ("live rule (this kernel)", {}, "float64 door"))
    for plan, defines, config in configs:
        extra = {"defines": {"MST_PROFILE": None, **defines}}
        if config == "float64 door":
            runner = door_runner(g, f64, **extra)
            runner.launch()  # the verdict, kept in the memo
        else:
            runner = mst_gpu.BoruvkaGPU(g.n_vertices, g.indptr, g.indices, g.weights,
                                        symmetric=True, **extra)
        runner.launch()
        positions, rounds = runner.collect()
        same = np.array_equal(positions.get(), reference)
        table = runner.profile().astype(np.int64)
        cycles = np.diff(table[:, 2])
        total_ns = int(table[-1, 3] - table[0, 3])
        us = cycles / max(int(cycles.sum()), 1) * total_ns / 1e3
        say(f"{label} | phases, {plan}, {config}: {int(table[0, 1])} passes, {rounds} rounds, "
            f"{total_ns / 1e3:.1f} us to the last barrier, forest "
            f"{'identical' if same else 'DIFFERENT'}")
        by_phase: dict[str, float] = {}
        line: list[str] = []
        for row, t in zip(table[1:], us):
            code, count = int(row[0]), int(row[1])
            phase, pass_no, round_no = PHASES.get(code & 0xFF, "?"), (code >> 8) & 0xFF, code >> 16
            by_phase[phase] = by_phase.get(phase, 0.0) + t
            if phase in ("flatten", "build") and line:
                say("    " + "  ".join(line))
                line = []
            if phase in ("init", "narrow"):
                line.append(f"[{phase} {t:.0f}us]")
            elif phase == "verify":
                line.append(f"[verify {t:.0f}us: {'symmetric' if count == 2 else 'general'}]")
            elif phase == "flatten":
                line.append(f"[flatten {t:.0f}us, live sample {count}/1024]")
            elif phase in ("build", "huge"):
                line.append(f"p{pass_no} {phase} {t:.0f}us->{count}")
            elif phase == "join":
                line.append(f"r{round_no} join {count}:{t:.0f}us")
            else:
                line.append(f"filter {t:.0f}us->{count}")
        if line:
            say("    " + "  ".join(line))
        say("    totals: " + "  ".join(f"{k} {v:.0f}us" for k, v in by_phase.items()))
        del runner


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="*", default=DEFAULT_GRAPHS,
                        help="benchmarks/mst.py graph labels (substrings)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--door-host-below", type=int, default=5_000_000,
                        help="the door's host breakdown on graphs of at most this many entries")
    parser.add_argument("--before", type=Path,
                        help="boruvka.cu as of 5a99125, outside the repository (see above)")
    args = parser.parse_args()
    global BEFORE
    BEFORE = args.before.resolve() if args.before else None
    import mst as mst_benchmark  # noqa: PLC0415  (benchmarks/mst.py: its graphs)

    cp = backend.cupy_module()
    say(f"# mst profile on {backend.gpu_properties()['name']}")
    for label, build in mst_benchmark._graphs(quick=False):
        if not any(s in label for s in args.graphs):
            continue
        g = ecl_weights(build())
        host_keys = keymod.weight_keys(np, backend.to_host(g.weights))
        say(f"== {label}: {g.n_vertices} vertices, {g.n_edges} entries, at most "
            f"{len(keymod.pass_limits(host_keys, g.n_vertices))} passes planned")
        reference = boruvka(g, device="gpu").edge_ids.get()
        rounds_rows(label, g, args.repeat)
        call_rows(label, g, args.repeat)
        if g.n_edges <= args.door_host_below:
            door_host_rows(label, g)
        phase_rows(label, g, reference)
        del g
        cp.get_default_memory_pool().free_all_blocks()
    return 0


if __name__ == "__main__":
    sys.exit(main())
