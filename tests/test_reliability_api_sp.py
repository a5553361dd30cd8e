"""Reliability of the SP wing's public arguments (solve, Solver's clauses).

Bad arguments give a ValueError naming the argument; a formula is never read other than
as given (a float literal was truncated to a variable and solved), and SAT answers are
always verified assignments.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from morphgpu import sp
from morphgpu.sp.solver import Solver

FORMULA = sp.random_ksat(30, 3, ratio=3.0, seed=1)


@pytest.mark.parametrize("device", ["cpu", "auto"])
@pytest.mark.parametrize("clauses", [
    [[1.5]], [[1.0, 2]], [[True]], [[np.bool_(True), 2]], [["a"]], [["1"]], [[1, None]],
    [5], [[1, 2], 3],
])
def test_literals_must_be_nonzero_integers(device, clauses):
    # [[1.5]] was solved as [[1]] and [[True]] as [[1]] (SAT); [["a"]] said only
    # "invalid literal for int()".
    with pytest.raises(ValueError, match="cnf: (literal|clause)"):
        sp.solve(clauses, device=device, seed=1)


def test_solver_add_clause_checks_literals_too():
    s = Solver(seed=1)
    with pytest.raises(ValueError, match="literal 2.5"):
        s.add_clause([1, 2.5])
    assert s.clauses == []  # nothing half-added
    s.add_clause([np.int64(1), np.int32(-2)])
    assert s.clauses == [[1, -2]]


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"epsilon": np.inf}, "epsilon"), ({"epsilon": np.nan}, "epsilon"),
    ({"epsilon": 0}, "epsilon"),
    ({"trivial_threshold": np.nan}, "trivial_threshold"),
    ({"trivial_threshold": "0.1"}, "trivial_threshold"),
    ({"progress": 5}, "progress"), ({"progress": "log"}, "progress"),
    ({"seed": -1}, "seed"), ({"seed": 1.5}, "seed"), ({"seed": True}, "seed"),
    ({"seed": "x"}, "seed"),
    ({"fix_fraction": 0}, "fix_fraction"), ({"fix_fraction": np.nan}, "fix_fraction"),
    ({"max_iterations": 0}, "max_iterations"), ({"max_iterations": 1.5}, "max_iterations"),
    ({"damping": 1}, "damping"), ({"damping": np.nan}, "damping"),
    ({"backtrack": 1}, "backtrack"), ({"backtrack": "x"}, "backtrack"),
    ({"backtrack": None}, "backtrack"),
    ({"local_search_rounds": -1}, "local_search_rounds"),
    ({"local_search_flips": -1}, "local_search_flips"), ({"stall_sweeps": -1}, "stall_sweeps"),
    ({"device": "GPU"}, "device"), ({"device": None}, "device"),
])
def test_bad_options_name_the_argument(kwargs, name):
    # the formula's arrays are left as they were
    literals, offsets = FORMULA.literals.copy(), FORMULA.offsets.copy()
    with pytest.raises(ValueError, match=name):
        sp.solve(FORMULA, **{"device": "cpu", **kwargs})
    np.testing.assert_array_equal(FORMULA.literals, literals)
    np.testing.assert_array_equal(FORMULA.offsets, offsets)


def test_a_callable_progress_is_called():
    said = []
    result = sp.solve(FORMULA, device="cpu", seed=1, progress=said.append)
    assert result.status == sp.SAT and said


@pytest.mark.parametrize("device", ["cpu", "auto"])
@pytest.mark.parametrize(("clauses", "status"), [
    ([], sp.SAT), ([[]], sp.UNSAT), ([[1, -1]], sp.SAT), ([[1], [-1]], sp.UNSAT),
    ([[1, 2], [-1], [-2]], sp.UNSAT),
])
def test_edge_formulas(device, clauses, status):
    assert sp.solve(clauses, device=device, seed=1).status == status


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(-6, 6).filter(bool), min_size=1, max_size=3),
                max_size=12), st.sampled_from(["cpu", "auto"]))
def test_sat_answers_satisfy_the_clauses_as_given(clauses, device):
    kept = [list(c) for c in clauses]
    result = sp.solve(clauses, device=device, seed=3)
    assert clauses == kept  # the caller's lists are not touched
    if result.status == sp.SAT:
        a = result.assignment
        assert all(any(a[abs(x) - 1] == (x > 0) for x in c) for c in clauses)
    elif result.status == sp.UNSAT:
        # small enough to check by brute force
        n = max((abs(x) for c in clauses for x in c), default=0)
        for bits in range(2**n):
            a = [(bits >> i) & 1 == 1 for i in range(n)]
            assert not all(any(a[abs(x) - 1] == (x > 0) for x in c) for c in clauses)
