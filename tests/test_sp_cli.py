"""``morphgpu sat`` and the sp demo."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

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


def test_comment_lines_are_key_value_text(capsys, device):
    """Every 'c' line is 'c key: text', records as k=v pairs (no Python reprs), and the
    local-search stages one record each."""
    rc = cli.main(["sat", "--random", "400", "--ratio", "4.0", "--seed", "2",
                   "--device", device, "--no-model"])
    lines = capsys.readouterr().out.splitlines()
    assert rc == 10
    comments = [line for line in lines if line.startswith("c ")]
    assert not [line for line in comments if any(ch in line for ch in "{}[]'")]
    stages = [line for line in comments if line.startswith("c local_search_stages: ")]
    assert len(stages) == 1
    assert all(part.startswith("rounds=") and "fewest=" in part
               for part in stages[0].split(": ", 1)[1].split("; "))


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


def _python_values(assignment) -> str:
    """The 'v' lines one Python string per literal (what _dimacs_values replaced)."""
    lits = [str(i + 1) if v else str(-(i + 1)) for i, v in enumerate(assignment)]
    lines = [" ".join(["v", *lits[i : i + 20]]) for i in range(0, len(lits), 20)]
    return "\n".join([*lines, "v 0"]) + "\n"


def test_model_lines_match_a_plain_formatter():
    rng = np.random.default_rng(0)
    for n in [*range(45), 99, 100, 101, 20_000, 1_234_567]:
        values = rng.random(n) < 0.5
        assert sp_cli._dimacs_values(values) == _python_values(values), n


def test_model_on_stdout_and_in_the_file_agree(tmp_path, capsys):
    f = sp.random_ksat(150, 3, ratio=3.0, seed=6)
    path, out_path = tmp_path / "f.cnf", tmp_path / "model.txt"
    sp.write_dimacs(f, path)
    assert cli.main(["sat", str(path), "--device", "cpu", "--seed", "2",
                     "--output", str(out_path)]) == 10
    stdout = capsys.readouterr().out
    model = out_path.read_text()
    assert stdout.endswith("s SATISFIABLE\n" + model)
    assert cli.main(["sat", str(path), "--device", "cpu", "--seed", "2", "--no-model"]) == 10
    assert capsys.readouterr().out.endswith("s SATISFIABLE\n")


def test_output_file_of_an_unsat_run_holds_no_earlier_model(tmp_path, capsys):
    """--output on UNSAT replaces an earlier run's model with a 'c' line, never keeps it."""
    sat_path, unsat_path = tmp_path / "sat.cnf", tmp_path / "unsat.cnf"
    out_path = tmp_path / "model.txt"
    sp.write_dimacs(sp.random_ksat(150, 3, ratio=3.0, seed=6), sat_path)
    unsat_path.write_text("p cnf 2 4\n1 2 0\n-1 2 0\n1 -2 0\n-1 -2 0\n")
    assert cli.main(["sat", str(sat_path), "--device", "cpu", "--seed", "2",
                     "--output", str(out_path)]) == 10
    assert out_path.read_text().startswith("v ")
    assert cli.main(["sat", str(unsat_path), "--device", "cpu",
                     "--output", str(out_path)]) == 20
    capsys.readouterr()
    text = out_path.read_text()
    assert text.startswith("c UNSAT: no assignment (") and "\nv " not in text
    assert not text.startswith("v ")


def test_a_sat_run_imports_no_other_wing_and_no_scipy(tmp_path):
    """`morphgpu sat` builds its parser with the sp wing alone, SciPy stays unloaded, and
    on the CPU side so does CuPy (start-up imports: ~0.35 s before, ~0.13 s after on the
    CPU machine)."""
    path = tmp_path / "f.cnf"
    sp.write_dimacs(sp.random_ksat(50, 3, ratio=3.0, seed=1), path)
    code = (
        "import sys\n"
        "from morphgpu import cli\n"
        f"rc = cli.main(['-v', 'sat', {str(path)!r}, '--device', 'cpu', '--seed', '1'])\n"
        "loaded = sorted(m for m in sys.modules"
        " if m.split('.')[0] in ('scipy', 'networkx', 'cupy', 'cupyx')"
        " or m.split('.')[:2] in (['morphgpu', w] for w in ('bfs', 'mst', 'dmr', 'pta'))"
        " or m in ('morphgpu.dynamic_graph', 'morphgpu.graph_cache'))\n"
        "print('LOADED', loaded, rc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "LOADED [] 10" in proc.stdout, proc.stdout[-2000:]


def test_first_clause_width_hint(tmp_path):
    """The warm-up's width hint: the first clause's literal count across comments, the
    header and a clause split over lines; the default where the head holds no clause."""
    path = tmp_path / "f.cnf"
    path.write_text("c a comment\np cnf 6 2\nc more\n1 -2\n  3 4 5 0\n-6 0\n")
    assert sp_cli._first_clause_width(str(path)) == 5
    sp.write_dimacs(sp.random_ksat(50, 4, ratio=3.0, seed=0), tmp_path / "k4.cnf")
    assert sp_cli._first_clause_width(str(tmp_path / "k4.cnf")) == 4
    (tmp_path / "none.cnf").write_text("p cnf 3 0\n")
    assert sp_cli._first_clause_width(str(tmp_path / "none.cnf")) == sp_cli.DEFAULT_WIDTH
    assert sp_cli._first_clause_width(str(tmp_path / "missing.cnf")) == sp_cli.DEFAULT_WIDTH


@pytest.mark.gpu
@pytest.mark.parametrize("width", [3, 5])
def test_warm_up_leaves_solves_unchanged(width):
    """api.warm_up (the CLI's thread beside the read) changes no result: the same seed
    gives the same verified assignment and counts before and after it."""
    from morphgpu.sp import api  # noqa: PLC0415

    f = sp.random_ksat(3000, width, ratio={3: 4.0, 5: 16.0}[width], seed=2)
    before = sp.solve(f, device="gpu", seed=4)
    api.warm_up(width)
    after = sp.solve(f, device="gpu", seed=4)
    assert before.status == after.status == "SAT"
    assert sp.verify(f, after.assignment)
    np.testing.assert_array_equal(before.assignment, after.assignment)
    for key in ("sp_iterations", "decimation_rounds", "local_search_rounds"):
        assert before.stats[key] == after.stats[key]
