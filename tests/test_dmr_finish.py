"""The GPU path's hand-over: finishing a few bad triangles in an otherwise refined mesh.

``finish_cpu`` is what the GPU path runs on the host for the triangles it gave up on; it
is plain NumPy/Python, so it is tested here on the CPU, on the situation it meets there:
a quality mesh (Triangle's ``pq30``) with a few skinny triangles in it, made by adding
points. Outputs are judged by morphgpu.dmr.check (independent code); the candidates come
from the checker's own angle computation, not from the refinement's badness test.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from morphgpu.dmr import api
from morphgpu.dmr.check import check_mesh, triangle_angles_deg
from morphgpu.dmr.cpu import finish_cpu
from morphgpu.dmr.mesh import to_triangle_dict

triangle = pytest.importorskip("triangle")


def _good_mesh_with_extra_points(seed: int, n_points: int, n_extra: int) -> dict:
    rng = np.random.default_rng(seed)
    hull = triangle.triangulate({"vertices": rng.random((n_points, 2))}, "cQ")
    good = triangle.triangulate({k: hull[k] for k in ("vertices", "segments")}, "pq30Q")
    extra = 0.1 + 0.8 * rng.random((n_extra, 2))
    out = triangle.triangulate(
        {"vertices": np.concatenate([good["vertices"], extra]), "segments": good["segments"]},
        "pQ",
    )
    return {k: out[k] for k in ("vertices", "triangles", "segments")}


def _prepared(mesh: dict):
    ours, source = api.prepare(mesh)
    ours.extra["n_input"] = ours.n_vertices
    return ours, source


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_finishing_leaves_a_valid_quality_mesh(seed):
    mesh = _good_mesh_with_extra_points(seed, 80, 3)
    ours, source = _prepared(mesh)
    skinny = np.nonzero(triangle_angles_deg(
        np.stack([ours.x, ours.y], axis=1), ours.tri.astype(np.int64)
    ).min(axis=1) < 30.0)[0]
    out, stats = finish_cpu(ours, 30.0, None, skinny)
    verdict = check_mesh(to_triangle_dict(out), source, min_angle=30.0)
    assert verdict["ok"], verdict["problems"][:5]
    assert stats["stuck"] == 0
    assert (stats["refinements"] > 0) == (len(skinny) > 0)


def test_finishing_a_good_mesh_changes_nothing():
    mesh = _good_mesh_with_extra_points(7, 80, 0)
    ours, _ = _prepared(mesh)
    tri_before = ours.tri.copy()
    out, stats = finish_cpu(ours, 30.0, None, np.arange(ours.n_triangles))
    assert stats["refinements"] == 0 and stats["stuck"] == 0
    np.testing.assert_array_equal(out.tri, tri_before)


def test_finishing_only_looks_at_candidates():
    # the skinny triangles are there, but nobody asked: they stay
    mesh = _good_mesh_with_extra_points(3, 80, 5)
    ours, source = _prepared(mesh)
    out, stats = finish_cpu(ours, 30.0, None, np.zeros(0, dtype=np.int64))
    assert stats["refinements"] == 0
    assert check_mesh(to_triangle_dict(out), source, min_angle=None)["ok"]
