"""Malformed points-to constraint files (LSG and Galois text, hcd maps, solutions).

Each malformed file must raise ConstraintFormatError naming the file and the 1-based line;
the fast bulk parse must never accept what the exact line-by-line reader refuses.
"""

from __future__ import annotations

import gzip
import re
import warnings

import numpy as np
import pytest
from file_damage import damaged, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from morphgpu.pta import constraints as pc
from morphgpu.pta.constraints import ConstraintFormatError
from morphgpu.pta.solution import read_solution

SETTINGS = settings(suppress_health_check=[HealthCheck.function_scoped_fixture],
                    deadline=None, max_examples=150)


def galois(cs) -> list[tuple[int, int, int, int]]:
    return list(zip(cs.kind.tolist(), cs.src.tolist(), cs.dst.tolist(), cs.offset.tolist(),
                    strict=True))


def test_rows_whose_field_counts_add_up_are_not_realigned(tmp_path):
    # 4 + 6 fields were read as two rows of 5: the second row's first field moved up
    path = write(tmp_path, "g.txt", "4\n2\n0,1,2,0\n1,2,3,1,0,0\n")
    with pytest.raises(ConstraintFormatError, match=re.escape("g.txt:3: expected 5")):
        pc.load_galois(path)


@pytest.mark.parametrize("row", ["0,1,2,0 0", "0\t1\t2\t0\t0", "0,1,2 0,0,0"])
def test_a_field_separated_by_spaces_is_refused_by_both_parses(tmp_path, row):
    path = write(tmp_path, "g.txt", f"4\n1\n{row}\n")
    with pytest.raises(ConstraintFormatError, match=re.escape("g.txt:3:")):
        pc.load_galois(path)


def test_underscored_number_is_refused_by_the_fast_parse(tmp_path):
    # NumPy's string conversion (like int()) read '1_0' as 10
    path = write(tmp_path, "g.txt", "40\n1\n0,1,1_0,0,0\n")
    with pytest.raises(ConstraintFormatError, match=re.escape("g.txt:3:")):
        pc.load_galois(path)


