"""The local search on both sides: conflict-free parallel probSAT rounds (walk.py and
kernels/walk.cu), then the sequential tail. Every claimed success is checked clause by
clause with an independent checker; the NumPy twin's rounds are traced to check that no
two flipped variables share a clause; frozen variables must keep their values."""

from __future__ import annotations

import numpy as np
import pytest
from cnf_strategies import formulas
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from morphgpu import backend, sp
from morphgpu.sp import factor, rules, walk
from morphgpu.sp.cnf import CNF

pysat_solvers = pytest.importorskip("pysat.solvers")


def satisfies(clauses: list[list[int]], assignment) -> bool:
    return all(any((lit > 0) == bool(assignment[abs(lit) - 1]) for lit in c) for c in clauses)


def unsatisfied(clauses: list[list[int]], assignment) -> int:
    return sum(not any((lit > 0) == bool(assignment[abs(lit) - 1]) for lit in c) for c in clauses)


def engine_for(device: str, f: CNF, seed: int):
    fg = factor.build(f, device)
    if device == "gpu":
        from morphgpu.sp.gpu import GPUEngine  # noqa: PLC0415

        return GPUEngine(fg, seed, 0.3)
    from morphgpu.sp.cpu import CPUEngine  # noqa: PLC0415

    return CPUEngine(fg, seed, 0.3)


def test_raw_ratio_4_formula_solved_by_the_conflict_free_rounds(device):
    """Random 3-SAT, n=1500, ratio 4.0, no SP: the old parallel walk (every unsatisfied
    clause flipping at once) stalled at a few unsatisfied clauses here; the conflict-free
    rounds alone (no sequential tail) solve it."""
    f = sp.random_ksat(1500, 3, ratio=4.0, seed=7)
    engine = engine_for(device, f, seed=1)
    solved = engine.local_search(20_000, freeze_fixed=False, init=True, max_flips=0)
    assert solved, f"gave up after {engine.local_search_rounds_run} rounds"
    assert satisfies(f.clauses(), engine.assignment())
    assert 0 < engine.local_search_rounds_run <= 20_000
    assert engine.local_search_flips_run >= engine.local_search_rounds_run


def planted_formula(n: int, n_clauses: int, width: int, seed: int):
    """Random clauses of 1..width distinct variables, each satisfied by a hidden assignment."""
    rng = np.random.default_rng(seed)
    hidden = rng.random(n) < 0.5
    clauses = []
    for _ in range(n_clauses):
        k = int(rng.integers(1, min(width, n) + 1))
        vars_ = rng.choice(n, size=k, replace=False)
        signs = rng.random(k) < 0.5
        keep = int(rng.integers(k))  # this literal agrees with the hidden assignment
        signs[keep] = hidden[vars_[keep]]
        clauses.append([int(v + 1) if s else -int(v + 1) for v, s in zip(vars_, signs)])
    return clauses


