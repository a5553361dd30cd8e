"""Array-level 3-phase conflict resolution (the host side of include/morphgpu/conflict.cuh).

``claim(offsets, elements)`` decides, for claimants that each want exclusive use of a
neighbourhood (claimant ``i`` claims ``elements[offsets[i]:offsets[i+1]]``), which of them
win this round. The same three phases run on both sides:

- race: every claimant writes its mark on its elements (NumPy: fancy assignment; GPU:
  plain stores in the kernel ``claim_race``);
- prioritycheck: every claimant raises its elements to its mark (NumPy: ``np.maximum.at``;
  GPU: ``atomicMax`` over the whole neighbourhood, ``conflict_prioritymax``);
- check: a claimant wins iff every one of its elements holds its mark.

A mark is ``(priority << 32) | claimant``, with the priority given or hashed from
(``round``, claimant) exactly as ``mg::claim_priority`` does, so both sides pick the
same winners: after phase 2 an element holds the highest mark among its claimants, and a
claimant wins iff it is the highest on all of its elements. Hence winners' neighbourhoods
are pairwise disjoint, and the claimant with the highest mark overall wins, so any round
with a non-empty claim has a winner. Claimants with empty neighbourhoods always win.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import backend, kernels
from .hashing import mix32

KERNEL_FILE = "kernels/conflict.cu"
_MASK32 = np.uint64(0xFFFFFFFF)
_MASK64 = 0xFFFFFFFFFFFFFFFF


def claim_priority(round: int, claimants: Any) -> np.ndarray:
    """Hashed 32-bit priorities of ``claimants`` in ``round`` (NumPy twin of mg::claim_priority)."""
    ids = np.asarray(claimants, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = np.uint64((int(round) * 0x9E3779B97F4A7C15) & _MASK64) ^ (
            ids + np.uint64(0x632BE59BD9B4E019)
        )
        x ^= x >> np.uint64(32)
    return mix32(x & _MASK32)


def claim_marks(priorities: Any, claimants: Any, xp: Any = np) -> Any:
    """``(priority << 32) | claimant`` as uint64 (the marks of mg::claim_mark)."""
    p = xp.asarray(priorities).astype(xp.uint64)
    c = xp.asarray(claimants).astype(xp.uint64)
    return (p << xp.uint64(32)) | (c & xp.uint64(0xFFFFFFFF))


def _validate(offsets: Any, elements: Any, priorities: Any, n_elements: int | None) -> tuple:
    """Argument checks -> (n_claimants, n_elements).

    On CuPy inputs the reductions run on the device and come back in one small read, so
    validating a round costs one synchronisation, not a copy of the claims.
    """
    for name, arr in (("offsets", offsets), ("elements", elements)):
        if arr.ndim != 1:
            raise ValueError(f"claim: {name} must be a 1-D array")
        if not np.issubdtype(np.dtype(arr.dtype), np.integer):
            raise ValueError("claim: offsets and elements must hold integers")
    if offsets.size < 1:
        raise ValueError("claim: offsets must be a 1-D array of n_claimants + 1 entries")
    n_claimants = int(offsets.size) - 1
    if n_claimants >= 2**32:
        raise ValueError("claim: at most 2**32 - 1 claimants per round (ids are 32-bit in marks)")
    if priorities is not None and tuple(priorities.shape) != (n_claimants,):
        raise ValueError(
            f"claim: priorities must have one entry per claimant ({n_claimants}), "
            f"got shape {tuple(priorities.shape)}"
        )
    xp = backend.array_module(offsets)
    i64 = np.int64
    off = offsets.astype(i64, copy=False)
    sizes = off[1:] - off[:-1]
    zero = xp.zeros(1, dtype=i64)
    el = elements.astype(i64, copy=False)
    parts = [off[:1], off[-1:],
             sizes.min(keepdims=True) if sizes.size else zero,
             sizes.max(keepdims=True) if sizes.size else zero,
             el.min(keepdims=True) if el.size else zero,
             el.max(keepdims=True) if el.size else zero - 1]
    if priorities is not None and priorities.size:
        pr = priorities.astype(i64, copy=False) if np.dtype(priorities.dtype).kind != "u" \
            else xp.minimum(priorities, 2**32).astype(i64)
        parts += [pr.min(keepdims=True), pr.max(keepdims=True)]
    facts = [int(v) for v in backend.to_host(xp.concatenate(parts))]
    first, last, smallest, largest, el_min, el_max = facts[:6]
    if first != 0 or last != elements.size or smallest < 0:
        raise ValueError(
            "claim: offsets must start at 0, never decrease and end at len(elements) "
            f"({elements.size}); got start {first}, end {last}"
        )
    if largest >= 2**31:
        raise ValueError("claim: a neighbourhood may hold at most 2**31 - 1 elements")
    if el_min < 0:
        raise ValueError(f"claim: elements must be non-negative, found {el_min}")
    top = el_max + 1
    if n_elements is None:
        n_elements = top
    elif top > n_elements:
        raise ValueError(f"claim: element {top - 1} is out of range for n_elements={n_elements}")
    if len(facts) > 6 and (facts[6] < 0 or facts[7] >= 2**32):
        raise ValueError("claim: priorities must fit in 32 unsigned bits")
    return n_claimants, int(n_elements)


def claim(
    offsets: Any,
    elements: Any,
    priorities: Any = None,
    *,
    n_elements: int | None = None,
    round: int = 0,
) -> Any:
    """Winners (bool per claimant) of one round of race / prioritycheck / check.

    ``offsets`` (n_claimants + 1) and ``elements`` are the neighbourhoods in CSR form;
    ``priorities`` (optional, 32-bit unsigned per claimant; higher wins, ties to the
    higher claimant id) replaces the hashed per-``round`` priority. Runs where the arrays
    live (CuPy: on the GPU through the kernels of ``kernels/conflict.cu``) and returns
    the winners there.
    """
    if int(round) < 0:
        raise ValueError(f"claim: round must be >= 0, got {round}")
    n_claimants, n_el = _validate(offsets, elements, priorities, n_elements)
    side = backend.side_of(offsets)
    if side == "gpu":
        return _claim_gpu(offsets, elements, priorities, n_claimants, n_el, round)
    return _claim_cpu(offsets, elements, priorities, n_claimants, n_el, round)


def _claim_cpu(offsets, elements, priorities, n_claimants, n_elements, round) -> np.ndarray:
    ids = np.arange(n_claimants, dtype=np.uint64)
    if priorities is None:
        priorities = claim_priority(round, ids)
    return _claim_with_ids(
        np.asarray(offsets, dtype=np.int64),
        np.asarray(elements, dtype=np.int64),
        np.asarray(priorities, dtype=np.uint64),
        ids,
        n_elements,
    )


def _claim_with_ids(off, el, priorities, ids, n_elements) -> np.ndarray:
    """The three phases in NumPy for claimants ``ids`` (their marks carry these ids)."""
    mark = claim_marks(priorities, ids)
    owner_of_entry = np.repeat(np.arange(ids.size), np.diff(off))
    entry_marks = mark[owner_of_entry]
    marks = np.zeros(max(1, n_elements), dtype=np.uint64)
    marks[el] = entry_marks  # race
    np.maximum.at(marks, el, entry_marks)  # prioritycheck
    lost = marks[el] != entry_marks  # check
    return np.bincount(owner_of_entry[lost], minlength=ids.size) == 0


def _claim_gpu(offsets, elements, priorities, n_claimants, n_elements, round) -> Any:
    cp = backend.cupy_module()
    with backend.gpu_memory_guard(f"claim ({n_claimants} claimants, {n_elements} elements)"):
        off = cp.asarray(offsets, dtype=cp.int64)
        el = cp.asarray(elements, dtype=cp.int64)
        use_priorities = priorities is not None
        pr = (
            cp.asarray(priorities, dtype=cp.uint32)
            if use_priorities
            else cp.zeros(1, dtype=cp.uint32)
        )
        marks = cp.zeros(max(1, n_elements), dtype=cp.uint64)
        winners = cp.zeros(n_claimants, dtype=cp.bool_)
        if n_claimants == 0:
            return winners
        grid, block = kernels.launch_config(n_claimants, 256, max_blocks=65535)
        common = (off, el, pr, np.int32(use_priorities), np.int64(n_claimants), np.int64(round))
        # Kernel boundaries separate the phases, as a grid barrier would.
        kernels.get_kernel(KERNEL_FILE, "claim_race")(grid, block, (*common, marks))
        kernels.get_kernel(KERNEL_FILE, "claim_prioritymax")(grid, block, (*common, marks))
        kernels.get_kernel(KERNEL_FILE, "claim_check")(grid, block, (*common, marks, winners))
    return winners


def serve_all(
    offsets: Any,
    elements: Any,
    *,
    n_elements: int | None = None,
    max_rounds: int = 10_000,
    mode: str = "xiao-feng",
) -> tuple[Any, int]:
    """Run claim rounds until every claimant has won once: (round served per claimant, rounds).

    On the GPU this is one persistent kernel over the grid barrier (``claim_until_served``,
    with the early-exit prioritycheck; ``mode`` picks the barrier); on the CPU the same
    rounds with :func:`claim`.
    Every round serves at least one claimant, so ``rounds <= n_claimants``.
    """
    n_claimants, n_el = _validate(offsets, elements, None, n_elements)
    if backend.side_of(offsets) == "gpu":
        return _serve_all_gpu(offsets, elements, n_claimants, n_el, max_rounds, mode)
    off = np.asarray(offsets, dtype=np.int64)
    el = np.asarray(elements, dtype=np.int64)
    served = np.full(n_claimants, -1, dtype=np.int32)
    rounds = 0
    while rounds < max_rounds and (served < 0).any():
        left = np.flatnonzero(served < 0)
        lengths = off[left + 1] - off[left]
        sub_off = np.concatenate([[0], np.cumsum(lengths)])
        within = np.arange(sub_off[-1]) - np.repeat(sub_off[:-1], lengths)
        take = np.repeat(off[left], lengths) + within
        # The claimants keep their own ids in the marks, as on the GPU.
        prio = claim_priority(rounds, left)
        won = _claim_with_ids(sub_off, el[take], prio, left, n_el)
        served[left[won]] = rounds
        rounds += 1
    return served, rounds


def _serve_all_gpu(offsets, elements, n_claimants, n_elements, max_rounds, mode) -> tuple:
    from . import barrier  # noqa: PLC0415

    cp = backend.cupy_module()
    off = cp.asarray(offsets, dtype=cp.int64)
    el = cp.asarray(elements, dtype=cp.int64)
    marks = cp.zeros(max(1, n_elements), dtype=cp.uint64)
    served = cp.full(n_claimants, -1, dtype=cp.int32)
    unserved = cp.zeros(3, dtype=cp.uint64)
    rounds = cp.zeros(1, dtype=cp.int32)
    grid = barrier.persistent_kernel(KERNEL_FILE, "claim_until_served", mode=mode, block=256)
    grid.launch(
        off, el, np.int64(n_claimants), np.int32(max_rounds), marks, served, unserved, rounds
    )
    grid.check()
    return served, int(rounds.get()[0])
