"""Shell users' habits: ``python -m morphgpu``, pipes into ``head``, progress on stderr only
on a terminal, what ``mst`` says and writes, METIS and SNAP files, the ``[c]`` extra."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

from morphgpu import cli, graph_formats, graph_io
from morphgpu.csr import GraphFormatError

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"


def _morphgpu(*args: str, env: dict | None = None, timeout: float = 300):
    full_env = {k: v for k, v in os.environ.items() if k != "MORPHGPU_PROGRESS"}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "morphgpu", *args], capture_output=True,
                          text=True, cwd=REPO, env=full_env, timeout=timeout)


def test_python_dash_m_runs_the_command():
    proc = _morphgpu("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("morphgpu ")
    proc = _morphgpu("info", "--json")
    info = json.loads(proc.stdout)
    assert proc.returncode == 0 and "numpy" in info
    if info["gpu"].startswith("none"):  # says what device="auto" runs without a GPU
        assert info["auto_runs"]["refine"] == "Triangle"


def test_a_closed_pipe_ends_quietly():
    # 30,000 variables: about 200 kB of 'v' lines, more than a pipe holds
    proc = subprocess.Popen(
        [sys.executable, "-m", "morphgpu", "sat", "--random", "30000", "--ratio", "2",
         "--seed", "1", "--device", "cpu"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    first = proc.stdout.readline()
    proc.stdout.close()  # what `| head -1` does
    err = proc.stderr.read().decode()
    proc.wait(timeout=300)
    assert first.startswith(b"c ")
    assert "Broken pipe" not in err and "Traceback" not in err, err
    assert proc.returncode in (141, 10)  # 10 when everything fitted before the close


@pytest.mark.parametrize("command", [
    ["bfs", str(DATA / "small_general.mtx"), "--source", "0", "--device", "cpu"],
    ["mst", str(DATA / "small_symmetric.mtx"), "--device", "cpu"],
    ["pta", str(DATA / "pta" / "chain.galois.txt"), "--device", "cpu"],
])
def test_progress_only_when_asked_or_on_a_terminal(command):
    quiet = _morphgpu(*command)  # stderr is a pipe here, not a terminal
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == ""
    shown = _morphgpu(*command, env={"MORPHGPU_PROGRESS": "1"})
    assert shown.returncode == 0, shown.stderr
    assert command[0] in shown.stderr  # the tqdm line, labelled by the command
    assert shown.stdout.splitlines()[0] == quiet.stdout.splitlines()[0]
    as_json = _morphgpu(*command, "--json", env={"MORPHGPU_PROGRESS": "1"})
    assert as_json.stderr == ""  # --json: nothing but the document
    json.loads(as_json.stdout)


def test_mst_says_which_weights_and_writes_them(tmp_path, capsys):
    g = graph_io.read_graph(DATA / "small_symmetric.mtx")
    path = tmp_path / "g.mtx"
    graph_io.write_graph(g.with_weights(np.arange(1, g.n_edges + 1)), path)
    assert cli.main(["mst", str(path), "--json", "--device", "cpu",
                     "--output", str(tmp_path / "f.npy")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["weights"] == "the file's weights (auto: the file has weights)"
    forest = np.load(tmp_path / "f.npy")
    assert forest.shape == (3, out["forest_edges"]) and forest.dtype == np.int64
    assert forest[2].sum() == out["total_weight"]
    assert cli.main(["mst", str(DATA / "small_general.mtx"), "--json", "--device", "cpu",
                     "--output", str(tmp_path / "f.txt")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["weights"].startswith("ECL-MST's rule") and "no weights" in out["weights"]
    rows = np.loadtxt(tmp_path / "f.txt", ndmin=2)
    assert rows.shape == (out["forest_edges"], 3) and rows[:, 2].sum() == out["total_weight"]
    assert cli.main(["mst", str(path), "--weights", "unit", "--json", "--device", "cpu"]) == 0
    assert json.loads(capsys.readouterr().out)["weights"] == "unit weights"


METIS = """% the 4-cycle 1-2-3-4 with a chord 1-3, weighted
4 5 1
2 10 3 30 4 40
1 10 3 20
1 30 2 20 4 35
1 40 3 35
"""


def test_metis_graph_file(tmp_path):
    path = tmp_path / "c.graph"
    path.write_text(METIS)
    g = graph_formats.read(path)
    assert g.n_vertices == 4 and g.n_edges == 10 and not g.directed
    m = g.to_scipy()
    assert m[0, 2] == 30 and m[2, 0] == 30 and m[3, 2] == 35
    assert csgraph.minimum_spanning_tree(m).sum() == 10 + 20 + 35
    unweighted = tmp_path / "u.graph"
    unweighted.write_text("3 2\n2\n1 3\n2\n")
    assert graph_formats.read(unweighted).weights is None
    bad = tmp_path / "bad.graph"
    bad.write_text("3 2\n2\n1 7\n2\n")
    with pytest.raises(GraphFormatError, match=r"bad.graph:3: vertex 2 names neighbour 7"):
        graph_formats.read(bad)
    bad.write_text("3 3\n2\n1 3\n2\n")
    with pytest.raises(GraphFormatError, match="says 3 edges"):
        graph_formats.read(bad)


def test_snap_edge_list(tmp_path):
    path = tmp_path / "web.txt"
    path.write_text("# Directed graph (each unordered pair of nodes is saved once)\n"
                    "# FromNodeId\tToNodeId\n0\t1\n0\t2\n2\t5\n")
    g = graph_formats.read(path)
    assert g.directed and g.n_vertices == 6 and g.n_edges == 3
    und = tmp_path / "und.txt"
    und.write_text("# Undirected graph: roads\n0 1\n1 2\n2 1\n")
    g = graph_formats.read(und)
    assert not g.directed and g.n_edges == 4  # both ways, one entry per pair
    weighted = tmp_path / "w.edges"
    weighted.write_text("0 1 2.5\n1 2 0.5\n")
    assert graph_formats.read(weighted).weights.tolist() == [2.5, 0.5]


def test_format_option_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "cycle.dat"  # an extension nobody knows
    path.write_text("0 1\n1 2\n2 3\n3 0\n")
    assert cli.main(["bfs", str(path), "--source", "0", "--device", "cpu"]) == 1
    assert "--format" in capsys.readouterr().err
    assert cli.main(["bfs", str(path), "--source", "0", "--format", "snap", "--json",
                     "--device", "cpu"]) == 0
    assert json.loads(capsys.readouterr().out)["levels"] == 4
    metis = tmp_path / "c.graph"
    metis.write_text(METIS)
    assert cli.main(["mst", str(metis), "--json", "--device", "cpu"]) == 0
    assert json.loads(capsys.readouterr().out)["total_weight"] == 65


def test_c_input_without_pycparser_names_the_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pycparser", None)  # as if it were not installed
    monkeypatch.delitem(sys.modules, "pycparser.c_parser", raising=False)
    assert cli.main(["pta", str(DATA / "pta" / "structs.c"), "--device", "cpu"]) == 1
    err = capsys.readouterr().err
    assert "morphgpu[c]" in err and "Traceback" not in err


def test_package_ships_py_typed_and_entry_points():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    assert (REPO / "morphgpu" / "py.typed").exists()
    with open(REPO / "pyproject.toml", "rb") as fh:
        project = tomllib.load(fh)
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["morphgpu"]
    assert project["project"]["scripts"]["morphgpu"] == "morphgpu.cli:console"
    assert any(dep.startswith("tqdm") for dep in project["project"]["dependencies"])
    assert (REPO / "docs" / "conf.py").exists() and "docs" in project["project"][
        "optional-dependencies"]
