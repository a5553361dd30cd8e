"""``morphgpu sat`` and the sp demo."""

from __future__ import annotations

import json

from morphgpu import cli, sp
from morphgpu.sp import cli as sp_cli


def test_sat_random_json(capsys, device):
    rc = cli.main(["sat", "--random", "300", "--ratio", "3.5", "--seed", "1",
                   "--device", device, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 10 and out["status"] == "SAT" and out["n_vars"] == 300 and out["seed"] == 1


def test_sat_file_writes_a_verified_assignment(tmp_path, capsys):
    f = sp.random_ksat(200, 3, ratio=3.0, seed=5)
    path = tmp_path / "f.cnf"
    sp.write_dimacs(f, path)
    out_path = tmp_path / "model.txt"
    rc = cli.main(["sat", str(path), "--device", "cpu", "--output", str(out_path)])
    assert rc == 10 and "s SATISFIABLE" in capsys.readouterr().out
    lits = [int(x) for line in out_path.read_text().splitlines() for x in line.split()[1:]]
    assert lits[-1] == 0
    assignment = [lit > 0 for lit in lits[:-1]]
    assert [abs(x) for x in lits[:-1]] == list(range(1, 201))
    clauses = f.clauses()
    assert all(any((x > 0) == assignment[abs(x) - 1] for x in c) for c in clauses)


def test_sat_malformed_file_names_the_line(tmp_path, capsys):
    path = tmp_path / "bad.cnf"
    path.write_text("p cnf 2 1\n1 two 0\n")
    assert cli.main(["sat", str(path), "--device", "cpu"]) == 1
    assert f"{path}:2:" in capsys.readouterr().err


def test_sat_needs_exactly_one_input(capsys):
    assert cli.main(["sat", "--device", "cpu"]) == 1
    assert "FILE.cnf or --random" in capsys.readouterr().err


def test_unsat_input_exits_20(tmp_path, capsys):
    path = tmp_path / "unsat.cnf"
    path.write_text("p cnf 1 2\n1 0\n-1 0\n")
    assert cli.main(["sat", str(path), "--device", "cpu"]) == 20
    out = capsys.readouterr().out
    assert "contradiction" in out and "s UNSATISFIABLE" in out


def test_demo_cpu_is_valid():
    result = sp_cli.demo("cpu")
    assert result["valid"] is True and result["algorithm"] == "sp"
