"""Recycle allocators: slots never handed out twice, freed slots reused before fresh
ones, growth when exhausted (host-only and kernel-host); chunk lists grown in kernels."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from morphgpu import alloc, backend, kernels

KERNELS = "kernels/alloc.cu"

operations = st.lists(
    st.tuples(st.sampled_from(["alloc", "free"]), st.integers(0, 40), st.randoms()),
    max_size=25,
)


def run_slot_sequence(xp, capacity, ops):
    """Apply random allocs/frees and check the pool against a plain Python model."""
    pool = alloc.SlotPool(capacity, xp=xp, growth=1.5)
    live: set[int] = set()
    freed: list[int] = []  # freed and not yet reused, in freeing order
    ever = 0
    for op, k, rnd in ops:
        if op == "alloc":
            capacity_before = pool.capacity
            got = [int(s) for s in backend.to_host(pool.alloc(k))]
            assert len(got) == k and len(set(got)) == k
            assert not (set(got) & live), "a live slot was handed out again"
            # Recycled first: as many freed slots as there are, before any fresh one.
            assert len(set(got) & set(freed)) == min(k, len(freed))
            fresh = [s for s in got if s not in freed]
            assert all(s >= ever for s in fresh), "fresh slots come from above the high water"
            ever += len(fresh)
            available = capacity_before - (ever - len(fresh)) + len(freed)
            if k > available:
                assert pool.capacity > capacity_before, "an exhausted pool must grow"
            else:
                assert pool.capacity == capacity_before, "grew although slots were left"
            freed = [s for s in freed if s not in set(got)]
            live |= set(got)
            assert max(live, default=-1) < pool.capacity
        elif live:
            chosen = rnd.sample(sorted(live), min(k, len(live)))
            pool.free(xp.asarray(np.array(chosen, dtype=np.int64)))
            live -= set(chosen)
            freed += chosen
        assert pool.n_free == len(freed)
        assert pool.n_live == len(live)
    return pool


@given(st.integers(0, 50), operations)
def test_slot_pool_cpu(capacity, ops):
    run_slot_sequence(np, capacity, ops)


@pytest.mark.gpu
@settings(max_examples=15)
@given(st.integers(0, 50), operations)
def test_slot_pool_gpu(capacity, ops):
    import cupy as cp

    run_slot_sequence(cp, capacity, ops)


def test_free_rejects_bad_slots(xp):
    pool = alloc.SlotPool(8, xp=xp)
    slots = pool.alloc(4)
    with pytest.raises(ValueError, match="handed out"):
        pool.free(xp.asarray(np.array([5])))
    with pytest.raises(ValueError, match="twice"):
        pool.free(xp.asarray(np.array([1, 1])))
    pool.free(slots[:2])
    with pytest.raises(ValueError, match="already free"):
        pool.free(slots[1:3])
    with pytest.raises(ValueError, match="growth"):
        alloc.SlotPool(4, xp=xp, growth=1.0)


def test_host_only_growth_is_over_allocated(xp):
    pool = alloc.SlotPool(10, xp=xp, growth=2.0)
    assert not pool.grow_for(10)
    assert pool.grow_for(11) and pool.capacity == 20
    pool.alloc(20)
    assert pool.grow_for(25) and pool.capacity == 45  # the bound beats the factor


@pytest.mark.gpu
def test_kernel_host_growth_and_rerun():
    """Kernels ask for more slots than exist: the excess gets -1 and is counted; the host
    grows by the factor and reruns only the failed requests; no slot is handed out twice,
    and freed slots are recycled before the pool grows."""
    import cupy as cp

    pool = alloc.SlotPool(1000, xp=cp, growth=1.5)
    k = kernels.get_kernel(KERNELS, "slot_pool_alloc")
    n = 5000
    out = cp.empty(n, dtype=cp.int64)
    k((64,), (256,), (*pool.kernel_args(), np.int64(n), out))
    assert pool.after_round()
    got = out.get()
    assert (got >= 0).sum() == 1000 and (got == -1).sum() == 4000
    assert pool.capacity == 5000  # the 4000 unmet requests beat 1000 * 1.5
    failed = np.flatnonzero(got < 0)
    again = cp.empty(failed.size, dtype=cp.int64)
    k((64,), (256,), (*pool.kernel_args(), np.int64(failed.size), again))
    assert not pool.after_round()
    got[failed] = again.get()
    assert np.array_equal(np.sort(got), np.arange(5000))
    # Free 3000 in a kernel, then allocate 2000 in a kernel: all recycled, no growth.
    freed = cp.asarray(np.random.default_rng(1).permutation(5000)[:3000])
    kf = kernels.get_kernel(KERNELS, "slot_pool_free")
    kf((64,), (256,), (*pool.kernel_args(), freed, np.int64(3000)))
    assert not pool.after_round()
    reused = cp.empty(2000, dtype=cp.int64)
    k((64,), (256,), (*pool.kernel_args(), np.int64(2000), reused))
    assert not pool.after_round()
    reused = reused.get()
    assert np.unique(reused).size == 2000
    assert np.isin(reused, freed.get()).all()
    assert pool.capacity == 5000 and pool.n_free == 1000


@st.composite
def appends(draw):
    n_nodes = draw(st.integers(1, 6))
    pairs = draw(st.lists(st.tuples(st.integers(0, n_nodes - 1), st.integers(-5, 10**6)),
                          max_size=120))
    return n_nodes, pairs


@given(appends(), st.integers(1, 5), st.integers(1, 40))
def test_chunk_lists_cpu(case, chunk_size, n_chunks):
    n_nodes, pairs = case
    pool = alloc.ChunkPool(n_chunks, chunk_size, xp=np)
    head, size = pool.new_lists(n_nodes)
    nodes = np.array([p[0] for p in pairs], dtype=np.int64)
    values = np.array([p[1] for p in pairs], dtype=np.int32)
    stored = pool.append(head, size, nodes, values)
    chunks_needed = sum(-(-nodes.tolist().count(v) // chunk_size) for v in range(n_nodes))
    assert pool.exhausted() == (chunks_needed > n_chunks)
    if not pool.exhausted():
        assert stored.all()
        lists = pool.lists(head, size)
        for v in range(n_nodes):
            assert lists[v].tolist() == [val for node, val in pairs if node == v]
    else:
        # Out of chunks: grow and redo from empty lists; everything fits now.
        pool.grow(chunks_needed)
        head, size = pool.new_lists(n_nodes)
        pool.n_chunks_used[0] = 0
        assert pool.append(head, size, nodes, values).all()
        assert not pool.exhausted()
    assert len(set(_chunks_of(pool, head, size))) == len(_chunks_of(pool, head, size))


def _chunks_of(pool, head, size):
    """Every chunk reached from every list (a chunk in two lists would repeat)."""
    out = []
    head, size = backend.to_host(head), backend.to_host(size)
    nxt = backend.to_host(pool.next_chunk)
    for v in range(head.size):
        c = int(head[v])
        for _ in range(-(-int(size[v]) // pool.chunk_size)):
            out.append(c)
            c = int(nxt[c])
    return out


@pytest.mark.gpu
@pytest.mark.parametrize("chunk_size", [1, 8, 512])
def test_chunk_lists_grown_in_a_kernel(chunk_size):
    """100k concurrent appends to few nodes (many threads per node at once)."""
    import cupy as cp

    rng = np.random.default_rng(chunk_size)
    n_nodes, n = 50, 100_000
    nodes = rng.integers(0, n_nodes, size=n)
    values = rng.integers(0, 2**31 - 1, size=n).astype(np.int32)
    per_node = np.bincount(nodes, minlength=n_nodes)
    needed = int(np.sum(-(-per_node // chunk_size)))
    pool = alloc.ChunkPool(max(1, needed // 2), chunk_size, xp=cp)
    append = kernels.get_kernel(KERNELS, "chunk_append")
    capacities = [pool.n_chunks]
    for _attempt in range(6):
        head, size = pool.new_lists(n_nodes)
        pool.n_chunks_used.fill(0)
        ok = cp.zeros(n, dtype=cp.bool_)
        append((128,), (256,), (*pool.device_struct(), head, size, cp.asarray(nodes),
                                cp.asarray(values), np.int64(n), ok))
        if not pool.exhausted():
            break
        assert not ok.get().all(), "exhausted, yet every append claims success"
        pool.grow()
        capacities.append(pool.n_chunks)
    assert not pool.exhausted()
    assert len(capacities) > 1, "half the chunks needed must run out"
    assert all(b >= 2 * a for a, b in zip(capacities, capacities[1:])), "growth by the factor"
    assert ok.get().all()
    assert (size.get() == per_node).all()
    lists = pool.lists(head, size)
    for v in range(n_nodes):
        assert np.array_equal(np.sort(lists[v]), np.sort(values[nodes == v]))
    chunks = _chunks_of(pool, head, size)
    assert len(set(chunks)) == len(chunks) == needed
    # chunk_list_get on the device reads the same lists.
    offsets = np.concatenate([[0], np.cumsum(per_node)])
    out = cp.zeros(n, dtype=cp.int32)
    gather = kernels.get_kernel(KERNELS, "chunk_gather")
    gather((8,), (64,), (pool.data, pool.next_chunk, np.uint64(pool.n_chunks),
                         np.int32(chunk_size), head, cp.asarray(offsets), np.int64(n_nodes), out))
    assert np.array_equal(out.get(), np.concatenate(lists))


def test_grown_chunk_pool_hands_out_the_chunks_its_failed_requests_counted():
    # Four single-item lists in a pool of two: two appends fail but still bump the counter.
    pool = alloc.ChunkPool(2, 1, xp=np)
    head, size = pool.new_lists(4)
    stored = pool.append(head, size, np.arange(4), np.arange(4, dtype=np.int32))
    assert pool.exhausted() and stored.sum() == 2
    pool.grow()
    assert int(pool.n_chunks_used[0]) == 2  # only the chunks that hold data
    failed = np.flatnonzero(~stored)
    head[failed], size[failed] = -1, 0  # the caller restores the half-appended lists
    assert pool.append(head, size, failed, failed.astype(np.int32)).all()
    assert not pool.exhausted()
    assert [lst.tolist() for lst in pool.lists(head, size)] == [[0], [1], [2], [3]]


def test_page_pool_recycles_before_growing_and_keeps_pages(xp):
    pool = alloc.PagePool(4, 3, xp=xp, dtype=np.int32, weights_dtype=np.float64)
    first = backend.to_host(pool.plan_take(3))
    pool.commit_take(3)
    assert first.tolist() == [0, 1, 2] and pool.n_live == 3 and pool.available() == 0
    pool.data[:12] = xp.arange(12, dtype=np.int32)
    pool.give_back(xp.asarray([2, 0], dtype=np.int32), 2)
    assert pool.n_free == 2 and pool.n_live == 1
    again = backend.to_host(pool.plan_take(2))
    assert again.tolist() == [0, 2]  # recycled ones, the most recently freed first
    pool.commit_take(2)
    assert not pool.reserve(0)
    assert pool.reserve(5)  # grows: by the factor at least, and keeps every page
    assert pool.n_pages >= 5 + 3
    np.testing.assert_array_equal(backend.to_host(pool.data[:12]), np.arange(12))
    fresh = backend.to_host(pool.plan_take(5))
    assert fresh.tolist() == [3, 4, 5, 6, 7]  # never-used ids once no page is free
    with pytest.raises(ValueError, match="power of two"):
        alloc.PagePool(3, 1, xp=xp, dtype=np.int32)
    with pytest.raises(ValueError, match="pages asked for"):
        pool.plan_take(pool.available() + 1)
