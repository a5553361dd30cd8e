"""Graph files: every reader and writer, round trips, the shared road networks, bad files.

The checks build their expectations independently of graph_io: edge multisets from Python
loops over the CSR, binary files packed byte by byte with ``struct``, and text files
parsed with plain ``str.split``.
"""

from __future__ import annotations

import gzip
import lzma
import re
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from morphgpu import backend, graph_io
from morphgpu.csr import CSRGraph, GraphFormatError

DATA = Path(__file__).parent / "data"


def edge_multiset(graph: CSRGraph, with_weights: bool = True) -> list[tuple]:
    """Sorted (u, v[, w]) of every CSR entry, from a plain loop over the rows."""
    g = graph.to("cpu")
    out = []
    for u in range(g.n_vertices):
        for k in range(int(g.indptr[u]), int(g.indptr[u + 1])):
            v = int(g.indices[k])
            if with_weights and g.weights is not None:
                out.append((u, v, g.weights[k].item()))
            else:
                out.append((u, v))
    return sorted(out)


def unordered_pairs(graph: CSRGraph) -> set[tuple[int, int]]:
    return {(min(e[0], e[1]), max(e[0], e[1])) for e in edge_multiset(graph, False) if e[0] != e[1]}


# --------------------------------------------------------------------------- fixtures on disk
def test_dimacs_fixture_reads_every_arc_with_its_weight():
    g = graph_io.read_graph(DATA / "small_dimacs.gr")
    assert g.n_vertices == 5 and g.directed
    expected = sorted([(0, 1, 7), (1, 0, 7), (1, 2, 4), (2, 3, 11), (3, 4, 2), (4, 0, 9),
                       (0, 1, 3)])
    assert edge_multiset(g) == expected
    assert g.weights.dtype == np.int32


def test_pace_fixture_is_undirected_both_directions():
    g = graph_io.read_graph(DATA / "small_pace.gr")
    assert g.n_vertices == 6 and not g.directed
    pairs = {(0, 1), (1, 2), (2, 3), (0, 3), (3, 4), (4, 5)}
    both = sorted(pairs | {(v, u) for u, v in pairs})
    assert edge_multiset(g) == both
    as_listed = graph_io.read_pace(DATA / "small_pace.gr", directed=True)
    assert edge_multiset(as_listed) == sorted([(0, 1), (1, 2), (2, 3), (3, 0), (3, 4), (4, 5)])


def test_symmetric_matrix_market_becomes_both_directions():
    g = graph_io.read_graph(DATA / "small_symmetric.mtx")
    assert g.n_vertices == 4 and not g.directed
    lower = [(1, 0, 1.5), (2, 0, 2.0), (2, 1, 0.5), (3, 2, 4.0)]
    assert edge_multiset(g) == sorted(lower + [(v, u, w) for u, v, w in lower])
    listed = graph_io.read_matrix_market(DATA / "small_symmetric.mtx", directed=True)
    assert edge_multiset(listed) == sorted(lower)


def test_general_pattern_matrix_market_is_directed_without_weights():
    g = graph_io.read_graph(DATA / "small_general.mtx")
    assert g.directed and g.weights is None
    assert edge_multiset(g) == [(0, 1), (1, 2), (2, 0)]
    und = graph_io.read_graph(DATA / "small_general.mtx", directed=False)
    assert not und.directed
    assert edge_multiset(und) == sorted([(0, 1), (1, 2), (2, 0), (1, 0), (2, 1), (0, 2)])


def test_dimacs_directed_false_symmetrises_and_keeps_the_smaller_weight():
    g = graph_io.read_dimacs(DATA / "small_dimacs.gr", directed=False)
    assert not g.directed
    triples = edge_multiset(g)
    assert (0, 1, 3) in triples and (1, 0, 3) in triples
    assert len({(u, v) for u, v, _ in triples}) == len(triples)


# --------------------------------------------------------------------------- binary layouts
def galois_bytes(n, ends, dests, weights=None) -> bytes:
    """A Galois v1 file packed field by field from the published layout."""
    m = len(dests)
    out = struct.pack("<4Q", 1, 4 if weights is not None else 0, n, m)
    out += struct.pack(f"<{n}Q", *ends)
    out += struct.pack(f"<{m}I", *dests)
    if m % 2:
        out += b"\0" * 4
    if weights is not None:
        out += struct.pack(f"<{m}I", *weights)
    return out


