"""Malformed graph files (graph_io, graph_formats): MatrixMarket entries scipy's parser
misreads or crashes on, DIMACS/PACE tokens Python's int() takes but the format does not,
METIS adjacency listed from one end only, METIS/SNAP numbers read through floats.

Every malformed file must raise GraphFormatError naming the file and the 1-based line;
valid files must read as before.
"""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest
from file_damage import damaged, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from morphgpu import backend, graph_formats, graph_io
from morphgpu.csr import GraphFormatError

SETTINGS = settings(suppress_health_check=[HealthCheck.function_scoped_fixture],
                    deadline=None, max_examples=150)

REAL = b"%%MatrixMarket matrix coordinate real general\n3 3 2\n"
INTEGER = b"%%MatrixMarket matrix coordinate integer general\n3 3 2\n"
PATTERN = b"%%MatrixMarket matrix coordinate pattern general\n3 3 2\n"


def edges(g) -> list[tuple]:
    w = g.weights.tolist() if g.weights is not None else [None] * g.n_edges
    return sorted(zip(g.edge_sources().tolist(), g.indices.tolist(), w, strict=True))


# scipy 1.17's fast_matrix_market segfaults on each of these: read in one child process,
# so that a regression fails the test instead of killing the run.
CRASHERS = {
    "nul.mtx": REAL + b"1 2 3\x00\n2 3 4\n",  # a NUL after a number
    "space.mtx": REAL + b"1 2 3\n2 3 4 ",  # the last number, a space, no newline
    "cr.mtx": INTEGER + b"1 2 3\n2 3 4\r",
    "tab.mtx": PATTERN + b"1 2\n2 3\t",
    "array.mtx": b"%%MatrixMarket matrix array real general\n2 2\n1.5\n0\n0\n-2\x0c",
}


