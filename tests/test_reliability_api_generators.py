"""Reliability of morphgpu.generators' arguments: sizes, probabilities, seeds, bounds.

Bad arguments give a ValueError naming the argument (sizes that cannot fit are refused
before allocating); good ones give graphs with the documented properties.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from morphgpu import backend
from morphgpu import generators as G


@pytest.mark.parametrize(("call", "name"), [
    (lambda: G.kronecker(True, 2, device="cpu"), "scale"),  # a scale-1 graph before
    (lambda: G.kronecker(3, 2, seed=True, device="cpu"), "seed"),
    (lambda: G.rmat(3, True, device="cpu"), "edge_factor"),
    (lambda: G.gnm(True, 0, device="cpu"), "n"),
    (lambda: G.grid2d(True, 2, device="cpu"), "nx"),
    (lambda: G.grid3d(2, 2, True, device="cpu"), "nz"),
    (lambda: G.random_points(True, device="cpu"), "n"),
    (lambda: G.delaunay_graph(True, device="cpu"), "n_points"),
])
def test_bools_are_not_counts(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize(("call", "who"), [
    (lambda: G.kronecker(40, 16, device="cpu"), "kronecker"),  # MemoryError (128 TiB)
    (lambda: G.kronecker(30, 2**40, device="cpu"), "kronecker"),  # "Maximum dimension"
    (lambda: G.rmat(40, 16, device="cpu"), "rmat"),
    (lambda: G.grid3d(10**5, 10**5, 10**5, device="cpu"), "grid3d"),  # 7 PiB
    (lambda: G.grid2d(2**31, 2**31, device="cpu"), "grid2d"),
    (lambda: G.random_points(2**50, device="cpu"), "random_points"),
    (lambda: G.delaunay_graph(2**50, device="cpu"), "random_points"),
    (lambda: G.gnm(3 * 10**9, 1, device="cpu"), "gnm"),
])
def test_sizes_that_cannot_fit_are_refused_before_allocating(call, who, monkeypatch):
    # a 4 GiB host, so the outcome does not depend on this machine's memory
    monkeypatch.setattr(backend, "host_available_bytes", lambda: 2**32)
    with pytest.raises(ValueError, match=f"{who}: asks for"):
        call()


def test_gnm_pair_ids_must_fit_int64():
    # gnm(2**40, 1) said "edge 0 has a negative vertex id" (a wrapped pair id)
    with pytest.raises(ValueError, match=r"n \* n < 2\*\*63"):
        G.gnm(2**40, 1, device="cpu")


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"a": "x"}, "probability a"), ({"b": np.nan}, "probability b"), ({"c": None}, "probability c"),
    ({"a": -0.1}, "probability a"),
])
def test_probabilities_name_the_argument(kwargs, name):
    for make in (G.kronecker, G.rmat):
        with pytest.raises(ValueError, match=name):
            make(3, 2, device="cpu", **kwargs)


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"radius": "x"}, "radius"), ({"radius": np.nan}, "radius"), ({"radius": -1}, "radius"),
    ({"avg_degree": np.nan}, "avg_degree"),  # reported as "radius ... nan" before
    ({"avg_degree": "8"}, "avg_degree"), ({"avg_degree": -1}, "avg_degree"),
])
def test_random_geometric_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        G.random_geometric(50, device="cpu", **kwargs)


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"low": 0, "high": np.inf}, "finite"),  # every weight inf or NaN before
    ({"low": -np.inf, "high": 0}, "finite"),
    ({"low": np.nan, "high": 1}, "low"), ({"low": "a", "high": 2}, "low"),
    ({"high": None}, "high"), ({"low": 1, "high": 1}, "high must exceed low"),
    ({"rule": "x"}, "rule"), ({"seed": -1}, "seed"), ({"seed": True}, "seed"),
])
def test_random_weights_arguments(kwargs, name):
    g = G.gnm(10, 20, device="cpu")
    with pytest.raises(ValueError, match=name):
        G.random_weights(g, **kwargs)
    assert g.weights is None  # the input graph is not given weights on failure


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 40), st.data())
def test_gnm_has_exactly_m_distinct_edges(n, data):
    directed = data.draw(st.booleans())
    possible = n * (n - 1) if directed else n * (n - 1) // 2
    m = data.draw(st.integers(0, possible))
    g = G.gnm(n, m, seed=data.draw(st.integers(0, 2**32)), device="cpu", directed=directed)
    src, dst = g.edge_sources(), g.indices
    assert g.n_vertices == n and (src != dst).all()
    pairs = set(zip(src.tolist(), dst.tolist()))
    assert len(pairs) == g.n_edges == (m if directed else 2 * m)
    if not directed:
        assert all((v, u) in pairs for u, v in pairs)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 60), st.floats(-1e6, 1e6), st.floats(1e-3, 1e6), st.integers(0, 2**32))
def test_uniform_weights_are_finite_in_range_and_symmetric(n, low, width, seed):
    g = G.gnm(n, min(n * (n - 1) // 2, 3 * n), device="cpu")
    w = G.random_weights(g, seed=seed, low=low, high=low + width).weights
    assert np.isfinite(w).all() and (w >= low).all() and (w <= low + width).all()
    by_pair = dict(zip(zip(g.edge_sources().tolist(), g.indices.tolist()), w.tolist()))
    assert all(by_pair[(v, u)] == x for (u, v), x in by_pair.items())


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 6), st.integers(0, 6), st.integers(0, 4))
def test_grids_have_the_documented_entry_count(nx, ny, nz):
    g2 = G.grid2d(nx, ny, device="cpu")
    assert g2.n_edges == 2 * (max(nx - 1, 0) * ny + nx * max(ny - 1, 0))
    g3 = G.grid3d(nx, ny, nz, device="cpu")
    assert g3.n_vertices == nx * ny * nz
