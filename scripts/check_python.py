"""`make`'s first step: is this Python one that requirements/lock.txt installs on?

The lock pins NumPy 1.23 (no build for Python 3.12, whose pip then fails after minutes of compiling)
and packages that need Python 3.10 (boto3, moto, papermill, anyio). Any other version is refused in
one line before the venv is made, instead of a page of pip errors. Python 3.12 with NumPy 1.26: see
README, "Newer Python".
"""
from __future__ import print_function  # a Python 2 (make PYTHON=python) is refused, not a SyntaxError

import sys

SUPPORTED = ((3, 10), (3, 11))


def problem(version):
    """The error line for ``version`` ((major, minor)), or None when the lock installs on it."""
    if SUPPORTED[0] <= tuple(version[:2]) <= SUPPORTED[-1]:
        return None
    return ("error: make bootstraps .venv from requirements/lock.txt, which installs on Python %d.%d to %d.%d; "
            "%s is Python %d.%d: run make with PYTHON=python3.11 (or python3.10)"
            % (SUPPORTED[0] + SUPPORTED[-1] + (sys.executable,) + tuple(version[:2])))


if __name__ == "__main__":
    message = problem(sys.version_info)
    if message:
        print(message, file=sys.stderr)
        sys.exit(2)
