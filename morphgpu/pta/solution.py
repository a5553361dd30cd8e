"""A points-to solution: queries, sizes, the ``_correct_soln`` format, and comparison.

Internally one dense bit row per solver node (``rows``, uint64, bit i = ``objects[i]``)
and the row of every variable (``row_of_var``); variables merged offline or by cycle
collapsing share a row, which is also how the writer groups them.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..csr import check_declared_size
from .constraints import ConstraintFormatError, _open_text


def _popcount_rows(rows: np.ndarray, chunk: int = 1 << 14) -> np.ndarray:
    out = np.empty(rows.shape[0], dtype=np.int64)
    for a in range(0, rows.shape[0], chunk):
        out[a:a + chunk] = np.bitwise_count(rows[a:a + chunk]).sum(axis=1, dtype=np.int64)
    return out


@dataclass
class Solution:
    rows: np.ndarray  # (n_rows, W) uint64
    row_of_var: np.ndarray  # (n_vars,) int64
    objects: np.ndarray  # (n_bits,) int64 sorted
    stats: dict[str, Any] = field(default_factory=dict)
    name: str = "solution"

    @property
    def n_vars(self) -> int:
        return int(self.row_of_var.size)

    def points_to(self, v: int) -> np.ndarray:
        """Sorted object ids variable ``v`` may point to."""
        if not 0 <= int(v) < self.n_vars:
            raise ValueError(f"points_to: variable {v} outside 0..{self.n_vars - 1}")
        row = self.rows[self.row_of_var[int(v)]][None, :]
        bits = np.flatnonzero(np.unpackbits(row.view(np.uint8), bitorder="little"))
        return self.objects[bits]

    def may_alias(self, a: int, b: int) -> bool:
        """True when ``a`` and ``b`` may point to a common object."""
        for v in (a, b):
            if not 0 <= int(v) < self.n_vars:
                raise ValueError(f"may_alias: variable {v} outside 0..{self.n_vars - 1}")
        ra = self.rows[self.row_of_var[int(a)]]
        rb = self.rows[self.row_of_var[int(b)]]
        return bool(np.any(ra & rb))

    def sizes(self) -> np.ndarray:
        """Points-to set size of every variable."""
        return _popcount_rows(self.rows)[self.row_of_var]

    @property
    def n_facts(self) -> int:
        """Total points-to facts, summed over every variable."""
        return int(self.sizes().sum())

    def groups(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(variables, objects) for each distinct row used by some variable."""
        order = np.argsort(self.row_of_var, kind="stable")
        r = self.row_of_var[order]
        starts = np.flatnonzero(np.r_[True, r[1:] != r[:-1], True])
        for a, b in zip(starts[:-1], starts[1:]):
            yield order[a:b], self.points_to(int(order[a]))

    def write(self, path: str | Path) -> None:
        """Write the ``_correct_soln`` text form (gzipped when the name ends in .gz)."""
        path = Path(path)
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "wt") as fh:
            fh.write(f"{self.n_vars}\n")
            for vars_, objs in self.groups():
                fh.write(f"[{', '.join(map(str, vars_))}] => [{', '.join(map(str, objs))}]\n")

    def equals(self, other: Solution) -> bool:
        return not self.differences_from(other, limit=1)

    def differences_from(self, other: Solution, limit: int = 10) -> list[str]:
        """Like :meth:`differences`, against another solution (row pairs, no unpacking)."""
        if other.n_vars != self.n_vars:
            return [f"numVars differ: {self.n_vars} here, {other.n_vars} there"]
        if not np.array_equal(self.objects, other.objects):
            return self.differences(other.to_reference(), limit)
        bad_vars = _differing_vars(self.rows, self.row_of_var, other.rows, other.row_of_var)
        if not bad_vars.size:
            return []
        out = [
            f"variable {v}: {self.points_to(int(v)).size} objects here, "
            f"{other.points_to(int(v)).size} there" for v in bad_vars[:limit]
        ]
        if bad_vars.size > limit:
            out.append(f"... {bad_vars.size - limit} more variables differ")
        return out

    def to_reference(self) -> Reference:
        """This solution in the reference's grouped form (for comparing two solutions)."""
        used, var_group = np.unique(self.row_of_var, return_inverse=True)
        r, b = _set_bits(self.rows[used])
        return Reference(
            n_vars=self.n_vars,
            var_group=var_group.astype(np.int64),
            fact_group=r,
            fact_object=self.objects[b],
            n_groups=int(used.size),
        )

    def differences(self, ref: Reference, limit: int = 10) -> list[str]:
        """Up to ``limit`` variables whose set differs from ``ref`` (empty: identical)."""
        if ref.n_vars != self.n_vars:
            return [f"numVars differ: {self.n_vars} here, {ref.n_vars} in the reference"]
        w = self.rows.shape[1]
        bit = np.searchsorted(self.objects, ref.fact_object)
        bit = np.minimum(bit, max(self.objects.size - 1, 0))
        known = (self.objects.size > 0) & (self.objects[bit] == ref.fact_object) \
            if self.objects.size else np.zeros(ref.fact_object.size, dtype=bool)
        out: list[str] = []
        unknown_groups = np.unique(ref.fact_group[~known])
        ref_rows = np.zeros((ref.n_groups, w), dtype=np.uint64)
        g, bt = ref.fact_group[known], bit[known]
        one = np.left_shift(np.uint64(1), (bt & 63).astype(np.uint64))
        np.bitwise_or.at(ref_rows, (g, bt >> 6), one)
        bad = _differing_vars(self.rows, self.row_of_var, ref_rows, ref.var_group)
        bad_unknown = np.flatnonzero(np.isin(ref.var_group, unknown_groups))
        bad = np.union1d(bad, bad_unknown)
        for v in bad[:limit]:
            mine = self.points_to(int(v))
            want = ref.points_to(int(v))
            out.append(
                f"variable {v}: {mine.size} objects here, {want.size} in the reference; "
                f"missing {np.setdiff1d(want, mine)[:5].tolist()}, "
                f"extra {np.setdiff1d(mine, want)[:5].tolist()}"
            )
        if bad.size > limit:
            out.append(f"... {bad.size - limit} more variables differ")
        return out


