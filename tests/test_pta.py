"""Points-to analysis: hand-written sets, C programs, random sets against a naive solver,
malformed files, the solution writer, and ex against its reference (both devices)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from morphgpu import pta
from morphgpu.pta.constraints import ConstraintFormatError, ConstraintFormatWarning, from_lists

DATA = Path(__file__).parent / "data" / "pta"
AOF, COPY, LOAD, STORE, GEP = range(5)


def naive_solve(cs) -> list[set[int]]:
    """Chaotic iteration of the five rules exactly as the spec states them (independent of
    the solvers: Python sets, every constraint re-applied until nothing changes)."""
    rep = cs.rep.tolist()
    size = cs.obj_size.tolist()
    n = cs.n_vars
    pts: list[set[int]] = [set() for _ in range(n)]

    def field(o: int, off: int) -> int | None:
        t = o + off
        if (off == 0 or size[o] > off) and t < n:
            return t
        return None

    rows = list(zip(cs.kind.tolist(), cs.src.tolist(), cs.dst.tolist(), cs.offset.tolist()))
    changed = True
    while changed:
        changed = False
        for k, s, d, off in rows:
            before = len(pts[rep[d]]) if k != STORE else None
            if k == AOF:
                pts[rep[d]].add(s)
            elif k == COPY:
                pts[rep[d]] |= pts[rep[s]]
            elif k == LOAD:
                for o in list(pts[rep[s]]):
                    t = field(o, off)
                    if t is not None:
                        pts[rep[d]] |= pts[rep[t]]
            elif k == GEP:
                for o in list(pts[rep[s]]):
                    if size[o] > off and o + off < n:
                        pts[rep[d]].add(o + off)
            elif k == STORE:
                for o in list(pts[rep[d]]):
                    t = field(o, off)
                    if t is not None and t != 1:
                        b = len(pts[rep[t]])
                        pts[rep[t]] |= pts[rep[s]]
                        changed |= len(pts[rep[t]]) != b
            if before is not None and len(pts[rep[d]]) != before:
                changed = True
    return [pts[rep[v]] for v in range(n)]


def as_sets(sol, n: int) -> list[set[int]]:
    return [set(sol.points_to(v).tolist()) for v in range(n)]


# --------------------------------------------------------------------- hand-written sets
def test_hand_written_rules(device):
    # 2=&5, 3=&6 (object 6 has 3 fields: 6,7,8), 4=2 ; *4=3 (so pts(5)={6}); 9=*4 (={6});
    # 10=&3->2 via gep on 3 (field 8); 11=&9->5 dropped (size 3 <= 5); *12=3 with 12=&1 dropped.
    sizes = [1] * 13
    sizes[6], sizes[7], sizes[8] = 3, 2, 1
    cs = from_lists(13, [(AOF, 5, 2), (AOF, 6, 3), (COPY, 2, 4), (STORE, 3, 4), (LOAD, 4, 9),
                         (GEP, 3, 10, 2), (GEP, 9, 11, 5), (AOF, 1, 12), (STORE, 3, 12)],
                    obj_size=sizes)
    sol = pta.solve(cs, device=device)
    got = as_sets(sol, 13)
    assert got[2] == got[4] == {5}
    assert got[5] == {6} and got[9] == {6}
    assert got[10] == {8}
    assert got[11] == set()
    assert got[1] == set()  # the null object never receives a store
    assert got[12] == {1}
    assert sol.may_alias(2, 4) and not sol.may_alias(2, 3)
    assert got == naive_solve(cs)


def test_cycle_and_merge_map(device):
    # A copy cycle 2 -> 3 -> 4 -> 2 through a store and a load; 7 merged into 4 offline.
    cs = from_lists(9, [(AOF, 5, 2), (COPY, 2, 3), (AOF, 8, 6), (STORE, 3, 6), (LOAD, 6, 4),
                        (COPY, 4, 2), (AOF, 0, 4)],
                    rep=[0, 1, 2, 3, 4, 5, 6, 4, 8])
    got = as_sets(pta.solve(cs, device=device), 9)
    assert got[2] == got[3] == got[4] == got[7] == got[8] == {0, 5}
    assert got == naive_solve(cs)


def test_galois_text_form(device):
    sol = pta.solve(pta.load(DATA / "chain.galois.txt"), device=device)
    assert as_sets(sol, 8) == [set(), set(), set(), set(), {5}, {2, 3}, {3}, {2, 3}]


# --------------------------------------------------------------------- random sets
@st.composite
def constraint_sets(draw):
    n = draw(st.integers(3, 14))
    sizes = [1] * n
    for o in range(n):
        sizes[o] = draw(st.integers(0, min(3, n - o)))
    m = draw(st.integers(1, 30))
    rows = []
    for _ in range(m):
        k = draw(st.integers(0, 4))
        s = draw(st.integers(0, n - 1))
        d = draw(st.integers(0, n - 1))
        off = draw(st.integers(0, 2)) if k in (LOAD, STORE, GEP) else 0
        rows.append((k, s, d, off))
    rep = list(range(n))
    for y in range(1, n):
        if draw(st.integers(0, 5)) == 0:
            rep[y] = draw(st.integers(0, y - 1))
    return from_lists(n, rows, obj_size=sizes, rep=rep)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cs=constraint_sets())
def test_random_sets_match_naive_solver(cs, device):
    assert as_sets(pta.solve(cs, device=device), cs.n_vars) == naive_solve(cs)


def other_method(device: str) -> str:
    """The solver that ``method="auto"`` does not pick for small sets on ``device``: the
    NumPy dense iteration on the CPU, the round solver on the GPU."""
    return "dense" if device == "cpu" else "rounds"


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cs=constraint_sets())
def test_random_sets_other_method(cs, device):
    got = pta.solve(cs, device=device, method=other_method(device))
    assert as_sets(got, cs.n_vars) == naive_solve(cs)


def true_hcd_facts(cs, want: list[set[int]], pick: int) -> list[tuple[int, int]]:
    """Some HCD facts (y, x) that hold in the least solution ``want``: every object x points
    to, other than the null object, has y's set."""
    facts = [(y, x) for x in range(cs.n_vars) for y in range(cs.n_vars)
             if want[x] - {1} and all(want[o] == want[y] for o in want[x] - {1})]
    return [f for i, f in enumerate(facts) if (pick >> (i % 16)) & 1][:6]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cs=constraint_sets(), pick=st.integers(0, 2**16))
