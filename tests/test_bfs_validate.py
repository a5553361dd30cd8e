"""The Graph500 checker rejects broken results (so the BFS tests can fail)."""

from __future__ import annotations

import numpy as np
import pytest

from morphgpu.bfs import BFSValidationError, graph500_check
from morphgpu.csr import CSRGraph

# 0 - 1 - 2 - 3 and 0 - 4 - 3 (undirected), 5 isolated.
G = CSRGraph.from_edges(np.array([0, 1, 2, 0, 4]), np.array([1, 2, 3, 4, 3]),
                        n_vertices=6, symmetrize=True)
DIST = np.array([0, 1, 2, 2, 1, -1])
PARENT = np.array([0, 0, 1, 4, 0, -1])


def test_accepts_a_correct_result():
    graph500_check(G.indptr, G.indices, 0, DIST, PARENT)
    graph500_check(G.indptr, G.indices, 0, DIST)


@pytest.mark.parametrize(
    "dist, parent, check",
    [
        ([0, 1, 2, 3, 1, -1], PARENT, "3"),  # 3 is one step from 4: a level is skipped
        ([0, 1, 2, 2, 1, 3], PARENT, "2"),  # an isolated vertex claimed as reached
        ([0, 1, 2, 2, -1, -1], PARENT, "4"),  # the component is not spanned
        ([1, 1, 2, 2, 1, -1], PARENT, "1"),  # the root is not at level 0
        ([0, 2, 2, 2, 1, -1], PARENT, "3"),  # wrong level
        (DIST, [0, 0, 1, 2, 0, -1], "2"),  # parent at the same level
        (DIST, [1, 0, 1, 4, 0, -1], "1"),  # root not its own parent
        (DIST, [0, 0, 4, 4, 0, -1], "5"),  # 2's parent 4 is at level 1 but not adjacent
        (DIST, [0, 0, 1, 4, 0, 0], "4"),  # unreached vertex with a parent
        ([0, 1, 2, 2, 1, 0], [0, 0, 1, 4, 0, 9], "1"),  # a second "root": isolated 5 at 0
    ],
)
def test_rejects_broken_results(dist, parent, check):
    with pytest.raises(BFSValidationError, match=f"check {check}"):
        graph500_check(G.indptr, G.indices, 0, np.array(dist), np.array(parent))


def test_distances_must_be_tight():
    # Every reached vertex needs an in-neighbour one level up: 2 at level 2 has none here.
    g = CSRGraph.from_edges(np.array([0, 0]), np.array([1, 2]))
    with pytest.raises(BFSValidationError):
        graph500_check(g.indptr, g.indices, 0, np.array([0, 1, 2]))


def test_source_outside_the_graph_is_a_failed_check():
    with pytest.raises(BFSValidationError, match="source 7 is outside"):
        graph500_check(G.indptr, G.indices, 7, DIST)
