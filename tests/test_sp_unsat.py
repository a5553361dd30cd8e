"""UNSAT only with a proof: unit propagation of the input formula (or an empty clause), or
every assignment checked on a formula small enough to enumerate.

When the local search's flips could not cover every assignment, sp.solve answers UNSAT
exactly when unit propagation of the original formula, before any decimation decision, meets
a contradiction; a contradiction met after SP has fixed variables is not a proof and stays
UNKNOWN. When the flips could (2^k assignments of the k variables in clauses, no more than
``local_search_flips``), the formula is enumerated: SAT or UNSAT, never UNKNOWN. Checked
against a reference unit propagation written here in plain Python, and every answer of
enumeration and every UNSAT against a complete solver (python-sat).
"""

from __future__ import annotations

import pytest
from cnf_strategies import formulas
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from morphgpu import cli, sp
from morphgpu.sp.cnf import CNF

pysat_solvers = pytest.importorskip("pysat.solvers")

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


def refuted_by_unit_propagation(clauses: list[list[int]]) -> bool:
    """Reference: an empty clause, or unit propagation to a fixpoint meets a clause whose
    literals are all false (the fixpoint's conflict does not depend on the order)."""
    value: dict[int, bool] = {}
    while True:
        units = []
        for c in clauses:
            lits = set(c)
            if any(abs(x) in value and value[abs(x)] == (x > 0) for x in lits):
                continue  # satisfied
            free = {x for x in lits if abs(x) not in value}
            if not free:
                return True
            if len(free) == 1:
                units.append(next(iter(free)))
        if not units:
            return False
        for x in units:
            if abs(x) in value and value[abs(x)] != (x > 0):
                return True
            value[abs(x)] = x > 0


def complete_solver_says_sat(clauses: list[list[int]]) -> bool:
    with pysat_solvers.Minisat22(bootstrap_with=clauses) as solver:
        return bool(solver.solve())


@pytest.mark.parametrize(
    ("clauses", "n"),
    [
        ([[1], [-1, 2], [-2]], 2),  # the example
        ([[1], [-1]], 1),
        ([[1, 1], [-1, -1]], 1),  # duplicate literals: units after merging
        ([[1, -1], [2], [-2, 3], [-3, -2], [4, 5, 6]], 6),  # a tautology on the side
        ([[1], [-1, 2], [-1, 3], [-2, -3, 4], [-4, 5], [-4, -5]], 5),  # a chain of units
        ([[3, 1, 2], [-1], [-2], [-3]], 3),  # a long clause emptied by units
    ],
)
def test_refuted_by_unit_propagation_alone_is_unsat(device, clauses, n):
    assert refuted_by_unit_propagation(clauses) and not complete_solver_says_sat(clauses)
    r = sp.solve(CNF.from_clauses(clauses, n_vars=n), device=device, seed=0)
    assert r.status == "UNSAT" and r.assignment is None
    assert "unit propagation of the input" in r.reason
    assert r.stats["decimation_rounds"] == 0 and r.stats["variables_fixed"] == 0


# Unsatisfiable, but no clause is a unit: propagation proves nothing, so any contradiction
# the solver meets comes after a decimation decision.
ALL_FOUR = [[1, 2], [1, -2], [-1, 2], [-1, -2]]


def test_a_decimation_contradiction_is_unknown_not_unsat(device):
    assert not complete_solver_says_sat(ALL_FOUR) and not refuted_by_unit_propagation(ALL_FOUR)
    # Surveys "converged" after one sweep (epsilon 2 > any change), never deemed trivial,
    # every variable fixed in the first round: a decision is made, and propagation after it
    # meets a contradiction.
    # 3 flips, fewer than the 4 assignments: searched, not enumerated.
    r = sp.solve(CNF.from_clauses(ALL_FOUR, n_vars=2), device=device, seed=0, epsilon=2.0,
                 fix_fraction=1.0, trivial_threshold=-1.0, local_search_rounds=50,
                 local_search_flips=3)
    assert "enumerated_assignments" not in r.stats
    assert r.status == "UNKNOWN", (r.status, r.reason)
    assert "contradiction after decimation" in r.reason
    assert r.stats["decimation_rounds"] >= 1


def test_cli_small_unsat_formula_is_proved_by_enumeration(tmp_path, capsys):
    """Was UNKNOWN after a decimation contradiction (and `--random 3 --ratio 100`, 300
    clauses on 3 variables, minutes of local search first): 4 assignments, all checked."""
    path = tmp_path / "four.cnf"
    sp.write_dimacs(CNF.from_clauses(ALL_FOUR, n_vars=2), path)
    assert cli.main(["sat", str(path), "--device", "cpu", "--seed", "0",
                     "--fix-fraction", "1"]) == 20
    out = capsys.readouterr().out
    assert "s UNSATISFIABLE" in out.splitlines()
    assert "each of the 4 assignments of its 2 variables falsifies a clause" in out
    assert cli.main(["sat", "--random", "3", "--ratio", "100", "--seed", "1",
                     "--device", "cpu"]) == 20


