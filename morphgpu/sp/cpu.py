"""The CPU engine: every SP phase in vectorised NumPy, in the same order as the GPU engine.

State (shared in meaning with morphgpu/sp/gpu.py):
- ``eta``: the survey of each edge (clause → variable), float64 here, float32 on the GPU;
- ``fixed``: int8 per variable, 0 free, +1 true, -1 false;
- ``satisfied``: bool per clause, set once a fixed literal makes it true (the clause is then
  removed from the graph by marking, paper §7.2);
- ``values``: the local search's assignment (bool per variable);
- ``decided``: int8 per variable, the decisions of decimation (+1 / -1, 0 elsewhere): a
  subset of ``fixed``, whose other non-zero entries are implied by unit propagation of the
  decisions (backtracking, api.solve, releases decisions and recomputes the rest).
"""

from __future__ import annotations

import numpy as np

from . import factor, rules, walk
from .factor import FactorGraph

TAIL_DRAWS = 4096


class CPUEngine:
    side = "cpu"

    def __init__(self, fg: FactorGraph, seed: int | None, damping: float = 0.0) -> None:
        self.fg = fg
        self.damping = damping
        self.rng = np.random.default_rng(seed)
        self.eta = self.rng.random(fg.n_clauses * fg.width)
        self.fixed = np.zeros(fg.n_vars, dtype=np.int8)
        self.satisfied = np.zeros(fg.n_clauses, dtype=bool)
        self.values = np.zeros(fg.n_vars, dtype=bool)
        self.decided = np.zeros(fg.n_vars, dtype=np.int8)
        self._last_pick = np.zeros(0, dtype=np.int64)  # the last decimation step's decisions
        self._last_diff: np.ndarray | None = None  # W+ - W- of the last decimation round
        w = fg.width
        self.clause_of_edge = np.arange(fg.n_clauses * w, dtype=np.int64) // max(w, 1)
        self.present = fg.lit_var >= 0
        self.safe_var = np.where(self.present, fg.lit_var, 0).astype(np.int64)
        # Per-variable sign of each of its edges, in var_edges order.
        self.edge_neg_sorted = fg.lit_neg[fg.var_edges].astype(bool)
        self.trace_walk = False
        self.last_walk: walk.WalkResult | None = None

    # ----------------------------------------------------------------- simplification
    def propagate(self) -> bool:
        """Mark satisfied clauses and run unit propagation; False on a contradiction."""
        fg = self.fg
        w = fg.width
        while True:
            value = self.fixed[self.safe_var]
            lit_true = self.present & (value != 0) & ((value > 0) != fg.lit_neg.astype(bool))
            lit_free = self.present & (value == 0)
            self.satisfied |= lit_true.reshape(-1, w).any(axis=1)
            free_count = lit_free.reshape(-1, w).sum(axis=1)
            open_ = ~self.satisfied
            if np.any(open_ & (free_count == 0)):
                return False
            unit = np.flatnonzero(open_ & (free_count == 1))
            if unit.size == 0:
                return True
            slot = np.argmax(lit_free.reshape(-1, w)[unit], axis=1)
            edge = unit * w + slot
            var = fg.lit_var[edge].astype(np.int64)
            want = np.where(fg.lit_neg[edge] != 0, -1, 1).astype(np.int8)
            # Two unit clauses forcing opposite values on one variable: a contradiction,
            # whichever is applied first (the GPU sees the same through its CAS).
            order = np.argsort(var, kind="stable")
            v_sorted, w_sorted = var[order], want[order]
            clash = (v_sorted[1:] == v_sorted[:-1]) & (w_sorted[1:] != w_sorted[:-1])
            if np.any(clash):
                return False
            self.fixed[var] = want

    def n_free(self) -> int:
        return int(np.count_nonzero(self.fixed == 0))

    # ----------------------------------------------------------------- surveys
    def _alive(self) -> np.ndarray:
        open_clause = ~self.satisfied[self.clause_of_edge]
        return self.present & open_clause & (self.fixed[self.safe_var] == 0)

    def _var_products(self, alive: np.ndarray) -> tuple[np.ndarray, ...]:
        """Per variable and sign: product of the non-zero (1 - eta) and the count of zeros."""
        fg = self.fg
        edges = fg.var_edges
        factor = np.where(alive[edges], 1.0 - self.eta[edges], 1.0)
        is_zero = alive[edges] & (factor == 0.0)
        factor = np.where(is_zero, 1.0, factor)
        out = []
        for negated in (False, True):
            mine = self.edge_neg_sorted == negated
            out.append(_segment_prod(np.where(mine, factor, 1.0), fg.var_offsets))
            out.append(_segment_sum((mine & is_zero).astype(np.int64), fg.var_offsets))
        return tuple(out)  # prod_pos, zeros_pos, prod_neg, zeros_neg

    def iterate(self) -> float:
        """One synchronous SP sweep over every live edge; returns max |Δeta|."""
        fg = self.fg
        alive = self._alive()
        prod_pos, zeros_pos, prod_neg, zeros_neg = self._var_products(alive)
        var = self.safe_var
        neg = fg.lit_neg.astype(bool)
        own = 1.0 - self.eta
        p_same = np.where(neg, prod_neg[var], prod_pos[var])
        z_same = np.where(neg, zeros_neg[var], zeros_pos[var])
        p_opp = np.where(neg, prod_pos[var], prod_neg[var])
        z_opp = np.where(neg, zeros_pos[var], zeros_neg[var])
        ratio = rules.edge_ratio(p_same, z_same, p_opp, z_opp, own)
        ratio = np.where(alive, ratio, 1.0).reshape(-1, fg.width)
        new_eta = _all_but_one_product(ratio).ravel()
        # Convergence is judged on the undamped change; damping (a share of the old survey
        # kept) only steadies the synchronous sweep, which can oscillate near threshold.
        delta = np.abs(new_eta - self.eta)[alive]
        if self.damping:
            new_eta = (1.0 - self.damping) * new_eta + self.damping * self.eta
        self.eta = np.where(alive, new_eta, self.eta)
        return float(delta.max()) if delta.size else 0.0

    def run_surveys(self, epsilon: float, max_iterations: int,
                    stall_window: int = 0) -> tuple[bool, int]:
        """(converged, sweeps run); self.stalled says whether it stopped early for lack of
        progress (rules.no_progress over ``stall_window`` sweeps)."""
        self.stalled = False
        history: list[float] = []
        for it in range(1, max_iterations + 1):
            delta = self.iterate()
            if delta < epsilon:
                return True, it
            history.append(delta)
            if it % 8 == 0 and rules.no_progress(history, stall_window):
                self.stalled = True
                return False, it
        return False, max_iterations

    def biases(self) -> tuple[np.ndarray, np.ndarray]:
        """(W+ - W-, max(W+, W-)) per variable; zero for fixed variables."""
        prod_pos, zeros_pos, prod_neg, zeros_neg = self._var_products(self._alive())
        diff, strength = rules.bias(prod_pos, zeros_pos, prod_neg, zeros_neg)
        free = self.fixed == 0
        return np.where(free, diff, 0.0), np.where(free, strength, 0.0)

    def decimate(self, fix_fraction: float, trivial_threshold: float) -> tuple[bool, int]:
        """Fix the most biased free variables; (surveys trivial, how many were fixed)."""
        diff, strength = self.biases()
        free = np.flatnonzero(self.fixed == 0)
        if free.size == 0:
            return True, 0
        self._last_diff = diff  # the local search's start (see local_search)
        if float(strength[free].mean()) < trivial_threshold:
            return True, 0
        n_fix = max(1, int(fix_fraction * free.size))
        score = np.abs(diff[free])
        pick = free[np.argpartition(-score, n_fix - 1)[:n_fix]] if n_fix < free.size else free
        self.fixed[pick] = np.where(diff[pick] >= 0, 1, -1).astype(np.int8)
        self.decided[pick] = self.fixed[pick]
        self._last_pick = pick
        return False, int(pick.size)

    def surveys_trivial(self, trivial_threshold: float) -> bool:
        """Whether the surveys are trivial (decimate's test, without fixing anything); keeps
        the biases as the local search's start, as decimate does."""
        diff, strength = self.biases()
        free = self.fixed == 0
        if not free.any():
            return True
        self._last_diff = diff
        return float(strength[free].mean()) < trivial_threshold

    # ----------------------------------------------------------------- backtracking
    def n_decided(self) -> int:
        return int(np.count_nonzero(self.decided))

    def decision_scores(self) -> np.ndarray:
        """Per decided variable, s * (W+ - W-) with s its fixed value and W its SP marginal
        as if it were free (what a backtracking step of api.solve ranks by); +inf elsewhere.

        The cavity survey of each clause a of a decided variable i: 0 when another
        variable's fixed value satisfies a, else the product over a's free variables j of
        Pi^u / (Pi^u + Pi^s + Pi^0) from j's products over its open clauses other than a
        (a itself is in them only when a is open, i.e. i's literal in a is false)."""
        fg = self.fg
        w = max(fg.width, 1)
        alive = self._alive()
        prod_pos, zeros_pos, prod_neg, zeros_neg = self._var_products(alive)
        var = self.safe_var
        neg = fg.lit_neg.astype(bool)
        value = self.fixed[var]
        lit_true = self.present & (value != 0) & ((value > 0) != neg)
        true_count = lit_true.reshape(-1, w).sum(axis=1)
        # own = 1 - eta on edges in the products (open clauses), 1 elsewhere.
        own = np.where(alive, 1.0 - self.eta, 1.0)
        p_same = np.where(neg, prod_neg[var], prod_pos[var])
        z_same = np.where(neg, zeros_neg[var], zeros_pos[var])
        p_opp = np.where(neg, prod_pos[var], prod_neg[var])
        z_opp = np.where(neg, zeros_pos[var], zeros_neg[var])
        ratio = rules.edge_ratio(p_same, z_same, p_opp, z_opp, own)
        free_edge = self.present & (value == 0)
        ratio = np.where(free_edge, ratio, 1.0).reshape(-1, w)
        clause_prod = np.prod(ratio, axis=1)
        others_true = true_count[self.clause_of_edge] - lit_true
        cavity = np.where(others_true > 0, 0.0, clause_prod[self.clause_of_edge])
        # Per variable and sign, the product of (1 - cavity) as in _var_products.
        edges = fg.var_edges
        factor = 1.0 - cavity[edges]
        is_zero = factor == 0.0
        factor = np.where(is_zero, 1.0, factor)
        out = []
        for negated in (False, True):
            mine = self.edge_neg_sorted == negated
            out.append(_segment_prod(np.where(mine, factor, 1.0), fg.var_offsets))
            out.append(_segment_sum((mine & is_zero).astype(np.int64), fg.var_offsets))
        diff, _strength = rules.bias(*out)
        return np.where(self.decided != 0, self.decided * diff, np.inf)

    def release(self, count: int) -> tuple[bool, np.ndarray]:
        """Release the ``count`` decisions of lowest decision_scores (ties: lower variable
        first), then recompute the implied values from the decisions left: (consistent,
        released variables)."""
        scores = self.decision_scores()
        count = min(int(count), self.n_decided())
        out = np.argsort(scores, kind="stable")[:count]
        self.decided[out] = 0
        return self._reset_to_decisions(), out

    def has_last_decimation(self) -> bool:
        return self._last_pick.size > 0

    def undo_last_decimation(self) -> bool:
        """Release the last decimation step's decisions (after it met a contradiction or
        SP stopped converging) and recompute the implied values; True when consistent."""
        self.decided[self._last_pick] = 0
        self._last_pick = np.zeros(0, dtype=np.int64)
        return self._reset_to_decisions()

    def _reset_to_decisions(self) -> bool:
        self.fixed = self.decided.copy()
        self.satisfied = np.zeros(self.fg.n_clauses, dtype=bool)
        return self.propagate()

    # ----------------------------------------------------------------- local search
    def local_search(self, max_rounds: int, *, freeze_fixed: bool, init: bool,
                     max_flips: int = 0, stall_floor: int = 0) -> bool:
        """Conflict-free parallel probSAT rounds (walk.conflict_free_walk) on the whole
        formula, then, only if their budget ran out (not when they stalled, see
        rules.walk_stalled with ``stall_floor``), at most ``max_flips`` sequential flips.
        Fixed variables stay put when frozen; ``init`` starts from the fixed values, the
        free variables on the side of their last SP bias (random where it is 0), as the GPU
        engine does. The last walk's record (rounds, flips, and
        the flipped variables per round when ``self.trace_walk``) is ``self.last_walk``.
        With the fixed variables frozen, the walk runs on factor.frozen_residual (the
        clauses they leave open)."""
        fg = self.fg
        fixed_mask = self.fixed != 0
        if freeze_fixed:
            fg = factor.frozen_residual(fg, self.fixed) or fg
        w = fg.width
        if init:
            start = self.rng.random(fg.n_vars) < 0.5
            if self._last_diff is not None:
                start = np.where(self._last_diff != 0, self._last_diff > 0, start)
            self.values = np.where(fixed_mask, self.fixed > 0, start)
        self.local_search_rounds_run = self.local_search_flips_run = 0
        self.walk_progress = None
        if fg.n_clauses == 0:
            return True
        frozen = fixed_mask if freeze_fixed else np.zeros(fg.n_vars, dtype=bool)
        result = walk.conflict_free_walk(fg, self.values, frozen, max_rounds=int(max_rounds),
                                         draw=self.rng.random, trace=self.trace_walk,
                                         stall_floor=stall_floor)
        self.last_walk = result
        self.local_search_rounds_run = result.rounds
        self.local_search_flips_run = result.flips
        self.walk_progress = result.progress
        if result.solved or result.stuck or result.progress.stalled or max_flips <= 0:
            return result.solved
        present = fg.lit_var >= 0
        lit_true = present & (self.values[np.where(present, fg.lit_var, 0)]
                              != fg.lit_neg.astype(bool))
        true_count = lit_true.reshape(-1, w).sum(axis=1)
        return self._sequential_tail(fg, true_count, frozen, max_flips)

    def _sequential_tail(self, fg: FactorGraph, true_count: np.ndarray,
                         frozen: np.ndarray, max_flips: int) -> bool:
        """Sequential probSAT over ``fg`` (the engine's graph or the rounds' residual): a
        random unsatisfied clause flips one of its movable variables, picked with
        rules.tail_break_weights by its current break count; the true-literal counts and
        the list of unsatisfied clauses are updated incrementally. The same walk as
        kernels/walk.cu's ls_tail (one warp there)."""
        w = fg.width
        clause_vars = fg.lit_var.reshape(-1, w)
        values = self.values
        weight_of_break = rules.tail_break_weights(w).tolist()
        top = len(weight_of_break) - 1
        unsat = np.flatnonzero(true_count == 0).tolist()
        where = {c: i for i, c in enumerate(unsat)}  # clause -> its index in unsat
        occurrences: dict[int, tuple[list[int], list[bool]]] = {}

        def occ(v: int) -> tuple[list[int], list[bool]]:
            """(clauses, literal is positive) of v, built on first use: the tail touches few."""
            if v not in occurrences:
                edges = fg.var_edges[fg.var_offsets[v]:fg.var_offsets[v + 1]]
                occurrences[v] = ((edges // max(w, 1)).tolist(),
                                  (fg.lit_neg[edges] == 0).tolist())
            return occurrences[v]

        draws = np.zeros(0)
        for step in range(max_flips):
            if not unsat:
                self.local_search_flips_run += step
                return True
            at = 2 * (step % TAIL_DRAWS)
            if at == 0:  # random numbers in blocks: one NumPy call per TAIL_DRAWS flips
                draws = self.rng.random(2 * TAIL_DRAWS)
            c = unsat[min(int(draws[at] * len(unsat)), len(unsat) - 1)]
            cands = [int(v) for v in clause_vars[c] if v >= 0 and not frozen[v]]
            if not cands:
                self.local_search_flips_run += step
                return False
            weights = []
            for v in cands:
                clauses, positive = occ(v)
                value = bool(values[v])
                breaks = sum(1 for cl, pos in zip(clauses, positive)
                             if pos == value and true_count[cl] == 1)
                weights.append(weight_of_break[min(breaks, top)])
            u = draws[at + 1] * sum(weights)
            chosen = cands[-1]
            for v, wt in zip(cands, weights):
                u -= wt
                if u < 0.0:
                    chosen = v
                    break
            value = not values[chosen]
            values[chosen] = value
            clauses, positive = occ(chosen)
            for cl, pos in zip(clauses, positive):
                if pos == value:
                    true_count[cl] += 1
                    if true_count[cl] == 1:  # satisfied now: swap-remove from the list
                        i, last = where.pop(cl), unsat.pop()
                        if last != cl:
                            unsat[i], where[last] = last, i
                else:
                    true_count[cl] -= 1
                    if true_count[cl] == 0:
                        where[cl] = len(unsat)
                        unsat.append(cl)
        self.local_search_flips_run += max_flips
        return not unsat

    def assignment(self) -> np.ndarray:
        """The local search's assignment (it starts from, and may keep, the fixed values)."""
        return self.values.copy()


def _segment_prod(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    n = offsets.size - 1
    out = np.ones(n)
    nonempty = offsets[1:] > offsets[:-1]
    if values.size:
        red = np.multiply.reduceat(values, np.minimum(offsets[:-1], values.size - 1))
        out[nonempty] = red[nonempty]
    return out


def _segment_sum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    n = offsets.size - 1
    out = np.zeros(n, dtype=values.dtype)
    nonempty = offsets[1:] > offsets[:-1]
    if values.size:
        red = np.add.reduceat(values, np.minimum(offsets[:-1], values.size - 1))
        out[nonempty] = red[nonempty]
    return out


def _all_but_one_product(ratio: np.ndarray) -> np.ndarray:
    """out[:, i] = product of ratio[:, j] for j != i, exactly (no division by zero ratios)."""
    m, k = ratio.shape
    prefix = np.ones((m, k + 1))
    suffix = np.ones((m, k + 1))
    np.cumprod(ratio, axis=1, out=prefix[:, 1:])
    np.cumprod(ratio[:, ::-1], axis=1, out=suffix[:, 1:])
    return prefix[:, :k] * suffix[:, k - 1 :: -1]