def test_inputs_that_crash_scipy_are_errors_or_graphs_not_a_crash(tmp_path):
    paths = [write(tmp_path, name, data) for name, data in CRASHERS.items()]
    code = ("import sys\nfrom morphgpu import graph_io\n"
            "for p in sys.argv[1:]:\n"
            "    try:\n        g = graph_io.read_graph(p)\n"
            "        print('OK', p, g.n_edges, flush=True)\n"
            "    except graph_io.GraphFormatError as e:\n        print('ERR', e, flush=True)\n")
    out = subprocess.run([sys.executable, "-c", code, *map(str, paths)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, (out.stdout, out.stderr)
    lines = out.stdout.splitlines()
    assert len(lines) == len(paths)
    assert lines[0].startswith(f"ERR {paths[0]}: line 3: a NUL byte")
    # trailing whitespace without a final newline is valid: the two entries are read
    assert lines[1:] == [f"OK {p} 2" for p in paths[1:]]


@pytest.mark.parametrize("header", [REAL, INTEGER, PATTERN])
@pytest.mark.parametrize("where", ["value", "index", "comment", "blank"])
def test_nul_anywhere_in_the_body_names_its_line(tmp_path, header, where):
    last = b"" if header is PATTERN else b" 4"
    first = {"value": b"1 2" + (b"" if header is PATTERN else b" 3") + b"\x00\n",
             "index": b"1\x00 2" + (b"" if header is PATTERN else b" 3") + b"\n",
             "comment": b"%\x00\n", "blank": b"\x00\n"}[where]
    data = header + first + b"2 3" + last + b"\n"
    if where in ("comment", "blank"):
        data = header + first + b"1 2" + last + b"\n2 3" + last + b"\n"
    with pytest.raises(GraphFormatError, match=re.escape("n.mtx: line 3:")):
        graph_io.read_graph(write(tmp_path, "n.mtx", data))


# Each was read without a word before: scipy keeps a token's valid prefix.
MISREAD = [
    (INTEGER, b"1 2 2.5\n", "not an integer"),  # read as 2
    (INTEGER, b"1 2 1e3\n", "not an integer"),  # read as 1
    (INTEGER, b"1 2 3x\n", "not a number"),  # read as 3
    (INTEGER, b"1 2 1_0\n", "not a number"),  # read as 1
    (INTEGER, b"1 2 0x1\n", "not a number"),  # read as 0
    (INTEGER, b"1 2 -\n", "not an integer"),
    (INTEGER, b"1 2 3-\n", "not an integer"),
    (REAL, b"1 2 3,5\n", "not a number"),  # read as 3.0
    (REAL, b"1 2 3x\n", "not a number"),
    (REAL, b"1 2 0x1p3\n", "not a number"),  # read as 0.0
    (REAL, b"1 2 1.5.5\n", "not a number"),
    (REAL, b"1 2 1e\n", "not a number"),
    (REAL, b"1 2 3 4\n", "expected 3 numbers"),  # a fourth column ignored
    (REAL, b"1 2\n", "expected 3 numbers"),
    (PATTERN, b"1 2x\n", "not a number"),  # read as (1, 2)
    (PATTERN, b"1 2.5\n", "not an integer"),
    (PATTERN, b"1 2 7\n", "expected 2 numbers"),  # a weight dropped
    (REAL, b"1.5 2 3\n", "row and column indices"),
    (REAL, b"+1 2 3\n", "row and column indices"),
]


@pytest.mark.parametrize(("header", "entry", "why"), MISREAD)
def test_tokens_scipy_would_misread_are_refused_with_the_line(tmp_path, header, entry, why):
    second = b"2 3\n" if header is PATTERN else b"2 3 4\n"
    path = write(tmp_path, "m.mtx", header + second + entry)
    with pytest.raises(GraphFormatError, match=re.escape(f"m.mtx: line 4: {why}")):
        graph_io.read_graph(path)


def test_array_layout_values_are_checked_too(tmp_path):
    head = b"%%MatrixMarket matrix array integer general\n2 1\n"
    with pytest.raises(GraphFormatError, match="line 4: not an integer"):
        graph_io.read_matrix_market(write(tmp_path, "a.mtx", head + b"1\n2.5\n"))
    head = b"%%MatrixMarket matrix array real general\n2 2\n"
    g = graph_io.read_matrix_market(write(tmp_path, "b.mtx", head + b"1.5\n-2e0\n0\n0\n"))
    assert edges(g) == [(0, 0, 1.5), (1, 0, -2.0)]


@pytest.mark.parametrize("value", [b"nan", b"-inf", b"Infinity", b"1e400", b"-.5", b"1.",
                                   b"2.5E-3", b"7"])
def test_real_values_numpy_reads_still_read(tmp_path, value):
    path = write(tmp_path, "r.mtx", REAL + b"1 2 " + value + b"\n\t2  3 4 \r\n")
    g = graph_io.read_graph(path)
    got = dict(((u, v), w) for u, v, w in edges(g))
    np.testing.assert_equal(got[(0, 1)], float(value))
    assert got[(1, 2)] == 4.0


def test_comment_and_blank_lines_in_the_body_keep_line_numbers(tmp_path):
    data = INTEGER + b"% note\n\n1 2 -7\n% 1 2 x\n2 3 1.5\n"
    with pytest.raises(GraphFormatError, match="line 7: not an integer"):
        graph_io.read_graph(write(tmp_path, "c.mtx", data))


def test_a_symmetric_file_listing_the_upper_triangle_keeps_its_direction(tmp_path):
    data = (b"%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n"
            b"1 2 3\n3 1 4\n2 2 5\n")
    path = write(tmp_path, "s.mtx", data)
    assert edges(graph_io.read_graph(path, directed=True)) == [
        (0, 1, 3.0), (1, 1, 5.0), (2, 0, 4.0)]  # as listed: 1 -> 2, not 2 -> 1
    assert edges(graph_io.read_graph(path)) == [
        (0, 1, 3.0), (0, 2, 4.0), (1, 0, 3.0), (1, 1, 5.0), (2, 0, 4.0)]


def test_missing_size_line_is_named(tmp_path):
    path = write(tmp_path, "e.mtx", b"%%MatrixMarket matrix coordinate real general\n% x\n")
    with pytest.raises(GraphFormatError, match="e.mtx: no size line"):
        graph_io.read_graph(path)


FLOAT_TEXT = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")


@SETTINGS
@given(token=st.text(alphabet="0123456789.eE+-", min_size=1, max_size=8))
def test_any_real_token_reads_as_python_float_or_names_its_line(tmp_path, token):
    path = write(tmp_path, "t.mtx", REAL + b"2 3 1\n1 2 " + token.encode() + b"\n")
    try:
        g = graph_io.read_graph(path)
    except GraphFormatError as exc:
        assert "t.mtx: " in str(exc)
        # refused only where the token is not a decimal float (or scipy refuses it too)
        if FLOAT_TEXT.fullmatch(token):
            assert "not a readable MatrixMarket file" in str(exc)
        else:
            assert "line 4:" in str(exc)
        return
    assert FLOAT_TEXT.fullmatch(token)
    got = dict(((u, v), w) for u, v, w in edges(g))
    assert got[(0, 1)] == float(token) or (float(token) == 0 and (0, 1) not in got)


@SETTINGS
@given(token=st.text(alphabet="0123456789.eE+-x_", min_size=1, max_size=6))
def test_any_integer_token_reads_exactly_or_names_its_line(tmp_path, token):
    path = write(tmp_path, "i.mtx", INTEGER + b"2 3 1\n1 2 " + token.encode() + b"\n")
    try:
        g = graph_io.read_graph(path)
    except GraphFormatError as exc:
        assert "i.mtx: " in str(exc)
        return
    assert re.fullmatch(r"-?[0-9]+", token)
    got = dict(((u, v), w) for u, v, w in edges(g))
    assert got.get((0, 1), 0) == int(token)


VALID_MTX = (b"%%MatrixMarket matrix coordinate real general\n% made by hand\n4 4 5\n"
             b"1 2 0.5\n2 3 -1.25e2\n3 4 7\n4 1 1e-3\n2 2 3.\n")


@SETTINGS
@given(data=st.data())
def test_byte_damage_to_a_matrix_market_file_parses_or_raises_graph_format_error(
        tmp_path, data):
    raw = damaged(data, VALID_MTX, bytes([0, 9, 10, 13, 32, 37, 43, 44, 45, 46, 48, 49, 101,
                                          120, 0xFF, 0xC3]))
    path = write(tmp_path, "d.mtx", raw)
    try:
        g = graph_io.read_graph(path, "mtx")
    except GraphFormatError as exc:
        assert "d.mtx" in str(exc)
        return
    assert g.n_vertices >= 0  # read: a graph, not a crash or another exception


# --------------------------------------------------------------------------- DIMACS, PACE
@pytest.mark.parametrize(("text", "line"), [
    (b"p sp 20 1\na 1 1_0 5\n", 2),  # was read as vertex 10
    (b"p sp 1_0 1\na 1 2 5\n", 1),  # was read as 10 vertices
    (b"p sp 2 1\na 1 2 1_0\n", 2),
])
def test_dimacs_refuses_underscored_numbers(tmp_path, text, line):
    with pytest.raises(GraphFormatError, match=f"g.gr: line {line}:"):
        graph_io.read_graph(write(tmp_path, "g.gr", text))


def test_pace_refuses_underscored_numbers(tmp_path):
    with pytest.raises(GraphFormatError, match="g.gr: line 3:"):
        graph_io.read_graph(write(tmp_path, "g.gr", b"p tw 20 2\n1 2\n1 1_0\n"), "pace")


def test_dimacs_signs_and_padding_still_read(tmp_path):
    g = graph_io.read_graph(write(tmp_path, "g.gr", b"p sp 2 1 \r\na\t+1 2 -05\r\n"))
    assert edges(g) == [(0, 1, -5)]


float_token = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=64).flatmap(
        lambda x: st.sampled_from([repr(x), f"{x:e}", f"{x:.3g}", f"{x:.17E}"])),
    st.text(alphabet="0123456789.eE-", min_size=1, max_size=7),
)


