"""The GPU check of a SAT answer (kernels/verify.cu via gpu.count_false_clauses) against
NumPy's cnf.unsatisfied_clauses, and sp.solve's GPU path using it.

GPU only (the ``gpu`` marker): the CPU path keeps cnf.verify, tested in test_sp_cnf.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from morphgpu import sp
from morphgpu.sp import api
from morphgpu.sp.cnf import CNF, unsatisfied_clauses

pytestmark = pytest.mark.gpu


def _random_formula(rng: np.random.Generator, n: int, m: int, max_width: int,
                    empty_share: float, dtype: type) -> tuple[CNF, np.ndarray]:
    """Clauses of 0..max_width literals (repeats and tautologies allowed, as in files),
    about ``empty_share`` of them empty, literals stored as ``dtype``; and an assignment
    that satisfies every non-empty one (see _plant)."""
    widths = rng.integers(1, max_width + 1, size=m)
    widths[rng.random(m) < empty_share] = 0
    offsets = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(widths, out=offsets[1:])
    total = int(offsets[-1])
    lits = rng.integers(1, n + 1, size=total) * rng.choice([-1, 1], size=total)
    planted = _plant(rng, n, offsets, lits)
    return CNF(n, offsets, lits.astype(dtype)), planted


def _plant(rng: np.random.Generator, n: int, offsets: np.ndarray,
           lits: np.ndarray) -> np.ndarray:
    """A random assignment, with each non-empty clause's first literal turned (in place)
    to agree with it, so that it satisfies every non-empty clause."""
    values = rng.random(n) < 0.5
    first = offsets[:-1][np.diff(offsets) > 0]
    var = np.abs(lits[first])
    lits[first] = np.where(values[var - 1], var, -var)
    return values


def _gpu_count(f: CNF, values: np.ndarray) -> int:
    import cupy as cp

    from morphgpu.sp.gpu import count_false_clauses

    return count_false_clauses(f, cp.asarray(values.astype(np.uint8)))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("max_width, empty_share", [(3, 0.0), (7, 0.05), (40, 0.3)])
def test_kernel_agrees_with_numpy(dtype, max_width, empty_share):
    rng = np.random.default_rng(max_width * 7 + int(empty_share * 100))
    for trial in range(6):
        n = int(rng.integers(1, 3000))
        m = int(rng.integers(1, 20_000))
        f, planted = _random_formula(rng, n, m, max_width, empty_share, dtype)
        n_empty = int(np.count_nonzero(np.diff(f.offsets) == 0))
        # Planted: only the empty clauses are false; then flips leave others false too.
        for values in (planted, ~planted, rng.random(n) < 0.5,
                       planted ^ (rng.random(n) < 0.01)):
            expected = int(unsatisfied_clauses(f, values).size)
            got = _gpu_count(f, values)
            assert got == expected, (trial, n, m, got, expected)
            assert (got == 0) == sp.verify(f, values)
        assert _gpu_count(f, planted) == n_empty


def test_kernel_on_a_million_clauses():
    """Enough clauses for the grid-stride loop and many blocks' atomics."""
    rng = np.random.default_rng(5)
    f = sp.random_ksat(300_000, 3, ratio=4.2, seed=5)
    lits = f.literals.copy()
    planted = _plant(rng, f.n_vars, f.offsets, lits)
    f = CNF(f.n_vars, f.offsets, lits)
    assert _gpu_count(f, planted) == 0
    for flips in (1, 100, 10_000):
        values = planted.copy()
        values[rng.choice(f.n_vars, size=flips, replace=False)] ^= True
        assert _gpu_count(f, values) == unsatisfied_clauses(f, values).size


def test_kernel_edge_cases():
    assert _gpu_count(CNF(3, np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32)),
                      np.zeros(3, dtype=bool)) == 0
    only_empty = CNF(2, np.zeros(4, dtype=np.int64), np.zeros(0, dtype=np.int32))
    assert _gpu_count(only_empty, np.ones(2, dtype=bool)) == 3
    f = CNF.from_clauses([[1, -2], [], [2], [-1, 1]], n_vars=2)
    for values in ([False, False], [True, True], [True, False], [False, True]):
        values = np.array(values)
        assert _gpu_count(f, values) == unsatisfied_clauses(f, values).size


def test_kernel_refuses_malformed_formulas():
    # Built directly, past CNF.from_arrays' validation: the kernel must not read outside.
    # (It stops a clause at its first true literal, so a bad one after it goes unseen.)
    past = CNF(2, np.array([0, 2], dtype=np.int64), np.array([3, 1], dtype=np.int32))
    with pytest.raises(ValueError, match="clause 0"):
        _gpu_count(past, np.ones(2, dtype=bool))
    zero = CNF(2, np.array([0, 1, 2], dtype=np.int64), np.array([1, 0], dtype=np.int32))
    with pytest.raises(ValueError, match="clause 1"):
        _gpu_count(zero, np.zeros(2, dtype=bool))
    outside = CNF(2, np.array([0, 1, 5], dtype=np.int64), np.array([1, 2], dtype=np.int32))
    with pytest.raises(ValueError, match="clause 1"):
        _gpu_count(outside, np.zeros(2, dtype=bool))
    with pytest.raises(ValueError, match="variables"):
        _gpu_count(CNF.from_clauses([[1, 2]]), np.zeros(3, dtype=bool))


def test_solve_verifies_on_the_device(monkeypatch):
    """The GPU solve never calls the NumPy verify, and still answers a checked SAT."""

    def host_verify(*_args):
        raise AssertionError("the GPU path called the NumPy verify")

    monkeypatch.setattr(api, "verify", host_verify)
    f = sp.random_ksat(2000, 3, ratio=3.5, seed=2)
    result = sp.solve(f, device="gpu", seed=2)
    assert result.status == "SAT"
    assert isinstance(result.assignment, np.ndarray) and result.assignment.dtype == bool
    assert result.assignment.shape == (f.n_vars,)
    assert unsatisfied_clauses(f, result.assignment).size == 0
    assert "verify" in result.stats["seconds"]


def test_solve_never_answers_sat_for_a_false_assignment(monkeypatch):
    """An engine that claims success with clauses still false: the device check refuses."""
    from morphgpu.sp.gpu import GPUEngine

    def lying_search(self, *_args, **_kwargs):
        self.local_search_rounds_run = self.local_search_flips_run = 0
        self.values = self.cp.zeros(self.fg.n_vars, dtype=self.cp.uint8)
        return True

    monkeypatch.setattr(GPUEngine, "local_search", lying_search)
    f = sp.random_ksat(500, 3, ratio=4.0, seed=4)
    assert unsatisfied_clauses(f, np.zeros(f.n_vars, dtype=bool)).size > 0
    result = sp.solve(f, device="gpu", seed=4)
    assert result.status == "UNKNOWN"
    assert result.assignment is None
    assert "failed verification" in result.reason
