"""The GPU engine's phases against the CPU engine's, step by step, from the same state.

These run only where a GPU is present (the ``gpu`` marker); on the CPU side they compare
the CPU engine against itself through its public phases, which still checks that the
phases keep their invariants (fixed values obey unit clauses, surveys stay in [0, 1]).
"""

from __future__ import annotations

import numpy as np
import pytest

from morphgpu import backend, sp
from morphgpu.sp import factor
from morphgpu.sp.cpu import CPUEngine


def _engines(device, f, seed=0, damping=0.0):
    cpu = CPUEngine(factor.build(f, "cpu"), seed, damping)
    if device == "cpu":
        other = CPUEngine(factor.build(f, "cpu"), seed, damping)
    else:
        from morphgpu.sp.gpu import GPUEngine

        other = GPUEngine(factor.build(f, "gpu"), seed, damping)
    # Same starting surveys on both sides (float32 values, so both hold them exactly).
    eta32 = np.random.default_rng(seed).random(cpu.eta.size).astype(np.float32)
    cpu.eta = eta32.astype(np.float64)
    other.eta = backend.to_side(eta32, device, dtype=np.float32 if device == "gpu" else np.float64)
    return cpu, other


@pytest.mark.parametrize("k, ratio", [(3, 4.2), (5, 20.0)])
def test_one_sweep_matches(device, k, ratio):
    f = sp.random_ksat(3000, k, ratio=ratio, seed=11)
    cpu, other = _engines(device, f, damping=0.3)
    assert cpu.propagate() and other.propagate()
    for _ in range(3):
        d_cpu = cpu.iterate()
        if device == "gpu":
            other._sweep(0)
        else:
            other.iterate()
    got = backend.to_host(other.eta).astype(np.float64)
    assert np.all((got >= 0) & (got <= 1))
    np.testing.assert_allclose(got, cpu.eta, atol=2e-4)
    assert d_cpu >= 0


