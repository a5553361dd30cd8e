"""Worklists: the NumPy twins (CPU), and on the GPU the prefix-sum enqueue (every item
exactly once, one reservation per block), block scans, local and shared-memory queues."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from morphgpu import backend, kernels, worklist

PROBE = "kernels/worklist.cu"
BLOCK = 256


@given(st.integers(0, 10_000), st.integers(1, 3000))
def test_thread_ranges_partition_evenly(n, threads):
    begin, end = worklist.thread_ranges(n, threads)
    sizes = end - begin
    assert begin[0] == 0 and end[-1] == n
    assert (begin[1:] == end[:-1]).all(), "ranges are contiguous and in thread order"
    assert sizes.min() >= 0 and sizes.max() - sizes.min() <= 1
    assert sizes.sum() == n


@given(st.lists(st.integers(0, 1000), max_size=300))
def test_exclusive_sum(values):
    prefix, total = worklist.exclusive_sum(np.array(values, dtype=np.int64))
    running = 0
    for v, p in zip(values, prefix):
        assert p == running
        running += v
    assert total == running


@given(
    st.lists(st.integers(0, 9), min_size=1, max_size=500),
    st.sampled_from([32, 64, 256]),
    st.integers(0, 100),
    st.randoms(use_true_random=False),
)
def test_reserve_slots_are_disjoint_and_dense(counts, block, tail, rnd):
    n_blocks = -(-len(counts) // block)
    order = list(range(n_blocks))
    rnd.shuffle(order)
    first = worklist.reserve_slots(np.array(counts), block, tail, order)
    slots = [f + k for f, c in zip(first, counts) for k in range(c)]
    assert sorted(slots) == list(range(tail, tail + sum(counts)))


def test_global_queue_grows_when_pushes_overflow(xp):
    q = worklist.GlobalQueue(4, xp=xp)
    q.tail[0] = 9  # a kernel tried to push 9 items
    assert q.overflowed()
    assert q.grow_to_fit()
    assert q.capacity >= 9 and q.pushed() == 0
    assert not q.grow_to_fit()


def _launch(name, grid, args):
    kernels.get_kernel(PROBE, name, defines={"WL_BLOCK": BLOCK})((grid,), (BLOCK,), args)


def _hash(codes, salt):
    """item_hash of worklist.cu with NumPy uint64 arithmetic (an independent rewrite)."""
    with np.errstate(over="ignore"):
        x = (np.asarray(codes, dtype=np.uint64) + np.uint64(salt)) * np.uint64(0x9E3779B97F4A7C15)
        x ^= x >> np.uint64(29)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(32)
    return x & np.uint64(0xFFFFFFFF)


@pytest.mark.gpu
@pytest.mark.parametrize("blocks", [1, 7, 300])
def test_block_reserve_one_run_per_block(blocks):
    import cupy as cp

    calls, max_per_thread, salt = 3, 5, 12345
    capacity = calls * blocks * BLOCK * max_per_thread
    queue = cp.full(capacity, -1, dtype=cp.int64)
    tail = cp.zeros(1, dtype=cp.uint64)
    _launch("reserve_push", blocks,
            (np.int32(calls), np.int32(max_per_thread), np.uint32(salt), queue, tail,
             np.uint64(capacity)))
    n = int(tail.get()[0])
    items = queue.get()[:n]
    assert (queue.get()[n:] == -1).all()
    # Every item exactly once: the expected items rebuilt from the per-thread counts.
    codes = np.arange(calls * blocks * BLOCK)
    counts = (_hash(codes, salt) % np.uint64(max_per_thread + 1)).astype(np.int64)
    want = np.repeat(codes * 64, counts) + (
        np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    )
    assert np.array_equal(np.sort(items), np.sort(want))
    # One reservation per (call, block): its items form one contiguous run of the queue,
    # ordered by thread, so the number of runs is the number of non-empty reservations.
    code = items // 64
    run_id = code // BLOCK
    runs = np.split(np.arange(n), np.flatnonzero(np.diff(run_id)) + 1)
    assert len(runs) == np.unique(run_id).size, "a block's items are split: per-item atomics?"
    for r in runs:
        assert (np.diff(items[r]) > 0).all()


@pytest.mark.gpu
def test_block_exclusive_sum_matches_numpy():
    import cupy as cp

    rng = np.random.default_rng(3)
    n = 50_000
    values = rng.integers(-(2**40), 2**40, size=n)
    blocks = -(-n // BLOCK)
    prefix = cp.zeros(n, dtype=cp.int64)
    totals = cp.zeros(blocks, dtype=cp.int64)
    _launch("block_scan", blocks, (cp.asarray(values), np.int64(n), prefix, totals))
    padded = np.zeros(blocks * BLOCK, dtype=np.int64)
    padded[:n] = values
    per_block = padded.reshape(blocks, BLOCK)
    want = (np.cumsum(per_block, axis=1) - per_block).ravel()[:n]
    assert (prefix.get() == want).all()
    assert (totals.get() == per_block.sum(axis=1)).all()


@pytest.mark.gpu
@pytest.mark.parametrize("capacity_share", [1.0, 0.3])
def test_local_and_block_worklists_push_every_item_once(capacity_share):
    """Items kept by a hash go through LocalWorklist -> BlockWorklist (spilling when the
    small shared queue is full) -> the global queue; a queue too small is reported,
    grown and the round redone."""
    import cupy as cp

    n, blocks, salt = 200_003, 40, 99
    owner = cp.full(n, -1, dtype=cp.int64)
    queue = worklist.GlobalQueue(int(n * 0.7 * capacity_share), xp=cp)
    overflow = cp.zeros(1, dtype=cp.int32)
    for _attempt in range(3):
        overflow.fill(0)
        _launch("local_block_push", blocks,
                (np.int64(n), np.uint32(salt), owner, *queue.kernel_args(), overflow))
        if not queue.grow_to_fit():
            break
        assert int(overflow.get()[0]) == 1
    assert int(overflow.get()[0]) == 0
    items = backend.to_host(queue.contents())
    want = np.flatnonzero(_hash(np.arange(n), salt) % np.uint64(3) != 0)
    assert np.array_equal(np.sort(items), want)
    begin, end = worklist.thread_ranges(n, blocks * BLOCK)
    expected_owner = np.repeat(np.arange(blocks * BLOCK), end - begin)
    assert (owner.get() == expected_owner).all()
