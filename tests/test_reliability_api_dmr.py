"""Reliability of the DMR wing's public arguments: refine, triangulate (Triangle's switch
strings), parse_switches and the mesh generators.

Bad arguments give a ValueError naming the argument (or the mesh key), good ones a mesh;
nothing hangs, and the caller's dict and arrays are never changed.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from morphgpu import dmr
from morphgpu.dmr import api

SQUARE = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.3, 0.4]])
DEVICES = ["cpu", "auto"]  # auto without a GPU: Triangle, behind our checks


def _same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(np.asarray(a[k]), np.asarray(b[k]))


def _area(out):
    """Each triangle's area (np.cross of 2-vectors is deprecated)."""
    p = np.asarray(out["vertices"])[np.asarray(out["triangles"])]
    u, w = p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]
    return np.abs(u[:, 0] * w[:, 1] - u[:, 1] * w[:, 0]) / 2


def _min_angle(out):
    v, t = np.asarray(out["vertices"]), np.asarray(out["triangles"])
    p = v[t]
    worst = 180.0
    for i in range(3):
        u, w = p[:, (i + 1) % 3] - p[:, i], p[:, (i + 2) % 3] - p[:, i]
        cos = (u * w).sum(1) / np.hypot(*u.T) / np.hypot(*w.T)
        worst = min(worst, float(np.degrees(np.arccos(np.clip(cos, -1, 1))).min()))
    return worst


# ----------------------------------------------------------------- switch strings
@pytest.mark.parametrize(("opts", "message"), [
    ("a-1", "unknown switch '-'"), ("q-5", "unknown switch '-'"), ("q60", r"\[0, 60\)"),
    ("q1.2.3", "not a number"), ("a0", "positive area"), ("a.", "not a number"),
    ("xyz", "unknown switch 'x'"), ("q 30", "unknown switch ' '"), ("o", "unknown switch"),
])
def test_bad_switch_strings_name_the_switch(opts, message):
    with pytest.raises(ValueError, match=message):
        dmr.parse_switches(opts)


@pytest.mark.parametrize("opts", [5, None, b"pq", ["p"]])
def test_switches_must_be_a_string(opts):
    with pytest.raises(ValueError, match="switches: expected a string"):
        dmr.parse_switches(opts)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="pqraczQVDYS0123456789.-o ", max_size=12))
def test_any_switch_string_parses_or_names_the_problem(opts):
    try:
        sw = dmr.parse_switches(opts)
    except ValueError as exc:
        assert "switches" in str(exc)
    else:
        assert sw.min_angle is None or 0 <= sw.min_angle < 60
        assert sw.max_area is None or sw.max_area > 0


@pytest.mark.parametrize("opts", ["a0.1", "pa0.05", "q0", "pq0a0.2"])
def test_triangulate_without_an_angle_on_our_path(opts):
    # No q (or q0) is an angle of 1e-9 degrees, whose off-centre constant divided by zero
    # (cos rounds to 1): ZeroDivisionError before.
    out = dmr.triangulate({"vertices": SQUARE}, opts, device="cpu")
    assert len(out["triangles"]) >= 4
    if "a" in opts:
        area = float(opts.split("a")[1])
        assert _area(out).max() <= area * (1 + 1e-9)


# ----------------------------------------------------------------- angles that diverge
def test_a_diverging_refinement_stops_with_a_runtime_error(monkeypatch):
    # At 45 degrees the 5-point square's mesh grows without end; it ran for hours before
    # (bounded only by a quarter of host memory). The floor is lowered here for speed.
    monkeypatch.setattr(api, "DIVERGENCE_FLOOR", 2_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="not converging"):
            dmr.refine({"vertices": SQUARE}, min_angle=45.0, device="cpu")
        with pytest.raises(RuntimeError, match="not converging"):
            dmr.triangulate({"vertices": SQUARE}, "q45", device="cpu")


def test_a_converging_refinement_above_the_termination_angle_still_ends():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = dmr.refine(dmr.random_mesh(300, seed=1), min_angle=34.0, device="cpu")
    assert _min_angle(out) >= 20  # triangles at small input angles may keep them


def test_a_thin_domain_above_the_termination_angle_is_not_taken_for_divergence():
    # 1 x 0.01 ends at about 6x its estimate: the floor keeps such inputs running.
    thin = {"vertices": np.array([[0, 0], [1, 0], [1, 0.001], [0, 0.001]])}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = dmr.refine(thin, min_angle=34.0, device="cpu")
    assert len(out["triangles"]) > 20 * api.estimate_output_triangles(
        api._validated(thin), 34.0, None)


