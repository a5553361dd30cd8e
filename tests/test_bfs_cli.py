"""The ``morphgpu bfs`` command and the BFS demo."""

from __future__ import annotations

import json

import numpy as np
import pytest

from morphgpu import cli, generators, graph_io
from morphgpu.bfs import cli as bfs_cli
from morphgpu.bfs.validate import graph500_check
from morphgpu.csr import CSRGraph


def test_demo_is_valid(device):
    out = bfs_cli.demo(device)
    assert out["valid"] is True and out["algorithm"] == "bfs"


def test_command_line(tmp_path, capsys, device):
    g = generators.grid2d(30, 20, device="cpu")
    path = tmp_path / "grid.mtx"
    graph_io.write_graph(g, path)
    npy = tmp_path / "dist.npy"
    rc = cli.main(["bfs", str(path), "--source", "7", "--device", device, "--check", "--json",
                   "--output", str(npy)])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["valid"] is True and out["reached"] == 600
    dist = np.load(npy)
    graph500_check(g.indptr, g.indices, 7, dist)
    assert out["levels"] == int(dist.max()) + 1
    # Graph500's count: the grid's 30*19 + 20*29 undirected edges, each stored twice.
    assert out["edges_traversed"] == 1150 and out["csr_entries_traversed"] == 2300
    assert out["mteps"] == pytest.approx(1150 / out["seconds"] / 1e6)


def test_command_line_directed_counts_entries(tmp_path, capsys):
    g = CSRGraph.from_edges(np.array([0, 0, 1, 2]), np.array([1, 2, 3, 3]), n_vertices=5)
    path = tmp_path / "d.mtx"
    graph_io.write_graph(g, path)
    assert cli.main(["bfs", str(path), "--source", "0", "--device", "cpu", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["reached"] == 4
    assert out["edges_traversed"] == out["csr_entries_traversed"] == 4


def test_command_line_errors(tmp_path, capsys):
    g = generators.grid2d(3, 3, device="cpu")
    path = tmp_path / "g.mtx"
    graph_io.write_graph(g, path)
    assert cli.main(["bfs", str(path), "--source", "9", "--device", "cpu"]) == 1
    assert "source=9" in capsys.readouterr().err
    assert cli.main(["bfs", str(tmp_path / "missing.mtx"), "--source", "0"]) == 1
