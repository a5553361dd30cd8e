"""Every assignment of a small formula checked at once, as bitsets: a complete answer
(a model, or a proof of unsatisfiability) where the assignments are no more than the flips
the local search would be allowed.

A local search whose flip budget covers the whole assignment space of the variables that
occur in clauses can only be a slower, incomplete way to look at that space: `morphgpu
sat --random 3 --ratio 100` (300 clauses on 3 variables, unsatisfiable with no unit clause)
spent minutes of CPU rounds before answering UNKNOWN. Here assignment ``a`` gives the j-th
variable that occurs the value of bit j of ``a``; each variable's truth over all 2^k
assignments is a packed bitset, a clause is the OR of its literals' bitsets (complemented
when negative), the formula the AND of its clauses'. Work: literals x 2^k / 8 bytes, so
0.3 s at 2^19 assignments and 6,000 literals on a 2-core host, where the same budget of
local-search flips takes tens of seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..unique import sorted_unique
from .cnf import CNF

# Literal bitsets combined at a time (bounds the working array to BLOCK x 2^k / 8 bytes).
_BLOCK_BYTES = 1 << 26
_HEAD = 4096  # literals looked at before the whole formula's variables are counted
# The truth table is built as k x 2^k int64 before it is packed: 3 GiB at 24 variables, so a
# larger local-search budget given by hand does not make the enumeration exhaust memory.
_MOST_VARIABLES = 24


@dataclass(frozen=True)
class Enumerated:
    n_used: int  # variables that occur in clauses
    assignments: int  # 2 ** n_used, every one checked
    model: np.ndarray | None  # bool per variable of the formula (unused ones False), or None


def check(cnf: CNF, max_assignments: int) -> Enumerated | None:
    """The answer by enumeration when the variables occurring in ``cnf`` have at most
    ``max_assignments`` assignments together, else None. ``cnf`` has no empty clause."""
    if max_assignments < 1:
        return None
    # The variables of the first few thousand literals are a lower bound on the formula's:
    # a large formula is turned away on them, not on a sort of all its literals (0.43 s at
    # 12.6M literals on the 2-core host, a fifth of a 1M-variable solve).
    # k variables fit when 2^k <= max_assignments, and the k x 2^k table stays in memory.
    most = min(int(max_assignments).bit_length() - 1, _MOST_VARIABLES)
    head = np.abs(cnf.literals[:_HEAD].astype(np.int64))
    if sorted_unique(head).size > most:
        return None
    used = sorted_unique(np.abs(cnf.literals.astype(np.int64)) - 1)
    k = int(used.size)
    if k > most:
        return None
    count = 1 << k
    if cnf.n_clauses == 0 or k == 0:
        return Enumerated(k, count, np.zeros(cnf.n_vars, dtype=bool))
    a = np.arange(count, dtype=np.int64)
    # Row j: where the j-th used variable is True; packed to count / 8 bytes (at least 1).
    truth = np.packbits(((a[None, :] >> np.arange(k)[:, None]) & 1).astype(bool), axis=1,
                        bitorder="little")
    row = np.searchsorted(used, np.abs(cnf.literals.astype(np.int64)) - 1)
    flip = np.where(cnf.literals > 0, 0, 0xFF).astype(np.uint8)[:, None]  # XOR: negation
    holds = np.full(truth.shape[1], 0xFF, dtype=np.uint8)
    offsets = cnf.offsets
    # Blocks of whole clauses, small at first and doubling: an unsatisfiable formula
    # usually empties `holds` within a few hundred clauses, and the loop stops there.
    per_block, most = 256, max(256, _BLOCK_BYTES // truth.shape[1])
    first = 0
    while first < cnf.n_clauses and holds.any():
        last = int(np.searchsorted(offsets, offsets[first] + per_block, side="right")) - 1
        last = min(max(last, first + 1), cnf.n_clauses)
        lo, hi = int(offsets[first]), int(offsets[last])
        bits = truth[row[lo:hi]]
        bits ^= flip[lo:hi]
        clause_bits = np.bitwise_or.reduceat(bits, offsets[first:last] - lo, axis=0)
        holds &= np.bitwise_and.reduce(clause_bits, axis=0)
        first, per_block = last, min(2 * per_block, most)
    satisfying = np.flatnonzero(np.unpackbits(holds, bitorder="little")[:count])
    if satisfying.size == 0:
        return Enumerated(k, count, None)
    model = np.zeros(cnf.n_vars, dtype=bool)
    model[used] = (int(satisfying[0]) >> np.arange(k)) & 1
    return Enumerated(k, count, model)