def ecl_bytes(n, offsets, neighbours, weights=None) -> bytes:
    m = len(neighbours)
    out = struct.pack("<2i", n, m) + struct.pack(f"<{n + 1}i", *offsets)
    out += struct.pack(f"<{m}i", *neighbours)
    if weights is not None:
        out += struct.pack(f"<{m}i", *weights)
    return out


def test_galois_layout_read_from_hand_packed_bytes(tmp_path):
    path = tmp_path / "g.gr"
    path.write_bytes(galois_bytes(3, [2, 2, 3], [1, 2, 0], [10, 20, 30]))
    g = graph_io.read_graph(path)  # .gr: detected from the content
    assert edge_multiset(g) == [(0, 1, 10), (0, 2, 20), (2, 0, 30)]


def test_galois_writer_matches_hand_packed_bytes(tmp_path):
    g = CSRGraph.from_arrays(np.array([0, 2, 2, 3]), np.array([1, 2, 0]),
                             np.array([10, 20, 30], dtype=np.uint32))
    graph_io.write_graph(g, tmp_path / "g.gr", fmt="galois")
    assert (tmp_path / "g.gr").read_bytes() == galois_bytes(3, [2, 2, 3], [1, 2, 0], [10, 20, 30])
    unweighted = CSRGraph.from_arrays(np.array([0, 2, 2, 3]), np.array([1, 2, 0]))
    graph_io.write_galois_gr(unweighted, tmp_path / "u.gr")
    assert (tmp_path / "u.gr").read_bytes() == galois_bytes(3, [2, 2, 3], [1, 2, 0])


def test_ecl_layout_both_ways(tmp_path):
    raw = ecl_bytes(3, [0, 2, 2, 3], [1, 2, 0], [5, -6, 7])
    (tmp_path / "g.egr").write_bytes(raw)
    g = graph_io.read_graph(tmp_path / "g.egr")
    assert edge_multiset(g) == [(0, 1, 5), (0, 2, -6), (2, 0, 7)]
    graph_io.write_graph(g, tmp_path / "h.egr")
    assert (tmp_path / "h.egr").read_bytes() == raw
    (tmp_path / "u.egr").write_bytes(ecl_bytes(3, [0, 2, 2, 3], [1, 2, 0]))
    assert graph_io.read_graph(tmp_path / "u.egr").weights is None


def test_format_detection_by_content(tmp_path):
    for name, fmt in [("small_dimacs.gr", "dimacs"), ("small_pace.gr", "pace")]:
        assert graph_io.detect_format(DATA / name) == fmt
        odd = tmp_path / (name + ".data")
        odd.write_bytes((DATA / name).read_bytes())
        assert graph_io.detect_format(odd) == fmt
    (tmp_path / "b.gr").write_bytes(galois_bytes(2, [1, 2], [1, 0]))
    assert graph_io.detect_format(tmp_path / "b.gr") == "galois"
    (tmp_path / "e.bin").write_bytes(ecl_bytes(2, [0, 1, 2], [1, 0]))
    assert graph_io.detect_format(tmp_path / "e.bin") == "egr"
    (tmp_path / "x.bin").write_bytes(b"hello world, not a graph")
    with pytest.raises(GraphFormatError, match="x.bin"):
        graph_io.read_graph(tmp_path / "x.bin")


def test_write_gr_without_format_is_refused(tmp_path):
    g = CSRGraph.from_edges(np.array([0]), np.array([1]))
    with pytest.raises(ValueError, match="ambiguous"):
        graph_io.write_graph(g, tmp_path / "g.gr")
    with pytest.raises(ValueError, match="fmt"):
        graph_io.read_graph(DATA / "small_pace.gr", fmt="metis")


