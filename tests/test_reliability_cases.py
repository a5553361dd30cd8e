"""Issue 25, case by case: each input that crashed, hung, lied or failed unclearly now gives
the right answer or the package's own error naming the file and line (or the argument).

The generated variants of every format are in test_reliability_formats.py.
"""

from __future__ import annotations

import bz2
import gzip
import lzma

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
from file_damage import write
from hypothesis import given, settings
from hypothesis import strategies as st

from morphgpu import backend, bfs, dmr, graph_io, kernels, mst, pta
from morphgpu import sp as satsp
from morphgpu.csr import CSRGraph, GraphFormatError, validate_graph
from morphgpu.dmr.triangle_io import MeshFormatError, read_ele, read_node, read_poly
from morphgpu.pta.constraints import ConstraintFormatError
from morphgpu.pta.solution import read_solution
from morphgpu.sp.cnf import CNF, CNFFormatError, parse_dimacs, read_dimacs

SQUARE = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.3, 0.4]])



# ----------------------------------------------------------------------------- crash
@pytest.mark.parametrize("device", ["cpu", "auto"])  # auto without a GPU: Triangle's path
def test_refine_refuses_a_denormal_extent_before_triangle_sees_it(device):
    tiny = np.array([[0, 0], [1e-300, 0], [0, 1e-300]])
    with pytest.raises(ValueError, match=r"mesh\['vertices'\]: the vertices span only 1e-300"):
        dmr.refine({"vertices": tiny}, device=device)


@pytest.mark.parametrize("scale", [1e-200, 5e-324])
def test_refine_refuses_tiny_extents(scale):
    with pytest.raises(ValueError, match="span only"):
        dmr.refine({"vertices": SQUARE * scale}, device="cpu")


def test_refine_refuses_huge_coordinates():
    with pytest.raises(ValueError, match="magnitude"):
        dmr.refine({"vertices": SQUARE * 1e300}, device="cpu")


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_refine_refuses_non_finite_holes(bad):
    mesh = {"vertices": SQUARE[:4], "segments": np.array([[0, 1], [1, 2], [2, 3], [3, 0]]),
            "holes": np.array([[bad, 0.5]])}
    with pytest.raises(ValueError, match=r"mesh\['holes'\]"):
        dmr.refine(mesh, device="cpu")


# ----------------------------------------------------------------------------- hang
@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_refine_refuses_an_area_bound_that_cannot_fit(device):
    with pytest.raises(ValueError, match=r"max_area=1e-300: .* 1e\+300 triangles .* does not fit"):
        dmr.refine({"vertices": SQUARE}, max_area=1e-300, device=device)


def test_refine_area_bound_names_the_estimate(monkeypatch):
    monkeypatch.setattr(backend, "host_available_bytes", lambda: 2**27)
    with pytest.raises(ValueError, match=r"at least 1e\+07 triangles \(the domain's area is 1\)"):
        dmr.refine({"vertices": SQUARE}, max_area=1e-7, device="cpu")


def test_refine_with_a_reasonable_area_bound_still_runs():
    out = dmr.refine({"vertices": SQUARE}, max_area=0.01, device="cpu")
    assert len(out["triangles"]) >= 100


# ----------------------------------------------------------------------------- wrong answers
def test_dimacs_weight_past_int64_is_refused_not_saturated(tmp_path):
    path = write(tmp_path, "w.gr", "p sp 3 1\na 1 2 9223372036854775808\n")
    with pytest.raises(GraphFormatError, match=r"w\.gr: line 2: weight 9223372036854775808"):
        graph_io.read_graph(path)


def test_dimacs_largest_int64_weight_is_kept(tmp_path):
    path = write(tmp_path, "w.gr", "p sp 3 1\na 1 2 9223372036854775807\n")
    assert graph_io.read_graph(path).weights.tolist() == [2**63 - 1]


def test_cnf_from_clauses_refuses_float_literals():
    with pytest.raises(CNFFormatError, match=r"clause 0, literal 0: 2\.9 is not an integer"):
        CNF.from_clauses([[2.9, -1.7]], n_vars=3)


