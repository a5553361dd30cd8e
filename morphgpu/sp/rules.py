"""The numeric rules of SP and of the local search, written once for the CPU path.

The GPU kernels (kernels/survey.cu, kernels/walk.cu) implement the same formulas; the
break-weight table is shared outright (the GPU reads it from a small device array).

Per-variable products are kept as (product of the non-zero factors, number of zero
factors), so "the product over all clauses but one" is a division, or a zero count minus
one, instead of a loop over the variable's clauses (the paper's edge caching).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BREAK_TABLE_SIZE = 64

# The local search (walk.py, kernels/walk.cu): conflict-free parallel probSAT rounds, in
# which the flipped variables never share a clause, so every round is a valid sequential
# walk; a sequential probSAT tail only when the rounds' budget is spent.


# WalkProgress.fewest before any round (kernels/walk.cu starts from the same value).
NO_ROUND_YET = 2**31 - 1


@dataclass
class WalkProgress:
    """How a stage of parallel rounds went: the fewest unsatisfied clauses (with a movable
    variable) a round began with, the first round that had them, the most rounds it
    waited for a new fewest, whether it stopped stalled (walk_stalled), and whether it
    stopped stuck (an unsatisfied clause with no movable variable)."""

    fewest: int = NO_ROUND_YET
    fewest_round: int = 0
    longest_wait: int = 0
    stalled: bool = False
    stuck: bool = False

    def waited_until(self, round_now: int) -> None:
        """Count the wait since the last new fewest into longest_wait."""
        self.longest_wait = max(self.longest_wait, round_now - self.fewest_round)


def walk_stalled(round_now: int, fewest_round: int, stall_floor: int) -> bool:
    """The rounds' stall rule: with ``stall_floor`` > 0, no new fewest unsatisfied count
    for max(stall_floor, fewest_round) rounds, i.e. the search has waited as long as it
    took to get there. A walk that still descends sets new lows at intervals that grow
    with its rounds; one stuck on a plateau waits ever longer, and the caller has a better
    use for the rest of the budget (kernels/walk.cu ls_rounds applies the same rule)."""
    if stall_floor <= 0:
        return False
    return round_now - fewest_round >= max(stall_floor, fewest_round)


def no_progress(history: list[float], window: int) -> bool:
    """True when the last ``window`` sweeps of a round got max |Δeta| no lower than 0.9x the
    lowest of the sweeps before them (``history`` holds the round's sweeps in order).

    A converging round shrinks its max |Δeta| about geometrically and sets a new low every
    few sweeps; past the threshold (K >= 4 at the paper's ratios) it wanders around a
    level, and the rest of the iteration cap would only burn time. ``window`` 0: never.
    """
    if window <= 0 or len(history) < 2 * window:
        return False
    return min(history[-window:]) >= 0.9 * min(history[:-window])


def edge_ratio(p_same, z_same, p_opp, z_opp, own):  # noqa: ANN001, ANN201 (NumPy arrays)
    """Pi^u / (Pi^u + Pi^s + Pi^0) for variable j seen from clause a.

    ``p_same, z_same`` cache the factors (1 - eta_{b->j}) over the clauses b where j has the
    sign it has in a (a included); ``p_opp, z_opp`` over the other sign; ``own`` is
    1 - eta_{a->j}, taken back out of the same-sign product.
    """
    own_zero = own == 0.0
    z_rest = z_same - own_zero.astype(z_same.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_rest = np.where(own_zero, p_same, p_same / np.where(own_zero, 1.0, own))
    same = np.where(z_rest > 0, 0.0, np.minimum(p_rest, 1.0))
    opp = np.where(z_opp > 0, 0.0, p_opp)
    pi_u = (1.0 - opp) * same
    pi_s = (1.0 - same) * opp
    pi_0 = same * opp
    total = pi_u + pi_s + pi_0
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0.0, pi_u / np.where(total > 0.0, total, 1.0), 0.0)


def bias(p_pos, z_pos, p_neg, z_neg):  # noqa: ANN001, ANN201
    """(W+ - W-, max(W+, W-)) per variable from its cached products."""
    prod_pos = np.where(z_pos > 0, 0.0, p_pos)
    prod_neg = np.where(z_neg > 0, 0.0, p_neg)
    pi_plus = (1.0 - prod_pos) * prod_neg
    pi_minus = (1.0 - prod_neg) * prod_pos
    pi_0 = prod_pos * prod_neg
    total = pi_plus + pi_minus + pi_0
    safe = np.where(total > 0.0, total, 1.0)
    w_plus = np.where(total > 0.0, pi_plus / safe, 0.0)
    w_minus = np.where(total > 0.0, pi_minus / safe, 0.0)
    return w_plus - w_minus, np.maximum(w_plus, w_minus)


def default_fix_fraction(mean_width: float) -> float:
    """solve's share of the free variables fixed per decimation step, by the formula's mean
    clause width: 0.01 up to 3 literals, 0.02 above.

    A larger step means fewer decimation rounds (fewer SP sweeps) and a larger, harder
    residual for the local search. Where the sweeps are most of a solve (K >= 4: a
    variable in 40-240 clauses) 0.02 was faster on every formula tried; where the local
    search is (K = 3) it was not. H100, 1M variables, solve seconds at 0.01 -> 0.02, same
    process and seeds (benchmarks/results/2026-11-27-h100-s15/sp-fraction-ab*.log): K=4
    ratio 9.7 5.92 -> 4.62 and 5.58 -> 4.57, 9.8 10.75 -> 8.69 and 9.52 -> 7.62; K=5 20
    8.35 -> 6.58 and 8.23 -> 8.02; K=6 39.5 25.1 -> 21.5, 40.25 23.8 -> 19.3 (all SAT
    both ways); K=3 4.2 2.01 -> 2.16, 4.24 6.35 -> 12.04 (its local search gave up) and
    12.54 -> 10.96. 0.03 lost at K=4 and K=5 (the local search grew 2-10x).
    """
    return 0.02 if mean_width > 3.5 else 0.01


def break_weights(width: int) -> np.ndarray:
    """probSAT's pick weight of a variable by its break count (Balint & Schöning 2012).

    Polynomial (1 + b)^-3 for 3-SAT and narrower (greedier than the paper's sequential
    2.38; freebies, break 0, are taken first anyway), exponential cb^-b for wider clauses
    with the paper's bases. Index = break count, clamped to the table's end. H100, K=3
    ratio 4.2 1M, seeds 3/4, conflict-free rounds from the SP bias: exponent 3 took
    1.79/1.72 s, 2.7 2.00/2.02 s, 3.5 4.4/2.5 s, 4 3.7/5.8 s, and 2.38 never finished (its
    round budget spent, UNKNOWN).
    """
    b = np.arange(BREAK_TABLE_SIZE, dtype=np.float64)
    if width <= 3:
        return (1.0 + b) ** -3.0
    base = {4: 3.0, 5: 3.7, 6: 5.1}.get(width, 5.4)
    return base**-b


def tail_break_weights(width: int) -> np.ndarray:
    """Pick weights of the sequential probSAT tail (one flip at a time), with the parameters
    Balint & Schöning (2012) found best for sequential probSAT: polynomial (1 + b)^-2.38
    for 3-SAT and narrower, exponential cb^-b for wider clauses. Index = break count."""
    b = np.arange(BREAK_TABLE_SIZE, dtype=np.float64)
    if width <= 3:
        return (1.0 + b) ** -2.38
    base = {4: 3.0, 5: 3.7, 6: 5.1}.get(width, 5.4)
    return base**-b
