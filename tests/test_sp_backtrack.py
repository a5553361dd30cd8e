"""Backtracking survey propagation (sp.solve(backtrack=r)) on both engines.

Checked against independent plain-Python code: every SAT answer clause by clause, the
values a release leaves against a unit propagation of the remaining decisions written
here, the release scores against the SP equations evaluated directly (products taken
without the engines' zero counting or divisions), and backtrack=0 against the results
main gave before backtracking existed.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from morphgpu import backend, sp
from morphgpu.sp import api, factor
from morphgpu.sp.api import (
    AUTO_BACKTRACK,
    AUTO_RESTART_BACKTRACK,
    AUTO_RESTART_FIX_SCALE,
    AUTO_RETREATS,
    AUTO_SLOWDOWN,
)
from morphgpu.sp.cnf import CNF
from morphgpu.sp.cpu import CPUEngine

pysat_solvers = pytest.importorskip("pysat.solvers")


def satisfies(clauses, assignment) -> bool:
    return all(any((lit > 0) == bool(assignment[abs(lit) - 1]) for lit in c) for c in clauses)


def complete_solver_says_sat(clauses) -> bool:
    with pysat_solvers.Minisat22(bootstrap_with=clauses) as solver:
        return bool(solver.solve())


def check(result, clauses, n_vars) -> None:
    assert result.status in ("SAT", "UNSAT", "UNKNOWN")
    if result.status == "SAT":
        assert result.assignment is not None and result.assignment.shape == (n_vars,)
        assert satisfies(clauses, result.assignment), "SAT with a wrong assignment"
    else:
        assert result.reason
    if result.status == "UNSAT":
        assert not complete_solver_says_sat(clauses)


def engine_for(device, f, seed=0, damping=0.3):
    fg = factor.build(f, device)
    if device == "gpu":
        from morphgpu.sp.gpu import GPUEngine  # noqa: PLC0415

        return GPUEngine(fg, seed, damping)
    return CPUEngine(fg, seed, damping)


def host(x):
    return backend.to_host(x)


def unit_propagation(clauses, n, decisions):
    """Plain unit propagation from the decisions (+1/-1/0 per variable): the values, or
    None on a contradiction."""
    fixed = np.array(decisions, dtype=np.int64)
    changed = True
    while changed:
        changed = False
        for c in clauses:
            vals = [fixed[abs(x) - 1] * (1 if x > 0 else -1) for x in c]
            if any(v > 0 for v in vals):
                continue
            free = [x for x, v in zip(c, vals) if v == 0]
            if not free:
                return None
            if len(free) == 1:
                x = free[0]
                fixed[abs(x) - 1] = 1 if x > 0 else -1
                changed = True
    return fixed


def direct_scores(fg, eta, fixed, decided):
    """s * (W+ - W-) per decided variable from the SP equations, loop by loop."""
    w = fg.width
    lit_var = fg.lit_var.reshape(-1, w)
    lit_neg = fg.lit_neg.reshape(-1, w).astype(bool)
    eta = eta.reshape(-1, w)
    m = lit_var.shape[0]

    def true_lit(a, j):
        u = lit_var[a, j]
        return u >= 0 and fixed[u] != 0 and (fixed[u] > 0) != lit_neg[a, j]

    is_open = [not any(true_lit(a, j) for j in range(w)) for a in range(m)]
    occurs = {}  # variable -> [(clause, slot)]
    for a in range(m):
        for j in range(w):
            if lit_var[a, j] >= 0:
                occurs.setdefault(int(lit_var[a, j]), []).append((a, j))

    def ratio(u, a, j):
        """Pi^u / total of free u seen from clause a (slot j), over u's open clauses but a."""
        same = opp = 1.0
        for b, i in occurs[u]:
            if b == a or not is_open[b]:
                continue
            if lit_neg[b, i] == lit_neg[a, j]:
                same *= 1.0 - eta[b, i]
            else:
                opp *= 1.0 - eta[b, i]
        pi_u, pi_s, pi_0 = (1 - opp) * same, (1 - same) * opp, same * opp
        total = pi_u + pi_s + pi_0
        return pi_u / total if total > 0 else 0.0

    scores = {}
    for v in np.flatnonzero(decided):
        p_pos = p_neg = 1.0
        for a, j in occurs.get(int(v), []):
            others_true = any(true_lit(a, i) for i in range(w) if i != j)
            cavity = 0.0
            if not others_true:
                cavity = 1.0
                for i in range(w):
                    u = lit_var[a, i]
                    if i != j and u >= 0 and fixed[u] == 0:
                        cavity *= ratio(int(u), a, i)
            if lit_neg[a, j]:
                p_neg *= 1.0 - cavity
            else:
                p_pos *= 1.0 - cavity
        pi_p, pi_m, pi_0 = (1 - p_pos) * p_neg, (1 - p_neg) * p_pos, p_pos * p_neg
        total = pi_p + pi_m + pi_0
        diff = (pi_p - pi_m) / total if total > 0 else 0.0
        scores[int(v)] = decided[v] * diff
    return scores