def test_cnf_from_clauses_refuses_bools_and_keeps_numpy_ints():
    with pytest.raises(CNFFormatError, match="bool"):
        CNF.from_clauses([[True]], n_vars=1)
    assert CNF.from_clauses([[np.int64(2), np.int32(-1)]], n_vars=3).clauses() == [[2, -1]]


def test_cnf_from_arrays_refuses_uint64_past_int64():
    with pytest.raises(CNFFormatError, match="2\\*\\*63"):
        CNF.from_arrays([0, 1], np.array([2**63], dtype=np.uint64))


def test_read_solution_refuses_an_object_id_past_numvars(tmp_path):
    path = write(tmp_path, "s.txt", "3\n[0, 1] => [99]\n[2] => []\n")
    with pytest.raises(ConstraintFormatError, match=r"s\.txt:2: object id 99 is outside 0\.\.2"):
        read_solution(path)


# ----------------------------------------------------------------------------- unclear errors
@pytest.mark.parametrize("n", [2**31, 2**62, 2**64])
def test_dimacs_header_too_large_says_what_and_how_much(tmp_path, n, monkeypatch):
    monkeypatch.setattr(backend, "host_available_bytes", lambda: 2**34)
    path = write(tmp_path, "big.gr", f"p sp {n} 1\na 1 2 3\n")
    with pytest.raises(GraphFormatError,
                       match=rf"big\.gr: line 1: declares {n} vertices .* does not fit"):
        graph_io.read_graph(path)


def test_matrix_market_size_too_large(tmp_path, monkeypatch):
    monkeypatch.setattr(backend, "host_available_bytes", lambda: 2**34)
    path = write(tmp_path, "big.mtx", "%%MatrixMarket matrix coordinate real general\n"
                 "% c\n3000000000 3000000000 1\n1 1 1.0\n")
    with pytest.raises(GraphFormatError, match=r"big\.mtx: line 3: declares a 3000000000 x "
                                               r"3000000000 matrix .* GiB"):
        graph_io.read_graph(path)


def test_matrix_market_bad_size_line(tmp_path):
    path = write(tmp_path, "bad.mtx", "%%MatrixMarket matrix coordinate real general\n3 x 1\n")
    with pytest.raises(GraphFormatError, match=r"bad\.mtx: line 2: expected the size line"):
        graph_io.read_graph(path)


def test_from_edges_with_a_huge_id_says_it_does_not_fit(monkeypatch):
    monkeypatch.setattr(backend, "host_available_bytes", lambda: 2**34)
    with pytest.raises(GraphFormatError, match=r"2147483649 vertices \(the largest vertex id "
                                               r"is 2147483648\).* does not fit"):
        CSRGraph.from_edges([0], [2**31])


def test_from_edges_uint64_past_int64_is_not_called_negative():
    with pytest.raises(GraphFormatError, match="vertex 9223372036854775808, past the largest"):
        CSRGraph.from_edges(np.array([2**63], np.uint64), np.array([0], np.uint64))


def test_ragged_lists_are_refused_clearly_by_every_wing():
    for call in (lambda: mst.minimum_spanning_tree([[0, 1], [1]], device="cpu"),
                 lambda: bfs.breadth_first_order([[0, 1], [1]], 0, device="cpu"),
                 lambda: validate_graph([[0, 1], [1]])):
        with pytest.raises(GraphFormatError, match="rows of different lengths"):
            call()


def test_bfs_and_mst_accept_the_same_dense_lists():
    dense = [[0, 2, 0], [2, 0, 1], [0, 1, 0]]
    order = bfs.breadth_first_order(dense, 0, device="cpu", return_predecessors=False)
    assert order.tolist() == [0, 1, 2]
    tree = mst.minimum_spanning_tree(dense, device="cpu")
    assert tree.sum() == 3


def test_cnf_seed_must_be_a_non_negative_integer():
    cnf = satsp.random_ksat(10, 3, ratio=2.0, seed=0)
    for seed in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="seed must be None or a non-negative integer"):
            satsp.solve(cnf, seed=seed, device="cpu")


@pytest.mark.parametrize("n", ["9223372036854775808", "3000000000"])
def test_cnf_header_too_large_is_refused_by_the_reader(n, monkeypatch):
    monkeypatch.setattr(backend, "host_available_bytes", lambda: 2**34)
    with pytest.raises(CNFFormatError, match=rf"<string>:2: declares {n} variables .* does not"):
        parse_dimacs(f"c big\np cnf {n} 1\n1 0\n")


