"""The round machinery of Delaunay refinement: the deferral rule, the candidate lists, the
round limit. Outputs are judged by morphgpu.dmr.check (independent code); the deferral
rule against a breadth-first search over the neighbour table written here.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from morphgpu import backend
from morphgpu.conflict import claim_priority
from morphgpu.dmr import api
from morphgpu.dmr.check import check_mesh
from morphgpu.dmr.cpu import gives_way, order_key
from morphgpu.dmr.mesh import to_triangle_dict

pytest.importorskip("triangle")


def _prepared(mesh: dict, device: str):
    ours, source = api.prepare(mesh, device)
    ours = api._morton_layout(ours)
    ours.extra["n_input"] = ours.n_vertices
    return ours, source


def _refine_path(device: str):
    if device == "gpu":
        from morphgpu.dmr.gpu import refine_gpu  # noqa: PLC0415

        return refine_gpu
    from morphgpu.dmr.cpu import refine_cpu  # noqa: PLC0415

    return refine_cpu


def _within(nbr: np.ndarray, t: int, depth: int) -> set[int]:
    """Triangles reachable from t in 1..depth steps across edges (t itself excluded)."""
    seen, frontier = {t}, [t]
    for _ in range(depth):
        frontier = [int(o) for s in frontier for o in nbr[s] if o >= 0 and o not in seen]
        seen.update(frontier)
    return seen - {t}


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 50), rnd=st.integers(0, 10_000), depth=st.sampled_from([1, 2, 3]),
       fraction=st.floats(0.05, 0.9), tied=st.booleans())
def test_gives_way_exactly_to_an_outranking_bad_triangle_nearby(
    seed, rnd, depth, fraction, tied
):
    mesh, _ = _prepared(api.random_mesh(60, seed=seed), "cpu")
    rng = np.random.default_rng(seed + rnd)
    bad = np.nonzero(rng.random(mesh.n_triangles) < fraction)[0]
    if len(bad) == 0:
        return
    # keys with many ties exercise the priority and slot tie-breaks
    key = rng.integers(0, 3 if tied else 2**32, len(bad)).astype(np.uint32)
    waits = gives_way(mesh.nbr, bad, key, mesh.n_triangles, rnd, depth)
    prio = claim_priority(rnd, bad)
    rank = {int(t): (int(k), int(p), int(t)) for t, k, p in zip(bad, key, prio)}
    for t, w in zip(bad.tolist(), waits.tolist()):
        higher = [o for o in _within(mesh.nbr, t, depth) if o in rank and rank[o] > rank[t]]
        assert w == bool(higher), (t, higher)
    assert not waits[bad.tolist().index(max(rank, key=rank.get))]


@given(st.lists(st.floats(-1e3, 1e3), min_size=6, max_size=6).filter(
    lambda c: len({(c[0], c[1]), (c[2], c[3]), (c[4], c[5])}) == 3))
def test_order_key_puts_the_shorter_shortest_edge_first(c):
    # two triangles sharing nothing; the key orders them as their shortest edges do
    # (up to float32 ties: equal keys then, never the wrong way round)
    x = np.array([c[0], c[2], c[4], 0.0, 1.0, 0.5])
    y = np.array([c[1], c[3], c[5], 0.0, 0.0, 0.25])
    tri = np.array([[0, 1, 2], [3, 4, 5]])
    p = np.stack([x, y], axis=1)[tri]
    shortest = np.linalg.norm(p - p[:, [1, 2, 0]], axis=2).min(axis=1)
    key = order_key(x, y, tri).astype(np.int64)
    first, want = np.sign(key[0] - key[1]), np.sign(shortest[1] - shortest[0])
    assert first in (0, want)
    if abs(shortest[0] / shortest[1] - 1) > 1e-6:  # past float32 rounding
        assert first == want


def test_no_deferral_when_depth_is_zero():
    mesh, _ = _prepared(api.random_mesh(60, seed=1), "cpu")
    bad = np.arange(mesh.n_triangles)
    key = np.zeros(len(bad), dtype=np.uint32)
    assert not gives_way(mesh.nbr, bad, key, mesh.n_triangles, 3, 0).any()


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
def test_every_deferral_depth_refines_correctly(device, depth):
    ours, source = _prepared(api.random_mesh(400, seed=7), device)
    out, stats = _refine_path(device)(ours, 30.0, None, defer_depth=depth)
    result = {k: backend.to_host(v) for k, v in to_triangle_dict(out).items()}
    verdict = check_mesh(result, source, min_angle=30.0)
    assert verdict["ok"], verdict["problems"][:5]
    assert stats["stuck"] == 0
    if device == "gpu":
        # the candidate lists hold every triangle that can be bad: the full scan that
        # confirms the end finds nothing they missed, and full scans stay rare
        assert stats["missed_by_candidates"] == 0
        assert stats["full_scans"] <= 2 + 2 * stats["stuck_retries"]


def test_deferral_cuts_the_wasted_plans():
    mesh = api.random_mesh(1500, seed=3)
    ratios = []
    for depth in (0, 2):
        ours, _ = _prepared(mesh, "cpu")
        _, stats = _refine_path("cpu")(ours, 30.0, None, defer_depth=depth)
        ratios.append(stats["abort_ratio"])
    assert ratios[1] < ratios[0]


def test_running_out_of_rounds_is_an_error(device):
    ours, _ = _prepared(api.random_mesh(300, seed=2), device)
    with pytest.raises(RuntimeError, match="rounds were not enough"):
        _refine_path(device)(ours, 30.0, None, max_rounds=2)


@pytest.mark.gpu
def test_profile_rows_name_each_kernel():
    if not backend.gpu_available():
        pytest.skip("no GPU")
    from morphgpu.dmr.gpu import refine_gpu  # noqa: PLC0415

    ours, _ = _prepared(api.random_mesh(2000, seed=4), "gpu")
    rows: list[dict] = []
    _, stats = refine_gpu(ours, 30.0, None, profile=rows)
    applied = [r for r in rows if "claimants" in r]
    assert len(applied) == stats["rounds"]
    # the rows count every bad triangle in the claim range; stats only those that planned
    assert sum(r["claimants"] for r in applied) == stats["claimants"] + stats["gave_way"]
    for r in applied:
        for k in ("find_bad", "plan_and_race", "prioritycheck", "check", "apply"):
            assert r[k + "_ms"] >= 0.0


@pytest.mark.gpu
@pytest.mark.parametrize(
    "threshold,mode",
    [(0, "cooperative"), (64, "cooperative"), (2**40, "cooperative"), (2**40, "xiao-feng")],
    ids=["host-rounds", "tail-small-plans", "tail-all", "tail-all-xiao-feng"],
)
def test_tail_and_host_rounds_refine_the_same_input_correctly(threshold, mode):
    """threshold 0: every round from the host; 64: the persistent tail hands back whenever
    a round has more than 64 bad triangles (and takes over again); 2^40: every round after
    the first full scan runs in the tail, over either grid barrier."""
    if not backend.gpu_available():
        pytest.skip("no GPU")
    from morphgpu.dmr.gpu import refine_gpu  # noqa: PLC0415

    mesh = api.random_mesh(3000, seed=11)
    ours, source = _prepared(mesh, "gpu")
    calls: list[dict] = []
    out, stats = refine_gpu(ours, 30.0, None, tail_threshold=threshold, tail_barrier=mode,
                            progress=calls.append)
    result = {k: backend.to_host(v) for k, v in to_triangle_dict(out).items()}
    verdict = check_mesh(result, source, min_angle=30.0)
    assert verdict["ok"], verdict["problems"][:5]
    assert stats["stuck"] == 0
    assert stats["missed_by_candidates"] == 0
    assert stats["refinements"] > 0
    assert 0.0 <= stats["abort_ratio"] < 1.0
    host_rounds = stats["rounds"] - stats["tail_rounds"]
    if threshold == 0:
        assert stats["tail_launches"] == 0 and stats["tail_rounds"] == 0
        assert len(calls) == stats["rounds"]
    else:
        assert stats["tail_launches"] >= 1 and stats["tail_rounds"] > 0
        assert stats["tail_seconds"] > 0.0
        # one progress call per host round and one per tail launch that ran a round
        tail_calls = [c for c in calls if "tail_rounds" in c]
        assert sum(c["tail_rounds"] for c in tail_calls) == stats["tail_rounds"]
        assert len(calls) == host_rounds + len(tail_calls)
    exits = stats["tail_exits"]
    assert sum(exits.values()) == stats["tail_launches"]
    if threshold == 2**40:
        # the first round's full scan, one host round after each stuck retry, and one
        # where the tail handed back for the host to grow the arrays (seen on the H200:
        # 2 or 3 at 6k triangles in) or at its round cap
        assert exits["plans"] == 0
        assert host_rounds <= 1 + stats["stuck_retries"] + exits["slots"] + exits["rounds"]
    if threshold == 64:
        assert host_rounds > 1  # the big rounds went back to the host


@pytest.mark.gpu
def test_tail_respects_the_round_limit():
    if not backend.gpu_available():
        pytest.skip("no GPU")
    from morphgpu.dmr.gpu import refine_gpu  # noqa: PLC0415

    ours, _ = _prepared(api.random_mesh(300, seed=2), "gpu")
    with pytest.raises(RuntimeError, match="rounds were not enough"):
        refine_gpu(ours, 30.0, None, max_rounds=4, tail_threshold=2**40)
