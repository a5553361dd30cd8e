"""The GPU engine: the same phases as cpu.py, as CUDA kernels (kernels/*.cu) over CuPy arrays.

Loops stay on the device: SP sweeps are launched back to back and the host reads the
sweeps' max |Δeta| only every ``CHECK_EVERY`` sweeps (each sweep writes its own slot);
unit propagation reads one flag per wave, and after it the sweeps' lists are compacted to
what is still open (free variables, their open clauses' slots, open clauses); the local
search is a single persistent launch of conflict-free parallel rounds that stops on the
device when a round finds no unsatisfied clause (or its budget is spent); then, only if
needed, one single-warp launch of the sequential tail, whose loop over flips is on the
device too. Decimation picks the most biased variables with one CuPy sort.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import backend, barrier, hashing, kernels
from . import factor, rules
from .cnf import CNF
from .factor import FactorGraph

CHECK_EVERY = 8
# After each unit propagation, move the sweeps to the formula of what is still open (kernels/
# survey.cu, "Compaction"); False sweeps over the input formula, skipping the fixed and
# satisfied parts by their marks (the benchmark's "off" row). Compaction only drops: a
# backtracking step (release) puts the sweeps back on the input formula, to be compacted
# anew from the new marks (_reset_to_decisions); plain decimation never pays for that.
COMPACT = True
# Compile the clause kernel for the formula's width (SP_WIDTH in kernels/survey.cu) when it
# is at most this: its loops then unroll and keep their ratios in registers.
FIXED_WIDTH_MAX = 8
# ls_rounds hands the search to one block once a round has at most this many proposals
# (kernels/walk.cu, "solo"). On the frozen residual (factor.frozen_residual) a round's
# proposals are cheap, so the grid keeps rounds a block used to take: H100, 1M variables,
# same process, local-search seconds at 96 / 48 / 12 / 0 (never solo): K=5 20 0.96 / 0.90
# / 0.93 / 1.28 and 0.98 / 0.91 / 0.88 / 1.20, K=3 4.2 1.17 / 1.02 / 0.99 / 1.19 and 0.82 /
# 0.78 / 0.80 / 0.91, K=4 9.8 1.98 / 1.89 / 1.93 / 2.52; 256 and 512 lost to 96 on each
# (benchmarks/results/2026-11-27-h100-s17/tail-ab*.log).
BLOCK_TAIL = 48
BLOCK = 256
# ls_rounds' block (LS_BLOCK in kernels/walk.cu: its solo rounds run on one such block)
# and lanes per proposal in its claim and flip phases (LS_GROUP). H100, K=3 ratio 4.2 1M,
# seeds 0/1, same process and rounds: block 512 2.25/2.12 s, 1024 2.28/2.15, 256 2.41/2.24;
# 4 lanes per proposal 1.25-1.3x slower than 8. The rounds are latency-bound: a wider block
# only shortens the solo rounds' loops over their proposals.
LS_BLOCK = 512
LS_GROUP = 8


class GPUEngine:
    side = "gpu"

    def __init__(self, fg: FactorGraph, seed: int | None, damping: float = 0.0) -> None:
        cp = backend.cupy_module()
        self.cp = cp
        self.fg = fg
        self.damping = float(damping)
        self.seed = int(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0])
        n, m, w = fg.n_vars, fg.n_clauses, fg.width
        edges = m * w
        slots = int(fg.var_edges.size)
        # Slot codes 2 * edge + negated (kernels/survey.cu) need one bit past the edge ids.
        code_dtype = np.int32 if 2 * edges + 1 < 2**31 else np.int64
        # Codes and the clauses' arrays twice: compaction writes the new ones before the
        # old ones go (and the input's surveys stay).
        needed = 2 * edges * (4 + 4 + 1) + 2 * slots * np.dtype(code_dtype).itemsize \
            + n * (8 * 2 + 4 * 7 + 2 + 8 * 3) + m * (4 + 1 + 8)
        backend.require_gpu_bytes(needed, f"sp.solve: surveys for {n} variables, {m} clauses")
        defines = kernels.index_defines(fg.lit_var.dtype, fg.var_edges.dtype)
        survey_defines = {**defines,
                          "SP_CODE_T": "int" if code_dtype == np.int32 else "long long"}
        if 1 <= w <= FIXED_WIDTH_MAX:
            survey_defines["SP_WIDTH"] = w
        survey = kernels.load_module("sp/kernels/survey.cu", defines=survey_defines)
        simplify = kernels.load_module("sp/kernels/simplify.cu", defines=defines)
        # The local search is one persistent kernel over a grid barrier (kernels/walk.cu),
        # three barriers per round and ~1e5 rounds at 1M variables: cooperative grid.sync()
        # (2.2 µs at 1056 x 256 on an H200, benchmarks/RESULTS.md) over Xiao-Feng (4.0 µs).
        # One ls_rounds block per SM, not as many as fit: most rounds have a few hundred
        # proposals, and a grid barrier over fewer blocks is cheaper. H100, K=3 ratio 4.2
        # 1M, seeds 5/6, same process and rounds: local search 1.83/1.89 s with every
        # resident block (264), 1.76/1.73 with 132, 1.72/1.73 with 64, 1.74/1.69 with 32.
        walk_defines = {**defines, "LS_BLOCK": LS_BLOCK, "LS_GROUP": LS_GROUP}
        if 1 <= w <= FIXED_WIDTH_MAX:
            walk_defines["LS_WIDTH"] = w  # propose's loops unroll (kernels/walk.cu)
        sms = backend.gpu_properties()["multiprocessors"]
        self._walk = barrier.persistent_kernel("sp/kernels/walk.cu", "ls_rounds",
                                               mode="cooperative", block=LS_BLOCK,
                                               defines=walk_defines, max_blocks=sms)
        walk = kernels.load_module("sp/kernels/walk.cu", defines=walk_defines)
        self._k = {name: mod.get_function(name) for mod, names in (
            (survey, ("sp_var_products", "sp_slot_codes", "sp_clause_update", "sp_biases",
                      "sp_live_counts", "sp_compact_codes", "sp_decided_scores")),
            (simplify, ("unit_wave", "fix_chosen")),
            (walk, ("ls_state", "ls_tail"))) for name in names}
        self._occ: tuple[Any, Any] | None = None
        # Surveys of the formula the sweeps run on (the input's edges until the first
        # compaction, then the compacted clauses', see ``eta``); _eta_input holds the
        # input's layout once they differ.
        self._eta = hashing.uniform_floats(cp, edges, self.seed)
        self._eta_input: Any = None
        # The formula the sweeps run on: variables (var_list, their slots offsets[i] ..
        # offsets[i + 1] of codes, the code the product kernel reads: sp_slot_codes) and
        # clauses (clause_list: their ids in the input; clause_var / clause_neg: their
        # literals); first the input, then compacted after each unit propagation.
        self.compact = COMPACT
        self.var_list = cp.arange(n, dtype=fg.lit_var.dtype)
        self.offsets = fg.var_offsets
        self.clause_list = cp.arange(m, dtype=fg.var_edges.dtype)
        self.clause_var, self.clause_neg = fg.lit_var, fg.lit_neg
        self.compacted = False
        self._code_dtype = code_dtype
        self.codes = cp.empty(slots, dtype=code_dtype)
        self._codes_stale = True
        self.lanes = _lanes(slots, n)
        self.fixed = cp.zeros(n, dtype=cp.int32)
        # Decimation's decisions (+1 / -1; 0 elsewhere), a subset of fixed: the rest of
        # fixed is implied by unit propagation (backtracking releases decisions).
        self.decided = cp.zeros(n, dtype=cp.int32)
        self._last_pick: Any = None  # the last decimation step's decisions
        self.satisfied = cp.zeros(m, dtype=cp.uint8)
        self.values = cp.zeros(n, dtype=cp.uint8)
        # Per variable, one 32-byte record (one memory sector): product of the non-zero
        # (1 - eta) over positive / negative occurrences, then the zero counts (as doubles).
        self.prods = cp.zeros((n, 4), dtype=cp.float64)
        self.flags = cp.zeros(2, dtype=cp.int32)
        self.deltas = cp.zeros(CHECK_EVERY, dtype=cp.uint32)
        self.no_delta = cp.full(1, np.float32(np.inf).view(np.uint32), dtype=cp.uint32)
        self.rounds_seed = self.seed
        # 0 keeps every round on the whole grid (see BLOCK_TAIL).
        self.block_tail = BLOCK_TAIL
        self._last_diff: Any = None
        self._cap = sms * 32  # blocks: enough to fill the GPU, grid-stride beyond

    def _sync_codes(self) -> None:
        """Slot codes from the satisfied marks (after unit propagation), then, when
        compacting, the lists without what has been fixed or satisfied since."""
        if not self._codes_stale:
            return
        fg = self.fg
        if not self.compacted:  # codes of the input formula (compaction renumbers them)
            grid, block = self._grid(self.codes.size)
            self._k["sp_slot_codes"](
                grid, block, (np.int64(self.codes.size), fg.var_edges,
                              np.int32(max(fg.width, 1)), fg.lit_neg, self.satisfied,
                              self.codes))
        if self.compact:
            self._compact()
        self._codes_stale = False

    def _compact(self) -> None:
        """Move the sweeps to the clauses still open and the variables still free."""
        cp, fg = self.cp, self.fg
        w = max(fg.width, 1)
        keep = self.satisfied[self.clause_list] == 0
        new_index = cp.cumsum(keep, dtype=cp.int64) - 1
        new_index[~keep] = -1
        # Variable side, on the device (kernels/survey.cu).
        n_list = int(self.var_list.size)
        counts = cp.empty(n_list, dtype=cp.int64)
        grid, block = self._grid(n_list * self.lanes)
        common = (np.int64(n_list), self.var_list, self.offsets, self.codes, np.int32(w),
                  self.fixed, new_index, np.int32(self.lanes))
        self._k["sp_live_counts"](grid, block, (*common, counts))
        starts = cp.zeros(n_list + 1, dtype=cp.int64)
        cp.cumsum(counts, out=starts[1:])
        codes = cp.empty(int(starts[-1].get()), dtype=self.codes.dtype)
        self._k["sp_compact_codes"](grid, block, (*common, starts, codes))
        free = self.fixed[self.var_list] == 0
        self.var_list = self.var_list[free]
        self.offsets = cp.concatenate((starts[:-1][free], starts[-1:]))
        self.codes = codes
        self.lanes = _lanes(codes.size, self.var_list.size)
        # Clause side: the kept clauses' literals, a fixed variable's as -1, and surveys.
        if self.compacted:
            self._write_back_eta()
        else:
            self._eta_input = self._eta
        lits = self.clause_var.reshape(-1, w)[keep]
        self.clause_neg = self.clause_neg.reshape(-1, w)[keep].ravel()
        self._eta = self._eta.reshape(-1, w)[keep].ravel()
        free_lit = (lits >= 0) & (self.fixed[cp.maximum(lits, 0)] == 0)
        self.clause_var = cp.where(free_lit, lits, -1).astype(lits.dtype).ravel()
        self.clause_list = self.clause_list[keep]
        self.compacted = True

    def _input_positions(self) -> Any:
        """Per edge of the compacted clauses, its edge in the input formula."""
        w = max(self.fg.width, 1)
        slot = self.cp.arange(w, dtype=self.cp.int64)
        return (self.clause_list.astype(self.cp.int64)[:, None] * w + slot).ravel()

    def _write_back_eta(self) -> None:
        self._eta_input[self._input_positions()] = self._eta

    @property
    def eta(self) -> Any:
        """The surveys in the input formula's edge order (satisfied clauses keep their last)."""
        if not self.compacted:
            return self._eta
        self._write_back_eta()
        return self._eta_input

    @eta.setter
    def eta(self, value: Any) -> None:
        value = self.cp.asarray(value, dtype=self.cp.float32)
        if not self.compacted:
            self._eta = value
            return
        self._eta_input = value
        self._eta = value[self._input_positions()]

    def _grid(self, n_items: int) -> tuple[tuple[int], tuple[int]]:
        return kernels.launch_config(max(1, n_items), BLOCK, self._cap)

    # ----------------------------------------------------------------- simplification
    def propagate(self) -> bool:
        fg = self.fg
        grid, block = self._grid(self.clause_list.size)
        kernel = self._k["unit_wave"]
        while True:
            self.flags.fill(0)
            kernel(grid, block, (np.int64(self.clause_list.size), self.clause_list,
                                 np.int32(fg.width), fg.lit_var, fg.lit_neg, self.fixed,
                                 self.satisfied, self.flags, self.flags[1:]))
            changed, contradiction = (int(x) for x in self.flags.get())
            # New satisfied marks: their clauses' slot codes must become -1.
            self._codes_stale = True
            if contradiction:
                return False
            if not changed:
                return True

    def n_free(self) -> int:
        return int(self.cp.count_nonzero(self.fixed == 0))

    # ----------------------------------------------------------------- surveys
    def _products(self, prev_delta: Any = None, epsilon: float = 0.0) -> None:
        self._sync_codes()
        grid, block = self._grid(self.var_list.size * self.lanes)
        self._k["sp_var_products"](
            grid, block,
            (np.int64(self.var_list.size), self.var_list, self.offsets, self.codes,
             np.int32(self.lanes), self._eta, self.fixed, self.prods,
             self.no_delta if prev_delta is None else prev_delta, np.float32(epsilon)))

    def _sweep(self, slot: int, epsilon: float = 0.0) -> None:
        """One sweep into deltas[slot]; a no-op on the device when deltas[slot - 1] (the
        sweep before it in a batch) is already below ``epsilon``."""
        fg = self.fg
        prev = self.deltas[slot - 1:] if slot > 0 else self.no_delta
        self._products(prev, epsilon)
        grid, block = self._grid(self.clause_list.size)
        self._k["sp_clause_update"](
            grid, block,
            (np.int64(self.clause_list.size), np.int32(self.compacted), np.int32(fg.width),
             self.clause_var, self.clause_neg, self._eta,
             self.fixed, self.satisfied, self.prods, np.float32(self.damping),
             self.deltas[slot:], prev, np.float32(epsilon)))

    def run_surveys(self, epsilon: float, max_iterations: int,
                    stall_window: int = 0) -> tuple[bool, int]:
        """Sweeps in batches of CHECK_EVERY, one read of their deltas per batch; returns
        (converged, sweeps run), counting only the sweeps up to the first converged one
        (those after it in its batch return at once on the device). self.stalled says
        whether it stopped early for lack of progress (rules.no_progress)."""
        self.stalled = False
        history: list[float] = []
        done = 0
        while done < max_iterations:
            batch = min(CHECK_EVERY, max_iterations - done)
            self.deltas.fill(0)
            for slot in range(batch):
                self._sweep(slot, epsilon)
            worst = self.deltas[:batch].get().view(np.float32)
            below = np.flatnonzero(worst < epsilon)
            if below.size:
                return True, done + int(below[0]) + 1
            done += batch
            history.extend(float(x) for x in worst)
            if rules.no_progress(history, stall_window):
                self.stalled = True
                return False, done
        return False, max_iterations

    def biases(self) -> tuple[Any, Any]:
        cp, fg = self.cp, self.fg
        self._products()
        diff = cp.empty(fg.n_vars, dtype=cp.float32)
        strength = cp.empty(fg.n_vars, dtype=cp.float32)
        grid, block = self._grid(fg.n_vars)
        self._k["sp_biases"](
            grid, block,
            (np.int64(fg.n_vars), self.fixed, self.prods, diff, strength))
        return diff, strength

    def decimate(self, fix_fraction: float, trivial_threshold: float) -> tuple[bool, int]:
        cp = self.cp
        diff, strength = self.biases()
        free = self.fixed == 0
        n_free = int(cp.count_nonzero(free))
        if n_free == 0:
            return True, 0
        self._last_diff = diff
        mean_strength = float(strength.sum(dtype=cp.float64)) / n_free  # fixed ones hold 0
        if mean_strength < trivial_threshold:
            return True, 0
        n_fix = max(1, int(fix_fraction * n_free))
        score = cp.where(free, cp.abs(diff), cp.float32(-1.0))
        chosen = cp.argsort(-score)[:n_fix].astype(cp.int64)
        grid, block = self._grid(n_fix)
        self._k["fix_chosen"](
            grid, block, (np.int64(n_fix), chosen, diff, self.fixed, self.decided))
        self._last_pick = chosen
        return False, n_fix

    def surveys_trivial(self, trivial_threshold: float) -> bool:
        """decimate's test of the surveys without fixing anything (keeps the biases as the
        local search's start, as decimate does)."""
        diff, strength = self.biases()
        n_free = int(self.cp.count_nonzero(self.fixed == 0))
        if n_free == 0:
            return True
        self._last_diff = diff
        return float(strength.sum(dtype=self.cp.float64)) / n_free < trivial_threshold

    # ----------------------------------------------------------------- backtracking
    def n_decided(self) -> int:
        return int(self.cp.count_nonzero(self.decided))

    def decision_scores(self) -> Any:
        """Per decided variable, its SP bias towards its value as if it were free
        (kernels/survey.cu sp_decided_scores; cpu.py has the NumPy twin); +inf elsewhere."""
        cp, fg = self.cp, self.fg
        self._products()  # fresh for the free variables, from the sweeps' last surveys
        eta = self.eta  # the input's edge order (written back from the compacted one)
        score = cp.empty(fg.n_vars, dtype=cp.float32)
        grid, block = self._grid(fg.n_vars)
        self._k["sp_decided_scores"](
            grid, block,
            (np.int64(fg.n_vars), self.decided, self.fixed, fg.var_offsets, fg.var_edges,
             np.int32(max(fg.width, 1)), fg.lit_var, fg.lit_neg, eta, self.prods, score))
        return score

    def release(self, count: int) -> tuple[bool, Any]:
        """Release the ``count`` decisions of lowest decision_scores (a stable sort: ties go
        to the lower variable, as on the CPU), then recompute the implied values from the
        decisions left: (consistent, released variables)."""
        cp = self.cp
        scores = self.decision_scores()
        count = min(int(count), self.n_decided())
        out = cp.argsort(scores)[:count]
        self.decided[out] = 0
        return self._reset_to_decisions(), out

    def has_last_decimation(self) -> bool:
        return self._last_pick is not None and int(self._last_pick.size) > 0

    def undo_last_decimation(self) -> bool:
        """Release the last decimation step's decisions and recompute the implied values."""
        if self._last_pick is not None:
            self.decided[self._last_pick] = 0
        self._last_pick = None
        return self._reset_to_decisions()

    def _reset_to_decisions(self) -> bool:
        """fixed = the decisions, no clause satisfied, then unit propagation; the sweeps go
        back to the input formula (compaction only drops), to be compacted anew from these
        marks on the next sweep; the surveys stay, in the input's edge order."""
        cp, fg = self.cp, self.fg
        if self.compacted:
            self._write_back_eta()
            self._eta, self._eta_input = self._eta_input, None
            self.compacted = False
        self.var_list = cp.arange(fg.n_vars, dtype=fg.lit_var.dtype)
        self.offsets = fg.var_offsets
        self.clause_list = cp.arange(fg.n_clauses, dtype=fg.var_edges.dtype)
        self.clause_var, self.clause_neg = fg.lit_var, fg.lit_neg
        self.codes = cp.empty(int(fg.var_edges.size), dtype=self._code_dtype)
        self.lanes = _lanes(int(fg.var_edges.size), fg.n_vars)
        self._codes_stale = True
        cp.copyto(self.fixed, self.decided)
        self.satisfied.fill(0)
        return self.propagate()

    # ----------------------------------------------------------------- local search
    def _occurrences(self, fg: FactorGraph) -> tuple[Any, Any]:
        """Per variable of ``fg`` (in var_edges order): its clauses and whether it occurs
        positively (kept for the engine's own graph, made afresh for a residual)."""
        if fg is self.fg and self._occ is not None:
            return self._occ
        clauses = (fg.var_edges // max(fg.width, 1)).astype(fg.var_edges.dtype)
        occ = (clauses, (fg.lit_neg[fg.var_edges] == 0).astype(self.cp.uint8))
        if fg is self.fg:
            self._occ = occ
        return occ

    def local_search(self, max_rounds: int, *, freeze_fixed: bool, init: bool,
                     max_flips: int = 0, stall_floor: int = 0) -> bool:
        """Conflict-free parallel probSAT rounds (kernels/walk.cu ls_rounds, one persistent
        launch; the NumPy twin is walk.conflict_free_walk), then, only if their budget ran
        out (not when they stalled), at most ``max_flips`` sequential flips (ls_tail).
        ``stall_floor`` > 0 stops the rounds by rules.walk_stalled; self.walk_progress says
        how the unsatisfied count went. With the fixed variables frozen, the walk runs on
        factor.frozen_residual (the clauses they leave open)."""
        cp, fg = self.cp, self.fg
        fixed_mask = self.fixed != 0
        if freeze_fixed:
            fg = factor.frozen_residual(fg, self.fixed) or fg
        n, m, w = fg.n_vars, fg.n_clauses, fg.width
        if init:
            start = hashing.uniform_floats(cp, n, self.seed + 1) < 0.5
            # Free variables start on the side of their last SP bias (W+ - W-), at random
            # where it is 0. H100, K=3 ratio 4.2 1M, seeds 0/1, same process: rounds
            # 198k/178k -> 128k/125k, local search 3.04/3.03 -> 2.60/2.32 s against an
            # all-random start.
            if self._last_diff is not None:
                diff = self._last_diff
                start = cp.where(diff != 0, diff > 0, start)
            self.values = cp.where(fixed_mask, self.fixed > 0, start).astype(cp.uint8)
        self.local_search_rounds_run = self.local_search_flips_run = 0
        self.walk_progress = None
        if m == 0:
            return True
        if m >= 2**32:
            raise ValueError(f"sp.solve: at most 2**32 - 1 clauses (claim marks), got {m}")
        backend.require_gpu_bytes(m * (4 + 4 + 2 * 8 + 4 + 8 + 8) + n * 4 + m * w * 5,
                                  f"sp.solve: local search over {m} clauses")
        frozen = (fixed_mask if freeze_fixed else cp.zeros(n, dtype=bool)).astype(cp.uint8)
        var_clauses, var_positive = self._occurrences(fg)
        true_count = cp.empty(m, dtype=cp.int32)
        true_xor = cp.empty(m, dtype=fg.lit_var.dtype)
        breaks = cp.zeros(n, dtype=cp.int32)
        grid, block = self._grid(m)
        self._k["ls_state"](grid, block, (np.int64(m), np.int32(w), fg.lit_var, fg.lit_neg,
                                          self.values, true_count, true_xor, breaks))
        # Two lists of clauses to look at (ls_rounds alternates them), the first holding
        # the clauses false at the start.
        lists = cp.empty(2 * m, dtype=fg.var_edges.dtype)
        false_now = cp.flatnonzero(true_count == 0)
        lists[: false_now.size] = false_now.astype(lists.dtype)
        # Three list counts (rotating), then two spilled-proposal counts (kernels/walk.cu).
        list_count = cp.zeros(5, dtype=cp.uint64)
        list_count[0] = false_now.size
        del false_now
        prop_var = cp.empty(m, dtype=fg.lit_var.dtype)
        prop_mark = cp.empty(m, dtype=cp.uint64)
        marks = cp.zeros(m, dtype=cp.uint64)
        flips = cp.zeros(1, dtype=cp.uint64)
        # stuck, round, solved, resume, fewest proposals, its round, longest wait, stalled
        outcome = cp.asarray(np.array([0, 0, 0, 0, rules.NO_ROUND_YET, 0, 0, 0], dtype=np.int32))
        table = cp.asarray(rules.break_weights(w))
        self.rounds_seed += 1
        r0 = 0
        self.local_search_launches = 0
        while True:
            self._walk.launch(
                np.int64(m), np.int32(w), fg.lit_var, fg.var_offsets, var_clauses, var_positive,
                self.values, true_count, true_xor, breaks, frozen, table,
                np.uint64(self.rounds_seed % 2**64), np.uint64(0), np.int32(r0),
                np.int32(min(int(max_rounds), 2**31 - 2)), lists, list_count, prop_var,
                prop_mark, marks, flips, outcome, np.int32(self.block_tail),
                np.int32(max(0, min(int(stall_floor), 2**31 - 1))))
            self.local_search_launches += 1
            stuck, rounds, solved, resume, *progress = (int(x) for x in outcome.get())
            self._walk.check()
            if not resume:
                break
            # The solo block met a round too large for it: the whole grid takes it up.
            outcome[3] = 0
            r0 = rounds
        self.local_search_rounds_run = rounds
        self.local_search_flips_run = int(flips.get()[0])
        self.walk_progress = rules.WalkProgress(*progress[:3], stalled=bool(progress[3]),
                                                stuck=bool(stuck))
        if solved or stuck or self.walk_progress.stalled or max_flips <= 0:
            return bool(solved)
        del breaks, true_xor, prop_var, prop_mark, marks, lists
        return self._sequential_tail(fg, true_count, frozen, max_flips)

    def _sequential_tail(self, fg: FactorGraph, true_count: Any, frozen: Any,
                         max_flips: int) -> bool:
        """The single-warp ls_tail over ``fg`` (the engine's graph or the rounds'
        residual) from the parallel phase's state (true_count matches values); returns
        whether it satisfied every clause."""
        cp = self.cp
        m = fg.n_clauses
        backend.require_gpu_bytes(16 * m, f"sp.solve: local-search tail over {m} clauses")
        unsat = cp.flatnonzero(true_count == 0).astype(cp.int64)
        unsat_list = cp.empty(m, dtype=cp.int64)
        unsat_list[: unsat.size] = unsat
        unsat_pos = cp.full(m, -1, dtype=cp.int64)
        unsat_pos[unsat] = cp.arange(unsat.size, dtype=cp.int64)
        table = cp.asarray(rules.tail_break_weights(fg.width))
        outcome = cp.zeros(3, dtype=cp.int64)
        self.rounds_seed += 1
        self._k["ls_tail"](
            (1,), (32,),
            (np.int32(fg.width), fg.lit_var, fg.lit_neg, fg.var_offsets, fg.var_edges,
             self.values, true_count, frozen, table, np.uint64(self.rounds_seed % 2**64),
             np.int64(max_flips), unsat_list, unsat_pos, np.int64(unsat.size), outcome))
        solved, flips, _stuck = (int(x) for x in outcome.get())
        self.local_search_flips_run += flips
        return bool(solved)

    def assignment(self) -> np.ndarray:
        return self.values.get().astype(bool)


# Threads per block of count_false_clauses: VERIFY_BLOCK in kernels/verify.cu (its shared
# per-warp totals are sized for it).
VERIFY_BLOCK = 256
# The error codes count_false_clauses writes to out[1].
_VERIFY_ERRORS = {1: "a literal is 0 or names a variable past n_vars",
                  2: "the offsets point outside the literals or decrease"}


def count_false_clauses(cnf: CNF, values: Any) -> int:
    """How many clauses of ``cnf`` the device assignment ``values`` (one byte per variable,
    non-zero for true, index 0 is variable 1) leaves false; empty clauses count as false.

    The GPU twin of ``len(cnf.unsatisfied_clauses(cnf, values))``, over the CNF's own
    arrays (one copy each to the device), not the solver's factor graph. Raises ValueError
    on a malformed formula (which the NumPy check would also refuse or misread).
    """
    cp = backend.cupy_module()
    n, m = cnf.n_vars, cnf.n_clauses
    values = cp.ascontiguousarray(cp.asarray(values))  # the engine's own array: no copy
    if int(values.size) != n:
        raise ValueError(
            f"assignment has {values.size} values but the formula has {n} variables"
        )
    if m == 0:
        return 0
    if values.dtype != cp.uint8:
        values = (values != 0).astype(cp.uint8)
    lits = cnf.literals
    backend.require_gpu_bytes(lits.nbytes + cnf.offsets.nbytes + 64,
                              f"sp.solve: verifying {m} clauses on the GPU")
    # One host-to-device copy per array; the kernel reads int or long long literals
    # (index_defines), anything else is widened on the device.
    d_lits = backend.to_side(lits, "gpu")
    if d_lits.dtype not in (cp.int32, cp.int64):
        d_lits = d_lits.astype(cp.int64)
    d_offsets = backend.to_side(cnf.offsets, "gpu")
    if d_offsets.dtype != cp.int64:
        d_offsets = d_offsets.astype(cp.int64)
    module = kernels.load_module("sp/kernels/verify.cu",
                                 defines=kernels.index_defines(d_lits.dtype, np.int64))
    out = cp.asarray(np.array([0, 0, 2**64 - 1], dtype=np.uint64))
    sms = backend.gpu_properties()["multiprocessors"]
    grid, block = kernels.launch_config(m, VERIFY_BLOCK, sms * 32)
    module.get_function("count_false_clauses")(
        grid, block, (np.int64(m), d_offsets, d_lits, np.int64(d_lits.size), np.int64(n),
                      values, out))
    # One read: it waits for the launch, so a fault in it raises here, not later.
    n_false, error, where = (int(x) for x in out.get())
    if error:
        raise ValueError(f"verify: clause {where}: {_VERIFY_ERRORS.get(error, error)}")
    return n_false


def verify_on_device(cnf: CNF, values: Any) -> bool:
    """True iff the device assignment ``values`` satisfies every clause of ``cnf``."""
    return count_false_clauses(cnf, values) == 0


def _lanes(slots: int, n_vars: int) -> int:
    """Threads per variable in the product kernel: a power of two near an eighth of the mean
    degree (full formulas: K=3 ratio 4.2: 2, K=4: 8, K=5: 16, K=6: 32), at most 32."""
    mean_degree = slots / max(n_vars, 1)
    return min(32, 1 << max(0, int(round(np.log2(max(mean_degree / 8, 1.0))))))
