"""Malformed Triangle files (.node, .ele, .poly, .neigh): MeshFormatError naming the file and
the 1-based line, never a MemoryError, a shifted line number or a silently dropped line."""

from __future__ import annotations

import contextlib
import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
from file_damage import damaged, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from morphgpu.dmr import triangle_io
from morphgpu.dmr.triangle_io import MeshFormatError

SETTINGS = settings(suppress_health_check=[HealthCheck.function_scoped_fixture],
                    deadline=None, max_examples=150)

NODE = b"3 2 0 0\n1 0 0\n2 1 0\n3 0 1\n"
POLY = b"3 2 0 0\n1 0 0\n2 1 0\n3 0 1\n3 0\n1 1 2\n2 2 3\n3 3 1\n0\n"


def raises_at(name: str, line: int, what: str = ""):
    return pytest.raises(MeshFormatError, match=re.escape(f"{name}:{line}: {what}"))


def test_a_huge_attribute_count_is_an_error_not_a_memory_error(tmp_path):
    path = write(tmp_path, "a.node", b"1 2 4611686018427387904 0\n1 0 0\n")
    with raises_at("a.node", 1, "the header declares 4611686018427387904 attributes"):
        triangle_io.read_node(path)


def test_attributes_the_file_does_hold_still_read(tmp_path):
    path = write(tmp_path, "a.node", b"2 2 2 1\n1 0 0 0.5 7 3\n2 1 0 1.5 8 4\n")
    out = triangle_io.read_node(path)
    assert out["vertex_attributes"].tolist() == [[0.5, 7.0], [1.5, 8.0]]
    assert out["vertex_markers"].ravel().tolist() == [3, 4]


@pytest.mark.parametrize("data", [b"", b"# only a comment\n\n"])
def test_a_file_without_data_names_a_real_line(tmp_path, data):
    lines = max(1, data.count(b"\n"))
    with raises_at("e.node", lines, "ended early"):
        triangle_io.read_node(write(tmp_path, "e.node", data))


@pytest.mark.parametrize(("old", "new", "line"), [
    (b"2 1 0\n", b"2 1_0 0\n", 3),  # was 10.0
    (b"3 0 1\n", b"0_3 0 1\n", 4),  # was vertex 3
    (b"2 1 0\n", "\u0662 1 0\n".encode(), 3),  # Arabic-Indic two: was vertex 2
    (b"3 2 0 0\n", b"3 2 0 0_0\n", 1),
])
def test_numbers_python_reads_but_triangle_does_not_are_refused(tmp_path, old, new, line):
    path = write(tmp_path, "u.node", NODE.replace(old, new, 1))
    with raises_at("u.node", line):
        triangle_io.read_node(path)