@pytest.mark.parametrize("k, ratio", [(3, 3.8), (4, 8.5)])
def test_sweep_after_decimation_rounds_matches(device, k, ratio):
    """Rounds in, with part of the formula fixed and satisfied (which the GPU engine drops
    from its sweep lists), one sweep from the engine's state equals the CPU engine's sweep
    from the same state over the whole formula; on the GPU the lists hold exactly the free
    variables, the open clauses and each free variable's open-clause slots."""
    f = sp.random_ksat(3000, k, ratio=ratio, seed=4)
    _, engine = _engines(device, f, damping=0.3)
    assert engine.propagate()
    for _ in range(4):
        engine.run_surveys(1e-3, 40)
        trivial, _n = engine.decimate(0.05, 0.0)
        assert not trivial
        assert engine.propagate()
        cpu = CPUEngine(factor.build(f, "cpu"), 0, 0.3)
        cpu.fixed = backend.to_host(engine.fixed).astype(np.int8)
        cpu.satisfied = backend.to_host(engine.satisfied).astype(bool)
        cpu.eta = backend.to_host(engine.eta).astype(np.float64)
        before = cpu.eta.copy()
        cpu.iterate()
        if device == "gpu":
            engine._sweep(0)
        else:
            engine.iterate()
        assert not np.allclose(cpu.eta, before)
        np.testing.assert_allclose(backend.to_host(engine.eta), cpu.eta, atol=2e-4)
    fixed = backend.to_host(engine.fixed)
    satisfied = backend.to_host(engine.satisfied).astype(bool)
    assert (fixed != 0).mean() >= 0.15 and satisfied.mean() >= 0.15
    if device == "gpu":
        fg = factor.build(f, "cpu")
        np.testing.assert_array_equal(backend.to_host(engine.var_list),
                                      np.flatnonzero(fixed == 0))
        np.testing.assert_array_equal(backend.to_host(engine.clause_list),
                                      np.flatnonzero(~satisfied))
        # The compacted clauses are the open ones in input order, their free literals kept
        # in place and the fixed ones turned to -1.
        w = fg.width
        clause_list = backend.to_host(engine.clause_list).astype(np.int64)
        lits = fg.lit_var.reshape(-1, w)[clause_list]
        lits = np.where((lits >= 0) & (fixed[np.maximum(lits, 0)] == 0), lits, -1)
        np.testing.assert_array_equal(backend.to_host(engine.clause_var).reshape(-1, w), lits)
        # Each free variable's codes name its slots in open clauses, renumbered.
        codes = backend.to_host(engine.codes).astype(np.int64)
        offsets = backend.to_host(engine.offsets)
        input_edge = clause_list[(codes >> 1) // w] * w + (codes >> 1) % w
        for i, v in enumerate(np.flatnonzero(fixed == 0)):
            edges = fg.var_edges[fg.var_offsets[v]:fg.var_offsets[v + 1]].astype(np.int64)
            edges = edges[~satisfied[edges // w]]
            np.testing.assert_array_equal(input_edge[offsets[i]:offsets[i + 1]], edges)
            np.testing.assert_array_equal(codes[offsets[i]:offsets[i + 1]] & 1,
                                          fg.lit_neg[edges] != 0)
        assert offsets[-1] == codes.size


def test_decimation_and_propagation_match(device):
    f = sp.random_ksat(2000, 3, ratio=4.0, seed=5)
    cpu, other = _engines(device, f)
    for engine in (cpu, other):
        assert engine.propagate()
        engine.run_surveys(1e-3, 200)
    diff_cpu, strength_cpu = cpu.biases()
    diff_other, strength_other = (backend.to_host(x) for x in other.biases())
    # Surveys converge to the same fixed point up to float32 rounding.
    np.testing.assert_allclose(diff_other, diff_cpu, atol=5e-3)
    np.testing.assert_allclose(strength_other, strength_cpu, atol=5e-3)
    for engine in (cpu, other):
        trivial, n_fixed = engine.decimate(0.05, 0.0)
        assert not trivial and n_fixed == int(0.05 * 2000)
        assert engine.propagate()
    fixed_cpu = backend.to_host(cpu.fixed).astype(int)
    fixed_other = backend.to_host(other.fixed).astype(int)
    # The most biased variables agree (ties aside) and get the same sign.
    both = (fixed_cpu != 0) & (fixed_other != 0)
    assert both.sum() >= 0.9 * (fixed_cpu != 0).sum()
    assert np.all(fixed_cpu[both] == fixed_other[both])
    # Unit propagation leaves no open clause with a single free literal.
    for fixed in (fixed_cpu, fixed_other):
        for clause in f.clauses():
            vals = [fixed[abs(x) - 1] * (1 if x > 0 else -1) for x in clause]
            if any(v > 0 for v in vals):
                continue
            assert sum(v == 0 for v in vals) >= 2


def test_local_search_respects_frozen_variables(device):
    f = sp.random_ksat(400, 3, ratio=3.0, seed=9)
    _, engine = _engines(device, f)
    assert engine.propagate()
    engine.run_surveys(1e-3, 200)
    engine.decimate(0.1, 0.0)
    assert engine.propagate()
    fixed = backend.to_host(engine.fixed).astype(int)
    solved = engine.local_search(5000, freeze_fixed=True, init=True)
    values = engine.assignment()
    assert np.all(values[fixed > 0]) and not np.any(values[fixed < 0])
    if solved:
        assert sp.verify(f, values)


def test_sweep_count_is_the_first_converged_sweep(device):
    """run_surveys counts sweeps, not batches: it reports c when sweep c is the first
    below epsilon, so c - 1 sweeps from the same start do not converge and c do (the GPU
    runs sweeps in batches of 8 and must still say c)."""
    f = sp.random_ksat(2000, 3, ratio=3.8, seed=2)
    _, engine = _engines(device, f, seed=3, damping=0.3)
    assert engine.propagate()
    converged, sweeps = engine.run_surveys(1e-3, 400)
    assert converged and sweeps >= 2
    for budget, expect in ((sweeps - 1, False), (sweeps, True)):
        _, fresh = _engines(device, f, seed=3, damping=0.3)
        assert fresh.propagate()
        assert fresh.run_surveys(1e-3, budget) == (expect, budget)


def test_no_progress_rule():
    from morphgpu.sp import rules  # noqa: PLC0415

    assert not rules.no_progress([1.0] * 50, 0)
    assert not rules.no_progress([1.0] * 19, 10)  # too few sweeps to judge
    assert rules.no_progress([1.0] * 20, 10)  # flat
    falling = [0.9**i for i in range(40)]
    assert not rules.no_progress(falling, 10)  # a new low every sweep
    assert rules.no_progress([0.5, 0.2] + [0.3, 0.25] * 10, 10)  # wandering above its low


def test_stalled_round_stops_early(device, monkeypatch):
    """A round whose max |Δeta| wanders stops after the stall window, not at the cap, and
    says so; a converging one is not cut."""
    f = sp.random_ksat(300, 3, ratio=4.0, seed=1)
    _, engine = _engines(device, f, seed=2, damping=0.3)
    assert engine.propagate()
    converged, sweeps = engine.run_surveys(1e-3, 1000, stall_window=200)
    assert converged and not engine.stalled
    from morphgpu.sp import api  # noqa: PLC0415

    class Wandering:
        stalled = False

        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def run_surveys(self, epsilon, max_iterations, stall_window=0):
            self.stalled = True
            return False, 2 * stall_window

    monkeypatch.setattr(api, "_engine", lambda *a: Wandering(engine_for(device, f)))
    r = sp.solve(f, device=device, seed=0, stall_sweeps=40)
    assert r.status == "SAT" or "no progress in 40 sweeps" in r.reason
    assert r.stats["sp_iterations"] == 80
    assert "no progress" in (r.reason or r.stats.get("note", ""))


def engine_for(device, f):
    fg = factor.build(f, device)
    if device == "gpu":
        from morphgpu.sp.gpu import GPUEngine  # noqa: PLC0415

        return GPUEngine(fg, 0, 0.3)
    return CPUEngine(fg, 0, 0.3)


def test_cpu_stall_on_flat_deltas(monkeypatch):
    f = sp.random_ksat(100, 3, ratio=4.0, seed=1)
    engine = CPUEngine(factor.build(f, "cpu"), 0, 0.3)
    monkeypatch.setattr(engine, "iterate", lambda: 0.5)
    assert engine.run_surveys(1e-3, 1000, stall_window=30) == (False, 64)
    assert engine.stalled
    assert engine.run_surveys(1e-3, 50, stall_window=0) == (False, 50)
    assert not engine.stalled
