"""Progress bars that render as plain text everywhere (terminals, papermill, nbval).

``tqdm.auto`` would draw a widget in notebooks, which executed notebooks cannot replay and nbval
cannot compare; the plain bar writes to stderr, which nbval is told to ignore (the repository's
top-level conftest.py). Only training and downloads use it: serving never imports tqdm.
"""
import sys

from tqdm import tqdm


def bar(iterable=None, total=None, desc=None, disable=False, unit="it", **kwargs):
    return tqdm(iterable, total=total, desc=desc, disable=disable, unit=unit, file=sys.stderr,
                mininterval=1.0, dynamic_ncols=False, ncols=100, leave=True, **kwargs)
