"""``morphgpu mst FILE [--weights W] [--device D] [--check] [--json]`` and the MST demo."""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import scipy.sparse.csgraph as csgraph

from .. import backend, generators, graph_io, report
from ..csr import CSRGraph
from .api import MSTResult, boruvka
from .ecl_weights import ecl_weights


def _with_weights(graph: CSRGraph, rule: str) -> CSRGraph:
    # Unit weights make every spanning tree minimal, so a file without weights gets
    # ECL-MST's rule unless asked otherwise.
    if rule == "ecl" or (rule == "auto" and graph.weights is None):
        return ecl_weights(graph)
    if rule == "unit":
        return graph.with_weights(graph.xp.ones(graph.n_edges, dtype=np.int32))
    return graph


def scipy_reference(graph: CSRGraph) -> tuple[float, int]:
    """(total weight, components) by SciPy: Kruskal and a separate component count."""
    matrix = graph.to_scipy()
    total = float(csgraph.minimum_spanning_tree(matrix).sum())
    components = int(csgraph.connected_components(matrix, directed=False)[0])
    return total, components


def _agrees(result: MSTResult, reference: tuple[float, int]) -> bool:
    total, components = reference
    if isinstance(result.total_weight, int):
        # SciPy sums in float64: exact while the total stays below 2^53.
        same_total = result.total_weight == int(round(total)) or abs(total) >= 2**53
    else:
        same_total = abs(result.total_weight - total) <= 1e-9 * max(1.0, abs(total))
    return same_total and result.n_components == components


def _summary(label: str, graph: CSRGraph, result: MSTResult, seconds: float) -> dict[str, Any]:
    return {
        "input": label,
        "vertices": graph.n_vertices,
        "csr_entries": graph.n_edges,
        "device": backend.device_name(result.device),  # type: ignore[arg-type]
        "forest_edges": result.n_edges,
        "components": result.n_components,
        "total_weight": result.total_weight,
        "rounds": result.n_rounds,
        "seconds": seconds,
        "medges_per_s": graph.n_edges / seconds / 1e6 if seconds > 0 else 0.0,
    }


def _run(args: argparse.Namespace) -> int:
    graph = _with_weights(graph_io.read_graph(args.file), args.weights)
    side = backend.resolve_device(args.device, who="morphgpu mst")
    g = graph.to(side)
    t0 = time.perf_counter()
    result = boruvka(g, device=side)
    backend.synchronize()
    seconds = time.perf_counter() - t0
    out = _summary(str(args.file), graph, result, seconds)
    ok = True
    if args.check:
        ok = _agrees(result, scipy_reference(graph))
        out["matches_scipy"] = ok
    if args.output:
        np.save(args.output, np.stack([backend.to_host(result.src), backend.to_host(result.dst)]))
        out["edges_file"] = str(args.output)
    report.emit(out, as_json=args.json, title="morphgpu mst")
    return 0 if ok else 1


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("mst", help="minimum spanning forest (Borůvka)")
    p.add_argument("file", help="graph file (any format morphgpu.graph_io reads)")
    p.add_argument(
        "--weights",
        default="auto",
        choices=["auto", "ecl", "unit"],
        help="auto: the file's weights, else ECL-MST's rule 1+(i*k)%%n; ecl: that rule; unit: 1",
    )
    report.add_device_and_json(p)
    p.add_argument("--check", action="store_true", help="compare with SciPy's total weight")
    p.add_argument("--output", help="save the forest's (src, dst) as a 2 x k .npy file")
    p.set_defaults(run=_run)


def demo(device: str) -> dict[str, Any]:
    """A 2D grid with ECL weights and a disconnected random graph, checked against SciPy."""
    cases = [
        ("grid2d 300x300 (ECL weights)", ecl_weights(generators.grid2d(300, 300, device="cpu"))),
        (
            "gnm 50000 nodes 60000 edges (uniform weights)",
            generators.random_weights(generators.gnm(50_000, 60_000, seed=1, device="cpu")),
        ),
    ]
    valid = True
    seconds = 0.0
    parts = []
    for label, graph in cases:
        g = graph.to(device)
        t0 = time.perf_counter()
        result = boruvka(g, device=device)
        backend.synchronize()
        seconds += time.perf_counter() - t0
        valid &= _agrees(result, scipy_reference(graph))
        parts.append(f"{label}: {result.n_components} components, {result.n_rounds} rounds")
    return {
        "algorithm": "mst",
        "input": "grid2d 300x300 + gnm 50000/60000",
        "valid": bool(valid),
        "seconds": seconds,
        "summary": "; ".join(parts),
    }