def test_random_sets_with_hcd_facts(cs, pick, device):
    """Merging by true HCD facts as soon as objects show up must not change the answer."""
    want = naive_solve(cs)
    with_facts = from_lists(cs.n_vars, list(zip(cs.kind, cs.src, cs.dst, cs.offset)),
                            obj_size=cs.obj_size, rep=cs.rep,
                            hcd_pairs=true_hcd_facts(cs, want, pick))
    assert as_sets(pta.solve(with_facts, device=device), cs.n_vars) == want
    got = pta.solve(with_facts, device=device, method=other_method(device))
    assert as_sets(got, cs.n_vars) == want


def merged_pointer_case():
    """A pointer m that gains an object o in the round an HCD fact (y, x) merges it into y,
    where y took o in an earlier round: m's load t = *m, now y's, must still see o (the
    round solver merges before it evaluates loads and stores, so m's delta has to move to
    y; without that t never points to o's pointee)."""
    y, m, o, x, z, w, q, r, s, t, p = range(2, 13)
    rows = [(AOF, o, y), (LOAD, y, s), (LOAD, m, t), (AOF, w, z), (AOF, m, w), (LOAD, z, x),
            (AOF, r, q), (AOF, o, r), (LOAD, q, m), (AOF, p, o)]
    plain = from_lists(13, rows)
    with_fact = from_lists(13, rows, hcd_pairs=[(y, x)])
    want = naive_solve(plain)
    assert want[t] == {p} and want[x] == {m} and want[m] == want[y]  # the fact holds
    return with_fact, want


def test_hcd_merge_of_a_pointer_that_gains_in_the_same_round(device):
    cs, want = merged_pointer_case()
    for method in ("auto", other_method(device)):
        assert as_sets(pta.solve(cs, device=device, method=method), cs.n_vars) == want


