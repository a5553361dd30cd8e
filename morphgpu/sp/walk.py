"""The conflict-free parallel local search in NumPy (the twin of kernels/walk.cu's ls_rounds).

A round of probSAT in parallel that stays a sequential walk in disguise:
1. every unsatisfied clause proposes one of its movable variables: a freebie (break 0,
   flipping it breaks no clause) when it has one, else a pick weighted by
   rules.break_weights of the break counts;
2. the proposals claim their variables' clauses with the shared race / prioritycheck /
   check protocol (morphgpu.conflict.claim; claimant = proposing clause, neighbourhood =
   the clauses of the proposed variable; freebies outrank the rest, ties by hashed
   priority), so the winners' variables share no clause;
3. the winners flip. No two flipped variables touch the same clause, so each flip changes
   exactly what its break and make counts said, as in a sequential walk; the old parallel
   walk (every unsatisfied clause flips at once) let neighbouring flips undo each other
   and stalled at 1M variables.

State is incremental: per clause the number of true literals and the xor of (variable+1)
over its true literals (so a clause with one true literal names it); per variable the
break count. A flip updates them over the flipped variable's clauses only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import conflict
from . import rules
from .factor import FactorGraph

# A proposal's claim priority, as kernels/walk.cu builds it below its round tag (the top
# ROUND_TAG_BITS bits there, the same for every claimant of a round): freebies first,
# then the top bits of the hashed (round, clause) priority of conflict.claim_priority.
ROUND_TAG_BITS = 20
FREEBIE_BIT = np.uint64(1 << (31 - ROUND_TAG_BITS))


@dataclass
class WalkResult:
    solved: bool
    stuck: bool  # an unsatisfied clause had no movable variable
    rounds: int
    flips: int
    flipped_per_round: list[np.ndarray] = field(default_factory=list)  # when traced
    progress: rules.WalkProgress = field(default_factory=rules.WalkProgress)


class ClauseState:
    """True-literal counts, true-literal xors and break counts of an assignment."""

    def __init__(self, fg: FactorGraph, values: np.ndarray) -> None:
        w = fg.width
        self.fg = fg
        self.clause_vars = fg.lit_var.reshape(-1, w).astype(np.int64)
        present = self.clause_vars >= 0
        safe = np.where(present, self.clause_vars, 0)
        lit_true = present & (values[safe] != fg.lit_neg.reshape(-1, w).astype(bool))
        self.true_count = lit_true.sum(axis=1).astype(np.int64)
        self.true_xor = np.bitwise_xor.reduce(np.where(lit_true, safe + 1, 0), axis=1)
        self.breaks = np.zeros(fg.n_vars, dtype=np.int64)
        sole = self.true_count == 1
        np.add.at(self.breaks, self.true_xor[sole] - 1, 1)
        # Per variable, its clauses and whether it occurs positively, in var_edges order.
        self.var_clauses = (fg.var_edges // max(w, 1)).astype(np.int64)
        self.var_positive = fg.lit_neg[fg.var_edges] == 0

    def flip(self, flipped: np.ndarray, values: np.ndarray) -> None:
        """Flip ``flipped`` (pairwise clause-disjoint variables) in ``values`` and update
        the counts over their clauses."""
        fg = self.fg
        values[flipped] = ~values[flipped]
        start, stop = fg.var_offsets[flipped], fg.var_offsets[flipped + 1]
        idx = _ranges(start, stop)
        owner = np.repeat(flipped, stop - start)
        clause = self.var_clauses[idx]
        now_true = self.var_positive[idx] == values[owner]
        before = self.true_count[clause]
        tag = owner + 1
        # Clause-disjoint flips: each clause appears once here, plain fancy updates are exact.
        self.true_count[clause] = before + np.where(now_true, 1, -1)
        self.true_xor[clause] ^= tag
        gain = now_true & (before == 0)  # the flipped variable is now the sole true literal
        lose = ~now_true & (before == 1)  # it was, and the clause is now false
        np.add.at(self.breaks, owner[gain], 1)
        np.add.at(self.breaks, owner[lose], -1)
        # A second true literal relieves the former sole one; losing one of two leaves the
        # other sole. Those variables are not flipped this round (they share the clause).
        relieved = now_true & (before == 1)
        burdened = ~now_true & (before == 2)
        np.add.at(self.breaks, (self.true_xor[clause[relieved]] ^ tag[relieved]) - 1, -1)
        np.add.at(self.breaks, self.true_xor[clause[burdened]] - 1, 1)


def conflict_free_walk(fg: FactorGraph, values: np.ndarray, frozen: np.ndarray, *,
                       max_rounds: int, draw: Callable[[int], np.ndarray],
                       trace: bool = False, stall_floor: int = 0) -> WalkResult:
    """Run up to ``max_rounds`` conflict-free rounds on ``values`` (changed in place);
    ``draw(n)`` gives n uniform numbers in [0, 1). ``trace`` keeps each round's flipped
    variables (tests check that no two share a clause). ``stall_floor`` > 0 stops early by
    rules.walk_stalled; result.progress says how the unsatisfied count went."""
    w = fg.width
    state = ClauseState(fg, values)
    weight_of_break = rules.break_weights(w)
    top = weight_of_break.size - 1
    result = WalkResult(False, False, 0, 0)
    movable_table = (state.clause_vars >= 0) & ~frozen[np.maximum(state.clause_vars, 0)]
    progress = result.progress
    for r in range(max_rounds + 1):
        unsat = np.flatnonzero(state.true_count == 0)
        cand = state.clause_vars[unsat]
        ok = movable_table[unsat]
        movable = ok.any(axis=1)
        # The fewest counts the round's proposals (clauses with a movable variable), as the
        # kernel's does; a stuck round's count takes part too.
        proposals = int(movable.sum())
        if proposals < progress.fewest:
            progress.waited_until(r)
            progress.fewest, progress.fewest_round = proposals, r
        if not movable.all():
            result.stuck = progress.stuck = True
            progress.waited_until(r)
            return result
        if unsat.size == 0:
            result.solved = True
            return result
        stalled = rules.walk_stalled(r, progress.fewest_round, stall_floor)
        if r == max_rounds or stalled:
            progress.waited_until(r)
            progress.stalled = stalled
            break
        chosen, freebie = _propose(cand, ok, state.breaks[np.maximum(cand, 0)],
                                   weight_of_break, top, draw(unsat.size))
        winners = _claim(state, unsat, chosen, freebie, r)
        flipped = chosen[winners]
        state.flip(flipped, values)
        result.rounds = r + 1
        result.flips += int(flipped.size)
        if trace:
            result.flipped_per_round.append(flipped.copy())
    return result


def _propose(cand: np.ndarray, ok: np.ndarray, breaks: np.ndarray, weight_of_break: np.ndarray,
             top: int, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per unsatisfied clause (a row of ``cand``): the proposed variable and whether it is
    a freebie. Freebies are picked uniformly among the clause's freebies."""
    free_of_break = ok & (breaks == 0)
    has_freebie = free_of_break.any(axis=1)
    weight = np.where(ok, weight_of_break[np.minimum(breaks, top)], 0.0)
    weight = np.where(has_freebie[:, None], free_of_break.astype(np.float64), weight)
    cum = np.cumsum(weight, axis=1)
    slot = np.argmax(cum > (u * cum[:, -1])[:, None], axis=1)
    return cand[np.arange(cand.shape[0]), slot], has_freebie


def _claim(state: ClauseState, unsat: np.ndarray, chosen: np.ndarray, freebie: np.ndarray,
           round_: int) -> np.ndarray:
    """Winners among the proposals: the shared 3-phase protocol over the proposed
    variables' clauses. Claimant i is clause unsat[i] (ascending, as the GPU's clause ids
    order its marks)."""
    fg = state.fg
    start, stop = fg.var_offsets[chosen], fg.var_offsets[chosen + 1]
    offsets = np.zeros(chosen.size + 1, dtype=np.int64)
    np.cumsum(stop - start, out=offsets[1:])
    hoods = state.var_clauses[_ranges(start, stop)]
    hashed = conflict.claim_priority(round_, unsat).astype(np.uint64) >> np.uint64(
        ROUND_TAG_BITS + 1)
    priority = np.where(freebie, FREEBIE_BIT, np.uint64(0)) | hashed
    return conflict.claim(offsets, hoods, priority, n_elements=fg.n_clauses)


def _ranges(start: Any, stop: Any) -> np.ndarray:
    """Concatenation of arange(start[i], stop[i]) without a Python loop."""
    lengths = (stop - start).astype(np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    shift = np.repeat(start - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return np.arange(total, dtype=np.int64) + shift