def test_solve_refuses_a_formula_too_large_for_the_host(monkeypatch):
    monkeypatch.setattr(backend, "host_available_bytes", lambda: 2**34)
    cnf = CNF(3_000_000_000, np.array([0, 1]), np.array([1], dtype=np.int64))
    with pytest.raises(ValueError, match="solve: cnf: has 3000000000 variables .* does not fit"):
        satsp.solve(cnf, device="cpu")


def test_pta_constraint_id_past_int64_names_the_line(tmp_path):
    path = write(tmp_path, "g.txt", "3\n1\n0,9223372036854775808,1,1,0\n")
    with pytest.raises(ConstraintFormatError, match=r"g\.txt:3: value past 2\*\*63 - 1"):
        pta.load(path)


def test_pta_numvars_too_large(tmp_path, monkeypatch):
    monkeypatch.setattr(backend, "host_available_bytes", lambda: 2**34)
    path = write(tmp_path, "g.txt", "# x\n4611686018427387904\n0\n")
    with pytest.raises(ConstraintFormatError,
                       match=r"g\.txt:2: declares numVars=4611686018427387904"):
        pta.load(path)


def test_pta_solve_checks_barrier_mode():
    cs = pta.constraints.from_lists(2, [(0, 1, 0)])
    with pytest.raises(ValueError, match="barrier_mode"):
        pta.solve(cs, device="cpu", barrier_mode="nope")


def test_binary_node_file_names_the_file(tmp_path):
    path = write(tmp_path, "bin.node", b"3 2 0 0\n\xff\xfe\x00\x81\n")
    with pytest.raises(MeshFormatError, match=r"bin\.node:2: not a text file"):
        read_node(path)


def test_ele_index_past_int64_names_the_line(tmp_path):
    write(tmp_path, "t.node", "3 2 0 0\n0 0 0\n1 1 0\n2 0 1\n")
    path = write(tmp_path, "t.ele", "1 3 0\n0 0 1 9223372036854775808\n")
    with pytest.raises(MeshFormatError, match=r"t\.ele:2: value 4 of triangle 1 does not fit"):
        read_ele(path)


def test_ele_out_of_range_vertex_names_the_line(tmp_path):
    write(tmp_path, "t.node", "3 2 0 0\n0 0 0\n1 1 0\n2 0 1\n")
    path = write(tmp_path, "t.ele", "2 3 0\n0 0 1 2\n# c\n1 0 1 7\n")
    with pytest.raises(MeshFormatError, match=r"t\.ele:4: triangle 2 refers to vertex 7"):
        read_ele(path)


def test_poly_region_count_must_be_an_integer(tmp_path):
    path = write(tmp_path, "r.poly", "3 2 0 0\n0 0 0\n1 1 0\n2 0 1\n1 0\n0 0 1\n0\nx\n")
    with pytest.raises(MeshFormatError, match=r"r\.poly:8: the region count must be integers"):
        read_poly(path)


def test_poly_out_of_range_segment_names_the_line(tmp_path):
    path = write(tmp_path, "s.poly", "3 2 0 0\n1 0 0\n2 1 0\n3 0 1\n2 0\n1 1 2\n2 3 4\n0\n")
    with pytest.raises(MeshFormatError, match=r"s\.poly:7: segment 2 refers to vertex 4"):
        read_poly(path)


def test_node_ids_not_consecutive_name_the_line(tmp_path):
    path = write(tmp_path, "nc.node", "3 2 0 0\n0 0 0\n1 1 0\n3 0 1\n")
    with pytest.raises(MeshFormatError, match=r"nc\.node:4: vertex 3 where 2 was expected"):
        read_node(path)


@pytest.mark.parametrize("value", [None, "30", True])
def test_refine_min_angle_must_be_a_number(value):
    with pytest.raises(ValueError, match="min_angle: expected a number"):
        dmr.refine({"vertices": SQUARE}, min_angle=value, device="cpu")


def test_read_solution_names_the_line_of_a_repeated_variable(tmp_path):
    path = write(tmp_path, "s.txt", "3\n[0, 1] => [1]\n\n[2, 1] => []\n")
    with pytest.raises(ConstraintFormatError,
                       match=r"s\.txt:4: variable 1 is listed again \(first on line 2\)"):
        read_solution(path)