def test_sat_answers_are_verified(device):
    solved = 0
    for k, ratio, n in ((3, 4.0, 300), (4, 9.0, 200), (5, 18.0, 120)):
        for seed in range(3):
            f = sp.random_ksat(n, k, ratio=ratio, seed=seed)
            r = sp.solve(f, device=device, seed=seed, backtrack=0.5, fix_fraction=0.05,
                         max_iterations=300, local_search_rounds=2000)
            check(r, f.clauses(), n)
            solved += r.status == "SAT"
            assert r.stats["backtrack"] == 0.5
            assert r.stats["backtracking_steps"] >= 0 and r.stats["retreats"] >= 0
    assert solved >= 6


def test_backtracking_steps_happen_and_are_counted(device):
    f = sp.random_ksat(600, 3, ratio=4.15, seed=4)
    r = sp.solve(f, device=device, seed=1, backtrack=0.6, fix_fraction=0.02)
    check(r, f.clauses(), f.n_vars)
    s = r.stats
    assert s["backtracking_steps"] >= 1 and s["variables_released"] >= s["backtracking_steps"]
    assert s["decimation_rounds"] >= 1
    # Net progress: more fixed than released (the steps ended in trivial surveys or a
    # retreat's end, not in a loop).
    assert s["variables_fixed"] > s["variables_released"]


# Captured from main at ca0ecad (before backtracking existed), CPU side: backtrack=0 must
# give the same rounds, sweeps, search and assignment. The local search's counts and the
# assignment were captured again when the frozen walk moved to factor.frozen_residual
# (its claims no longer collide over clauses a fixed literal satisfies, and clauses are
# renumbered, so its draws differ); the SP columns are ca0ecad's.
MAIN_RESULTS = [
    ((600, 3, 4.1, 1), "SAT", (1073, 33, 153, 447, 234, 666), "c2f805aac583c207"),
    ((500, 4, 9.0, 2), "SAT", (1152, 64, 213, 287, 1866, 5618), "5e5ef9588ac1b91e"),
    ((300, 3, 4.25, 3), "UNKNOWN", (3185, 74, 125, 175, 4000, 13077), None),
]


@pytest.mark.parametrize("case, status, counts, digest", MAIN_RESULTS)
def test_no_backtracking_is_main_step_for_step(case, status, counts, digest):
    n, k, ratio, seed = case
    f = sp.random_ksat(n, k, ratio=ratio, seed=seed)
    # fix_fraction 0.01 and damping 0.3: the defaults when these were captured.
    r = sp.solve(f, device="cpu", seed=seed, backtrack=0, local_search_rounds=2000,
                 fix_fraction=0.01, damping=0.3)
    s = r.stats
    assert r.status == status
    assert (s["sp_iterations"], s["decimation_rounds"], s["variables_fixed"],
            s["free_after_sp"], s["local_search_rounds"], s["local_search_flips"]) == counts
    assert (s["backtracking_steps"], s["variables_released"], s["retreats"]) == (0, 0, 0)
    if digest is not None:
        assert hashlib.sha256(np.packbits(r.assignment).tobytes()).hexdigest()[:16] == digest


def _decimate_some(engine, steps, fraction=0.04):
    assert engine.propagate()
    for _ in range(steps):
        engine.run_surveys(1e-3, 300)
        trivial, _n = engine.decimate(fraction, 0.0)
        assert not trivial
        assert engine.propagate()
    engine.run_surveys(1e-3, 300)


@pytest.mark.parametrize("k, ratio", [(3, 4.0), (4, 9.0)])
def test_release_unfixes_and_recomputes_implied_values(device, k, ratio):
    f = sp.random_ksat(400, k, ratio=ratio, seed=7)
    clauses = f.clauses()
    engine = engine_for(device, f)
    _decimate_some(engine, 5)
    for _ in range(20):  # on until unit propagation has implied something
        if np.any((host(engine.fixed) != 0) & (host(engine.decided) == 0)):
            break
        _decimate_some(engine, 1)
    decided_before = host(engine.decided).astype(np.int64)
    fixed_before = host(engine.fixed).astype(np.int64)
    assert np.all(fixed_before[decided_before != 0] == decided_before[decided_before != 0])
    implied_before = (fixed_before != 0) & (decided_before == 0)
    assert implied_before.any()  # unit propagation implied something to recompute
    count = 12
    consistent, released = engine.release(count)
    released = np.sort(host(released).astype(np.int64))
    assert consistent and released.size == count
    decided = host(engine.decided).astype(np.int64)
    fixed = host(engine.fixed).astype(np.int64)
    assert np.all(decided_before[released] != 0) and np.all(decided[released] == 0)
    kept = decided_before.copy()
    kept[released] = 0
    np.testing.assert_array_equal(decided, kept)
    # The values are exactly unit propagation of the decisions left (plain code here).
    np.testing.assert_array_equal(fixed, unit_propagation(clauses, f.n_vars, decided))
    assert (fixed[released] == 0).any()
    # The satisfied marks are those of the new values.
    satisfied = host(engine.satisfied).astype(bool)
    truth = [any(fixed[abs(x) - 1] * (1 if x > 0 else -1) > 0 for x in c) for c in clauses]
    np.testing.assert_array_equal(satisfied, truth)
    # And SP runs on from there (on the GPU: over lists rebuilt from the input).
    converged, _ = engine.run_surveys(1e-3, 300)
    assert converged
    assert not engine.decimate(0.04, 0.0)[0] and engine.propagate()