def _differing_vars(rows_a: np.ndarray, row_of_var_a: np.ndarray, rows_b: np.ndarray,
                    row_of_var_b: np.ndarray, step: int = 1 << 14) -> np.ndarray:
    """Variables whose row in ``a`` differs from their row in ``b``.

    Compares each distinct (row in a, row in b) pair once, in chunks, instead of expanding
    both sides to one row per variable (n_vars x words: many GiB on the large programs).
    """
    base = rows_b.shape[0] + 1
    key = row_of_var_a.astype(np.int64) * base + row_of_var_b
    pair = np.unique(key)
    mine, theirs = pair // base, pair % base
    bad_pairs = [
        pair[a:a + step][np.any(rows_a[mine[a:a + step]] != rows_b[theirs[a:a + step]], axis=1)]
        for a in range(0, pair.size, step)
    ]
    bad = np.concatenate(bad_pairs) if bad_pairs else pair[:0]
    return np.flatnonzero(np.isin(key, bad)) if bad.size else bad


def _set_bits(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    bits = np.unpackbits(rows.view(np.uint8), axis=1, bitorder="little")
    r, b = np.nonzero(bits)
    return r.astype(np.int64), b.astype(np.int64)


@dataclass
class Reference:
    """A solution read from a ``_correct_soln`` file: groups of variables and their objects."""

    n_vars: int
    var_group: np.ndarray  # (n_vars,) group of each variable
    fact_group: np.ndarray  # one entry per (group, object) fact
    fact_object: np.ndarray
    n_groups: int

    def points_to(self, v: int) -> np.ndarray:
        return np.sort(self.fact_object[self.fact_group == self.var_group[v]])


def read_solution(path: str | Path) -> Reference:
    """Parse a ``_correct_soln`` file; every variable must be listed exactly once, and every
    object must be a variable id (below numVars). Errors name the file and the line."""
    where = str(path)
    text = _open_text(Path(path))
    n_vars = None
    var_ids, var_grp, objs, obj_grp = [], [], [], []
    line_of_group: list[int] = []
    g = 0
    for lineno, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if n_vars is None:
            if not _UNSIGNED.fullmatch(s):
                raise ConstraintFormatError(
                    f"{where}:{lineno}: expected numVars (a positive integer), got {s[:60]!r}"
                )
            n_vars = int(s)
            if n_vars < 1:
                raise ConstraintFormatError(f"{where}:{lineno}: numVars must be positive")
            check_declared_size(f"{where}:{lineno}", f"numVars={n_vars}", 24 * n_vars,
                                ConstraintFormatError)
            continue
        left, sep, right = s.partition("=>")
        left, right = left.strip(), right.strip()
        bracketed = all(x[:1] == "[" and x[-1:] == "]" for x in (left, right))
        if not sep or not bracketed:
            raise ConstraintFormatError(f"{where}:{lineno}: expected '[vars] => [objects]'")
        vs = _id_list(where, lineno, left[1:-1], n_vars, "variable")
        os_ = _id_list(where, lineno, right[1:-1], n_vars, "object")
        var_ids.append(vs)
        var_grp.append(np.full(vs.size, g, dtype=np.int64))
        objs.append(os_)
        obj_grp.append(np.full(os_.size, g, dtype=np.int64))
        line_of_group.append(lineno)
        g += 1
    if n_vars is None:
        raise ConstraintFormatError(f"{where}: empty solution file")
    ids = np.concatenate(var_ids) if var_ids else np.zeros(0, np.int64)
    grp = np.concatenate(var_grp) if var_grp else np.zeros(0, np.int64)
    order = np.argsort(ids, kind="stable")
    repeated = np.flatnonzero(ids[order][1:] == ids[order][:-1])
    if repeated.size:
        second = order[repeated + 1]
        k = int(second[np.argmin(second)])  # the first repetition in file order
        first = int(order[repeated[np.argmin(second)]])
        raise ConstraintFormatError(
            f"{where}:{line_of_group[grp[k]]}: variable {int(ids[k])} is listed again "
            f"(first on line {line_of_group[grp[first]]}); every variable is listed once"
        )
    var_group = np.full(n_vars, -1, dtype=np.int64)
    var_group[ids] = grp
    if ids.size != n_vars:
        missing = int(np.argmax(var_group < 0))
        raise ConstraintFormatError(
            f"{where}: variable {missing} is not listed ({ids.size} of numVars={n_vars} "
            f"are); every variable must be listed exactly once"
        )
    return Reference(
        n_vars=n_vars,
        var_group=var_group,
        fact_group=np.concatenate(obj_grp) if obj_grp else np.zeros(0, np.int64),
        fact_object=np.concatenate(objs) if objs else np.zeros(0, np.int64),
        n_groups=g,
    )


_UNSIGNED = re.compile(r"[+]?[0-9]+")


def _id_list(where: str, lineno: int, inner: str, n_vars: int, what: str) -> np.ndarray:
    """The comma-separated ids between brackets, each in 0..n_vars-1."""
    out = []
    for field_ in inner.split(","):
        token = field_.strip()
        if not token:
            continue
        if not _UNSIGNED.fullmatch(token):
            raise ConstraintFormatError(
                f"{where}:{lineno}: {what} id {token[:30]!r} is not a non-negative integer"
            )
        value = int(token)
        if value >= n_vars:
            raise ConstraintFormatError(
                f"{where}:{lineno}: {what} id {value} is outside 0..{n_vars - 1} (numVars)"
            )
        out.append(value)
    return np.array(out, dtype=np.int64)
