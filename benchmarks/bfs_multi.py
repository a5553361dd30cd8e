"""Partitioned BFS speed: Graph500 TEPS on 1, 2, 4 (8) GPUs, and the P-part in-process
path on one GPU against the unpartitioned search, in one run.

    python benchmarks/bfs_multi.py [--quick] [--scales 23,24] [--grid 4000]
                                   [--devices 0,1,2,3] [--parts 1,2,4,8] [--json PATH]
                                   [--beyond 29 [--only-beyond]]

Conventions (benchmarks/bfs.py's, so numbers compare):

- Time per search: CUDA events (on the caller's current device) around a whole
  ``bfs(g, root, ..., predecessors=True)`` call after a first call per configuration
  (``prepare_s``: partitioning, per-part copies, kernel loads), which is timed alone.
  With ``devices=`` the call synchronises every GPU before it returns (the labels are
  gathered on the host), so the events bracket the whole multi-GPU search.
- TEPS: Graph500's count (undirected input edges in the reached component: half the CSR
  entries out of reached vertices; on Kronecker graphs the generated tuples, duplicates
  included, via road_like.kronecker_input_degrees) over the time; ``gteps`` is the
  harmonic mean over 64 roots of degree > 0 (8 with --quick), fewer where the per-row
  time cap (--slice) ran out (``roots`` says how many).
- Rows per graph: ``unpartitioned`` (bfs(..., variant="auto"); on deep graphs auto's
  persistent-or-tiled choice is made before the timed calls), ``in-process P`` for
  each P of --parts on the current GPU with ``ratio`` = its mean time over the
  unpartitioned one (target <= 1.5), and ``nccl K`` for K = 1, 2, 4, 8 GPUs (those of
  --devices, default every visible GPU; only K <= the count) with ``speedup`` over
  ``nccl 1`` and ``vs_unpartitioned`` (the one-GPU search's time over this row's: above
  1 means K GPUs beat one GPU's best search).
- Checks: on the first root every row's distances equal the unpartitioned search's, and
  the unpartitioned result passes Graph500's checks (on the host, so only on graphs of at
  most --check-entries CSR entries; the tests check every variant on smaller graphs).

Kronecker scale 23..26 needs 2.2 / 4.3 / 8.6 / 17 GB for the CSR on one GPU (edge factor
16, int32 ids); the default scales are 21 and 23 (--quick: 16) and a 4000 x 4000 grid
(--quick: 500 x 500). ``--beyond 29:32`` adds first a row for a Kronecker graph built part
by part on the GPUs (PartitionedGraph.from_edge_chunks_on_gpus, edges drawn on each GPU)
whose whole CSR (132 GiB) fits on no single one.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import harness
import numpy as np
import road_like

from morphgpu import backend, generators
from morphgpu.bfs import bfs, graph500_check

IN_PROCESS_TARGET = 1.5


def pick_roots(indptr: np.ndarray, count: int, seed: int = 1) -> list[int]:
    candidates = np.flatnonzero(np.diff(indptr) > 0)
    rng = np.random.default_rng(seed)
    return [int(v) for v in rng.choice(candidates, size=min(count, candidates.size),
                                       replace=False)]


def harmonic(rates: list[float]) -> float:
    rates = [r for r in rates if r > 0]
    return len(rates) / sum(1.0 / r for r in rates) if rates else 0.0


def graph500_edges(dist: Any, degrees: Any) -> float:
    """Half the (input) degree sum over the reached vertices."""
    return float((degrees * (dist >= 0)).sum()) / 2


def bench_graph(label: str, g: Any, input_degrees: Any, args: Any,
                record: harness.Record, device_sets: list[list[int]]) -> None:
    from morphgpu.bfs.gpu import deep_choice, workspace  # noqa: PLC0415  (GPU only)

    host = g.to("cpu")
    roots = pick_roots(host.indptr, 8 if args.quick else 64)
    degrees = input_degrees if input_degrees is not None else g.degrees()
    configs: list[tuple[str, dict[str, Any]]] = [("unpartitioned", {})]
    configs += [(f"in-process {p}", {"partitions": p}) for p in args.part_list]
    configs += [(f"nccl {len(ids)}", {"devices": ids}) for ids in device_sets]
    reference = None
    means: dict[str, float] = {}
    for name, options in configs:
        def call(root: int, options: dict[str, Any] = options) -> Any:
            return bfs(g, root, device="gpu", predecessors=True, **options)

        try:
            t0 = time.perf_counter()
            first = call(roots[0])
            backend.synchronize()
            prepare_s = time.perf_counter() - t0
        except Exception as exc:  # one configuration failing is a finding, not a stop
            record.note(f"{label} / {name}: failed ({type(exc).__name__}: {exc})")
            continue
        if name == "unpartitioned" and first.variant in deep_choice.CANDIDATES:
            # auto's deep choice (persistent or tiled, by timing both) made now, outside
            # the timed calls, as benchmarks/bfs.py does: otherwise the relabelled copy's
            # build and the measuring fall inside this row's first few searches.
            deep_choice.choose_now(workspace(g), roots[0], True)
            backend.synchronize()
        dist0 = first.distances
        if reference is None:
            reference = dist0
            if host.indices.size <= args.check_entries:
                graph500_check(host.indptr, host.indices, roots[0], backend.to_host(dist0),
                               backend.to_host(first.predecessors))
            else:  # the host check sorts every edge: minutes at scale 23 and beyond
                record.note(f"{label}: Graph500's host check skipped ({host.indices.size} "
                            f"entries > --check-entries); rows are compared with "
                            f"the unpartitioned search's distances")
        same = bool((backend.to_host(dist0) == backend.to_host(reference)).all())
        seconds, rates = [], []
        deadline = time.perf_counter() + args.slice_s
        for root in roots:
            s, r = harness.event_seconds(lambda root=root: call(root))
            seconds.append(s)
            rates.append(graph500_edges(r.distances, degrees) / s)
            if time.perf_counter() > deadline and len(seconds) >= 4:
                break
        mean = statistics.fmean(seconds)
        means[name] = mean
        row: dict[str, Any] = {"graph": label, "config": name, "roots": len(seconds),
                               "gteps": harmonic(rates) / 1e9, "mean_ms": mean * 1e3,
                               "prepare_s": prepare_s, "levels": first.n_levels,
                               "same_distances": same}
        if name.startswith("in-process") and "unpartitioned" in means:
            row["ratio"] = mean / means["unpartitioned"]
            row["target"] = IN_PROCESS_TARGET
        if name.startswith("nccl") and "nccl 1" in means:
            row["speedup"] = means["nccl 1"] / mean
        if name.startswith("nccl") and "unpartitioned" in means:
            row["vs_unpartitioned"] = means["unpartitioned"] / mean
        record.row(**row)


def bench_beyond(spec: str, ids: list[int], args: Any, record: harness.Record) -> None:
    """Kronecker ``SCALE[:EDGE_FACTOR]`` (``spec``) built part by part on the GPUs of ``ids``
    (drawn on each GPU, never whole anywhere) and searched over them: the row for a graph
    larger than one GPU. TEPS: half the CSR entries out of reached vertices (duplicates as
    generated; self-loops, a fraction 0.62**scale, dropped) over the time."""
    from morphgpu.bfs import distributed, partitioned  # noqa: PLC0415

    scale, factor = distributed.kronecker_spec(spec)
    cp = backend.cupy_module()
    n = 1 << scale
    entries = 2 * factor * n
    whole = 8 * (n + 1) + 4 * entries  # int64 rows, int32 ids: the unpartitioned CSR alone
    one_gpu = int(cp.cuda.Device(ids[0]).mem_info[1])
    label = f"kron {scale} ef{factor} built on {len(ids)} GPUs"
    record.note(f"{label}: the whole CSR needs {whole / 2**30:.1f} GiB, one GPU has "
                f"{one_gpu / 2**30:.1f} GiB")
    t0 = time.perf_counter()
    chunks = generators.kronecker_edge_chunks(scale, factor, chunk_edges=1 << 26,
                                              device="gpu")
    pg = partitioned.PartitionedGraph.from_edge_chunks_on_gpus(chunks, n, ids,
                                                               symmetrize=True)
    build_s = time.perf_counter() - t0
    record.note(f"{label}: built in {build_s:.1f} s")
    del chunks  # each GPU's vertex permutation (8 bytes a vertex) goes with it
    for d in ids:
        with cp.cuda.Device(d):
            cp.get_default_memory_pool().free_all_blocks()
    degrees = np.concatenate([backend.to_host(cp.diff(pg.parts[p].indptr))
                              for p in sorted(pg.parts)])
    roots = pick_roots(np.concatenate([[0], np.cumsum(degrees)]), 8 if args.quick else 64)
    t0 = time.perf_counter()
    first = bfs(pg, roots[0], devices=ids, predecessors=True)
    prepare_s = time.perf_counter() - t0
    seconds, rates = [], []
    deadline = time.perf_counter() + args.slice_s
    for root in roots:
        s, r = harness.event_seconds(
            lambda root=root: bfs(pg, root, devices=ids, predecessors=True))
        seconds.append(s)
        rates.append(r.n_edges_traversed / 2 / s)
        if time.perf_counter() > deadline and len(seconds) >= 4:
            break
    record.row(graph=label, config=f"nccl {len(ids)}", roots=len(seconds),
               gteps=harmonic(rates) / 1e9, mean_ms=statistics.fmean(seconds) * 1e3,
               build_s=build_s, prepare_s=prepare_s, levels=first.n_levels,
               whole_csr_gib=whole / 2**30, one_gpu_gib=one_gpu / 2**30)


def run(args: Any, record: harness.Record) -> None:
    cp = backend.cupy_module()
    count = int(cp.cuda.runtime.getDeviceCount())
    ids = ([int(d) for d in args.devices.split(",")] if args.devices
           else list(range(count)))
    device_sets = [ids[:k] for k in (1, 2, 4, 8) if k <= len(ids)]
    if args.no_nccl:
        device_sets = []
    else:
        try:
            from cupy.cuda import nccl  # noqa: F401, PLC0415
        except Exception as exc:
            record.note(f"NCCL unavailable ({exc}): the nccl rows are skipped")
            device_sets = []
    record.note(f"{count} GPU(s) visible; nccl rows on {device_sets or 'none'}")
    args.part_list = [int(p) for p in args.parts.split(",")]
    args.slice_s = args.slice or (1.0 if args.quick else 20.0)
    scales = ([int(s) for s in args.scales.split(",")] if args.scales
              else ([16] if args.quick else [21, 23]))
    side = args.grid or (500 if args.quick else 4000)
    cases: list[tuple[str, Callable[[], Any], Callable[[], Any] | None]] = [
        (f"kron {s} ef16", lambda s=s: generators.kronecker(s, 16, device="gpu"),
         lambda s=s: road_like.kronecker_input_degrees(s, 16, device="gpu"))
        for s in scales]
    cases.append((f"grid2d {side}x{side}", lambda: generators.grid2d(side, side, device="gpu"),
                  None))
    if args.beyond:
        bench_beyond(args.beyond, ids, args, record)
        if args.only_beyond:
            return
    for label, build, input_degrees in cases:
        try:
            g = build()
            degrees = input_degrees() if input_degrees is not None else None
        except Exception as exc:
            record.note(f"{label}: not built ({type(exc).__name__}: {exc})")
            continue
        bench_graph(label, g, degrees, args, record, device_sets)
        del g, degrees
        cp.get_default_memory_pool().free_all_blocks()


def _add_args(parser: Any) -> None:
    parser.add_argument("--scales", default=None,
                        help="Kronecker scales, comma-separated (default 21,23; --quick 16)")
    parser.add_argument("--grid", type=int, default=None,
                        help="side of the square grid (default 4000; --quick 500)")
    parser.add_argument("--devices", default=None,
                        help="GPU ids for the nccl rows, comma-separated (default: all)")
    parser.add_argument("--no-nccl", action="store_true", help="skip the nccl rows")
    parser.add_argument("--parts", default="1,2,4,8",
                        help="part counts of the in-process rows (default 1,2,4,8)")
    parser.add_argument("--check-entries", type=int, default=1 << 26,
                        help="run Graph500's host check on graphs of at most this many "
                             "CSR entries (default 2^26)")
    parser.add_argument("--beyond", default=None, metavar="SCALE[:EDGE_FACTOR]",
                        help="first, this Kronecker graph built part by part on the GPUs "
                             "of --devices and searched over all of them (a graph larger "
                             "than one GPU: 29:32 is a 132 GiB CSR)")
    parser.add_argument("--only-beyond", action="store_true",
                        help="with --beyond: stop after that row")
    parser.add_argument("--slice", type=float, default=None,
                        help="seconds of searches per row before fewer than 64 roots")


if __name__ == "__main__":
    harness.main("bfs_multi", run, _add_args)
