"""Survey propagation for large random k-SAT, on the GPU or the CPU.

``random_ksat`` and DIMACS ``read_dimacs``/``write_dimacs`` make formulas; ``solve`` finds a
verified satisfying assignment, proves unsatisfiability where unit propagation can, or says
why it could not; ``verify`` checks one; ``Solver`` is PySAT's solver object over it.
"""

from .api import SAT, UNKNOWN, UNSAT, SolveResult, solve
from .cnf import CNF, CNFFormatError, parse_dimacs, random_ksat, read_dimacs, verify, write_dimacs
from .solver import Solver

__all__ = [
    "CNF",
    "CNFFormatError",
    "SAT",
    "UNKNOWN",
    "UNSAT",
    "SolveResult",
    "Solver",
    "parse_dimacs",
    "random_ksat",
    "read_dimacs",
    "solve",
    "verify",
    "write_dimacs",
]
