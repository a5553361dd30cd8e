"""Checks for the scalar arguments of the public functions: integers, reals and seeds.

Why a module of its own: the generators, DMR, SP and PTA each grew a near-copy of the
same few checks, and the copies drifted (one refused ``np.bool_``, another not). Two
things make the checks needed at all:

* ``bool`` is an ``int`` to Python. ``int(True)`` is 1, so ``kronecker(True)`` was a
  scale-1 graph and ``seed=True`` seed 1, silently. Every check here refuses ``bool``
  and ``np.bool_`` before asking whether a value is a number.
* NumPy's own refusals do not name the argument ("expected non-negative integer",
  "SeedSequence expects int or sequence of ints"), and ``int()``/``float()`` truncate
  1.5 or read ``"3"``. Each refusal here names the argument it is about.

NumPy integers and floats are accepted and returned as Python ``int``/``float`` (a NumPy
integer wraps past 2**63 where a Python int does not). Each check takes the exception
type its caller has always raised (``error``) and, where a caller's wording is pinned by
its tests, a ``message`` template formatted with ``name``, ``value``, ``low``, ``high``.

This is a floor module: it imports only NumPy.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["generator", "integer", "is_integer", "is_real", "real", "seed"]

_INTEGER_TYPES = (int, np.integer)
_REAL_TYPES = (int, float, np.integer, np.floating)
_BOOL_TYPES = (bool, np.bool_)


def is_integer(value: Any) -> bool:
    """True for a Python or NumPy integer that is not a bool."""
    return isinstance(value, _INTEGER_TYPES) and not isinstance(value, _BOOL_TYPES)


def is_real(value: Any) -> bool:
    """True for a Python or NumPy integer or float that is not a bool (NaN included)."""
    return isinstance(value, _REAL_TYPES) and not isinstance(value, _BOOL_TYPES)


def _refuse(error: type[Exception], message: str, name: str, value: Any,
            low: Any, high: Any) -> Exception:
    return error(message.format(name=name, value=value, low=low, high=high))


def integer(
    value: Any,
    name: str,
    *,
    low: int | None = None,
    high: float | None = None,
    error: type[Exception] = ValueError,
    message: str | None = None,
    range_message: str | None = None,
) -> int:
    """``value`` as a Python int in [low, high] (either bound may be left out).

    ``message`` is the refusal of a non-integer (and, without ``range_message``, of one
    out of range); ``range_message`` the refusal of an integer out of range. Both are
    templates over ``name``, ``value``, ``low`` and ``high``.
    """
    if message is None:
        message = "{name} must be an integer, got {value!r}"
        if range_message is None and (low is not None or high is not None):
            range_message = ("{name} must be an integer in "
                             "[{low}, {high}], got {value!r}")
    if not is_integer(value):
        raise _refuse(error, message, name, value, low, high)
    out = int(value)
    if (low is not None and out < low) or (high is not None and out > high):
        raise _refuse(error, range_message or message, name, value, low, high)
    return out


def flag(value: Any, name: str, *, error: type[Exception] = ValueError) -> bool:
    """``value`` as a bool: only True or False (Python or NumPy). A string such as "false"
    is truthy to ``bool()``, so taking it would silently mean the opposite."""
    if not isinstance(value, _BOOL_TYPES):
        raise error(f"{name} must be True or False, got {value!r}")
    return bool(value)


def real(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    allow_nan: bool = False,
    finite: bool = False,
    error: type[Exception] = ValueError,
    message: str = "{name} must be a real number, got {value!r}",
) -> float:
    """``value`` as a float: a real number, not a bool, not NaN (unless ``allow_nan``),
    finite where ``finite``, in [low, high] where given; ``message`` (a template over
    ``name``, ``value``, ``low``, ``high``) is the refusal."""
    if not is_real(value):
        raise _refuse(error, message, name, value, low, high)
    if isinstance(value, _INTEGER_TYPES):
        # math.isfinite(10**400) and float(10**400) raise OverflowError
        try:
            out = float(value)
        except OverflowError:
            raise _refuse(error, message, name, value, low, high) from None
    else:
        out = float(value)
    if out != out:
        if allow_nan:
            return out
        raise _refuse(error, message, name, value, low, high)
    if (finite and not math.isfinite(out)) or (low is not None and out < low) or (
            high is not None and out > high):
        raise _refuse(error, message, name, value, low, high)
    return out


def seed(
    value: Any,
    name: str = "seed",
    *,
    allow_none: bool = False,
    allow_numpy: bool = False,
    error: type[Exception] = ValueError,
    message: str = "{name} must be a non-negative integer, got {value!r}",
) -> Any:
    """A seed: a non-negative integer (returned as an int); None where ``allow_none``;
    a NumPy ``Generator`` or ``SeedSequence`` (returned as given) where ``allow_numpy``."""
    if value is None and allow_none:
        return None
    if allow_numpy and isinstance(value, (np.random.Generator, np.random.SeedSequence)):
        return value
    if not is_integer(value) or value < 0:
        raise _refuse(error, message, name, value, 0, None)
    return int(value)


def generator(
    value: Any,
    name: str = "seed",
    *,
    error: type[Exception] = ValueError,
    message: str = "{name}: expected a non-negative integer, got {value!r} ({reason})",
) -> np.random.Generator:
    """``np.random.default_rng(value)`` (anything it takes), its refusal naming the
    argument and quoting NumPy's reason (``{reason}`` in ``message``)."""
    try:
        return np.random.default_rng(value)
    except (TypeError, ValueError) as exc:
        raise error(message.format(name=name, value=value, reason=exc)) from exc