def test_read_solution_names_the_line_of_an_out_of_range_variable(tmp_path):
    path = write(tmp_path, "s.txt", "3\n[0, 1] => [1]\n[2, 5] => []\n")
    with pytest.raises(ConstraintFormatError, match=r"s\.txt:3: variable id 5 is outside"):
        read_solution(path)


def test_galois_offset_errors_print_integers(tmp_path):
    header = np.array([1, 0, 2, 1], dtype="<u8").tobytes()
    ends = np.array([2**63, 1], dtype="<u8").tobytes()
    path = write(tmp_path, "g.gr", header + ends + np.array([0, 0], "<u4").tobytes())
    with pytest.raises(GraphFormatError, match=r"row offset 1 is smaller than the previous one "
                                               r"9223372036854775808"):
        graph_io.read_graph(path)


def test_dimacs_cr_only_line_endings(tmp_path):
    path = write(tmp_path, "cr.gr", "c x\rp sp 3 2\ra 1 2 3\ra 2 3 4\r")
    g = graph_io.read_graph(path)
    assert g.indices.tolist() == [1, 2] and g.weights.tolist() == [3, 4]


# ----------------------------------------------------------------------------- found by reading
def test_dense_inf_and_nan_are_no_edge_in_bfs_as_in_scipy():
    dense = np.array([[0, np.inf, 0], [0, 0, 1], [0, 0, 0]])
    ours = bfs.breadth_first_order(dense, 0, device="cpu", return_predecessors=False)
    assert ours.tolist() == csgraph.breadth_first_order(dense, 0, return_predecessors=False
                                                        ).tolist() == [0]
    dense[0, 1] = np.nan
    assert bfs.bfs(dense, 0, device="cpu").distances.tolist() == [0, -1, -1]


def test_validate_graph_null_rules():
    dense = np.array([[0, np.inf, 2], [np.nan, 0, -np.inf], [5, 0, 0]])
    g = validate_graph(dense)
    assert g.to_scipy().toarray().tolist() == [[0, 0, 2], [0, 0, 0], [5, 0, 0]]
    kept = validate_graph(dense, infinity_null=False, nan_null=False)
    assert kept.n_edges == 5
    assert validate_graph(np.array([[1, 7], [7, 1]]), null_value=7).indices.tolist() == [0, 1]


def test_validate_graph_sums_sparse_duplicates_and_keeps_explicit_zeros():
    m = sp.csr_matrix((np.array([1.0, 2.0, 0.0]), np.array([1, 1, 0]), np.array([0, 2, 3])),
                      shape=(2, 2))
    g = validate_graph(m)
    assert g.indices.tolist() == [1, 0] and g.weights.tolist() == [3.0, 0.0]


def test_persistent_grids_are_cached_per_device(monkeypatch):
    from morphgpu.bfs.gpu import modules

    made = []
    monkeypatch.setattr(modules.barrier, "persistent_kernel",
                        lambda *a, **k: made.append(object()) or made[-1])
    modules._persistent_grid_on.cache_clear()
    modules._direction_grid_on.cache_clear()
    layout = modules.layout_key({"MG_VID": "int"})
    try:
        for device_id in (0, 1, 0):
            monkeypatch.setattr(modules, "current_device", lambda d=device_id: d)
            made_p = modules.persistent_grid(layout, 0)
            made_d = modules.direction_grid(layout)
            assert made_p is not made_d
        assert len(made) == 4  # device 0's pair came from the cache the second time
    finally:
        modules._persistent_grid_on.cache_clear()
        modules._direction_grid_on.cache_clear()


def test_nvcc_mirror_has_cupys_ftz_flag(tmp_path):
    cmd = kernels.nvcc_command(kernels.kernel_files()[0], tmp_path / "x.ptx")
    assert "-ftz=true" in cmd
    assert cmd.index("-ftz=true") > cmd.index("-std=c++17")


