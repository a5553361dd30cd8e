"""CNF formulas: the container, random k-SAT, DIMACS reading and writing, and verification.

A :class:`CNF` keeps clauses as CSR over DIMACS literals: clause ``a`` is
``literals[offsets[a]:offsets[a+1]]``, each literal ``+v`` or ``-v`` for variable ``v`` in
``1..n_vars``. That is the file's own shape, so reading and writing lose nothing (duplicate
literals, tautologies and empty clauses survive until the solver simplifies them).
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import backend
from ..csr import index_dtype


class CNFFormatError(ValueError):
    """A DIMACS file or a formula's arrays are malformed; the message says where."""


@dataclass(frozen=True, eq=False)
class CNF:
    n_vars: int
    offsets: np.ndarray  # int64, n_clauses + 1
    literals: np.ndarray  # int32 (int64 past 2^31 variables), DIMACS signed literals

    @property
    def n_clauses(self) -> int:
        return int(self.offsets.size - 1)

    def clause(self, a: int) -> list[int]:
        return self.literals[self.offsets[a] : self.offsets[a + 1]].tolist()

    def clauses(self) -> list[list[int]]:
        return [self.clause(a) for a in range(self.n_clauses)]

    def widths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def __repr__(self) -> str:
        return f"CNF(n_vars={self.n_vars}, n_clauses={self.n_clauses})"

    @classmethod
    def from_clauses(cls, clauses: Any, n_vars: int | None = None) -> CNF:
        """Build from a list of clauses (iterables of non-zero DIMACS literals)."""
        rows = [list(map(int, c)) for c in clauses]
        widths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(widths, out=offsets[1:])
        flat = np.fromiter((x for r in rows for x in r), dtype=np.int64, count=int(offsets[-1]))
        return cls.from_arrays(offsets, flat, n_vars)

    @classmethod
    def from_arrays(cls, offsets: Any, literals: Any, n_vars: int | None = None) -> CNF:
        """Build from CSR arrays (NumPy or CuPy); validates literal ranges and offsets."""
        offsets = np.asarray(backend.to_host(offsets), dtype=np.int64).ravel()
        literals = np.asarray(backend.to_host(literals)).ravel()
        if literals.size and literals.dtype.kind not in "iu":
            raise CNFFormatError("literals must be integers")
        literals = literals.astype(np.int64, copy=False)
        if offsets.size < 1 or offsets[0] != 0 or offsets[-1] != literals.size:
            raise CNFFormatError(
                f"offsets must start at 0 and end at len(literals)={literals.size}"
            )
        if np.any(np.diff(offsets) < 0):
            bad = int(np.argmax(np.diff(offsets) < 0))
            raise CNFFormatError(f"offsets decrease at clause {bad}")
        if literals.size and np.any(literals == 0):
            bad = int(np.argmax(literals == 0))
            raise CNFFormatError(f"literal {bad} is 0 (0 only ends a clause in DIMACS)")
        top = int(np.abs(literals).max()) if literals.size else 0
        if n_vars is None:
            n_vars = top
        if n_vars < 0:
            raise CNFFormatError(f"n_vars must be non-negative, got {n_vars}")
        if top > n_vars:
            raise CNFFormatError(f"a literal names variable {top} > n_vars={n_vars}")
        return cls(int(n_vars), offsets, literals.astype(index_dtype(n_vars)))


def random_ksat(
    n_vars: int,
    k: int,
    ratio: float | None = None,
    n_clauses: int | None = None,
    seed: int | None = None,
) -> CNF:
    """Uniform random k-SAT: each clause has k distinct variables with random signs.

    Give either ``ratio`` (clauses per variable) or ``n_clauses``.
    """
    if n_vars < 1 or k < 1:
        raise ValueError(f"random_ksat: need n_vars >= 1 and k >= 1, got {n_vars}, {k}")
    if k > n_vars:
        raise ValueError(f"random_ksat: k={k} distinct variables need n_vars >= k")
    if (ratio is None) == (n_clauses is None):
        raise ValueError("random_ksat: give exactly one of ratio and n_clauses")
    m = int(round(ratio * n_vars)) if n_clauses is None else int(n_clauses)
    if m < 0:
        raise ValueError(f"random_ksat: the clause count must be non-negative, got {m}")
    rng = np.random.default_rng(seed)
    var_dtype = np.int32 if n_vars < 2**31 - 1 else np.int64
    vars_ = rng.integers(1, n_vars + 1, size=(m, k), dtype=var_dtype)
    # Redraw the rows with a repeated variable; at k << n_vars few rows repeat, and each
    # redraw shrinks the set geometrically.
    while k > 1:
        s = np.sort(vars_, axis=1)
        bad = np.flatnonzero((s[:, 1:] == s[:, :-1]).any(axis=1))
        if bad.size == 0:
            break
        vars_[bad] = rng.integers(1, n_vars + 1, size=(bad.size, k), dtype=var_dtype)
    signs = rng.integers(0, 2, size=(m, k), dtype=np.int8) * 2 - 1
    literals = (vars_ * signs).astype(var_dtype).ravel()
    offsets = np.arange(m + 1, dtype=np.int64) * k
    return CNF(int(n_vars), offsets, literals)


