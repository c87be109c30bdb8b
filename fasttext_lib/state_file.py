"""Adam's moments between the optimizer and a checkpoint's optimizer.npz, a block of rows at a time: held once.

Adam keeps two moment tables per weight, each the size of the embedding table (800 MB for a bigram model), and a
checkpoint holds them (optim.dump_states). A save copied them out whole (``asnumpy``) to write them, and a resume read
them whole (``np.load``), copied them again into MXNet arrays and kept the numpy ones for the rest of the run: a
1M x 100 adam run peaked at ~5 tables' worth (2.26 GB RSS, 1.49 GB without checkpoints) where its memory check
(table_memory.allocate_table) counted 3. Here a save writes each moment from its own memory (:class:`StateRows`,
which compact.write_npz writes as it writes a compact bundle's rows: the file np.savez makes, byte for byte), and a
resume reads each float32 array of the file into an MXNet array of its own (:func:`read_npz`), which the optimizer
then keeps as it is (optim._state_array).
"""
import zipfile

import numpy as np

from .compact import RowBlocks
from .table_memory import cpu_view, fill_from_file

BLOCK_VALUES = 1 << 20  # values written or read at a time (4 MB of float32)


class StateRows(RowBlocks):
    """An optimizer state's values (an NDArray: dense on any device, or row_sparse: its stored rows, which
    optim.dump_states writes with their row numbers) as consecutive blocks of rows. A dense CPU state's blocks are
    views of its memory (nothing copied); a GPU state's, or a row_sparse one's (MXNet's ``.data`` of a row_sparse
    array is a copy of all its rows), are copied a block at a time. Read while no step runs: the blocks are the
    state's values as they are when written, not when this was made."""

    def __init__(self, state):
        self.state = state
        rows = state.indices.shape[0] if state.stype == "row_sparse" else state.shape[0]
        self.shape, self.dtype = (rows, *state.shape[1:]), np.dtype(state.dtype)

    def __iter__(self):
        if not self.shape[0]:
            return
        step = max(1, BLOCK_VALUES // max(1, int(np.prod(self.shape[1:], dtype=np.int64))))
        if self.state.stype == "row_sparse":
            from mxnet import nd

            indices = self.state.indices
            for start in range(0, self.shape[0], step):
                yield nd.sparse.retain(self.state, indices[start:start + step]).data.asnumpy()
            return
        view = cpu_view(self.state)
        for start in range(0, self.shape[0], step):
            yield view[start:start + step] if view is not None else self.state[start:start + step].asnumpy()


def read_npz(path):
    """name -> array of the .npz file ``path`` (written by compact.write_npz or np.savez), as ``np.load(path,
    allow_pickle=False)`` reads it (its errors for a damaged file too), except that each C-ordered float32 array of
    at least one dimension is read into an MXNet CPU array of its own, a block at a time, with no copy of it beside."""
    from numpy.lib import format as npy

    arrays = {}
    with zipfile.ZipFile(path) as archive:
        for member in archive.infolist():
            name = member.filename[:-4] if member.filename.endswith(".npy") else member.filename
            with archive.open(member) as f:
                values = _read_float32(f, member.file_size) if member.filename.endswith(".npy") else None
            if values is None:
                with archive.open(member) as f:
                    values = npy.read_array(f, allow_pickle=False) if member.filename.endswith(".npy") else f.read()
            arrays[name] = values
    return arrays


def _read_float32(f, size):
    """The array of the .npy member ``f`` (``size`` bytes) as a CPU NDArray, read into its memory; ``None`` (nothing
    read past its header) where it is not a C-ordered float32 array of at least one dimension whose values the member
    holds whole: numpy reads those (and says what is wrong with them)."""
    import mxnet as mx
    from mxnet import nd
    from numpy.lib import format as npy

    try:
        version = npy.read_magic(f)
        reader = {(1, 0): npy.read_array_header_1_0, (2, 0): npy.read_array_header_2_0}.get(version)
        if reader is None:
            return None
        shape, fortran_order, dtype = reader(f)
    except ValueError:
        return None
    count = int(np.prod(shape, dtype=np.int64))
    if dtype != np.float32 or fortran_order or not shape or count * 4 != size - f.tell():
        return None
    values = nd.empty(shape, ctx=mx.cpu(), dtype="float32")
    if count:  # (numpy's reader raises a ValueError 'EOF: ...' for a member cut short: the same, for the same line)
        fill_from_file(cpu_view(values), f, BLOCK_VALUES * 4, ValueError("EOF: the array's values are cut short"))
    return values
