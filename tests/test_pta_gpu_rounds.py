"""The GPU path's round logic (morphgpu/pta/gpu.py ``_solve``), run on the CPU.

Each kernel of kernels/pta.cu is replaced by a NumPy transcription of what one launch
does; sweeps run either in sequence (every read sees every earlier write) or Jacobi-style
(every read sees the sweep's start), two legal interleavings of the real kernel. This
checks the host half (edge keys, incoming CSR, forcing, counters, stopping rule) and the
kernels' rules against the naive solver, where CI has no GPU; the real kernels are
checked against the CPU path by the `gpu` tests.
"""

from __future__ import annotations

import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_pta import (
    AOF,
    COPY,
    DATA,
    GEP,
    LOAD,
    NONOBJECT_SETS,
    STORE,
    constraint_sets,
    merged_pointer_case,
    naive_solve,
    true_hcd_facts,
)

from morphgpu.hashing import mix64
from morphgpu.pta import gpu
from morphgpu.pta.constraints import from_lists
from morphgpu.pta.gpu import _solve
from morphgpu.pta.layout import build_layout
from morphgpu.pta.solution import Solution


class _Event:
    def record(self) -> None:
        pass


FAKE_CP = types.SimpleNamespace(
    **{name: getattr(np, name) for name in (
        "int64", "uint64", "int32", "uint32", "bool_", "zeros", "zeros_like", "full", "array",
        "ones", "asarray", "sort", "empty", "empty_like", "arange", "searchsorted", "flatnonzero",
        "concatenate", "minimum", "uint8", "unique", "repeat", "cumsum", "where",
        "bitwise_or")},
    cuda=types.SimpleNamespace(
        Event=_Event,
        get_elapsed_time=lambda a, b: 0.0,
        get_current_stream=lambda: types.SimpleNamespace(synchronize=lambda: None),
    ),
)
ONE = np.uint64(1)