def test_solution_counts_facts_where_its_rows_are(device):
    """A GPU solution keeps its rows on the device and counts facts there: the count and
    the sizes equal the host's popcounts of the same rows (copied once, on request)."""
    cs, want = merged_pointer_case()
    sol = pta.solve(cs, device=device, method="rounds")
    assert sol.on_device == (device == "gpu")
    sizes, facts = sol.sizes(), sol.n_facts
    assert facts == sum(len(w) for w in want) == 10
    host = np.bitwise_count(sol.rows).sum(axis=1)[sol.row_of_var]
    assert sizes.tolist() == host.tolist() == [len(w) for w in want]
    assert as_sets(sol, cs.n_vars) == want


# --------------------------------------------------------------------- C front end
def _c_points_to(path: Path, device: str) -> dict[str, set[str]]:
    cs = pta.from_c(path)
    sol = pta.solve(cs, device=device)
    names = cs.var_names
    return {names[v]: {names[o] for o in sol.points_to(v)} for v in range(cs.n_vars)}


def test_c_function_pointers_heap_and_calls(device):
    pts = _c_points_to(DATA / "funcptr.c", device)
    assert pts["main::p"] == {"a"} and pts["main::q"] == {"b"}
    assert pts["main::r"] == {"a", "b"}
    assert pts["main::fp"] == {"id", "other"}
    assert pts["main::s"] == {"a", "b"}  # bound through the function pointer
    assert pts["other::y"] == {"a", "b"}  # other is only ever called through fp
    assert pts["main::t"] == {"a", "b"}
    assert pts["main::pp"] == {"main::p", "main::q"}
    assert pts["g"] == {"b"}
    assert pts["main::h"] == {"heap@funcptr.c:27:16"}


def test_c_structs_and_arrays(device):
    pts = _c_points_to(DATA / "structs.c", device)
    assert pts["main::n1"] == {"main::node_a"}
    assert pts["main::x"] == {"main::node_b"}
    assert pts["main::arr"] == {"main::arr[]"}
    assert pts["main::e"] == {"main::node_a"}


def test_c_syntax_error_names_the_line(tmp_path):
    bad = tmp_path / "bad.c"
    bad.write_text("int main(void) {\n  int *p = ;\n}\n")
    with pytest.raises(ValueError, match=r"bad\.c:2"):
        pta.from_c(bad)


# --------------------------------------------------------------------- malformed input
@pytest.mark.parametrize("name, where", [("bad_type", ":4"), ("bad_field", ":3")])
def test_malformed_galois_files(name, where):
    with pytest.raises(ConstraintFormatError, match=where):
        pta.load(DATA / f"{name}.galois.txt")


def _write_lsg(tmp_path: Path, nodes: str, constraints: str) -> Path:
    prefix = tmp_path / "prog"
    (tmp_path / "prog_nodes.txt").write_text(nodes)
    with gzip.open(tmp_path / "prog_constraints_after_hcd.txt.gz", "wt") as fh:
        fh.write(constraints)
    return prefix


def test_malformed_lsg_files(tmp_path):
    nodes = "4\n3\n0\n0,1,0\n1,1,0\n2,1,0\n3,1,0\n"
    ok = _write_lsg(tmp_path, nodes, "# counts\n1,1,0,0,0\n0,2,3,0,0\n1,3,2,1,0\n")
    sol = pta.solve(pta.load(ok), device="cpu")
    assert sol.points_to(3).tolist() == [2] and sol.points_to(2).tolist() == [2]
    bad_id = _write_lsg(tmp_path, nodes, "1,1,0,0,0\n0,2,3,0,0\n1,9,2,1,0\n")
    with pytest.raises(ConstraintFormatError, match=r"constraints_after_hcd\.txt\.gz:3"):
        pta.load(bad_id)
    bad_count = _write_lsg(tmp_path, nodes, "2,1,0,0,0\n0,2,3,0,0\n1,3,2,1,0\n")
    with pytest.raises(ConstraintFormatError, match="header counts 3"):
        pta.load(bad_count)
    # Address-of a variable above lastObjectVar: accepted with a warning (the spec's rule).
    with pytest.warns(ConstraintFormatWarning, match="above lastObjectVar=1"):
        cs = pta.load(_write_lsg(tmp_path, "4\n1\n0\n", "1,0,0,0,0\n0,3,2,0,0\n"))
    assert pta.solve(cs, device="cpu").points_to(2).tolist() == [3]


