"""sp.solve on both sides: every SAT answer checked clause by clause, small formulas
cross-checked against a complete solver (python-sat), and the edge cases of the issue."""

from __future__ import annotations

import pytest
from cnf_strategies import formulas
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from morphgpu import sp
from morphgpu.sp.cnf import CNF

pysat_solvers = pytest.importorskip("pysat.solvers")


def satisfies(clauses: list[list[int]], assignment) -> bool:
    """Independent checker (plain Python, not the package's verify)."""
    return all(any((lit > 0) == bool(assignment[abs(lit) - 1]) for lit in c) for c in clauses)


def complete_solver_says_sat(clauses: list[list[int]]) -> bool:
    with pysat_solvers.Minisat22(bootstrap_with=clauses) as solver:
        return bool(solver.solve())


def check(result: sp.SolveResult, clauses: list[list[int]], n_vars: int) -> None:
    assert result.status in ("SAT", "UNSAT", "UNKNOWN")
    if result.status == "UNSAT":
        assert not complete_solver_says_sat(clauses), "UNSAT claimed for a satisfiable formula"
    if result.status == "SAT":
        assert result.assignment is not None and result.assignment.shape == (n_vars,)
        assert satisfies(clauses, result.assignment), "SAT with a wrong assignment"
    else:
        assert result.reason, "UNKNOWN must say why"


@pytest.mark.parametrize("ratio", [3.0, 4.0, 4.3])
def test_random_3sat_against_a_complete_solver(device, ratio):
    n = 80
    satisfiable = solved = 0
    for seed in range(8):
        f = sp.random_ksat(n, 3, ratio=ratio, seed=seed)
        clauses = f.clauses()
        result = sp.solve(f, device=device, seed=seed, local_search_rounds=3000)
        check(result, clauses, n)
        if complete_solver_says_sat(clauses):
            satisfiable += 1
            solved += result.status == "SAT"
        else:
            assert result.status != "SAT"
    assert satisfiable == 0 or solved >= 0.75 * satisfiable, (solved, satisfiable)


def test_unsatisfiable_formulas_are_never_claimed(device):
    claimed = 0
    for seed in range(6):
        f = sp.random_ksat(25, 3, ratio=7.0, seed=100 + seed)
        clauses = f.clauses()
        assert not complete_solver_says_sat(clauses)
        result = sp.solve(f, device=device, seed=seed, local_search_rounds=300)
        claimed += result.status == "SAT"
        assert result.reason
    assert claimed == 0


def test_sp_decimates_on_a_hard_instance(device):
    """At n=1500, ratio 4.0 the surveys are not trivial: SP must fix variables itself."""
    f = sp.random_ksat(1500, 3, ratio=4.0, seed=3)
    result = sp.solve(f, device=device, seed=1, fix_fraction=0.04)
    check(result, f.clauses(), f.n_vars)
    assert result.status == "SAT"
    assert result.stats["decimation_rounds"] >= 1
    assert result.stats["variables_fixed"] >= 1
    assert result.stats["sp_converged"] is True
    assert result.stats["sp_iterations"] >= result.stats["decimation_rounds"]


def test_default_fix_fraction_follows_the_mean_clause_width():
    from morphgpu.sp import rules

    assert rules.default_fix_fraction(3.0) == 0.01
    assert rules.default_fix_fraction(3.5) == 0.01
    assert rules.default_fix_fraction(3.51) == 0.02
    assert rules.default_fix_fraction(6.0) == 0.02
    assert rules.default_fix_fraction(2.0) == 0.01


@pytest.mark.parametrize("k, want", [(3, 0.01), (4, 0.02)])
def test_solve_uses_and_records_the_default_fix_fraction(device, k, want):
    """The default share is recorded and used: these formulas need decimation (the CPU
    path took 20 rounds at the default and 5-9 at 0.05), and a larger explicit share
    takes fewer rounds."""
    f = sp.random_ksat(1200, k, ratio=4.0 if k == 3 else 9.0, seed=5)
    result = sp.solve(f, device=device, seed=2)
    assert result.stats["fix_fraction"] == want
    assert result.status == "SAT"
    check(result, f.clauses(), f.n_vars)
    explicit = sp.solve(f, device=device, seed=2, fix_fraction=0.05)
    assert explicit.stats["fix_fraction"] == 0.05
    assert 0 < explicit.stats["decimation_rounds"] < result.stats["decimation_rounds"]


