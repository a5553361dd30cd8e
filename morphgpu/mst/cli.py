"""``morphgpu mst FILE [--weights W] [--device D] [--check] [--json]`` and the MST demo."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse.csgraph as csgraph

from .. import backend, generators, graph_formats, report
from ..csr import CSRGraph
from ..whole_file import npy_path, refuse_input_as_output, written_whole
from .api import MSTResult, boruvka
from .ecl_weights import ecl_weights

WEIGHT_RULES = {
    "file": "the file's weights",
    "ecl": "ECL-MST's rule 1+(i*k) mod n",
    "unit": "unit weights",
}


def _with_weights(graph: CSRGraph, rule: str) -> tuple[CSRGraph, str]:
    """The graph with the weights ``rule`` asks for, and which rule ran ("file", "ecl",
    "unit"). Unit weights make every spanning tree minimal, so under ``auto`` a file
    without weights gets ECL-MST's rule."""
    if rule == "ecl" or (rule == "auto" and graph.weights is None):
        return ecl_weights(graph), "ecl"
    if rule == "unit":
        return graph.with_weights(graph.xp.ones(graph.n_edges, dtype=np.int32)), "unit"
    return graph, "file"


def _weights_said(used: str, asked: str) -> str:
    said = WEIGHT_RULES[used]
    if asked == "auto":
        said += " (auto: the file has weights)" if used == "file" else \
            " (auto: the file has no weights)"
    return said


TEXT_SUFFIXES = (".txt", ".tsv", ".csv", ".el")


def _forest_path(path: str) -> str:
    """The file write_forest writes for ``path``: as given for a text suffix, else .npy."""
    return path if Path(path).suffix.lower() in TEXT_SUFFIXES else npy_path(path)


def write_forest(result: MSTResult, path: str) -> str:
    """The forest's edges with their weights: ``.npy`` a 3 x k array (rows src, dst,
    weight; int64 for integer weights, else float64), ``.txt``/``.tsv``/``.csv``/``.el``
    one ``src dst weight`` line per edge. Returns the path written."""
    src, dst, w = (backend.to_host(a) for a in (result.src, result.dst, result.weights))
    suffix = Path(path).suffix.lower()
    if suffix in TEXT_SUFFIXES:
        sep = "," if suffix == ".csv" else ("\t" if suffix == ".tsv" else " ")
        fmt = "%d" if w.dtype.kind in "iub" else "%.17g"
        with written_whole(path, "w") as fh:
            np.savetxt(fh, np.column_stack([src, dst, w]).astype(object),
                       fmt=["%d", "%d", fmt], delimiter=sep)
        return path
    dtype = np.int64 if w.dtype.kind in "iub" else np.float64
    path = npy_path(path)
    with written_whole(path, "wb") as fh:
        np.save(fh, np.stack([src.astype(dtype), dst.astype(dtype), w.astype(dtype)]))
    return path


def scipy_reference(graph: CSRGraph) -> tuple[float, int]:
    """(total weight, components) by SciPy: Kruskal and a separate component count.
    Parallel edges are merged to their lightest first: the CSR matrix summed them (arcs
    1->2 of weights 7 and 3 became one of 10), and `mst --check` called a correct forest
    wrong."""
    matrix = graph.symmetrized("min").to_scipy()
    total = float(csgraph.minimum_spanning_tree(matrix).sum())
    components = int(csgraph.connected_components(matrix, directed=False)[0])
    return total, components


def _agrees(result: MSTResult, reference: tuple[float, int]) -> bool:
    total, components = reference
    if isinstance(result.total_weight, int):
        # SciPy sums in float64: exact while the total stays below 2^53.
        same_total = result.total_weight == int(round(total)) or abs(total) >= 2**53
    else:
        # Equal totals first: an infinite weight makes both totals inf, and inf - inf is
        # NaN, so `mst --check` failed a correct forest.
        same_total = result.total_weight == total or \
            abs(result.total_weight - total) <= 1e-9 * max(1.0, abs(total))
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
        "method": result.method,
        "rounds": result.n_rounds,
        "seconds": seconds,
        "medges_per_s": graph.n_edges / seconds / 1e6 if seconds > 0 else 0.0,
    }


def _refuse_nan_weights(graph: CSRGraph, name: str) -> None:
    """A NaN weight read from a file is named by the file and the edge's end points (the
    call below said only "weight of CSR entry 0 is NaN")."""
    w = graph.weights
    if w is None or np.dtype(w.dtype).kind != "f":
        return
    bad = np.flatnonzero(np.isnan(backend.to_host(w)))
    if bad.size:
        i = int(bad[0])
        src = int(backend.to_host(graph.edge_sources())[i])
        dst = int(backend.to_host(graph.indices)[i])
        raise ValueError(f"{name}: the edge between vertices {src} and {dst} (ids from 0) has "
                         f"a NaN weight ({bad.size} such entries); a spanning tree needs "
                         "numbers")


def _run(args: argparse.Namespace) -> int:
    with report.Progress("mst", enabled=not args.json) as progress:
        if args.output:
            refuse_input_as_output([_forest_path(args.output)], [args.file], "--output")
        progress.stage(f"reading {args.file}")
        graph, used = _with_weights(graph_formats.read(args.file, args.format), args.weights)
        _refuse_nan_weights(graph, str(args.file))
        side = backend.resolve_device(args.device, who="morphgpu mst")
        g = graph.to(side)
        progress.stage(f"spanning forest of {graph.n_vertices} vertices, {graph.n_edges} "
                       f"entries ({side})")
        t0 = time.perf_counter()
        # --device auto keeps auto's choice (SciPy's Kruskal on a machine without a GPU)
        result = boruvka(g, device=args.device if args.device == "auto" else side)
        backend.synchronize()
        seconds = time.perf_counter() - t0
        out = _summary(str(args.file), graph, result, seconds)
        out["weights"] = _weights_said(used, args.weights)
        ok = True
        if args.check:
            progress.stage("SciPy's total for --check")
            ok = _agrees(result, scipy_reference(graph))
            out["matches_scipy"] = ok
        if args.output:
            out["edges_file"] = write_forest(result, args.output)
    report.emit(out, as_json=args.json, title="morphgpu mst")
    return 0 if ok else 1


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("mst", help="minimum spanning forest (Borůvka)")
    p.add_argument("file", help="graph file (any format morphgpu.graph_io reads, METIS "
                                "and SNAP edge lists too; see --format)")
    graph_formats.add_format_option(p)
    p.add_argument(
        "--weights",
        default="auto",
        choices=["auto", "ecl", "unit"],
        help="auto: the file's weights, else ECL-MST's rule 1+(i*k)%%n; ecl: that rule; unit: 1",
    )
    report.add_device_and_json(p)
    p.add_argument("--check", action="store_true", help="compare with SciPy's total weight")
    p.add_argument("--output", type=report.output_path,
                   help="save the forest's edges with their weights: a 3 x k "
                   ".npy (src, dst, weight), or src dst weight lines for "
                   ".txt/.tsv/.csv/.el")
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
