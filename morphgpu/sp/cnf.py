"""CNF formulas: the container, random k-SAT, DIMACS reading and writing, and verification.

A :class:`CNF` keeps clauses as CSR over DIMACS literals: clause ``a`` is
``literals[offsets[a]:offsets[a+1]]``, each literal ``+v`` or ``-v`` for variable ``v`` in
``1..n_vars``. That is the file's own shape, so reading and writing lose nothing (duplicate
literals, tautologies and empty clauses survive until the solver simplifies them).
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import lzma
import math
import operator
import os
import re
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import arguments, backend
from ..compressed import decompressed, read_bounded, without_bom
from ..csr import check_declared_size, index_dtype
from ..whole_file import written_whole


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
        rows = [_clause_literals(a, c) for a, c in enumerate(clauses)]
        widths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(widths, out=offsets[1:])
        flat = np.fromiter((x for r in rows for x in r), dtype=np.int64, count=int(offsets[-1]))
        return cls.from_arrays(offsets, flat, n_vars)

    @classmethod
    def from_arrays(cls, offsets: Any, literals: Any, n_vars: int | None = None) -> CNF:
        """Build from CSR arrays (NumPy or CuPy); validates literal ranges and offsets."""
        offsets = np.asarray(backend.to_host(offsets)).ravel()
        if offsets.dtype.kind not in "iu":
            raise CNFFormatError(f"offsets must be integers, got dtype {offsets.dtype}")
        if offsets.size and offsets.dtype.kind == "u" and int(offsets.max()) >= 2**63:
            raise CNFFormatError("offsets must be below 2**63")
        offsets = offsets.astype(np.int64, copy=False)
        literals = np.asarray(backend.to_host(literals)).ravel()
        if literals.size and literals.dtype.kind not in "iu":
            raise CNFFormatError(f"literals must be integers, got dtype {literals.dtype}")
        if literals.size and literals.dtype.kind == "u" and int(literals.max()) >= 2**63:
            bad = int(np.argmax(literals >= 2**63))
            raise CNFFormatError(f"literal {bad} is {int(literals[bad])}, past 2**63 - 1")
        literals = literals.astype(np.int64, copy=False)
        if n_vars is not None:
            n_vars = _count(n_vars, "n_vars")
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
        if literals.size and int(literals.min()) == -(2**63):
            bad = int(np.argmax(literals == -(2**63)))
            raise CNFFormatError(f"literal {bad} is -2**63, past the largest variable id")
        top = int(np.abs(literals).max()) if literals.size else 0
        if n_vars is None:
            n_vars = top
        if n_vars < 0:
            raise CNFFormatError(f"n_vars must be non-negative, got {n_vars}")
        if top > n_vars:
            raise CNFFormatError(f"a literal names variable {top} > n_vars={n_vars}")
        return cls(int(n_vars), offsets, literals.astype(index_dtype(n_vars)))


def _clause_literals(a: int, clause: Any) -> list[int]:
    """A clause's literals as Python ints; floats, bools and strings are refused, not cut."""
    try:
        items = list(clause)
    except TypeError:
        raise CNFFormatError(
            f"clause {a}: expected an iterable of literals, got {type(clause).__name__}"
        ) from None
    out = []
    for j, x in enumerate(items):
        if isinstance(x, (bool, np.bool_)):
            raise CNFFormatError(f"clause {a}, literal {j}: {x!r} is a bool, not a literal")
        try:
            value = operator.index(x)
        except TypeError:
            raise CNFFormatError(
                f"clause {a}, literal {j}: {x!r} is not an integer (literals are +v or -v)"
            ) from None
        if not -(2**63) < value < 2**63:
            raise CNFFormatError(f"clause {a}, literal {j}: {value} is past 2**63 - 1")
        out.append(value)
    return out


