"""``mpirun -n K python -m morphgpu.bfs.distributed FILE --source S``: one process per GPU.

Every rank reads the graph file on its host, keeps only its own part's rows (the
partition is balanced by edges over K parts; the whole CSR never goes to one GPU), takes
the GPU of its local rank, and joins an NCCL communicator whose unique id rank 0
broadcasts through mpi4py (:class:`morphgpu.bfs.exchange.MpiNcclExchange`). The level loop
is :func:`morphgpu.bfs.partitioned.run_levels`, as in-process. Rank 0 prints the summary
``morphgpu bfs`` prints (``--json`` for JSON); ``--check`` runs Graph500's checks there.

A rank that fails (a bad file, a collective past ``--timeout``) prints its error and calls
``MPI.COMM_WORLD.Abort``, which ends every rank; no rank waits forever in the level loop.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

from .. import graph_formats, report
from . import exchange as exchange_mod
from . import partitioned
from .api import BFSResult
from .validate import BFSValidationError, graph500_check


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m morphgpu.bfs.distributed",
                                description="partitioned BFS, one MPI process per GPU")
    p.add_argument("file", help="graph file (any format morphgpu bfs reads)")
    graph_formats.add_format_option(p)
    p.add_argument("--source", type=int, required=True, help="source vertex (0-based)")
    p.add_argument("--check", action="store_true", help="Graph500's checks on rank 0")
    p.add_argument("--timeout", type=float, default=exchange_mod.DEFAULT_TIMEOUT_S,
                   help="seconds a collective may take before the search is abandoned")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    return p


def run(args: argparse.Namespace, exchange: exchange_mod.MpiNcclExchange, *,
        side: str = "gpu") -> dict[str, Any] | None:
    """One rank's share: its part, the search, the summary (returned on rank 0).
    ``side="cpu"`` runs NumPy parts (for the loopback exchange in tests)."""
    from .cli import _summary  # noqa: PLC0415

    (rank,) = exchange.local_parts
    graph = graph_formats.read(args.file, args.format)
    if not 0 <= args.source < graph.n_vertices:
        raise ValueError(f"--source {args.source} is outside [0, {graph.n_vertices})")
    pg = partitioned.PartitionedGraph.from_csr(graph, exchange.n_parts, only=[rank])
    comm = exchange.comms[0]
    engines = partitioned.engines_for(
        pg, [rank], side, args.check,
        devices=[comm.device_id] if side == "gpu" else None,
        streams=[comm.stream] if side == "gpu" else None)
    exchange.all_gather_rows([[0]])  # start together: the timer measures the search
    t0 = time.perf_counter()
    out = partitioned.search(engines, exchange, args.source, args.check)
    seconds = time.perf_counter() - t0
    if rank != 0:
        return None
    result = BFSResult(distances=out.distances, predecessors=out.predecessors,
                       variant=f"partitioned-mpi-{exchange.n_parts}", device=side,
                       source=args.source, figures=(out.edges, out.top))
    valid = None
    if args.check:
        try:
            graph500_check(graph.indptr, graph.indices, args.source, out.distances,
                           out.predecessors)
            valid = True
        except BFSValidationError as exc:
            print(f"morphgpu bfs (distributed): {exc}", file=sys.stderr)
            valid = False
    summary = _summary(result, seconds, str(args.file), valid)
    summary["ranks"] = exchange.n_parts
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        MPI = exchange_mod.require_mpi()  # noqa: N806
    except exchange_mod.ExchangeError as exc:
        print(f"morphgpu.bfs.distributed: {exc}", file=sys.stderr)
        return 2
    world = MPI.COMM_WORLD
    try:
        ex = exchange_mod.MpiNcclExchange(world, timeout=args.timeout)
        summary = run(args, ex)
    except Exception as exc:  # noqa: BLE001  (end every rank, not just this one)
        print(f"morphgpu.bfs.distributed: rank {world.Get_rank()}: "
              f"{type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        world.Abort(1)
        return 1
    if summary is not None:
        report.emit(summary, as_json=args.json, title="morphgpu bfs (distributed)")
        return 0 if summary.get("valid") is not False else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
