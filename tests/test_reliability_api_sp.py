"""Reliability of the SP wing's public arguments (solve, Solver's clauses, random_ksat).

Bad arguments give a ValueError naming the argument; a formula is never read other than
as given (a float literal was truncated to a variable and solved), and SAT answers are
always verified assignments.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from morphgpu import backend, sp
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


# ----------------------------------------------------------------------------- random_ksat
@pytest.mark.parametrize(("args", "kwargs", "name"), [
    ((10, 3), {"ratio": np.inf}, "ratio"), ((10, 3), {"ratio": -np.inf}, "ratio"),
    ((10, 3), {"ratio": np.nan}, "ratio"), ((10, 3), {"ratio": "10"}, "ratio"),
    ((10, 3), {"ratio": True}, "ratio"), ((10, 3), {"ratio": -1}, "ratio"),
    ((10, 3), {"ratio": 1e308}, "ratio"),
    ((10, 3), {"n_clauses": 2.5}, "n_clauses"), ((10, 3), {"n_clauses": "5"}, "n_clauses"),
    ((10, 3), {"n_clauses": True}, "n_clauses"), ((10, 3), {"n_clauses": -1}, "n_clauses"),
    ((10, 3), {"ratio": 2, "seed": -1}, "seed"), ((10, 3), {"ratio": 2, "seed": 1.5}, "seed"),
    ((10, 3), {"ratio": 2, "seed": "x"}, "seed"), ((10, 3), {"ratio": 2, "seed": True}, "seed"),
    ((10.0, 3), {"ratio": 2}, "n_vars"), ((10, "3"), {"ratio": 2}, "k"),
    ((2**63, 3), {"ratio": 0}, "n_vars"),
])
def test_random_ksat_names_bad_arguments(args, kwargs, name):
    # inf was an OverflowError, nan and "10" unnamed errors, n_clauses=2.5 was cut to 2,
    # "5" and ratio=True were taken, and the seeds went unnamed to NumPy's SeedSequence
    with pytest.raises(ValueError, match=f"random_ksat: .*{name}"):
        sp.random_ksat(*args, **kwargs)


@pytest.mark.parametrize(("args", "kwargs", "name"), [
    ((2**40, 3), {"ratio": 2}, "ratio=2 with n_vars=1099511627776"),
    ((10, 3), {"ratio": 1e12}, r"ratio=1000000000000\.0 with n_vars=10"),
    ((10, 3), {"n_clauses": 10**13}, "n_clauses=10000000000000"),
])
def test_random_ksat_refuses_tables_that_cannot_fit(monkeypatch, args, kwargs, name):
    # each ended in NumPy's MemoryError (48 TiB to 109 TiB) before
    monkeypatch.setattr(backend, "host_available_bytes", lambda: 2**34)
    with pytest.raises(ValueError, match=f"random_ksat: {name}: asks for .* clauses of 3 "
                                         "literals, .* it does not fit"):
        sp.random_ksat(*args, **kwargs)


def test_random_ksat_refuses_an_absurd_table_on_this_host_too():
    with pytest.raises(ValueError, match="n_clauses=10000000000000: asks for"):
        sp.random_ksat(10, 3, n_clauses=10**13)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 60).flatmap(lambda n: st.tuples(
    st.just(n), st.integers(1, min(n, 5)),
    st.one_of(st.floats(0, 6).map(lambda r: {"ratio": r}),
              st.integers(0, 6).map(lambda r: {"ratio": np.int64(r)}),
              st.integers(0, 80).map(lambda m: {"n_clauses": m}),
              st.integers(0, 80).map(lambda m: {"n_clauses": np.int32(m)})),
    st.one_of(st.integers(0, 2**64), st.integers(0, 2**31).map(np.int64)))))
def test_random_ksat_valid_arguments_still_work(case):
    n, k, size, seed = case
    f = sp.random_ksat(n, k, seed=seed, **size)
    m = (int(size["n_clauses"]) if "n_clauses" in size
         else int(round(size["ratio"] * n)))
    assert f.n_vars == n and f.n_clauses == m
    np.testing.assert_array_equal(f.offsets, np.arange(m + 1) * k)
    table = f.literals.reshape(m, k)
    assert np.all(table != 0) and np.all(np.abs(table) <= n)
    s = np.sort(np.abs(table), axis=1)
    assert np.all(s[:, 1:] != s[:, :-1])  # k distinct variables a clause
    again = sp.random_ksat(n, k, seed=seed, **size)
    np.testing.assert_array_equal(f.literals, again.literals)


@pytest.mark.parametrize("n, k", [(20, 20), (20, 14), (5, 4), (3000, 200)])
def test_random_ksat_near_k_equals_n_is_quick_and_distinct(n, k):
    # k uniform draws are all distinct with chance 2e-8 at (20, 20): redrawing whole rows
    # never finished there; such clauses come from random permutations.
    f = sp.random_ksat(n, k, n_clauses=500, seed=3)
    lits = np.asarray(f.clauses())
    variables = np.abs(lits)
    assert lits.shape == (500, k)
    assert ((variables >= 1) & (variables <= n)).all()
    assert all(np.unique(row).size == k for row in variables)
    # every variable and both signs turn up (500 clauses of k draws over n variables)
    assert np.unique(variables).size == n or k * 500 < 5 * n
    assert (lits > 0).any() and (lits < 0).any()
    again = sp.random_ksat(n, k, n_clauses=500, seed=3)
    np.testing.assert_array_equal(np.asarray(again.clauses()), lits)
