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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from morphgpu import backend
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


# Windows (morphgpu.dmr.finish): the same hand-over, with only a window of the mesh on the
# host. The device mesh is stood in for by flat arrays with spare capacity, on the side
# under test (CuPy on the GPU: the gathers and scatters the GPU path runs).


class _Slots:
    """The GPU path's DeviceMesh, reduced to what finish.py uses."""

    def __init__(self, mesh, xp, spare: int = 0):
        self.xp = xp
        self.nt, self.nv = mesh.n_triangles, mesh.n_vertices
        apex = mesh.extra.get("vertex_apex")
        apex = np.full(self.nv, -1) if apex is None else apex
        pad_t, pad_v = np.zeros(3 * spare, np.int32), np.zeros(spare)
        self.tri, self.nbr, self.seg = (
            xp.asarray(np.concatenate([a.astype(np.int32).ravel(), pad_t]))
            for a in (mesh.tri, mesh.nbr, mesh.seg))
        self.x, self.y = (xp.asarray(np.concatenate([a, pad_v])) for a in (mesh.x, mesh.y))
        self.vmark = xp.asarray(np.concatenate([mesh.vertex_markers, pad_v]).astype(np.int32))
        self.apex = xp.asarray(np.concatenate([apex, pad_v - 1]).astype(np.int32))
        self.reserves = 0

    def reserve(self, triangles: int, vertices: int) -> None:
        xp = self.xp
        self.reserves += 1
        if 3 * triangles > len(self.tri):
            more = 3 * triangles - len(self.tri)
            for name in ("tri", "nbr", "seg"):
                setattr(self, name, xp.concatenate([getattr(self, name),
                                                    xp.zeros(more, xp.int32)]))
        if vertices > len(self.x):
            more = vertices - len(self.x)
            for name, fill in (("x", 0), ("y", 0), ("vmark", 0), ("apex", -1)):
                arr = getattr(self, name)
                setattr(self, name, xp.concatenate([arr, xp.full(more, fill, arr.dtype)]))

    def host_mesh(self, template):
        from morphgpu.dmr.mesh import Mesh

        h = {name: backend.to_host(getattr(self, name))
             for name in ("tri", "nbr", "seg", "x", "y", "vmark")}
        nt, nv = self.nt, self.nv
        return Mesh(h["x"][:nv], h["y"][:nv], h["tri"][: 3 * nt].reshape(nt, 3),
                    h["nbr"][: 3 * nt].reshape(nt, 3), h["seg"][: 3 * nt].reshape(nt, 3),
                    h["vmark"][:nv], template.segment_markers, template.holes)


def _skinny(mesh) -> np.ndarray:
    angles = triangle_angles_deg(np.stack([mesh.x, mesh.y], axis=1), mesh.tri.astype(np.int64))
    return np.nonzero(angles.min(axis=1) < 30.0)[0]


def _finish_in_windows(ours, xp, candidates, hops, spare=0, max_area=None):
    from morphgpu.dmr.cpu import MIN_SPLIT_FRACTION
    from morphgpu.dmr.finish import finish_stuck

    slots = _Slots(ours, xp, spare)
    span = max(np.ptp(ours.x), np.ptp(ours.y))
    stats = finish_stuck(slots, candidates, ours.segment_markers, 30.0, max_area,
                         n_input=ours.n_vertices, min_split=MIN_SPLIT_FRACTION * span,
                         hops=hops)
    return slots, stats


@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # xp: a module
@given(seed=st.integers(0, 10_000), hops=st.sampled_from([1, 2, 8]),
       spare=st.sampled_from([0, 50]))
def test_finishing_in_windows_leaves_a_valid_quality_mesh(xp, seed, hops, spare):
    mesh = _good_mesh_with_extra_points(seed, 80, 3)
    ours, source = _prepared(mesh)
    skinny = _skinny(ours)
    slots, stats = _finish_in_windows(ours, xp, skinny, hops, spare)
    verdict = check_mesh(to_triangle_dict(slots.host_mesh(ours)), source, min_angle=30.0)
    assert verdict["ok"], verdict["problems"][:5]
    assert stats["stuck"] == 0
    assert (stats["refinements"] > 0) == (len(skinny) > 0)
    assert slots.nt > ours.n_triangles or len(skinny) == 0