@pytest.mark.parametrize("k, ratio", [(4, 8.0), (5, 16.0)])
def test_wider_clauses(device, k, ratio):
    f = sp.random_ksat(120, k, ratio=ratio, seed=k)
    result = sp.solve(f, device=device, seed=0)
    check(result, f.clauses(), f.n_vars)
    assert result.status == "SAT"


def test_edge_cases(device):
    # No clauses, and variables that never occur: anything goes.
    r = sp.solve(CNF.from_clauses([], n_vars=5), device=device)
    assert r.status == "SAT" and r.assignment.shape == (5,)
    r = sp.solve(CNF.from_clauses([], n_vars=0), device=device)
    assert r.status == "SAT" and r.assignment.shape == (0,)
    # An empty clause: unsatisfiable, said so.
    r = sp.solve(CNF.from_clauses([[1, 2], []], n_vars=2), device=device)
    assert r.status == "UNSAT" and "empty clause" in r.reason
    # Tautologies only, duplicate literals, unit clauses forcing values.
    clauses = [[1, -1], [2, 2, 2], [-3], [3, 4, -4], [-2, 5, 5, 3], [6, -7, 6]]
    r = sp.solve(CNF.from_clauses(clauses, n_vars=9), device=device, seed=2)
    assert r.status == "SAT" and satisfies(clauses, r.assignment)
    assert r.assignment[1] and not r.assignment[2] and r.assignment[4]
    assert r.stats["tautologies_dropped"] == 2
    # Contradictory units.
    r = sp.solve(CNF.from_clauses([[1], [-1, 2], [-2]], n_vars=2), device=device)
    assert r.status == "UNSAT" and "contradiction" in r.reason


small_formulas = formulas(1, 10, min_width=1, max_width=4, max_clauses=30)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(small_formulas, st.integers(0, 1000))
def test_any_small_formula(device, case, seed):
    n, clauses = case
    f = CNF.from_clauses(clauses, n_vars=n)
    result = sp.solve(f, device=device, seed=seed, local_search_rounds=200)
    check(result, clauses, n)  # SAT verified clause by clause, UNSAT by a complete solver


def test_stats_and_phases(device):
    f = sp.random_ksat(200, 3, ratio=3.5, seed=4)
    r = sp.solve(f, device=device, seed=0)
    assert r.status == "SAT"
    for key in ("sp_iterations", "decimation_rounds", "variables_fixed", "seconds",
                "total_seconds", "local_search", "free_after_sp"):
        assert key in r.stats
    assert {"build", "surveys", "local_search", "verify"} <= set(r.stats["seconds"])


@pytest.mark.parametrize(
    "kwargs",
    [dict(epsilon=0), dict(fix_fraction=0), dict(fix_fraction=1.5), dict(max_iterations=0),
     dict(damping=1.0), dict(device="tpu"), dict(local_search_rounds=-1),
     dict(local_search_flips=-1)],
)
def test_bad_arguments(kwargs):
    f = sp.random_ksat(10, 3, ratio=2.0, seed=0)
    with pytest.raises(ValueError):
        sp.solve(f, **kwargs)


def test_solve_rejects_a_non_cnf():
    # lists of clauses and PySAT formulas are accepted (tests/test_sat_conventions.py)
    with pytest.raises(ValueError, match="CNF"):
        sp.solve(42)
    with pytest.raises(ValueError, match="not a file name"):
        sp.solve("formula.cnf")


def test_local_search_budget_shrinks_when_sp_fails(device):
    """SP stopped by max_iterations=1: the default local-search budget is cut (the search
    is a long shot there) but an explicit one is kept; the answer stays verified."""
    from morphgpu.sp import api  # noqa: PLC0415

    f = sp.random_ksat(300, 3, ratio=4.0, seed=5)
    r = sp.solve(f, device=device, seed=0, max_iterations=1)
    assert "did not converge" in (r.reason or r.stats.get("note", ""))
    rounds = api.DEFAULT_ROUNDS[device] // api.SP_FAILED_SHARE
    assert r.stats["local_search_budget"]["rounds"] == rounds
    check(r, f.clauses(), f.n_vars)
    r = sp.solve(f, device=device, seed=0, max_iterations=1, local_search_rounds=777)
    assert r.stats["local_search_budget"]["rounds"] == 777
    check(r, f.clauses(), f.n_vars)
