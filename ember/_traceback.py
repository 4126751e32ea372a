"""Where the user's code is: the innermost stack frame outside the ember package."""

from __future__ import annotations

import os
import sys

_EMBER_DIR = os.path.dirname(os.path.abspath(__file__))


def user_frame():
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_EMBER_DIR):
        f = f.f_back
    return f


def user_where() -> str:
    """``file:line`` of the user's code calling into ember, for error messages."""
    f = user_frame()
    return "<unknown>" if f is None else f"{f.f_code.co_filename}:{f.f_lineno}"


def user_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn`` that points at the user's code."""
    f, level = sys._getframe(1), 1
    while f is not None and f.f_code.co_filename.startswith(_EMBER_DIR):
        f, level = f.f_back, level + 1
    return level