@pytest.mark.parametrize("k, ratio", [(3, 4.0), (4, 9.0)])
def test_release_scores_are_the_sp_equations(device, k, ratio):
    """Scores from the engine's state equal the SP equations evaluated directly, and a
    release frees the lowest-scored decisions."""
    f = sp.random_ksat(150, k, ratio=ratio, seed=3)
    engine = engine_for(device, f)
    _decimate_some(engine, 4, fraction=0.05)
    fg = factor.build(f, "cpu")
    eta = host(engine.eta).astype(np.float64)
    fixed = host(engine.fixed).astype(np.int64)
    decided = host(engine.decided).astype(np.int64)
    want = direct_scores(fg, eta, fixed, decided)
    got = host(engine.decision_scores()).astype(np.float64)
    assert np.all(np.isinf(got[decided == 0]))
    keys = np.array(sorted(want))
    np.testing.assert_allclose(got[keys], [want[v] for v in keys], atol=2e-5)
    assert np.ptp(got[keys]) > 0.05  # the scores tell the decisions apart
    count = 5
    _, released = engine.release(count)
    released = set(host(released).astype(np.int64).tolist())
    cut = sorted(want.values())[count - 1]
    assert all(want[v] <= cut + 1e-4 for v in released)
    assert all(want[v] >= cut - 1e-4 for v in set(want) - released)


def test_undo_last_decimation_restores_the_state(device):
    f = sp.random_ksat(400, 3, ratio=4.1, seed=8)
    engine = engine_for(device, f)
    _decimate_some(engine, 3)
    before = (host(engine.fixed).copy(), host(engine.decided).copy(),
              host(engine.satisfied).copy())
    assert not engine.decimate(0.05, 0.0)[0]
    engine.propagate()
    assert engine.has_last_decimation()
    assert engine.undo_last_decimation() and not engine.has_last_decimation()
    for a, b in zip(before, (engine.fixed, engine.decided, engine.satisfied)):
        np.testing.assert_array_equal(host(b), a)


def _same_state(cpu, gpu):
    """The GPU engine takes the CPU engine's decisions (their implied values recomputed on
    both sides) and surveys (rounded to float32 on both)."""
    decided = host(cpu.decided).astype(np.int32)
    gpu.decided[...] = backend.to_side(decided, "gpu")
    assert gpu._reset_to_decisions() and cpu._reset_to_decisions()
    eta32 = cpu.eta.astype(np.float32)
    cpu.eta = eta32.astype(np.float64)
    gpu.eta = backend.to_side(eta32, "gpu", dtype=np.float32)
    np.testing.assert_array_equal(host(gpu.fixed), host(cpu.fixed))


