"""A points-to solution: queries, sizes, the ``_correct_soln`` format, and comparison.

Internally one dense bit row per solver node (``rows``, uint64, bit i = ``objects[i]``)
and the row of every variable (``row_of_var``); variables merged offline or by cycle
collapsing share a row.

The ``_correct_soln`` form lists each distinct points-to set once: a first line
``numVars``, then one line ``[v1, v2, ...] => [o1, o2, ...]`` per distinct set (variables
and objects ascending, ``", "`` between ids, the empty set included), the lines ordered by
their smallest variable. The reference files hold exactly these lines, in another order
(that of the tool that wrote them, a hash table's by the look of it, which neither the
variables, the objects nor the set sizes explain), so ``sort`` makes the two byte-identical.
:meth:`Solution.differences_from_file` compares with such a file line by line, never
holding more of it than one line.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..csr import check_declared_size
from ..hashing import mix64
from ..unique import sorted_unique
from ..whole_file import written_whole
from .constraints import ConstraintFormatError


def _popcount_rows(rows: np.ndarray, chunk: int = 1 << 14) -> np.ndarray:
    out = np.empty(rows.shape[0], dtype=np.int64)
    for a in range(0, rows.shape[0], chunk):
        out[a:a + chunk] = np.bitwise_count(rows[a:a + chunk]).sum(axis=1, dtype=np.int64)
    return out


class Solution:
    """A points-to solution. ``rows`` (n_rows, W) uint64 bit rows, ``row_of_var`` (n_vars,)
    int64, ``objects`` (n_bits,) the object of each bit, sorted.

    The GPU path hands over CuPy rows: they stay on the device until something needs them
    on the host (:attr:`rows`, copied once), and :meth:`sizes` and :attr:`n_facts` are
    computed on the device while they are there (kernels/facts.cu).
    """

    def __init__(self, rows: Any, row_of_var: np.ndarray, objects: np.ndarray,
                 stats: dict[str, Any] | None = None, name: str = "solution") -> None:
        self._host_rows = rows if isinstance(rows, np.ndarray) else None
        self._device_rows = None if isinstance(rows, np.ndarray) else rows
        self.row_of_var = np.asarray(row_of_var)
        self.objects = objects
        self.stats: dict[str, Any] = {} if stats is None else stats
        self.name = name
        self._facts: int | None = None

    def __repr__(self) -> str:
        where = "host" if self._device_rows is None else "device"
        return f"Solution({self.name!r}, {self.n_vars} variables, rows on the {where})"

    @property
    def rows(self) -> np.ndarray:
        """The bit rows on the host (copied from the device the first time)."""
        if self._host_rows is None:
            from .. import backend  # noqa: PLC0415

            self._host_rows = backend.to_host(self._device_rows)
        return self._host_rows

    @property
    def on_device(self) -> bool:
        """True while the rows are held on the GPU (they may also have a host copy)."""
        return self._device_rows is not None

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
        if self._device_rows is not None:
            return self._count_on_device()[0]
        return _popcount_rows(self.rows)[self.row_of_var]

    @property
    def n_facts(self) -> int:
        """Total points-to facts, summed over every variable."""
        if self._facts is None:
            if self._device_rows is not None:
                self._facts = self._count_on_device()[1]
            else:
                self._facts = int(self.sizes().sum())
        return self._facts

    def _count_on_device(self) -> tuple[np.ndarray, int]:
        """(the size of every variable's set, their sum), counted by kernels/facts.cu."""
        from .. import backend, kernels  # noqa: PLC0415

        cp = backend.cupy_module()
        rows = self._device_rows
        mod = kernels.load_module("pta/kernels/facts.cu")
        n_rows, words = int(rows.shape[0]), int(rows.shape[1])
        row_size = cp.empty(n_rows, dtype=cp.int64)
        if n_rows:
            grid, block = kernels.launch_config(n_rows * 32, 256, max_blocks=65535)
            mod.get_function("row_sizes")(grid, block, (rows, np.int64(n_rows), np.int64(words),
                                                        row_size))
        var_size = cp.empty(self.n_vars, dtype=cp.int64)
        total = cp.zeros(1, dtype=cp.uint64)
        if self.n_vars:
            grid, block = kernels.launch_config(self.n_vars, 256, max_blocks=65535)
            mod.get_function("var_sizes")(grid, block, (
                row_size, cp.asarray(self.row_of_var, dtype=cp.int64), np.int64(self.n_vars),
                var_size, total))
        return backend.to_host(var_size), int(backend.to_host(total)[0])

    def distinct_sets(self) -> tuple[np.ndarray, np.ndarray]:
        """(the distinct points-to set of every variable, a row holding each set).

        Sets are numbered in the order of their smallest variable. Rows are told apart by
        a hash and confirmed equal word by word, so equal sets in unmerged rows meet.
        """
        used, var_used = np.unique(self.row_of_var, return_inverse=True)
        set_of_used = _distinct_rows(self.rows, used)
        set_of_var = set_of_used[var_used.reshape(-1)]
        # Renumber by smallest variable: the first variable of each set, in id order.
        first_sets, first_var = np.unique(set_of_var, return_index=True)
        rank = np.empty(first_sets.size, dtype=np.int64)
        rank[np.argsort(first_var, kind="stable")] = np.arange(first_sets.size)
        row_of_set = np.empty(first_sets.size, dtype=np.int64)
        row_of_set[rank] = self.row_of_var[first_var]
        return rank[set_of_var], row_of_set

    def groups(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(variables, objects), both ascending, for each distinct points-to set, in the
        order of the sets' smallest variables (the lines of :meth:`write`)."""
        set_of_var, row_of_set = self.distinct_sets()
        order = np.argsort(set_of_var, kind="stable")
        starts = np.searchsorted(set_of_var[order], np.arange(row_of_set.size + 1))
        for k in range(row_of_set.size):
            row = self.rows[row_of_set[k]][None, :]
            bits = np.flatnonzero(np.unpackbits(row.view(np.uint8), bitorder="little"))
            yield order[starts[k]:starts[k + 1]], self.objects[bits]

    def write(self, path: str | Path) -> None:
        """Write the ``_correct_soln`` text form (gzipped when the name ends in .gz): one
        line per distinct points-to set (see the module's description)."""
        path = Path(path)
        with written_whole(path, "wb") as raw, \
                (gzip.open(raw, "wt") if path.suffix == ".gz"
                 else io.TextIOWrapper(raw, encoding="utf-8")) as fh:
            fh.write(f"{self.n_vars}\n")
            for vars_, objs in self.groups():
                fh.write(f"[{', '.join(map(str, vars_.tolist()))}] => "
                         f"[{', '.join(map(str, objs.tolist()))}]\n")

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
        unknown_groups = sorted_unique(ref.fact_group[~known])
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

    def differences_from_file(self, path: str | Path, limit: int = 10) -> list[str]:
        """Like :meth:`differences`, against a ``_correct_soln`` file read line by line.

        Holds one line of the file at a time (and a line number per variable, to check
        that each is listed exactly once): the file is neither read whole nor expanded to
        one set per variable. The same format errors as :func:`read_solution`.
        """
        n, w = self.n_vars, self.rows.shape[1]
        with _solution_lines(path) as (n_ref, lines):
            if n_ref != n:
                return [f"numVars differ: {n} here, {n_ref} in the reference"]
            listed_at = np.zeros(n, dtype=np.int64)
            bad_count = 0
            details: dict[int, str] = {}
            for lineno, vs, objs in lines:
                _check_listed_once(path, lineno, vs, listed_at)
                bit = np.searchsorted(self.objects, objs)
                known = bit < self.objects.size
                known[known] = self.objects[bit[known]] == objs[known]
                rows = self.row_of_var[vs]
                if known.all():
                    ref_row = np.zeros(w, dtype=np.uint64)
                    _set_one_bits(ref_row, bit)
                    mine = sorted_unique(rows)
                    wrong = mine[_rows_differ(self.rows, mine, ref_row)]
                    bad = vs[np.isin(rows, wrong)] if wrong.size else vs[:0]
                else:  # an object this solution never holds: every listed variable differs
                    bad = vs
                bad_count += int(bad.size)
                for v in bad[:limit].tolist():
                    details[v] = self._describe(v, objs)
                if len(details) > limit:
                    for v in sorted(details)[limit:]:
                        del details[v]
        if (listed_at == 0).any():
            missing = int(np.argmax(listed_at == 0))
            raise ConstraintFormatError(
                f"{path}: variable {missing} is not listed ({int((listed_at > 0).sum())} of "
                f"numVars={n} are); every variable must be listed exactly once"
            )
        out = [details[v] for v in sorted(details)]
        if bad_count > limit:
            out.append(f"... {bad_count - limit} more variables differ")
        return out

    def _describe(self, v: int, want: np.ndarray) -> str:
        mine = self.points_to(v)
        return (f"variable {v}: {mine.size} objects here, {want.size} in the reference; "
                f"missing {np.setdiff1d(want, mine)[:5].tolist()}, "
                f"extra {np.setdiff1d(mine, want)[:5].tolist()}")


def _distinct_rows(rows: np.ndarray, used: np.ndarray, chunk_bytes: int = 1 << 25) -> np.ndarray:
    """A set id for each row ``rows[used[i]]``, equal exactly for equal rows.

    A 64-bit hash per row (bounded temporaries), a sort by hash, and a word-by-word check
    of neighbours with equal hashes; if a hash ever joined unequal rows, an exact
    ``np.unique`` over the rows decides instead.
    """
    k, w = used.size, rows.shape[1]
    step = max(1, chunk_bytes // max(1, 8 * w))
    salt = mix64(np.arange(1, w + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    h = np.empty(k, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for a in range(0, k, step):
            h[a:a + step] = mix64(rows[used[a:a + step]] ^ salt).sum(axis=1, dtype=np.uint64)
    order = np.argsort(h, kind="stable")
    hs = h[order]
    same = np.flatnonzero(hs[1:] == hs[:-1])
    for a in range(0, same.size, step):
        i = same[a:a + step]
        if np.any(rows[used[order[i]]] != rows[used[order[i + 1]]]):
            _, inv = np.unique(rows[used], axis=0, return_inverse=True)
            return inv.reshape(-1).astype(np.int64)
    set_sorted = np.cumsum(np.r_[True, hs[1:] != hs[:-1]]) - 1
    out = np.empty(k, dtype=np.int64)
    out[order] = set_sorted
    return out


def _rows_differ(rows: np.ndarray, which: np.ndarray, ref_row: np.ndarray,
                 chunk_bytes: int = 1 << 22) -> np.ndarray:
    """Mask over ``which``: rows ``rows[which]`` that differ from ``ref_row``."""
    step = max(1, chunk_bytes // max(1, 8 * rows.shape[1]))
    return np.concatenate([np.any(rows[which[a:a + step]] != ref_row, axis=1)
                           for a in range(0, which.size, step)] or [np.zeros(0, bool)])


def _set_one_bits(row: np.ndarray, bit: np.ndarray) -> None:
    """``row |= 1 << bit`` for each bit (one row of uint64 words)."""
    if bit.size:
        np.bitwise_or.at(row, bit >> 6, np.left_shift(np.uint64(1), (bit & 63).astype(np.uint64)))


def _check_listed_once(where: str | Path, lineno: int, vs: np.ndarray,
                       listed_at: np.ndarray) -> None:
    """Record that ``vs`` are listed on ``lineno``; a variable listed before is an error."""
    again = np.flatnonzero(listed_at[vs] > 0)
    if not again.size:
        uniq, first = np.unique(vs, return_index=True)
        if uniq.size == vs.size:
            listed_at[vs] = lineno
            return
        again = np.setdiff1d(np.arange(vs.size), first)[:1]
        first_line = lineno
    else:
        first_line = int(listed_at[vs[again[0]]])
    raise ConstraintFormatError(
        f"{where}:{lineno}: variable {int(vs[again[0]])} is listed again (first on line "
        f"{first_line}); every variable is listed once"
    )


def _differing_vars(rows_a: np.ndarray, row_of_var_a: np.ndarray, rows_b: np.ndarray,
                    row_of_var_b: np.ndarray, step: int = 1 << 14) -> np.ndarray:
    """Variables whose row in ``a`` differs from their row in ``b``.

    Compares each distinct (row in a, row in b) pair once, in chunks, instead of expanding
    both sides to one row per variable (n_vars x words: many GiB on the large programs).
    """
    base = rows_b.shape[0] + 1
    key = row_of_var_a.astype(np.int64) * base + row_of_var_b
    pair = sorted_unique(key)
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
    var_ids, var_grp, objs, obj_grp = [], [], [], []
    with _solution_lines(path) as (n_vars, lines):
        listed_at = np.zeros(n_vars, dtype=np.int64)
        g = 0
        for lineno, vs, os_ in lines:
            _check_listed_once(path, lineno, vs, listed_at)
            var_ids.append(vs)
            var_grp.append(np.full(vs.size, g, dtype=np.int64))
            objs.append(os_)
            obj_grp.append(np.full(os_.size, g, dtype=np.int64))
            g += 1
    var_group = np.full(n_vars, -1, dtype=np.int64)
    if var_ids:
        var_group[np.concatenate(var_ids)] = np.concatenate(var_grp)
    if (listed_at == 0).any():
        missing = int(np.argmax(listed_at == 0))
        raise ConstraintFormatError(
            f"{path}: variable {missing} is not listed ({int((listed_at > 0).sum())} of "
            f"numVars={n_vars} are); every variable must be listed exactly once"
        )
    return Reference(
        n_vars=n_vars,
        var_group=var_group,
        fact_group=np.concatenate(obj_grp) if obj_grp else np.zeros(0, np.int64),
        fact_object=np.concatenate(objs) if objs else np.zeros(0, np.int64),
        n_groups=g,
    )


@contextlib.contextmanager
def _solution_lines(path: str | Path):
    """(numVars, an iterator of (line number, variables, objects)) of a ``_correct_soln``
    file, read as a stream (gzip by suffix); errors name the file and the line."""
    where = str(path)
    path = Path(path)
    try:
        # surrogateescape: a byte that is not UTF-8 reaches the line it is on (a strict
        # decoder fails at a chunk boundary, with no line number), and is refused there
        # (utf-8-sig: a leading byte order mark is read past, as by the other readers)
        fh = (gzip.open(path, "rt", encoding="utf-8-sig", errors="surrogateescape")
              if path.suffix == ".gz" else
              open(path, encoding="utf-8-sig", errors="surrogateescape"))
    except OSError as exc:
        raise ConstraintFormatError(f"{path}: cannot be read ({exc})") from exc
    numbered = enumerate(fh, 1)

    def stripped():
        try:
            for lineno, line in numbered:
                s = line.strip()
                if s and not s.startswith("#"):
                    if not s.isascii():
                        _check_utf8(where, lineno, s)
                    yield lineno, s
        except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:
            raise ConstraintFormatError(f"{path}: cannot be read ({exc})") from exc

    with fh:
        body = stripped()
        head = next(body, None)
        if head is None:
            raise ConstraintFormatError(f"{where}: empty solution file")
        lineno, s = head
        if not _UNSIGNED.fullmatch(s):
            raise ConstraintFormatError(
                f"{where}:{lineno}: expected numVars (a positive integer), got {s[:60]!r}"
            )
        n_vars = int(s)
        if n_vars < 1:
            raise ConstraintFormatError(f"{where}:{lineno}: numVars must be positive")
        check_declared_size(f"{where}:{lineno}", f"numVars={n_vars}", 24 * n_vars,
                            ConstraintFormatError)

        def parsed():
            for lineno, s in body:
                left, sep, right = s.partition("=>")
                left, right = left.strip(), right.strip()
                bracketed = all(x[:1] == "[" and x[-1:] == "]" for x in (left, right))
                if not sep or not bracketed:
                    raise ConstraintFormatError(
                        f"{where}:{lineno}: expected '[vars] => [objects]'")
                yield (lineno, _id_list(where, lineno, left[1:-1], n_vars, "variable"),
                       _id_list(where, lineno, right[1:-1], n_vars, "object"))

        yield n_vars, parsed()


_UNSIGNED = re.compile(r"[+]?[0-9]+")


_ID_LIST = re.compile(r"\s*(?:[0-9]+\s*(?:,\s*[0-9]+\s*)*)?")


def _check_utf8(where: str, lineno: int, line: str) -> None:
    """A line read with surrogateescape must hold no escaped (non-UTF-8) byte."""
    try:
        line.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ConstraintFormatError(
            f"{where}:{lineno}: not a text file (character {exc.start + 1} of the line is "
            f"not UTF-8 text)"
        ) from None


def _id_list(where: str, lineno: int, inner: str, n_vars: int, what: str) -> np.ndarray:
    """The comma-separated ids between brackets, each in 0..n_vars-1."""
    if _ID_LIST.fullmatch(inner):  # the common form, parsed at once
        try:
            ids = np.array(inner.split(","), dtype=np.int64) if inner.strip() else \
                np.zeros(0, np.int64)
        except (ValueError, OverflowError):
            ids = None
        if ids is not None and (not ids.size or ids.max() < n_vars):
            return ids
    out = []
    for field_ in inner.split(","):
        token = field_.strip()
        if not token:
            # a blank list was read above: here an empty field is a number lost ('[0,,1]'
            # was read as [0, 1])
            raise ConstraintFormatError(
                f"{where}:{lineno}: an empty {what} id between commas in [{inner[:60]}]"
            )
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
