"""morphgpu.unique.sorted_unique against numpy.unique."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from morphgpu.unique import sorted_unique


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