class NumpyKernels:
    grid = 1

    def __init__(self, jacobi: bool) -> None:
        self.jacobi = jacobi

    def set_bits(self, n_items, P, row, bit, n, words, changed_at, stamp, occupied,
                 block_words, bitmap_words, ext_blocks):
        for r, b in zip(row.tolist(), bit.tolist()):
            P[r * words + (b >> 6)] |= ONE << np.uint64(b & 63)
            _mark_occupied(occupied, r, b >> 6, block_words, bitmap_words)
            _mark_occupied(ext_blocks, r, b >> 6, block_words, bitmap_words)
            changed_at[r] = stamp

    def take_delta(self, n_rows, P, seen, D, words, is_ptr, leader, occupied, dblocks,
                   block_words, bitmap_words, changed_at, swept_at, n_nodes, take_clock,
                   parity, clock):
        W, B, bmw, n = int(words), int(block_words), int(bitmap_words), int(n_nodes)
        since = int(take_clock[int(parity) ^ 1])
        take_clock[int(parity)] = clock[0]
        for v in np.flatnonzero(is_ptr).tolist():
            L = int(leader[v])
            fresh = max(changed_at[L], swept_at[L], swept_at[n + L]) >= since
            got = np.zeros(bmw, dtype=np.uint64)
            if fresh:
                for b in _blocks_of(occupied[L * bmw:(L + 1) * bmw]):
                    lo, hi = v * W + b * B, v * W + min(W, (b + 1) * B)
                    d = P[lo - v * W + L * W:hi - v * W + L * W] & ~seen[lo:hi]
                    D[lo:hi] = d
                    seen[lo:hi] |= d
                    if d.any():
                        got[b >> 6] |= ONE << np.uint64(b & 63)
            dblocks[v * bmw:(v + 1) * bmw] = got

    def insert_keys(self, n_items, table, mask, keys, n, overflow):
        for k in keys[:int(n)].tolist():
            _table_insert(table, int(mask), k, overflow)

    def merge_batch(self, n_items, old, n_old, batch, n_batch, bias, out, flag, low, n_nodes):
        old, batch = old[:int(n_old)], batch[:int(n_batch)] - int(bias)
        assert np.all(np.diff(old) > 0) and np.all(np.diff(batch) > 0)
        assert not np.isin(batch, old).any()
        merged = np.concatenate([old, batch])
        order = np.argsort(merged, kind="stable")
        out[:] = merged[order]
        if isinstance(flag, np.ndarray):
            flag[:] = (order >= old.size).astype(np.uint8)
        low[:] = out % int(n_nodes)

    def eval_complex(self, n_launch, kind, c_src, c_dst, c_off, n_complex, D, dblocks, P,
                     words, objects, node_of_bit, null_bit, obj_size, node_of_var, bit_of_var,
                     n_vars, n_nodes,
                     table, mask, keys, capacity, merges, merge_capacity, counters, claim,
                     changed_at, clock, occupied, block_words, bitmap_words, ext_blocks):
        stamp = int(clock[0])
        W, B, bmw, n = int(words), int(block_words), int(bitmap_words), int(n_nodes)
        overflow = counters[gpu.OVERFLOW:]

        def emit(key, buf, cap, slot):
            table_key = key if slot == gpu.N_NEW else n * n + key
            if not _table_insert(table, int(mask), table_key, overflow):
                return
            at = int(counters[slot])
            if at < int(cap):
                buf[at] = key
            counters[slot] += 1

        order = list(range(int(n_complex)))
        if self.jacobi:  # another legal order of the warps' table inserts
            order.reverse()
        for c in order:
            k, src, dst, off = int(kind[c]), int(c_src[c]), int(c_dst[c]), int(c_off[c])
            ptr = dst if k == STORE else src
            for blk in _blocks_of(dblocks[ptr * bmw:(ptr + 1) * bmw]):
                for w in range(blk * B, min(W, (blk + 1) * B)):
                    d = int(D[ptr * W + w])
                    counters[gpu.RAW] += bin(d).count("1")
                    while d:
                        b = (d & -d).bit_length() - 1
                        d &= d - 1
                        obj = int(objects[w * 64 + b])
                        # The kernel reads offset 0's node from node_of_bit: it must agree.
                        assert int(node_of_bit[w * 64 + b]) == int(node_of_var[obj])
                        assert (w * 64 + b == int(null_bit)) == (obj == 1)
                        if k == GEP:
                            if obj_size[obj] <= off or obj + off >= n_vars:
                                continue
                            tbit = int(bit_of_var[obj + off])
                            m = ONE << np.uint64(tbit & 63)
                            old = P[dst * W + (tbit >> 6)]
                            P[dst * W + (tbit >> 6)] = old | m
                            if not old & m:
                                _mark_occupied(occupied, dst, tbit >> 6, block_words,
                                               bitmap_words)
                                _mark_occupied(ext_blocks, dst, tbit >> 6, block_words,
                                               bitmap_words)
                                changed_at[dst] = stamp
                                counters[gpu.GEP] = 1
                            continue
                        if k == 5:  # HCD fact: merge the object's node with y (not object 1)
                            a = dst if obj == 1 else int(node_of_var[obj])
                            if a != dst:
                                old = int(claim[a]) if claim[a] >= 0 else None
                                if old is None or dst < old:
                                    claim[a] = dst
                                    emit(dst * n + a, merges, merge_capacity, gpu.N_MERGE)
                                elif old != dst:
                                    emit(dst * n + old, merges, merge_capacity, gpu.N_MERGE)
                            continue
                        target = obj + off
                        if (off == 0 or obj_size[obj] > off) and target < n_vars and \
                                not (k == STORE and target == 1):
                            t = int(node_of_var[target])
                            frm, to = (t, dst) if k == LOAD else (src, t)
                            if frm != to:
                                emit(to * n + frm, keys, capacity, gpu.N_NEW)

    def merge_rows(self, P, member, root, count, words, changed_at, ext_blocks, clock,
                   occupied, block_words, bitmap_words, leader):
        bmw, k = int(bitmap_words), int(count[0])
        pairs = list(zip(member[:k].tolist(), root[:k].tolist()))
        # Members are current leaders, roots current leaders that stay.
        assert all(leader[m] == m and leader[L] == L for m, L in pairs)
        assert not {m for m, _ in pairs} & {L for _, L in pairs}
        assert len({m for m, _ in pairs}) == k
        if self.jacobi:  # another order of the members' ORs
            pairs.reverse()
        for m, L in pairs:
            mine = P[m * words:(m + 1) * words].copy()
            old = P[L * words:(L + 1) * words].copy()
            P[L * words:(L + 1) * words] |= mine
            for w in np.flatnonzero(old != mine).tolist():
                _mark_occupied(ext_blocks, L, w, block_words, bitmap_words)
            occupied[L * bmw:(L + 1) * bmw] |= occupied[m * bmw:(m + 1) * bmw]
            ext_blocks[L * bmw:(L + 1) * bmw] |= ext_blocks[m * bmw:(m + 1) * bmw]
            changed_at[L] = clock[0]
            leader[m] = L

    def relabel_labels(self, n_items, count, leader, n_nodes, node_of_var, n_vars, node_of_bit,
                       n_bits, kind, c_src, c_dst, n_complex):
        if int(count[0]) == 0:
            return
        # One step through leader: every label is a leader of before the merge.
        labels = [leader, node_of_var, node_of_bit, c_src[kind == STORE], c_dst[kind != STORE]]
        for x in labels:
            assert (leader[leader[x]] == leader[x]).all()
        leader[:] = leader[leader]
        node_of_var[:] = leader[node_of_var]
        node_of_bit[:] = leader[node_of_bit]
        store = kind == STORE
        c_src[store] = leader[c_src[store]]
        c_dst[~store] = leader[c_dst[~store]]

    def union_pairs(self, n_items, pairs, n_pairs, capacity, n_nodes, parent):
        n, k = int(n_nodes), min(int(n_pairs[0]), int(capacity))
        order = range(k - 1, -1, -1) if self.jacobi else range(k)

        def find(v):
            while parent[v] != v:
                v = int(parent[v])
            return v

        for i in order:
            a, b = find(int(pairs[i]) % n), find(int(pairs[i]) // n)
            if a != b:
                parent[max(a, b)] = min(a, b)

    def list_merges(self, n_items, pairs, n_pairs, capacity, n_nodes, parent, listed, member,
                    root, n_members):
        n, k = int(n_nodes), min(int(n_pairs[0]), int(capacity))
        ends = [int(p) % n for p in pairs[:k]] + [int(p) // n for p in pairs[:k]]
        if self.jacobi:
            ends.reverse()
        for v in ends:
            r = v
            while parent[r] != r:
                r = int(parent[r])
            if r != v and not listed[v]:
                listed[v] = 1
                at = int(n_members[0])
                member[at], root[at] = v, r
                n_members[0] += 1

    def pair_keys(self, n_items, keys, n_keys, n_nodes, out):
        k, n = int(n_keys), int(n_nodes)
        out[:k] = keys[:k]
        out[k:2 * k] = n * n + (keys[:k] % n) * n + keys[:k] // n

    def relabel_tag(self, n_items, old, n_old, batch, n_batch, relabel, n_nodes, tagged):
        n = int(n_nodes)
        keys = np.concatenate([old[:int(n_old)], batch[:int(n_batch)]])
        d, s = relabel[keys // n], relabel[keys % n]
        tag = (np.arange(keys.size) >= int(n_old)).astype(np.int64)
        tagged[:] = np.where(d == s, np.iinfo(np.int64).max, (d * n + s) * 2 + tag)

    def first_of_key(self, n_items, tagged, n, keep):
        t = tagged[:int(n)]
        first = np.ones(t.size, dtype=bool)
        first[1:] = (t[1:] >> 1) != (t[:-1] >> 1)
        keep[:int(n)] = first & (t != np.iinfo(np.int64).max)

    def scatter_kept(self, n_items, tagged, position, n, n_nodes, keys, is_new, src,
                     reversed_keys):
        nn = int(n_nodes)
        for i in range(int(n)):
            t = int(tagged[i])
            if t == np.iinfo(np.int64).max or (i > 0 and int(tagged[i - 1]) >> 1 == t >> 1):
                continue
            at, key = int(position[i]) - 1, t >> 1
            keys[at], is_new[at], src[at] = key, t & 1, key % nn
            reversed_keys[at] = (key % nn) * nn + key // nn

    def list_hub_chunks(self, n_items, in_ptr, n_nodes, hub_min, hub_chunk, active, hubs,
                        counts, gained_blocks, bitmap_words):
        n, bmw = int(n_nodes), int(bitmap_words)
        order = range(n - 1, -1, -1) if self.jacobi else range(n)  # any order is legal
        for v in order:
            deg = int(in_ptr[v + 1] - in_ptr[v])
            if deg <= int(hub_min):
                continue
            extra = -(-deg // int(hub_chunk)) - 1
            at = int(counts[0])
            active[n + at:n + at + extra] = v + n * np.arange(1, extra + 1)
            counts[0] += extra
            hubs[int(counts[1])] = v
            counts[1] += 1
            gained_blocks[v * bmw:(v + 1) * bmw] = 0

    def propagate(self, P, words, block_words, bitmap_words, active, hub_counts, n_nodes,
                  in_ptr, in_src, in_new, out_ptr, out_dst, ext_blocks, changed_at, swept_at,
                  gained_blocks, occupied, queued_at, todo, todo_tail, clock, max_sweeps,
                  error, sweep_log, sweep_log_cap, list_cap, hub_min, hub_chunk, hubs):
        W, B, n, bmw = int(words), int(block_words), int(n_nodes), int(bitmap_words)
        cap, h_min, h_chunk = int(list_cap), int(hub_min), int(hub_chunk)
        n_active, n_hubs = n + int(hub_counts[0]), int(hub_counts[1])
        hub_list = hubs[:n_hubs].tolist()

        def chunks_of(v):
            deg = int(in_ptr[v + 1] - in_ptr[v])
            return -(-deg // h_chunk) if h_chunk > 0 and deg > h_min else 1

        # The hubs listed are exactly the nodes of several chunks, and sweep 0's
        # items are every node and the further chunks of each hub.
        assert sorted(hub_list) == [v for v in range(n) if chunks_of(v) > 1]
        assert sorted(active[:int(n_active)].tolist()) == sorted(
            v + c * n for v in range(n) for c in range(chunks_of(v)))
        assert cap >= n + sum(chunks_of(v) - 1 for v in range(n))
        for v in hub_list:  # buffer 0 starts empty for the hubs
            assert not gained_blocks[v * bmw:(v + 1) * bmw].any()

        def blocks_of(bitmap):
            return [q * 64 + t for q in range(bmw) for t in range(64)
                    if (int(bitmap[q]) >> t) & 1]

        # Every word with a bit lies in a block its row's occupied bitmap names.
        for v in range(n):
            held = set(blocks_of(occupied[v * bmw:(v + 1) * bmw]))
            assert {int(w) // B for w in np.flatnonzero(P[v * W:(v + 1) * W])} <= held
        # The host keeps the out list equal to the in list.
        ins = sorted((int(in_src[e]), v) for v in range(n)
                     for e in range(int(in_ptr[v]), int(in_ptr[v + 1])))
        outs = [(u, int(out_dst[e])) for u in range(n)
                for e in range(int(out_ptr[u]), int(out_ptr[u + 1]))]
        assert ins == outs
        assert not todo_tail.any()
        base = int(clock[0])
        # What sweep 0 relies on: along an old edge u -> v, v already holds u's set outside
        # the blocks that rules outside the sweeps grew (ext_blocks, with changed_at stamped).
        for v in range(n):
            for e in range(int(in_ptr[v]), int(in_ptr[v + 1])):
                u = int(in_src[e])
                if in_new[e]:
                    continue
                ext = set(blocks_of(ext_blocks[u * bmw:(u + 1) * bmw]))
                assert not ext or changed_at[u] == base
                for w in np.flatnonzero(P[u * W:(u + 1) * W] & ~P[v * W:(v + 1) * W]):
                    assert int(w) // B in ext
        sweep = 0
        while True:
            stamp = base + 1 + sweep
            cur, prev = sweep & 1, (sweep & 1) ^ 1
            buf_w, buf_r = sweep % 3, (sweep + 2) % 3
            if sweep == 0:
                items = active[:int(n_active)].tolist()
            else:
                lst = sweep % 3
                items = todo[lst * cap:lst * cap + int(todo_tail[lst])].tolist()
            for v in hub_list:
                row = ((sweep + 1) % 3 * n + v) * bmw
                gained_blocks[row:row + bmw] = 0
            nxt = (sweep + 1) % 3
            todo_tail[(sweep + 2) % 3] = 0
            rows = P.copy() if self.jacobi else P
            if self.jacobi:  # another legal order of the warps (and of a hub's chunks)
                items = items[::-1]
            for item in items:
                v, chunk = item % n, item // n
                lo_e, hi_e = int(in_ptr[v]), int(in_ptr[v + 1])
                hub = chunks_of(v) > 1
                assert hub or chunk == 0
                if hub:
                    lo_e += chunk * h_chunk
                    hi_e = min(hi_e, lo_e + h_chunk)
                gained = np.zeros(bmw, dtype=np.uint64)
                for e in range(lo_e, hi_e):
                    u = int(in_src[e])
                    if sweep == 0:
                        if not (in_new[e] or changed_at[u] == base):
                            continue
                        blocks = blocks_of(occupied[u * bmw:(u + 1) * bmw])
                        if not in_new[e]:
                            ext = set(blocks_of(ext_blocks[u * bmw:(u + 1) * bmw]))
                            blocks = [b for b in blocks if b in ext]
                    else:
                        if swept_at[prev * n + u] != stamp - 1:
                            continue
                        blocks = blocks_of(
                            gained_blocks[(buf_r * n + u) * bmw:(buf_r * n + u + 1) * bmw])
                    for b in blocks:
                        lo, hi = b * B, min(W, (b + 1) * B)
                        x = rows[u * W + lo:u * W + hi]
                        own = P[v * W + lo:v * W + hi]
                        if np.any(x & ~own):
                            own |= x
                            gained[b >> 6] |= ONE << np.uint64(b & 63)
                if gained.any():
                    gb = slice((buf_w * n + v) * bmw, (buf_w * n + v + 1) * bmw)
                    if hub:
                        gained_blocks[gb] |= gained
                    else:
                        gained_blocks[gb] = gained
                    occupied[v * bmw:(v + 1) * bmw] |= gained
                    first = swept_at[cur * n + v] != stamp
                    swept_at[cur * n + v] = stamp
                    if not first:
                        continue
                    for e in range(int(out_ptr[v]), int(out_ptr[v + 1])):
                        w = int(out_dst[e])
                        if queued_at[w] < stamp:
                            queued_at[w] = stamp
                            for c in range(chunks_of(w)):
                                at = int(todo_tail[nxt])
                                assert at < cap
                                todo[nxt * cap + at] = w + c * n
                                todo_tail[nxt] += 1
            if todo_tail[nxt] == 0:
                break
            if sweep + 1 >= max_sweeps:
                error[0] = 1
                break
            sweep += 1
        clock[0] = base + sweep + 2

    def find_cycles(self, n_nodes, old_keys, n_old, relabel, new_keys, n_new, colour, mark,
                    trim_flags, listed, edge_src, edge_dst, member, root, counts, max_passes):
        """kernels/cycles.cu pass by pass (a pass's result does not depend on the order of
        its sweeps' updates), node by node, in one order or the other (`jacobi`)."""
        n = int(n_nodes)
        gone = np.iinfo(np.int64).max
        src = np.concatenate([old_keys[:int(n_old)] % n, new_keys[:int(n_new)] % n])
        dst = np.concatenate([old_keys[:int(n_old)] // n, new_keys[:int(n_new)] // n])
        if not (isinstance(relabel, np.uint64) and relabel == 0):  # NULL: no relabelling
            src, dst = relabel[src], relabel[dst]
        keep = src != dst
        src, dst = src[keep], dst[keep]
        ins = [src[dst == v] for v in range(n)]
        outs = [dst[src == v] for v in range(n)]
        cand = [v for v in range(n) if len(ins[v]) and len(outs[v])]
        colour[:] = gone
        colour[cand] = cand
        mark[:] = -1
        order = cand[::-1] if self.jacobi else cand

        def sweeps(step) -> None:
            while any([step(v) for v in order]):
                pass

        def trim(v) -> bool:
            if colour[v] == gone:
                return False
            if (colour[ins[v]] != gone).any() and (colour[outs[v]] != gone).any():
                return False
            colour[v] = gone
            return True

        def forward(v) -> bool:
            if colour[v] == gone or not ins[v].size:
                return False
            best = min(int(colour[v]), int(colour[ins[v]].min()))
            if best < colour[v]:
                colour[v] = best
                return True
            return False

        def backward(v) -> bool:
            if colour[v] == gone or mark[v] != -1 or not (mark[outs[v]] == colour[v]).any():
                return False
            mark[v] = colour[v]
            return True

        passes = 0
        while passes < int(max_passes):
            sweeps(trim)
            alive = [v for v in cand if colour[v] != gone]
            if not alive:
                break
            colour[alive] = alive
            sweeps(forward)
            for v in alive:
                mark[v] = v if colour[v] == v else -1
            sweeps(backward)
            for v in alive:
                if mark[v] == -1:
                    continue
                if mark[v] != v:
                    member[int(counts[1])], root[int(counts[1])] = v, mark[v]
                    counts[1] += 1
                mark[v], colour[v] = -1, gone
            passes += 1
        counts[0], counts[5] = len(cand), passes

    def check(self) -> None:
        pass


def _blocks_of(bitmap) -> list[int]:
    return [q * 64 + t for q in range(bitmap.size) for t in range(64) if (int(bitmap[q]) >> t) & 1]


def _table_insert(table, mask, key, overflow, max_probes=256) -> bool:
    """kernels/pta.cu table_insert: linear probing from mix64(key)."""
    h = int(mix64(np.array([key], dtype=np.int64).view(np.uint64))[0]) & mask
    for _ in range(max_probes):
        if table[h] == -1:
            table[h] = key
            return True
        if table[h] == key:
            return False
        h = (h + 1) & mask
    overflow[0] = 1
    return True


def _mark_occupied(occupied, row, word, block_words, bitmap_words):
    b = int(word) // int(block_words)
    occupied[int(row) * int(bitmap_words) + (b >> 6)] |= ONE << np.uint64(b & 63)


def _gpu_rounds_sets(cs, jacobi: bool) -> list[set[int]]:
    lay = build_layout(cs)
    rows, row_of_var, stats = _solve(FAKE_CP, NumpyKernels(jacobi), lay, 1000)
    sol = Solution(rows=rows, row_of_var=row_of_var, objects=lay.objects, stats=stats)
    assert stats["rounds"] >= 1
    return [set(sol.points_to(v).tolist()) for v in range(cs.n_vars)]


@pytest.mark.parametrize("jacobi", [False, True], ids=["sequential", "jacobi"])
def test_hand_written_set(jacobi):
    sizes = [1] * 13
    sizes[6], sizes[7], sizes[8] = 3, 2, 1
    cs = from_lists(13, [(AOF, 5, 2), (AOF, 6, 3), (COPY, 2, 4), (STORE, 3, 4), (LOAD, 4, 9),
                         (GEP, 3, 10, 2), (GEP, 9, 11, 5), (AOF, 1, 12), (STORE, 3, 12),
                         (COPY, 9, 2)],
                    obj_size=sizes)
    assert _gpu_rounds_sets(cs, jacobi) == naive_solve(cs)


@pytest.mark.parametrize("jacobi", [False, True], ids=["sequential", "jacobi"])
def test_merged_member_passes_on_its_grown_blocks(jacobi):
    """A gep grows node 2 (its pointee 0's field 2) in the round whose new edge 1 -> 2
    closes the cycle 1 <-> 2, and the cycle merges 2 into 1, which holds the same row: the
    leader must still send that block down 2's old edge to 0 (merge_rows passes the
    member's ext_blocks on; the propagate stand-in checks the invariant). Hypothesis found
    it; main at 1ac73c1 fails here."""
    rep = list(range(11))
    rep[5] = 0
    cs = from_lists(11, [(AOF, 0, 0), (COPY, 2, 1), (COPY, 2, 0), (AOF, 2, 1), (GEP, 0, 2, 2),
                         (LOAD, 0, 2, 1), (LOAD, 0, 0)], obj_size=[3] + [0] * 10, rep=rep)
    assert _gpu_rounds_sets(cs, jacobi) == naive_solve(cs)


@pytest.mark.parametrize("jacobi", [False, True], ids=["sequential", "jacobi"])
def test_address_of_a_non_object(jacobi):
    """The rounds' host logic and kernel rules on tests/data/pta/nonobject (address-of a
    variable above lastObjectVar, of size 0), against the hand-worked sets."""
    from morphgpu import pta
    from morphgpu.pta.constraints import ConstraintFormatWarning

    with pytest.warns(ConstraintFormatWarning):
        cs = pta.load(DATA / "nonobject")
    assert _gpu_rounds_sets(cs, jacobi) == NONOBJECT_SETS


def test_rounds_report_progress():
    sizes = [1] * 13
    sizes[6], sizes[7], sizes[8] = 3, 2, 1
    cs = from_lists(13, [(AOF, 5, 2), (AOF, 6, 3), (COPY, 2, 4), (STORE, 3, 4), (LOAD, 4, 9),
                         (GEP, 3, 10, 2), (COPY, 9, 2)], obj_size=sizes)
    seen: list[dict] = []
    _, _, stats = _solve(FAKE_CP, NumpyKernels(False), build_layout(cs), 1000, seen.append)
    assert [r["round"] for r in seen] == list(range(1, stats["rounds"] + 1))
    assert seen[-1]["copy_edges"] == stats["copy_edges"]


@given(cs=constraint_sets())
def test_random_sets_sequential(cs):
    assert _gpu_rounds_sets(cs, jacobi=False) == naive_solve(cs)


@given(cs=constraint_sets())
def test_random_sets_jacobi(cs):
    assert _gpu_rounds_sets(cs, jacobi=True) == naive_solve(cs)


def test_ex_rounds_match_reference(shared):
    from morphgpu.pta import load, read_solution

    lay = build_layout(load(shared("data", "pta", "ex_nodes.txt.gz").with_name("ex")))
    rows, row_of_var, stats = _solve(FAKE_CP, NumpyKernels(jacobi=False), lay, 1000)
    sol = Solution(rows=rows, row_of_var=row_of_var, objects=lay.objects, stats=stats)
    assert stats["nodes_merged"] > 0  # ex's HCD facts were used
    ref = read_solution(shared("data", "pta", "ex_correct_soln_001.txt.gz"))
    assert sol.differences(ref) == []


@st.composite
def wide_constraint_sets(draw):
    """Sets with more than 64 addressable objects, so rows span several words."""
    n = draw(st.integers(70, 140))
    sizes = [1] * n
    for o in range(n):
        sizes[o] = draw(st.integers(0, min(3, n - o)))
    rows = [(AOF, o, draw(st.integers(0, n - 1))) for o in range(2, n)]
    for _ in range(draw(st.integers(5, 60))):
        k = draw(st.sampled_from([COPY, COPY, LOAD, STORE, GEP]))
        off = draw(st.integers(0, 2)) if k != COPY else 0
        rows.append((k, draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1)), off))
    return from_lists(n, rows, obj_size=sizes)


@settings(max_examples=25, deadline=None)
@given(cs=wide_constraint_sets(), jacobi=st.booleans())
def test_wide_rows_one_word_blocks(cs, jacobi):
    """One-word blocks: sweeps after the first read only the words a neighbour gained."""
    assert build_layout(cs).n_words > 1
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gpu, "_block_layout", lambda words: (1, -(-words // 64)))
        got = _gpu_rounds_sets(cs, jacobi)
    assert got == naive_solve(cs)


def test_block_layout_fits_a_warp_of_bitmap_words():
    for words in (1, 31, 32, 33, 4200, 65536, 65537, 10**6):
        block_words, bitmap_words = gpu._block_layout(words)
        assert block_words % 32 == 0 and 1 <= bitmap_words <= 32
        assert -(-words // block_words) <= 64 * bitmap_words


def test_relabel_keys_sorts_dedups_and_flags_new_edges():
    n = 10
    old = np.array([3, 12, 25, 47, 98], dtype=np.int64)
    new = np.array([47, 5, 5, 13, 97, 0, 33], dtype=np.int64)  # 0 and 33 are self loops
    same = np.arange(n, dtype=np.int64)
    keys, flag, src, out, _ = gpu._relabel_keys(FAKE_CP, NumpyKernels(False), old, new, same,
                                                n)
    assert keys.tolist() == [3, 5, 12, 13, 25, 47, 97, 98]
    assert flag.tolist() == [0, 1, 0, 1, 0, 0, 1, 0]
    assert src.tolist() == [k % n for k in keys.tolist()]
    assert out.tolist() == sorted((k % n) * n + k // n for k in keys.tolist())
    # Node 4 merges into 2: old 47 (4 <- 7) becomes 27 and 24 (2 <- 4) a self loop; the new
    # 27 repeats a relabelled known edge, so it is not new.
    relabel = same.copy()
    relabel[4] = 2
    old = np.array([3, 12, 24, 25, 47, 98], dtype=np.int64)
    new = np.array([27, 41, 8], dtype=np.int64)
    also = np.array([7], dtype=np.uint64)  # a device word read with the kept count
    keys, flag, _, _, extra = gpu._relabel_keys(FAKE_CP, NumpyKernels(False), old, new,
                                                relabel, n, also)
    assert keys.tolist() == [3, 8, 12, 21, 25, 27, 98]
    assert flag.tolist() == [0, 1, 0, 1, 0, 0, 0]
    assert extra == 7
    keys, flag, _, _, extra = gpu._relabel_keys(FAKE_CP, NumpyKernels(False), old[:0],
                                                old[:0], relabel, n, also)
    assert keys.size == 0 and flag.size == 0 and extra == 7


@given(cs=constraint_sets(), jacobi=st.booleans(), pick=st.integers(0, 2**16))
def test_random_sets_with_hcd_facts(cs, jacobi, pick):
    """HCD facts true of the least solution (every object x points to, other than the null
    object, has y's set) may be used early: merging must not change the answer."""
    want = naive_solve(cs)
    chosen = true_hcd_facts(cs, want, pick)
    with_facts = from_lists(cs.n_vars, list(zip(cs.kind, cs.src, cs.dst, cs.offset)),
                            obj_size=cs.obj_size, rep=cs.rep, hcd_pairs=chosen)
    assert _gpu_rounds_sets(with_facts, jacobi) == want


@pytest.mark.parametrize("jacobi", [False, True], ids=["sequential", "jacobi"])
def test_merged_pointer_keeps_its_delta(jacobi):
    cs, want = merged_pointer_case()
    assert _gpu_rounds_sets(cs, jacobi) == want


@pytest.fixture
def tiny_buffers(monkeypatch):
    """Key table and buffers far too small: every round overflows them."""
    monkeypatch.setattr(gpu, "MIN_TABLE", 2)
    monkeypatch.setattr(gpu, "MIN_KEY_BUFFER", 1)
    monkeypatch.setattr(gpu, "MIN_MERGE_BUFFER", 1)


@settings(max_examples=40, deadline=None)
@given(cs=constraint_sets(), jacobi=st.booleans(), pick=st.integers(0, 2**16),
       max_table=st.sampled_from([4, 1 << 28]))
def test_overflowing_tables_and_buffers(cs, jacobi, pick, max_table):
    """Table overflow (keys may repeat: the general merge) and buffer overflow (rebuild and
    evaluate again) give the same answer."""
    want = naive_solve(cs)
    chosen = true_hcd_facts(cs, want, pick)
    with_facts = from_lists(cs.n_vars, list(zip(cs.kind, cs.src, cs.dst, cs.offset)),
                            obj_size=cs.obj_size, rep=cs.rep, hcd_pairs=chosen)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gpu, "MIN_TABLE", 2)
        mp.setattr(gpu, "MIN_KEY_BUFFER", 1)
        mp.setattr(gpu, "MIN_MERGE_BUFFER", 1)
        mp.setattr(gpu, "MAX_TABLE", max_table)  # 4: overflowing rounds keep their repeats
        assert _gpu_rounds_sets(with_facts, jacobi) == want


def test_ex_with_tiny_buffers(shared, tiny_buffers):
    from morphgpu.pta import load, read_solution

    lay = build_layout(load(shared("data", "pta", "ex_nodes.txt.gz").with_name("ex")))
    rows, row_of_var, stats = _solve(FAKE_CP, NumpyKernels(jacobi=False), lay, 1000)
    assert stats["table_rebuilds"] > 2  # buffers grew and the table was rebuilt
    sol = Solution(rows=rows, row_of_var=row_of_var, objects=lay.objects, stats=stats)
    assert sol.differences(read_solution(shared("data", "pta", "ex_correct_soln_001.txt.gz"))) == []


def test_ex_rounds_use_the_fast_merge(shared):
    """ex's rounds without merges take the batch merge (distinct new keys from the table),
    and the table keeps repeated keys out: far fewer edges than objects read."""
    from morphgpu.pta import load

    lay = build_layout(load(shared("data", "pta", "ex_nodes.txt.gz").with_name("ex")))
    _, _, stats = _solve(FAKE_CP, NumpyKernels(jacobi=False), lay, 1000)
    assert stats["slow_merges"] < stats["rounds"]
    assert stats["edges_added"] < stats["delta_objects"]


@settings(max_examples=40, deadline=None)
@given(cs=constraint_sets(), jacobi=st.booleans(), pick=st.integers(0, 2**16),
       hub=st.sampled_from([(1, 1), (1, 2), (2, 2), (2, 5), (3, 4)]))
def test_random_sets_with_hub_chunks(cs, jacobi, pick, hub):
    """Nodes of more than HUB_MIN in-edges pulled as chunks of HUB_CHUNK (several writers
    of one row, ORed gained bitmaps, the first gaining chunk queues): same answer."""
    want = naive_solve(cs)
    chosen = true_hcd_facts(cs, want, pick)
    with_facts = from_lists(cs.n_vars, list(zip(cs.kind, cs.src, cs.dst, cs.offset)),
                            obj_size=cs.obj_size, rep=cs.rep, hcd_pairs=chosen)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gpu, "HUB_CHUNK", hub[0])
        mp.setattr(gpu, "HUB_MIN", hub[1])
        assert _gpu_rounds_sets(with_facts, jacobi) == want


@settings(max_examples=20, deadline=None)
@given(cs=wide_constraint_sets(), jacobi=st.booleans())
def test_wide_rows_hub_chunks(cs, jacobi):
    """Hub chunks with one-word blocks: each chunk's gains are the words its OR added."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gpu, "_block_layout", lambda words: (1, -(-words // 64)))
        mp.setattr(gpu, "HUB_CHUNK", 1)
        mp.setattr(gpu, "HUB_MIN", 1)
        got = _gpu_rounds_sets(cs, jacobi)
    assert got == naive_solve(cs)


@pytest.mark.parametrize("hub", [(0, 0), (2, 3)], ids=["one-warp", "hub-chunks"])
def test_ex_hub_paths_match_reference(shared, hub, monkeypatch):
    from morphgpu.pta import load, read_solution

    monkeypatch.setattr(gpu, "HUB_CHUNK", hub[0])
    monkeypatch.setattr(gpu, "HUB_MIN", hub[1])
    lay = build_layout(load(shared("data", "pta", "ex_nodes.txt.gz").with_name("ex")))
    rows, row_of_var, stats = _solve(FAKE_CP, NumpyKernels(jacobi=True), lay, 1000)
    sol = Solution(rows=rows, row_of_var=row_of_var, objects=lay.objects, stats=stats)
    ref = read_solution(shared("data", "pta", "ex_correct_soln_001.txt.gz"))
    assert sol.differences(ref) == []
