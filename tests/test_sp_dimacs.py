"""DIMACS CNF reading in every layout the issue lists, on each of the reader's paths.

Formulas are written by hand-rolled layouts (comments between and inside clauses, clauses
spanning lines, several clauses a line, tabs, CRLF, SATLIB's ``%``/``0`` tail, gzip/xz/bzip2)
and must read back exactly; damaged files must raise CNFFormatError naming the file and the
line where the damage is, whichever path (NumPy in one piece or in threaded pieces, the line
scanner) met it.
"""

from __future__ import annotations

import bz2
import gzip
import lzma

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from morphgpu.sp import cnf as cnf_mod
from morphgpu.sp.cnf import CNF, CNFFormatError, read_dimacs

SETTINGS = settings(suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow], deadline=None)
PACK = {"": lambda b: b, ".gz": gzip.compress, ".xz": lzma.compress, ".bz2": bz2.compress}
PATHS = ["numpy", "pieces", "scan"]


@pytest.fixture(params=PATHS)
def reader_path(request, monkeypatch):
    """Which bulk path reads: NumPy in one piece, NumPy in many small threaded pieces, or
    none (the line scanner alone)."""
    if request.param == "pieces":
        monkeypatch.setattr(cnf_mod, "PIECE_BYTES", 16)
    elif request.param == "numpy":
        monkeypatch.setattr(cnf_mod, "PIECE_BYTES", 1 << 62)
    else:
        monkeypatch.setattr(cnf_mod, "_bulk_body", lambda *a, **k: None)
    return request.param


@st.composite
def formulas(draw):
    n = draw(st.integers(1, 9))
    lit = st.integers(1, n).flatmap(lambda v: st.sampled_from([v, -v]))
    clauses = draw(st.lists(st.lists(lit, max_size=6), max_size=14))
    return n, clauses


@st.composite
def layouts(draw, n, clauses):
    """(text, line of each token): the formula in a drawn layout. Tokens are each clause's
    literals and its 0; the separator after each is drawn (space(s), a tab, a newline, a
    comment line between two newlines)."""
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    head = draw(st.sampled_from(["", "c generated\n", "c one\nc two\n\n"]))
    text = head + f"p cnf {n} {len(clauses)}\n"
    line = text.count("\n") + 1
    token_lines = []
    seps = st.sampled_from([" ", " ", "  ", "\t", "\n", "\n", "\nc between\n", "\n\n"])
    for c in clauses:
        for tok in [*c, 0]:
            if draw(st.booleans()) and draw(st.booleans()):
                text += draw(st.sampled_from([" ", "\t"]))  # leading blanks
            text += str(tok)
            token_lines.append(line)
            sep = draw(seps) if tok else draw(st.sampled_from([" ", "\n", "\n", "\nc x\n"]))
            text += sep
            line += sep.count("\n")
    tail = draw(st.sampled_from(["", "\n", "%\n0\n", "c trailing comment\n", "%\n0\n\n"]))
    if tail[:1] in ("%", "c") and not text.endswith("\n"):
        text += "\n"  # both start a line
    text += tail
    return text.replace("\n", eol), token_lines


def _write(tmp_path, text: str, suffix: str):
    path = tmp_path / f"f.cnf{suffix}"
    path.write_bytes(PACK[suffix](text.encode()))
    return path


@SETTINGS
@given(data=st.data())
def test_layouts_round_trip_exactly(tmp_path, reader_path, data):
    n, clauses = data.draw(formulas())
    text, _ = data.draw(layouts(n, clauses))
    path = _write(tmp_path, text, data.draw(st.sampled_from(list(PACK))))
    f = read_dimacs(path)
    assert f.n_vars == n and f.clauses() == clauses
    # and what write_dimacs makes of it reads back the same
    out = tmp_path / f"again.cnf{data.draw(st.sampled_from(list(PACK)))}"
    cnf_mod.write_dimacs(f, out, comment="again")
    g = read_dimacs(out)
    assert g.n_vars == n and g.clauses() == clauses


def _raises_at(path, line: int | None, what: str) -> None:
    with pytest.raises(CNFFormatError) as info:
        read_dimacs(path)
    where = f"{path}:{line}: " if line is not None else f"{path}: "
    assert str(info.value).startswith(where), (str(info.value), where)
    assert what in str(info.value), str(info.value)


@SETTINGS
@given(data=st.data())
def test_damaged_layouts_name_file_and_line(tmp_path, reader_path, data):
    n, clauses = data.draw(formulas())
    if not clauses or not clauses[-1]:  # the last clause has a literal to cut after
        clauses = [*clauses, [n]]
    text, token_lines = data.draw(layouts(n, clauses))
    tokens = [t for c in clauses for t in [*c, 0]]
    literal_at = [i for i, t in enumerate(tokens) if t != 0]
    kind = data.draw(st.sampled_from(["junk", "too large", "count", "no header", "truncate"]))
    head, _, body = text.partition(f"p cnf {n} {len(clauses)}")
    eol = "\r\n" if "\r\n" in text else "\n"
    header_line = head.count(eol) + 1
    if kind in ("junk", "too large"):
        i = data.draw(st.sampled_from(literal_at))
        bad = data.draw(st.sampled_from(["x", "1.5", "--1", "1-2", "2e3", "0x1", "-"])) \
            if kind == "junk" else str(data.draw(st.sampled_from([n + 1, -(n + 1), 10**30])))
        body = _replace_token(body, i, bad)
        line = token_lines[i]
        what = "not an integer literal" if kind == "junk" else "names a variable"
    elif kind == "count":
        extra = data.draw(st.sampled_from([1, -1])) if clauses else 1
        head += f"p cnf {n} {len(clauses) + extra}"
        path = _write(tmp_path, head + body, data.draw(st.sampled_from(list(PACK))))
        _raises_at(path, header_line, "header promises")
        return
    elif kind == "no header":
        path = _write(tmp_path, head + body, data.draw(st.sampled_from(list(PACK))))
        _raises_at(path, token_lines[0], "before the 'p cnf' header")
        return
    else:  # the file ends inside the last clause: drop its 0 and all after it
        cut = _token_start(body, len(tokens) - 1)
        body = body[:cut].rstrip(" \t")
        line, what = token_lines[literal_at[-1]], "no terminating 0"
        if not body.endswith(eol) and data.draw(st.booleans()):
            body += eol
    path = _write(tmp_path, head + f"p cnf {n} {len(clauses)}" + body,
                  data.draw(st.sampled_from(list(PACK))))
    _raises_at(path, line, what)