@SETTINGS
@given(tokens=st.lists(float_token, min_size=1, max_size=40))
def test_many_real_values_read_exactly_or_the_first_bad_line_is_named(tmp_path, tokens):
    n = len(tokens)
    lines = "".join(f"{k + 1} {k % 3 + 1} {t}\n" for k, t in enumerate(tokens))
    size = max(n, 3)  # square: a graph
    head = f"%%MatrixMarket matrix coordinate real general\n{size} {size} {n}\n"
    path = write(tmp_path, "f.mtx", (head + lines).encode())
    bad = [k for k, t in enumerate(tokens) if not FLOAT_TEXT.fullmatch(t)]
    try:
        g = graph_io.read_graph(path)
    except GraphFormatError as exc:
        assert bad, exc
        assert f"f.mtx: line {bad[0] + 3}: not a number" in str(exc)
        return
    assert not bad
    got = dict(((u, v), w) for u, v, w in edges(g))
    for k, t in enumerate(tokens):
        assert got.get((k, k % 3), 0.0) == float(t)


# --------------------------------------------------------------------------- METIS, SNAP
@pytest.mark.parametrize(("text", "line", "what"), [
    # one-sided adjacency was read as an undirected graph one end did not know
    ("3 2\n2\n3\n1 2\n", 2, "vertex 1 lists neighbour 2, but vertex 2 (line 3) does not"),
    ("3 2 1\n2 5\n1 4 3 7\n2 7\n", 3, "vertex 2 lists neighbour 1 with weight 4"),
    ("3 2\n2\n1 99999999999999999999\n2\n", 3, "past int64"),  # was OverflowError
    ("3 2\n2\n1 3\n0_2\n", 4, "not a non-negative integer"),  # was read as 2
    ("3 2\n2\n1 x\n2\n", 3, "not a non-negative integer"),  # had no line
    ("3 2 1\n2.0 1\n1 1 3 1\n2 1\n", 2, "not a non-negative integer"),
    ("3 2 1\n2 nan\n1 nan 3 1\n2 1\n", 2, "not a finite number"),
    ("3 2 10 -1\n5 2\n5 1 3\n5 2\n", 1, "ncon must be non-negative"),
    # the header went through int(): '1_0' was 10 vertices, '\u0663' (Arabic three) 3
    ("% c\n1_0 0\n" + "\n" * 10, 2, "the header must be integers"),
    ("\u0663 2\n2\n1 3\n2\n", 1, "the header must be integers"),
    ("3 2 0_1\n2 5\n1 5 3 7\n2 7\n", 1, "the header must be integers"),
    # a fifth header number was dropped without a word
    ("3 2 0 0 7\n2\n1 3\n2\n", 1, "expected 'n m [fmt [ncon]]'"),
])
def test_metis_malformed(tmp_path, text, line, what):
    path = write(tmp_path, "m.graph", text.encode())
    with pytest.raises(GraphFormatError, match=re.escape(f"m.graph:{line}: ") + ".*"
                       + re.escape(what)):
        graph_formats.read(path)


