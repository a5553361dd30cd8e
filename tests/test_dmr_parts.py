"""The pieces under the refinement: predicates, the checker itself, Triangle file I/O, CLI."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from morphgpu import cli
from morphgpu.dmr import api, predicates, triangle_io
from morphgpu.dmr.check import check_mesh

triangle = pytest.importorskip("triangle")

coords = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


def _sign(v: Fraction) -> int:
    return (v > 0) - (v < 0)


@given(st.lists(coords, min_size=6, max_size=6))
def test_orient2d_is_exact(c):
    ax, ay, bx, by, cx, cy = (Fraction(v) for v in c)
    expect = _sign((ax - cx) * (by - cy) - (ay - cy) * (bx - cx))
    assert predicates.orient2d(*c) == expect


@given(st.lists(coords, min_size=4, max_size=4), st.floats(0, 1), st.integers(-3, 3))
def test_orient2d_near_collinear(c, t, ulps):
    # a point on the segment, nudged by a few units in the last place: the float
    # determinant is pure rounding here, the exact answer is not
    ax, ay, bx, by = c
    px = np.nextafter(ax + t * (bx - ax), np.inf if ulps > 0 else -np.inf) if ulps else ax + t * (
        bx - ax
    )
    py = ay + t * (by - ay)
    fa = [Fraction(v) for v in (ax, ay, bx, by, px, py)]
    expect = _sign((fa[0] - fa[4]) * (fa[3] - fa[5]) - (fa[1] - fa[5]) * (fa[2] - fa[4]))
    assert predicates.orient2d(ax, ay, bx, by, px, py) == expect


@given(st.lists(coords, min_size=8, max_size=8))
def test_incircle_is_exact(c):
    ax, ay, bx, by, cx, cy, dx, dy = (Fraction(v) for v in c)
    adx, ady, bdx, bdy, cdx, cdy = ax - dx, ay - dy, bx - dx, by - dy, cx - dx, cy - dy
    det = (
        (adx**2 + ady**2) * (bdx * cdy - cdx * bdy)
        + (bdx**2 + bdy**2) * (cdx * ady - adx * cdy)
        + (cdx**2 + cdy**2) * (adx * bdy - bdx * ady)
    )
    assert predicates.incircle(*c) == _sign(det)


def test_incircle_cocircular_exactly_zero():
    # four corners of a square, a case where naive floats may give either sign
    assert predicates.incircle(0, 0, 1, 0, 1, 1, 0, 1) == 0
    assert predicates.incircle(0, 0, 1, 0, 0, 1, 0.5, 0.5) == 1
    assert predicates.incircle(0, 0, 1, 0, 0, 1, 2, 2) == -1


def test_checker_accepts_triangle_output():
    data = triangle.get_data("face")
    base = triangle.triangulate(data, "pQ")
    ref = triangle.triangulate(
        {k: base[k] for k in ("vertices", "triangles", "segments", "segment_markers")}, "rpq30nQ"
    )
    verdict = check_mesh(ref, {**base, "holes": data["holes"]}, min_angle=30.0)
    assert verdict["ok"], verdict["problems"]


def _square_mesh():
    # unit square split along the diagonal 0-2, which is not Delaunay for this kite
    v = np.array([[0, 0], [1, 0], [1.2, 1.2], [0, 1]], dtype=float)
    return {
        "vertices": v,
        "triangles": np.array([[0, 1, 2], [0, 2, 3]]),
        "segments": np.array([[0, 1], [1, 2], [2, 3], [3, 0]]),
    }


def test_checker_rejects_broken_meshes():
    good = api.refine(api.random_mesh(60, seed=2), device="cpu")
    assert check_mesh(good, None, min_angle=30.0)["ok"]
    # a missing triangle: the hole's edges are boundary edges that are not segments
    dropped = {**good, "triangles": good["triangles"][1:], "neighbors": None}
    assert not check_mesh(dropped, None)["ok"]
    # a flipped triangle
    flipped = {**good, "triangles": good["triangles"].copy()}
    flipped["triangles"][0] = flipped["triangles"][0][::-1]
    assert not check_mesh(flipped, None)["ok"]
    # wrong neighbours
    nb = {**good, "neighbors": np.roll(good["neighbors"], 1, axis=1)}
    assert not check_mesh(nb, None)["ok"]
    # area limit and angle limit
    assert not check_mesh(good, None, max_area=1e-9)["ok"]
    assert not check_mesh(good, None, min_angle=59.0)["ok"]
    # a non-Delaunay free edge
    kite = _square_mesh()
    assert "locally Delaunay" in " ".join(check_mesh(kite, None)["problems"])
    # a hole that is not empty
    src = {**good, "holes": np.array([good["vertices"][good["triangles"][0]].mean(0)])}
    assert not check_mesh(good, src)["ok"]


def test_checker_domain_area_ignores_the_inputs_orientation():
    # the input may list a triangle clockwise (the refinement orients it): the domain is
    # the same square, and the output of the square must pass; a triangle missing from
    # the output must still fail on the area
    v = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=float)
    given = {"vertices": v, "triangles": np.array([[2, 1, 0], [0, 2, 3]])}  # one clockwise
    out = {"vertices": v, "triangles": np.array([[0, 1, 2], [0, 2, 3]]),
           "segments": np.array([[0, 1], [1, 2], [2, 3], [3, 0]])}
    verdict = check_mesh(out, given)
    assert verdict["ok"], verdict["problems"]
    half = {"vertices": v, "triangles": np.array([[0, 1, 2]]),
            "segments": np.array([[0, 1], [1, 2], [2, 0]])}
    assert "differs from the domain" in " ".join(check_mesh(half, given)["problems"])


def test_poly_roundtrip(tmp_path):
    data = triangle.get_data("double_hex")
    out = api.refine(data, device="cpu")
    paths = triangle_io.write(out, tmp_path / "mesh")
    assert {p.suffix for p in paths} == {".node", ".ele", ".poly", ".neigh"}
    back = triangle_io.read(tmp_path / "mesh.node")
    np.testing.assert_array_equal(back["vertices"], out["vertices"])
    np.testing.assert_array_equal(back["triangles"], out["triangles"])
    np.testing.assert_array_equal(triangle_io.read_neigh(tmp_path / "mesh.neigh"), out["neighbors"])
    poly = triangle_io.read_poly(tmp_path / "mesh.poly")
    np.testing.assert_array_equal(poly["segments"], out["segments"])
    np.testing.assert_array_equal(poly["holes"], out["holes"])


@pytest.mark.parametrize("name", ["A", "face", "la", "box", "double_hex"])
def test_reads_triangle_sample_files(name):
    import pathlib

    path = pathlib.Path(triangle.__file__).parent / "data" / f"{name}.poly"
    ours = triangle_io.read(path)
    ref = triangle.get_data(name)
    np.testing.assert_array_equal(ours["vertices"], ref["vertices"])
    np.testing.assert_array_equal(ours["segments"], ref["segments"])
    for key in ("holes", "regions", "segment_markers"):
        if key in ref:
            np.testing.assert_array_equal(ours[key], ref[key])


@pytest.mark.parametrize(
    "text, where",
    [
        ("3 2 0 0\n1 0 0\n2 1 x\n3 0 1\n0 0\n0\n", ":3:"),
        ("3 2 0 0\n1 0 0\n2 1 0\n3 0 1\n1 0\n1 1 7\n0\n", "segment 1 refers"),
        ("3 2 0 0\n1 0 0\n2 1 0\n", "ended early"),
        ("3 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n0 0\n0\n", "2-D"),
    ],
)
def test_malformed_files_name_the_line(tmp_path, text, where):
    path = tmp_path / "bad.poly"
    path.write_text(text)
    with pytest.raises(ValueError, match="bad.poly") as info:
        triangle_io.read(path)
    assert where in str(info.value)


def test_cli_refine_and_demo(tmp_path, capsys):
    import pathlib

    poly = pathlib.Path(triangle.__file__).parent / "data" / "face.poly"
    code = cli.main(["refine", str(poly), "--device", "cpu", "--check", "--json",
                     "--output", str(tmp_path / "face")])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["valid"] is True
    assert (tmp_path / "face.ele").exists()
    from morphgpu.dmr.cli import demo

    assert demo("cpu")["valid"] is True


@given(
    st.integers(5, 60).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n),
            st.lists(
                st.lists(st.integers(0, n - 1), min_size=1, max_size=5, unique=True),
                min_size=1,
                max_size=30,
            ),
        )
    ),
    st.integers(0, 50),
)
def test_cavity_claims_are_safe_and_make_progress(case, rnd):
    # Triangles as nodes of an undirected adjacency graph (like the mesh's neighbours); a
    # claimant's ring is every neighbour of its cavity outside it, as in the refinement.
    from morphgpu.dmr.cpu import Plan, claim_cavities

    n, edges, cavities = case
    adjacent: dict[int, set] = {i: set() for i in range(n)}
    for a, b in edges:
        if a != b:
            adjacent[a].add(b)
            adjacent[b].add(a)
    plans = []
    for cavity in cavities:
        ring = sorted(set().union(*(adjacent[t] for t in cavity)) - set(cavity))
        plans.append(Plan((0.0, 0.0), cavity, [(0, 0, o, 0) for o in ring], None))
    winners = claim_cavities(plans, n, rnd)
    won = [p for p, w in zip(plans, winners) if w]
    assert won, "every round with a claim has a winner"
    for i, a in enumerate(won):
        for b in won[i + 1:]:
            assert not set(a.cavity) & set(b.cavity)
            # a winner rewrites pointers in its ring: no other winner may own those triangles
            assert not {o for _, _, o, _ in a.boundary} & set(b.cavity)
            assert not {o for _, _, o, _ in b.boundary} & set(a.cavity)


@given(st.lists(st.floats(-10, 10, allow_nan=False), min_size=6, max_size=6))
@example([0.0, 0.0, 1.0, 0.0, 0.5, 0.05])  # a sliver: the off-centre's case
def test_insertion_point_is_circumcentre_or_off_centre(c):
    import math

    from morphgpu.dmr.cpu import insertion_point, off_centre_constant

    p = np.array(c, dtype=float).reshape(3, 2)
    area2 = (p[1, 0] - p[0, 0]) * (p[2, 1] - p[0, 1]) - (p[1, 1] - p[0, 1]) * (p[2, 0] - p[0, 0])
    lengths = [np.hypot(*(p[(i + 2) % 3] - p[(i + 1) % 3])) for i in range(3)]
    if area2 <= 1e-3 * max(lengths) ** 2:  # clockwise or nearly flat: not a mesh triangle
        return
    # The circumcentre multiplies three lengths: for a triangle of legs 3e-133 (found by
    # hypothesis) that product is under double's range and the point comes back wrong.
    # refine and triangulate refuse such inputs (extent below dmr.api.MIN_EXTENT).
    from morphgpu.dmr.api import MIN_EXTENT

    if max(lengths) < MIN_EXTENT:
        return
    k = off_centre_constant(30.0)
    q = np.array(insertion_point(*p.ravel(), k))
    s = int(np.argmin(lengths))
    u, v, w = p[(s + 1) % 3], p[(s + 2) % 3], p[s]
    # on the shortest edge's bisector, on its opposite vertex's side
    assert math.isclose(np.hypot(*(q - u)), np.hypot(*(q - v)), rel_tol=1e-6)
    circum = np.hypot(*(q - w)) == pytest.approx(np.hypot(*(q - u)), rel=1e-6)
    if not circum:
        mid = (u + v) / 2
        assert np.hypot(*(q - mid)) == pytest.approx(k * lengths[s], rel=1e-6)
        assert (v - u)[0] * (q - u)[1] - (v - u)[1] * (q - u)[0] > 0
        # an off-centre only ever replaces a circumcentre farther from the edge
        centre = np.array(insertion_point(*p.ravel(), 0.0))
        assert np.hypot(*(q - u)) < np.hypot(*(centre - u))


def test_triangles_lying_on_one_side_of_an_edge_are_rejected():
    mesh = {"vertices": np.array([[0, 0], [1, 0], [0.5, 1], [0.5, 0.5]], float),
            "triangles": np.array([[0, 1, 2], [0, 1, 3]])}
    with pytest.raises(ValueError, match="triangles 0 and 1 overlap"):
        api.refine(mesh, device="cpu")


def test_a_segment_that_is_not_a_triangle_edge_is_rejected():
    mesh = {"vertices": np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float),
            "triangles": np.array([[0, 1, 2], [0, 2, 3]]), "segments": np.array([[1, 3]])}
    with pytest.raises(ValueError, match=r"segment 0 \(1, 3\) is not an edge"):
        api.refine(mesh, device="cpu")


@given(n=st.integers(3, 200), dx=st.integers(-3, 3), dy=st.integers(-3, 3),
       repeat=st.integers(0, 150), off=st.one_of(st.none(), st.integers(0, 199)),
       nudge=st.sampled_from([1e-9, 1.0, 2.0**-40]))
def test_all_collinear_is_exact_past_its_first_points(n, dx, dy, repeat, off, nudge):
    # integer points on one line (some repeated at the front, so the first points may
    # all be equal or collinear), with perhaps one moved off it, late or early
    k = np.arange(n, dtype=np.float64)
    k[:min(repeat, n)] = 0.0
    v = np.stack([3.0 + dx * k, -1.0 + dy * k], axis=1)
    if off is not None:
        v[off % n] += [nudge * (dy or 1), -nudge * dx]  # perpendicular (or any, if dx = dy = 0)
    pts = [(Fraction(float(a)), Fraction(float(b))) for a, b in v]
    first = next((p for p in pts if p != pts[0]), None)
    expect = first is None or all(
        (first[0] - pts[0][0]) * (p[1] - pts[0][1]) == (first[1] - pts[0][1]) * (p[0] - pts[0][0])
        for p in pts)
    assert api._all_collinear(v) == expect


def _scale_problem(v: np.ndarray) -> str | None:
    """The vertices' scale check, written plainly: per column min and max."""
    lo, hi = v.min(axis=0), v.max(axis=0)
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        return "finite"
    if max(np.abs(lo).max(), np.abs(hi).max()) > api.MAX_COORDINATE:
        return "magnitude"
    extent = float((hi - lo).max())
    return "span only" if 0 < extent < api.MIN_EXTENT else None


@given(n=st.integers(3, 150), scale=st.sampled_from([1e-300, 1e-80, 1e-76, 1.0, 1e74, 2e75,
                                                     1e150, 1e300]),
       offset=st.sampled_from([0.0, 1.0, -7e74, 3e75]),
       special=st.one_of(st.none(), st.tuples(st.integers(0, 299),
                                              st.sampled_from([np.nan, np.inf, -np.inf]))),
       seed=st.integers(0, 2**16))
@example(n=3, scale=1e-300, offset=0.0, special=None, seed=0)
@example(n=100, scale=1e-300, offset=1.0, special=None, seed=1)
def test_scale_check_agrees_with_min_and_max_per_column(n, scale, offset, special, seed):
    # the fast check (one sum of squares, the first points) against the plain one, on
    # NaN/inf anywhere, magnitudes around the bound and extents around the smallest
    v = offset + scale * np.random.default_rng(seed).random((n, 2))
    if special is not None:
        v.reshape(-1)[special[0] % (2 * n)] = special[1]
    expect = _scale_problem(v)
    if expect is None:
        api._check_scale(v, "vertices")
    else:
        with pytest.raises(ValueError, match=expect):
            api._check_scale(v, "vertices")
