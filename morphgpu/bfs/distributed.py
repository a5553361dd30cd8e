"""``mpirun -n K python -m morphgpu.bfs.distributed FILE --source S``: one process per GPU.

Every rank reads the graph file on its host, keeps only its own part's rows (the
partition is balanced by edges over K parts; the whole CSR never goes to one GPU), or with
``--kronecker SCALE[:EF]`` draws Graph500's Kronecker edges in chunks and keeps its part's
(no process ever holds the whole graph: graphs larger than one GPU, or one host), takes
the GPU of its local rank, and joins an NCCL communicator whose unique id rank 0
broadcasts through mpi4py (:class:`morphgpu.bfs.exchange.MpiNcclExchange`). The level loops
are the in-process ones (:func:`morphgpu.bfs.partitioned.search`: the bitmap levels for an
undirected graph, the message levels otherwise). Rank 0 prints the summary
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

from .. import generators, graph_formats, report
from . import exchange as exchange_mod
from . import partitioned
from .api import BFSResult
from .validate import BFSValidationError, graph500_check


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m morphgpu.bfs.distributed",
                                description="partitioned BFS, one MPI process per GPU")
    p.add_argument("file", nargs="?", help="graph file (any format morphgpu bfs reads)")
    p.add_argument("--kronecker", metavar="SCALE[:EDGE_FACTOR]",
                   help="instead of a file: Graph500's Kronecker graph (edge factor 16 by "
                        "default), each rank drawing the edges in chunks and keeping its "
                        "own part's (the whole graph is never held anywhere)")
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
    graph, pg = _own_part(args, exchange.n_parts, rank)
    n = pg.n_vertices
    if not 0 <= args.source < n:
        raise ValueError(f"--source {args.source} is outside [0, {n})")
    comm = exchange.comms[0]
    engines = partitioned.engines_for(
        pg, [rank], side, args.check,
        devices=[comm.device_id] if side == "gpu" else None,
        streams=[comm.stream] if side == "gpu" else None)
    exchange.all_gather_rows([[0]])  # start together: the timer measures the search
    t0 = time.perf_counter()
    out = partitioned.search(engines, exchange, args.source, args.check,
                             partitioned.direction_for(pg))
    seconds = time.perf_counter() - t0
    if rank != 0:
        return None
    result = BFSResult(distances=out.distances, predecessors=out.predecessors,
                       variant=f"partitioned-mpi-{exchange.n_parts}", device=side,
                       source=args.source, figures=(out.edges, out.top))
    valid = None
    if args.check and graph is not None:
        try:
            graph500_check(graph.indptr, graph.indices, args.source, out.distances,
                           out.predecessors)
            valid = True
        except BFSValidationError as exc:
            print(f"morphgpu bfs (distributed): {exc}", file=sys.stderr)
            valid = False
    summary = _summary(result, seconds, str(args.file), valid, bool(pg.directed))
    summary["ranks"] = exchange.n_parts
    return summary


def kronecker_spec(text: str) -> tuple[int, int]:
    """``SCALE[:EDGE_FACTOR]`` as two integers (edge factor 16 when left out)."""
    scale, _, factor = text.partition(":")
    try:
        return int(scale), int(factor) if factor else 16
    except ValueError:
        raise ValueError(f"--kronecker expects SCALE[:EDGE_FACTOR], got {text!r}") from None


def _own_part(args: argparse.Namespace, n_parts: int,
              rank: int) -> tuple[Any, partitioned.PartitionedGraph]:
    """(the whole graph, or None where it is never built; this rank's part)."""
    if args.kronecker is not None:
        scale, factor = kronecker_spec(args.kronecker)
        chunks = generators.kronecker_edge_chunks(scale, factor)
        return None, partitioned.PartitionedGraph.from_edge_chunks(
            chunks, 1 << scale, n_parts, symmetrize=True, only=[rank])
    graph = graph_formats.read(args.file, args.format)
    return graph, partitioned.PartitionedGraph.from_csr(graph, n_parts, only=[rank])


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if (args.file is None) == (args.kronecker is None):
        parser().error("give a graph FILE or --kronecker SCALE[:EDGE_FACTOR], not both")
    if args.kronecker is not None and args.check:
        parser().error("--check needs the whole graph on rank 0: not with --kronecker")
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
