"""morphgpu.arguments: the shared checks of integer, real and seed arguments."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from morphgpu import arguments


@pytest.mark.parametrize("value", [True, False, np.bool_(True), np.bool_(False)])
def test_bools_are_refused_everywhere(value):
    assert not arguments.is_integer(value)
    assert not arguments.is_real(value)
    with pytest.raises(ValueError, match="count"):
        arguments.integer(value, "count")
    with pytest.raises(ValueError, match="width"):
        arguments.real(value, "width")
    with pytest.raises(ValueError, match="seed"):
        arguments.seed(value)
    with pytest.raises(ValueError, match="seed"):
        arguments.seed(value, allow_none=True, allow_numpy=True)


@pytest.mark.parametrize("kind", [np.int8, np.int32, np.int64, np.uint16, np.uint64])
def test_numpy_integers_are_taken_as_python_ints(kind):
    out = arguments.integer(kind(7), "n", low=0, high=10)
    assert out == 7 and type(out) is int
    s = arguments.seed(kind(3))
    assert s == 3 and type(s) is int
    r = arguments.real(kind(5), "x")
    assert r == 5.0 and type(r) is float


@pytest.mark.parametrize("value", [1.5, "3", None, [1], np.float64(2.0)])
def test_non_integers_are_refused_by_name(value):
    with pytest.raises(ValueError, match="^n_parts must be an integer"):
        arguments.integer(value, "n_parts")


def test_integer_bounds_and_templates():
    assert arguments.integer(0, "n", low=0) == 0
    assert arguments.integer(10, "n", high=10) == 10
    with pytest.raises(ValueError, match=r"n must be an integer in \[0, None\], got -1"):
        arguments.integer(-1, "n", low=0)
    with pytest.raises(ValueError, match=r"\[1, 4\], got 5"):
        arguments.integer(5, "n", low=1, high=4)
    with pytest.raises(KeyError, match="k: want >= 2, got 1"):
        arguments.integer(1, "k", low=2, error=KeyError,
                          message="{name}: want >= {low}, got {value!r}")
    with pytest.raises(ValueError, match="^k is not whole: 1.5$"):
        arguments.integer(1.5, "k", low=2, message="{name} is not whole: {value!r}",
                          range_message="{name} too small")
    with pytest.raises(ValueError, match="^k too small$"):
        arguments.integer(1, "k", low=2, message="{name} is not whole: {value!r}",
                          range_message="{name} too small")


@pytest.mark.parametrize("value", [math.nan, np.float32("nan"), np.nan])
def test_nan_is_refused_unless_allowed(value):
    with pytest.raises(ValueError, match="radius must be a real number"):
        arguments.real(value, "radius")
    assert math.isnan(arguments.real(value, "radius", allow_nan=True))


def test_real_bounds_finiteness_and_huge_ints():
    assert arguments.real(math.inf, "x") == math.inf
    with pytest.raises(ValueError, match="x"):
        arguments.real(math.inf, "x", finite=True)
    with pytest.raises(ValueError, match="x"):
        arguments.real(-0.5, "x", low=0.0)
    with pytest.raises(ValueError, match="x"):
        arguments.real(1.5, "x", high=1.0)
    with pytest.raises(ValueError, match="x"):
        arguments.real(10**400, "x")  # float() would raise OverflowError
    with pytest.raises(ValueError, match="x"):
        arguments.real("0.5", "x")


def test_seed_variants():
    assert arguments.seed(0) == 0
    for bad in (-1, 1.5, "x", None):
        with pytest.raises(ValueError, match="^seed must be a non-negative integer"):
            arguments.seed(bad)
    assert arguments.seed(None, allow_none=True) is None
    g = np.random.default_rng(1)
    ss = np.random.SeedSequence(2)
    assert arguments.seed(g, allow_numpy=True) is g
    assert arguments.seed(ss, allow_numpy=True) is ss
    with pytest.raises(ValueError, match="seed"):
        arguments.seed(g)
    with pytest.raises(ValueError, match="^rng_seed must be"):
        arguments.seed(-1, "rng_seed")


def test_generator_names_the_seed_and_quotes_numpy():
    assert isinstance(arguments.generator(3), np.random.Generator)
    with pytest.raises(ValueError, match=r"^seed: expected a non-negative integer, got -1 \("):
        arguments.generator(-1)
    with pytest.raises(ValueError, match="^my_seed: expected"):
        arguments.generator(1.5, "my_seed")


@given(st.one_of(st.integers(), st.floats(allow_nan=True), st.booleans(), st.none(),
                 st.text(max_size=3)),
       st.integers(-50, 50), st.integers(-50, 50))
def test_integer_takes_exactly_the_ints_in_range(value, low, high):
    ok = type(value) is int and low <= value <= high
    if ok:
        assert arguments.integer(value, "v", low=low, high=high) == value
    else:
        with pytest.raises(ValueError, match="^v must be an integer"):
            arguments.integer(value, "v", low=low, high=high)
