"""MST: our GPU Borůvka against SciPy's minimum_spanning_tree, with ECL-MST's weights.

Every graph gets ECL-MST's weight rule, the line in its public source (ECL-MST_10.cu):
``eweight[j] = 1 + ((i * k) % nodes)`` for the CSR entry j of row i with neighbour k, in
C int arithmetic, negated when negative (morphgpu.mst.ecl_weights). So the times here
compare with ECL-MST's published H200 times on the same graphs and weights (printed
beside ours; they were measured on an H200, so the ratio is indicative when this runs
elsewhere).

Per graph, with CUDA events, median of repeats: our whole ``boruvka()`` call (``ms``:
allocations, the launches, the one read-back, the result); the persistent rounds kernel
alone (``kernel_ms``, as measured before issue 8's host-overhead work); the rounds and
the forest writer together (``kernels_ms``); and what the call adds on the host
(``host_ms`` = ms - kernels_ms). Medges/s counts directed CSR entries (ECL-MST's
convention); SciPy's time on the same graph in this process (once on graphs above 20M
entries: it takes tens of seconds); the speedup; and the total weights compared (exact:
integer weights).

Both doors and ECL-MST in the same run: ``mst_ms`` is ``minimum_spanning_tree`` on a
``cupyx.scipy.sparse.csr_matrix`` of the same graph (float64 weights, CuPy's sparse type;
the result a CuPy CSR matrix), ``mst_neg_ms`` the same with the weights negated, and
``mst_host_ms`` that call on the SciPy matrix (structure on the GPU kept by graph_cache
after the first call; weights over, the tree back). ``ecl_ms``: ECL-MST itself
(../shared/anchors/ecl-mst, built here with nvcc unless ``--ecl BINARY`` names a build)
on the same graph written as ``.egr``, its own device time (fastest of ``--ecl-repeat``
runs; like ours it excludes copying the graph over), and whether it said "all good".
``--graphs`` picks graphs by label substring.
"""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import harness
import numpy as np
from scipy.sparse.csgraph import minimum_spanning_tree as scipy_mst

from morphgpu import backend, generators, graph_io, testing
from morphgpu.mst import boruvka, minimum_spanning_tree
from morphgpu.mst.ecl_weights import ecl_weights
from morphgpu.mst.gpu import BoruvkaGPU

# ECL-MST on an H200 (issue 8), milliseconds, for the graphs we can build identically.
ECL_H200_MS = {
    "road COL": 0.69,
    "grid2d 4096x4096": 27.0,
    "random 2^20 deg 4": 2.2,
    "kron 21 ef16": 7.2,
}
SCIPY_ONCE_ABOVE = 20_000_000


def _graphs(quick: bool) -> list[tuple[str, Any]]:
    """(label, thunk building the GPU CSRGraph, unweighted)."""
    out: list[tuple[str, Any]] = harness.road_graph_thunks("gpu")
    out += [
        ("grid2d 1024x1024", lambda: generators.grid2d(1024, 1024, device="gpu")),
        # Random4-20: 2^20 vertices, average degree 4 (2^21 undirected edges).
        ("random 2^20 deg 4", lambda: generators.gnm(2**20, 2**21, seed=1, device="gpu")),
    ]
    if quick:
        out.append(("rmat 18 ef8", lambda: generators.rmat(18, 8, device="gpu")))
        return out
    out += [
        ("rmat 20 ef8", lambda: generators.rmat(20, 8, device="gpu")),
        ("kron 21 ef16", lambda: generators.kronecker(21, 16, device="gpu")),
        ("kron 22 ef16", lambda: generators.kronecker(22, 16, device="gpu")),
        ("grid2d 4096x4096", lambda: generators.grid2d(4096, 4096, device="gpu")),
        # Random8-23: 2^23 vertices, average degree 8 (2^25 undirected edges).
        ("random 2^23 deg 8", lambda: generators.gnm(2**23, 2**25, seed=1, device="gpu")),
        ("delaunay 2^22", lambda: generators.delaunay_graph(2**22, device="gpu")),
    ]
    return out


def _ecl_binary(args: Any, record: harness.Record, workdir: Path) -> Path | None:
    """ECL-MST built for this GPU (or ``--ecl``), or None with a note saying why."""
    if args.ecl:
        return Path(args.ecl)
    source = testing.shared_path("anchors", "ecl-mst", "ECL-MST_10.cu")
    nvcc = shutil.which("nvcc")
    if source is None or nvcc is None:
        record.note("ECL-MST not run: " + ("no ../shared/anchors/ecl-mst" if source is None
                                           else "nvcc not found"))
        return None
    binary = workdir / "ecl-mst"
    proc = subprocess.run([nvcc, "-O3", "-arch=native", "-o", str(binary), str(source)],
                          capture_output=True, text=True)
    if proc.returncode:
        record.note(f"ECL-MST not built: {proc.stderr.strip()[-300:]}")
        return None
    record.note(f"ECL-MST built from {source} with nvcc -O3 -arch=native")
    return binary


def _ecl_run(binary: Path, graph: Any, workdir: Path, repeat: int) -> dict[str, Any]:
    """ECL-MST's own device time (fastest of ``repeat`` runs) and its verdict."""
    path = workdir / "graph.egr"
    host = graph.to("cpu")
    # Unweighted: ECL-MST applies its weight rule itself (the one ecl_weights mirrors).
    graph_io.write_ecl_egr(type(host)(host.indptr, host.indices, None, host.n_vertices,
                                      host.directed), path)
    times, good = [], True
    for _ in range(repeat):
        out = subprocess.run([str(binary), str(path)], capture_output=True, text=True,
                             timeout=1800).stdout
        found = re.search(r"Dev[+-]:\s*([0-9.]+)\s*s", out)
        if found is None:
            return {"ecl_error": out.strip()[-200:]}
        times.append(float(found.group(1)))
        good &= "all good" in out
    path.unlink()
    return {"ecl_ms": min(times) * 1e3, "ecl_all_good": good}


