"""Survey propagation for large random k-SAT, on the GPU or the CPU.

``random_ksat`` and DIMACS ``read_dimacs``/``write_dimacs`` make formulas; ``solve`` finds a
verified satisfying assignment or says why it could not; ``verify`` checks one.
"""

from .api import SolveResult, solve
from .cnf import CNF, CNFFormatError, parse_dimacs, random_ksat, read_dimacs, verify, write_dimacs

__all__ = [
    "CNF",
    "CNFFormatError",
    "SolveResult",
    "parse_dimacs",
    "random_ksat",
    "read_dimacs",
    "solve",
    "verify",
    "write_dimacs",
]
