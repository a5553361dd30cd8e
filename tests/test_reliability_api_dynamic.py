"""Reliability of DynamicGraph's public arguments and of bfs(previous=) on it.

Each test names the input the sweep tried and what happened before its fix. Answers are
checked against SciPy's breadth_first_order on the graph as it stands after the batches.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

from morphgpu.bfs import bfs
from morphgpu.dynamic_graph import DynamicGraph

DEVICES = ["cpu", "auto"]


def scipy_distances(dg: DynamicGraph, source: int) -> np.ndarray:
    """Hop distances from ``source`` by SciPy's breadth_first_order (-1: unreached)."""
    m = sp.csr_matrix(dg.to_scipy())
    m.data[:] = 1
    order, parent = csgraph.breadth_first_order(m, source, directed=dg.directed)
    dist = np.full(dg.n_vertices, -1, dtype=np.int64)
    dist[source] = 0
    for v in order[1:]:  # BFS order: a parent's distance is known before its child's
        dist[v] = dist[parent[v]] + 1
    return dist


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("other_n", [6, 3, 10])
def test_previous_from_another_graph_is_not_repaired_from(device, other_n):
    # Old: versions were per-graph ints, so a result of graph A at version 1 passed as
    # previous= to graph B at version 2 was "repaired" from A's distances: with equal
    # sizes B got A's distances [0 1 2 3 4 5] (SciPy: [0 -1 -1 -1 2 1]); with other sizes
    # an IndexError. Now a version remembers its graph and the search runs afresh.
    a = DynamicGraph(6, directed=False, device=device)
    a.insert_edges([0, 1, 2, 3, 4], [1, 2, 3, 4, 5])
    ra = bfs(a, 0)
    b = DynamicGraph(other_n, directed=False, device=device)
    b.insert_edges([0], [other_n - 1])
    b.insert_edges([other_n - 1], [other_n - 2])
    rb = bfs(b, 0, previous=ra)
    assert not rb.incremental
    np.testing.assert_array_equal(np.asarray(rb.distances), scipy_distances(b, 0))
    # The graph's own results still repair, and equal versions of two graphs stay ints.
    b.insert_edges([1], [0])
    again = bfs(b, 0, previous=rb)
    assert again.incremental and again.graph_version == b.version == 3
    np.testing.assert_array_equal(np.asarray(again.distances), scipy_distances(b, 0))
    assert a.inserted_since(ra.graph_version) is not None
    assert b.inserted_since(ra.graph_version) is None
