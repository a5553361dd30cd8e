"""DIMACS CNF input that is malformed or unusual: streams, byte order marks, damaged bytes.

Whatever the input, read_dimacs returns the formula the text says or raises CNFFormatError
naming the file (and, for content errors, the line).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import re

import pytest
from file_damage import damaged
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from morphgpu.sp import cnf
from morphgpu.sp.cnf import CNFFormatError

SETTINGS = settings(suppress_health_check=[HealthCheck.function_scoped_fixture],
                    deadline=None, max_examples=200)

TEXT = b"c example\np cnf 3 2\n1 -2 0\n2 3\n-1 0\n"


def test_text_stream_over_bytes_that_are_not_utf8_is_a_cnf_error(tmp_path):
    path = tmp_path / "b.cnf"
    path.write_bytes(b"p cnf 3 1\n1 2 \xff 0\n")
    with open(path, encoding="utf-8") as fh, pytest.raises(CNFFormatError, match="b.cnf: "):
        cnf.read_dimacs(fh)  # was UnicodeDecodeError from the stream's read


@pytest.mark.parametrize("compress", [gzip.compress, lzma.compress, bz2.compress])
def test_a_compressed_binary_stream_reads_like_a_compressed_path(compress):
    # was "clause before the 'p cnf' header": only paths were decompressed
    assert cnf.read_dimacs(io.BytesIO(compress(TEXT))).clauses() == [[1, -2], [2, 3, -1]]


def test_a_truncated_compressed_stream_is_a_cnf_error():
    with pytest.raises(CNFFormatError, match="<stream>: compressed stream"):
        cnf.read_dimacs(io.BytesIO(gzip.compress(TEXT)[:-6]))


@pytest.mark.parametrize("how", ["path", "bytes", "str"])
def test_a_byte_order_mark_is_not_a_clause_before_the_header(tmp_path, how):
    data = b"\xef\xbb\xbf" + TEXT
    if how == "path":
        path = tmp_path / "bom.cnf"
        path.write_bytes(data)
        formula = cnf.read_dimacs(path)
    elif how == "bytes":
        formula = cnf.parse_dimacs(data)
    else:
        formula = cnf.parse_dimacs(data.decode("utf-8"))
    assert formula.n_vars == 3 and formula.clauses() == [[1, -2], [2, 3, -1]]


def test_a_byte_order_mark_elsewhere_is_still_an_error_with_its_line():
    with pytest.raises(CNFFormatError, match=re.escape("<string>:3:")):
        cnf.parse_dimacs(b"p cnf 3 2\n1 -2 0\n\xef\xbb\xbf2 3 0\n")


@pytest.mark.parametrize(("data", "shown"), [
    # Old: the bad token or header was shown with Unicode blanks stripped, so the error
    # named nothing: "'' is not an integer literal", or a header that looked valid,
    # "header counts must be integers, got 'p cnf 3 1'".
    (b"p cnf 3 1\n1 \xc2\xa0 0\n", r"<string>:2: '\xa0' is not an integer literal"),
    (b"p cnf 3 1\n1 \xe2\x80\x83 0\n", r"<string>:2: '\u2003' is not an integer literal"),
    (b"p cnf 3 1\xc2\xa0\n1 0\n", r"<string>:1: header counts must be integers, got "
     r"'p cnf 3 1\xa0'"),
])
def test_an_error_shows_unicode_blanks_in_the_bad_token(data, shown):
    with pytest.raises(CNFFormatError, match=re.escape(shown)):
        cnf.parse_dimacs(data)


def _exact(data: bytes):
    """What the text says, by a plain reading of the format (None: malformed)."""
    lines = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    header, clauses, current = None, [], []
    for raw in lines:
        line = raw.strip()
        if not line or line[:1] == b"c":
            continue
        if line[:1] == b"%":
            break
        if line[:1] == b"p":
            parts = line.split()
            if header is not None or len(parts) != 4 or parts[:2] != [b"p", b"cnf"]:
                return None
            if not all(re.fullmatch(rb"[-+]?[0-9]+", t) for t in parts[2:]):
                return None
            header = (int(parts[2]), int(parts[3]))
            if min(header) < 0:
                return None
            continue
        if header is None:
            return None
        for token in line.split():
            if not re.fullmatch(rb"[-+]?[0-9]+", token):
                return None
            lit = int(token)
            if lit == 0:
                clauses.append(current)
                current = []
            elif abs(lit) > header[0]:
                return None
            else:
                current.append(lit)
    if header is None or current or len(clauses) != header[1]:
        return None
    return header[0], clauses


@SETTINGS
@given(data=st.data())
def test_damaged_bytes_read_as_the_text_says_or_raise_a_cnf_error(data):
    text = damaged(data, TEXT, b"\x00\t\n\r %cp-+0123x_\x0c\x0b\xef\xbb\xbf\xff", 4)
    expect = _exact(text[3:] if text.startswith(b"\xef\xbb\xbf") else text)
    try:
        formula = cnf.parse_dimacs(text)
    except CNFFormatError as exc:
        assert str(exc).startswith("<string>")
        assert expect is None, (text, exc)
        return
    assert expect is not None, text
    assert (formula.n_vars, formula.clauses()) == expect
