"""Reliability of the NetworkX backend: ``backend="morphgpu"`` returns what NetworkX's own
function returns on the same graph (NetworkX itself is the checker), odd graphs and odd
arguments included, or declines (``can_run``) so NetworkX runs its own code.

Each test says what the backend did before its fix.
"""

from __future__ import annotations

import pytest

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
