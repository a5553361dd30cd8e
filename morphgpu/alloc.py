"""Recycle allocators (the host side of include/morphgpu/alloc.cuh; paper §7.1–7.2).

``SlotPool`` hands out indices ("slots") into the caller's arrays (DMR's triangle slots),
reusing freed slots before fresh ones. Both growth strategies of §7.1 are here:

- host-only: before a kernel, ``grow_for(extra)`` makes room for a known bound of new
  slots (e.g. 2 new triangles per bad triangle);
- kernel-host: kernels call ``mg::slot_alloc``; requests that find the pool exhausted
  get -1 and are counted on the device; ``after_round()`` compacts the pool, reads that
  count (the only host read), grows by the over-allocation factor and returns True when
  the failed requests must be redone.

On NumPy (``xp=numpy``) the same pool runs on the host with the same semantics, for the
CPU paths: ``alloc(k)`` gives k slots, recycled ones first (the most recently freed
first, as the device stack does), ``free(slots)`` returns them.

``ChunkPool`` is the kernel-only allocator: fixed-size chunks linked into per-node lists
that grow from inside kernels (PTA's incoming edges); ``grow()`` enlarges it when a kernel
reported ``out_of_chunks``, and ``lists()`` reads the lists back for checks.

Capacities and counters are 64-bit everywhere; the caller resizes its own data arrays to
``pool.capacity`` after a growth.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import backend, kernels

KERNEL_FILE = "kernels/alloc.cu"
# counters[]: the layout mg::make_slot_pool reads.
N_FREE, N_TAKEN_FREE, HIGH_WATER, N_WANTED = range(4)
# A list link whose chunk could not be allocated (mg::CHUNK_FAILED).
CHUNK_FAILED = -2


def _is_cupy_module(xp: Any) -> bool:
    return getattr(xp, "__name__", "") == "cupy"


class SlotPool:
    """A pool of ``capacity`` slots that recycles freed slots before growing.

    ``xp`` is ``numpy`` (host pool) or ``cupy`` (device pool: kernels allocate and free
    with ``mg::slot_alloc``/``mg::slot_free`` on ``device_struct()``; ``alloc``/``free``
    also work, through small kernels). ``growth`` is the over-allocation factor (> 1).
    """

    def __init__(self, capacity: int, *, xp: Any = np, growth: float = 1.5) -> None:
        if int(capacity) < 0:
            raise ValueError(f"SlotPool: capacity must be >= 0, got {capacity}")
        if not growth > 1.0:
            raise ValueError(f"SlotPool: growth must be > 1, got {growth}")
        self.xp = xp
        self.on_gpu = _is_cupy_module(xp)
        self.growth = float(growth)
        self.capacity = int(capacity)
        self.free_slots = xp.zeros(max(1, self.capacity), dtype=xp.int64)
        self.counters = xp.zeros(4, dtype=xp.uint64)

    # -- the device view --------------------------------------------------------------
    def device_struct(self) -> tuple:
        """Kernel arguments in ``mg::SlotPool`` field order: free_slots, n_free,
        n_taken_free, high_water, capacity (uint64 scalar), n_wanted. Fetch again after a
        growth (free_slots and capacity change)."""
        c = self.counters
        return (
            self.free_slots,
            c[N_FREE:],
            c[N_TAKEN_FREE:],
            c[HIGH_WATER:],
            np.uint64(self.capacity),
            c[N_WANTED:],
        )

    def kernel_args(self) -> tuple:
        """(free_slots, counters, capacity): the pieces of ``mg::make_slot_pool``."""
        return (self.free_slots, self.counters, np.uint64(self.capacity))

    # -- state --------------------------------------------------------------------------
    def _counter(self, which: int) -> int:
        return int(self.counters[which])  # one device read per call on the GPU

    @property
    def n_free(self) -> int:
        return self._counter(N_FREE)

    @property
    def high_water(self) -> int:
        return self._counter(HIGH_WATER)

    @property
    def n_live(self) -> int:
        """Slots handed out and not freed."""
        return self.high_water - self.n_free

    # -- growth ---------------------------------------------------------------------------
    def _resize(self, new_capacity: int) -> None:
        xp = self.xp
        if self.on_gpu:
            backend.require_gpu_bytes(8 * new_capacity, f"SlotPool growth to {new_capacity} slots")
        with backend.gpu_memory_guard(f"SlotPool growth to {new_capacity} slots"):
            grown = xp.zeros(max(1, new_capacity), dtype=xp.int64)
        n_free = self.n_free
        grown[:n_free] = self.free_slots[:n_free]
        self.free_slots = grown
        self.capacity = int(new_capacity)

    def grow_for(self, extra: int) -> bool:
        """Host-only growth: make sure ``extra`` more slots can be allocated (recycled ones
        count). Over-allocates by the growth factor. Returns whether the pool grew."""
        if int(extra) < 0:
            raise ValueError(f"SlotPool.grow_for: extra must be >= 0, got {extra}")
        available = self.n_free + (self.capacity - self.high_water)
        if extra <= available:
            return False
        needed = self.capacity + (int(extra) - available)
        self._resize(max(needed, math.ceil(self.capacity * self.growth)))
        return True

    def after_round(self) -> bool:
        """Kernel-host step after an allocation phase: compact the pool, read how many
        requests failed, grow if any did. True when those requests must be redone."""
        self._compact()
        wanted = self._counter(N_WANTED)
        if wanted == 0:
            return False
        self.counters[N_WANTED] = 0
        needed = self.capacity + wanted
        self._resize(max(needed, math.ceil(self.capacity * self.growth)))
        return True

    def _compact(self) -> None:
        if self.on_gpu:
            k = kernels.get_kernel(KERNEL_FILE, "slot_pool_compact_kernel")
            k((1,), (32,), self.kernel_args())
            return
        c = self.counters
        taken = min(int(c[N_TAKEN_FREE]), int(c[N_FREE]))
        c[N_FREE] -= np.uint64(taken)
        c[N_TAKEN_FREE] = 0
        c[HIGH_WATER] = min(int(c[HIGH_WATER]), self.capacity)

    # -- allocation -------------------------------------------------------------------------
    def alloc(self, k: int) -> Any:
        """``k`` slots (recycled ones first), growing the pool as needed; an array of xp."""
        k = int(k)
        if k < 0:
            raise ValueError(f"SlotPool.alloc: k must be >= 0, got {k}")
        self.grow_for(k)
        if self.on_gpu:
            out = self.xp.empty(k, dtype=self.xp.int64)
            if k:
                grid, block = kernels.launch_config(k, 256, max_blocks=4096)
                kern = kernels.get_kernel(KERNEL_FILE, "slot_pool_alloc")
                kern(grid, block, (*self.kernel_args(), np.int64(k), out))
            if self.after_round():  # cannot happen after grow_for; kept as the safety net
                raise RuntimeError("SlotPool.alloc: the pool ran out after growing")
            return out
        c = self.counters
        n_free = int(c[N_FREE])
        recycled = min(k, n_free)
        out = np.empty(k, dtype=np.int64)
        out[:recycled] = self.free_slots[n_free - recycled : n_free][::-1]
        fresh = k - recycled
        start = int(c[HIGH_WATER])
        out[recycled:] = np.arange(start, start + fresh)
        c[N_FREE] = n_free - recycled
        c[HIGH_WATER] = start + fresh
        return out

    def free(self, slots: Any) -> None:
        """Give ``slots`` back for recycling (each live slot at most once)."""
        xp = self.xp
        s = xp.asarray(slots, dtype=xp.int64).ravel()
        if s.size == 0:
            return
        hw = self.high_water
        s_host = backend.to_host(s)
        if int(s_host.min()) < 0 or int(s_host.max()) >= hw:
            raise ValueError(f"SlotPool.free: slots must lie in [0, {hw}), the slots handed out")
        if np.unique(s_host).size != s_host.size:
            raise ValueError("SlotPool.free: a slot appears twice")
        already = backend.to_host(self.free_slots[: self.n_free])
        if np.isin(s_host, already).any():
            raise ValueError("SlotPool.free: a slot that is already free was freed again")
        if s.size > self.capacity - self.n_free:
            raise ValueError("SlotPool.free: more slots freed than are live")
        if self.on_gpu:
            grid, block = kernels.launch_config(s.size, 256, max_blocks=4096)
            kern = kernels.get_kernel(KERNEL_FILE, "slot_pool_free")
            kern(grid, block, (*self.kernel_args(), s, np.int64(s.size)))
            return
        n_free = int(self.counters[N_FREE])
        self.free_slots[n_free : n_free + s.size] = s
        self.counters[N_FREE] = n_free + s.size


class ChunkPool:
    """``n_chunks`` chunks of ``chunk_size`` ints for per-node lists grown inside kernels.

    Kernels build ``mg::ChunkPool{...}`` from ``device_struct()`` and append with
    ``mg::chunk_list_append(pool, head, size, node, value)``, where ``head`` (int64, -1
    for an empty list) and ``size`` (uint32 or uint64) are the caller's per-node arrays
    (``new_lists(n_nodes)`` makes them).
    """

    def __init__(self, n_chunks: int, chunk_size: int, *, xp: Any = None, growth: float = 2.0):
        if int(n_chunks) < 1 or int(chunk_size) < 1:
            raise ValueError(
                f"ChunkPool: n_chunks and chunk_size must be >= 1, got {n_chunks}, {chunk_size}"
            )
        # Default: where "auto" runs (this pool exists for kernels, so the GPU if any).
        self.xp = xp if xp is not None else backend.xp_for(backend.resolve_device("auto"))
        self.growth = float(growth)
        self.chunk_size = int(chunk_size)
        self.n_chunks = int(n_chunks)
        xp = self.xp
        self.data = xp.zeros(self.n_chunks * self.chunk_size, dtype=xp.int32)
        self.next_chunk = xp.full(self.n_chunks, -1, dtype=xp.int64)
        self.n_chunks_used = xp.zeros(1, dtype=xp.uint64)
        self.out_of_chunks = xp.zeros(1, dtype=xp.int32)

    def device_struct(self) -> tuple:
        """Kernel arguments in ``mg::ChunkPool`` field order."""
        return (
            self.data,
            self.next_chunk,
            self.n_chunks_used,
            np.uint64(self.n_chunks),
            np.int32(self.chunk_size),
            self.out_of_chunks,
        )

    def new_lists(self, n_nodes: int) -> tuple[Any, Any]:
        """(head, size) for ``n_nodes`` empty lists."""
        xp = self.xp
        return xp.full(n_nodes, -1, dtype=xp.int64), xp.zeros(n_nodes, dtype=xp.uint32)

    def append(self, head: Any, size: Any, nodes: Any, values: Any) -> np.ndarray:
        """Host twin of ``mg::chunk_list_append`` for NumPy pools (CPU paths and checks):
        appends values[i] to the list of nodes[i], in order; returns the stored flags."""
        if _is_cupy_module(self.xp):
            raise ValueError("ChunkPool.append runs on NumPy pools; kernels append on the GPU")
        cs = self.chunk_size
        stored = np.zeros(len(nodes), dtype=bool)
        for i, (node, value) in enumerate(zip(np.asarray(nodes), np.asarray(values))):
            position = int(size[node])
            size[node] += 1
            link = self._link_to(head, int(node), position // cs)
            if link is None:
                continue
            array, index = link
            if position % cs == 0:
                array[index] = self._take_chunk()
            chunk = int(array[index])
            if chunk >= 0:
                self.data[chunk * cs + position % cs] = value
                stored[i] = True
        return stored

    def _link_to(self, head: np.ndarray, node: int, chunk_number: int) -> tuple | None:
        """(array, index) of the pointer to the node's chunk ``chunk_number``, or None when
        an earlier chunk of the list is missing (a failed allocation)."""
        array, index = head, node
        for _ in range(chunk_number):
            following = int(array[index])
            if following < 0:
                return None
            array, index = self.next_chunk, following
        return array, index

    def _take_chunk(self) -> int:
        used = int(self.n_chunks_used[0])
        self.n_chunks_used[0] += 1
        if used >= self.n_chunks:
            self.out_of_chunks[0] = 1
            return CHUNK_FAILED
        self.next_chunk[used] = -1
        return used

    def exhausted(self) -> bool:
        """Whether a kernel found the pool empty since the last ``grow()`` (one read)."""
        return bool(int(self.out_of_chunks[0]))

    def grow(self, n_chunks: int | None = None) -> None:
        """Enlarge to ``n_chunks`` (default: growth factor, at least what was asked for),
        keeping every chunk and link; clears ``out_of_chunks``. Lists a failed kernel left
        half-appended must be restored by the caller before rerunning."""
        xp = self.xp
        asked = int(self.n_chunks_used[0])
        by_factor = max(math.ceil(self.n_chunks * self.growth), asked)
        new = int(n_chunks) if n_chunks is not None else by_factor
        if new <= self.n_chunks:
            raise ValueError(f"ChunkPool.grow: {new} chunks is not more than {self.n_chunks}")
        what = f"ChunkPool growth to {new} chunks of {self.chunk_size}"
        with backend.gpu_memory_guard(what):
            data = xp.zeros(new * self.chunk_size, dtype=xp.int32)
            data[: self.data.size] = self.data
            nxt = xp.full(new, -1, dtype=xp.int64)
            nxt[: self.n_chunks] = self.next_chunk
        # The kernel's counter ran past the old capacity on every failed request: only the
        # chunks below it hold data, and the ones above must be handed out again.
        self.n_chunks_used[0] = min(asked, self.n_chunks)
        self.data, self.next_chunk, self.n_chunks = data, nxt, int(new)
        self.out_of_chunks[0] = 0

    def lists(self, head: Any, size: Any) -> list[np.ndarray]:
        """Every node's list, read back on the host by walking the chunk links."""
        head_h, size_h = backend.to_host(head), backend.to_host(size)
        data = backend.to_host(self.data)
        nxt = backend.to_host(self.next_chunk)
        out = []
        for node in range(head_h.size):
            items, chunk, left = [], int(head_h[node]), int(size_h[node])
            while left > 0 and chunk >= 0:
                take = min(left, self.chunk_size)
                items.append(data[chunk * self.chunk_size : chunk * self.chunk_size + take])
                left -= take
                chunk = int(nxt[chunk])
            out.append(np.concatenate(items) if items else np.empty(0, dtype=np.int32))
        return out