# ----------------------------------------------------------------------------- CNF reading
CNF_TEXT = "c head\np cnf 4 3\n1 -2 0\nc middle\n3\n  4 0 -1 2\n-3 0\n%\n0\n"


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_cnf_reader_comments_spanning_clauses_percent_and_line_endings(ending):
    cnf = parse_dimacs(CNF_TEXT.replace("\n", ending))
    assert cnf.clauses() == [[1, -2], [3, 4], [-1, 2, -3]]


@pytest.mark.parametrize("compress", [gzip.compress, lzma.compress, bz2.compress])
def test_cnf_reader_compressed(tmp_path, compress):
    path = write(tmp_path, "f.cnf.x", compress(CNF_TEXT.encode()))
    assert read_dimacs(path).clauses() == [[1, -2], [3, 4], [-1, 2, -3]]


def test_cnf_reader_corrupt_compressed_stream(tmp_path):
    path = write(tmp_path, "f.cnf.gz", gzip.compress(CNF_TEXT.encode())[:20])
    with pytest.raises(CNFFormatError, match=r"f\.cnf\.gz: compressed stream"):
        read_dimacs(path)


@pytest.mark.parametrize("text, where", [
    ("p cnf 3 1\n1 - 2 0\n", "<string>:2: '-'"),
    ("p cnf 3 1\n1 2 -\n", "<string>:2: '-'"),
    ("p cnf 3 1\n1 2.5 0\n", "<string>:2: '2.5'"),
    ("p cnf 3 1\n1 9223372036854775808 0\n", "<string>:2: literal 9223372036854775808"),
    ("p cnf 3 1\n1 -9223372036854775809 0\n", "<string>:2: literal -9223372036854775809"),
    ("p cnf 3 1\n1 0x2 0\n", "<string>:2: '0x2'"),
    ("p cnf 3 1\n1 1_0 0\n", "<string>:2: '1_0'"),
    ("p cnf 3 2\n1 0\n\nc x\np cnf 3 2\n", "<string>:5: a second 'p' header"),
])
def test_cnf_reader_bad_tokens_name_the_line(text, where):
    with pytest.raises(CNFFormatError) as info:
        parse_dimacs(text)
    assert str(info.value).startswith(where)


def test_cnf_reader_mixed_widths_and_no_final_zero():
    cnf = parse_dimacs("p cnf 5 4\n1 2 3 0 -4 0\n0\n5 -1 0")
    assert cnf.clauses() == [[1, 2, 3], [-4], [], [5, -1]]
    # Without its 0 the last clause may be a file cut short (issue 23): an error, naming
    # the line, rather than a formula that may have lost literals.
    with pytest.raises(CNFFormatError, match="<string>:4: the last clause has no terminating"):
        parse_dimacs("p cnf 5 4\n1 2 3 0 -4 0\n0\n5 -1")


def test_cnf_writer_formats_like_python():
    from morphgpu.sp.cnf import format_integers

    values = np.array([0, 7, -7, 10, -100, 99999, 2**31, -(2**31), 2**63 - 1, -(2**63)],
                      dtype=np.int64)
    seps = np.array([ord(c) for c in " \n" * 5], dtype=np.uint8)
    expected = "".join(f"{v}{chr(s)}" for v, s in zip(values.tolist(), seps.tolist(),
                                                      strict=True))
    assert format_integers(values, seps).decode() == expected


@settings(max_examples=60, deadline=None)
@given(widths=st.lists(st.integers(0, 6), max_size=40), per_pass=st.integers(1, 5),
       seed=st.integers(0, 2**16))
def test_cnf_writer_passes_join_seamlessly(widths, per_pass, seed):
    """format_clauses writes FORMAT_CLAUSES_PER_PASS clauses a pass: any pass size gives
    the one-line-per-clause text Python's own formatting gives (empty clauses included)."""
    from morphgpu.sp import cnf as cnf_module

    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)
    literals = rng.integers(1, 10**6, offsets[-1]) * rng.choice([-1, 1], offsets[-1])
    expected = "".join(
        " ".join(str(v) for v in [*literals[a:b].tolist(), 0]) + "\n"
        for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True))
    before = cnf_module.FORMAT_CLAUSES_PER_PASS
    cnf_module.FORMAT_CLAUSES_PER_PASS = per_pass
    try:
        text = cnf_module.format_clauses(offsets, literals).decode()
    finally:
        cnf_module.FORMAT_CLAUSES_PER_PASS = before
    assert text == expected


