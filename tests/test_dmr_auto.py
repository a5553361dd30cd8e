"""Issue 19: under device="auto" on a GPU machine, inputs too small for the GPU to pay go
to Triangle (logged), larger ones to the GPU. Run on the CPU with a backend that claims a
GPU; the GPU path itself is replaced by a recorder, so nothing here needs one."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from morphgpu import backend
from morphgpu.dmr import api, switches
from morphgpu.dmr.check import check_mesh

pytest.importorskip("triangle")


@pytest.fixture
def fake_gpu(monkeypatch):
    """resolve_device answers "gpu" for auto; the GPU path records its calls."""
    calls = []

    def resolve_device(device, *, who="morphgpu"):
        return "cpu" if device == "cpu" else "gpu"

    def refine_ours(mesh, min_angle, max_area, side, progress):
        calls.append(side)
        return {"refined by": side}, {"engine": "ours"}

    monkeypatch.setattr(backend, "resolve_device", resolve_device)
    monkeypatch.setattr(api, "_refine_ours", refine_ours)
    return calls


def test_small_input_goes_to_triangle_and_says_so(fake_gpu, caplog):
    mesh = api.random_mesh(300, seed=5)
    with caplog.at_level(logging.INFO, logger="morphgpu"):
        out, stats = api.refine_with_stats(mesh, min_angle=30.0, device="auto")
    assert fake_gpu == []
    assert stats["engine"] == "triangle" and "AUTO_GPU_MIN_TRIANGLES" in stats["auto"]
    assert any("Triangle on the CPU" in r.getMessage() for r in caplog.records)
    _, source = api.prepare(mesh)
    verdict = check_mesh(out, source, min_angle=30.0)  # Delaunay, angles, segments, area
    assert verdict["ok"], verdict["problems"][:5]


def test_small_pslg_with_holes_goes_to_triangle(fake_gpu):
    pslg = api.holes_pslg(500, seed=2)
    out, stats = api.refine_with_stats(pslg, min_angle=28.0, max_area=0.01, device="auto")
    assert fake_gpu == [] and stats["engine"] == "triangle"
    _, source = api.prepare(pslg)
    verdict = check_mesh(out, source, min_angle=28.0, max_area=0.01)
    assert verdict["ok"], verdict["problems"][:5]


def test_large_input_goes_to_the_gpu(fake_gpu):
    mesh = api.random_mesh(20_000, seed=1)  # ~40k triangles in, ~110k out at 30°
    assert api.estimate_output_triangles(api._validated(mesh), 30.0, None) >= 100_000
    out, stats = api.refine_with_stats(mesh, min_angle=30.0, device="auto")
    assert fake_gpu == ["gpu"] and out == {"refined by": "gpu"}


@pytest.mark.parametrize("given_triangles", [True, False])
def test_small_input_with_a_fine_area_bound_goes_to_the_gpu(fake_gpu, given_triangles):
    # few input triangles, but max_area asks for ~155k: the area term decides
    mesh = api.random_mesh(200, seed=1)
    if not given_triangles:
        mesh = {"vertices": mesh["vertices"]}  # a PSLG: its area comes from Triangle's CDT
    api.refine_with_stats(mesh, min_angle=30.0, max_area=1e-5, device="auto")
    assert fake_gpu == ["gpu"]


def test_the_crossover_is_a_setting(fake_gpu, monkeypatch):
    mesh = api.random_mesh(300, seed=5)
    monkeypatch.setattr(api, "AUTO_GPU_MIN_TRIANGLES", 100)
    api.refine_with_stats(mesh, min_angle=30.0, device="auto")
    assert fake_gpu == ["gpu"]


def test_explicit_devices_and_high_angles_are_not_redirected(fake_gpu):
    mesh = api.random_mesh(300, seed=5)
    api.refine_with_stats(mesh, min_angle=30.0, device="gpu")
    with pytest.warns(UserWarning):
        api.refine_with_stats(mesh, min_angle=35.0, device="auto")  # Triangle may not end
    assert fake_gpu == ["gpu", "gpu"]


def test_switches_keep_auto(fake_gpu):
    mesh = api.random_mesh(300, seed=5)
    out = switches.triangulate(mesh, "rpq30", device="auto")
    assert fake_gpu == [] and len(out["triangles"]) > len(mesh["triangles"])
    big = api.random_mesh(20_000, seed=1)
    switches.triangulate(big, "rpq30", device="auto")
    assert fake_gpu == ["gpu"]


@pytest.mark.parametrize("angle", [20.0, 30.0, 33.0])
def test_estimate_is_within_a_factor_of_two_of_triangle(angle):
    triangle = pytest.importorskip("triangle")
    for mesh in (api.random_mesh(3000, seed=3), api.clustered_mesh(3000, seed=3)):
        real = len(triangle.triangulate(
            {k: mesh[k] for k in ("vertices", "triangles", "segments")}, f"rpq{angle:g}Q"
        )["triangles"])
        estimate = api.estimate_output_triangles(api._validated(mesh), angle, None)
        assert real / 2 <= estimate <= 2 * real, (angle, real, estimate)
    square = {"vertices": np.array([[0, 0], [1, 0], [1, 1], [0, 1.0]]),
              "segments": np.array([[0, 1], [1, 2], [2, 3], [3, 0]])}
    real = len(triangle.triangulate(square, f"pq{angle:g}a0.0001Q")["triangles"])
    estimate = api.estimate_output_triangles(api._validated(square), angle, 1e-4)
    assert real / 2 <= estimate <= 2 * real


def test_the_triangle_side_validates_once_and_reads_only_sizes(fake_gpu, monkeypatch):
    # issue 19: auto -> Triangle costs what Triangle costs, plus one pass of our checks
    mesh = api.random_mesh(300, seed=5)
    seen = []
    validated = api._validated
    monkeypatch.setattr(api, "_validated",
                        lambda *a, **k: seen.append(1) or validated(*a, **k))
    _, stats = api.refine_with_stats(mesh, min_angle=30.0, device="auto")
    assert stats["engine"] == "triangle" and len(seen) == 1
    # the choice itself looks at lengths (and the bounding box for max_area) only
    assert api._auto_on_gpu({"vertices": np.zeros((10, 2))}, 30.0, None) == "triangle"
    nan = {"vertices": np.array([[0, 0], [1, np.nan], [0, 1.0]])}
    assert api._auto_on_gpu(nan, 30.0, 0.1) == "gpu"  # where the checks name the problem
    with pytest.raises(ValueError, match="finite"):
        api.prepare(nan)


def _triangle_pair():
    triangle = pytest.importorskip("triangle")
    mesh = api.random_mesh(400, seed=9)
    tin = {k: mesh[k] for k in ("vertices", "triangles", "segments")}
    return triangle.triangulate(tin, "rpq30Q"), triangle.triangulate(tin, "rpq30nQ")


def test_lazy_neighbors_are_triangles_own_and_seen_by_every_dict_reader():
    import copy
    import pickle

    from morphgpu.dmr.mesh import LazyNeighbors

    plain, with_n = _triangle_pair()
    want = with_n["neighbors"]
    readers = {
        "getitem": lambda d: d["neighbors"], "get": lambda d: d.get("neighbors"),
        "dict": lambda d: dict(d)["neighbors"], "unpack": lambda d: {**d}["neighbors"],
        "kwargs": lambda d: (lambda **kw: kw["neighbors"])(**d),
        "items": lambda d: dict(d.items())["neighbors"],
        "values": lambda d: list(d.values())[list(d.keys()).index("neighbors")],
        "copy": lambda d: d.copy()["neighbors"], "copy.copy": lambda d: copy.copy(d)["neighbors"],
        "pickle": lambda d: pickle.loads(pickle.dumps(d))["neighbors"],
        "or": lambda d: (d | {})["neighbors"], "ror": lambda d: ({} | d)["neighbors"],
        "pop": lambda d: d.pop("neighbors"), "setdefault": lambda d: d.setdefault("neighbors"),
    }
    for name, read in readers.items():
        lazy = LazyNeighbors(plain)
        assert "neighbors" in lazy and len(lazy) == len(plain) + 1
        got = read(lazy)
        assert got.dtype == want.dtype == np.int32, name
        np.testing.assert_array_equal(got, want, err_msg=name)
    lazy = LazyNeighbors(plain)
    lazy["neighbors"] = "mine"  # a value set replaces it, as in any dict
    assert lazy["neighbors"] == "mine" and len(lazy) == len(plain) + 1
    lazy = LazyNeighbors(plain)
    lazy.update(neighbors="theirs")
    assert dict(lazy)["neighbors"] == "theirs"
    lazy = LazyNeighbors(plain)
    del lazy["neighbors"]
    assert "neighbors" not in lazy and len(lazy) == len(plain) and "neighbors" not in dict(lazy)
    assert sorted(LazyNeighbors(plain)) == sorted(with_n)


def test_auto_on_triangle_leaves_neighbors_until_read(monkeypatch):
    # the Triangle side runs without -n (its cost is 5-10% of the run) and still returns
    # Triangle's neighbours when they are read
    from morphgpu.dmr import mesh as mesh_module

    mesh = api.random_mesh(300, seed=5)
    built = []
    real = mesh_module.build_neighbors
    monkeypatch.setattr(mesh_module, "build_neighbors",
                        lambda *a: built.append(1) or real(*a))
    out, stats = api.refine_by_triangle(mesh, min_angle=30.0)
    assert "n" not in stats["switches"] and built == []
    _, source = api.prepare(mesh)  # builds our own mesh's neighbours: one call
    verdict = check_mesh(out, source, min_angle=30.0)  # reads out["neighbors"]
    assert verdict["ok"], verdict["problems"][:5]
    assert built == [1, 1]


def _bad(case: str) -> tuple[dict, str]:
    mesh = {k: np.array(v) for k, v in api.random_mesh(300, seed=4).items()}
    tri, seg, v = mesh["triangles"], mesh["segments"], mesh["vertices"]
    if case == "index past the end":
        tri[7, 1] = len(v)
    elif case == "negative index":
        tri[0, 2] = -1
    elif case == "int64 index that wraps to a valid int32":
        mesh["triangles"] = tri.astype(np.int64)
        mesh["triangles"][3, 0] = 2**32 + 1
    elif case == "segment index":
        seg[2, 1] = 10**6
    elif case == "segment to itself":
        seg[2, 1] = seg[2, 0]
    elif case == "nan":
        v[150, 1] = np.nan
    elif case == "inf":
        v[299, 0] = -np.inf
    elif case == "huge":
        v[10, 0] = 1e200
    elif case == "tiny extent":
        v *= 1e-300
    where = "vertices" if case in ("nan", "inf", "huge", "tiny extent") else (
        "segments" if case.startswith("segment") else "triangles")
    return mesh, rf"mesh\['{where}'\]"


BAD_CASES = ["index past the end", "negative index", "int64 index that wraps to a valid int32",
             "segment index", "segment to itself", "nan", "inf", "huge", "tiny extent"]


@pytest.mark.parametrize("case", BAD_CASES)
def test_auto_on_triangle_names_what_is_wrong(case, capfd):
    # the Triangle side leaves int32 triangles' index range to Triangle (-r rejects it);
    # the error still names the argument, as our paths' do
    mesh, match = _bad(case)
    with pytest.raises(ValueError, match=match):
        api.refine_with_stats(mesh, min_angle=30.0, device="auto")
    capfd.readouterr()  # Triangle prints its own complaint on stdout


@pytest.mark.parametrize("case", BAD_CASES)
def test_our_paths_name_what_is_wrong(case, device):
    # on the GPU the vertices' scale and the triangles' range are checked on the device
    # after the upload (api._checked_on_device)
    mesh, match = _bad(case)
    with pytest.raises(ValueError, match=match):
        api.refine_with_stats(mesh, min_angle=30.0, device=device)
