"""3-phase conflict resolution: winners are disjoint, every round with work has a winner,
and the NumPy and GPU paths pick the same winners (they run the same phases)."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from morphgpu import backend, conflict, kernels


@st.composite
def neighbourhoods(draw, max_claimants=40, max_elements=30, max_hood=6):
    """CSR neighbourhoods over a small element range, so they overlap a lot (and some
    hoods are empty or hold an element twice)."""
    n_elements = draw(st.integers(1, max_elements))
    hoods = draw(
        st.lists(
            st.lists(st.integers(0, n_elements - 1), max_size=max_hood),
            max_size=max_claimants,
        )
    )
    offsets = np.zeros(len(hoods) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(h) for h in hoods])
    elements = np.array([e for h in hoods for e in h], dtype=np.int64)
    return offsets, elements, hoods, n_elements


def expected_winners(hoods, marks):
    """Independent rule, in plain Python: a claimant wins iff no other claimant touching
    any of its elements has a higher mark."""
    best = {}
    for h, m in zip(hoods, marks):
        for e in h:
            best[e] = max(best.get(e, 0), m)
    return [all(best[e] == m for e in h) for h, m in zip(hoods, marks)]


def assert_disjoint(hoods, winners):
    owner = {}
    for i, (h, won) in enumerate(zip(hoods, winners)):
        if not won:
            continue
        for e in set(h):
            assert e not in owner, f"winners {owner[e]} and {i} share element {e}"
            owner[e] = i


def python_priority(round_, claimant):
    """mg::claim_priority written out with Python integers (no NumPy)."""
    m64, m32 = 2**64 - 1, 2**32 - 1
    x = ((round_ * 0x9E3779B97F4A7C15) & m64) ^ ((claimant + 0x632BE59BD9B4E019) & m64)
    x ^= x >> 32
    h = x & m32
    h ^= h >> 16
    h = (h * 0x7FEB352D) & m32
    h ^= h >> 15
    h = (h * 0x846CA68B) & m32
    h ^= h >> 16
    return h


@given(neighbourhoods(), st.integers(0, 2**20))
def test_claim_cpu_winners_disjoint_with_progress(case, round_):
    offsets, elements, hoods, n_elements = case
    winners = conflict.claim(offsets, elements, n_elements=n_elements, round=round_)
    assert winners.dtype == bool and winners.shape == (len(hoods),)
    assert_disjoint(hoods, winners)
    if any(hoods):
        assert winners.any(), "a round with work must have a winner"
    marks = [(python_priority(round_, i) << 32) | i for i in range(len(hoods))]
    assert list(winners) == expected_winners(hoods, marks)
    for h, won in zip(hoods, winners):
        if not h:
            assert won  # an empty claim conflicts with nobody


def test_claim_on_both_sides(device, xp):
    rng = np.random.default_rng(7)
    n_claimants, n_elements, hood = 5000, 2000, 5
    hoods = [rng.choice(n_elements, size=rng.integers(0, hood + 1)) for _ in range(n_claimants)]
    offsets = np.concatenate([[0], np.cumsum([h.size for h in hoods])])
    elements = np.concatenate(hoods).astype(np.int64)
    winners = conflict.claim(xp.asarray(offsets), xp.asarray(elements), round=3)
    assert backend.side_of(winners) == device
    winners = backend.to_host(winners)
    assert_disjoint([list(h) for h in hoods], winners)
    marks = [(python_priority(3, i) << 32) | i for i in range(n_claimants)]
    assert list(winners) == expected_winners([list(h) for h in hoods], marks)


def test_given_priorities_decide(device, xp):
    # Three hoods in a chain: 0-1 overlap, 1-2 overlap. Priorities 5, 1, 9: 0 and 2 win.
    offsets = xp.asarray(np.array([0, 2, 4, 6]))
    elements = xp.asarray(np.array([0, 1, 1, 2, 2, 3]))
    winners = conflict.claim(offsets, elements, xp.asarray(np.array([5, 1, 9])))
    assert list(backend.to_host(winners)) == [True, False, True]
    # Equal priorities: the higher claimant id wins each shared element, so 1 takes
    # element 1 from 0, and 2 takes element 2 from 1; only 2 holds its whole hood.
    winners = conflict.claim(offsets, elements, xp.asarray(np.array([4, 4, 4])))
    assert list(backend.to_host(winners)) == [False, False, True]


@given(neighbourhoods(max_claimants=30))
def test_serve_all_cpu(case):
    offsets, elements, hoods, n_elements = case
    check_serve_all(hoods, *conflict.serve_all(offsets, elements, n_elements=n_elements))


def check_serve_all(hoods, served, rounds):
    served = np.asarray(backend.to_host(served))
    assert (served >= 0).all(), "every claim is served"
    assert rounds <= max(1, len(hoods)) or not hoods
    for r in range(rounds):
        in_round = served == r
        assert in_round.any(), f"round {r} served nobody"
        assert_disjoint(hoods, in_round)


@pytest.mark.parametrize("mode", ["xiao-feng", "cooperative"])
def test_serve_all_persistent_kernel(device, xp, mode):
    """Device functions inside one persistent kernel, rounds until every claim is served."""
    rng = np.random.default_rng(11)
    n_claimants, n_elements = 20_000, 3_000
    hoods = [rng.choice(n_elements, size=rng.integers(1, 8)) for _ in range(n_claimants)]
    offsets = np.concatenate([[0], np.cumsum([h.size for h in hoods])])
    elements = np.concatenate(hoods).astype(np.int64)
    served, rounds = conflict.serve_all(xp.asarray(offsets), xp.asarray(elements), mode=mode)
    assert backend.side_of(served) == device
    check_serve_all([list(h) for h in hoods], served, rounds)


@pytest.mark.parametrize(
    "offsets, elements, kwargs, message",
    [
        ([1, 2], [0, 1], {}, "offsets must start at 0"),
        ([0, 2, 1], [0, 1], {}, "offsets must start at 0"),
        ([0, 3], [0, 1], {}, "end at len"),
        ([0, 2], [0, -1], {}, "non-negative"),
        ([0, 2], [0, 5], {"n_elements": 3}, "out of range"),
        ([0, 1, 2], [0, 1], {"priorities": [1]}, "one entry per claimant"),
        ([0, 1], [0], {"priorities": [2**33]}, "32 unsigned bits"),
        ([0, 1], [0.5], {}, "integers"),
        ([0, 1], [0], {"round": -1}, "round"),
    ],
)
def test_bad_input_is_a_value_error(device, offsets, elements, kwargs, message):
    priorities = kwargs.pop("priorities", None)
    if priorities is not None:
        priorities = backend.to_side(np.asarray(priorities), device)
    with pytest.raises(ValueError, match=message):
        conflict.claim(backend.to_side(np.asarray(offsets), device),
                       backend.to_side(np.asarray(elements), device), priorities, **kwargs)


def test_numpy_hash_matches_python():
    ids = np.arange(0, 5000, 7)
    for r in (0, 1, 12345, 2**40 + 3):
        assert list(conflict.claim_priority(r, ids)) == [python_priority(r, int(i)) for i in ids]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_device_hash_matches_python(tmp_path):
    """mg::claim_priority is __host__ __device__: run it on the host through nvcc and
    compare with the Python reference, so the CPU path ranks claimants as kernels do."""
    src = tmp_path / "hash.cu"
    src.write_text(
        "#include <morphgpu/conflict.cuh>\n#include <cstdio>\n"
        "int main() { unsigned long long rs[] = {0ull, 1ull, 12345ull, (1ull << 40) + 3};\n"
        "  for (auto r : rs) for (unsigned long long i = 0; i < 100; i += 7)\n"
        '    printf("%u\\n", mg::claim_priority(r, i)); }\n'
    )
    exe = tmp_path / "hash"
    cmd = ["nvcc", "-std=c++17", f"-I{kernels.INCLUDE_DIR}", "-o", str(exe), str(src)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    printed = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    got = [int(x) for x in printed.split()]
    want = [python_priority(r, i) for r in (0, 1, 12345, 2**40 + 3) for i in range(0, 100, 7)]
    assert got == want
