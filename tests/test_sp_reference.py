"""The CPU engine's SP against a literal transcription of the survey equations
(Braunstein, Mézard & Zecchina 2005, eqs. for eta, Pi^u/s/0 and W+/W-/W0): per edge,
explicit products over V_a^s(j) and V_a^u(j), no cached per-variable products, written from
the clause list alone. Also the direction decimation fixes a variable in.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from morphgpu import sp
from morphgpu.sp import factor
from morphgpu.sp.cpu import CPUEngine


def _occurrences(clauses, live):
    occ: dict[int, list[tuple[int, int, bool]]] = {}
    for a, clause in enumerate(clauses):
        for i, lit in enumerate(clause):
            if live[a][i]:
                occ.setdefault(abs(lit), []).append((a, i, lit > 0))
    return occ


def _reference_sweep(clauses, eta, live):
    occ = _occurrences(clauses, live)
    new = [list(row) for row in eta]
    for a, clause in enumerate(clauses):
        for i in range(len(clause)):
            if not live[a][i]:
                continue
            product = 1.0
            for k, lit in enumerate(clause):
                if k == i or not live[a][k]:
                    continue
                same = opposite = 1.0
                for b, t, positive in occ[abs(lit)]:
                    if b == a:
                        continue
                    if positive == (lit > 0):
                        same *= 1.0 - eta[b][t]
                    else:
                        opposite *= 1.0 - eta[b][t]
                pi_u = (1.0 - opposite) * same
                pi_s = (1.0 - same) * opposite
                total = pi_u + pi_s + same * opposite
                product *= pi_u / total if total > 0 else 0.0
            new[a][i] = product
    return new


def _reference_bias(clauses, eta, live, n_vars):
    """W+ - W- per variable; + means 'true' (clauses where it appears unnegated warn it)."""
    pos, neg = np.ones(n_vars + 1), np.ones(n_vars + 1)
    for a, clause in enumerate(clauses):
        for i, lit in enumerate(clause):
            if live[a][i]:
                if lit > 0:
                    pos[lit] *= 1.0 - eta[a][i]
                else:
                    neg[-lit] *= 1.0 - eta[a][i]
    pi_plus, pi_minus, pi_0 = (1 - pos) * neg, (1 - neg) * pos, pos * neg
    total = pi_plus + pi_minus + pi_0
    with np.errstate(invalid="ignore", divide="ignore"):
        return ((pi_plus - pi_minus) / total)[1:]


@settings(deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_fixed=st.integers(0, 8))
def test_sweeps_and_biases_equal_the_reference(seed, n_fixed):
    f = sp.random_ksat(50, 3, ratio=4.2, seed=seed)
    engine = CPUEngine(factor.build(f, "cpu"), seed, damping=0.0)
    rng = np.random.default_rng(seed)
    engine.fixed[:n_fixed] = np.where(rng.random(n_fixed) < 0.5, 1, -1)
    if not engine.propagate():
        return
    clauses, w = f.clauses(), engine.fg.width
    live = engine._alive().reshape(-1, w)
    for _ in range(20):  # one sweep from random surveys, then on towards convergence
        eta = engine.eta.reshape(-1, w).tolist()
        want = np.array(_reference_sweep(clauses, eta, live.tolist()))
        engine.iterate()
        got = engine.eta.reshape(-1, w)
        np.testing.assert_allclose(got[live], want[live], atol=1e-12)
    want_diff = _reference_bias(clauses, engine.eta.reshape(-1, w).tolist(), live.tolist(),
                                f.n_vars)
    diff, _ = engine.biases()
    free = (engine.fixed == 0) & np.isfinite(want_diff)
    np.testing.assert_allclose(diff[free], want_diff[free], atol=1e-12)


@pytest.mark.parametrize("sign", [1, -1])
def test_decimation_fixes_the_warned_direction(sign):
    # Variable 1 appears with one sign in many clauses whose other literals are pinned
    # false by strong surveys: it is warned towards making that literal true.
    clauses = [[sign * 1, 2 + a, 30 + a] for a in range(6)] + [[-(2 + a), 40 + a, 50 + a]
                                                               for a in range(6)]
    f = sp.CNF.from_clauses(clauses, n_vars=60)
    engine = CPUEngine(factor.build(f, "cpu"), 0, damping=0.0)
    engine.eta[:] = 0.0
    engine.eta[0:18:3] = 0.9  # surveys of the first six clauses towards variable 1
    diff, _ = engine.biases()
    assert np.sign(diff[0]) == sign
    engine.decimate(1.0 / 60.0, 0.0)
    assert engine.fixed[0] == sign
    assert np.count_nonzero(engine.fixed) == 1
