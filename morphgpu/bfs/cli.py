"""``morphgpu bfs FILE --source S [--variant V] [--device D] [--json]`` and the BFS demo."""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from .. import backend, generators, graph_formats, report
from ..whole_file import npy_path, refuse_input_as_output, written_whole
from . import updates, variants
from .api import bfs
from .validate import BFSValidationError, graph500_check


def _summary(result: Any, seconds: float, label: str, valid: bool | None,
             directed: bool) -> dict[str, Any]:
    """The command's report. ``edges_traversed`` and ``mteps`` count as Graph500 does:
    input edges in the searched component, so on an undirected graph half the CSR entries
    out of reached vertices (each edge is stored both ways); ``csr_entries_traversed`` is
    the directed-entry count, labelled as such."""
    dist = backend.to_host(result.distances)
    entries = result.n_edges_traversed
    edges = entries if directed else entries / 2
    out = {
        "input": label,
        "variant": result.variant,
        "device": backend.device_name(result.device),
        "reached": int((dist >= 0).sum()),
        "levels": result.n_levels,
        "edges_traversed": edges,
        "csr_entries_traversed": entries,
        "seconds": seconds,
        "mteps": edges / seconds / 1e6 if seconds > 0 else 0.0,
    }
    if valid is not None:
        out["valid"] = valid
    return out


def _run(args: argparse.Namespace) -> int:
    with report.Progress("bfs", enabled=not args.json) as progress:
        return _search(args, progress)


def _search(args: argparse.Namespace, progress: report.Progress) -> int:
    if args.output:
        refuse_input_as_output([npy_path(args.output)], [args.file], "--output")
    progress.stage(f"reading {args.file}")
    graph = graph_formats.read(args.file, args.format)
    side = backend.resolve_device(args.device, who="morphgpu bfs")
    g = graph.to(side)
    progress.stage(f"searching from {args.source} ({graph.n_vertices} vertices, "
                   f"{graph.n_edges} edges, {side})")
    t0 = time.perf_counter()
    # --device auto keeps auto's choice (SciPy on a machine without a GPU)
    result = bfs(g, args.source, variant=args.variant,
                 device=args.device if args.device == "auto" else side,
                 predecessors=args.check)
    backend.synchronize()
    seconds = time.perf_counter() - t0
    valid = None
    problem = None
    if args.check:
        progress.stage("Graph500 checks")
        host = graph.to("cpu")
        try:
            graph500_check(host.indptr, host.indices, args.source,
                           backend.to_host(result.distances),
                           backend.to_host(result.predecessors))
            valid = True
        except BFSValidationError as exc:
            # In the report, not printed: a line printed here went to stdout ahead of the
            # --json document, which then did not parse.
            problem = str(exc)
            valid = False
    out = _summary(result, seconds, str(args.file), valid, bool(graph.directed))
    if problem is not None:
        out["problem"] = problem
    if args.output:
        path = npy_path(args.output)
        with written_whole(path, "wb") as fh:
            np.save(fh, backend.to_host(result.distances))
        out["distances_file"] = path
    progress.close()
    report.emit(out, as_json=args.json, title="morphgpu bfs")
    return 0 if valid is not False else 1


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("bfs", help="breadth-first search from one source")
    p.add_argument("file", help="graph file (any format morphgpu.graph_io reads, METIS "
                                "and SNAP edge lists too; see --format)")
    graph_formats.add_format_option(p)
    p.add_argument("--source", type=int, required=True, help="source vertex (0-based)")
    p.add_argument("--variant", default="auto",
                   choices=["auto", *variants.names()], help="strategy (default: auto)")
    report.add_device_and_json(p)
    p.add_argument("--check", action="store_true", help="run Graph500's checks on the result")
    p.add_argument("--output", type=report.output_path,
                   help="save the distances as a .npy file (.npy is added to "
                   "a name without it)")
    p.set_defaults(run=_run)
    updates.register(subparsers)  # morphgpu dyn: BFS on a graph that changes


def demo(device: str) -> dict[str, Any]:
    """BFS on a 2D grid and a Kronecker graph, checked by Graph500's rules."""
    cases = [("grid2d 400x300", generators.grid2d(400, 300, device=device), 0),
             ("kronecker scale 14", generators.kronecker(14, 16, device=device), None)]
    valid = True
    seconds = 0.0
    parts = []
    for label, g, source in cases:
        host = g.to("cpu")
        if source is None:
            source = int(np.argmax(np.diff(host.indptr)))
        t0 = time.perf_counter()
        r = bfs(g, source, device=device, predecessors=True)
        backend.synchronize()
        seconds += time.perf_counter() - t0
        try:
            graph500_check(host.indptr, host.indices, source, backend.to_host(r.distances),
                           backend.to_host(r.predecessors))
        except BFSValidationError:
            valid = False
        parts.append(f"{label}: {r.n_levels} levels, {r.variant}")
    return {"algorithm": "bfs", "input": "grid2d 400x300 + kronecker 14", "valid": valid,
            "seconds": seconds, "summary": "; ".join(parts)}