# The hand-worked solution of tests/data/pta/nonobject (lastObjectVar=4; variable 7 is not
# an object but 5 = &7): 6 = &3, 8 = &2; 11 = 5 (so {7}); *5 = 8 stores {2} into 7;
# 10 = *11 loads pts(7) = {2}; *10 = 6 stores {3} into 2; 9 = &5->1 and 9 = &11->0 go
# through 7, of size 0, and add nothing; 9 = &6->1 adds field 4 of object 3.
NONOBJECT_SETS = [set(), set(), {3}, set(), set(), {7}, {3}, {2}, {2}, {4}, {2}, {7}]


@pytest.mark.parametrize("method", ["auto", "dense", "rounds"])
def test_address_of_a_non_object(device, method):
    with pytest.warns(ConstraintFormatWarning, match="variable 7"):
        cs = pta.load(DATA / "nonobject")
    assert cs.last_object == 4 and cs.obj_size[7] == 0
    sol = pta.solve(cs, device=device, method=method)
    assert as_sets(sol, cs.n_vars) == NONOBJECT_SETS
    assert naive_solve(cs) == NONOBJECT_SETS


def test_sizes_above_last_object_are_zero(tmp_path):
    """The reference sizes only ids 0..lastObjectVar: a size the nodes file gives a
    variable above it is dropped (with a warning), so the gep 9 = &5->1 through 7 still
    adds nothing. Built by hand, such a set is refused."""
    nodes = (DATA / "nonobject_nodes.txt").read_text().replace("\n7,0,0\n", "\n7,2,0\n")
    prefix = _write_lsg(tmp_path, nodes,
                        (DATA / "nonobject_constraints_after_hcd.txt").read_text())
    with pytest.warns(ConstraintFormatWarning) as caught:
        cs = pta.load(prefix)
    assert any("given a size (the first: 7)" in str(w.message) for w in caught)
    assert cs.obj_size[7] == 0
    assert as_sets(pta.solve(cs, device="cpu"), cs.n_vars) == NONOBJECT_SETS
    with pytest.raises(ConstraintFormatError, match="variable 3 above lastObjectVar=2 has size 1"):
        from_lists(4, [], obj_size=[1, 1, 1, 1], last_object=2)
    assert from_lists(4, [], last_object=2).obj_size.tolist() == [1, 1, 1, 0]


def test_bad_arguments():
    cs = from_lists(3, [(AOF, 2, 1)])
    with pytest.raises(ValueError, match="device"):
        pta.solve(cs, device="tpu")
    sol = pta.solve(cs, device="cpu")
    with pytest.raises(ValueError, match="outside"):
        sol.points_to(3)
    with pytest.raises(ValueError):
        from_lists(3, [(AOF, 2, 5)])


# --------------------------------------------------------------------- writer and reference
def test_writer_round_trip(tmp_path, device):
    cs = from_lists(6, [(AOF, 2, 3), (COPY, 3, 4), (AOF, 5, 4)])
    sol = pta.solve(cs, device=device)
    out = tmp_path / "soln.txt.gz"
    sol.write(out)
    ref = pta.read_solution(out)
    assert not sol.differences(ref)
    other = pta.solve(from_lists(6, [(AOF, 2, 3)]), device="cpu")
    assert other.differences(ref)  # the comparison can fail


def test_writer_lists_each_distinct_set_once(tmp_path):
    # 3 and 4 get {2} from separate rows (no copy cycle merges them); 0, 1, 2, 5 are empty.
    cs = from_lists(6, [(AOF, 2, 3), (AOF, 2, 4), (AOF, 5, 1)])
    sol = pta.solve(cs, device="cpu")
    assert sol.row_of_var[3] != sol.row_of_var[4]
    out = tmp_path / "soln.txt"
    sol.write(out)
    assert out.read_text() == "6\n[0, 2, 5] => []\n[1] => [5]\n[3, 4] => [2]\n"
    assert sol.differences_from_file(out) == []


