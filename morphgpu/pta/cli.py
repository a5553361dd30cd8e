"""``morphgpu pta PREFIX|FILE.c... [--compare SOLUTION] [--json]`` and the demo."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from .. import backend, report
from ..whole_file import refuse_input_as_output
from . import api
from .constraints import ADDRESS_OF, COPY, LOAD, STORE, from_lists, lsg_paths


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "pta", help="Andersen points-to analysis of LSG constraint files or C sources"
    )
    p.add_argument("inputs", nargs="+",
                   help="an LSG prefix (dir/perl), a constraint file, or C files")
    report.add_device_and_json(p)
    p.add_argument("--compare", type=Path,
                   help="a _correct_soln file to compare with (default: the prefix's own)")
    p.add_argument("--write", type=Path,
                   help="write the solution in _correct_soln form (one line per distinct "
                        "points-to set; gzipped if the name ends in .gz)")
    p.add_argument("--method", choices=api.METHODS, default="auto",
                   help="solver: rounds, dense (small programs) or auto (default)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with report.Progress("pta", enabled=not args.json) as progress:
        return _analyse(args, progress)


def _load(source: Any) -> Any:
    try:
        return api.load(source)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == "pycparser":
            raise ValueError(
                "C sources need pycparser, which is the 'c' extra: "
                "pip install 'morphgpu[c]' (or pip install pycparser)") from exc
        raise
    except UnicodeDecodeError as exc:
        # cpp's output is decoded as UTF-8 by subprocess: a C file that is not UTF-8 gave
        # "'utf-8' codec can't decode byte 0xff in position 124: ...", naming no file (and
        # a position in the preprocessed text).
        inputs = [source] if isinstance(source, (str, Path)) else list(source)
        raise ValueError(f"{_not_utf8(inputs) or ', '.join(map(str, inputs))}: not UTF-8 "
                         f"text ({exc.reason}, byte {exc.object[exc.start:exc.end]!r})"
                         ) from exc
    except ValueError as exc:
        # cpp's diagnostics run over several lines (the source line, carets, "compilation
        # terminated."): the command's error is one line, the first diagnostic.
        head, *rest = str(exc).split("\n")
        if not rest:
            raise
        first = next((line.strip() for line in rest if line.strip()), "")
        raise ValueError(f"{head} {first}".strip()) from exc


def _not_utf8(paths: list[Any]) -> str | None:
    """The first of ``paths`` whose bytes are not UTF-8, or None."""
    for path in paths:
        try:
            Path(path).read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            return str(path)
        except OSError:
            continue
    return None


def _analyse(args: argparse.Namespace, progress: report.Progress) -> int:
    t0 = time.perf_counter()
    source = args.inputs if len(args.inputs) > 1 else args.inputs[0]
    if args.write:
        # An LSG prefix stands for its files: each of them is an input.
        read = [f for i in args.inputs
                for f in [i, *(lsg_paths(i).values() if Path(i).name else ())]]
        refuse_input_as_output([args.write], read, "--write")
    progress.stage(f"loading {', '.join(args.inputs)}")
    cs = _load(source)
    t_load = time.perf_counter() - t0
    progress.stage(f"solving {cs.n_vars} variables, {len(cs.kind)} constraints")

    def on_round(r: dict[str, int]) -> None:
        facts = f"{r['facts']} points-to facts, " if "facts" in r else ""
        progress(f"round {r['round']}: {facts}{r['copy_edges']} copy edges")

    sol = api.solve(cs, device=args.device, method=args.method,
                    progress=on_round if progress.enabled else None)
    out: dict[str, Any] = {
        "input": cs.name, "variables": cs.n_vars, "constraints": cs.counts(),
        "device": backend.device_name(sol.stats["device"]), "load_seconds": t_load,
        "points_to_facts": sol.n_facts, "stats": sol.stats,
    }
    compare = args.compare
    if compare is None and len(args.inputs) == 1:
        compare = lsg_paths(args.inputs[0]).get("solution")
    ok = True
    if compare is not None:
        progress.stage(f"comparing with {compare}")
        diffs = sol.differences_from_file(compare)
        out["compare"] = {"reference": str(compare), "identical": not diffs,
                          "differences": diffs}
        ok = not diffs
    if cs.var_names is not None and not args.json:
        out["points_to"] = {
            cs.var_names[v]: [cs.var_names[o] for o in sol.points_to(v)]
            for v in range(cs.n_vars)
            if not cs.var_names[v].startswith("<") and "#" not in cs.var_names[v]
            and sol.points_to(v).size
        }
    if args.write:
        sol.write(args.write)
        out["written"] = str(args.write)
    progress.close()
    report.emit(out, as_json=args.json, title=f"pta {cs.name}")
    return 0 if ok else 1


def _demo_constraints(seed: int = 7, n: int = 2000) -> Any:
    """A random program: address-of, copy, load and store constraints over n variables."""
    rng = np.random.default_rng(seed)
    rows = []
    mix = ((ADDRESS_OF, n // 4), (COPY, n * 3 // 4), (LOAD, n // 12), (STORE, n // 12))
    for kind, count in mix:
        src = rng.integers(2, n, count)
        dst = rng.integers(2, n, count)
        rows += [(kind, int(s), int(d)) for s, d in zip(src, dst)]
    return from_lists(n, rows, name=f"random-{n}")


def _naive_solution(cs: Any) -> list[set[int]]:
    """An independent checker: a plain worklist over Python sets, straight from the rules."""
    pts: list[set[int]] = [set() for _ in range(cs.n_vars)]
    succ: list[set[int]] = [set() for _ in range(cs.n_vars)]
    loads: list[list[int]] = [[] for _ in range(cs.n_vars)]
    stores: list[list[int]] = [[] for _ in range(cs.n_vars)]
    for k, s, d in zip(cs.kind.tolist(), cs.src.tolist(), cs.dst.tolist()):
        if k == ADDRESS_OF:
            pts[d].add(s)
        elif k == COPY:
            succ[s].add(d)
        elif k == LOAD:
            loads[s].append(d)
        elif k == STORE:
            stores[d].append(s)
    work = list(range(cs.n_vars))
    while work:
        v = work.pop()
        for o in list(pts[v]):
            for d in loads[v]:
                if d not in succ[o]:
                    succ[o].add(d)
                    work.append(o)
            if o != 1:
                for s in stores[v]:
                    if o not in succ[s]:
                        succ[s].add(o)
                        work.append(s)
        for d in succ[v]:
            if not pts[v] <= pts[d]:
                pts[d] |= pts[v]
                work.append(d)
    return pts


def demo(device: str) -> dict[str, Any]:
    cs = _demo_constraints()
    t0 = time.perf_counter()
    sol = api.solve(cs, device=device)
    seconds = time.perf_counter() - t0
    want = _naive_solution(cs)
    valid = all(set(sol.points_to(v).tolist()) == want[v] for v in range(cs.n_vars))
    return {
        "algorithm": "pta", "input": cs.name, "valid": valid, "seconds": seconds,
        "summary": f"{sol.n_facts} points-to facts, {sol.stats['rounds']} rounds",
    }