@pytest.mark.parametrize("suffix", [".gz", ".xz", ".bz2"])
def test_compressed_files_are_transparent(tmp_path, suffix):
    g = graph_io.read_graph(DATA / "small_dimacs.gr")
    path = tmp_path / f"g.gr{suffix}"
    graph_io.write_graph(g, path, fmt="dimacs")
    assert path.read_bytes()[:2] != b"p "  # really compressed
    assert edge_multiset(graph_io.read_graph(path)) == edge_multiset(g)


def test_truncated_compressed_stream_names_the_file(tmp_path):
    data = gzip.compress((DATA / "small_dimacs.gr").read_bytes())
    (tmp_path / "cut.gr.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(GraphFormatError, match="cut.gr.gz.*truncated"):
        graph_io.read_graph(tmp_path / "cut.gr.gz")


# --------------------------------------------------------------------------- round trips
@st.composite
def graphs(draw, weighted=True):
    n = draw(st.integers(1, 25))
    m = draw(st.integers(0, 60))
    src = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    dst = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    w = draw(st.lists(st.integers(0, 10**6), min_size=m, max_size=m)) if weighted else None
    return CSRGraph.from_edges(
        np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64),
        None if w is None else np.array(w, dtype=np.int32), n_vertices=n,
    )


@given(graphs())
def test_round_trip_every_weighted_format(tmp_path_factory, g):
    folder = tmp_path_factory.mktemp("rt")
    expected = edge_multiset(g)
    for fmt, name in [("dimacs", "g.gr"), ("galois", "g.gr"), ("egr", "g.egr"), ("mtx", "g.mtx")]:
        path = folder / f"{fmt}-{name}"
        graph_io.write_graph(g, path, fmt=fmt)
        back = graph_io.read_graph(path)  # format found again without help
        assert back.n_vertices == g.n_vertices, fmt
        assert edge_multiset(back) == expected, fmt
    for fmt in ("galois", "egr"):  # binary CSR keeps the arrays exactly
        path = folder / f"exact.{fmt}"
        graph_io.write_graph(g, path, fmt=fmt)
        back = graph_io.read_graph(path, fmt=fmt)
        assert np.array_equal(back.indptr, g.indptr) and np.array_equal(back.indices, g.indices)


@given(graphs(weighted=False))
def test_round_trip_pace_keeps_the_unordered_pairs(tmp_path_factory, g):
    path = tmp_path_factory.mktemp("pace") / "g.gr"
    graph_io.write_graph(g, path, fmt="pace")
    back = graph_io.read_graph(path)
    assert back.n_vertices == g.n_vertices
    assert unordered_pairs(back) == unordered_pairs(g)
    assert edge_multiset(back) == sorted({(u, v) for u, v in unordered_pairs(g)}
                                         | {(v, u) for u, v in unordered_pairs(g)})


@given(graphs())
def test_round_trip_undirected_matrix_market_writes_symmetric(tmp_path_factory, g):
    und = g.symmetrized()
    path = tmp_path_factory.mktemp("mm") / "g.mtx"
    graph_io.write_matrix_market(und, path)
    if und.n_edges:
        assert "symmetric" in path.read_text().splitlines()[0]
    back = graph_io.read_matrix_market(path)
    assert not back.directed
    assert edge_multiset(back) == edge_multiset(und)


def test_float_weights_round_trip_through_matrix_market(tmp_path):
    g = CSRGraph.from_edges(np.array([0, 1, 2]), np.array([1, 2, 0]),
                            np.array([0.1, 1e-300, -2.5]))
    graph_io.write_graph(g, tmp_path / "f.mtx.xz")
    assert edge_multiset(graph_io.read_graph(tmp_path / "f.mtx.xz")) == edge_multiset(g)
    with pytest.raises(ValueError, match="integers"):
        graph_io.write_dimacs(g, tmp_path / "f.gr")
    with pytest.raises(ValueError, match="float32"):
        graph_io.write_galois_gr(g, tmp_path / "f.gr")


def test_writers_accept_gpu_side_graphs_and_scipy(tmp_path, device):
    import scipy.sparse as sp

    g = graph_io.read_graph(DATA / "small_dimacs.gr").to(device)
    graph_io.write_graph(g, tmp_path / "g.egr")
    assert edge_multiset(graph_io.read_graph(tmp_path / "g.egr")) == edge_multiset(g)
    matrix = sp.csr_matrix(np.array([[0, 2], [3, 0]]))
    graph_io.write_graph(matrix, tmp_path / "m.mtx")
    assert edge_multiset(graph_io.read_graph(tmp_path / "m.mtx")) == [(0, 1, 2), (1, 0, 3)]