planted = st.tuples(st.integers(2, 40), st.floats(0.5, 4.5), st.integers(2, 5),
                    st.integers(0, 10_000))


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(planted)
def test_rounds_are_conflict_free_and_find_planted_solutions(case):
    """The NumPy twin, traced: no two variables flipped in one round share a clause, a
    claimed success satisfies every clause, and a planted (satisfiable) formula is solved."""
    n, ratio, width, seed = case
    clauses = planted_formula(n, max(1, int(ratio * n)), width, seed)
    f = CNF.from_clauses(clauses, n_vars=n)
    fg = factor.build(f, "cpu")
    rng = np.random.default_rng(seed)
    values = rng.random(n) < 0.5
    result = walk.conflict_free_walk(fg, values, np.zeros(n, dtype=bool), max_rounds=5000,
                                     draw=rng.random, trace=True)
    assert result.solved == satisfies(clauses, values)
    assert result.solved, f"gave up on a planted formula after {result.rounds} rounds"
    assert len(result.flipped_per_round) == result.rounds
    assert result.flips == sum(x.size for x in result.flipped_per_round)
    clause_sets = [set() for _ in range(n)]
    for a, c in enumerate(clauses):
        for lit in c:
            clause_sets[abs(lit) - 1].add(a)
    for flipped in result.flipped_per_round:
        assert flipped.size >= 1  # every round with an unsatisfied clause has a winner
        seen: set[int] = set()
        for v in flipped.tolist():
            assert not (clause_sets[v] & seen), "two flipped variables share a clause"
            seen |= clause_sets[v]


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 30), st.integers(1, 4), st.integers(0, 10_000))
def test_incremental_counts_match_a_fresh_count(n, width, seed):
    """ClauseState.flip over a clause-disjoint set of variables leaves the same true
    counts, true-literal xors and break counts as counting from scratch."""
    rng = np.random.default_rng(seed)
    clauses = [[int(v + 1) if rng.random() < 0.5 else -int(v + 1)
                for v in rng.choice(n, size=int(rng.integers(1, min(width, n) + 1)),
                                    replace=False)]
               for _ in range(int(rng.integers(1, 4 * n)))]
    fg = factor.build(CNF.from_clauses(clauses, n_vars=n), "cpu")
    values = rng.random(n) < 0.5
    state = walk.ClauseState(fg, values)
    for _ in range(5):
        used: set[int] = set()
        chosen = []
        for v in rng.permutation(n).tolist():
            mine = {a for a, c in enumerate(clauses) if v + 1 in map(abs, c)}
            if mine and not (mine & used) and rng.random() < 0.6:
                chosen.append(v)
                used |= mine
        state.flip(np.array(chosen, dtype=np.int64), values)
        fresh = walk.ClauseState(fg, values)
        np.testing.assert_array_equal(state.true_count, fresh.true_count)
        np.testing.assert_array_equal(state.true_xor, fresh.true_xor)
        np.testing.assert_array_equal(state.breaks, fresh.breaks)
        # And against plain Python: the sole true literal of each clause counts a break.
        breaks = np.zeros(n, dtype=np.int64)
        for c in clauses:
            true_vars = [abs(lit) - 1 for lit in c if (lit > 0) == bool(values[abs(lit) - 1])]
            if len(true_vars) == 1:
                breaks[true_vars[0]] += 1
        np.testing.assert_array_equal(state.breaks, breaks)


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(planted)
def test_local_search_on_planted_formulas(device, case):
    """Both sides through the engine: solved means verified; planted formulas are solved
    by the rounds alone."""
    n, ratio, width, seed = case
    clauses = planted_formula(n, max(1, int(ratio * n)), width, seed)
    engine = engine_for(device, CNF.from_clauses(clauses, n_vars=n), seed)
    solved = engine.local_search(5000, freeze_fixed=False, init=True, max_flips=0)
    assert solved == satisfies(clauses, engine.assignment())
    assert solved


def test_rounds_report_a_clause_they_cannot_fix(device):
    f = CNF.from_clauses([[1, 2], [-1, 3], [2, 3]], n_vars=3)
    engine = engine_for(device, f, 0)
    fixed = np.array([1, -1, -1], dtype=np.int8)
    engine.fixed = backend.to_side(fixed, device, dtype=np.int8 if device == "cpu" else np.int32)
    assert not engine.local_search(100, freeze_fixed=True, init=True, max_flips=0)
    assert engine.local_search_rounds_run == 0
    assert list(engine.assignment()) == [True, False, False]


SOLVE_SEED = 0


small_satisfiable = formulas(3, 14, min_width=1, max_width=3, min_clauses=1,
                             max_clauses=lambda n: 4 * n)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(small_satisfiable, st.integers(0, 10_000))
def test_tail_alone_solves_small_satisfiable_formulas(device, case, seed):
    """Zero parallel rounds: the sequential tail alone (probabilistically complete) must
    solve any small satisfiable formula within its flips, and never claim an unsatisfiable
    one."""
    n, clauses = case
    f = CNF.from_clauses(clauses, n_vars=n)
    engine = engine_for(device, f, seed)
    solved = engine.local_search(0, freeze_fixed=False, init=True, max_flips=20_000)
    with pysat_solvers.Minisat22(bootstrap_with=clauses) as solver:
        satisfiable = bool(solver.solve())
    assignment = engine.assignment()
    assert solved == satisfies(clauses, assignment)
    if satisfiable:
        assert solved, "the tail gave up on a small satisfiable formula"
    else:
        assert not solved


def test_tail_respects_frozen_variables(device):
    f = sp.random_ksat(300, 3, ratio=3.5, seed=4)
    clauses = f.clauses()
    with pysat_solvers.Minisat22(bootstrap_with=clauses) as solver:
        assert solver.solve()
        model = np.array(solver.get_model()) > 0
    engine = engine_for(device, f, 0)
    # Freeze a third of the variables at a satisfying assignment's values.
    chosen = np.arange(0, f.n_vars, 3)
    fixed = np.zeros(f.n_vars, dtype=np.int8)
    fixed[chosen] = np.where(model[chosen], 1, -1)
    engine.fixed = backend.to_side(fixed, device, dtype=np.int8 if device == "cpu" else np.int32)
    solved = engine.local_search(0, freeze_fixed=True, init=True, max_flips=200_000)
    values = engine.assignment()
    assert np.array_equal(values[chosen], model[chosen])
    assert solved and satisfies(clauses, values)