def test_cli_unit_refutation_exits_20(tmp_path, capsys):
    path = tmp_path / "chain.cnf"
    path.write_text("c (x)(-x y)(-y)\np cnf 2 3\n1 0\n-1 2 0\n-2 0\n")
    assert cli.main(["sat", str(path), "--device", "cpu"]) == 20
    out = capsys.readouterr().out.splitlines()
    assert "s UNSATISFIABLE" in out and not any(ln.startswith("v ") for ln in out)


# Few variables, short clauses, many of them: unsatisfiable formulas that unit propagation
# cannot refute are common, and so are contradictions after decimation.
small_formulas = formulas(1, 6, min_width=0, max_width=3, max_clauses=40).map(
    lambda f: (f[0], [c for c in f[1] if c] if len(f[1]) % 5 else f[1]))  # empty ones, at times

# Random 2- and 3-SAT from a seed, 1 to 8 clauses a variable: past the threshold most are
# unsatisfiable without a unit clause in sight.
dense_formulas = st.tuples(st.integers(2, 7), st.sampled_from([2, 3]), st.integers(1, 8),
                           st.integers(0, 2**16)).map(
    lambda t: (t[0], sp.random_ksat(t[0], min(t[1], t[0]), n_clauses=t[0] * t[2],
                                    seed=t[3]).clauses()))


@SETTINGS
@given(st.one_of(small_formulas, dense_formulas), st.integers(0, 1000),
       st.sampled_from([0.01, 0.5, 1.0]),
       st.sampled_from([0.01, -1.0]), st.sampled_from([1e-3, 2.0]))
def test_unsat_verdict_is_exactly_the_unit_refutation(device, case, seed, fix_fraction,
                                                      trivial_threshold, epsilon):
    """UNSAT iff the reference refutes by unit propagation (or an empty clause), whatever
    decimation does afterwards (fix_fraction 1, trivial_threshold -1 and epsilon 2: every
    variable decided in the first round, so contradictions after decimation are common);
    every UNSAT
    agrees with python-sat; a SAT answer satisfies every clause."""
    n, clauses = case
    # No tail flips: never enumerated, so the verdict is SP's and unit propagation's.
    r = sp.solve(CNF.from_clauses(clauses, n_vars=n), device=device, seed=seed,
                 epsilon=epsilon, fix_fraction=fix_fraction,
                 trivial_threshold=trivial_threshold, local_search_rounds=30,
                 local_search_flips=0)
    assert "enumerated_assignments" not in r.stats
    refuted = refuted_by_unit_propagation(clauses)
    assert (r.status == "UNSAT") == refuted, (r.status, r.reason)
    if r.status == "UNSAT":
        assert not complete_solver_says_sat(clauses)
    elif r.status == "SAT":
        assert all(any((x > 0) == bool(r.assignment[abs(x) - 1]) for x in c) for c in clauses)
    if "contradiction after decimation" in r.reason:
        assert r.status == "UNKNOWN"


@SETTINGS
@given(st.one_of(small_formulas, dense_formulas), st.integers(0, 1000),
       st.integers(0, 300))
def test_enumeration_answers_exactly_where_the_flips_cover_every_assignment(device, case,
                                                                           seed, flips):
    """With 2^k assignments of the k variables in clauses no more than ``flips``, the
    answer is python-sat's (SAT with a model satisfying every clause, else UNSAT), never
    UNKNOWN; with more, the formula is not enumerated."""
    n, clauses = case
    assume_no_empty = all(clauses)
    r = sp.solve(CNF.from_clauses(clauses, n_vars=n), device=device, seed=seed,
                 local_search_rounds=30, local_search_flips=flips)
    k = len({abs(x) for c in clauses for x in c})
    if not assume_no_empty or refuted_by_unit_propagation(clauses):
        assert r.status == "UNSAT"  # proved before any enumeration
        return
    if 2**k <= flips:
        assert r.stats["enumerated_assignments"] == 2**k
        assert r.status == ("SAT" if complete_solver_says_sat(clauses) else "UNSAT"), r.reason
    else:
        assert "enumerated_assignments" not in r.stats
        if r.status == "UNSAT":
            assert not complete_solver_says_sat(clauses)
    if r.status == "SAT":
        assert all(any((x > 0) == bool(r.assignment[abs(x) - 1]) for x in c) for c in clauses)