def test_writer_survives_hash_collisions(tmp_path, monkeypatch):
    from morphgpu.pta import solution  # noqa: PLC0415

    cs = from_lists(6, [(AOF, 2, 3), (AOF, 2, 4), (AOF, 5, 1)])
    sol = pta.solve(cs, device="cpu")
    monkeypatch.setattr(solution, "mix64", lambda x: x & 0)  # every row hashes alike
    sol.write(tmp_path / "soln.txt")
    assert (tmp_path / "soln.txt").read_text() == \
        "6\n[0, 2, 5] => []\n[1] => [5]\n[3, 4] => [2]\n"


def test_ex_written_as_the_reference(shared, tmp_path):
    """The reference's lines exactly (sorted: its line order is its writer's own)."""
    prefix = shared("data", "pta", "ex_nodes.txt.gz").with_name("ex")
    ref_path = shared("data", "pta", "ex_correct_soln_001.txt.gz")
    sol = pta.solve(pta.load(prefix), device="cpu")
    sol.write(tmp_path / "ex_soln.txt.gz")
    with gzip.open(tmp_path / "ex_soln.txt.gz", "rb") as fh:
        ours = fh.read().split(b"\n")
    with gzip.open(ref_path, "rb") as fh:
        ref = fh.read().split(b"\n")
    assert ours[0] == ref[0] == b"11078" and sorted(ours) == sorted(ref)
    assert sol.differences_from_file(ref_path) == []
    assert sol.differences_from_file(tmp_path / "ex_soln.txt.gz") == []


def test_streaming_compare_finds_differences_and_format_errors(tmp_path):
    cs = from_lists(4, [(AOF, 2, 3), (AOF, 1, 0)])
    sol = pta.solve(cs, device="cpu")
    path = tmp_path / "s.txt"
    path.write_text("4\n[1, 2] => []\n[0] => [1]\n[3] => [2]\n")
    assert sol.differences_from_file(path) == []
    path.write_text("4\n[1, 2] => []\n[0, 3] => [1]\n")
    assert sol.differences_from_file(path) == [
        "variable 3: 1 objects here, 1 in the reference; missing [1], extra [2]"]
    path.write_text("4\n[1, 2] => [3]\n[0] => [1]\n[3] => [2]\n")  # 3: never pointed to
    assert [d.split(":")[0] for d in sol.differences_from_file(path)] == \
        ["variable 1", "variable 2"]
    assert sol.differences_from_file(path, limit=1)[-1] == "... 1 more variables differ"
    path.write_text("5\n[0, 1, 2, 3, 4] => []\n")
    assert sol.differences_from_file(path) == ["numVars differ: 4 here, 5 in the reference"]
    path.write_text("4\n[1, 2] => []\n[0] => [1]\n")
    with pytest.raises(ConstraintFormatError, match="variable 3 is not listed"):
        sol.differences_from_file(path)
    path.write_text("4\n[1, 2] => []\n[0, 3] => [1]\n[2] => []\n")
    with pytest.raises(ConstraintFormatError, match=r"s\.txt:4: variable 2 is listed again"):
        sol.differences_from_file(path)


@pytest.mark.parametrize("method", ["auto", "dense", "rounds"])
def test_ex_matches_reference(shared, device, method):
    prefix = shared("data", "pta", "ex_nodes.txt.gz").with_name("ex")
    sol = pta.solve(pta.load(prefix), device=device, method=method)
    ref = pta.read_solution(shared("data", "pta", "ex_correct_soln_001.txt.gz"))
    assert sol.differences(ref) == []
    assert sol.n_facts == 43013
    dense_run = method == "dense" or (method == "auto" and device == "gpu")
    assert sol.stats["method"] == ("dense" if dense_run else "rounds")


