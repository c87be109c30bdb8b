"""MXNet's ``.params`` files read straight into parameters already allocated: a resumed run holds its table once.

A run resumed from a checkpoint loads model.params into a model whose table train() has already allocated (after
its memory check) and seeded. Gluon's ``load_parameters`` reads the whole file into arrays of its own (``nd.load``)
and then copies them into the parameters: for a bigram model a second 800 MB table for a moment, which that
check did not count (a resume's peak was two tables; a resume on a machine with room for one was killed). Here
each array's bytes go from the file into its parameter's memory (table_memory.cpu_view): the same bytes, so
the same numbers as Gluon's load.

The layout is MXNet 1.x's ``NDArray::Save`` of a list (src/ndarray/ndarray.cc; mxnet==1.9.1 is pinned), as
``nd.save`` and so checkpoints.save_checkpoint write it, little-endian: the list's magic and a reserved word
(uint64 each), the array count (uint64), each array (its magic and storage type, int32 ndim and int64 dims,
int32 device type and id, int32 type flag, the values), then the names (uint64 count, each a uint64 length and
its bytes). Anything else (a sparse or 0-d array, another dtype or magic, names or shapes that do not match the
model, a file cut short) is read by Gluon's ``load_parameters`` instead, which also raises its usual errors.
"""
import os
import struct

import numpy as np

from .table_memory import cpu_view, fill_from_file

_LIST_MAGIC = 0x112  # kMXAPINDArrayListMagic
_ARRAY_MAGIC = 0xF993FAC9  # NDARRAY_V2_MAGIC
_DENSE, _FLOAT32 = 0, 0  # kDefaultStorage; mshadow::kFloat32
_CHUNK = 64 << 20  # bytes read at a time


class _NotThisLayout(Exception):
    pass


def read_into(params, filename):
    """Read the ``.params`` file ``filename`` into ``params`` (name -> initialized Gluon Parameter), in place; False
    (nothing read) where the file or the parameters are not what this reads: each parameter dense float32 on one
    CPU context, the file's arrays theirs by name, shape and dtype."""
    with open(filename, "rb") as f:
        try:
            arrays = _arrays(f, os.fstat(f.fileno()).st_size)
        except (_NotThisLayout, struct.error, UnicodeDecodeError):
            return False
        if set(arrays) != set(params):
            return False
        targets = []
        for name, param in params.items():
            contexts = param.list_ctx()
            view = cpu_view(param.data(contexts[0])) if len(contexts) == 1 else None
            shape, offset = arrays[name]
            if view is None or view.shape != shape:
                return False
            targets.append((view, offset))
        # (a resume's line is 'model.params cannot be loaded (<this message>)': checkpoints.py shows no type)
        cut_short = EOFError(f"{os.path.basename(filename)} was cut short while it was read")
        for view, offset in targets:  # (sizes checked against the file's: only a file cut short meanwhile fails)
            f.seek(offset)
            fill_from_file(view, f, _CHUNK, cut_short)
    return True


def _arrays(f, size):
    """name -> (shape, offset of the values) of every float32 array in the file ``f`` of ``size`` bytes."""
    def take(layout):
        return struct.unpack("<" + layout, f.read(struct.calcsize("<" + layout)))

    magic, _reserved, count = take("QQQ")
    if magic != _LIST_MAGIC or count > size:
        raise _NotThisLayout
    found = []
    for _ in range(count):
        array_magic, storage, ndim = take("Iii")
        if array_magic != _ARRAY_MAGIC or storage != _DENSE or not 0 < ndim <= 8:
            raise _NotThisLayout
        shape = take(f"{ndim}q")
        _device_type, _device_id, type_flag = take("iii")
        offset = f.tell()
        end = offset + int(np.prod(shape)) * 4
        if type_flag != _FLOAT32 or min(shape) < 0 or end > size:
            raise _NotThisLayout
        f.seek(end)
        found.append((tuple(shape), offset))
    (names,) = take("Q")
    if names != count:
        raise _NotThisLayout
    keys = []
    for _ in range(count):
        (length,) = take("Q")
        if length > size:
            raise _NotThisLayout
        keys.append(f.read(length).decode("utf-8"))
    if f.tell() != size or len(set(keys)) != count:
        raise _NotThisLayout
    return dict(zip(keys, found))