@pytest.mark.gpu
def test_cpu_and_gpu_take_the_same_steps():
    """Step by step from the same state, each engine running its own SP, they decimate and
    release the same decisions (near-ties aside); from the same surveys their release
    scores agree to float32 rounding. Whole solves are not compared decision for decision:
    the engines draw different starting surveys (CuPy hash, NumPy generator), and float32
    against float64 sweeps converge to fixed points ~1e-4 apart, which reorders
    near-equal biases, so a few decisions differ at each step and the states drift."""
    f = sp.random_ksat(2000, 3, ratio=4.0, seed=5)
    cpu, gpu = engine_for("cpu", f), engine_for("gpu", f)
    cpu.eta = np.random.default_rng(0).random(cpu.eta.size)
    assert cpu.propagate()
    for step in ("d", "d", "d", "r", "d", "r", "r", "d"):
        _same_state(cpu, gpu)
        for engine in (cpu, gpu):
            assert engine.run_surveys(1e-3, 400)[0]
            if step == "d":
                assert not engine.decimate(0.04, 0.0)[0] and engine.propagate()
            else:
                assert engine.release(30)[0]
        a, b = host(cpu.decided), host(gpu.decided)
        both = (a != 0) & (b != 0)
        assert both.sum() >= 0.9 * max((a != 0).sum(), (b != 0).sum()), step
        assert np.all(a[both] == b[both])
    # From the same surveys: the scores agree and so do the released sets.
    _same_state(cpu, gpu)
    s_cpu, s_gpu = cpu.decision_scores(), host(gpu.decision_scores()).astype(np.float64)
    finite = np.isfinite(s_cpu)
    np.testing.assert_array_equal(np.isfinite(s_gpu), finite)
    np.testing.assert_allclose(s_gpu[finite], s_cpu[finite], atol=1e-5)
    _, r_cpu = cpu.release(40)
    _, r_gpu = gpu.release(40)
    cut = np.sort(s_cpu[finite])[39]
    differ = set(r_cpu.tolist()) ^ set(host(r_gpu).tolist())
    assert all(abs(s_cpu[v] - cut) < 1e-4 for v in differ)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.integers(12, 60), st.sampled_from([3, 4]), st.floats(0.6, 1.05),
       st.integers(0, 10**6), st.sampled_from([0.2, 0.5, 0.8]), st.sampled_from([0.05, 0.2]),
       st.sampled_from([0.0, 0.01]))
def test_random_formulas_with_backtracking(device, n, k, load, seed, r, fraction, trivial):
    """Near and past the threshold (load 1 = 4.27 at K=3, 9.93 at K=4), with surveys never
    trivial (threshold 0) or the default: every SAT verified, UNSAT only when true."""
    ratio = load * {3: 4.27, 4: 9.93}[k]
    f = sp.random_ksat(n, k, ratio=ratio, seed=seed)
    clauses = f.clauses()
    result = sp.solve(f, device=device, seed=seed, backtrack=r, fix_fraction=fraction,
                      trivial_threshold=trivial, max_iterations=200, local_search_rounds=300)
    check(result, clauses, n)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.integers(12, 80), st.sampled_from([3, 4, 5]), st.floats(0.6, 1.05),
       st.integers(0, 10**6), st.sampled_from([0.05, 0.2]), st.sampled_from([1.5, 3.0]),
       st.sampled_from([20, 200]))
# A formula whose unsatisfiability a complete solver takes ~23 s to prove (Minisat22, 3.1M
# conflicts): this test once asked it after every solve, so drawing such formulas made the
# test run for minutes.
@example(66, 5, 1.05, 1000, 0.2, 1.5, 20)
def test_auto_on_random_formulas(device, monkeypatch, n, k, load, seed, fraction, slowdown,
                                 sweeps):
    """"auto" near and past the threshold (load 1 = 4.27 at K=3, 9.93 at K=4, 21.1 at
    K=5), with a switch quick to fire (AUTO_SLOWDOWN 1.5) and rounds cut short (20
    sweeps), so that slowdowns, failures, retreats and restarts meet in one solve: every
    SAT verified, UNSAT only when true, and each switch and restart recorded as it was
    made."""
    monkeypatch.setattr(api, "AUTO_SLOWDOWN", slowdown)
    ratio = load * {3: 4.27, 4: 9.93, 5: 21.1}[k]
    f = sp.random_ksat(n, k, ratio=ratio, seed=seed)
    clauses = f.clauses()
    result = sp.solve(f, device=device, seed=seed, fix_fraction=fraction,
                      max_iterations=sweeps, local_search_rounds=300)
    check(result, clauses, n)
    switch, restart = result.stats["backtrack_switch"], result.stats["backtrack_restart"]
    if switch is not None and switch["cause"] == "slowdown":
        assert switch["to"] == AUTO_RESTART_BACKTRACK
        assert switch["fix_fraction"] == pytest.approx(min(1.0, AUTO_RESTART_FIX_SCALE
                                                           * fraction))
    elif switch is not None:
        assert switch["to"] == AUTO_BACKTRACK
    if restart is not None:
        assert switch is not None and restart["to"] == AUTO_RESTART_BACKTRACK
        assert restart["fix_fraction"] == pytest.approx(min(1.0, AUTO_RESTART_FIX_SCALE
                                                            * fraction))
        assert restart["after_rounds"] >= switch["after_rounds"]


COUNTS = ("sp_iterations", "decimation_rounds", "variables_fixed", "free_after_sp",
          "local_search_rounds", "local_search_flips", "backtracking_steps",
          "variables_released", "retreats", "local_search", "sp_converged")