class PagePool:
    """Fixed-size pages for paged adjacency lists (faimGraph's page manager; paper §7.2
    recycling): ``n_pages`` pages of ``page_size`` items in one array per value kind
    (``data`` for neighbour ids, ``weights`` when asked for), on ``xp``'s side.

    Page ids are slots: a page freed by ``give_back`` is handed out again by ``take``
    before any page that was never used, and the arrays grow (by ``growth``, keeping every
    page) only when the recycled and the never-used pages together cannot cover a request
    (``reserve``). Pages are taken and given back in bulk by the dynamic graph's batch
    plans, whose page need is read back once per batch anyway, so the counters live on the
    host; the free stack (``free_pages``) lives with the pages.
    """

    def __init__(self, page_size: int, n_pages: int, *, xp: Any, dtype: Any,
                 weights_dtype: Any = None, growth: float = 1.5) -> None:
        if page_size < 1 or page_size & (page_size - 1):
            raise ValueError(f"PagePool: page_size must be a power of two, got {page_size}")
        if not growth > 1.0:
            raise ValueError(f"PagePool: growth must be > 1, got {growth}")
        self.xp = xp
        self.page_size = int(page_size)
        self.growth = float(growth)
        self.n_pages = max(int(n_pages), 1)
        self.data = self._empty(self.n_pages * self.page_size, dtype)
        self.weights = (None if weights_dtype is None
                        else self._empty(self.n_pages * self.page_size, weights_dtype))
        self.free_pages = self._empty(self.n_pages, np.int32)
        self.n_free = 0  # recycled pages on the stack free_pages[0, n_free)
        self.high_water = 0  # pages below it have been handed out at least once

    def _empty(self, size: int, dtype: Any) -> Any:
        what = f"page pool of {size} items"
        if _is_cupy_module(self.xp):
            backend.require_gpu_bytes(size * np.dtype(dtype).itemsize, what)
        with backend.gpu_memory_guard(what):
            return self.xp.empty(size, dtype=dtype)

    @property
    def n_live(self) -> int:
        """Pages handed out and not given back."""
        return self.high_water - self.n_free

    def available(self) -> int:
        """Pages ``take`` can hand out without growing: recycled ones and never-used ones."""
        return self.n_free + (self.n_pages - self.high_water)

    def reserve(self, k: int) -> bool:
        """Grow (by the growth factor at least) so that ``k`` pages can be taken; True when
        the arrays grew. Every page keeps its id and contents."""
        if k <= self.available():
            return False
        new = max(self.n_pages + (k - self.available()), math.ceil(self.n_pages * self.growth))
        grown = [self._empty(new * self.page_size, a.dtype) if a is not None else None
                 for a in (self.data, self.weights)]
        stack = self._empty(new, np.int32)
        for old, fresh in zip((self.data, self.weights), grown):
            if old is not None:
                fresh[: old.size] = old
        stack[: self.n_free] = self.free_pages[: self.n_free]
        self.data, self.weights = grown
        self.free_pages = stack
        self.n_pages = int(new)
        return True

    def plan_take(self, k: int) -> Any:
        """The ids the next ``take(k)`` hands out, recycled ones first (the most recently
        freed first); ``commit_take(k)`` makes it so. Needs ``reserve(k)`` first."""
        if k > self.available():
            raise ValueError(f"PagePool: {k} pages asked for, {self.available()} available")
        xp = self.xp
        recycled = min(k, self.n_free)
        ids = xp.empty(k, dtype=np.int32)
        ids[:recycled] = self.free_pages[self.n_free - recycled: self.n_free][::-1]
        ids[recycled:] = xp.arange(self.high_water, self.high_water + k - recycled,
                                   dtype=np.int32)
        return ids

    def commit_take(self, k: int) -> None:
        recycled = min(k, self.n_free)
        self.n_free -= recycled
        self.high_water += k - recycled

    def give_back(self, ids: Any, count: int) -> None:
        """Push ``count`` live page ids (``ids[:count]``, each live and given at most once)
        on the free stack."""
        if count:
            self.free_pages[self.n_free: self.n_free + count] = ids[:count]
            self.n_free += int(count)

    def stats(self) -> dict[str, int]:
        item_bytes = self.data.dtype.itemsize + (self.weights.dtype.itemsize
                                                 if self.weights is not None else 0)
        return {
            "page_size": self.page_size,
            "pages_in_use": self.n_live,
            "pages_free": self.n_free,
            "pages_never_used": self.n_pages - self.high_water,
            "pool_pages": self.n_pages,
            "pool_bytes": self.n_pages * self.page_size * item_bytes,
        }