# ----------------------------------------------------------------- triangulate on Triangle
BAD_MESHES = [
    ({"vertices": np.zeros((3, 3))}, r"mesh\['vertices'\]: expected shape"),  # assert before
    ({"vertices": None}, r"mesh\['vertices'\]"),  # "NoneType has no len()" before
    ({"vertices": np.array([[0, 0], [1, 0], [np.nan, 1]])}, r"mesh\['vertices'\]: .*finite"),
    ({"vertices": np.array([[0, 0], [1, 0], [np.inf, 1]])}, r"mesh\['vertices'\]: .*finite"),
    ({"vertices": SQUARE, "segments": np.array([[0, 9]])}, r"mesh\['segments'\]"),
    ({"vertices": SQUARE, "segments": np.array([[0, -1]])}, r"mesh\['segments'\]"),
    ({"vertices": SQUARE, "holes": np.array([0.5, 0.5])}, r"mesh\['holes'\]"),
    ({"vertices": SQUARE, "holes": "x"}, r"mesh\['holes'\]"),
    ({"vertices": SQUARE, "vertex_attributes": np.array([1.0])},
     r"mesh\['vertex_attributes'\]: one row per vertex"),  # QhullError on our path before
    ({"vertices": SQUARE, "bogus": 1}, r"tri: unknown keys \['bogus'\]"),  # KeyError before
    ({"vertices": SQUARE, "segment": np.array([[0, 1]])}, r"unknown keys \['segment'\]"),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("mesh", "message"), BAD_MESHES)
def test_triangulate_checks_the_dict_before_triangle_reads_it(device, mesh, message):
    before = copy.deepcopy(mesh)
    for opts in ("pq", "p"):
        if opts == "p" and device == "cpu":
            continue  # a plain triangulation runs through Triangle only
        with pytest.raises(ValueError, match=message):
            dmr.triangulate(mesh, opts, device=device)
    assert mesh.keys() == before.keys()
    for k in mesh:
        if isinstance(mesh[k], np.ndarray):
            np.testing.assert_array_equal(mesh[k], before[k])


@pytest.mark.parametrize("first", DEVICES)
@pytest.mark.parametrize("second", DEVICES)
def test_refine_output_feeds_back_into_triangulate(first, second):
    # Triangle failed on its own "neighbors" fed back ("Buffer dtype mismatch").
    out = dict(dmr.refine({"vertices": SQUARE, "vertex_attributes": np.arange(5.0)},
                          max_area=0.1, device=first))
    kept = copy.deepcopy(out)
    again = dmr.triangulate(out, "rq30a0.05", device=second)
    assert len(again["triangles"]) > len(out["triangles"])
    assert _min_angle(again) >= 30 - 1e-6
    _same(out, kept)


@pytest.mark.parametrize("device", DEVICES)
def test_vertex_attributes_need_one_row_per_vertex(device):
    mesh = {"vertices": SQUARE, "vertex_attributes": np.arange(4.0)}
    with pytest.raises(ValueError, match=r"vertex_attributes'\]: one row per vertex"):
        dmr.refine(mesh, device=device)
    out = dmr.refine({"vertices": SQUARE, "vertex_attributes": np.arange(5.0)}, device=device)
    np.testing.assert_array_equal(np.asarray(out["vertex_attributes"])[:5].ravel(),
                                  np.arange(5.0))


# ----------------------------------------------------------------- refine's numbers
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("angle", [0, -1, 60, 61, np.nan, np.inf, "30", None, True])
def test_bad_min_angle_names_it(device, angle):
    mesh = {"vertices": SQUARE.copy()}
    with pytest.raises(ValueError, match="min_angle"):
        dmr.refine(mesh, min_angle=angle, device=device)
    np.testing.assert_array_equal(mesh["vertices"], SQUARE)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("area", [0, -1, np.nan, "1", True])
def test_bad_max_area_names_it(device, area):
    with pytest.raises(ValueError, match="max_area"):
        dmr.refine({"vertices": SQUARE}, max_area=area, device=device)


@pytest.mark.parametrize("device", ["GPU", None, "", "cuda"])
def test_unknown_device_names_it(device):
    with pytest.raises(ValueError, match="device must be one of"):
        dmr.refine({"vertices": SQUARE}, device=device)
    with pytest.raises(ValueError, match="device must be one of"):
        dmr.triangulate({"vertices": SQUARE}, "q", device=device)