@pytest.mark.parametrize("separator", ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85"])
def test_a_comment_holding_a_splitlines_separator_stays_one_line(tmp_path, separator):
    data = b"3 2 0 0\n# a" + separator.encode() + b"b\n1 0 0\n2 1 0\n3 0 x\n"
    with raises_at("c.node", 5, "value 3 of vertex 3 is not a number"):
        triangle_io.read_node(write(tmp_path, "c.node", data))


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"])
def test_line_endings(tmp_path, ending):
    out = triangle_io.read_node(write(tmp_path, "l.node", NODE.replace(b"\n", ending)))
    assert out["vertices"].tolist() == [[0, 0], [1, 0], [0, 1]]


def test_ele_lines_past_the_declared_triangles_are_refused(tmp_path):
    write(tmp_path, "m.node", NODE)
    path = write(tmp_path, "m.ele", b"1 3 0\n1 1 2 3\n# c\n2 1 3 2\n")
    with raises_at("m.ele", 4, "more lines than the 1 triangles"):
        triangle_io.read_ele(path)


def test_ele_triangle_attributes_are_read_as_triangle_load_does(tmp_path):
    write(tmp_path, "t.node", NODE)
    out = triangle_io.read_ele(write(tmp_path, "t.ele", b"1 3 1\n1 1 2 3 5.5\n"))
    assert out["triangles"].tolist() == [[0, 1, 2]]
    assert out["triangle_attributes"].tolist() == [[5.5]]
    assert "triangle_attributes" not in triangle_io.read_ele(
        write(tmp_path, "t.ele", b"1 3\n1 1 2 3\n"))


def test_poly_lines_past_the_regions_are_refused(tmp_path):
    path = write(tmp_path, "m.poly", POLY + b"1\n1 0.2 0.2 1 0.1\n2 0.3 0.3 1 0.1\n")
    with raises_at("m.poly", 12, "more lines than the 1 regions"):
        triangle_io.read_poly(path)


def test_valid_poly_with_regions_still_reads(tmp_path):
    out = triangle_io.read_poly(write(tmp_path, "v.poly", POLY + b"1\n1 0.2 0.2 1 0.1\n"))
    assert out["segments"].tolist() == [[0, 1], [1, 2], [2, 0]]
    assert out["regions"].tolist() == [[0.2, 0.2, 1.0, 0.1]]


@pytest.mark.parametrize("bad", [b"5", b"-2", b"2147483648", b"0"])
def test_neigh_ids_outside_the_triangles_are_refused(tmp_path, bad):
    data = b"2 3\n1 -1 2 -1\n2 1 " + bad + b" -1\n"
    with raises_at("n.neigh", 3, "triangle 2 names neighbour"):
        triangle_io.read_neigh(write(tmp_path, "n.neigh", data))


def test_neigh_boundary_and_base_still_read(tmp_path):
    nbr = triangle_io.read_neigh(write(tmp_path, "n.neigh", b"2 3\n1 -1 2 -1\n2 1 -1 -1\n"))
    assert nbr.tolist() == [[-1, 1, -1], [0, -1, -1]]


@SETTINGS
@given(data=st.data(), suffix=st.sampled_from([".node", ".poly"]))
def test_byte_damage_parses_or_raises_mesh_format_error_with_a_line(tmp_path, data, suffix):
    raw = damaged(data, NODE if suffix == ".node" else POLY,
                  b"\x00\t\n\r #-+._ex0123456789\x0c\x85\xff")
    # A directory per example: a .poly damaged to say 0 vertices reads the .node beside it
    # (Triangle's rule), which an earlier example's file must not be (the error then named
    # that .node, rightly, and the example did not replay).
    path = write(Path(tempfile.mkdtemp(dir=tmp_path)), "d" + suffix, raw)
    reader = triangle_io.read_node if suffix == ".node" else triangle_io.read_poly
    try:
        out = reader(path)
    except MeshFormatError as exc:
        assert re.match(rf"{re.escape(str(path))}(:[1-9][0-9]*)?: ", str(exc)), exc
        return
    vertices = out["vertices"]
    assert vertices.ndim == 2 and vertices.shape[1] == 2 and np.isfinite(vertices).all()
    if "segments" in out:
        assert out["segments"].min(initial=0) >= 0
        assert out["segments"].max(initial=0) < len(vertices)


@pytest.mark.parametrize("one", [b"1", b"01", b"+1"])
def test_first_index_reads_the_number_as_the_vertex_reader_does(tmp_path, one):
    # "01" was taken as base 0 while the .node reader numbered from 1: a .poly listing 0
    # vertices read its .ele one vertex off
    write(tmp_path, "p.node", b"3 2 0 0\n" + one + b" 0 0\n2 1 0\n3 0 1\n")
    write(tmp_path, "p.poly", b"0 2 0 0\n3 0\n1 1 2\n2 2 3\n3 3 1\n0\n")
    write(tmp_path, "p.ele", b"1 3 0\n1 1 2 3\n")
    assert triangle_io.first_index(tmp_path / "p.poly") == 1
    out = triangle_io.read(tmp_path / "p.poly")
    assert out["triangles"].tolist() == [[0, 1, 2]]
    assert out["segments"].tolist() == [[0, 1], [1, 2], [2, 0]]


def test_a_failed_write_leaves_the_files_as_they_were(tmp_path):
    # The triangles cannot be laid out as rows of 3: nothing is written, not even the .node
    # (it was written first, then the .ele raised).
    stem = tmp_path / "m"
    (tmp_path / "m.node").write_text("old\n")
    mesh = {"vertices": np.zeros((3, 2)), "triangles": np.arange(4)}
    with pytest.raises(ValueError):
        triangle_io.write(mesh, stem)
    assert (tmp_path / "m.node").read_text() == "old\n"
    assert not (tmp_path / "m.ele").exists()
    paths = triangle_io.write({"vertices": np.zeros((3, 2)), "triangles": np.arange(3)}, stem)
    assert [p.suffix for p in paths] == [".node", ".ele"]
    assert triangle_io.read_node(tmp_path / "m.node")["vertices"].shape == (3, 2)


@pytest.mark.parametrize("suffix", ["node", "poly", "ele"])
def test_a_byte_order_mark_is_read_past(tmp_path, suffix):
    # Windows editors save text with one; it made the header's first number unreadable.
    bom = b"\xef\xbb\xbf"
    if suffix == "ele":
        write(tmp_path, "m.node", NODE)
        plain = triangle_io.read_ele(write(tmp_path, "m.ele", b"1 3 0\n1 1 2 3\n"))
        write(tmp_path, "b.node", bom + NODE)
        marked = triangle_io.read_ele(write(tmp_path, "b.ele", bom + b"1 3 0\n1 1 2 3\n"))
        assert marked["triangles"].tolist() == plain["triangles"].tolist() == [[0, 1, 2]]
        return
    data = NODE if suffix == "node" else POLY
    read = triangle_io.read_node if suffix == "node" else triangle_io.read_poly
    plain = read(write(tmp_path, "p." + suffix, data))
    marked = read(write(tmp_path, "b." + suffix, bom + data))
    assert marked["vertices"].tolist() == plain["vertices"].tolist() == [[0, 0], [1, 0], [0, 1]]
    if suffix == "poly":
        assert marked["segments"].tolist() == plain["segments"].tolist()


def test_a_file_that_cannot_be_written_leaves_the_others_as_they_were(tmp_path):
    # m.ele is a directory: m.node was replaced before the .ele write failed.
    stem = tmp_path / "m"
    (tmp_path / "m.node").write_text("old\n")
    (tmp_path / "m.ele").mkdir()
    mesh = {"vertices": np.zeros((3, 2)), "triangles": np.arange(3)}
    with pytest.raises(IsADirectoryError, match=r"m\.ele: is a directory"):
        triangle_io.write(mesh, stem)
    assert (tmp_path / "m.node").read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.ele", "m.node"]


def test_a_failed_write_part_way_leaves_no_temporary_file(tmp_path, monkeypatch):
    # A write that fails after the first file (a full disk) replaces nothing and leaves
    # no temporary file behind.
    stem = tmp_path / "m"
    (tmp_path / "m.node").write_text("old\n")
    real = triangle_io.written_whole
    calls = []

    @contextlib.contextmanager
    def failing(path, *args, **kwargs):
        calls.append(path)
        with real(path, *args, **kwargs) as fh:
            if len(calls) == 2:
                fh.write("half")
                raise OSError(28, "No space left on device")
            yield fh

    monkeypatch.setattr(triangle_io, "written_whole", failing)
    with pytest.raises(OSError, match="No space left"):
        triangle_io.write({"vertices": np.zeros((3, 2)), "triangles": np.arange(3)}, stem)
    monkeypatch.undo()
    assert (tmp_path / "m.node").read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.node"]


def test_write_takes_holes_none_as_no_holes(tmp_path):
    """`write` of a mesh with holes=None failed with "cannot reshape array of size 1"."""
    mesh = {"vertices": np.array([[0.0, 0], [1, 0], [0, 1]]),
            "segments": np.array([[0, 1], [1, 2], [2, 0]]), "holes": None}
    written = triangle_io.write(mesh, tmp_path / "m")
    assert tmp_path / "m.poly" in written
    back = triangle_io.read(tmp_path / "m.poly")
    assert back["segments"].tolist() == [[0, 1], [1, 2], [2, 0]]
    assert len(back.get("holes", [])) == 0


def test_triangle_attributes_and_regions_survive_a_round_trip(tmp_path):
    """`write` dropped .ele attributes and .poly regions, which `read` (as triangle.load)
    returns: a mesh written and read back lost both."""
    triangle = pytest.importorskip("triangle")
    mesh = {"vertices": np.array([[0.0, 0], [1, 0], [1, 1], [0, 1]]),
            "triangles": np.array([[0, 1, 2], [0, 2, 3]]),
            "triangle_attributes": np.array([[1.5], [2.25]]),
            "segments": np.array([[0, 1], [1, 2], [2, 3], [3, 0]]),
            "regions": np.array([[0.5, 0.2, 7.0, 0.01], [0.2, 0.5, 8.0, 0.02]])}
    triangle_io.write(mesh, tmp_path / "m")
    for back in (triangle_io.read(tmp_path / "m.poly"), triangle_io.read(tmp_path / "m.ele")):
        if "triangles" in back:
            np.testing.assert_array_equal(back["triangle_attributes"],
                                          mesh["triangle_attributes"])
        if "regions" in back:
            np.testing.assert_array_equal(back["regions"], mesh["regions"])
    # Triangle's Python loader reads the attributes the same way. (Its region lines it
    # reads four numbers at a time, index included, so it is no judge of those.)
    theirs = triangle.load(str(tmp_path), "m")
    np.testing.assert_array_equal(theirs["triangle_attributes"], mesh["triangle_attributes"])
