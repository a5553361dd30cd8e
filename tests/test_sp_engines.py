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
