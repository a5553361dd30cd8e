"""Andersen points-to analysis (inclusion-based, flow- and context-insensitive) on GPUs.

``load`` reads LSG constraint files, the Galois text form or C sources; ``solve`` returns a
:class:`Solution` (``points_to``, ``may_alias``, sizes, the ``_correct_soln`` writer).
"""

from .api import from_c, load, solve
from .constraints import (
    ConstraintFormatError,
    ConstraintFormatWarning,
    ConstraintSet,
    from_lists,
)
from .solution import Solution, read_solution

__all__ = ["ConstraintFormatError", "ConstraintFormatWarning", "ConstraintSet", "Solution",
           "from_c", "from_lists", "load", "read_solution", "solve"]