def _first_slowdown(rounds) -> int | None:
    """The SP call (1-based) where "auto" should switch for slowdown, from r=0's calls
    (converged, sweeps): the first converged one after call 1 that takes more than
    AUTO_SLOWDOWN times the fewest sweeps of calls 2 up to it, unless it is the run's last
    (a converged run's last call is the one whose surveys were trivial)."""
    fewest = None
    for call, (converged, sweeps) in enumerate(rounds[:-1], start=1):
        if call == 1 or not converged:
            continue
        fewest = sweeps if fewest is None else min(fewest, sweeps)
        if sweeps > AUTO_SLOWDOWN * fewest:
            return call
    return None


@pytest.mark.parametrize("case", [c[0] for c in MAIN_RESULTS])
def test_auto_is_plain_decimation_until_sp_slows_down_or_fails(case, monkeypatch):
    """backtrack="auto" against 0 on the pinned formulas: the same run step for step where
    SP never slows down (AUTO_SLOWDOWN, found here from r=0's own rounds) or fails (the
    first two); the third slows down in round 26 with r=0 (and fails to converge in round
    75), and "auto" switches exactly there, then takes backtracking steps. With the
    slowdown switch off, it switches where SP fails instead."""
    n, k, ratio, seed = case
    f = sp.random_ksat(n, k, ratio=ratio, seed=seed)
    real = CPUEngine.run_surveys
    rounds = []

    def recorded(self, *args, **kwargs):
        converged, sweeps = real(self, *args, **kwargs)
        rounds.append((converged, sweeps))
        return converged, sweeps

    monkeypatch.setattr(CPUEngine, "run_surveys", recorded)
    # damping 0.3 (the default when the cases were pinned): with 0.15 the third formula's
    # plain run also fails to converge, but its local search then solves it anyway.
    kw = dict(device="cpu", seed=seed, local_search_rounds=2000, damping=0.3)
    plain = sp.solve(f, backtrack=0, **kw)
    slowdown = _first_slowdown(rounds)
    auto = sp.solve(f, **kw)
    assert auto.stats["backtrack"] == "auto" and plain.stats["backtrack_switch"] is None
    check(auto, f.clauses(), n)
    if slowdown is not None:
        assert auto.stats["backtrack_switch"] == {
            "to": AUTO_RESTART_BACKTRACK, "cause": "slowdown",
            "after_rounds": slowdown - 1,
            "after_iterations": sum(sweeps for _, sweeps in rounds[:slowdown]),
            "fix_fraction": pytest.approx(
                AUTO_RESTART_FIX_SCALE * auto.stats["fix_fraction"])}
        assert auto.stats["backtracking_steps"] >= 1
    elif plain.stats["sp_converged"]:
        assert auto.stats["backtrack_switch"] is None
        assert [auto.stats[x] for x in COUNTS] == [plain.stats[x] for x in COUNTS]
        assert (auto.status, auto.reason) == (plain.status, plain.reason)
        np.testing.assert_array_equal(auto.assignment, plain.assignment)
    if not plain.stats["sp_converged"]:
        assert "did not converge" in plain.reason
        monkeypatch.setattr(api, "AUTO_SLOWDOWN", 0.0)
        failed = sp.solve(f, **kw)
        check(failed, f.clauses(), n)
        assert failed.stats["backtrack_switch"] == {
            "to": AUTO_BACKTRACK, "cause": "non-convergence",
            "after_rounds": plain.stats["decimation_rounds"],
            "after_iterations": plain.stats["sp_iterations"]}
        assert failed.stats["retreats"] >= 1 and failed.stats["backtracking_steps"] >= 1
        assert failed.stats["decimation_rounds"] > plain.stats["decimation_rounds"]
    if case == MAIN_RESULTS[2][0]:
        assert slowdown == 26


def _engine_class(device):
    if device == "gpu":
        from morphgpu.sp.gpu import GPUEngine  # noqa: PLC0415

        return GPUEngine
    return CPUEngine


def _fail_one_round(monkeypatch, device, fail_at):
    """The engine's ``fail_at``-th SP round (1-based) runs, then reports non-convergence
    (``fail_at`` may be a set of rounds)."""
    fail = set(fail_at) if isinstance(fail_at, (set, frozenset, list, tuple)) else {fail_at}
    if device == "gpu":
        from morphgpu.sp.gpu import GPUEngine as cls  # noqa: PLC0415
    else:
        cls = CPUEngine
    real = cls.run_surveys
    calls = {"n": 0}

    def run_surveys(self, *args, **kwargs):
        converged, iterations = real(self, *args, **kwargs)
        calls["n"] += 1
        return (converged and calls["n"] not in fail), iterations

    monkeypatch.setattr(cls, "run_surveys", run_surveys)
    return calls


