"""A PySAT-style solver object over :func:`morphgpu.sp.solve`.

For code written against PySAT's ``pysat.solvers.Solver``::

    from morphgpu.sp import Solver
    with Solver(bootstrap_with=[[1, 2], [-1, 2]], device="cpu", seed=1) as s:
        s.add_clause([-2, 3])
        if s.solve():
            print(s.get_model())        # [1, 2, 3] or [-1, 2, 3]: DIMACS literals

Formulas may be lists of clauses, a PySAT ``CNF`` (its ``clauses`` and ``nv``), or a
:class:`morphgpu.sp.CNF`. One difference to keep in mind: survey propagation is
incomplete, so :meth:`Solver.solve` answers ``True`` (a verified model), ``False``
(unsatisfiability proved by unit propagation) or ``None`` (not decided; PySAT's
``solve_limited`` uses ``None`` the same way). :attr:`Solver.result` keeps the last
:class:`~morphgpu.sp.api.SolveResult`, with the reason and the seed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .api import SAT, UNSAT, SolveResult, solve
from .cnf import CNF


def _clauses_of(formula: Any) -> tuple[list[list[int]], int]:
    """(clauses, declared variable count) of a formula in any of the accepted forms."""
    if isinstance(formula, CNF):
        return formula.clauses(), formula.n_vars
    if hasattr(formula, "clauses") and not isinstance(formula, (list, tuple)):
        # PySAT's CNF (and the hard part of a WCNF via .hard is not taken: say so)
        if hasattr(formula, "soft") and getattr(formula, "soft", None):
            raise ValueError("Solver: weighted formulas (WCNF with soft clauses) are not "
                             "supported; pass wcnf.hard or a CNF")
        clauses = formula.clauses
        if callable(clauses):
            clauses = clauses()
        return [_clause(c) for c in clauses], int(getattr(formula, "nv", 0) or 0)
    if isinstance(formula, (str, bytes)):
        raise ValueError("give clauses, not a file name (read it with "
                         "morphgpu.sp.read_dimacs or pysat.formula.CNF(from_file=...))")
    return [_clause(c) for c in formula], 0


def as_cnf(formula: Any) -> CNF:
    """A :class:`~morphgpu.sp.CNF` from a list of clauses, a PySAT ``CNF`` or a CNF."""
    if isinstance(formula, CNF):
        return formula
    try:
        clauses, declared = _clauses_of(formula)
    except TypeError:
        raise ValueError(f"cnf: expected a morphgpu.sp.CNF, a PySAT CNF or a list of clauses, "
                         f"got {type(formula).__name__}") from None
    used = max((abs(x) for c in clauses for x in c), default=0)
    return CNF.from_clauses(clauses, n_vars=max(used, declared))


def _clause(clause: Iterable[Any]) -> list[int]:
    try:
        items = list(clause)
    except TypeError:
        raise ValueError(f"cnf: clause {clause!r} is not a list of literals") from None
    # int() truncated 1.5 to variable 1 and read True as 1 (a wrong formula, solved);
    # of 'a' it said only "invalid literal for int()".
    for x in items:
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
            raise ValueError(f"cnf: literal {x!r} in clause {items}: literals are nonzero "
                             f"integers")
    lits = [int(x) for x in items]
    if any(x == 0 for x in lits):
        raise ValueError(f"Solver: literal 0 in clause {lits} (0 only ends DIMACS lines)")
    return lits


class Solver:
    """Collects clauses, then solves them with survey propagation (see the module notes).

    ``device``, ``seed`` and the other keywords go to :func:`morphgpu.sp.solve`;
    ``bootstrap_with`` is a first formula; ``name`` is accepted for PySAT compatibility.
    """

    def __init__(self, name: str = "morphgpu-sp", bootstrap_with: Any = None, *,
                 device: str = "auto", seed: int | None = None, **solve_options: Any) -> None:
        self.name = name
        self.clauses: list[list[int]] = []
        self.n_vars = 0
        self.options = {"device": device, "seed": seed, **solve_options}
        self.result: SolveResult | None = None
        if bootstrap_with is not None:
            self.append_formula(bootstrap_with)

    # PySAT's context manager and clean-up
    def __enter__(self) -> Solver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.delete()

    def delete(self) -> None:
        self.clauses = []
        self.result = None

    def add_clause(self, clause: Iterable[Any], no_return: bool = True) -> None:
        lits = _clause(clause)
        self.clauses.append(lits)
        self.n_vars = max(self.n_vars, max((abs(x) for x in lits), default=0))

    def append_formula(self, formula: Any, no_return: bool = True) -> None:
        clauses, declared = _clauses_of(formula)
        for c in clauses:
            self.add_clause(c)
        self.n_vars = max(self.n_vars, declared)

    def nof_vars(self) -> int:
        return self.n_vars

    def nof_clauses(self) -> int:
        return len(self.clauses)

    def solve(self, assumptions: Iterable[Any] = ()) -> bool | None:
        """True: a verified model; False: proved unsatisfiable; None: not decided."""
        units = [[int(a)] for a in assumptions]
        n = max([self.n_vars, *(abs(u[0]) for u in units)])
        formula = CNF.from_clauses(self.clauses + units, n_vars=n)
        self.result = solve(formula, **self.options)
        if self.result.status == SAT:
            return True
        if self.result.status == UNSAT:
            return False
        return None

    solve_limited = solve

    def get_status(self) -> bool | None:
        if self.result is None:
            return None
        return {SAT: True, UNSAT: False}.get(self.result.status)

    def get_model(self) -> list[int] | None:
        """The last model as DIMACS literals ``[1, -2, 3, ...]``, or None."""
        if self.result is None or self.result.assignment is None:
            return None
        return [i + 1 if v else -(i + 1) for i, v in enumerate(self.result.assignment.tolist())]

    def get_core(self) -> None:
        return None  # no unsatisfiable cores from an incomplete solver