def _token_start(body: str, i: int) -> int:
    """Where the i-th clause token of ``body`` (the text after the header) starts."""
    import re  # noqa: PLC0415

    count = -1
    for line_match in re.finditer(r"[^\r\n]*", body):
        line = line_match.group()
        if line.lstrip().startswith("c") or line.lstrip().startswith("%"):
            if line.lstrip().startswith("%"):
                break
            continue
        for tok in re.finditer(r"\S+", line):
            count += 1
            if count == i:
                return line_match.start() + tok.start()
    raise AssertionError(f"token {i} not found")


def _replace_token(body: str, i: int, new: str) -> str:
    start = _token_start(body, i)
    end = start
    while end < len(body) and not body[end].isspace():
        end += 1
    return body[:start] + new + body[end:]


# ------------------------------------------------------------- the listed cases, by hand
SATLIB_UF = ("c This Formular is generated by mcnf\nc\nc    horn? no\n"
             "p cnf 3 2\n 1 -3 2 0\n-1 2 3 0\n%\n0\n\n")


def test_satlib_uf_tail(tmp_path, reader_path):
    path = _write(tmp_path, SATLIB_UF, "")
    assert read_dimacs(path).clauses() == [[1, -3, 2], [-1, 2, 3]]


@pytest.mark.parametrize("suffix", list(PACK))
def test_compressed_files(tmp_path, reader_path, suffix):
    text = "c x\np cnf 4 3\n1 -2\n 3 0 -1\nc mid\n4 0 2 3 -4 0\n"
    path = _write(tmp_path, text, suffix)
    assert read_dimacs(path).clauses() == [[1, -2, 3], [-1, 4], [2, 3, -4]]


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ("p cnf 3 3\n1 2 0\n-3 0\n", 1, "header promises 3 clauses but 2"),
        ("p cnf 3 1\n1 2 0\n-3 0\n", 1, "header promises 1 clauses but 2"),
        ("p cnf 3 2\n1 2 0\nc\n-4 1 0\n", 4, "names a variable"),
        ("p cnf 3 2\n1 2 0\n3 4 0\n", 3, "names a variable"),
        ("p cnf 3 2\n1 2 0\n3 two 0\n", 3, "not an integer"),
        ("p cnf 3 2\n1 2 0\n3 1.0 0\n", 3, "not an integer"),
        ("p cnf 3 1\n1 - 2 0\n", 2, "not an integer"),
        ("p cnf 3 1\n1 -\n2 0\n", 2, "not an integer"),
        ("p cnf 3 1\n1 2 0 -", 2, "not an integer"),
        ("p cnf 3 1\n1 2 -", 2, "not an integer"),
        ("c no header\n1 2 0\n", 2, "before the 'p cnf' header"),
        ("p cnf 3 2\n1 2 0\n3 -1", 3, "no terminating 0"),
        ("p cnf 3 2\n1 2 0\n3\n-1\n\nc\n", 4, "no terminating 0"),
        ("p cnf 3 2\n1 2 0\n3 -1\n%\n0\n", 3, "no terminating 0"),
        ("p cnf 3 x\n1 2 0\n", 1, "must be integers"),
    ],
)
@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_bad_input_names_file_and_line(tmp_path, reader_path, text, line, what, suffix):
    _raises_at(_write(tmp_path, text, suffix), line, what)


def test_missing_header_names_the_file(tmp_path, reader_path):
    _raises_at(_write(tmp_path, "c only a comment\n\n", ""), None, "no 'p cnf' header")


def test_threaded_pieces_agree_with_one_piece_on_a_large_file(tmp_path, monkeypatch):
    """A multi-megabyte body in threaded pieces (clauses of two widths) against the same
    body in one piece and against the formula written."""
    f = cnf_mod.random_ksat(60_000, 3, ratio=4.2, seed=3)
    mixed = CNF.from_clauses(f.clauses()[:100_000] + [[1, -2, 3, 4, -5]] * 7
                             + f.clauses()[100_000:], n_vars=f.n_vars)
    for formula in (f, mixed):
        path = tmp_path / "big.cnf"
        cnf_mod.write_dimacs(formula, path)
        monkeypatch.setattr(cnf_mod, "PIECE_BYTES", 1 << 18)
        assert path.stat().st_size > 8 * cnf_mod.PIECE_BYTES
        got = read_dimacs(path)
        monkeypatch.setattr(cnf_mod, "PIECE_BYTES", 1 << 62)
        want = read_dimacs(path)
        monkeypatch.undo()
        assert (got.offsets.tolist(), got.literals.tolist()) == \
            (want.offsets.tolist(), want.literals.tolist()) == \
            (formula.offsets.tolist(), formula.literals.tolist())