def test_metis_valid_files_still_read(tmp_path):
    g = graph_formats.read(write(tmp_path, "w.graph", b"% c\n3 2 1\n2 5\n1 5 3 9007199254740993"
                                                      b"\n2 9007199254740993\n"))
    assert edges(g) == [(0, 1, 5), (1, 0, 5), (1, 2, 9007199254740993),
                        (2, 1, 9007199254740993)]  # an int64 weight past 2**53, exact
    g = graph_formats.read(write(tmp_path, "f.graph", b"2 1 1\r\n2 0.5\r\n1 0.5\r\n"))
    assert edges(g) == [(0, 1, 0.5), (1, 0, 0.5)]


@pytest.mark.parametrize(("text", "line", "what"), [
    ("0 1\n# c\n1 x\n", 3, "not a non-negative integer"),  # had no line
    ("0 1e3\n", 1, "not a non-negative integer"),  # was vertex 1000
    ("0 1_0\n", 1, "not a non-negative integer"),  # was vertex 10
    ("0 1 1e999\n", 1, "not a finite number"),  # was read as weight -2**63
    ("0 1 nan\n", 1, "not a finite number"),
    ("0 1 99999999999999999999\n", 1, "past int64"),
    ("0 1\n\n1 2 3\n", 3, "edge 2 has 3 fields"),
    ("0 1\n1 4294967296\n", 2, "ids must be integers in [0, 2**31)"),
])
def test_snap_malformed(tmp_path, text, line, what):
    path = write(tmp_path, "e.txt", text.encode())
    with pytest.raises(GraphFormatError, match=re.escape(f"e.txt:{line}: ") + ".*"
                       + re.escape(what)):
        graph_formats.read(path)


def test_snap_integer_weights_past_2_53_are_exact(tmp_path):
    g = graph_formats.read(write(tmp_path, "w.txt", b"0 1 9007199254740993\n1 0 -4\n"))
    assert edges(g) == [(0, 1, 9007199254740993), (1, 0, -4)]  # float64 made it ...992


@SETTINGS
@given(adjacency=st.lists(st.lists(st.integers(1, 5), max_size=4), min_size=5, max_size=5))
def test_metis_reads_only_symmetric_adjacency(tmp_path, adjacency):
    entries = [(u + 1, v) for u, row in enumerate(adjacency) for v in row]
    body = "".join(" ".join(map(str, row)) + "\n" for row in adjacency)
    path = write(tmp_path, "h.graph", f"5 {len(entries) // 2}\n{body}".encode())
    symmetric = sorted(entries) == sorted((v, u) for u, v in entries)
    try:
        g = graph_formats.read(path)
    except GraphFormatError as exc:
        assert not symmetric or len(entries) % 2, exc
        assert re.search(r"h\.graph:\d+: ", str(exc))
        return
    assert symmetric
    assert sorted((u + 1, v + 1) for u, v, _ in edges(g)) == sorted(entries)