def test_auto_switches_when_a_round_fails(device, monkeypatch):
    """A round that does not converge (forced: round 6 reports failure): r=0 stops
    decimating there; "auto" records the switch at the same point, retreats (undoes round
    5's decimation) and goes on with decimation and backtracking steps; any SAT verified."""
    f = sp.random_ksat(600, 3, ratio=4.2, seed=3)
    clauses = f.clauses()
    kw = dict(device=device, seed=2, fix_fraction=0.02, local_search_rounds=2000)
    _fail_one_round(monkeypatch, device, fail_at=6)
    plain = sp.solve(f, backtrack=0.0, **kw)
    assert plain.stats["sp_converged"] is False and plain.stats["decimation_rounds"] == 5
    _fail_one_round(monkeypatch, device, fail_at=6)
    auto = sp.solve(f, **kw)
    check(auto, clauses, f.n_vars)
    switch = auto.stats["backtrack_switch"]
    assert switch["cause"] == "non-convergence" and switch["to"] == AUTO_BACKTRACK
    assert switch["after_rounds"] == 5
    assert switch["after_iterations"] == plain.stats["sp_iterations"]
    assert auto.stats["retreats"] >= 1 and auto.stats["backtracking_steps"] >= 1
    assert auto.stats["decimation_rounds"] > 5
    assert auto.stats["backtrack_restart"] is None  # one failure: no restart


def test_auto_restarts_when_the_switched_run_fails_again(device, monkeypatch):
    """Rounds 6, 7 and 8 fail (forced): "auto" switches at round 6 (retreat 1), retreats
    again at 7 (AUTO_RETREATS = 2 in all), and at 8 gives its decisions up and decimates
    again from none with r = AUTO_RESTART_BACKTRACK, whose rounds converge; any SAT
    verified. Against r = 0.5 asked for outright at the restart's fix fraction (twice the
    solve's), the restarted run takes the same steps."""
    assert AUTO_RETREATS == 2
    f = sp.random_ksat(600, 3, ratio=4.2, seed=3)
    clauses = f.clauses()
    kw = dict(device=device, seed=2, fix_fraction=0.02, local_search_rounds=2000)
    calls = _fail_one_round(monkeypatch, device, fail_at={6, 7, 8})
    auto = sp.solve(f, **kw)
    check(auto, clauses, f.n_vars)
    assert auto.stats["backtrack_switch"]["after_rounds"] == 5
    restart = auto.stats["backtrack_restart"]
    assert restart["to"] == AUTO_RESTART_BACKTRACK
    assert restart["cause"] == "SP did not converge in 1000 iterations (after 2 retreats)"
    assert restart["after_iterations"] > auto.stats["backtrack_switch"]["after_iterations"]
    first_stage_calls = 8
    restarted_rounds = calls["n"] - first_stage_calls
    # r = 0.5 from the first step on the same formula and seed, no failures forced, at the
    # restart's fix fraction.
    assert restart["fix_fraction"] == pytest.approx(AUTO_RESTART_FIX_SCALE * 0.02)
    calls["n"] = -10**9
    direct = sp.solve(f, backtrack=AUTO_RESTART_BACKTRACK,
                      **{**kw, "fix_fraction": restart["fix_fraction"]})
    check(direct, clauses, f.n_vars)
    assert direct.stats["backtrack_restart"] is None and direct.stats["retreats"] == 0
    assert auto.stats["retreats"] == AUTO_RETREATS + direct.stats["retreats"]
    surveys_direct = (direct.stats["decimation_rounds"] + direct.stats["backtracking_steps"]
                      + 1)  # each step's surveys, and the last (trivial) round's
    assert restarted_rounds == surveys_direct
    assert auto.stats["free_after_sp"] == direct.stats["free_after_sp"]
    assert auto.status == direct.status


def test_auto_switches_on_a_real_non_convergence(device):
    """No patching: SP capped at 3 sweeps a round cannot converge in round 1 (random
    starting surveys); "auto" records the switch there, and with no decision to retreat
    from it stops as r=0 does, with the same counts."""
    f = sp.random_ksat(300, 3, ratio=4.1, seed=1)
    kw = dict(device=device, seed=0, max_iterations=3, local_search_rounds=200)
    plain, auto = sp.solve(f, backtrack=0, **kw), sp.solve(f, **kw)
    assert plain.stats["sp_converged"] is False
    assert auto.stats["backtrack_switch"] == {"to": AUTO_BACKTRACK,
                                              "cause": "non-convergence", "after_rounds": 0,
                                              "after_iterations": 3}
    for x in ("sp_iterations", "decimation_rounds", "retreats", "backtracking_steps"):
        assert auto.stats[x] == plain.stats[x]
    assert auto.stats["backtrack_restart"] is None  # no decision was ever made
    check(auto, f.clauses(), f.n_vars)


