"""CNF container, random k-SAT generator, DIMACS reading/writing and verification."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from morphgpu import sp
from morphgpu.sp.cnf import (
    CNF,
    CNFFormatError,
    parse_dimacs,
    read_dimacs,
    unsatisfied_clauses,
    write_dimacs,
)


def satisfies(clauses: list[list[int]], assignment) -> bool:
    """Independent checker: every clause has a literal made true by ``assignment``."""
    return all(any((lit > 0) == bool(assignment[abs(lit) - 1]) for lit in c) for c in clauses)


clause_lists = st.integers(1, 8).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(
            st.lists(st.integers(1, n).flatmap(lambda v: st.sampled_from([v, -v])), max_size=5),
            max_size=12,
        ),
    )
)


def test_random_ksat_shape_and_determinism():
    f = sp.random_ksat(500, 3, ratio=4.2, seed=7)
    assert f.n_vars == 500 and f.n_clauses == 2100
    table = f.literals.reshape(-1, 3)
    assert np.all(table != 0) and np.all(np.abs(table) <= 500)
    s = np.sort(np.abs(table), axis=1)
    assert np.all(s[:, 1:] != s[:, :-1]), "a clause repeats a variable"
    assert 0.45 < np.mean(table > 0) < 0.55
    g = sp.random_ksat(500, 3, ratio=4.2, seed=7)
    assert np.array_equal(f.literals, g.literals)
    assert sp.random_ksat(10, 4, n_clauses=3, seed=1).n_clauses == 3


@pytest.mark.parametrize("kwargs", [dict(n_vars=0, k=3, ratio=1.0), dict(n_vars=2, k=3, ratio=1.0),
                                    dict(n_vars=5, k=3), dict(n_vars=5, k=3, ratio=1, n_clauses=2)])
def test_random_ksat_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        sp.random_ksat(**kwargs)


@given(clause_lists)
def test_dimacs_round_trip(case):
    n, clauses = case
    f = CNF.from_clauses(clauses, n_vars=n)
    buf = io.StringIO()
    write_dimacs(f, buf, comment="round trip\nsecond line")
    g = parse_dimacs(buf.getvalue())
    assert g.n_vars == n and g.clauses() == clauses


def test_dimacs_reader_accepts_comments_split_clauses_and_end_marker(tmp_path):
    text = "c a comment\nc another\np cnf 4 3\n1 -2\n 3 0 -1\n4 0\nc mid comment\n2 3 -4 0\n%\n0\n"
    path = tmp_path / "f.cnf"
    path.write_text(text)
    f = read_dimacs(path)
    assert f.clauses() == [[1, -2, 3], [-1, 4], [2, 3, -4]]
    with pytest.raises(CNFFormatError, match="<string>:2: the last clause has no terminating 0"):
        parse_dimacs("p cnf 2 1\n1 -2")  # a file cut short inside its last clause


@pytest.mark.parametrize(
    "text, line",
    [
        ("1 2 0\n", 1),  # clause before header
        ("p cnf 3 1\n1 x 0\n", 2),
        ("p cnf 3 1\n1 4 0\n", 2),  # variable beyond the header
        ("c\np cnf 3\n", 2),
        ("p cnf 3 1\np cnf 3 1\n", 2),
        ("p cnf 3 2\n1 2 0\n", 1),  # clause count mismatch names the header line
        ("p cnf -1 2\n", 1),
    ],
)
def test_dimacs_errors_name_the_line(text, line):
    with pytest.raises(CNFFormatError, match=f"<string>:{line}:"):
        parse_dimacs(text)


def test_dimacs_without_header_is_an_error():
    with pytest.raises(CNFFormatError, match="no 'p cnf' header"):
        parse_dimacs("c only comments\n")


def test_from_arrays_validates():
    with pytest.raises(CNFFormatError):
        CNF.from_arrays([0, 2], [1, 0])
    with pytest.raises(CNFFormatError):
        CNF.from_arrays([0, 3], [1, 2])
    with pytest.raises(CNFFormatError):
        CNF.from_arrays([0, 2], [1, 5], n_vars=3)
    with pytest.raises(CNFFormatError):
        CNF.from_arrays([0, 2, 1], [1, 2])


@given(clause_lists, st.integers(0, 2**31 - 1))
def test_verify_matches_an_independent_checker(case, seed):
    n, clauses = case
    f = CNF.from_clauses(clauses, n_vars=n)
    assignment = np.random.default_rng(seed).random(n) < 0.5
    assert sp.verify(f, assignment) == satisfies(clauses, assignment)
    false_ones = [i for i, c in enumerate(clauses) if not satisfies([c], assignment)]
    assert unsatisfied_clauses(f, assignment).tolist() == false_ones


def test_verify_rejects_a_wrong_length():
    f = CNF.from_clauses([[1, 2]], n_vars=2)
    with pytest.raises(ValueError, match="2 variables"):
        sp.verify(f, np.ones(3, dtype=bool))
