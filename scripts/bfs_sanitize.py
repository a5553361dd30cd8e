"""Small BFS runs of every GPU variant, for compute-sanitizer (memcheck / racecheck).

    compute-sanitizer --tool memcheck python3 scripts/bfs_sanitize.py [VARIANT ...]
        [--graphs kron,rmat]

Each result is checked with Graph500's checks, so a run that the sanitizer passes but
computes a wrong answer still fails (exit code 1).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from morphgpu import generators  # noqa: E402
from morphgpu.bfs import gpu, graph500_check, variants  # noqa: E402
from morphgpu.csr import CSRGraph  # noqa: E402

RUNS = [(v, {}) for v in variants.names() if v != "top-down"] + [
    ("persistent", {"enter_local": 0}),
    ("persistent", {"enter_local": 64}),
    ("persistent", {"blocks": 1}),
    ("persistent", {"blocks": 3, "enter_local": 64}),
    ("beamer", {"relabel": "rows"}),
    ("direction-optimizing", {"rule": "top-down"}),
    # The variants away from their defaults: the hybrid forced to either coupling, every
    # frontier class on small rows, Merrill's culling.
    ("merge-path-hybrid", {"f0": 0.0}),
    ("merge-path-hybrid", {"f0": float("inf")}),
    ("frontier-classes", {"bounds": (2, 8, 64)}),
    ("expand-contract", {"cull": "all"}),
    ("two-phase", {"cull": "all"}),
    ("contract-expand", {"cull": "all"}),
    ("hybrid", {"cull": "all", "switch": 64}),
    # The degree-relabelled copy, mapped back by the search's tail.
    ("beamer", {"relabel": True}),
    ("bottom-up", {"relabel": True}),
    # The tiled kernel with small tiles (several tiles on these graphs), without a horizon,
    # with a tiny edge capacity (rows read from global memory), with a horizon of one level
    # (most visits defer labels, so blocks keep their tiles and visit them again), and on
    # the ids as given.
    ("tiled", {"tile_shift": 8}),
    ("tiled", {"tile_shift": 8, "horizon": 0}),
    ("tiled", {"tile_shift": 8, "edge_cap": 64}),
    ("tiled", {"tile_shift": 8, "horizon": 1}),
    ("tiled", {"relabel": False, "tile_shift": 9}),
    # The overlay at tiles of 64 (many tiles), at either arm of its rounds.
    ("overlay", {"tile_shift": 6}),
    ("overlay", {"tile_shift": 6, "delta": 8, "block": 512}),
]


def layered(widths: list[int]) -> CSRGraph:
    """Frontier widths around the persistent kernel's one-block thresholds (see
    tests/test_bfs.py, layered_graph): each vertex joins two of the previous layer."""
    starts = np.concatenate([[0], np.cumsum(widths)])
    src, dst = [], []
    for k in range(1, len(widths)):
        i = np.arange(widths[k])
        for j in (i % widths[k - 1], (i * 7 + 3) % widths[k - 1]):
            src.append(starts[k] + i)
            dst.append(starts[k - 1] + j)
    return CSRGraph.from_edges(np.concatenate(src), np.concatenate(dst),
                               n_vertices=int(starts[-1]), symmetrize=True,
                               merge_duplicates="first")


def main() -> int:
    parser = argparse.ArgumentParser(description="BFS runs for compute-sanitizer")
    parser.add_argument("variants", nargs="*",
                        help="only these variants' runs (e.g. the kernels a change touched)")
    parser.add_argument("--graphs", default="",
                        help="comma-separated parts of graph labels to run (default: all)")
    args = parser.parse_args()
    wanted = set(args.variants)
    runs = [(name, options) for name, options in RUNS if not wanted or name in wanted]
    graphs = {
        "grid 40x30": generators.grid2d(40, 30, device="gpu"),
        "grid3d 12^3": generators.grid3d(12, 12, 12, device="gpu"),
        "kron 9": generators.kronecker(9, 16, device="gpu"),
        "rmat 9 directed": generators.rmat(9, 8, device="gpu", directed=True),
        "layered": layered([1, 64, 900, 900, 900, 300, 1100, 2047, 1, 3]).to("gpu"),
        # maximum degree 9-16: the persistent kernel's ELL rows of width 16
        "delaunay 3k": generators.delaunay_graph(3000, seed=1, device="gpu"),
    }
    parts = [part for part in args.graphs.split(",") if part]
    graphs = {label: g for label, g in graphs.items()
              if not parts or any(part in label for part in parts)}
    failures = 0
    for label, g in graphs.items():
        host = g.to("cpu")
        source = int(np.argmax(np.diff(host.indptr)))
        for name, options in runs:
            dist, parent, _ = gpu.run(g, source, variant=name, want_parents=True, **options)
            try:
                graph500_check(host.indptr, host.indices, source, dist.get(), parent.get())
                status = "ok"
            except AssertionError as exc:
                failures += 1
                status = f"INVALID: {exc}"
            tag = name + "".join(f" {k}={v}" for k, v in options.items())
            print(f"{label:<16} {tag:<34} levels={int(dist.max()) + 1:<4} {status}",
                  flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