def test_tail_reports_a_clause_it_cannot_fix(device):
    """Every variable frozen and one clause false: the tail says so instead of looping."""
    f = CNF.from_clauses([[1, 2], [-1, 3], [2, 3]], n_vars=3)
    engine = engine_for(device, f, 0)
    fixed = np.array([1, -1, -1], dtype=np.int8)  # [-1, 3] and [2, 3] are false
    engine.fixed = backend.to_side(fixed, device, dtype=np.int8 if device == "cpu" else np.int32)
    assert not engine.local_search(0, freeze_fixed=True, init=True, max_flips=1000)
    values = engine.assignment()
    assert list(values) == [True, False, False]


@pytest.mark.gpu
@pytest.mark.parametrize("block_tail", [1 << 30, 64, 1])
def test_gpu_rounds_handed_to_one_block(block_tail):
    """ls_rounds' solo mode (block 0 alone once a round has at most block_tail proposals;
    1 << 30: from the first round, 64: the tail, 1: handing back to the grid whenever a
    round has more than 8 proposals) still solves and every claimed success
    verifies; frozen variables keep their values."""
    if not backend.gpu_available():
        pytest.skip("no GPU")
    f = sp.random_ksat(1500, 3, ratio=4.0, seed=7)
    engine = engine_for("gpu", f, seed=1)
    engine.block_tail = block_tail
    solved = engine.local_search(20_000, freeze_fixed=False, init=True, max_flips=0)
    assert solved == satisfies(f.clauses(), engine.assignment())
    assert solved, f"gave up after {engine.local_search_rounds_run} rounds"
    g = sp.random_ksat(300, 3, ratio=3.5, seed=4)
    frozen_engine = engine_for("gpu", g, seed=2)
    frozen_engine.block_tail = block_tail
    fixed = np.zeros(300, dtype=np.int32)
    fixed[:30] = np.where(np.arange(30) % 2 == 0, 1, -1)
    frozen_engine.fixed = backend.to_side(fixed, "gpu", dtype=np.int32)
    ok = frozen_engine.local_search(5000, freeze_fixed=True, init=True, max_flips=0)
    values = frozen_engine.assignment()
    assert np.all(values[:30] == (fixed[:30] > 0))
    assert ok == satisfies(g.clauses(), values)


