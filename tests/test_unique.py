"""morphgpu.unique.sorted_unique and run_starts against numpy.unique."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from morphgpu import backend
from morphgpu.unique import run_starts, sorted_unique


@given(hnp.arrays(st.sampled_from([np.int64, np.int32, np.uint64, np.uint8, np.bool_]),
                  hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=40)))
def test_sorted_unique_is_numpys_unique(a):
    got = sorted_unique(a)
    want = np.unique(a)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_floats_keep_numpys_rules():
    a = np.array([2.0, np.nan, 1.0, np.nan, 2.0])
    np.testing.assert_array_equal(sorted_unique(a), np.unique(a))  # one NaN, last


def test_does_not_change_its_input():
    a = np.array([3, 1, 3, 2])
    sorted_unique(a)
    np.testing.assert_array_equal(a, [3, 1, 3, 2])


@given(hnp.arrays(np.int64, st.integers(0, 60), elements=st.integers(-3, 3)))
def test_run_starts_marks_each_runs_first_entry(a):
    a = np.sort(a)
    first = run_starts(a)
    _, index, inverse = np.unique(a, return_index=True, return_inverse=True)
    assert first.dtype == bool and first.shape == a.shape
    np.testing.assert_array_equal(np.flatnonzero(first), index)
    np.testing.assert_array_equal(np.cumsum(first) - 1, inverse.ravel())


@pytest.mark.gpu
def test_run_starts_on_the_gpu_equals_the_host():
    cp = backend.cupy_module()
    a = np.sort(np.random.default_rng(2).integers(0, 50, 1000))
    for x in (a, a[:0], a[:1]):
        np.testing.assert_array_equal(cp.asnumpy(run_starts(cp.asarray(x))), run_starts(x))