@pytest.mark.parametrize("suffix", [".cnf", ".cnf.gz", ".cnf.xz", ".cnf.bz2"])
def test_cnf_write_read_round_trip(tmp_path, suffix):
    cnf = satsp.random_ksat(50, 3, ratio=4.0, seed=2)
    mixed = CNF.from_clauses(cnf.clauses()[:10] + [[], [5], [1, -2, 3, -4, 5, -6]], n_vars=50)
    for f in (cnf, mixed):
        path = tmp_path / ("f" + suffix)
        satsp.write_dimacs(f, path, comment="round trip")
        back = read_dimacs(path)
        assert back.n_vars == f.n_vars and back.clauses() == f.clauses()


def test_siblings_other_entry_points_refuse_sizes_that_cannot_fit(monkeypatch):
    monkeypatch.setattr(backend, "host_available_bytes", lambda: 2**34)
    with pytest.raises(ConstraintFormatError, match=r"from_lists\('constraints'\): n_vars: "
                                                    r"declares numVars=4611686018427387904"):
        pta.constraints.from_lists(2**62, [])
    with pytest.raises(ValueError, match="random_mesh: n_points: asks for 1000000000000 points"):
        dmr.random_mesh(10**12)
    with pytest.raises(ValueError, match="n_points: expected an integer"):
        dmr.random_mesh(2.5)


def test_refine_refuses_features_below_double_resolution():
    far = np.array([[0, 0], [0.25, 0], [0, 0.25], [9.2e18, 0.1]])
    with pytest.raises(ValueError, match=r"shortest edge \(0\.25\) is .* of the extent"):
        dmr.refine({"vertices": far}, device="cpu")


def test_refine_stops_before_the_mesh_outgrows_host_memory(monkeypatch):
    # Where no estimate is known upfront (small input angles, extreme aspect ratios) the
    # growth itself is bounded; here a small "available" memory stands in for a huge mesh.
    monkeypatch.setattr(backend, "host_available_bytes", lambda: 2**20)
    with pytest.raises(RuntimeError, match=r"dmr\.refine: the mesh has grown to \d+ triangles "
                                           r"after \d+ rounds .* stopped"):
        dmr.refine({"vertices": SQUARE}, max_area=1e-5, device="cpu")


@pytest.mark.parametrize("markers", [[1.5] * 5, [2**40] * 5])
def test_refine_refuses_markers_it_would_truncate(markers):
    with pytest.raises(ValueError, match=r"mesh\['vertex_markers'\]: markers must be integers"):
        dmr.refine({"vertices": SQUARE, "vertex_markers": markers}, device="cpu")


def test_pta_from_lists_refuses_float_ids():
    with pytest.raises(ConstraintFormatError, match=r"constraint 0 must be .* integers"):
        pta.constraints.from_lists(3, [(0, 1.7, 2)])
    with pytest.raises(ConstraintFormatError, match="obj_size: ids must be integers"):
        pta.constraints.from_lists(2, [(0, 0, 1)], obj_size=[1.5, 1.0])


@pytest.mark.parametrize("arg, value", [("max_iterations", 2.7), ("local_search_rounds", "9"),
                                        ("epsilon", None), ("damping", True)])
def test_solve_refuses_arguments_of_the_wrong_type(arg, value):
    cnf = satsp.random_ksat(10, 3, ratio=2.0, seed=0)
    with pytest.raises(ValueError, match=f"solve: {arg} must be"):
        satsp.solve(cnf, device="cpu", **{arg: value})


def test_resolution_message_survives_an_underflowing_squared_length():
    # the check compares squared lengths; where one underflows to 0 the message's numbers
    # are recomputed in full (1e-170 squared is below the smallest double)
    tiny = np.array([[0, 0], [1e-170, 0], [0, 1.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match=r"shortest edge \(1e-170\) is .* of the extent"):
        dmr.refine({"vertices": tiny}, device="cpu")


def test_prepare_reports_its_parts():
    _, stats = dmr.refine_with_stats(dmr.random_mesh(50, seed=1), device="cpu")
    assert set(stats["prepare_parts"]) == {"validate", "triangulate", "mesh", "checks",
                                           "layout"}