def test_reading_then_moving_to_the_device_gives_the_same_graph(device):
    g = graph_io.read_graph(DATA / "small_dimacs.gr")
    moved = g.to(device)
    assert backend.side_of(moved.indices) == device
    assert edge_multiset(moved) == edge_multiset(g)


# --------------------------------------------------------------------------- shared roads
@pytest.mark.parametrize("name", ["NY", "BAY", "COL"])
def test_shared_road_networks(shared, name):
    path = shared("data", "roads", f"{name}.gr.xz")
    g = graph_io.read_graph(path)
    text = lzma.decompress(path.read_bytes()).decode().split("\n")
    header = next(line.split() for line in text if line.startswith("p"))
    n, m = int(header[2]), int(header[3])
    assert header[1] == "tw" and g.n_vertices == n and not g.directed
    assert g.n_edges <= 2 * m and g.n_edges % 2 == 0
    # symmetric: the transpose has the same rows
    t = g.transpose()
    assert np.array_equal(t.indptr, g.indptr) and np.array_equal(t.indices, g.indices)
    if name == "NY":  # every listed edge, checked with a plain parser
        body = [line.split() for line in text if line and line[0].isdigit()]
        assert len(body) == m
        listed = {(int(u) - 1, int(v) - 1) for u, v in body}
        pairs = {(min(u, v), max(u, v)) for u, v in listed}
        src = g.edge_sources()
        found = set(zip(np.minimum(src, g.indices).tolist(), np.maximum(src, g.indices).tolist(),
                        strict=True))
        assert found == pairs


