"""End to end on the GPU, before and after issue 19's host-side changes, in one process.

    python3 scripts/dmr_end_to_end_probe.py [--size 2000000] [--inputs uniform holes]
        [--runs 3] [--json PATH]

Per input (the benchmark's generators and seed, ``--size`` triangles in): the steady end
to end time of ``refine_with_stats(device="gpu")`` (best of ``--runs``) with its parts, then the
same with the earlier host-side paths put back for the call (``old_paths``): pageable
copies both ways (CuPy's ``get``/``asarray``), the big arrays' value checks on the host,
and GPU-stuck triangles finished with the whole mesh moved to the host, the output then
built there. Then the copies alone: the refined mesh's output arrays through
``morphgpu.transfer`` against ``get``, and the input's arrays against ``asarray``; and
the loop alone at deferral depths 2 and 3 (rounds, loop seconds, triangles out).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import numpy as np  # noqa: E402

from morphgpu import backend, transfer  # noqa: E402
from morphgpu.dmr import api, cpu, gpu  # noqa: E402
from morphgpu.dmr.mesh import Mesh, to_triangle_dict  # noqa: E402


@contextlib.contextmanager
def old_paths():
    """The host-side paths as they were before (session 10's tree), for this block."""
    cp = backend.cupy_module()
    saved = (transfer.to_host_many, transfer.to_device_many, api._validated,
             gpu.finish_stuck, gpu.DeviceMesh.on_device, cpu.GrowableMesh)
    finished: dict[str, Mesh] = {}

    class Grow102(cpu.GrowableMesh):  # the old finish grew the whole mesh by 2%
        def __init__(self, mesh, growth=1.5):
            super().__init__(mesh, growth=1.02)

    def whole_mesh_finish(dm, stuck, segment_markers, min_angle, max_area, *, n_input,
                          min_split, hops=0):
        nt, nv = dm.nt, dm.nv
        m = Mesh(dm.x[:nv].get(), dm.y[:nv].get(), dm.tri[: 3 * nt].get().reshape(nt, 3),
                 dm.nbr[: 3 * nt].get().reshape(nt, 3), dm.seg[: 3 * nt].get().reshape(nt, 3),
                 dm.vmark[:nv].get().astype(np.int64), segment_markers, np.zeros((0, 2)),
                 {"n_input": n_input, "vertex_apex": dm.apex[:nv].get()})
        out, st = cpu.finish_cpu(m, min_angle, max_area, stuck, min_split=min_split)
        finished["mesh"] = out
        return {"refinements": st["refinements"], "windows": 0, "window_triangles": nt,
                "stuck": st["stuck"]}

    def on_device(self, template):
        m = finished.pop("mesh", None)
        if m is None:
            return saved[4](self, template)
        return replace(m, segment_markers=template.segment_markers, holes=template.holes,
                       extra={**template.extra, "vertex_apex": m.extra["vertex_apex"]})

    transfer.to_host_many = lambda arrays: [
        a.get() if backend.is_cupy_array(a) else np.asarray(a) for a in arrays]
    transfer.to_device_many = lambda arrays: [cp.asarray(a) for a in arrays]
    api._validated = lambda mesh, index_dtype=np.int64, values=True: saved[2](
        mesh, index_dtype, values=True)
    gpu.finish_stuck = whole_mesh_finish
    gpu.DeviceMesh.on_device = on_device
    cpu.GrowableMesh = Grow102
    try:
        yield
    finally:
        (transfer.to_host_many, transfer.to_device_many, api._validated, gpu.finish_stuck,
         gpu.DeviceMesh.on_device, cpu.GrowableMesh) = saved


def steady(mesh: dict, runs: int = 3) -> tuple[float, dict]:
    best, stats = float("inf"), {}
    for _ in range(runs):
        t0 = time.perf_counter()
        out, st = api.refine_with_stats(mesh, min_angle=30.0, device="gpu")
        took = time.perf_counter() - t0
        if took < best:
            best, stats = took, st
        del out
    return best, stats


def parts(st: dict) -> dict:
    keys = ("prepare_seconds", "gpu_loop_seconds", "gpu_stuck", "finish_seconds",
            "finish_windows", "finish_window_triangles", "cpu_finish_refinements",
            "output_seconds", "triangles_out")
    out = {k: st[k] for k in keys if k in st}
    out.update({f"prepare_{k}": v for k, v in st.get("prepare_parts", {}).items()})
    return out


def _prepared(mesh: dict):
    ours, _ = api.prepare(mesh, "gpu")
    ours = api._morton_layout(ours)
    ours.extra["n_input"] = ours.n_vertices
    return ours


def depths(mesh: dict, runs: int = 3) -> dict:
    """The loop alone at deferral depths 2 and 3, interleaved, best of ``runs``."""
    ours, best = _prepared(mesh), {}
    for _ in range(runs):
        for depth in (2, 3):
            _, st = gpu.refine_gpu(ours, 30.0, None, defer_depth=depth)
            row = (st["gpu_loop_seconds"], st["rounds"], st["refinements"])
            best[depth] = min(best.get(depth, row), row)
    return {f"depth{d}": {"loop_s": r[0], "rounds": r[1], "refinements": r[2]}
            for d, r in best.items()}


def copies(mesh: dict, runs: int = 5) -> dict:
    """The output's and the input's copies alone: ring against CuPy's, interleaved."""
    cp = backend.cupy_module()
    refined, _ = gpu.refine_gpu(_prepared(mesh), 30.0, None)
    arrays = [a for a in to_triangle_dict(refined).values() if backend.is_cupy_array(a)]
    inputs = [np.asarray(mesh[k]) for k in ("vertices", "triangles", "vertex_markers")
              if k in mesh]
    times = {"out_get": [], "out_ring": [], "in_asarray": [], "in_ring": []}
    for _ in range(runs):
        for name, fn in (("out_get", lambda: [a.get() for a in arrays]),
                         ("out_ring", lambda: transfer.to_host_many(arrays)),
                         ("in_asarray", lambda: [cp.asarray(a) for a in inputs]),
                         ("in_ring", lambda: transfer.to_device_many(inputs))):
            cp.cuda.get_current_stream().synchronize()
            t0 = time.perf_counter()
            got = fn()
            cp.cuda.get_current_stream().synchronize()
            times[name].append(time.perf_counter() - t0)
            del got
    check = transfer.to_host_many(arrays)
    same = all(np.array_equal(a.get(), b) for a, b in zip(arrays, check))
    return {"out_mb": sum(a.nbytes for a in arrays) / 2**20,
            "in_mb": sum(a.nbytes for a in inputs) / 2**20, "ring_equal": same,
            **{k: min(v) for k, v in times.items()}}


def main() -> None:
    import dmr as bench  # benchmarks/dmr.py: the inputs

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=2_000_000)
    p.add_argument("--inputs", nargs="+", default=["uniform", "clustered", "holes"],
                   choices=bench.KINDS)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--json")
    args = p.parse_args()
    print(f"device: {backend.gpu_properties(0)['name']}", flush=True)
    api.refine(api.random_mesh(2000, seed=1), device="gpu")  # the package's first use
    rows = []
    for kind in args.inputs:
        mesh = bench.make_input(kind, args.size)
        new_s, new = steady(mesh, args.runs)
        with old_paths():
            old_s, old = steady(mesh, args.runs)
        new_again_s, _ = steady(mesh, args.runs)  # the order's share of the difference
        row = {"input": kind, "size": args.size, "new_s": new_s, "old_s": old_s,
               "new_again_s": new_again_s, "gain": old_s / min(new_s, new_again_s),
               "new": parts(new), "old": parts(old)}
        if kind != "holes":
            row["copies"] = copies(mesh)
        row["depths"] = depths(mesh)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
