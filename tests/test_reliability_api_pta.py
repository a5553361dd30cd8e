"""Reliability of the points-to wing's public arguments (solve, load, from_lists).

Bad arguments give a ValueError naming the argument; the constraint set is never
changed by a solve, and both sides give the least solution.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_pta import as_sets, naive_solve

from morphgpu import pta

DEVICES = ["cpu", "auto"]


def _arrays(cs):
    return {k: v.copy() for k, v in vars(cs).items() if isinstance(v, np.ndarray)}


@pytest.mark.parametrize("device", DEVICES)
def test_progress_must_be_callable(device):
    # "'int' object is not callable" at the first round before
    cs = pta.from_lists(4, [(0, 0, 1), (1, 1, 2)])
    with pytest.raises(ValueError, match="progress must be a callable"):
        pta.solve(cs, device=device, progress=5)
    rounds = []
    pta.solve(cs, device="cpu", method="rounds", progress=rounds.append)
    assert rounds and all("round" in r for r in rounds)


@pytest.mark.parametrize("source", ["", [1, 2], ["", "x.c"], [None]])
def test_load_names_bad_paths(source):
    # pathlib's "PosixPath('.') has an empty name" / "expected str, bytes or os.PathLike
    # object, not int" before
    with pytest.raises(ValueError, match="load: source"):
        pta.load(source)
    with pytest.raises(ValueError, match="load: source"):
        pta.solve(source, device="cpu")


@pytest.mark.parametrize("bad", [None, 5, {}, b"x"])
def test_solve_refuses_non_constraints(bad):
    with pytest.raises(ValueError, match="constraints must be a ConstraintSet or a path"):
        pta.solve(bad, device="cpu")


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"method": "x"}, "method"), ({"method": None}, "method"),
    ({"barrier_mode": "x"}, "barrier_mode"), ({"device": "GPU"}, "device"),
    ({"device": None}, "device"), ({"device": ""}, "device"),
])
def test_bad_options_name_the_argument(kwargs, name):
    cs = pta.from_lists(3, [(0, 0, 1)])
    with pytest.raises(ValueError, match=name):
        pta.solve(cs, **{"device": "cpu", **kwargs})


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6).flatmap(lambda n: st.tuples(
    st.just(n),
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, n - 1), st.integers(0, n - 1),
                       st.integers(0, 1)).map(lambda r: r if r[0] > 1 else (*r[:3], 0)),
             max_size=10))), st.sampled_from(DEVICES), st.sampled_from(["auto", "rounds", "dense"]))
def test_solutions_are_least_and_leave_the_set_alone(case, device, method):
    n, rows = case
    cs = pta.from_lists(n, rows)
    before = _arrays(cs)
    sol = pta.solve(cs, device=device, method=method)
    after = _arrays(cs)
    assert before.keys() == after.keys()
    for k in before:
        np.testing.assert_array_equal(before[k], after[k])
    # the spec's rules, as test_pta's independent naive solver applies them (it knows the
    # spec's quirks, such as stores never writing variable 1)
    assert as_sets(sol, n) == naive_solve(cs)


# ----------------------------------------------------------------------------- from_lists
@pytest.mark.parametrize(("constraints", "kwargs", "match"), [
    # IndexError from the pointer jumping before
    ([(0, 0, 1)], {"rep": [9, 1, 2, 3]}, r"rep\[0\] is 9, outside 0\.\.3"),
    ([(0, 0, 1)], {"rep": [0, 1, 2, -1]}, r"rep\[3\] is -1"),
    ([(0, 0, 1)], {"rep": [0, 1]}, "rep must have n_vars=4 entries"),
    ([(0, 0, 1)], {"rep": [0.0, 1, 2, 3]}, "rep: ids must be integers"),
    ([(0, 0, 1)], {"rep": [True] * 4}, "rep: ids must be integers"),
    # padded to (0, 0, 0, 0) before: a dst nobody gave
    ([(0, 0)], {}, r"constraints: constraint 0 must be \(kind, src, dst"),
    ([(0, 0, 1), ()], {}, "constraints: constraint 1 must be"),
    ([(0, 0, 1), 5], {}, "constraints: constraint 1 must be"),
    ([(0, 0, 1), None], {}, "constraints: constraint 1 must be"),
    ([(0, 0, 1), "012"], {}, "constraints: constraint 1 must be"),
    ([(0, 0, 1, 0, 0)], {}, "constraints: constraint 0 must be"),
    (None, {}, "constraints must be an iterable"),
    (5, {}, "constraints must be an iterable"),
    ("001", {}, "constraints must be an iterable"),
    # read as the single pair (1, 2) before
    ([(0, 0, 1)], {"hcd_pairs": [1, 2]}, r"hcd_pairs must be a sequence of \(y, x\) pairs"),
    ([(0, 0, 1)], {"hcd_pairs": [[1, 2, 3, 0]]}, "hcd_pairs must be a sequence"),
    ([(0, 0, 1)], {"hcd_pairs": [[0, 1], [2, 7]]}, r"hcd_pairs\[1\]\[1\] is 7"),
    ([(0, 0, 1)], {"hcd_pairs": [[0.5, 1]]}, "hcd_pairs: ids must be integers"),
    # "slice indices must be integers" before
    ([(0, 0, 1)], {"last_object": 1.5}, "last_object must be an integer"),
    ([(0, 0, 1)], {"last_object": "2"}, "last_object must be an integer"),
    ([(0, 0, 1)], {"last_object": True}, "last_object must be an integer"),
    ([(0, 0, 1)], {"last_object": 4}, r"last_object 4 is outside -1\.\.3"),
])
def test_from_lists_names_the_bad_argument(constraints, kwargs, match):
    kept = {k: list(v) if isinstance(v, list) else v for k, v in kwargs.items()}
    with pytest.raises(ValueError, match=r"from_lists\('constraints'\): " + match):
        pta.from_lists(4, constraints, **kwargs)
    assert kwargs == kept


@st.composite
def _from_lists_args(draw):
    n = draw(st.integers(1, 8))
    row = st.tuples(st.integers(0, 4), st.integers(0, n - 1), st.integers(0, n - 1),
                    st.integers(0, 3))
    # copies carry no offset; a 3-tuple means offset 0
    rows = draw(st.lists(row.map(lambda r: (*r[:3], 0) if r[0] == 1 else r).flatmap(
        lambda r: st.sampled_from([r, r[:3]] if r[3] == 0 else [r])), max_size=10))
    # rep[v] <= v has no cycles; each v resolves to the end of its chain
    rep = draw(st.none() | st.tuples(*[st.integers(0, v) for v in range(n)]).map(list))
    pairs = draw(st.none() | st.lists(st.lists(st.integers(0, n - 1), min_size=2,
                                               max_size=2), max_size=4))
    last = draw(st.none() | st.integers(-1, n - 1))
    return n, rows, rep, pairs, last


@settings(max_examples=60, deadline=None)
@given(_from_lists_args(), st.sampled_from([list, tuple, np.array]))
def test_from_lists_valid_arguments_still_work(args, container):
    n, rows, rep, pairs, last = args
    kept = (list(rows), None if rep is None else list(rep),
            None if pairs is None else [list(p) for p in pairs])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pta.constraints.ConstraintFormatWarning)
        cs = pta.from_lists(
            n, rows, last_object=last,
            rep=None if rep is None else container(rep),
            hcd_pairs=None if pairs is None else container(pairs))
    assert (list(rows), rep, pairs) == kept  # the caller's lists are only read
    full = np.array([(*r, 0)[:4] for r in rows], dtype=np.int64).reshape(-1, 4)
    np.testing.assert_array_equal(cs.kind, full[:, 0])
    np.testing.assert_array_equal(cs.src, full[:, 1])
    np.testing.assert_array_equal(cs.dst, full[:, 2])
    np.testing.assert_array_equal(cs.offset, full[:, 3])
    last = n - 1 if last is None else last
    assert cs.n_vars == n and cs.last_object == last
    np.testing.assert_array_equal(cs.obj_size, np.arange(n) <= last)
    want = list(range(n))
    if rep is not None:
        for v in range(n):
            while rep[want[v]] != want[v]:
                want[v] = rep[want[v]]
    np.testing.assert_array_equal(cs.rep, want)
    if pairs is None:
        assert cs.hcd_pairs is None
    else:
        np.testing.assert_array_equal(cs.hcd_pairs, np.array(pairs, np.int64).reshape(-1, 2))