def _walk_hash(seed: int, round_: int, items: np.ndarray) -> np.ndarray:
    """kernels/walk.cu's uniform_hash(seed, round, item) in NumPy (uint64 arithmetic)."""
    m64 = (1 << 64) - 1
    with np.errstate(over="ignore"):
        x = np.uint64((seed * 0x9E3779B97F4A7C15 + round_ * 0xBF58476D1CE4E5B9) & m64) \
            + items.astype(np.uint64)
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return (x >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


@pytest.mark.gpu
@pytest.mark.parametrize("n,block_tail,max_rounds,ratio,stall_floor,fixed_share", [
    (300, 1 << 30, 3000, 4.0, 0, 0),  # one block from the first round: its groups hold 2
    (300, 96, 3000, 4.0, 0, 0),       # clauses each and spill the rest while a round has
    (300, 1, 3000, 4.0, 0, 0),        # > 128 of them; solo rounds handed back to the grid
    (40_000, 96, 40, 4.0, 0, 0),      # the grid's groups spill too (> 2 x 64 x blocks)
    (300, 96, 3000, 7.0, 40, 0),      # unsatisfiable: the stall rule stops both sides alike
    (300, 1, 3000, 7.0, 40, 0),       # (and the fewest count carries over a hand-back)
    (300, 96, 3000, 4.0, 0, 0.3),     # a frozen share: both walk factor.frozen_residual
    (40_000, 96, 40, 4.2, 0, 0.5),
])
def test_gpu_rounds_equal_the_numpy_twin(monkeypatch, n, block_tail, max_rounds, ratio,
                                         stall_floor, fixed_share):
    """ls_rounds against walk.conflict_free_walk fed the kernel's random numbers: the same
    proposals and priorities give the same winners, so after the same rounds both sides
    hold the same assignment and counted the same flips (any lost, doubled or misplaced
    flip of the groups' held or spilled proposals shows here), and the same progress
    record (fewest unsatisfied, its round, longest wait, stalled). With a share of the
    variables fixed (at their start values, freed in any clause they would falsify), the
    engine's frozen walk runs on the residual; the twin is given the residual built on
    the host."""
    if not backend.gpu_available():
        pytest.skip("no GPU")
    f = sp.random_ksat(n, 3, ratio=ratio, seed=11)
    start = np.random.default_rng(5).random(n) < 0.5
    fg = factor.build(f, "cpu")
    fixed = np.zeros(n, dtype=np.int32)
    if fixed_share:
        pick = np.random.default_rng(7).random(n) < fixed_share
        fixed[pick] = np.where(start[pick], 1, -1)
        table = fg.lit_var.reshape(-1, fg.width)
        value = fixed[table]
        dead = ((value != 0) & ((value > 0) == (fg.lit_neg.reshape(table.shape) != 0))
                ).all(axis=1)
        fixed[table[dead, 0]] = 0
        fg = factor.frozen_residual(fg, fixed)
        assert fg is not None and 0 < fg.n_clauses < f.n_clauses
    engine = engine_for("gpu", f, seed=3)
    engine.block_tail = block_tail
    engine.values = backend.to_side(start.astype(np.uint8), "gpu", dtype=np.uint8)
    engine.fixed = backend.to_side(fixed, "gpu", dtype=np.int32)
    gpu_solved = engine.local_search(max_rounds, freeze_fixed=bool(fixed_share), init=False,
                                     max_flips=0, stall_floor=stall_floor)
    gpu_values = engine.assignment()
    seed = engine.rounds_seed % 2**64
    states = []

    class Traced(walk.ClauseState):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            states.append(self)

    monkeypatch.setattr(walk, "ClauseState", Traced)
    rounds = [0]

    def draw(count: int) -> np.ndarray:
        unsat = np.flatnonzero(states[-1].true_count == 0)
        assert unsat.size == count
        u = _walk_hash(seed, rounds[0], unsat)
        rounds[0] += 1
        return u

    values = start.copy()
    twin = walk.conflict_free_walk(fg, values, fixed != 0, max_rounds=max_rounds,
                                   draw=draw, stall_floor=stall_floor)
    assert gpu_solved == twin.solved
    assert engine.local_search_rounds_run == twin.rounds
    assert engine.local_search_flips_run == twin.flips
    assert np.array_equal(gpu_values, values)
    assert engine.walk_progress == twin.progress
    if stall_floor:
        assert twin.progress.stalled and twin.rounds < max_rounds


def _unsat_core_formula() -> CNF:
    """All eight clauses over three variables (unsatisfiable), plus satisfiable padding."""
    core = [[a * 1, b * 2, c * 3] for a in (1, -1) for b in (1, -1) for c in (1, -1)]
    pad = [[v, v + 1] for v in range(4, 40)]
    return CNF.from_clauses(core + pad, n_vars=40)


@pytest.mark.parametrize("stall_floor", [1, 7, 300])
def test_a_stalled_walk_stops_as_the_rule_says(device, stall_floor):
    """On an unsatisfiable formula no round reaches 0: the rounds stop exactly when
    rules.walk_stalled first holds, stalled, with the budget left and no tail flips;
    without a floor they run the whole budget."""
    f = _unsat_core_formula()
    engine = engine_for(device, f, 3)
    assert not engine.local_search(5000, freeze_fixed=False, init=True, max_flips=100,
                                   stall_floor=stall_floor)
    p = engine.walk_progress
    assert p.stalled and p.fewest >= 1
    assert engine.local_search_rounds_run == p.fewest_round + max(stall_floor, p.fewest_round)
    assert p.longest_wait >= engine.local_search_rounds_run - p.fewest_round
    assert unsatisfied(f.clauses(), engine.assignment()) >= 1
    flips = engine.local_search_flips_run
    again = engine_for(device, f, 3)  # the same walk without a tail budget: no tail ran
    again.local_search(5000, freeze_fixed=False, init=True, max_flips=0,
                       stall_floor=stall_floor)
    assert again.local_search_flips_run == flips

    engine = engine_for(device, f, 3)
    assert not engine.local_search(500, freeze_fixed=False, init=True, max_flips=0)
    assert engine.local_search_rounds_run == 500 and not engine.walk_progress.stalled


@pytest.mark.parametrize("round_now,fewest_round,floor,expected", [
    (10, 0, 0, False), (10, 0, 10, True), (9, 0, 10, False),
    (100, 60, 10, False), (120, 60, 10, True), (10**6, 10**6, 1, False),
])
def test_walk_stalled_rule(round_now, fewest_round, floor, expected):
    assert rules.walk_stalled(round_now, fewest_round, floor) == expected


@settings(max_examples=60, deadline=None)
@given(formulas(1, 12, min_width=1, max_width=5, max_clauses=lambda n: 4 * n),
       st.integers(0, 10_000))
def test_frozen_residual_keeps_what_a_frozen_walk_can_change(case, seed):
    """factor.frozen_residual against plain Python: it keeps, in order, exactly the clauses
    no fixed literal satisfies, each with its free literals in place and its fixed ones
    padded; its literal→clause lists match its table; and under any assignment that keeps
    the fixed values, the free variables' break counts and the unsatisfied clauses are
    those of the whole formula. None exactly when a clause has no literal left true or
    free."""
    n, clauses = case
    rng = np.random.default_rng(seed)
    fg = factor.build(CNF.from_clauses(clauses, n_vars=n), "cpu")
    fixed = rng.choice(np.array([-1, 0, 1], dtype=np.int8), size=n, p=[0.3, 0.4, 0.3])
    table = fg.lit_var.reshape(fg.n_clauses, fg.width)
    negated = fg.lit_neg.reshape(fg.n_clauses, fg.width) != 0
    rows = [[(int(v), bool(neg)) for v, neg in zip(r, s) if v >= 0]
            for r, s in zip(table, negated)]
    sat = [any(fixed[v] != 0 and (fixed[v] > 0) != neg for v, neg in row) for row in rows]
    dead = any(not s and all(fixed[v] != 0 for v, _ in row) for s, row in zip(sat, rows))
    assert factor.frozen_residual(fg, np.zeros_like(fixed)) is fg
    residual = factor.frozen_residual(fg, fixed)
    assert (residual is None) == dead
    if residual is None:
        return
    kept = [a for a, s in enumerate(sat) if not s]
    assert residual.n_clauses == len(kept) and residual.width == fg.width
    assert residual.n_vars == n and residual.var_edges.dtype == fg.var_edges.dtype
    got = residual.lit_var.reshape(-1, fg.width)
    for new, old in enumerate(kept):
        want = [v if v >= 0 and fixed[v] == 0 else -1 for v in table[old]]
        assert got[new].tolist() == want
        free = got[new] >= 0
        assert (residual.lit_neg.reshape(-1, fg.width)[new][free] != 0).tolist() == \
            negated[old][free].tolist()
    for v in range(n):
        edges = residual.var_edges[residual.var_offsets[v]:residual.var_offsets[v + 1]]
        assert all(residual.lit_var[e] == v for e in edges.tolist())
    assert residual.var_offsets[-1] == int((residual.lit_var >= 0).sum())
    values = np.where(fixed != 0, fixed > 0, rng.random(n) < 0.5)
    whole, part = walk.ClauseState(fg, values), walk.ClauseState(residual, values)
    movable = fixed == 0
    np.testing.assert_array_equal(part.breaks[movable], whole.breaks[movable])
    np.testing.assert_array_equal(np.flatnonzero(whole.true_count == 0),
                                  np.asarray(kept, dtype=np.int64)[part.true_count == 0])


@pytest.mark.gpu
def test_frozen_residual_is_the_same_on_the_gpu():
    """The CuPy build of the residual equals the NumPy one (the engines' two walks run on it)."""
    if not backend.gpu_available():
        pytest.skip("no GPU")
    f = sp.random_ksat(3000, 4, ratio=9.0, seed=5)
    rng = np.random.default_rng(1)
    fixed = rng.choice(np.array([-1, 0, 1], dtype=np.int32), size=f.n_vars, p=[0.4, 0.2, 0.4])
    whole = factor.build(f, "cpu")
    table = whole.lit_var.reshape(-1, whole.width)
    value = fixed[table]
    dead = ((value != 0) & ((value > 0) == (whole.lit_neg.reshape(table.shape) != 0))).all(axis=1)
    fixed[table[dead, 0]] = 0  # a free literal in each clause the fixed values falsify
    cpu = factor.frozen_residual(whole, fixed)
    gpu = factor.frozen_residual(factor.build(f, "gpu"), backend.to_side(fixed, "gpu"))
    assert cpu is not None and gpu is not None and gpu.side == "gpu"
    assert cpu.n_clauses == gpu.n_clauses > 0
    for name in ("lit_var", "lit_neg", "var_offsets", "var_edges"):
        np.testing.assert_array_equal(backend.to_host(getattr(gpu, name)), getattr(cpu, name))