def test_a_plan_that_reaches_the_rim_gets_a_deeper_window(xp):
    # one step: the window is the skinny triangles and their neighbours (the rim), so any
    # plan that walks or grows past its own triangle needs a second, deeper window
    mesh = _good_mesh_with_extra_points(11, 80, 4)
    ours, source = _prepared(mesh)
    slots, stats = _finish_in_windows(ours, xp, _skinny(ours), hops=1)
    assert stats["windows"] >= 2
    verdict = check_mesh(to_triangle_dict(slots.host_mesh(ours)), source, min_angle=30.0)
    assert verdict["ok"], verdict["problems"][:5]


def test_only_the_window_crosses_and_only_changed_slots_are_written(xp):
    # a big quality mesh with one extra point: the finish touches a small region, and
    # every slot outside it keeps its row (neighbour pointers included)
    mesh = _good_mesh_with_extra_points(5, 3000, 1)
    ours, source = _prepared(mesh)
    skinny = _skinny(ours)
    assert 0 < len(skinny) < 20
    before = (ours.tri.copy(), ours.nbr.copy(), ours.seg.copy())
    slots, stats = _finish_in_windows(ours, xp, skinny, hops=8)
    assert stats["window_triangles"] < ours.n_triangles // 5
    after = slots.host_mesh(ours)
    n = ours.n_triangles
    changed = np.any((after.tri[:n] != before[0]) | (after.nbr[:n] != before[1])
                     | (after.seg[:n] != before[2]), axis=1)
    assert 0 < changed.sum() <= stats["window_triangles"]
    verdict = check_mesh(to_triangle_dict(after), source, min_angle=30.0)
    assert verdict["ok"], verdict["problems"][:5]


def test_windows_keep_shell_apexes_and_markers(xp):
    # a PSLG with small input angles (Triangle's sample 'A'): splits near input vertices
    # use concentric shells (apex per vertex), and new boundary vertices take markers
    data = triangle.get_data("A")
    coarse = triangle.triangulate(data, "pq15Q")
    mesh = {k: coarse[k] for k in ("vertices", "triangles", "segments", "segment_markers")}
    ours, source = _prepared(mesh)
    whole, whole_stats = finish_cpu(_prepared(mesh)[0], 30.0, None, _skinny(ours))
    slots, stats = _finish_in_windows(ours, xp, _skinny(ours), hops=2)
    out = slots.host_mesh(ours)
    for got in (whole, out):
        verdict = check_mesh(to_triangle_dict(got), source, min_angle=30.0)
        assert verdict["ok"], verdict["problems"][:5]
    assert stats["stuck"] == whole_stats["stuck"] == 0
    new = slice(ours.n_vertices, out.n_vertices)
    assert set(np.unique(out.vertex_markers[new])) <= set(np.unique(whole.vertex_markers))


def test_windows_finish_the_warm_up_grid(xp):
    # what the GPU test below hands the host, on both sides: the warm-up grid (one input
    # triangle clockwise, cocircular corners), some of its triangles stuck, finished in
    # windows under the area bound; the output covers the whole square
    grid, max_area = api._warm_up_inputs()[1]
    ours, source = _prepared(grid)
    stuck = np.arange(0, ours.n_triangles, 7)
    slots, stats = _finish_in_windows(ours, xp, stuck, hops=1, max_area=max_area)
    assert stats["stuck"] == 0 and stats["refinements"] > 0
    verdict = check_mesh(to_triangle_dict(slots.host_mesh(ours)), source, min_angle=None)
    assert verdict["ok"], verdict["problems"][:5]
    assert abs(verdict["area"] - 1.0) < 1e-12


@pytest.mark.gpu
def test_gpu_refinement_finishes_its_stuck_triangles_in_windows():
    # the warm-up's grid (cocircular corners everywhere: uncertain in-circle signs), so
    # the GPU gives up on some triangles and the host finishes them around the device
    # mesh; the output is judged by the checker
    grid, max_area = api._warm_up_inputs()[1]
    out, stats = api.refine_with_stats(grid, min_angle=30.0, max_area=max_area, device="gpu")
    assert stats["gpu_stuck"] > 0 and stats["finish_windows"] >= 1
    assert stats["stuck"] == 0 and stats["cpu_finish_refinements"] > 0
    _, source = api.prepare(grid)
    verdict = check_mesh(out, source, min_angle=30.0, max_area=max_area)
    assert verdict["ok"], verdict["problems"][:5]
