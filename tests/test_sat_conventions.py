"""SAT users' conventions: competition output and exit codes, seeds, a PySAT-like Solver."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pysat.formula import CNF as PySATCNF

from morphgpu import sp

REPO = Path(__file__).resolve().parents[1]


def _run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "morphgpu", "sat", *args, "--device", "cpu"],
                          capture_output=True, text=True, cwd=REPO, timeout=timeout)


def _model(stdout: str) -> list[int]:
    lits = [int(x) for line in stdout.splitlines() if line.startswith("v ")
            for x in line.split()[1:]]
    assert lits and lits[-1] == 0
    return lits[:-1]


def _satisfied(clauses: list[list[int]], model: list[int]) -> bool:
    true = {lit for lit in model}
    return all(any(lit in true for lit in c) for c in clauses)


def test_sat_prints_s_and_v_lines_and_exits_10(tmp_path):
    f = sp.random_ksat(150, 3, ratio=3.0, seed=2)
    path = tmp_path / "f.cnf"
    sp.write_dimacs(f, path)
    proc = _run(str(path), "--seed", "5")
    assert proc.returncode == 10, proc.stderr
    lines = proc.stdout.splitlines()
    assert [ln for ln in lines if ln.startswith("s ")] == ["s SATISFIABLE"]
    assert all(ln[:2] in ("c ", "s ", "v ") for ln in lines)
    assert "c seed 5" in lines
    model = _model(proc.stdout)
    assert sorted(abs(x) for x in model) == list(range(1, 151))
    assert _satisfied(f.clauses(), model)


@pytest.mark.parametrize(
    ("text", "why"),
    [("p cnf 2 3\n1 0\n-1 2 0\n-2 0\n", "contradiction"),
     ("p cnf 2 2\n1 2 0\n0\n", "empty clause")],
)
def test_unsat_by_propagation_exits_20(tmp_path, text, why):
    path = tmp_path / "u.cnf"
    path.write_text(text)
    proc = _run(str(path))
    assert proc.returncode == 20, proc.stderr
    assert "s UNSATISFIABLE" in proc.stdout.splitlines()
    assert why in proc.stdout
    assert not any(ln.startswith("v ") for ln in proc.stdout.splitlines())


def test_unknown_exits_0(tmp_path):
    # 4-SAT far past the threshold with a tiny budget: SP cannot decide it.
    path = tmp_path / "hard.cnf"
    sp.write_dimacs(sp.random_ksat(150, 4, ratio=14.0, seed=3), path)
    proc = _run(str(path), "--seed", "1", "--max-iterations", "5")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "s UNKNOWN" in proc.stdout.splitlines()


def test_seed_is_drawn_printed_and_reproduces_the_run(tmp_path):
    proc = _run("--random", "300", "--ratio", "3.5")
    assert proc.returncode == 10, proc.stderr
    seed = [ln for ln in proc.stdout.splitlines() if ln.startswith("c seed ")]
    assert len(seed) == 1
    again = _run("--random", "300", "--ratio", "3.5", "--seed", seed[0].split()[2])
    assert _model(again.stdout) == _model(proc.stdout)


def test_json_keeps_stdout_parseable_and_the_exit_code(tmp_path):
    import json  # noqa: PLC0415

    proc = _run("--random", "200", "--ratio", "3", "--seed", "4", "--json")
    out = json.loads(proc.stdout)
    assert proc.returncode == 10 and out["status"] == "SAT" and out["seed"] == 4


def test_solve_records_the_seed_it_drew():
    f = sp.random_ksat(200, 3, ratio=3.5, seed=1)
    r = sp.solve(f, device="cpu")
    assert isinstance(r.stats["seed"], int)
    again = sp.solve(f, device="cpu", seed=r.stats["seed"])
    assert np.array_equal(again.assignment, r.assignment)


# --------------------------------------------------------------------------- Solver
def test_solver_like_pysat():
    with sp.Solver(bootstrap_with=[[1, 2], [-1, 2]], device="cpu", seed=1) as s:
        s.add_clause([-2, 3])
        assert s.nof_vars() == 3 and s.nof_clauses() == 3
        assert s.solve() is True
        model = s.get_model()
        assert [abs(x) for x in model] == [1, 2, 3]
        assert _satisfied([[1, 2], [-1, 2], [-2, 3]], model)
        assert s.get_status() is True
        assert s.solve(assumptions=[-3]) is False  # -3 with -2 v 3 and 2 forced
        assert s.get_model() is None


def test_solver_takes_a_pysat_cnf_and_agrees_with_pysat():
    from pysat.solvers import Minisat22  # noqa: PLC0415

    f = sp.random_ksat(120, 3, ratio=3.2, seed=9)
    formula = PySATCNF(from_clauses=f.clauses())
    s = sp.Solver(device="cpu", seed=3)
    s.append_formula(formula)
    assert s.solve() is True
    with Minisat22(bootstrap_with=formula.clauses) as m:
        assert m.solve(assumptions=s.get_model())  # our model satisfies PySAT's formula
    unsat = PySATCNF(from_clauses=[[1], [-1, 2], [-2]])
    assert sp.Solver(bootstrap_with=unsat, device="cpu").solve() is False


def test_solver_takes_a_morphgpu_cnf_and_declared_variables():
    f = sp.CNF.from_clauses([[1]], n_vars=4)
    s = sp.Solver(bootstrap_with=f, device="cpu", seed=0)
    assert s.nof_vars() == 4 and s.solve() is True and len(s.get_model()) == 4
    with pytest.raises(ValueError, match="literal 0"):
        s.add_clause([1, 0])


def test_solve_takes_lists_and_pysat_formulas():
    clauses = [[1, -2], [2, 3], [-1, -3]]
    for formula in (clauses, PySATCNF(from_clauses=clauses)):
        r = sp.solve(formula, device="cpu", seed=0)
        assert r.status == "SAT" and _satisfied(clauses, [i + 1 if v else -(i + 1)
                                                          for i, v in enumerate(r.assignment)])
    with pytest.raises(ValueError, match="list of clauses"):
        sp.solve(42, device="cpu")
