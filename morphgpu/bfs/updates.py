"""``morphgpu dyn GRAPH UPDATES --source S``: apply timestamped batches of edge insertions
and deletions to a graph and report each batch and the BFS after it.

The updates file, one change per line (``#`` starts a comment)::

    [TIME] + U V [WEIGHT]     insert the edge U -> V (undirected graphs: {U, V})
    [TIME] - U V              delete it

Lines that carry a TIME (any token without spaces, e.g. a number) form one batch per run
of equal TIMEs; in a file without TIMEs a blank line (not a comment line) ends a batch.
Inside a batch the changes apply in file order (each run of insertions, or of deletions,
as one call). Ids are 0-based, or ``--base 1``. After each batch the search from the
source is repaired from the inserted edges when the batch only inserted
(``bfs(..., previous=)``), else run afresh; ``--fresh`` always searches afresh. The file
may be gzip, xz or bzip2 compressed.
"""

from __future__ import annotations

import argparse
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import arguments, backend, compressed, graph_formats, report
from ..dynamic_graph import DynamicGraph
from .api import bfs


class UpdatesFormatError(ValueError):
    """A malformed updates file; the message names the file and line."""


@dataclass
class Run:
    """Consecutive changes of one sign in one batch."""

    sign: str
    src: list[int] = field(default_factory=list)
    dst: list[int] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)


@dataclass
class Batch:
    time: str
    line: int  # where it starts
    runs: list[Run] = field(default_factory=list)

    def add(self, sign: str, u: int, v: int, w: float | None) -> None:
        if not self.runs or self.runs[-1].sign != sign:
            self.runs.append(Run(sign))
        run = self.runs[-1]
        run.src.append(u)
        run.dst.append(v)
        if w is not None:
            run.weights.append(w)


# Tokens are split at ASCII blanks only, and ids and weights are ASCII numbers: str.split()
# also split at no-break spaces, and int()/float() read '1_0' as 10 and other scripts'
# digits ('\u0661' as 1), so a mistyped line was read as another edge.
_BLANKS = re.compile(r"[ \t\f\v]+")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_REAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?(nan|inf|infinity)",
                   re.IGNORECASE)
_ID_LIMIT = 2**63 - 1  # ids become int64 batches; past it the batch raised OverflowError


def read_updates(path: str | Path, *, base: int = 0, n_vertices: int | None = None
                 ) -> list[Batch]:
    """The batches of an updates file (see the module's doc); gzip, xz or bzip2 files are
    read decompressed, and a leading UTF-8 byte order mark is read past."""
    # Checked before the file is read: base=0.5 gave the float ids 0.5 and 1.5 for
    # '+ 1 2' (truncated to int64 later), base=True was 1, n_vertices=2.5 a bound of 2.5.
    wording = "{name} must be a non-negative integer, got {value!r}"
    base = arguments.integer(base, "base", low=0, message=wording)
    if n_vertices is not None:
        n_vertices = arguments.integer(n_vertices, "n_vertices", low=0, message=wording)
    path = Path(path)
    raw = compressed.without_bom(compressed.decompressed(
        compressed.read_bounded(path, UpdatesFormatError), path, UpdatesFormatError))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise UpdatesFormatError(f"{path}:{line}: not a text file (byte {exc.start} is not "
                                 "UTF-8 text)") from None
    # Lines end at LF, CRLF or CR only: str.splitlines also ended them at form feeds,
    # vertical tabs, \x1c-\x1e, \x85 and \u2028, shifting every later line number.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    limit = _ID_LIMIT if n_vertices is None else n_vertices
    batches: list[Batch] = []
    timed: bool | None = None
    open_batch = False
    for number, raw_line in enumerate(text.split("\n"), start=1):
        line = raw_line.split("#", 1)[0].strip(" \t\f\v")
        where = f"{path}:{number}"
        if not line:
            # Only a blank line ends a batch: one holding just a comment (a change commented
            # out, '# + 5 6') split its batch in two.
            if "#" not in raw_line:
                open_batch = False
            continue
        tokens = _BLANKS.split(line)
        has_time = tokens[0] not in ("+", "-")
        if timed is None:
            timed = has_time
        elif timed != has_time:
            raise UpdatesFormatError(f"{where}: every line needs a time, or none does "
                                     f"(got {raw_line.strip()!r})")
        stamp = tokens[0] if has_time else ""
        change = tokens[1:] if has_time else tokens
        if len(change) not in (3, 4) or change[0] not in ("+", "-"):
            raise UpdatesFormatError(f"{where}: expected '[TIME] + U V [WEIGHT]' or "
                                     f"'[TIME] - U V', got {raw_line.strip()!r}")
        sign = change[0]
        if not (_INTEGER.fullmatch(change[1]) and _INTEGER.fullmatch(change[2])):
            raise UpdatesFormatError(f"{where}: vertex ids must be integers, got "
                                     f"{change[1]!r} {change[2]!r}")
        ids = []
        for name, token in (("U", change[1]), ("V", change[2])):
            # More than 20 digits is past every limit (int() refuses 4300 and more).
            x = int(token) - base if len(token.lstrip("+-0")) <= 20 else None
            if x is None or x < 0 or x >= limit:
                shown = token if len(token) <= 40 else token[:40] + "..."
                raise UpdatesFormatError(f"{where}: {name} = {shown} is outside "
                                         f"[{base}, {base + limit})")
            ids.append(x)
        u, v = ids
        w = None
        if len(change) == 4:
            if sign == "-":
                raise UpdatesFormatError(f"{where}: a deletion takes no weight")
            if not _REAL.fullmatch(change[3]):
                raise UpdatesFormatError(f"{where}: weight {change[3]!r} is not a number")
            w = float(change[3])
            if not np.isfinite(w):
                raise UpdatesFormatError(f"{where}: weight {change[3]!r} is not finite")
        new = not batches or (batches[-1].time != stamp if timed else not open_batch)
        if new:
            batches.append(Batch(stamp, number))
        runs = batches[-1].runs
        if runs and runs[-1].sign == sign == "+" and (w is not None) != bool(runs[-1].weights):
            # Named here, at the first line that breaks the run: the check after the loop
            # named only the batch's first line, which may be many lines before.
            raise UpdatesFormatError(f"{where}: the batch at line {batches[-1].line} gives "
                                     "weights for some insertions and not others (this "
                                     f"line {'has one' if w is not None else 'has none'})")
        batches[-1].add(sign, u, v, w)
        open_batch = True
    return batches