def test_auto_decimates_again_when_the_local_search_gives_up(device):
    """SP converges to trivial surveys but the frozen local search (one round, no tail)
    gives up: "auto" decimates again from no decisions as backtracking SP; r=0 goes to the
    every-variable-free stage instead."""
    f = sp.random_ksat(500, 3, ratio=4.1, seed=6)
    kw = dict(device=device, seed=4, local_search_rounds=1, local_search_flips=0)
    plain, auto = sp.solve(f, backtrack=0, **kw), sp.solve(f, **kw)
    assert plain.stats["sp_converged"] and plain.stats["local_search"] == "gave up"
    switch = auto.stats["backtrack_switch"]
    assert switch == {"to": AUTO_BACKTRACK, "cause": "local search gave up",
                      "after_rounds": plain.stats["decimation_rounds"],
                      "after_iterations": plain.stats["sp_iterations"]}
    # The second decimation's steps come on top of the first's.
    assert auto.stats["decimation_rounds"] > plain.stats["decimation_rounds"]
    assert auto.stats["sp_iterations"] > plain.stats["sp_iterations"]
    assert auto.stats["backtracking_steps"] >= 1
    check(auto, f.clauses(), f.n_vars)


def _slow_round(monkeypatch, device, at, factor=100):
    """The engine's ``at``-th SP round (1-based; 0: none) reports ``factor`` times the
    sweeps it took (its convergence as it was); returns the count of rounds."""
    cls = _engine_class(device)
    real = cls.run_surveys
    calls = {"n": 0}

    def run_surveys(self, *args, **kwargs):
        converged, iterations = real(self, *args, **kwargs)
        calls["n"] += 1
        return converged, iterations * (factor if calls["n"] == at else 1)

    monkeypatch.setattr(cls, "run_surveys", run_surveys)
    return calls


def test_auto_switches_when_sp_slows_down(device, monkeypatch):
    """Round 6's SP reports 100 times its sweeps (forced; more than AUTO_SLOWDOWN times the
    fewest before it): "auto" decimates plainly through round 5, step for step as r=0,
    then goes on from those decisions as backtracking SP with r = AUTO_RESTART_BACKTRACK at
    AUTO_RESTART_FIX_SCALE times the fix fraction; with the switch turned off
    (AUTO_SLOWDOWN = 0) it stays plain decimation. Any SAT verified."""
    assert AUTO_SLOWDOWN > 1
    f = sp.random_ksat(600, 3, ratio=4.2, seed=3)
    clauses = f.clauses()
    kw = dict(device=device, seed=2, fix_fraction=0.02, local_search_rounds=2000)
    _slow_round(monkeypatch, device, at=6)
    plain = sp.solve(f, backtrack=0.0, **kw)
    assert plain.stats["decimation_rounds"] > 6 and plain.stats["backtrack_switch"] is None
    calls = _slow_round(monkeypatch, device, at=6)
    auto = sp.solve(f, **kw)
    check(auto, clauses, f.n_vars)
    switch = auto.stats["backtrack_switch"]
    assert switch["cause"] == "slowdown" and switch["to"] == AUTO_RESTART_BACKTRACK
    assert switch["after_rounds"] == 5
    assert switch["fix_fraction"] == pytest.approx(AUTO_RESTART_FIX_SCALE * 0.02)
    assert auto.stats["backtracking_steps"] >= 1 and auto.stats["retreats"] == 0
    assert auto.stats["backtrack_restart"] is None
    assert calls["n"] > 6
    monkeypatch.setattr(api, "AUTO_SLOWDOWN", 0.0)
    _slow_round(monkeypatch, device, at=6)
    off = sp.solve(f, **kw)
    assert off.stats["backtrack_switch"] is None
    assert [off.stats[x] for x in COUNTS] == [plain.stats[x] for x in COUNTS]


def test_auto_does_not_switch_on_the_last_round(device, monkeypatch):
    """A slow round whose surveys are trivial (the run's last, forced slow) ends the run
    as plain decimation does: no switch, the same steps and answer."""
    f = sp.random_ksat(600, 3, ratio=4.2, seed=3)
    kw = dict(device=device, seed=2, fix_fraction=0.02, local_search_rounds=2000)
    calls = _slow_round(monkeypatch, device, at=0)
    first = sp.solve(f, **kw)
    assert first.stats["backtrack_switch"] is None and first.stats["sp_converged"]
    _slow_round(monkeypatch, device, at=calls["n"])
    last = sp.solve(f, **kw)
    assert last.stats["backtrack_switch"] is None
    assert [last.stats[x] for x in COUNTS[1:4]] == [first.stats[x] for x in COUNTS[1:4]]
    assert (last.status, last.reason) == (first.status, first.reason)