# --------------------------------------------------------------------------- bad files
def write(tmp_path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


BAD_TEXT = [
    # (file name, content, line named, words in the message)
    ("bad_token.gr", "p sp 3 2\na 1 2 5\na 2 x 5\n", 3, "bad number"),
    ("float.gr", "p sp 3 2\na 1 2 5\na 2 3 5.5\n", 3, "bad number"),
    ("range.gr", "p sp 3 2\na 1 2 5\na 2 4 5\n", 3, "outside 1..3"),
    ("zero.gr", "c hi\np sp 3 2\na 0 2 5\na 2 3 5\n", 3, "outside"),
    ("short.gr", "p sp 3 3\na 1 2 5\na 2 3 5\n", 3, "declares 3"),
    ("long.gr", "p sp 3 1\na 1 2 5\na 2 3 5\n", 3, "more edges"),
    ("fields.gr", "p sp 3 2\na 1 2 5\na 2 3\n", 3, "expected"),
    ("prefix.gr", "p sp 3 2\na 1 2 5\ne 2 3 5\n", 3, "expected"),
    ("header.gr", "p sp 3\na 1 2 5\n", 1, "p sp n m"),
    ("noheader.gr", "c nothing\n", None, "cannot tell"),
    ("pace_range.gr", "p tw 4 2\n1 2\n5 1\n", 3, "outside 1..4"),
    ("pace_fields.gr", "p tw 4 2\n1 2 3\n4\n", 2, "expected"),
    ("pace_neg.gr", "p tw 4 2\n1 2\n-1 3\n", 3, "outside"),
    ("pace_count.gr", "p tw 4 x\n1 2\n", 1, "integers"),
]


@pytest.mark.parametrize("name,text,line,words", BAD_TEXT, ids=[b[0] for b in BAD_TEXT])
def test_bad_text_files_name_the_file_and_line(tmp_path, name, text, line, words):
    path = write(tmp_path, name, text)
    with pytest.raises(GraphFormatError) as info:
        graph_io.read_graph(path)
    message = str(info.value)
    assert name in message and words in message
    if line is not None:
        assert f"line {line}:" in message


def test_missing_header_is_named_when_the_format_is_given(tmp_path):
    path = write(tmp_path, "noheader.gr", "c nothing\n")
    with pytest.raises(GraphFormatError, match=r"noheader\.gr: no 'p sp n m' line"):
        graph_io.read_dimacs(path)
    path = write(tmp_path, "edge_first.gr", "1 2\np tw 2 1\n")
    with pytest.raises(GraphFormatError, match=r"edge_first\.gr: line 1: expected 'p tw"):
        graph_io.read_pace(path)


def test_bad_matrix_market_names_the_line(tmp_path):
    path = write(tmp_path, "bad.mtx", "%%MatrixMarket matrix coordinate real general\n"
                 "3 3 2\n1 2 1.0\n2 zz 1.0\n")
    with pytest.raises(GraphFormatError, match=r"bad\.mtx.*[Ll]ine 4"):
        graph_io.read_graph(path)
    path = write(tmp_path, "rect.mtx", "%%MatrixMarket matrix coordinate real general\n"
                 "3 4 1\n1 2 1.0\n")
    with pytest.raises(GraphFormatError, match="square"):
        graph_io.read_graph(path)


@given(st.integers(0, 39), st.sampled_from(["a 1 x 3", "a 1 2", "a 99 1 1", "z", "a 1 2 3 4"]))
def test_any_corrupted_line_of_a_large_dimacs_file_is_named(tmp_path_factory, victim, garbage):
    lines = [f"a {i % 7 + 1} {(i * 3) % 7 + 1} {i}" for i in range(40)]
    lines[victim] = garbage
    path = tmp_path_factory.mktemp("bad") / "big.gr"
    path.write_text("c header comment\np sp 7 40\n" + "\n".join(lines) + "\n")
    with pytest.raises(GraphFormatError, match=f"big.gr: line {victim + 3}:"):
        graph_io.read_graph(path)


def test_blank_lines_and_comments_in_the_body_are_accepted(tmp_path):
    path = write(tmp_path, "loose.gr", "p tw 3 2\n\n1 2\nc middle\n2 3\n\n")
    g = graph_io.read_graph(path)
    assert unordered_pairs(g) == {(0, 1), (1, 2)}


BAD_BINARY = [
    # (file name, bytes, byte offset named, words)
    ("version.gr", struct.pack("<4Q", 2, 0, 1, 0) + struct.pack("<Q", 0), 0, "version"),
    ("edge_size.gr", struct.pack("<4Q", 1, 8, 1, 0) + struct.pack("<Q", 0), 8, "edge data"),
    ("short_header.gr", struct.pack("<2Q", 1, 0), 16, "header"),
    # a truncated file is named at its end, where the data ran out
    ("cut_dests.gr", galois_bytes(3, [2, 2, 3], [1, 2, 0])[:-8], 64, "destinations"),
    ("cut_weights.gr", galois_bytes(3, [2, 2, 3], [1, 2, 0], [1, 2, 3])[:-2], 82, "edge data"),
    ("dest_range.gr", galois_bytes(3, [2, 2, 3], [1, 7, 0]), 60, "neighbour 7"),
    ("ends_down.gr", galois_bytes(3, [2, 1, 3], [1, 2, 0]), 40, "smaller"),
    ("ends_m.gr", galois_bytes(3, [2, 2, 2], [1, 2, 0]), 48, "header says 3"),
    ("extra.gr", galois_bytes(2, [1, 2], [1, 0]) + b"junk", 56, "unexpected"),
    ("neg_n.egr", struct.pack("<2i", -1, 0), 0, "negative vertex"),
    ("cut.egr", ecl_bytes(3, [0, 2, 2, 3], [1, 2, 0])[:-5], 31, "neighbour list"),
    ("first.egr", ecl_bytes(2, [1, 1, 2], [1, 0]), 8, "first row offset"),
    ("range.egr", ecl_bytes(2, [0, 1, 2], [1, -3]), 24, "neighbour -3"),
    ("weights.egr", ecl_bytes(2, [0, 1, 2], [1, 0], [1, 2])[:-1], 35, "weights"),
]


@pytest.mark.parametrize("name,data,offset,words", BAD_BINARY, ids=[b[0] for b in BAD_BINARY])
def test_bad_binary_files_name_the_file_and_byte(tmp_path, name, data, offset, words):
    path = tmp_path / name
    path.write_bytes(data)
    fmt = "egr" if name.endswith(".egr") else "galois"
    with pytest.raises(GraphFormatError) as info:
        graph_io.read_graph(path, fmt=fmt)
    message = str(info.value)
    assert name in message and f"byte {offset}:" in message and words in message


def test_odd_edge_count_without_padding_is_tolerated_when_unweighted(tmp_path):
    path = tmp_path / "nopad.gr"
    path.write_bytes(galois_bytes(3, [2, 2, 3], [1, 2, 0])[:-4])
    assert edge_multiset(graph_io.read_graph(path, fmt="galois")) == [(0, 1), (0, 2), (2, 0)]


@given(graphs())
def test_line_scanner_and_bulk_parser_agree(tmp_path_factory, g):
    folder = tmp_path_factory.mktemp("scan")
    graph_io.write_dimacs(g, folder / "fast.gr")
    lines = (folder / "fast.gr").read_text().splitlines()
    # a comment inside the body sends the reader down the line-by-line path
    (folder / "slow.gr").write_text("\n".join(lines[:1] + ["c forces the scan"] + lines[1:]))
    fast, slow = graph_io.read_graph(folder / "fast.gr"), graph_io.read_graph(folder / "slow.gr")
    assert edge_multiset(fast) == edge_multiset(slow) == edge_multiset(g)


@pytest.mark.parametrize("fmt, suffix", [("dimacs", ".gr"), ("egr", ".egr")])
@pytest.mark.parametrize("weights", [np.array(["a", "b"]), np.array([True, False])])
def test_integer_formats_refuse_weights_that_are_not_numbers(tmp_path, fmt, suffix, weights):
    g = CSRGraph.from_edges(np.array([0, 1]), np.array([1, 0])).with_weights(weights)
    with pytest.raises(ValueError, match="are not numbers"):
        graph_io.write_graph(g, tmp_path / f"g{suffix}", fmt=fmt)


@pytest.mark.parametrize("weight_dtype", [np.int16, np.int64, np.float64, "int8", "foo"])
def test_galois_weight_dtype_other_than_four_bytes_is_refused(tmp_path, weight_dtype):
    """int16 read each 4-byte weight as two (6 weights for 3 edges, in a graph built
    unchecked); int64 and float64 gave NumPy's 'When changing to a larger dtype...'."""
    path = tmp_path / "w.gr"
    path.write_bytes(galois_bytes(3, [2, 2, 3], [1, 2, 0], [10, 20, 30]))
    with pytest.raises(ValueError, match="weight_dtype must be uint32, int32 or float32"):
        graph_io.read_galois_gr(path, weight_dtype=weight_dtype)
    # the three 4-byte kinds still read
    for ok in (np.uint32, "int32", np.float32):
        assert graph_io.read_galois_gr(path, weight_dtype=ok).weights.size == 3


@pytest.mark.parametrize("fmt, name", [("dimacs", "g.gr"), ("pace", "p.gr"), ("galois", "b.gr"),
                                       ("egr", "e.egr"), ("mtx", "m.mtx")])
def test_directed_must_be_none_true_or_false(tmp_path, fmt, name):
    """Only `directed is False` / `is True` were tested: np.False_ kept a directed file's
    edges one way, and 0 or "false" were taken as None, without a word."""
    g = CSRGraph.from_edges([0, 1], [1, 2], [5, 7], n_vertices=3)
    graph_io.write_graph(g, tmp_path / name, fmt=fmt)
    for directed in (0, "false", 1, "yes"):
        with pytest.raises(ValueError, match=re.escape(
                f"directed must be None, True or False, got {directed!r}")):
            graph_io.read_graph(tmp_path / name, fmt=fmt, directed=directed)
    undirected = graph_io.read_graph(tmp_path / name, fmt=fmt, directed=np.False_)
    assert undirected.n_edges == 4 and not undirected.directed
    as_listed = graph_io.read_graph(tmp_path / name, fmt=fmt, directed=np.True_)
    assert as_listed.n_edges == 2 and as_listed.directed
