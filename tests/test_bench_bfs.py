"""The BFS benchmark's graph builders and Graph500 conventions, on the CPU at tiny sizes.

Speed itself is measured by ``benchmarks/bfs.py`` on a GPU, not here.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import bfs as bench  # noqa: E402
import road_like  # noqa: E402

from morphgpu import generators  # noqa: E402


def _pairs(g):
    rows = np.repeat(np.arange(g.n_vertices), np.diff(g.indptr))
    return rows, np.asarray(g.indices, dtype=np.int64)


@pytest.mark.parametrize("nx, ny", [(40, 30), (1, 7), (9, 1)])
def test_grid_with_deletions_is_a_symmetric_subgrid(nx, ny):
    g = road_like.grid_with_deletions(nx, ny, keep=0.75, seed=3, device="cpu")
    assert g.n_vertices == nx * ny and not g.directed
    assert np.diff(g.indptr).max(initial=0) <= 4
    assert road_like.is_symmetric(g.indptr, g.indices)
    rows, cols = _pairs(g)
    step = np.abs(cols - rows)
    # only grid neighbours: right/left within a row, or up/down one row
    assert np.all((step == nx) | ((step == 1) & (np.minimum(rows, cols) % nx < nx - 1)))
    assert np.unique(rows * g.n_vertices + cols).size == g.n_edges  # no duplicates


def test_grid_with_deletions_keeps_about_keep_of_the_edges():
    full = generators.grid2d(100, 100, device="cpu").n_edges
    kept = road_like.grid_with_deletions(100, 100, keep=0.75, device="cpu").n_edges
    assert 0.72 < kept / full < 0.78
    assert road_like.grid_with_deletions(20, 20, keep=1.0, device="cpu").n_edges == \
        generators.grid2d(20, 20, device="cpu").n_edges
    assert road_like.grid_with_deletions(20, 20, keep=0.0, device="cpu").n_edges == 0
    a = road_like.grid_with_deletions(50, 50, seed=1, device="cpu")
    b = road_like.grid_with_deletions(50, 50, seed=1, device="cpu")
    c = road_like.grid_with_deletions(50, 50, seed=2, device="cpu")
    assert np.array_equal(a.indices, b.indices) and not np.array_equal(a.indices, c.indices)
    with pytest.raises(ValueError):
        road_like.grid_with_deletions(5, 5, keep=1.5, device="cpu")


def test_delaunay_is_symmetric_and_planar():
    n = 3000
    g = road_like.delaunay(n, device="cpu")
    assert g.n_vertices == n and road_like.is_symmetric(g.indptr, g.indices)
    undirected = g.n_edges // 2
    assert 2 * n <= undirected <= 3 * n - 6  # planar, and triangulated (not sparse)
    assert np.diff(g.indptr).min() >= 2


def test_uniform_random_mean_degree():
    g = road_like.uniform_random(1 << 10, 16, device="cpu")
    assert g.n_vertices == 1024 and g.n_edges == 16 * 1024
    assert road_like.is_symmetric(g.indptr, g.indices)


def test_kronecker_input_degrees_count_the_generated_tuples():
    scale = 10
    degrees = road_like.kronecker_input_degrees(scale, 16, device="cpu")
    merged = generators.kronecker(scale, 16, device="cpu")
    assert degrees.shape == (1 << scale,)
    # each generated tuple at both ends, less the self-loops the generator drops (a
    # fraction 0.62 ** scale of them)
    generated = 16 * (1 << scale)
    assert 2 * generated * (1 - 2 * 0.62**scale) <= degrees.sum() < 2 * generated
    assert np.all(degrees >= np.diff(merged.indptr))  # merging only removes duplicates


def test_is_symmetric_sees_a_one_way_edge():
    g = generators.grid2d(3, 3, device="cpu")
    assert road_like.is_symmetric(g.indptr, g.indices)
    assert not road_like.is_symmetric(np.array([0, 1, 1]), np.array([1]))


def test_graph500_edge_count_and_harmonic_mean():
    result = SimpleNamespace(n_edges_traversed=10, distances=np.array([0, 1, -1]))
    assert bench.graph500_edges(result, None, symmetric=True) == 5
    assert bench.graph500_edges(result, None, symmetric=False) == 10
    assert bench.graph500_edges(result, np.array([4, 6, 100]), symmetric=True) == 5
    # the harmonic mean of rates 10 and 30 is 15; zero-time or zero-edge searches are left out
    assert bench.harmonic_teps([10.0, 30.0, 5.0], [1.0, 1.0, 0.0]) == pytest.approx(15.0)


def test_roots_have_edges_and_the_graph_lists_are_consistent():
    g = generators.grid2d(5, 5, device="cpu")
    roots = bench.pick_roots(road_like.grid_with_deletions(30, 30, keep=0.5, device="cpu"), 64)
    assert len(set(roots)) == 64
    assert bench.pick_roots(g, 64) and len(bench.pick_roots(g, 64)) == 25
    for quick, big in ((True, False), (False, False), (False, True)):
        labels = [case.label for case in bench.cases(quick, big)]
        assert len(set(labels)) == len(labels)
        assert all(case.family in bench.FAMILY_VARIANTS for case in bench.cases(quick, big))
    full = {case.label: case for case in bench.cases(False)}
    assert full["grid2d 4000x4000"].target_ms == 16.0
    assert {"kron 21 ef16", "kron 22 ef16", "uniform 2^22 deg16", "delaunay 1M",
            "grid-del 5000x5000 p.75"} <= set(full)


def test_ab_options_recognise_earlier_kernels_and_name_bad_input(tmp_path):
    import argparse

    import bfs_ab

    wide = tmp_path / "wide"
    (wide / "morphgpu" / "bfs" / "kernels").mkdir(parents=True)
    (wide / "morphgpu" / "bfs" / "gpu").mkdir(parents=True)
    (wide / "morphgpu" / "bfs" / "kernels" / "direction.cu").write_text("")
    (wide / "morphgpu" / "bfs" / "gpu" / "direction.py").write_text("")
    deep = tmp_path / "deep"
    deep.mkdir()
    (deep / "persistent.cu").write_text(bfs_ab.EXPAND_INCLUDE)
    assert bfs_ab.before_family(wide) == "wide"
    with pytest.raises(ValueError, match="expand.cuh"):
        bfs_ab.before_family(deep)  # persistent.cu without the header it was built with
    (deep / "expand.cuh").write_text("")
    assert bfs_ab.before_family(deep) == "deep"
    with pytest.raises(ValueError, match="--before"):
        bfs_ab.before_family(tmp_path)

    parser = argparse.ArgumentParser()
    bench._add_args(parser)
    args = parser.parse_args(["--before", str(deep), "--before", str(wide), "--define",
                              "MG_BFS_FLAT_HUBS=512", "--define", "MG_BFS_PROFILE",
                              "--relabel-rows",
                              "--profile-levels", "1", "--roots", "4"])
    bfs_ab.resolve_args(args)
    assert args.before_dirs == {"wide": wide.resolve(), "deep": deep.resolve()}
    # each define goes to the kernel that reads it (MG_BFS_PROFILE: both)
    assert args.define_list == {"wide": [("MG_BFS_FLAT_HUBS", "512"), ("MG_BFS_PROFILE", None)],
                                "deep": [("MG_BFS_PROFILE", None)]}
    assert args.roots == 4 and args.relabel_rows and args.profile_levels == 1
    for bad in (["--before", str(wide), "--before", str(wide)], ["--define", "A B=1"],
                ["--define", "=1"], ["--define", "MG_BFS_NO_SUCH_SWITCH=1"],
                ["--profile-levels", "-1"]):
        with pytest.raises(ValueError):
            bfs_ab.resolve_args(parser.parse_args(bad))


def test_deep_probe_graph_names_and_tiled_fields(monkeypatch):
    """--graphs takes the deep probe's short names; the tiled counters become row fields
    (means over the searches, us at the rated clock); --tiled-rows and --no-extras parse."""
    import argparse

    import bfs_ab

    labels = [case.label for case in bench.cases(False, True)]
    for name, label in (("grid-4000", "grid2d 4000x4000"), ("delaunay-1M", "delaunay 1M"),
                        ("delaunay-4M", "delaunay 4M"), ("road-COL", "road COL"),
                        ("grid-del-2000", "grid-del 2000x2000 p.75")):
        assert bench._wanted(label, [name]), name
        assert [x for x in labels if bench._wanted(x, [name])] in ([label], []), name
    assert not bench._wanted("grid-del 20000x20000 p.75", ["grid-del-2000"])
    assert bench._wanted("kron 21 ef16", ["kron 21"]) and bench._wanted("any", [])

    monkeypatch.setattr(bfs_ab, "clock_mhz", lambda: 1000.0)
    counters = [{"again": 10, "tiles": 40, "levels": 400, "remote_lowered": 5,
                 "global_rows": 0, "load_cycles": 40_000, "level_cycles": 400_000,
                 "write_cycles": 80_000, "wait_cycles": 50_000, "loop_cycles": 100_000,
                 "tile_vertices": 4096, "n_tiles": 30},
                {"again": 30, "tiles": 40, "levels": 400, "remote_lowered": 7,
                 "global_rows": 2, "load_cycles": 40_000, "level_cycles": 400_000,
                 "write_cycles": 80_000, "wait_cycles": 150_000, "loop_cycles": 300_000,
                 "tile_vertices": 4096, "n_tiles": 30}]
    fields = bfs_ab.tiled_fields(counters)
    assert fields["tiled_again"] == 20 and fields["tiled_tiles"] == 40
    assert fields["tiled_levels_per_tile"] == 10 and fields["tiled_n_tiles"] == 30
    assert fields["tiled_load_us_per_tile"] == 1.0 and fields["tiled_write_us_per_tile"] == 2.0
    assert fields["tiled_us_per_local_level"] == 1.0
    assert fields["tiled_wait_us"] == 100.0 and fields["tiled_loop_us"] == 200.0
    assert bfs_ab.tiled_fields([]) == {}

    parser = argparse.ArgumentParser()
    bench._add_args(parser)
    args = parser.parse_args(["--tiled-rows", "--no-extras", "--variants", "tiled"])
    bfs_ab.resolve_args(args)
    assert args.tiled_rows and args.no_extras and args.variants == "tiled"


def test_summary_lines(capsys):
    import harness

    record = harness.Record("bfs", "cpu")
    record.row(graph="grid2d 4000x4000", variant="persistent", mean_ms=27.0,
               us_per_level=4.0, x_persistent=1.0)
    record.row(graph="grid2d 4000x4000", variant="tiled", mean_ms=13.5, us_per_level=2.0,
               x_persistent=2.0, tiled_again=367.0, tiled_tiles=36000.0,
               tiled_n_tiles=4514.0, tiled_levels_per_tile=16.1, tiled_load_us_per_tile=5.0,
               tiled_us_per_local_level=0.5, tiled_write_us_per_tile=3.0,
               tiled_wait_us=30.0, tiled_loop_us=40.0)
    record.row(graph="road COL", variant="sparse-matrix input", matrix_ms=1.0)
    record.row(graph="road COL", variant="auto", mean_ms=2.5, us_per_level=2.0,
               x_persistent=1.0, auto_choice="persistent", auto_choice_persistent_ms=2.44,
               auto_choice_tiled_ms=2.62, auto_choice_horizon=32, auto_choice_s=0.21,
               auto_choice_ms_by_arm="tiled:32=2.620/overlay:0=2.900",
               auto_due_after_searches=8.4)
    # Overlay chosen: no tiled arm kept, so the record holds the string "nan" (JSON has no
    # NaN), which crashed this summary on the device in session 39.
    record.row(graph="delaunay 16k", variant="auto", mean_ms=0.44, us_per_level=7.4,
               x_persistent=0.9, auto_choice="overlay", auto_choice_persistent_ms=0.384,
               auto_choice_tiled_ms=float("nan"), auto_choice_horizon=8,
               auto_choice_s=0.108, auto_choice_ms_by_arm="tiled:24=0.534/overlay:8=0.321")
    capsys.readouterr()
    bench.summary(record)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5  # a header, the four timed rows
    assert "2.000" in lines[2] and "367 36000/4514 16.1" in lines[2]
    assert "auto chose persistent (measured ms: persistent 2.44, " \
        "tiled:32=2.620/overlay:0=2.900; 0.21 s; due after 8 searches)" in lines[3]
    assert "auto chose overlay (measured ms: persistent 0.38, " \
        "tiled:24=0.534/overlay:8=0.321; 0.11 s; due after nan searches)" in lines[4]


def test_shuffled_case_is_the_same_graph_in_other_ids():
    from scipy.sparse import csgraph  # noqa: PLC0415

    base = road_like.grid_with_deletions(25, 20, keep=0.75, seed=2, device="cpu")
    case = bench._shuffled("grid", lambda: base)
    g = case.build()
    assert case.label == "grid shuffled" and case.family == "deep"
    assert g.n_vertices == base.n_vertices and g.n_edges == base.n_edges
    assert bench.reorder.mean_edge_span(g) > 3 * bench.reorder.mean_edge_span(base)
    # Same distances up to the relabelling: new vertex i is old vertex perm[i].
    perm = bench.shuffled_ids(base.n_vertices)
    as_matrix = [bench._scipy_matrix(x) for x in (base, g)]
    old = csgraph.shortest_path(as_matrix[0], unweighted=True, indices=int(perm[0]))
    new = csgraph.shortest_path(as_matrix[1], unweighted=True, indices=0)
    assert np.array_equal(old[perm], new)


def test_other_shapes_are_new_and_cover_both_families():
    labels = [c.label for c in bench.other_shapes()]
    issue_rows = {c.label for c in bench.cases(quick=False)}
    assert labels and not issue_rows & set(labels)
    assert {c.family for c in bench.other_shapes()} == {"deep", "wide"}
    assert bench.cases(quick=False, others=True)[0].label == labels[0]


def test_wide_shapes_have_their_degree():
    assert bench._uniform(10, 8).label == "uniform 2^10 deg8"
    assert bench._kron(10, 8).label == "kron 10 ef8"
    # What the labels promise, from the generators the cases call (on the CPU here): G(n, m)
    # of mean degree 8, and n * edge_factor Kronecker tuples, each counted at both ends.
    g = road_like.uniform_random(1 << 10, 8, device="cpu")
    assert g.indices.size == 8 * (1 << 10)
    degrees = road_like.kronecker_input_degrees(10, 8, device="cpu")
    assert 0.99 * 2 * 8 * (1 << 10) <= int(degrees.sum()) <= 2 * 8 * (1 << 10)
