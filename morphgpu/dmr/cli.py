"""``morphgpu refine``: Triangle-style quality refinement of a .poly/.node file, and the demo."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from .. import report
from ..whole_file import refuse_input_as_output
from . import api, switches, triangle_io
from .check import check_mesh


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "refine", help="Delaunay refinement of a .poly/.node mesh (Triangle's -q/-a)"
    )
    p.add_argument("file", help="FILE.poly, FILE.node (with FILE.ele if present) or FILE.ele")
    # No default here: run() tells an explicit --min-angle beside --switches from none.
    p.add_argument("--min-angle", type=float, default=None, help="degrees (default 30)")
    p.add_argument("--max-area", type=float, default=None, help="largest triangle area")
    p.add_argument("-s", "--switches", metavar="SWITCHES",
                   help="Triangle's switch string instead of --min-angle/--max-area, "
                        "e.g. pq30a0.01 or rpq30a (see morphgpu.dmr.switches)")
    report.add_device_and_json(p)
    p.add_argument("--output", type=report.output_path,
                   help="write STEM.node/.ele/.poly/.neigh, numbered from the "
                   "input's first index (0 or 1), as Triangle does")
    p.add_argument("--plot", type=report.output_path,
                   help="write a picture of the refined mesh (PNG)")
    p.add_argument("--check", action="store_true", help="verify the output independently")
    p.set_defaults(run=run)


DEFAULT_MIN_ANGLE = 30.0


# The files triangle_io.write may write for a stem.
MESH_SUFFIXES = (".node", ".ele", ".poly", ".neigh", ".edge")


def run(args: argparse.Namespace) -> int:
    if args.switches is not None and (args.min_angle is not None or args.max_area is not None):
        # The switches were run and --min-angle/--max-area silently ignored: `--switches pq
        # --min-angle 20` refined nothing by angle and exited 0.
        raise ValueError("--switches replaces --min-angle and --max-area (use its q and a "
                         "switches): give one or the other")
    if args.min_angle is None:
        args.min_angle = DEFAULT_MIN_ANGLE
    if args.output:
        # The mesh files written, against the input and its siblings of Triangle's set.
        written = [Path(args.output).with_suffix(s) for s in MESH_SUFFIXES]
        read = [Path(args.file), *(Path(args.file).with_suffix(s) for s in MESH_SUFFIXES),
                Path(args.file).with_suffix(".area")]
        refuse_input_as_output(written, read, "--output")
    source = triangle_io.read(args.file)
    base = triangle_io.first_index(args.file)
    progress = report.Progress("refine", enabled=not args.json)

    def on_round(r: dict) -> None:
        progress(f"round {r['round']}: {r['bad']} bad, {r['refined']} refined so far, "
                 f"{r['triangles']} triangles")

    with progress:  # erased on a failure too: the error line was glued onto the bar's
        if args.switches is not None:
            t0 = time.perf_counter()
            out = switches.triangulate(source, args.switches, device=args.device)
            stats = {"switches": args.switches, "total_seconds": time.perf_counter() - t0,
                     "triangles_out": len(out["triangles"])}
        else:
            out, stats = api.refine_with_stats(
                source, min_angle=args.min_angle, max_area=args.max_area, device=args.device,
                progress=on_round,
            )
    result: dict[str, Any] = {"input": str(args.file), **stats}
    if source.get("triangle_max_area") is not None:
        result["area_limits"] = f"per triangle, from {Path(args.file).with_suffix('.area')}"
    if args.check:
        angle, area = args.min_angle, args.max_area
        if args.switches is not None:  # check what the switches asked for
            sw = switches.parse_switches(args.switches)
            angle, area = sw.min_angle, sw.max_area
        _, triangulated = api.prepare(source)
        verdict = check_mesh(out, triangulated, min_angle=angle, max_area=area)
        result["valid"] = verdict["ok"]
        result["problems"] = verdict["problems"][:5]
    # The picture first, then the mesh files: a plot that cannot be made (a missing folder,
    # a suffix matplotlib does not know, no matplotlib) left the .node/.ele/.poly/.neigh
    # written behind a failed command. A mesh that cannot be written takes the plot away.
    if args.plot:
        result["plot"] = str(api_plot(out, args.plot))
    if args.output:
        try:
            written = triangle_io.write(out, args.output, first=base)
        except BaseException:
            if args.plot:
                Path(args.plot).unlink(missing_ok=True)
            raise
        result["written"] = [str(p) for p in written]
    report.emit(result, as_json=args.json, title="morphgpu refine")
    return 0 if result.get("valid", True) else 1


def api_plot(mesh: dict, path: str) -> Path:
    from .plot import plot_mesh  # noqa: PLC0415

    return plot_mesh(mesh, path)


def demo(device: str) -> dict:
    """Refine a random mesh of 500 points at 30° and check it independently."""
    mesh = api.random_mesh(500, seed=7)
    t0 = time.perf_counter()
    out, stats = api.refine_with_stats(mesh, min_angle=30.0, device=device)
    seconds = time.perf_counter() - t0
    verdict = check_mesh(out, mesh, min_angle=30.0)
    return {
        "algorithm": "dmr",
        "input": f"random mesh, {len(mesh['triangles'])} triangles, min angle 30°",
        "valid": verdict["ok"],
        "seconds": seconds,
        "summary": f"{stats['triangles_out']} triangles in {stats['rounds']} rounds, "
        f"min angle {verdict['min_angle']:.2f}°",
        "problems": verdict["problems"][:3],
    }