def test_dense_method_limits(device, monkeypatch):
    """A program past the dense solver's size is refused by name, an unknown method too,
    and an iteration cap reached before the fixpoint is an error, not an answer."""
    from morphgpu.pta import dense  # noqa: PLC0415
    from morphgpu.pta.layout import build_layout  # noqa: PLC0415

    cs = pta.load(DATA / "chain.galois.txt")
    with pytest.raises(ValueError, match="method"):
        pta.solve(cs, device=device, method="sparse")
    lay = build_layout(cs)
    solver = dense.solve_numpy if device == "cpu" else dense.solve_gpu
    with pytest.raises(RuntimeError, match="no fixed point in 1 iteration"):
        solver(lay, max_iterations=1)
    assert solver(lay)[2]["rounds"] >= 2
    monkeypatch.setattr(dense, "DENSE_MAX_NODES", lay.n_nodes - 1)
    with pytest.raises(ValueError, match="at most"):
        pta.solve(cs, device=device, method="dense")
    assert pta.solve(cs, device=device).stats["method"] == "rounds"


# --------------------------------------------------------------------- command line
def test_cli_compares_with_the_reference(shared, capsys, tmp_path):
    import json

    from morphgpu import cli

    prefix = shared("data", "pta", "ex_nodes.txt.gz").with_name("ex")
    assert cli.main(["pta", str(prefix), "--device", "cpu", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["compare"]["identical"] is True and out["points_to_facts"] == 43013
    wrong = tmp_path / "empty_soln.txt"
    wrong.write_text(f"11078\n[{', '.join(map(str, range(11078)))}] => []\n")
    assert cli.main(["pta", str(prefix), "--device", "cpu", "--compare", str(wrong)]) == 1
    assert "identical=False" in capsys.readouterr().out


def test_progress_reports_rounds_and_facts(shared, monkeypatch, capsys):
    prefix = shared("data", "pta", "ex_nodes.txt.gz").with_name("ex")
    seen: list[dict] = []
    sol = pta.solve(pta.load(prefix), device="cpu", method="rounds", progress=seen.append)
    assert [r["round"] for r in seen] == list(range(1, sol.stats["rounds"] + 1))
    facts = [r["facts"] for r in seen]
    assert facts == sorted(facts) and facts[-1] == sol.n_facts == 43013
    assert seen[-1]["copy_edges"] == sol.stats["copy_edges"]

    from morphgpu import cli, report

    shown: list[str] = []
    monkeypatch.setattr(report.Progress, "__call__", lambda self, msg: shown.append(msg))
    monkeypatch.setenv("MORPHGPU_PROGRESS", "1")  # as if stderr were a terminal
    assert cli.main(["pta", str(prefix), "--device", "cpu"]) == 0
    assert shown and shown[-1] == (f"round {len(seen)}: 43013 points-to facts, "
                                   f"{seen[-1]['copy_edges']} copy edges")
    shown.clear()
    monkeypatch.setenv("MORPHGPU_PROGRESS", "0")  # stderr not a terminal: nothing counted
    assert cli.main(["pta", str(prefix), "--device", "cpu"]) == 0
    assert shown == []
    capsys.readouterr()


def test_cli_on_c_and_demo(capsys):
    from morphgpu import cli
    from morphgpu.pta.cli import demo

    assert cli.main(["pta", str(DATA / "structs.c"), "--device", "cpu"]) == 0
    assert "main::x=['main::node_b']" in capsys.readouterr().out
    assert demo("cpu")["valid"] is True


def test_cpu_path_refuses_a_plan_larger_than_host_memory(monkeypatch):
    # Lazily allocated NumPy zeros would otherwise be OOM-killed mid-solve, not raise.
    from morphgpu import backend

    monkeypatch.setattr(backend, "host_available_bytes", lambda: 1)
    with pytest.raises(MemoryError, match=r"points-to bit rows .* GiB of host memory"):
        pta.solve(pta.load(DATA / "chain.galois.txt"), device="cpu")


@pytest.mark.parametrize("rep", [[1, 0, 2], [0, 1, 3, 2], [1, 2, 3, 0], [1, 2, 1]])
def test_merge_map_cycles_are_errors(rep):
    # Even-length cycles used to collapse silently to "no merge" under pointer jumping.
    with pytest.raises(ConstraintFormatError, match="cycle"):
        from_lists(len(rep), [], rep=rep)