@settings(max_examples=25, deadline=None)
@given(st.floats(5, 33), st.sampled_from(DEVICES), st.integers(0, 2**32 - 1))
def test_refine_grows_the_mesh_and_leaves_the_input_alone(angle, device, seed):
    mesh = dmr.random_mesh(40, seed=seed)
    before = copy.deepcopy(mesh)
    out = dmr.refine(mesh, min_angle=angle, device=device)
    _same(mesh, before)
    # the hull's input angles are kept, as in Triangle; the rest meet the bound
    assert len(out["triangles"]) >= len(mesh["triangles"])


# ----------------------------------------------------------------- generators
@pytest.mark.parametrize("make", [dmr.random_mesh, dmr.clustered_mesh, dmr.holes_pslg])
@pytest.mark.parametrize("seed", [-1, 1.5, "x"])
def test_generator_seeds_name_the_argument(make, seed):
    with pytest.raises(ValueError, match="seed: expected a non-negative integer"):
        make(20, seed=seed)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"clusters": 0}, "clusters"),  # NumPy's "high <= 0" before
    ({"clusters": -1}, "clusters"),
    ({"clusters": 1.5}, "clusters"),
    ({"clusters": 10**9}, "clusters"),  # 16 GB of centres, then a hang, before
    ({"spread": np.nan}, "spread"),  # NaN points: Triangle never returned
    ({"spread": -1.0}, "spread"),
    ({"spread": "x"}, "spread"),
])
def test_clustered_mesh_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        dmr.clustered_mesh(20, **kwargs)


@pytest.mark.parametrize(("holes", "message"), [
    (-1, "holes"), (1.5, "holes"), (None, "holes"), (True, "holes"),
    (10**9, "does not fit"),
])
def test_holes_pslg_hole_counts(holes, message):
    with pytest.raises(ValueError, match=message):
        dmr.holes_pslg(20, holes=holes)


def test_holes_pslg_without_holes_is_the_square():
    # ZeroDivisionError before (a grid of 0 cells)
    pslg = dmr.holes_pslg(20, holes=0)
    assert len(pslg["holes"]) == 0 and len(pslg["segments"]) == 4
    for device in DEVICES:
        out = dmr.refine(pslg, max_area=0.05, device=device)
        assert _area(out).sum() == pytest.approx(1)
        assert _area(out).max() <= 0.05 * (1 + 1e-9)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("empty", [{"holes": np.zeros((0, 2))}, {"regions": np.zeros((0, 4))},
                                   {"holes": []}])
def test_empty_holes_and_regions_are_no_holes(device, empty):
    # Triangle's wrapper read past the empty list: "Triangle could not triangulate the
    # input (IndexError: Out of bounds on buffer access)" from refine before.
    pslg = {"vertices": SQUARE, "segments": np.array([[0, 1], [1, 2], [2, 3], [3, 0]]),
            **empty}
    assert _area(dmr.refine(pslg, device=device)).sum() == pytest.approx(1)
    assert _area(dmr.triangulate(pslg, "pq", device=device)).sum() == pytest.approx(1)
    assert _area(dmr.triangulate(pslg, "p", device="auto")).sum() == pytest.approx(1)


@settings(max_examples=20, deadline=None)
@given(st.integers(4, 60), st.integers(1, 8), st.floats(0, 0.5), st.integers(0, 2**32 - 1))
def test_clustered_mesh_is_a_mesh_of_the_unit_square(n, clusters, spread, seed):
    m = dmr.clustered_mesh(n, seed=seed, clusters=min(clusters, n), spread=spread)
    v = np.asarray(m["vertices"])
    assert np.isfinite(v).all() and v.min() >= 0 and v.max() <= 1
    assert _area(m).sum() == pytest.approx(1)


def test_triangle_attributes_are_carried_or_refused_never_dropped():
    # refine dropped them silently on every device, where Triangle's -r carries them
    import triangle  # noqa: PLC0415

    m = triangle.triangulate({"vertices": SQUARE[:4].astype(float)}, "")
    m["triangle_attributes"] = np.array([[1.0], [2.0]])
    out = dmr.refine(m, min_angle=30, max_area=0.1, device="auto")
    want = triangle.triangulate(m, "rq30a0.1")
    np.testing.assert_array_equal(out["triangle_attributes"], want["triangle_attributes"])
    with pytest.raises(ValueError, match="triangle_attributes"):
        dmr.refine(m, min_angle=30, max_area=0.1, device="cpu")
    with pytest.raises(ValueError, match="triangle_attributes"):
        dmr.refine({**m, "triangle_attributes": np.ones((3, 1))}, device="auto")
