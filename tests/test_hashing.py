"""morphgpu.hashing.uniform_floats: counter-based uniform floats, the same bits on the CPU
and the GPU (the GPU engines draw from it instead of cupy.random)."""

from __future__ import annotations

import numpy as np
import pytest

from morphgpu import backend, hashing


def test_uniform_floats_are_uniform_and_reproducible():
    u = hashing.uniform_floats(np, 200_000, 11)
    assert u.dtype == np.float32 and u.shape == (200_000,)
    assert 0.0 <= float(u.min()) and float(u.max()) < 1.0
    # Each of 20 bins holds 1/20 of the draws within a few standard deviations.
    counts = np.bincount((u * 20).astype(np.int64), minlength=20)
    assert np.all(np.abs(counts - 10_000) < 5 * np.sqrt(10_000))
    assert abs(float(np.corrcoef(u[:-1], u[1:])[0, 1])) < 0.01
    np.testing.assert_array_equal(u, hashing.uniform_floats(np, 200_000, 11))
    assert np.mean(u == hashing.uniform_floats(np, 200_000, 12)) < 0.001
    # a prefix of a longer draw is the shorter draw (counters, no state)
    np.testing.assert_array_equal(u[:1000], hashing.uniform_floats(np, 1000, 11))


@pytest.mark.gpu
def test_uniform_floats_same_bits_on_the_gpu():
    cp = backend.cupy_module()
    for seed in (0, 5, 2**64 - 1, 2**70):
        np.testing.assert_array_equal(hashing.uniform_floats(cp, 50_000, seed).get(),
                                      hashing.uniform_floats(np, 50_000, seed))


def test_mix64_inplace_is_mix64():
    z = np.random.default_rng(4).integers(0, 2**63, 1000, dtype=np.uint64) * np.uint64(2)
    z[:3] = [0, 1, 2**64 - 1]
    want = hashing.mix64(z)
    scratch = np.empty_like(z)
    hashing.mix64_inplace(z, scratch)
    np.testing.assert_array_equal(z, want)