@pytest.mark.parametrize("separator", ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85"])
def test_a_comment_holding_a_line_separator_of_str_splitlines_stays_one_line(
        tmp_path, separator):
    # splitlines ended the comment there: its tail was read as data, later lines shifted
    path = write(tmp_path, "g.txt", f"4\n# a{separator}b\n1\n0,1,9,0,0\n")
    with pytest.raises(ConstraintFormatError, match=re.escape("g.txt:4: variable id")):
        pc.load_galois(path)


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_line_endings(tmp_path, ending):
    text = ending.join(["4", "# c", "2", "0,1,2,0,0", "1,2,3,1,0", ""])
    assert galois(pc.load_galois(write(tmp_path, "g.txt", text))) == [(0, 1, 2, 0), (1, 2, 3, 0)]


@pytest.mark.parametrize("gz", [False, True])
def test_bytes_that_are_not_utf8_name_their_line(tmp_path, gz):
    data = b"4\n1\n# caf\xe9\n0,1,2,0,0\n"
    name = "g.txt.gz" if gz else "g.txt"
    path = write(tmp_path, name, gzip.compress(data) if gz else data)
    with pytest.raises(ConstraintFormatError, match=re.escape(f"{name}:3: not a text file")):
        pc.load_galois(path)


def lsg(tmp_path, nodes: str, constraints: str = "1,0,0,0,0\n0,2,0,0,0\n",
        hcd: str | None = None):
    write(tmp_path, "q_nodes.txt", nodes)
    write(tmp_path, "q_constraints_after_hcd.txt", constraints)
    if hcd is not None:
        write(tmp_path, "q_hcd.txt", hcd)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pc.load_lsg(tmp_path / "q")


def test_object_size_near_int64_max_does_not_wrap_past_the_check(tmp_path):
    # id + size wrapped negative, so an object of 2**63 - 1 fields was accepted
    with pytest.raises(ConstraintFormatError,
                       match=re.escape("q_nodes.txt:4: object's fields run past numVars")):
        lsg(tmp_path, "4\n3\n0\n1,9223372036854775807,0\n")


def test_an_object_listed_twice_is_refused(tmp_path):
    with pytest.raises(ConstraintFormatError,
                       match=re.escape("q_nodes.txt:6: object 1 is listed a second time")):
        lsg(tmp_path, "4\n3\n0\n1,1,0\n# c\n1,2,0\n")


def test_a_variable_merged_into_two_representatives_is_refused(tmp_path):
    with pytest.raises(ConstraintFormatError,
                       match=re.escape("q_hcd.txt:5: variable 1 is merged a second time")):
        lsg(tmp_path, "4\n3\n0\n0,1,0\n", hcd="3\n1,0\n# c\n2,0\n1,2\n")


def test_valid_lsg_set_still_reads(tmp_path):
    cs = lsg(tmp_path, "4\n3\n0\n0,1,0\n1,3,0\n", hcd="1\n3,2\n")
    assert cs.obj_size.tolist() == [1, 3, 0, 0]
    assert cs.rep.tolist() == [0, 1, 2, 2]


@pytest.mark.parametrize("gz", [False, True])
def test_solution_bytes_that_are_not_utf8_name_their_line(tmp_path, gz):
    rows = b"".join(b"[%d] => [1]\n" % i for i in range(3000))
    data = b"3001\n" + rows + b"[3000] => [\xff]\n"
    name = "s.txt.gz" if gz else "s.txt"
    path = write(tmp_path, name, gzip.compress(data) if gz else data)
    with pytest.raises(ConstraintFormatError, match=re.escape(f"{name}:3002: not a text file")):
        read_solution(path)


# ------------------------------------------------------------------ hypothesis: fast == exact
# Mostly plain numbers, so that rows of other widths whose fields add up (4 + 6) come often.
field_text = st.one_of(
    *[st.integers(0, 50).map(str)] * 8,
    st.sampled_from(["", " ", "1 2", "1_0", "+3", "-1", " 7 ", "\t2", "x", "0x1", "1.0",
                     "\u0663", "9223372036854775808"]),
)


@SETTINGS
@given(rows=st.lists(st.lists(field_text, min_size=3, max_size=7), min_size=1, max_size=6))
def test_fast_table_agrees_with_the_exact_line_reader(rows):
    lines = [(k + 3, ",".join(r)) for k, r in enumerate(rows)]
    lines = [(ln, s.strip()) for ln, s in lines if s.strip() and not s.strip().startswith("#")]
    try:
        exact = [pc._ints("f", ln, s, 5) for ln, s in lines]
    except ConstraintFormatError:
        exact = None
    try:
        table = pc._table("f", lines, 5)
    except ConstraintFormatError as exc:
        assert exact is None, exc
        assert re.match(r"f:\d+: ", str(exc))
        return
    assert exact is not None
    assert table.tolist() == [list(r) for r in exact]


def galois_file(rows: list[tuple[int, int, int, int, int]], n: int) -> bytes:
    body = "".join(",".join(map(str, r)) + "\n" for r in rows)
    return f"{n}\n{len(rows)}\n{body}".encode()


@SETTINGS
@given(data=st.data())
def test_byte_damage_to_a_galois_file_parses_or_raises_the_format_error(tmp_path, data):
    rows = [(0, 1, 2, 0, 0), (1, 2, 3, 1, 0), (2, 3, 1, 2, 0), (3, 1, 0, 3, 0),
            (4, 0, 2, 4, 1)]
    raw = damaged(data, galois_file(rows, 4), b"\x00\t\n\r ,#+-_x0123456789\x0c\x85\xff")
    path = write(tmp_path, "d.txt", raw)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cs = pc.load_galois(path)
    except ConstraintFormatError as exc:
        assert "d.txt" in str(exc)
        return
    # read: every row is the file's own line, field by field
    text = bytes(raw).decode().replace("\r\n", "\n").replace("\r", "\n")
    data_lines = [s.strip() for s in text.split("\n") if s.strip() and
                  not s.strip().startswith("#")]
    expect = np.array([[int(f) for f in s.split(",")] for s in data_lines[2:]],
                      dtype=np.int64).reshape(-1, 5)
    assert galois(cs) == [tuple(r) for r in expect[:, [3, 1, 2, 4]].tolist()]


# ------------------------------------------------------------------ a UTF-8 byte order mark
BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize("gz", [False, True])
def test_a_byte_order_mark_is_read_past_in_a_galois_file(tmp_path, gz):
    # Windows editors save text with one; it made the first number unreadable before.
    data = b"4\n2\n0,1,2,0,0\n1,2,3,1,0\n"
    plain = galois(pc.load_galois(write(tmp_path, "p.txt", data)))
    name = "b.txt.gz" if gz else "b.txt"
    marked = BOM + data
    marked = galois(pc.load_galois(write(tmp_path, name, gzip.compress(marked) if gz
                                         else marked)))
    assert marked == plain == [(0, 1, 2, 0), (1, 2, 3, 0)]


@pytest.mark.parametrize("which", ["nodes", "constraints", "hcd"])
def test_a_byte_order_mark_is_read_past_in_each_lsg_file(tmp_path, which):
    texts = {"nodes": "4\n3\n0\n0,1,0\n1,3,0\n", "constraints": "1,0,0,0,0\n0,2,0,0,0\n",
             "hcd": "1\n3,2\n"}
    plain = lsg(tmp_path, texts["nodes"], texts["constraints"], hcd=texts["hcd"])
    texts[which] = "\ufeff" + texts[which]
    marked = lsg(tmp_path, texts["nodes"], texts["constraints"], hcd=texts["hcd"])
    assert marked.obj_size.tolist() == plain.obj_size.tolist() == [1, 3, 0, 0]
    assert marked.rep.tolist() == plain.rep.tolist() == [0, 1, 2, 2]
    assert galois(marked) == galois(plain) and len(galois(plain)) >= 1


@pytest.mark.parametrize("gz", [False, True])
def test_a_byte_order_mark_is_read_past_in_a_solution_file(tmp_path, gz):
    data = b"2\n[0] => [1]\n[1] => []\n"
    plain = read_solution(write(tmp_path, "p_soln.txt", data))
    name = "b_soln.txt.gz" if gz else "b_soln.txt"
    marked = BOM + data
    marked = read_solution(write(tmp_path, name, gzip.compress(marked) if gz else marked))
    assert marked.n_vars == plain.n_vars == 2
    assert marked.fact_object.tolist() == plain.fact_object.tolist() == [1]


@pytest.mark.parametrize("name", [".", "/", "dir.c", "prog"])
def test_a_directory_is_named_as_one(tmp_path, monkeypatch, name):
    """`morphgpu pta .` said "PosixPath('.') has an empty name", `pta dir.c` "no such file"."""
    from morphgpu.pta.c_frontend import CFrontendError  # noqa: PLC0415

    monkeypatch.chdir(tmp_path)
    if name not in (".", "/"):
        (tmp_path / name).mkdir()
    with pytest.raises((ConstraintFormatError, CFrontendError), match="is a directory"):
        pc.load(name)


def test_an_lsg_prefix_beside_a_directory_of_its_name_still_loads(tmp_path):
    """The directory check leaves an LSG prefix that is also a directory's name alone."""
    plain = lsg(tmp_path, "4\n3\n0\n0,1,0\n1,3,0\n", "1,0,0,0,0\n0,2,0,0,0\n")
    prefix = next(p for p in tmp_path.iterdir() if p.name.endswith("_nodes.txt"))
    stem = tmp_path / prefix.name[: -len("_nodes.txt")]
    stem.mkdir()
    assert pc.load(stem).obj_size.tolist() == plain.obj_size.tolist()


def test_header_counts_of_each_kind_must_match_the_body(tmp_path):
    """The header's per-kind counts were only summed: a header of 0 address-of, 0 copy and
    2 loads over an address-of and a copy constraint was read without a word."""
    with pytest.raises(ConstraintFormatError, match=re.escape(
            "q_constraints_after_hcd.txt:2: the header counts 0 address-of, 0 copy, 2 load, "
            "0 store and 0 gep constraints, but the file holds 1, 1, 0, 0 and 0")):
        lsg(tmp_path, "4\n3\n0\n0,1,0\n", "# counts\n0,0,2,0,0\n0,2,0,0,0\n1,3,1,1,0\n")


@pytest.mark.parametrize(("present", "missing"), [
    (["constraints_after_hcd", "hcd"], "q_nodes.txt[.gz]"),
    (["constraints"], "q_nodes.txt[.gz]"),
    (["nodes", "hcd"], "q_constraints_after_hcd.txt[.gz] or q_constraints.txt[.gz]"),
])
def test_a_prefix_missing_a_file_names_the_missing_file(tmp_path, present, missing):
    """A prefix whose other files are there was "neither an LSG prefix nor a constraint
    file" (or "no constraint file found"), not saying which file was missing."""
    texts = {"nodes": "4\n3\n0\n", "hcd": "0\n"}
    for key in present:
        write(tmp_path, f"q_{key}.txt", texts.get(key, "1,0,0,0,0\n0,2,0,0,0\n"))
    with pytest.raises(ConstraintFormatError, match=re.escape(f"q: no {missing} found")):
        pc.load(tmp_path / "q")


@pytest.mark.parametrize("listed", ["[0,,1] => [1]", "[0, 1] => [1,]", "[0, 1] => [, 1]"])
def test_an_empty_id_between_commas_in_a_solution_is_refused(tmp_path, listed):
    """The exact id reader skipped empty fields, so '[0,,1]' read as [0, 1]; the constraint
    readers refuse a field holding no number."""
    path = write(tmp_path, "e_soln.txt", f"2\n# c\n{listed}\n")
    with pytest.raises(ConstraintFormatError, match=re.escape("e_soln.txt:3: ") + ".*empty"):
        read_solution(path)
