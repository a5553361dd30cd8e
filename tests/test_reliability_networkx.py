"""Reliability of the NetworkX backend: ``backend="morphgpu"`` returns what NetworkX's own
function returns on the same graph (NetworkX itself is the checker), odd graphs and odd
arguments included, or declines (``can_run``) so NetworkX runs its own code.

Each test says what the backend did before its fix.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

nx = pytest.importorskip("networkx")

from morphgpu import networkx_backend  # noqa: E402

pytestmark = [
    pytest.mark.filterwarnings("ignore:Note. conversions to backend graphs"),
    pytest.mark.skipif("morphgpu" not in nx.utils.backends.backends,
                       reason="morphgpu's NetworkX entry points are not installed "
                              "(tests/test_nx_backend.py runs its suite through them)"),
]
MG = {"backend": "morphgpu"}


def _outcome(call):
    """What a call gives: ("ok", the value made plain) or ("error", type, message)."""
    try:
        value = call()
        if isinstance(value, nx.Graph):
            return ("ok", type(value), list(value.nodes(data=True)),
                    list(value.edges(data=True)), value.graph)
        if hasattr(value, "__next__"):
            value = list(value)
        return ("ok", value, [type(v) for v in value] if isinstance(value, list) else None)
    except Exception as exc:  # noqa: BLE001 (the error is part of the answer)
        return ("error", type(exc), str(exc))


def same_as_networkx(function, *args, **kwargs):
    ours = _outcome(lambda: getattr(nx, function)(*args, **kwargs, **MG))
    theirs = _outcome(lambda: getattr(nx, function)(*args, **kwargs))
    assert ours == theirs, (function, args, kwargs)
    return theirs


def _triangle(w_ab, w_bc, w_ac, cls=nx.Graph):
    G = cls()
    G.add_edge("a", "b", weight=w_ab)
    G.add_edge("b", "c", weight=w_bc)
    G.add_edge("a", "c", weight=w_ac)
    return G


# ----------------------------------------------------------------------------- spanning trees
@pytest.mark.parametrize("function", ["minimum_spanning_tree", "maximum_spanning_tree"])
def test_spanning_trees_of_directed_graphs_are_refused(function):
    # Before: a DiGraph got a spanning "tree" DiGraph back; NetworkX raises
    # NetworkXNotImplemented("not implemented for directed type").
    G = _triangle(1, 2, 3, nx.DiGraph)
    outcome = same_as_networkx(function, G)
    assert outcome[:2] == ("error", nx.NetworkXNotImplemented)


@pytest.mark.parametrize("algorithm", ["prim", "boruvka", "borůvka"])
@pytest.mark.parametrize(("function", "at"), [("minimum_spanning_edges", 1),
                                              ("maximum_spanning_edges", 1),
                                              ("minimum_spanning_tree", 2),
                                              ("maximum_spanning_tree", 2)])
def test_prim_and_boruvka_are_left_to_networkx(function, at, algorithm):
    # Before: every algorithm ran as Kruskal. On a triangle of equal weights NetworkX's
    # Borůvka gives [('a', 'b'), ('c', 'b')], ours gave Kruskal's [('a', 'b'), ('a', 'c')];
    # Prim's order and orientation differ too. Now can_run declines them (NetworkX runs
    # its own under a backend priority; backend="morphgpu" is told it is not implemented).
    G = _triangle(1, 1, 1)
    can_run = networkx_backend.BackendInterface.can_run
    assert "not supported" in can_run(function, (G,), {"algorithm": algorithm})
    positional = (G, *["weight"] * (at - 1), algorithm)
    assert "not supported" in can_run(function, positional, {})
    with pytest.raises(NotImplementedError):
        getattr(nx, function)(G, algorithm=algorithm, **MG)
    assert can_run(function, (G,), {"algorithm": "kruskal"}) is True
    assert can_run(function, (G,), {"algorithm": "nope"}) is True  # refused as NetworkX does
    with pytest.raises(ValueError, match="not a valid choice"):
        getattr(nx, function)(G, algorithm="nope", **MG)


SPANNING = ["minimum_spanning_edges", "maximum_spanning_edges", "minimum_spanning_tree",
            "maximum_spanning_tree"]


@pytest.mark.parametrize("function", SPANNING)
@pytest.mark.parametrize("weights", [
    (2**62 + 1, float(2**62), 2**62 + 2),  # was: all rounded to 2.0**62, a false tie
    (2**64 + 1, 2**64, 2**64 + 2),  # was: object -> float64, the same false tie
    (-(2**63), 5, 6),  # was: -w overflowed for the maximum, giving the lightest edge
    (np.uint64(2**64 - 1), np.uint64(2**64 - 2), 1),  # was: uint64 and int -> float64
    (Fraction(1, 3), Fraction(1, 3) + Fraction(1, 10**30), Fraction(1, 3) - Fraction(1, 10**30)),
])
def test_weights_numpy_cannot_hold_exactly_order_as_in_python(function, weights):
    # Before: the weights went through np.asarray and float64, so these ties, orders and
    # negations came out wrong: e.g. (2**62+1, 2.0**62, 2**62+2) gave the tree
    # [('a','b'), ('a','c')] where NetworkX gives [('b','c'), ('a','b')].
    same_as_networkx(function, _triangle(*weights))


@pytest.mark.parametrize("function", SPANNING)
@pytest.mark.parametrize("bad", [None, 1j, "heavy", [1]])
@pytest.mark.parametrize("ignore_nan", [False, True])
def test_weights_that_are_not_real_numbers_raise_type_error(function, bad, ignore_nan):
    # Before: None was taken for NaN (ignore_nan=True dropped the edge), 1j was cast to 0
    # and the tree returned, "heavy" gave a ValueError and [1] SciPy's "data, indices,
    # and indptr should be 1-D"; NetworkX raises TypeError ("must be real number").
    outcome = same_as_networkx(function, _triangle(2, bad, 3), ignore_nan=ignore_nan)
    assert outcome[:2] == ("error", TypeError)


_NUMBERS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.integers(-3, 3),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.5, -0.0, 2.0**62, 2.0**53, float(2**63), True, False]),
)
# Fractions and NumPy integers are not mixed: Fraction's comparison with np.int64 wraps
# (both a < b and b < a hold for np.int64(-2**63) and Fraction(-1, 2)), which leaves
# NetworkX's own order undefined.
_WEIGHTS = [
    st.one_of(_NUMBERS, st.fractions(max_denominator=10**20)),
    st.one_of(_NUMBERS, st.sampled_from([np.int64(-(2**63)), np.uint64(2**64 - 1),
                                         np.float32(0.1), np.int8(-3)])),
]


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_spanning_edges_equal_networkx_on_any_real_weights(data):
    # Inputs nobody thought of: mixed Python, NumPy and Fraction weights, NaN, infinities,
    # huge integers, self-loops and isolated nodes.
    n = data.draw(st.integers(1, 7))
    pairs = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                               max_size=14))
    weights = data.draw(st.sampled_from(_WEIGHTS))
    G = nx.Graph()
    G.add_nodes_from(range(n))
    for u, v in pairs:
        G.add_edge(u, v, weight=data.draw(weights))
    function = data.draw(st.sampled_from(SPANNING[:2]))
    same_as_networkx(function, G, ignore_nan=data.draw(st.booleans()))


# ----------------------------------------------------------------------------- BFS family
@pytest.mark.parametrize("cls", [nx.DiGraph, nx.MultiDiGraph])
@pytest.mark.parametrize("function", ["bfs_edges", "bfs_tree", "bfs_predecessors",
                                      "bfs_successors", "generic_bfs_edges"])
def test_a_missing_source_of_a_directed_graph_is_named_as_networkx_names_it(cls, function):
    # Before: "The node 99 is not in the graph."; NetworkX's DiGraph.successors and
    # predecessors say "The node 99 is not in the digraph."
    G = cls([(0, 1), (2, 1)])
    outcome = same_as_networkx(function, G, 99)
    assert outcome == ("error", nx.NetworkXError, "The node 99 is not in the digraph.")
    if function in ("bfs_edges", "bfs_tree"):
        same_as_networkx(function, G, 99, reverse=True)


@pytest.mark.parametrize("source", [[0], {0: 1}, set()])
@pytest.mark.parametrize("function", ["bfs_edges", "bfs_tree", "bfs_predecessors",
                                      "bfs_successors", "generic_bfs_edges"])
def test_an_unhashable_source_is_a_type_error(function, source):
    # Before: NetworkXError "The node [0] is not in the graph."; NetworkX raises
    # TypeError("unhashable type: 'list'") from its seen = {source}.
    outcome = same_as_networkx(function, nx.path_graph(3), source)
    assert outcome[:2] == ("error", TypeError)


_NODES = st.sampled_from([0, 1, 2, 3, "a", "b", (0, 1), (1,), 2.5, frozenset({1}), "",
                          float("inf"), -1])


@st.composite
def _odd_graphs(draw):
    cls = draw(st.sampled_from([nx.Graph, nx.DiGraph, nx.MultiGraph, nx.MultiDiGraph]))
    G = cls()
    G.add_nodes_from(draw(st.lists(_NODES, max_size=6)))
    for u, v in draw(st.lists(st.tuples(_NODES, _NODES), max_size=12)):  # self-loops too
        G.add_edge(u, v)
    return G


@settings(max_examples=300, deadline=None)
@given(G=_odd_graphs(), source=_NODES, data=st.data())
def test_bfs_family_equals_networkx_on_odd_graphs(G, source, data):
    # Inputs nobody thought of: empty graphs, single nodes, self-loops, parallel edges,
    # directed graphs, nodes of mixed types, sources not in the graph, any depth limit.
    limit = data.draw(st.sampled_from([None, -1, 0, 1, 2, 2.5, float("inf")]))
    reverse = data.draw(st.booleans())
    same_as_networkx("bfs_edges", G, source, reverse=reverse, depth_limit=limit)
    same_as_networkx("bfs_tree", G, source, reverse=reverse, depth_limit=limit)
    same_as_networkx("bfs_predecessors", G, source, depth_limit=limit)
    same_as_networkx("bfs_successors", G, source, depth_limit=limit)
    same_as_networkx("generic_bfs_edges", G, source, depth_limit=limit)
    same_as_networkx("single_source_shortest_path_length", G, source, cutoff=limit)
    same_as_networkx("single_target_shortest_path_length", G, source, cutoff=limit)
    same_as_networkx("descendants_at_distance", G, source, data.draw(st.integers(-1, 4)))
    same_as_networkx("bfs_layers", G, source)
    sources = data.draw(st.lists(_NODES, max_size=4))
    same_as_networkx("bfs_layers", G, sources)