def test_auto_restarts_when_the_search_after_a_slowdown_gives_up(device, monkeypatch):
    """After a slowdown switch (forced at round 6) the run's surveys become trivial but its
    frozen local search (one round, no tail) gives up: "auto" decimates again from no
    decisions with r = AUTO_RESTART_BACKTRACK at AUTO_RESTART_FIX_SCALE times the fix
    fraction, not with AUTO_BACKTRACK as after a plain run."""
    f = sp.random_ksat(500, 3, ratio=4.1, seed=6)
    kw = dict(device=device, seed=4, fix_fraction=0.02, local_search_rounds=1,
              local_search_flips=0)
    _slow_round(monkeypatch, device, at=6)
    auto = sp.solve(f, **kw)
    assert auto.stats["backtrack_switch"]["cause"] == "slowdown"
    restart = auto.stats["backtrack_restart"]
    assert restart is not None and restart["to"] == AUTO_RESTART_BACKTRACK
    assert restart["cause"] in ("local search gave up", "local search stalled")
    assert restart["fix_fraction"] == pytest.approx(AUTO_RESTART_FIX_SCALE * 0.02)
    assert auto.stats["decimation_rounds"] > restart["after_rounds"]
    check(auto, f.clauses(), f.n_vars)


@pytest.mark.parametrize("r", [-0.1, 1.0, 2.0, True, "0.5", "Auto", "", None, [0.3]])
def test_bad_backtrack(r):
    f = sp.random_ksat(10, 3, ratio=2.0, seed=0)
    with pytest.raises(ValueError, match="backtrack"):
        sp.solve(f, backtrack=r)


def test_unit_clauses_with_backtracking(device):
    clauses = [[1], [-1, 2], [-2, 3, 4], [-3, -4], [5, 6, 7], [-5, -6], [-6, -7]]
    f = CNF.from_clauses(clauses, n_vars=7)
    r = sp.solve(f, device=device, seed=3, backtrack=0.5, trivial_threshold=0.0)
    check(r, clauses, 7)
    assert r.status == "SAT"


def test_cli_backtrack(capsys):
    from morphgpu import cli  # noqa: PLC0415

    code = cli.main(["sat", "--random", "300", "--ratio", "4.0", "--seed", "2",
                     "--device", "cpu", "--backtrack", "0.5", "--json"])
    out = capsys.readouterr().out
    assert code in (0, 10) and '"backtrack": 0.5' in out
    code = cli.main(["sat", "--random", "300", "--ratio", "4.0", "--seed", "2",
                     "--device", "cpu", "--json"])
    out = capsys.readouterr().out
    assert code in (0, 10) and '"backtrack": "auto"' in out
    with pytest.raises(SystemExit):
        cli.main(["sat", "--random", "300", "--device", "cpu", "--backtrack", "sometimes"])
    assert "--backtrack" in capsys.readouterr().err


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_auto_first_stage_runs_on_while_it_sets_new_lows(device, monkeypatch, seed):
    """auto's first local search (budget left to its default) may run past that budget
    up to AUTO_STALL_BUDGET times, and it stops only solved, stuck, at that cap, or
    stalled by rules.walk_stalled; its record in stats says which. Shrunk budgets make every case
    reachable on a small formula."""
    from morphgpu.sp import api, rules  # noqa: PLC0415

    budget, floor = 6, 3
    monkeypatch.setitem(api.DEFAULT_ROUNDS, device, budget)
    monkeypatch.setattr(api, "AUTO_STALL_FLOOR", floor)
    f = sp.random_ksat(600, 3, ratio=4.0, seed=seed)
    result = sp.solve(f, device=device, seed=seed, local_search_flips=0)
    first = result.stats["local_search_stages"][0]
    switch = result.stats["backtrack_switch"]
    if switch is not None and "local search" not in switch["cause"]:
        # SP failed before any local search: BSP is running already, nothing is extended.
        assert first["rounds"] <= budget and not first["stalled"]
        check(result, f.clauses(), f.n_vars)
        return
    cap = budget * api.AUTO_STALL_BUDGET
    assert first["rounds"] <= cap
    solved_here = first["fewest"] == 0
    if first["stalled"]:
        assert first["rounds"] == first["fewest_round"] + max(floor, first["fewest_round"])
        assert rules.walk_stalled(first["rounds"], first["fewest_round"], floor)
        assert result.stats["backtrack_switch"]["cause"] == "local search stalled"
    elif not solved_here and not first["stuck"]:
        assert first["rounds"] == cap
    if solved_here:
        assert result.status == "SAT" and result.stats["backtrack_switch"] is None
    check(result, f.clauses(), f.n_vars)


def test_an_explicit_budget_is_not_extended(device):
    """local_search_rounds given: auto's first stage keeps to it."""
    f = sp.random_ksat(600, 3, ratio=4.0, seed=1)
    result = sp.solve(f, device=device, seed=1, local_search_rounds=4, local_search_flips=0)
    assert result.stats["local_search_stages"][0]["rounds"] <= 4
