"""Benchmark: graph generators and locality orders on the GPU against our NumPy path.

The baseline is the same algorithm in NumPy on the host (the CPU path, which builds the
identical graph), run in this process. Slow baselines run at smaller sizes only; the
notes say which. Reading the shared road networks is host work on both paths and is
timed once for reference.
"""

from __future__ import annotations

import argparse

import harness
import numpy as np

from morphgpu import backend, generators, graph_io, reorder
from morphgpu.testing import shared_path


def _pair(record: harness.Record, args: argparse.Namespace, what: str, make, *,
          cpu: bool = True, **fields) -> None:
    """Time ``make(device)`` on the GPU (when present) and on the CPU (when asked)."""
    gpu_s = cpu_s = None
    result = None
    if args.side == "gpu":
        result = make("gpu")
        gpu_s = harness.gpu_seconds(lambda: make("gpu"), repeat=3, warmup=1)
    if cpu:
        result = result if result is not None else make("cpu")
        cpu_s = harness.cpu_seconds(lambda: make("cpu"), repeat=1)
    row = dict(what=what, **fields)
    if result is not None and hasattr(result, "n_edges"):
        row["csr_entries"] = result.n_edges
    if gpu_s is not None:
        row["gpu_s"] = gpu_s
    if cpu_s is not None:
        row["cpu_s"] = cpu_s
    if gpu_s and cpu_s:
        row["speedup"] = cpu_s / gpu_s
    record.row(**row)


def run(args: argparse.Namespace, record: harness.Record) -> None:
    quick = args.quick
    kron_scales = [16, 18] if quick else [18, 20, 22]
    kron_cpu_max = 18 if quick else 20
    record.note(f"kronecker edge_factor 16; NumPy baseline only up to scale {kron_cpu_max}")
    for scale in kron_scales:
        _pair(record, args, "kronecker", lambda d, s=scale: generators.kronecker(s, device=d),
              cpu=scale <= kron_cpu_max or args.side == "cpu", scale=scale)

    # The host's Kronecker draw against its whole-array form (the GPU's, in NumPy): the
    # same bits, so the ratio is the blocking's alone. Both on the CPU, this process.
    draw_scale = 18 if quick else 20
    draw_edges = 16 << draw_scale

    probabilities = (0.57, 0.19, 0.19)
    blocked_s = harness.cpu_seconds(lambda: generators._rmat_edges_host(
        draw_scale, draw_edges, *probabilities, 0, 0), repeat=1)
    arrays_s = harness.cpu_seconds(lambda: generators._rmat_edges_arrays(
        np, draw_scale, draw_edges, *probabilities, 0, 0), repeat=1)
    record.row(what="kronecker host draw (blocked / whole-array NumPy)", scale=draw_scale,
               edges=draw_edges, cpu_s=blocked_s, baseline_s=arrays_s,
               speedup=arrays_s / blocked_s)
    # The blocked draw on every usable core (the default) against one thread.
    one_thread_s = harness.cpu_seconds(lambda: generators._rmat_edges_host(
        draw_scale, draw_edges, *probabilities, 0, 0, threads=1), repeat=1)
    record.row(what="kronecker host draw (every core / one thread)", scale=draw_scale,
               edges=draw_edges, threads=backend.usable_cores(), cpu_s=blocked_s,
               baseline_s=one_thread_s, speedup=one_thread_s / blocked_s)

    n_geo = 1 << (18 if quick else 20)
    _pair(record, args, "random_geometric",
          lambda d: generators.random_geometric(n_geo, avg_degree=10, device=d), n=n_geo)
    if not quick and args.side == "gpu":
        record.note("random_geometric at 2^22 points: GPU only")
        _pair(record, args, "random_geometric",
              lambda d: generators.random_geometric(1 << 22, avg_degree=10, device=d),
              cpu=False, n=1 << 22)

    n_gnm = 1 << (18 if quick else 20)
    _pair(record, args, "gnm", lambda d: generators.gnm(n_gnm, 8 * n_gnm, device=d),
          n=n_gnm, m=8 * n_gnm)

    grid_side = 1024 if quick else 2048
    _pair(record, args, "grid2d", lambda d: generators.grid2d(grid_side, grid_side, device=d),
          n=grid_side * grid_side)

    road = shared_path("data", "roads", "NY.gr.xz")
    if road is None:
        record.note("shared road networks absent: reader and bfs_order on NY skipped")
        return
    read_s = harness.cpu_seconds(lambda: graph_io.read_graph(road), repeat=3)
    ny = graph_io.read_graph(road)
    record.row(what="read_graph NY.gr.xz (host, xz included)", cpu_s=read_s,
               csr_entries=ny.n_edges)
    shuffle = np.random.default_rng(0).permutation(ny.n_vertices)
    mixed = reorder.apply(ny, shuffle)

    def order_on(device: str):
        return reorder.bfs_order(mixed.to(device) if device == "gpu" else mixed)

    _pair(record, args, "bfs_order NY (shuffled)", order_on, n=ny.n_vertices)
    ordered = reorder.apply(mixed, order_on("cpu"))
    spans = [reorder.mean_edge_span(g) for g in (ny, mixed, ordered)]
    record.note(
        "NY mean |u-v| over edges: file order {:.0f}, shuffled {:.0f}, after bfs_order "
        "{:.0f}".format(*spans)
    )


if __name__ == "__main__":
    harness.main("generators", run)