def _count(value: Any, name: str) -> int:
    # Kept apart from arguments.integer: a header count is a CNFFormatError, and any
    # object with __index__ has always been taken (operator.index).
    if isinstance(value, (bool, np.bool_)):
        raise CNFFormatError(f"{name} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise CNFFormatError(f"{name} must be an integer, got {value!r}") from None


def random_ksat(
    n_vars: int,
    k: int,
    ratio: float | None = None,
    n_clauses: int | None = None,
    seed: int | None = None,
) -> CNF:
    """Uniform random k-SAT: each clause has k distinct variables with random signs.

    Give either ``ratio`` (clauses per variable) or ``n_clauses``. ``seed`` is None, a
    non-negative integer, or a NumPy ``Generator``/``SeedSequence``. Bad arguments raise a
    ValueError naming the argument; a clause table that cannot fit host memory is refused
    before anything is drawn.
    """
    n_vars = _ksat_int("n_vars", n_vars)
    k = _ksat_int("k", k)
    if n_vars < 1 or k < 1:
        raise ValueError(f"random_ksat: need n_vars >= 1 and k >= 1, got {n_vars}, {k}")
    if n_vars > _MAX_KSAT_VARS:
        # literals are int64 (and rng.integers draws below n_vars + 1)
        raise ValueError(f"random_ksat: n_vars must be at most 2**63 - 1, got {n_vars}")
    if k > n_vars:
        raise ValueError(f"random_ksat: k={k} distinct variables need n_vars >= k")
    if (ratio is None) == (n_clauses is None):
        raise ValueError("random_ksat: give exactly one of ratio and n_clauses")
    _check_ksat_seed(seed)
    if n_clauses is None:
        ratio = _ksat_ratio(ratio)
        arg = f"ratio={ratio!r} with n_vars={n_vars}"
        clauses = ratio * n_vars
        if isinstance(clauses, float) and not math.isfinite(clauses):
            # a finite ratio whose product overflows (1e308 * 10): int(round(inf)) was an
            # OverflowError
            raise ValueError(f"random_ksat: {arg} asks for more clauses than a float holds")
        m = int(round(clauses))
    else:
        m = _ksat_int("n_clauses", n_clauses)
        if m < 0:
            raise ValueError(f"random_ksat: n_clauses must be non-negative, got {m}")
        arg = f"n_clauses={m}"
    var_bytes = 4 if n_vars < 2**31 - 1 else 8
    # The least held at once: the variable table and the literals made from it (both
    # m x k) and the int64 clause offsets. Refused here instead of NumPy's MemoryError (or
    # an OOM kill) for random_ksat(2**40, 3, ratio=2) or n_clauses=10**13.
    check_declared_size(
        f"random_ksat: {arg}", f"{m} clauses of {k} literals",
        2 * var_bytes * m * k + 8 * (m + 1), ValueError, verb="asks for",
    )
    rng = np.random.default_rng(seed)
    var_dtype = np.int32 if n_vars < 2**31 - 1 else np.int64
    # The chance that k uniform draws are distinct: the redraw below keeps that share of
    # the rows a round. Near k = n_vars it is tiny (random_ksat(20, 20): 2e-8, a hang), so
    # there each clause takes the first k of a random permutation instead.
    distinct = math.exp(sum(math.log1p(-i / n_vars) for i in range(k)))
    if distinct < 1 / 16:
        return _random_ksat_by_permutation(rng, n_vars, k, m, var_dtype)
    vars_ = rng.integers(1, n_vars + 1, size=(m, k), dtype=var_dtype)
    # Redraw the rows with a repeated variable; at k << n_vars few rows repeat, and each
    # redraw shrinks the set geometrically.
    while k > 1:
        s = np.sort(vars_, axis=1)
        bad = np.flatnonzero((s[:, 1:] == s[:, :-1]).any(axis=1))
        if bad.size == 0:
            break
        vars_[bad] = rng.integers(1, n_vars + 1, size=(bad.size, k), dtype=var_dtype)
    return _signed_clauses(rng, n_vars, k, m, vars_, var_dtype)


def _signed_clauses(rng: np.random.Generator, n_vars: int, k: int, m: int, vars_: np.ndarray,
                    var_dtype: Any) -> CNF:
    signs = rng.integers(0, 2, size=(m, k), dtype=np.int8) * 2 - 1
    literals = (vars_ * signs).astype(var_dtype).ravel()
    offsets = np.arange(m + 1, dtype=np.int64) * k
    return CNF(int(n_vars), offsets, literals)


def _random_ksat_by_permutation(rng: np.random.Generator, n_vars: int, k: int, m: int,
                                var_dtype: Any) -> CNF:
    """k distinct variables a clause as the first k of a random permutation of 1..n_vars
    (argsort of random keys), in blocks of rows that keep the keys near 32 MB. Only used
    where k is close enough to n_vars that n_vars is small."""
    vars_ = np.empty((m, k), dtype=var_dtype)
    rows = max(1, (1 << 22) // n_vars)
    for first in range(0, m, rows):
        block = min(rows, m - first)
        keys = rng.random((block, n_vars))
        vars_[first:first + block] = np.argpartition(keys, k - 1, axis=1)[:, :k] + 1
    return _signed_clauses(rng, n_vars, k, m, vars_, var_dtype)


# The largest variable a literal (int64) can name.
_MAX_KSAT_VARS = 2**63 - 1


def _ksat_int(name: str, value: Any) -> int:
    """An integer argument of random_ksat: int() truncated n_clauses=2.5 and read "5"."""
    return arguments.integer(value, name,
                             message="random_ksat: {name} must be an integer, got {value!r}")


def _ksat_ratio(ratio: Any) -> Any:
    """A finite, non-negative real; inf was an OverflowError, nan and "10" unnamed errors."""
    if not arguments.is_real(ratio):
        raise ValueError(f"random_ksat: ratio must be a real number, got {ratio!r}")
    # an int is always finite (math.isfinite(10**400) would raise OverflowError)
    if (not isinstance(ratio, (int, np.integer)) and not math.isfinite(ratio)) or ratio < 0:
        raise ValueError(f"random_ksat: ratio must be finite and non-negative, got {ratio!r}")
    # A NumPy integer times n_vars wraps past 2**63 (a wrong clause count); a Python int
    # does not. NumPy floats are kept as given so the clause count rounds as it always did.
    return int(ratio) if isinstance(ratio, np.integer) else ratio


def _check_ksat_seed(seed: Any) -> None:
    """None, a non-negative integer, or NumPy's own seed objects (default_rng takes them).

    default_rng took True as seed 1 and refused -1, 1.5 and "x" without naming the seed.
    """
    arguments.seed(seed, allow_none=True, allow_numpy=True,
                   message="random_ksat: {name} must be None or a non-negative integer, "
                           "got {value!r}")


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


def read_dimacs(source: str | os.PathLike | io.IOBase) -> CNF:
    """Read a DIMACS CNF file (path or open file); errors name the file and line.

    Accepts comments (``c``) anywhere, one ``p cnf V C`` header, clauses split over lines
    or several per line, LF, CRLF or CR line endings, and a ``%`` line (SATLIB's end
    marker: the rest of the file is ignored). The header's clause count must match, and
    the last clause must end with its 0 (a file cut short inside a clause is an error, not
    a shorter clause). A path may be compressed with gzip, xz or bzip2 (detected from the
    content).

    The body is parsed in bulk (NumPy, in threaded pieces on large bodies); only when that
    parse does not add up is the file scanned line by line, to name the bad line.
    """
    if isinstance(source, (str, os.PathLike)):
        name = str(source)
        return _parse_bytes(_read_bytes(Path(source)), name)
    name = str(getattr(source, "name", "<stream>"))
    try:
        data = source.read()
    except UnicodeDecodeError as exc:  # a text stream over bytes that are not its encoding
        raise CNFFormatError(
            f"{name}: not text in the stream's encoding ({exc}); pass the path or a binary "
            "stream"
        ) from None
    if isinstance(data, str):
        return _parse_bytes(data.encode("utf-8", "surrogateescape"), name)
    # a binary stream may be compressed, as a path may
    return _parse_bytes(decompressed(bytes(data), name, CNFFormatError), name)


def parse_dimacs(text: str | bytes) -> CNF:
    """Parse DIMACS text held in a string (or bytes)."""
    return _parse_bytes(text.encode("utf-8", "surrogateescape") if isinstance(text, str)
                        else bytes(text), "<string>")


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, decompressed when they start with a gzip, xz or bzip2 magic."""
    try:
        raw = read_bounded(path, CNFFormatError)
    except OSError as exc:
        raise CNFFormatError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    return decompressed(raw, path, CNFFormatError)


# A comment line anywhere in the body (blanked before the bulk parse), and SATLIB's end mark.
_COMMENT_LINE = re.compile(rb"^[ \t\v\f]*c[^\n]*", re.MULTILINE)
_END_MARK = re.compile(rb"^[ \t\v\f]*%", re.MULTILINE)
# Bytes per variable and per clause that any formula (and the solver's factor graph)
# holds at least: variable offsets and values, clause offsets.
_BYTES_PER_VAR = 16
_BYTES_PER_CLAUSE = 16


def _header_counts(name: str, lineno: int, line: bytes) -> tuple[int, int]:
    parts = line.split()
    if len(parts) != 4 or parts[0] != b"p" or parts[1] != b"cnf":
        raise CNFFormatError(
            f"{name}:{lineno}: expected 'p cnf VARS CLAUSES', got {_show(line)}"
        )
    if not (_INTEGER.fullmatch(parts[2]) and _INTEGER.fullmatch(parts[3])):
        raise CNFFormatError(
            f"{name}:{lineno}: header counts must be integers, got {_show(line)}"
        )
    n_vars, n_clauses = int(parts[2]), int(parts[3])
    if n_vars < 0 or n_clauses < 0:
        raise CNFFormatError(f"{name}:{lineno}: header counts must be non-negative")
    check_declared_size(
        f"{name}:{lineno}", f"{n_vars} variables and {n_clauses} clauses",
        _BYTES_PER_VAR * (n_vars + 1) + _BYTES_PER_CLAUSE * (n_clauses + 1),
        CNFFormatError,
    )
    return n_vars, n_clauses


_INTEGER = re.compile(rb"[-+]?[0-9]+")


def _show(line: bytes) -> str:
    # ASCII blanks only, as bytes.strip() and split() cut the file: str.strip() also took
    # no-break and other Unicode spaces, so a token made of one was shown as ''.
    text = line.decode("utf-8", "replace").strip(" \t\n\r\v\f")
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _parse_bytes(data: bytes, name: str) -> CNF:
    # kept, a byte order mark made a valid file's header 'a clause before the header'
    data = without_bom(data)
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    found = _find_header(data)
    if found is None:
        return _scan_lines(data, name)
    header_line, header_text, body_start = found
    n_vars, n_clauses = _header_counts(name, header_line, header_text)
    parsed = _bulk_body(data[body_start:], n_vars)
    if parsed is None:
        return _scan_lines(data, name)
    offsets, literals = parsed
    if offsets.size - 1 != n_clauses:
        raise CNFFormatError(
            f"{name}:{header_line}: header promises {n_clauses} clauses but "
            f"{offsets.size - 1} were read"
        )
    return CNF(int(n_vars), offsets, literals)


def _find_header(data: bytes) -> tuple[int, bytes, int] | None:
    """(line number, text, end offset) of the 'p' line when only comments and blank lines
    precede it; None otherwise (the line-by-line scan then names what is wrong)."""
    offset, lineno = 0, 0
    while offset < len(data):
        end = data.find(b"\n", offset)
        end = len(data) if end < 0 else end
        lineno += 1
        line = data[offset:end].strip()
        offset = end + 1
        if not line or line[:1] == b"c":
            continue
        if line[:1] == b"p":
            return lineno, line, min(offset, len(data))
        return None
    return None


def _bulk_body(body: bytes, n_vars: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(offsets, literals) of the clauses after the header, parsed in bulk (NumPy, in
    threaded pieces on large bodies); None when anything is unusual (the caller then scans
    line by line)."""
    if b"%" in body:
        mark = _END_MARK.search(body)
        if mark is not None:
            body = body[: mark.start()]
    if b"c" in body:
        body = _COMMENT_LINE.sub(b"", body)
    if not body or body.isspace():
        return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    values = _tokens(body)
    if values is None or values.size == 0:
        return None
    # NumPy saturates out-of-range numbers; the range check catches them.
    if int(values.max()) > n_vars or int(values.min()) < -n_vars:
        return None
    out_dtype = index_dtype(n_vars)
    is_end = values == 0
    n_ends = int(np.count_nonzero(is_end))
    if n_ends:
        # The common case, every clause k literals and a 0: a reshape, no masking.
        width = int(np.argmax(is_end)) + 1
        if values.size == n_ends * width and bool(is_end[width - 1 :: width].all()):
            table = values.reshape(n_ends, width)
            # Assigned into a fresh array: astype of the strided view took 2.5x longer.
            literals = np.empty((n_ends, width - 1), dtype=out_dtype)
            literals[...] = table[:, :-1]
            offsets = np.arange(n_ends + 1, dtype=np.int64) * (width - 1)
            return offsets, literals.ravel()
    if not is_end[-1]:
        return None  # the last clause lacks its 0: the scan names the line
    ends = np.flatnonzero(is_end)
    literals = values[~is_end]
    # The k-th 0 closes a clause after (its position - k) literals.
    offsets = np.empty(ends.size + 1, dtype=np.int64)
    offsets[0] = 0
    offsets[1:] = ends - np.arange(ends.size, dtype=np.int64)
    return offsets, literals.astype(out_dtype)


# A body of at least two pieces of PIECE_BYTES is split at line ends and its pieces parsed
# by np.fromstring in threads (it releases the GIL): K=3 n=1M (84 MB of body), 2-core CPU
# machine: 0.64 s in one piece, 0.32 s in four on two threads. pandas' C tokenizer, used
# before, parsed about as fast here but its import alone took 1.5 s of the H100 machine's
# 8 s `morphgpu sat` run (NumPy is imported anyway).
PIECE_BYTES = 4 << 20


def _tokens(body: bytes) -> np.ndarray | None:
    """Every whitespace-separated integer of ``body`` in order (int64); None when a token
    is not an integer."""
    workers = backend.usable_cores()
    n_pieces = min(4 * workers, len(body) // PIECE_BYTES)
    # np.fromstring only warns (DeprecationWarning) where it stops early on a bad token;
    # the filter that makes that an error is process-wide, so it is set here, around the
    # threads, not inside each (catch_warnings is not thread-safe).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if n_pieces < 2:
            return _piece_tokens(body)
        view = memoryview(body)
        pieces, start = [], 0
        for i in range(1, n_pieces):
            cut = body.find(b"\n", max(start, len(body) * i // n_pieces))
            if cut < 0:
                break
            pieces.append(view[start : cut + 1])
            start = cut + 1
        pieces.append(view[start:])
        with ThreadPoolExecutor(min(len(pieces), workers)) as pool:
            parts = list(pool.map(lambda piece: _piece_tokens(bytes(piece)), pieces))
    if any(part is None for part in parts):
        return None
    return np.concatenate(parts)  # type: ignore[arg-type]


def _piece_tokens(body: bytes) -> np.ndarray | None:
    """The integers of one piece of whole lines (warnings must be errors, see _tokens)."""
    if not body or body.isspace():  # isspace stops at the first other byte; strip copies
        return np.zeros(0, dtype=np.int64)
    if b"+" in body:
        return None
    try:
        values = np.fromstring(body, dtype=np.int64, sep=" ")  # type: ignore[call-overload]
    except (ValueError, DeprecationWarning):
        return None
    # np.fromstring reads a lone "-" as 0 or as the sign of the next number. Found with
    # NumPy (which releases the GIL, so the pieces' threads check in parallel) rather than
    # a regular expression (0.26 s of a 1M-variable K=3 body on the 2-core CI machine, all
    # of it holding the GIL).
    text = np.frombuffer(body, dtype=np.uint8)
    minus = np.flatnonzero(text == ord("-"))
    if minus.size and (minus[-1] == text.size - 1
                       or bool(((text[minus + 1] - ord("0")) > 9).any())):
        return None
    return values


def _scan_lines(data: bytes, name: str) -> CNF:
    """The exact, line-by-line reader: the formula, or an error naming the line."""
    header: tuple[int, int] | None = None
    header_line = 0
    offsets = [0]
    flat: list[int] = []
    current = 0  # literals of the clause being read
    last_line = 0  # the line of its last literal
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        line = raw.strip()
        if not line or line[:1] == b"c":
            continue
        if line[:1] == b"%":
            break
        if line[:1] == b"p":
            if header is not None:
                raise CNFFormatError(f"{name}:{lineno}: a second 'p' header")
            header = _header_counts(name, lineno, line)
            header_line = lineno
            continue
        if header is None:
            raise CNFFormatError(f"{name}:{lineno}: clause before the 'p cnf' header")
        for token in line.split():
            if not _INTEGER.fullmatch(token):
                raise CNFFormatError(
                    f"{name}:{lineno}: {_show(token)} is not an integer literal"
                )
            lit = int(token)
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
            last_line = lineno
    if header is None:
        raise CNFFormatError(f"{name}: no 'p cnf' header")
    if current:
        raise CNFFormatError(
            f"{name}:{last_line}: the last clause has no terminating 0 (file cut short?)"
        )
    n_read = len(offsets) - 1
    if n_read != header[1]:
        raise CNFFormatError(
            f"{name}:{header_line}: header promises {header[1]} clauses but {n_read} were read"
        )
    return CNF.from_arrays(np.asarray(offsets, dtype=np.int64),
                           np.asarray(flat, dtype=np.int64), header[0])


def write_dimacs(cnf: CNF, target: str | os.PathLike | io.IOBase, *, comment: str = "") -> None:
    """Write ``cnf`` in DIMACS form, one clause per line (each ended by its 0).

    A path ending in ``.gz``, ``.xz`` or ``.bz2`` is compressed. The body is formatted by
    NumPy (digits by column, then one compress) in passes run by a thread each, and written
    as the passes come, in order.
    """
    head = "".join(f"c {line}\n" for line in comment.splitlines())
    head += f"p cnf {cnf.n_vars} {cnf.n_clauses}\n"
    if isinstance(target, (str, os.PathLike)):
        opener = _OPENERS.get(Path(target).suffix.lower())
        with written_whole(target, "wb") as raw, \
                (opener(raw, "wb") if opener else contextlib.nullcontext(raw)) as fh:
            fh.write(head.encode())
            for piece in format_clause_passes(cnf.offsets, cnf.literals):
                fh.write(piece)
        return
    text = isinstance(target, io.TextIOBase)
    target.write(head if text else head.encode())
    for piece in format_clause_passes(cnf.offsets, cnf.literals):
        target.write(piece.decode("ascii") if text else piece)


_OPENERS: dict[str, Any] = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}


# Clauses formatted per pass: the digit table of a pass (~10 bytes a token) then stays in
# the CPU's caches, and the passes run in parallel threads (NumPy's loops release the GIL).
# 4.2M 3-literal clauses on the 2-core CPU machine: one pass 3.1 s; passes of 2^18 clauses
# one after another 0.87 s; passes of 2^16 in two threads 0.41 s.
FORMAT_CLAUSES_PER_PASS = 1 << 16


def format_clauses(offsets: np.ndarray, literals: np.ndarray) -> bytes:
    """The DIMACS body of CSR clauses: each clause's literals and a 0, one clause a line."""
    return b"".join(format_clause_passes(offsets, literals))


def format_clause_passes(offsets: np.ndarray, literals: np.ndarray) -> Iterator[bytes]:
    """:func:`format_clauses` a pass at a time, in order (the passes run in threads)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    m = int(offsets.size - 1)
    step = FORMAT_CLAUSES_PER_PASS

    def one(first: int) -> bytes:
        rows = offsets[first : min(m, first + step) + 1]
        return _format_clause_rows(rows - rows[0], literals[rows[0] : rows[-1]])

    firsts = range(0, m, step)
    # At most one thread a pass (no passes gives 1, not 0: the same one-thread path).
    workers = backend.usable_cores(len(firsts))
    if workers <= 1:
        yield from map(one, firsts)
        return
    with ThreadPoolExecutor(workers) as pool:
        # At most a few passes ahead of the writer, not the whole body in memory.
        ahead = 2 * workers
        pending = [pool.submit(one, first) for first in firsts[:ahead]]
        for i in range(len(firsts)):
            piece = pending[i].result()
            pending[i] = None  # type: ignore[call-overload]
            if i + ahead < len(firsts):
                pending.append(pool.submit(one, firsts[i + ahead]))
            yield piece


def _format_clause_rows(offsets: np.ndarray, literals: np.ndarray) -> bytes:
    m = int(offsets.size - 1)
    n_tokens = int(literals.size) + m
    ends = np.asarray(offsets[1:], dtype=np.int64) + np.arange(m, dtype=np.int64)
    values = np.zeros(n_tokens, dtype=np.int64)
    is_literal = np.ones(n_tokens, dtype=bool)
    is_literal[ends] = False
    values[is_literal] = literals
    separators = np.full(n_tokens, ord(" "), dtype=np.uint8)
    separators[ends] = ord("\n")
    return format_integers(values, separators)


def format_integers(values: np.ndarray, separators: np.ndarray) -> bytes:
    """Decimal ASCII of every value, each followed by its separator byte, in one pass.

    A row per value: sign, D digits, separator (D the widest value's digit count), filled a
    column at a time by divmod; one boolean compress then drops the unused sign and
    leading-zero cells.
    """
    if values.size == 0:
        return b""
    values = values.astype(np.int64, copy=False)
    magnitude = np.abs(values).view(np.uint64)  # |-2**63| wraps to itself: as uint64, exact
    top = int(magnitude.max())
    if top < 2**31:
        magnitude = magnitude.astype(np.int32)
    width = len(str(top))
    cells = np.empty((values.size, width + 2), dtype=np.uint8)
    cells[:, 0] = ord("-")
    cells[:, -1] = separators
    used = np.ones(cells.shape, dtype=bool)
    used[:, 0] = values < 0
    rest = magnitude
    for column in range(width, 0, -1):
        rest, digit = np.divmod(rest, 10)
        cells[:, column] = digit
        if column < width:
            used[:, column] = magnitude >= 10 ** (width - column)
    cells[:, 1:-1] += ord("0")
    return cells[used].tobytes()
