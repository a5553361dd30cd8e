"""The MST command line, its demo, ECL-MST's weight rule, and a real road network."""

from __future__ import annotations

import ctypes
import json
import math

import numpy as np
import pytest
from scipy.sparse.csgraph import connected_components
from scipy.sparse.csgraph import minimum_spanning_tree as scipy_mst

from morphgpu import cli, graph_io
from morphgpu.csr import CSRGraph
from morphgpu.mst import boruvka
from morphgpu.mst.cli import demo
from morphgpu.mst.ecl_weights import ecl_weights


def c_rule(i: int, k: int, n: int) -> int:
    """ECL-MST's line, evaluated with C int semantics (wrapping product, truncating %)."""
    product = ctypes.c_int32(i * k).value
    remainder = int(math.fmod(product, n))
    return abs(ctypes.c_int32(1 + remainder).value)


def test_ecl_weight_rule_matches_c_semantics():
    n = 200_003  # ids large enough that i * k passes 2^31
    rng = np.random.default_rng(0)
    u = rng.integers(0, n, 500)
    v = rng.integers(0, n, 500)
    graph = ecl_weights(CSRGraph.from_edges(u, v, n_vertices=n, symmetrize=True))
    rows = graph.edge_sources().tolist()
    expected = [c_rule(i, k, n) for i, k in zip(rows, graph.indices.tolist())]
    assert graph.weights.dtype == np.int32
    assert graph.weights.tolist() == expected
    assert any(i * k >= 2**31 for i, k in zip(rows, graph.indices.tolist()))


def test_command_line_checks_against_scipy(tmp_path, capsys, device):
    rng = np.random.default_rng(4)
    graph = CSRGraph.from_edges(
        rng.integers(0, 300, 900), rng.integers(0, 300, 900), rng.integers(1, 50, 900),
        n_vertices=300, symmetrize=True, drop_self_loops=True, merge_duplicates="min",
    )
    path = tmp_path / "g.mtx"
    graph_io.write_graph(graph, path)
    code = cli.main(["mst", str(path), "--check", "--json", "--device", device])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["matches_scipy"] is True
    matrix = graph.to_scipy()
    assert out["total_weight"] == int(scipy_mst(matrix).sum())
    assert out["components"] == connected_components(matrix, directed=False)[0]


def test_command_line_reports_a_bad_file(tmp_path, capsys):
    path = tmp_path / "bad.gr"
    path.write_text("p sp 3 1\na 1 9 4\n")
    assert cli.main(["mst", str(path), "--device", "cpu"]) == 1
    assert "bad.gr" in capsys.readouterr().err


def test_demo_is_valid(device):
    result = demo(device)
    assert result["valid"] is True and result["algorithm"] == "mst"


def test_road_network_matches_scipy(device, shared):
    graph = ecl_weights(graph_io.read_graph(shared("data", "roads", "NY.gr.xz")))
    result = boruvka(graph, device=device)
    matrix = graph.to_scipy()
    assert result.total_weight == int(scipy_mst(matrix).sum())
    assert result.n_components == connected_components(matrix, directed=False)[0]


# Correct forests that --check failed: arcs 1->2 of weights 7 and 3 (the total is
# 3 + 4 + 2 + 9 = 18; SciPy's reference summed the two into one edge of 10 and said 22), and
# an edge of weight inf, in every spanning tree (both totals inf, compared as inf - inf, NaN;
# strict JSON writes the total as "inf", report.to_json).
CHECKED_FORESTS = {
    "parallel.gr": ("p sp 5 7\na 1 2 7\na 2 1 7\na 2 3 4\na 3 4 11\na 4 5 2\na 5 1 9\n"
                    "a 1 2 3\n", 18),
    "inf.mtx": ("%%MatrixMarket matrix coordinate real general\n4 4 3\n1 2 inf\n"
                "2 3 1\n3 4 1\n", "inf"),
}


@pytest.mark.parametrize("name", sorted(CHECKED_FORESTS))
def test_check_accepts_correct_forests(tmp_path, capsys, device, name):
    text, total = CHECKED_FORESTS[name]
    path = tmp_path / name
    path.write_text(text)
    code = cli.main(["mst", str(path), "--check", "--json", "--device", device])
    out = json.loads(capsys.readouterr().out)
    assert out["total_weight"] == total
    assert code == 0 and out["matches_scipy"] is True


def test_a_nan_weight_is_named_by_file_and_edge(tmp_path, capsys):
    """`mst FILE` with a NaN weight said only "weight of CSR entry 0 is NaN"."""
    path = tmp_path / "nan.mtx"
    path.write_text("%%MatrixMarket matrix coordinate real general\n3 3 2\n2 3 nan\n1 2 1\n")
    assert cli.main(["mst", str(path), "--device", "cpu"]) == 1
    err = capsys.readouterr().err
    assert f"{path}: the edge between vertices 1 and 2 (ids from 0) has a NaN weight" in err
