"""Small GPU driver for compute-sanitizer: every GPU path of generators and reorder once."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from morphgpu import generators, reorder  # noqa: E402

graphs = [
    generators.kronecker(8, 8, device="gpu"),
    generators.rmat(7, 4, device="gpu", directed=True),
    generators.gnm(500, 2000, device="gpu"),
    generators.grid3d(6, 5, 4, device="gpu"),
    generators.random_geometric(3000, device="gpu"),
    generators.delaunay_graph(300, device="gpu"),
]
weighted = generators.random_weights(graphs[2], seed=1)
for g in graphs:
    perm = reorder.bfs_order(g)
    relabelled = reorder.apply(g, perm)
    assert relabelled.n_edges == g.n_edges
x, y = generators.random_points(1000, device="gpu")
assert np.array_equal(np.sort(reorder.morton_order(x, y).get()), np.arange(1000))
print("graph_tools_sanitize: ok", [g.n_edges for g in graphs], float(weighted.weights.sum()))