def test_snap_id_too_large_for_the_host_names_its_line(tmp_path, monkeypatch):
    monkeypatch.setattr(backend, "host_available_bytes", lambda: 2**30)
    path = write(tmp_path, "big.txt", b"# c\n0 1\n0 2147483647\n")
    with pytest.raises(GraphFormatError, match=re.escape("big.txt:3: names vertex id "
                                                         "2147483647")):
        graph_formats.read(path)  # the message named CSRGraph.from_edges, not the file


@pytest.mark.parametrize("suffix, text", [
    ("mtx", b"%%MatrixMarket matrix coordinate integer general\n3 3 2\n1 2 5\n2 3 7\n"),
    ("gr", b"p sp 3 2\na 1 2 5\na 2 3 7\n"),
    ("graph", b"3 2 1\n2 5\n1 5 3 7\n2 7\n"),
])
def test_a_utf8_byte_order_mark_is_read_past(tmp_path, suffix, text):
    # Windows editors save text with a BOM; it hid the header (or first number) before.
    read = graph_formats.read if suffix == "graph" else graph_io.read_graph
    plain = read(write(tmp_path, "plain." + suffix, text))
    marked = read(write(tmp_path, "bom." + suffix, b"\xef\xbb\xbf" + text))
    assert edges(marked) == edges(plain) and len(edges(plain)) >= 2


@pytest.mark.parametrize(("suffix", "text", "bad_line"), [
    ("graph", b"% c\n3 2 1\n2 5\n1 5 3 7\n2 7\n", 4),
    ("txt", b"# Undirected graph\n0 1 5\n1 2 7\n", 3),
])
@pytest.mark.parametrize("ending", [b"\r\n", b"\r"])
def test_metis_and_snap_read_cr_line_endings(tmp_path, suffix, text, bad_line, ending):
    """Lines ending in CR alone (classic Mac) were one line: a SNAP file starting with a
    '#' comment was all comment, an empty graph; a METIS file's leading '%' comment hid the
    header. DIMACS, PACE and the points-to readers end lines at LF, CRLF or CR alike."""
    plain = graph_formats.read(write(tmp_path, "lf." + suffix, text))
    other = graph_formats.read(write(tmp_path, "cr." + suffix, text.replace(b"\n", ending)))
    assert edges(other) == edges(plain) and len(edges(plain)) == 4
    bad = text.replace(b"1 2 7", b"1 2 x").replace(b"3 7", b"3 x").replace(b"\n", ending)
    with pytest.raises(GraphFormatError, match=re.escape(f"bad.{suffix}:{bad_line}: ")):
        graph_formats.read(write(tmp_path, "bad." + suffix, bad))


@pytest.mark.parametrize("ending", [b"\r\n", b"\r"])
def test_matrix_market_reads_cr_line_endings(tmp_path, ending):
    """With lines ending in CR alone the whole file was its header line: 'no size line
    after the MatrixMarket header'. DIMACS and PACE end lines at LF, CRLF or CR alike."""
    text = b"%%MatrixMarket matrix coordinate real general\n% c\n3 3 2\n1 2 1.5\n2 3 2\n"
    plain = graph_io.read_graph(write(tmp_path, "lf.mtx", text))
    other = graph_io.read_graph(write(tmp_path, "cr.mtx", text.replace(b"\n", ending)))
    assert edges(other) == edges(plain) == [(0, 1, 1.5), (1, 2, 2.0)]
    bad = text.replace(b"2 3 2", b"2 3 x").replace(b"\n", ending)
    with pytest.raises(GraphFormatError, match=re.escape("bad.mtx: line 5: not a number")):
        graph_io.read_graph(write(tmp_path, "bad.mtx", bad))


@pytest.mark.parametrize(("header", "what"), [
    (b"%%MatrixMarket matrix foo real general", "layout 'foo'"),
    (b"%%MatrixMarket vector coordinate real general", "object 'vector'"),
])
def test_matrix_market_unknown_object_or_layout_is_named_on_line_1(tmp_path, header, what):
    """An unknown layout was reported as a bad size line ("line 2: expected the size line
    'rows columns', got '3 3 2'"), an unknown object by scipy, naming no line."""
    path = write(tmp_path, "u.mtx", header + b"\n3 3 2\n1 2 1.5\n2 3 2\n")
    with pytest.raises(GraphFormatError, match=re.escape(f"u.mtx: line 1: {what}")):
        graph_io.read_graph(path)