def verify(cnf: CNF, assignment: Any) -> bool:
    """True iff ``assignment`` (bool per variable, index 0 is variable 1) satisfies every clause."""
    return unsatisfied_clauses(cnf, assignment).size == 0


def unsatisfied_clauses(cnf: CNF, assignment: Any) -> np.ndarray:
    """Indices of the clauses ``assignment`` leaves false (empty clauses are always false)."""
    values = np.asarray(backend.to_host(assignment)).ravel()
    if values.size != cnf.n_vars:
        raise ValueError(
            f"assignment has {values.size} values but the formula has {cnf.n_vars} variables"
        )
    values = values.astype(bool)
    lits = cnf.literals
    lit_true = values[np.abs(lits) - 1] == (lits > 0)
    # One OR per clause over its slice (2.4x faster than a bincount over clause ids at 12.6M
    # literals); an empty clause adds no segment and stays false.
    nonempty = np.diff(cnf.offsets) > 0
    clause_true = np.zeros(cnf.n_clauses, dtype=bool)
    if lit_true.size:
        clause_true[nonempty] = np.logical_or.reduceat(lit_true, cnf.offsets[:-1][nonempty])
    return np.flatnonzero(~clause_true)


# ---------------------------------------------------------------------------- DIMACS


def read_dimacs(source: str | os.PathLike | io.TextIOBase) -> CNF:
    """Read a DIMACS CNF file (path or open text file); errors name the file and line.

    Accepts comments (``c``), one ``p cnf V C`` header, clauses split over lines or several
    per line, and a trailing ``%`` line (SATLIB's end marker). The header's clause count must
    match; a final clause without its terminating 0 is accepted.
    """
    if isinstance(source, (str, os.PathLike)):
        name = str(source)
        with open(source, encoding="utf-8", errors="replace") as fh:
            return _parse_dimacs(fh, name)
    return _parse_dimacs(source, getattr(source, "name", "<stream>"))


def parse_dimacs(text: str) -> CNF:
    """Parse DIMACS text held in a string."""
    return _parse_dimacs(io.StringIO(text), "<string>")


def _parse_dimacs(lines: Any, name: str) -> CNF:
    header: tuple[int, int] | None = None
    header_line = 0
    offsets = [0]
    flat: list[int] = []
    current = 0  # literals of the clause being read
    for lineno, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line[0] == "c":
            continue
        if line[0] == "%":
            break
        if line[0] == "p":
            parts = line.split()
            if header is not None:
                raise CNFFormatError(f"{name}:{lineno}: a second 'p' header")
            if len(parts) != 4 or parts[1] != "cnf":
                raise CNFFormatError(
                    f"{name}:{lineno}: expected 'p cnf VARS CLAUSES', got {line!r}"
                )
            try:
                header = (int(parts[2]), int(parts[3]))
            except ValueError:
                raise CNFFormatError(f"{name}:{lineno}: header counts must be integers") from None
            if header[0] < 0 or header[1] < 0:
                raise CNFFormatError(f"{name}:{lineno}: header counts must be non-negative")
            header_line = lineno
            continue
        if header is None:
            raise CNFFormatError(f"{name}:{lineno}: clause before the 'p cnf' header")
        for token in line.split():
            try:
                lit = int(token)
            except ValueError:
                raise CNFFormatError(
                    f"{name}:{lineno}: {token!r} is not an integer literal"
                ) from None
            if lit == 0:
                offsets.append(len(flat))
                current = 0
                continue
            if abs(lit) > header[0]:
                raise CNFFormatError(
                    f"{name}:{lineno}: literal {lit} names a variable > {header[0]} (header)"
                )
            flat.append(lit)
            current += 1
    if header is None:
        raise CNFFormatError(f"{name}: no 'p cnf' header")
    if current:
        offsets.append(len(flat))
    n_read = len(offsets) - 1
    if n_read != header[1]:
        raise CNFFormatError(
            f"{name}:{header_line}: header promises {header[1]} clauses but {n_read} were read"
        )
    return CNF.from_arrays(np.asarray(offsets, dtype=np.int64),
                           np.asarray(flat, dtype=np.int64), header[0])


def write_dimacs(cnf: CNF, target: str | os.PathLike | io.TextIOBase, *, comment: str = "") -> None:
    """Write ``cnf`` in DIMACS form, one clause per line."""
    if isinstance(target, (str, os.PathLike)):
        with open(Path(target), "w", encoding="utf-8") as fh:
            write_dimacs(cnf, fh, comment=comment)
        return
    for line in comment.splitlines():
        target.write(f"c {line}\n")
    target.write(f"p cnf {cnf.n_vars} {cnf.n_clauses}\n")
    lits = cnf.literals
    off = cnf.offsets
    chunk = 1 << 16
    for start in range(0, cnf.n_clauses, chunk):
        stop = min(cnf.n_clauses, start + chunk)
        rows = []
        for a in range(start, stop):
            body = " ".join(map(str, lits[off[a] : off[a + 1]].tolist()))
            rows.append(f"{body} 0\n" if body else "0\n")
        target.write("".join(rows))