def run_updates(dg: DynamicGraph, batches: list[Batch], source: int, *, fresh: bool = False,
                variant: str = "auto") -> list[dict[str, Any]]:
    """Apply each batch, then search from ``source``; one report row per batch (the first
    row, batch None, is the search before any change)."""
    # Every id is checked before the first batch: batches read without n_vertices (or for
    # another graph) failed at the first bad one, after the batches before it had changed
    # the graph, with an error naming neither the file's line nor the batch.
    for batch in batches:
        for run in batch.runs:
            for name, ids in (("U", run.src), ("V", run.dst)):
                bad = [x for x in ids if not 0 <= x < dg.n_vertices]
                if bad:
                    raise UpdatesFormatError(
                        f"the batch at line {batch.line}"
                        f"{f' (time {batch.time})' if batch.time else ''}: {name} = {bad[0]} "
                        f"is outside [0, {dg.n_vertices}) (the graph has {dg.n_vertices} "
                        "vertices; ids 0-based); no batch was applied")
    xp = dg.xp
    rows = []
    t0 = time.perf_counter()
    result = bfs(dg, source, variant=variant)
    backend.synchronize()
    rows.append(_row(None, result, {}, 0.0, time.perf_counter() - t0, dg))
    for batch in batches:
        counts = {"inserted": 0, "duplicates": 0, "deleted": 0, "absent": 0}
        t0 = time.perf_counter()
        for run in batch.runs:
            src = xp.asarray(run.src, dtype=np.int64)
            dst = xp.asarray(run.dst, dtype=np.int64)
            if run.sign == "+":
                w = xp.asarray(run.weights) if run.weights and dg.weighted else None
                r = dg.insert_edges(src, dst, w)
                counts["inserted"] += r.applied
                counts["duplicates"] += r.skipped
            else:
                r = dg.delete_edges(src, dst)
                counts["deleted"] += r.applied
                counts["absent"] += r.skipped
        backend.synchronize()
        update_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        result = bfs(dg, source, variant=variant, previous=None if fresh else result)
        backend.synchronize()
        rows.append(_row(batch, result, counts, update_s, time.perf_counter() - t0, dg))
    return rows


def _row(batch: Batch | None, result: Any, counts: dict[str, int], update_s: float,
         bfs_s: float, dg: DynamicGraph) -> dict[str, Any]:
    dist = backend.to_host(result.distances)
    return {
        "batch": None if batch is None else (batch.time or f"line {batch.line}"),
        **counts,
        "edges": dg.n_edges,
        "update_ms": 1e3 * update_s,
        "reached": int((dist >= 0).sum()),
        "levels": result.n_levels,
        "search": "incremental" if result.incremental else "fresh",
        "bfs_ms": 1e3 * bfs_s,
    }


def _run(args: argparse.Namespace) -> int:
    graph = graph_formats.read(args.graph, args.format)
    side = backend.resolve_device(args.device, who="morphgpu dyn")
    batches = read_updates(args.updates, base=args.base, n_vertices=graph.n_vertices)
    dg = DynamicGraph.from_csr(graph, device=side)
    if not 0 <= args.source < dg.n_vertices:
        raise ValueError(f"--source {args.source} is outside [0, {dg.n_vertices})")
    rows = run_updates(dg, batches, args.source, fresh=args.fresh, variant=args.variant)
    if args.json:
        print(report.to_json({"graph": str(args.graph), "updates": str(args.updates),
                              "device": backend.device_name(side), "batches": rows}))
        return 0
    print(f"morphgpu dyn: {args.graph} ({dg.n_vertices} vertices, "
          f"{'directed' if dg.directed else 'undirected'}), {len(batches)} batches from "
          f"{args.updates}, BFS from {args.source} on {backend.device_name(side)}")
    header = ("batch", "inserted", "duplicates", "deleted", "absent", "edges", "update_ms",
              "reached", "levels", "search", "bfs_ms")
    print("  ".join(f"{h:>10}" for h in header))
    for row in rows:
        cells = [row.get(h, "") for h in header]
        print("  ".join(f"{c:>10.3f}" if isinstance(c, float) else f"{str(c):>10}"
                        for c in cells))
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "dyn", help="apply batches of edge changes to a graph, BFS after each",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("graph", help="graph file (any format morphgpu.graph_io reads, METIS "
                   "or SNAP)")
    graph_formats.add_format_option(p)
    p.add_argument("updates", help="updates file: '[TIME] + U V [WEIGHT]' / '[TIME] - U V'")
    p.add_argument("--source", type=int, required=True, help="BFS source (0-based)")
    p.add_argument("--base", type=int, default=0, choices=[0, 1],
                   help="the updates file's first vertex id (default 0)")
    p.add_argument("--fresh", action="store_true",
                   help="search afresh after every batch (no incremental repair)")
    p.add_argument("--variant", default="auto", help="BFS variant on the dynamic graph")
    report.add_device_and_json(p)
    p.set_defaults(run=_run)
