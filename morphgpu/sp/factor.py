"""The factor graph SP runs on, built from a CNF on either side (NumPy or CuPy).

Clause→literal is a fixed-width array: edge ``e = a * width + j`` is the j-th literal of
clause ``a`` (paper §6.3: a direct offset instead of a row pointer); narrower clauses are
padded with variable -1. Literal→clause is CSR over edge ids, grouped by variable.

Building it also cleans the formula: duplicate literals are merged, tautological clauses
(x and ¬x) dropped since every assignment satisfies them, and an empty clause is reported
(the formula is then unsatisfiable and SP has nothing to do).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import backend
from ..csr import index_dtype
from .cnf import CNF


@dataclass(frozen=True, eq=False)
class FactorGraph:
    n_vars: int
    n_clauses: int
    width: int
    lit_var: Any  # (n_clauses * width,) 0-based variable, -1 for padding
    lit_neg: Any  # (n_clauses * width,) int8, 1 where the literal is negated
    var_offsets: Any  # (n_vars + 1,) int64: a variable's edges in var_edges
    var_edges: Any  # edge ids grouped by variable
    has_empty_clause: bool
    dropped_tautologies: int

    @property
    def side(self) -> str:
        return backend.side_of(self.lit_var)


def build(cnf: CNF, side: str) -> FactorGraph:
    """The cleaned factor graph of ``cnf`` with its arrays on ``side``."""
    xp = backend.xp_for(side)  # type: ignore[arg-type]
    n, m = cnf.n_vars, cnf.n_clauses
    widths = np.diff(cnf.offsets)
    has_empty = bool(np.any(widths == 0))
    uniform = m > 0 and bool(np.all(widths == widths[0]))
    lits = backend.to_side(cnf.literals, side)  # type: ignore[arg-type]
    var_dtype = lits.dtype
    dropped = 0
    if uniform and _distinct_rows(xp, lits.reshape(m, int(widths[0]))):
        width = int(widths[0])
        table = lits.reshape(m, width)
    else:
        table, width, dropped = _clean_general(xp, cnf, lits)
        m = table.shape[0]
    lit_var = xp.where(table != 0, xp.abs(table) - 1, -1).astype(var_dtype).ravel()
    lit_neg = (table < 0).astype(xp.int8).ravel()
    var_offsets, var_edges = _by_variable(xp, lit_var, n, side, index_dtype(m * width))
    return FactorGraph(n, m, width, lit_var, lit_neg, var_offsets, var_edges, has_empty, dropped)


def frozen_residual(fg: FactorGraph, fixed: Any) -> FactorGraph | None:
    """What a local search with the fixed variables frozen can change: the clauses no
    fixed literal satisfies, in their order, each with its fixed (false) literals turned
    to padding, over the same variables. ``fixed``: per variable 0 (free), > 0 (true) or
    < 0 (false), on fg's side.

    A clause a fixed literal satisfies stays satisfied whatever the free variables do, and
    it never makes a free variable its sole true literal, so it changes no break count:
    the walk on the residual flips as on the whole formula and visits only the clauses that
    matter. After decimation that is a small share of them (most clauses of a free variable
    hold a true fixed literal), and every flip and claim walks the variable's clauses.
    None when a clause has every literal fixed and false (the walk on the whole formula
    reports it, stuck). ``fg`` itself when nothing is fixed: the residual would be a copy."""
    xp = backend.xp_for(fg.side)  # type: ignore[arg-type]
    if not bool((fixed != 0).any()):
        return fg
    m, w = fg.n_clauses, max(fg.width, 1)
    var = fg.lit_var.reshape(m, w)
    present = var >= 0
    value = fixed[xp.where(present, var, 0)]
    free = present & (value == 0)
    satisfied = (present & (value != 0) & ((value > 0) != (fg.lit_neg.reshape(m, w) != 0))
                 ).any(axis=1)
    del value
    if bool((~satisfied & ~free.any(axis=1)).any()):
        return None
    keep = xp.flatnonzero(~satisfied)
    kept = free[keep]
    lit_var = xp.where(kept, var[keep], -1).astype(fg.lit_var.dtype).ravel()
    lit_neg = xp.where(kept, fg.lit_neg.reshape(m, w)[keep], 0).astype(xp.int8).ravel()
    # The edge ids keep the whole graph's type: the engines' kernels are built for it.
    var_offsets, var_edges = _by_variable(xp, lit_var, fg.n_vars, fg.side, fg.var_edges.dtype)
    return FactorGraph(fg.n_vars, int(keep.size), fg.width, lit_var, lit_neg, var_offsets,
                       var_edges, False, 0)


def _by_variable(xp: Any, lit_var: Any, n: int, side: str, edge_dtype: Any
                 ) -> tuple[Any, Any]:
    """(var_offsets, var_edges): the literal→clause CSR over the edge ids of lit_var."""
    edge_ids = xp.flatnonzero(lit_var >= 0).astype(edge_dtype)
    owners = lit_var[edge_ids]
    order = xp.argsort(owners, kind="stable") if side == "cpu" else xp.argsort(owners)
    var_edges = edge_ids[order]
    degree = xp.bincount(owners.astype(xp.int64), minlength=n) if n else xp.zeros(0, xp.int64)
    var_offsets = xp.zeros(n + 1, dtype=xp.int64)
    if n:
        xp.cumsum(degree, out=var_offsets[1:])
    return var_offsets, var_edges


def _distinct_rows(xp: Any, table: Any) -> bool:
    """True when no clause repeats a variable (the usual random k-SAT case: no cleaning)."""
    if table.shape[1] < 2:
        return True
    s = xp.sort(xp.abs(table), axis=1)
    return not bool((s[:, 1:] == s[:, :-1]).any())


def _clean_general(xp: Any, cnf: CNF, lits: Any) -> tuple[Any, int, int]:
    """Merge duplicate literals, drop tautologies and empty clauses; pad to the widest clause."""
    m = cnf.n_clauses
    offsets = backend.to_side(cnf.offsets, backend.side_of(lits))
    clause_of = xp.repeat(xp.arange(m, dtype=xp.int64), xp.diff(offsets))
    lits64 = lits.astype(xp.int64)
    var = xp.abs(lits64)
    # Sort by (clause, variable, sign) so duplicates and x/¬x pairs sit side by side.
    key_order = xp.lexsort(xp.stack([lits64, var, clause_of]))
    c, v, lit = clause_of[key_order], var[key_order], lits64[key_order]
    same_var = xp.zeros(c.size, dtype=bool)
    if c.size > 1:
        same_var[1:] = (c[1:] == c[:-1]) & (v[1:] == v[:-1])
    same_lit = xp.zeros(c.size, dtype=bool)
    if c.size > 1:
        same_lit[1:] = same_var[1:] & (lit[1:] == lit[:-1])
    tautology_pair = same_var & ~same_lit
    tautological = xp.zeros(m, dtype=bool)
    tautological[c[tautology_pair]] = True
    keep = ~same_lit & ~tautological[c]
    c, lit = c[keep], lit[keep]
    kept_clause = ~tautological & (xp.diff(offsets) > 0)
    new_index = xp.cumsum(kept_clause) - 1
    m_new = int(kept_clause.sum())
    widths = xp.bincount(c, minlength=m)[kept_clause] if m else xp.zeros(0, xp.int64)
    width = max(1, int(widths.max())) if m_new else 1
    starts = xp.zeros(m_new + 1, dtype=xp.int64)
    if m_new:
        xp.cumsum(widths, out=starts[1:])
    row = new_index[c]
    col = xp.arange(c.size, dtype=xp.int64) - starts[row]
    table = xp.zeros((m_new, width), dtype=lits.dtype)
    table[row, col] = lit.astype(lits.dtype)
    return table, width, int(tautological.sum())