def run(args: Any, record: harness.Record) -> None:
    record.note(
        "weights: ECL-MST's rule w = 1 + ((i*k) % n) for CSR entry (row i, neighbour k), "
        "n = vertex count, C int arithmetic (i*k wraps mod 2^32, % truncates), |w| if "
        "negative; from ECL-MST_10.cu in github.com/burtscher/ECL-MST"
    )
    record.note("Medges/s counts directed CSR entries (ECL-MST's convention)")
    record.note(
        f"SciPy runs once on graphs above {SCIPY_ONCE_ABOVE // 10**6}M entries, else the "
        "median of 3; ECL-MST's times are its H200 figures from issue 8"
    )
    repeat = 5 if args.quick else 10
    workdir = Path(tempfile.mkdtemp(prefix="mst-bench-"))
    ecl = None if args.no_ecl else _ecl_binary(args, record, workdir)
    import cupyx.scipy.sparse as cusp  # noqa: PLC0415

    for label, build in _graphs(args.quick):
        if args.graphs and not any(g in label for g in args.graphs):
            continue
        t0 = time.perf_counter()
        try:
            graph = ecl_weights(build())
        except Exception as exc:  # a generator not available here should not end the run
            record.note(f"{label}: skipped ({type(exc).__name__}: {exc})")
            continue
        build_s = time.perf_counter() - t0
        m = graph.n_edges
        result = boruvka(graph, device="gpu")
        full_s = harness.gpu_seconds(lambda g=graph: boruvka(g, device="gpu"), repeat=repeat)
        runner = BoruvkaGPU(
            graph.n_vertices, graph.indptr, graph.indices, graph.weights,
            symmetric=not graph.directed,
        )
        kernel_s = harness.gpu_seconds(
            lambda r=runner: r.launch(write_forest=False), repeat=repeat
        )
        kernels_s = harness.gpu_seconds(runner.launch, repeat=repeat)
        host = graph.to_scipy()
        t1 = time.perf_counter()
        scipy_total = int(round(float(scipy_mst(host).sum())))
        scipy_times = [time.perf_counter() - t1]
        while m <= SCIPY_ONCE_ABOVE and len(scipy_times) < 3:
            t1 = time.perf_counter()
            scipy_mst(host)
            scipy_times.append(time.perf_counter() - t1)
        scipy_s = statistics.median(scipy_times)
        row = dict(
            graph=label,
            vertices=graph.n_vertices,
            entries=m,
            rounds=result.n_rounds,
            components=result.n_components,
            ms=full_s * 1e3,
            kernel_ms=kernel_s * 1e3,
            kernels_ms=kernels_s * 1e3,
            host_ms=(full_s - kernels_s) * 1e3,
            medges_s=m / full_s / 1e6,
            kernel_medges_s=m / kernel_s / 1e6,
            scipy_ms=scipy_s * 1e3,
            speedup_vs_scipy=scipy_s / full_s,
            same_total_as_scipy=result.total_weight == scipy_total,
            build_s=build_s,
        )
        # The SciPy door, as users call it: CuPy and SciPy sparse inputs (float64).
        on_gpu = cusp.csr_matrix(host.astype(np.float64))
        tree = minimum_spanning_tree(on_gpu, device="gpu")
        row["mst_same_total"] = int(round(float(tree.sum()))) == scipy_total
        mst_s = harness.gpu_seconds(
            lambda a=on_gpu: minimum_spanning_tree(a, device="gpu"), repeat=repeat)
        negated = cusp.csr_matrix(-host.astype(np.float64))
        neg_s = harness.gpu_seconds(
            lambda a=negated: minimum_spanning_tree(a, device="gpu"), repeat=repeat)
        host64 = host.astype(np.float64)
        host_s = harness.gpu_seconds(
            lambda a=host64: minimum_spanning_tree(a, device="gpu"), repeat=repeat)
        row.update(mst_ms=mst_s * 1e3, mst_over_boruvka=mst_s / full_s,
                   mst_neg_ms=neg_s * 1e3, mst_host_ms=host_s * 1e3)
        if ecl is not None:
            row.update(_ecl_run(ecl, graph, workdir, args.ecl_repeat))
            if "ecl_ms" in row:
                row["ecl_ms_over_mst"] = row["ecl_ms"] / row["mst_ms"]
                row["ecl_ms_over_boruvka"] = row["ecl_ms"] / row["ms"]
        if label in ECL_H200_MS:
            row["ecl_h200_ms"] = ECL_H200_MS[label]
        record.row(**row)
        del runner, graph, host, result, on_gpu, negated, host64, tree
        backend.cupy_module().get_default_memory_pool().free_all_blocks()
    shutil.rmtree(workdir, ignore_errors=True)


def _args(parser: Any) -> None:
    parser.add_argument("--ecl", help="an ECL-MST binary (default: build the anchor's)")
    parser.add_argument("--no-ecl", action="store_true", help="do not run ECL-MST")
    parser.add_argument("--ecl-repeat", type=int, default=3)
    parser.add_argument("--graphs", nargs="*", help="only graphs whose label holds one of these")


if __name__ == "__main__":
    harness.main("mst", run, _args)
