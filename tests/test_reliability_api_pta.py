"""Reliability of the points-to wing's public arguments (solve, load).

Bad arguments give a ValueError naming the argument; the constraint set is never
changed by a solve, and both sides give the least solution.
"""

from __future__ import annotations

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
