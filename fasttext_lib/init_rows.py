"""The embedding table's initial values as a pure function of (seed, row): uniform in +-1/emsize.

fastText starts every input row uniform in ``[-1/dim, 1/dim)``. Drawing them from a counter-based
hash (splitmix64 of ``seed`` and the value's position) instead of a sequential generator means:

* any row can be regenerated on its own: a compact bundle stores only the rows training touched
  and rebuilds every other row exactly when a prediction needs it (compact.py);
* the 2M-row bigram table is written straight into the parameter's memory, on all cores (natively,
  ``featurize.cc``), instead of MXNet's sequential generator plus Gluon's copy of the result.

The numpy code below is the reference (used without the native library); both compute the same
float32 operations, bit for bit (tests/test_compact.py).
"""
import numpy as np

from . import native_features

_GOLDEN, _M1, _M2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def _splitmix64(z):
    z = z + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def scale_of(dim):
    return np.float32(1.0 / dim)


def initial_rows(seed, rows, dim, out=None):
    """The initial values of table ``rows`` (any int array) as float32 (len(rows), dim)."""
    rows = np.asarray(rows, dtype=np.int64).reshape(-1)
    if out is None:
        out = np.empty((len(rows), dim), dtype=np.float32)
    if native_features.available():
        return native_features.uniform_rows(seed, rows, dim, scale_of(dim), out)
    with np.errstate(over="ignore"):
        key = _splitmix64(np.array([int(seed) & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64))[0]
        step = max(1, (1 << 20) // max(dim, 1))
        for a in range(0, len(rows), step):
            index = rows[a:a + step, None].astype(np.uint64) * np.uint64(dim) + np.arange(dim, dtype=np.uint64)
            unit = (_splitmix64(key ^ index) >> np.uint64(40)).astype(np.float32) * np.float32(1.0 / 16777216.0)
            out[a:a + step] = (unit * np.float32(2.0) - np.float32(1.0)) * scale_of(dim)
    return out


def fill_table(seed, table):
    """Write every row's initial value into ``table`` (a writable float32 (rows, dim) array)."""
    if native_features.available():  # one call, on all cores
        return initial_rows(seed, np.arange(len(table)), table.shape[1], out=table)
    block = 1 << 16
    for a in range(0, len(table), block):
        b = min(len(table), a + block)
        initial_rows(seed, np.arange(a, b), table.shape[1], out=table[a:b])
    return table
