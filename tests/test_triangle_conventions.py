"""Triangle users' conventions, against the ``triangle`` package on its own sample files:
switch strings, ``.area`` limits, vertex attributes and markers, the files' index base."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import triangle

from morphgpu import backend, cli, dmr
from morphgpu.dmr import triangle_io
from morphgpu.dmr.check import check_mesh

DATA = Path(os.path.dirname(triangle.__file__)) / "data"
no_gpu = pytest.mark.skipif(backend.gpu_available(), reason="checks what auto does without a GPU")


def _same(ours: dict, theirs: dict) -> None:
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)


def _areas(mesh: dict) -> np.ndarray:
    p = np.asarray(mesh["vertices"])[np.asarray(mesh["triangles"])]
    return 0.5 * np.abs((p[:, 1, 0] - p[:, 0, 0]) * (p[:, 2, 1] - p[:, 0, 1])
                        - (p[:, 2, 0] - p[:, 0, 0]) * (p[:, 1, 1] - p[:, 0, 1]))


@pytest.mark.parametrize(("name", "opts"), [
    ("A", "pq30a0.01"), ("box", "pq25"), ("double_hex2", "pq30a0.05"),
    ("spiral", "q"), ("dots", "cq20a0.01"), ("la", "pq28.5"),
])
def test_parse_switches(name, opts):
    sw = dmr.parse_switches(opts)
    assert ("q" in opts) == (sw.min_angle is not None)
    if opts in ("q",):
        assert sw.min_angle == 20.0  # Triangle's default angle
    assert dmr.parse_switches("-" + opts).flags == sw.flags
    with pytest.raises(ValueError, match="unknown switch"):
        dmr.parse_switches(opts + "!")


@no_gpu
@pytest.mark.parametrize(("name", "opts"), [
    ("A", "pq30a0.01"), ("box", "pq25"), ("double_hex2", "pq30a0.05"),
    ("spiral", "q"), ("dots", "q20a0.01"), ("bbox.1", "rpq30a"), ("bbox.1", "ra"),
])
def test_switch_strings_on_auto_are_triangles_result(name, opts):
    tri = triangle.load(str(DATA), name)
    _same(dmr.triangulate(tri, opts), triangle.triangulate(tri, opts))


@pytest.mark.parametrize(("name", "opts", "angle", "area"), [
    ("A", "pq30a0.01", 30, 0.01), ("la", "pq25", 25, None),
    ("double_hex2", "pq30a0.05", 30, 0.05), ("spiral", "q", 20, None),
])
def test_switch_strings_on_our_paths(name, opts, angle, area, device):
    tri = triangle.load(str(DATA), name)
    out = dmr.triangulate(tri, opts, device=device)
    out = {k: backend.to_host(v) for k, v in out.items()}
    reference = triangle.triangulate(tri, opts.replace("q", "Q").replace("Q", "", 1)
                                     .replace("a", "").rstrip("0123456789.") or "Q")
    verdict = check_mesh(out, {**tri, **reference} if "p" in opts else reference,
                         min_angle=angle, max_area=area)
    assert verdict["ok"], verdict["problems"][:3]
    n = len(tri["vertices"])
    np.testing.assert_array_equal(out["vertices"][:n], tri["vertices"])  # input first


def test_only_triangle_switches_are_refused_off_auto():
    tri = triangle.load(str(DATA), "box")
    for opts in ("pq30D", "pq30e", "pq30A", "pq30j", "pq30O", "pq30o2"):
        with pytest.raises(ValueError, match="Triangle"):
            dmr.triangulate(tri, opts, device="cpu")
    with pytest.raises(ValueError, match="not a number"):
        dmr.parse_switches("pq3.0.1")


@no_gpu
@pytest.mark.parametrize("opts", ["pq30e", "pq30An", "pq30o2"])
def test_triangle_only_switches_run_through_triangle_on_auto(opts):
    tri = triangle.load(str(DATA), "A")
    _same(dmr.triangulate(tri, opts), triangle.triangulate(tri, opts))


@no_gpu
def test_area_file_limits_are_read_and_applied(tmp_path):
    ours = triangle_io.read(DATA / "bbox.1.node")
    theirs = triangle.load(str(DATA), "bbox.1")
    _same(ours, theirs)
    limits = ours["triangle_max_area"].ravel()
    # refine() applies them (through Triangle), the same as triangle -rpq30a
    _same(dmr.refine(ours), dict(triangle.triangulate(theirs, "rpq30anQ")))
    out = dmr.refine(ours)
    free = dmr.refine({k: v for k, v in ours.items() if k != "triangle_max_area"})
    assert (limits > 0).any() and len(out["triangles"]) > len(free["triangles"])
    assert _areas(out).min() <= limits[limits > 0].min()
    with pytest.raises(ValueError, match="per-triangle"):
        dmr.refine(ours, device="cpu")
    # the command line too, and it says where the limits came from
    assert cli.main(["refine", str(DATA / "bbox.1.node"), "--json"]) == 0


OURS_AND_AUTO = ["auto", "cpu", pytest.param("gpu", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("device", OURS_AND_AUTO)
def test_vertex_attributes_and_markers_come_back(device):
    tri = triangle.load(str(DATA), "A")
    # a linear attribute: every refinement must interpolate it exactly
    v = tri["vertices"]
    tri["vertex_attributes"] = (2 * v[:, 0] - 3 * v[:, 1] + 1).reshape(-1, 1)
    tri["vertex_markers"] = np.arange(len(v), dtype=np.int32).reshape(-1, 1) + 7
    out = {k: backend.to_host(v) for k, v in
           dmr.triangulate(tri, "pq30a0.01", device=device).items()}
    w = out["vertices"]
    np.testing.assert_allclose(out["vertex_attributes"].ravel(), 2 * w[:, 0] - 3 * w[:, 1] + 1,
                               atol=1e-9)
    n = len(v)
    np.testing.assert_array_equal(out["vertex_markers"].ravel()[:n], np.arange(n) + 7)


@pytest.mark.parametrize("device", ["auto", "cpu"])
def test_output_files_keep_the_inputs_base(tmp_path, device, capsys):
    stem = tmp_path / "out"
    rc = cli.main(["refine", str(DATA / "box.1.node"), "--device", device,
                   "--output", str(stem), "--json"])
    assert rc == 0
    assert triangle_io.first_index(DATA / "box.1.node") == 1
    assert triangle_io.first_index(stem.with_suffix(".node")) == 1
    # triangle.load reads what we wrote as the same mesh our reader does
    ours = triangle_io.read(stem.with_suffix(".node"))
    theirs = triangle.load(str(tmp_path), "out")
    np.testing.assert_array_equal(ours["triangles"], theirs["triangles"])
    np.testing.assert_array_equal(ours["vertices"], theirs["vertices"])
    first_line = [ln for ln in stem.with_suffix(".ele").read_text().splitlines()][1]
    assert first_line.split()[0] == "1"


def test_switches_on_the_command_line(tmp_path):
    stem = tmp_path / "A"
    assert cli.main(["refine", str(DATA / "A.poly"), "--switches", "pq30a0.01",
                     "--output", str(stem), "--json"]) == 0
    written = triangle_io.read(stem.with_suffix(".node"))
    assert written["vertex_attributes"].shape[1] == 1  # attributes kept in the .node file


def _samples() -> list[str]:
    return sorted({f.rsplit(".", 1)[0] for f in os.listdir(DATA)
                   if f.endswith((".node", ".poly")) and ".v." not in f})


@pytest.mark.parametrize("name", _samples())
def test_our_reader_equals_triangle_load_on_its_samples(name):
    """Our reader (kept for its line-numbered errors) reads what triangle.load reads.

    One known difference: triangle.load splits region lines four fields at a time, but
    Triangle writes five ("k x y attribute area", la.1.poly), so its regions there are
    shifted; ours are the file's lines.
    """
    theirs = triangle.load(str(DATA), name)
    path = DATA / (name + (".poly" if (DATA / f"{name}.poly").exists() else ".node"))
    ours = triangle_io.read(path)
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        if key == "regions" and name == "la.1":
            lines = (DATA / "la.1.poly").read_text().splitlines()
            count = next(i for i, ln in enumerate(lines) if ln.split() == ["6"])
            rows = [[float(x) for x in ln.split()[1:5]] for ln in lines[count + 1:count + 7]]
            np.testing.assert_array_equal(ours[key], rows)
            continue
        np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)


@pytest.mark.parametrize("device", OURS_AND_AUTO)
def test_new_vertices_on_segments_carry_the_segments_marker(device):
    """Triangle's rule: a vertex inserted on a segment takes that segment's marker."""
    tri = triangle.load(str(DATA), "double_hex2")
    out = {k: backend.to_host(v) for k, v in
           dmr.triangulate(tri, "pq30a0.002", device=device).items()}
    n = len(tri["vertices"])
    markers = out["vertex_markers"].ravel()
    on_segment: dict[int, set[int]] = {}
    for (a, b), m in zip(out["segments"].tolist(), out["segment_markers"].ravel().tolist()):
        for v in (a, b):
            if v >= n:
                on_segment.setdefault(v, set()).add(m)
    assert len(on_segment) > 10
    assert all(markers[v] in ms for v, ms in on_segment.items())
    off = np.setdiff1d(np.arange(n, len(markers)), list(on_segment))
    assert (markers[off] == 0).all()


@pytest.mark.parametrize("device", ["auto", "cpu"])
def test_check_on_the_command_line_follows_the_switches(device, capsys):
    import json  # noqa: PLC0415

    assert cli.main(["refine", str(DATA / "A.poly"), "--switches", "pq25a0.01", "--check",
                     "--device", device, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["valid"] is True
