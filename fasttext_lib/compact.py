"""Compact bundles: store only the embedding rows training changed; rebuild the rest from the seed.

Every row starts as a pure function of (seed, row) (init_rows.py), and training updates only the
rows its batches touch (lazy optimizers). A bigram model of a small corpus changes a few thousand of
its 2M rows, yet a full bundle writes (and an endpoint downloads and loads) all 800 MB. A compact
bundle writes

* ``embedding_rows.npz``: the seed, the changed rows' numbers and their values: float32 (exact),
  float16 (half the size, values rounded to ~3 significant digits), or quantized per row like
  fastText's ``quantize``, to a quarter (int8) or an eighth (int4) of float32's size: each row is
  stored as its largest magnitude (float32) and codes in -127..127 or -7..7 (two per byte);
  ``values = codes * scale / (2**(bits-1) - 1)``;
* ``model.params`` with only the small output layer;

and :func:`materialize` rebuilds the full table: every row from the seed (natively, on all cores), then
the stored rows on top. With float32 the rebuilt model is bit-identical to the trained one. Prediction
on the CPU (predict.Predictor, the endpoint) does not rebuild it: :class:`StoredRows` hands out each
document's rows, stored or made from the seed, and the full table is built only if something asks
for the model itself.

Why per-row quantization: at Yelp size nearly every one of the 2M bigram buckets is changed, so
storing only changed rows saves nothing there, and the trained rows are spread nearly uniformly in
their range (their int8 codes have ~7.9 bits of entropy: zlib saves <1%). Uniform codes per row are
then the simple scheme that reaches 1/4 and 1/8 of the size; RESULTS.md section 4 measures the
prediction error and accuracy of each.

Which rows changed is read from the table itself (a row equal to its initial value is not stored,
whether or not a batch touched it), so it needs no bookkeeping during training and also holds for
resumed or distributed runs. "Initial" means the seeded value: rows a run started from pretrained
vectors (``--pretrained-vectors``, pretrained.py) differ from it, so they are stored even where training
never changed them (tests/test_vectors.py).
"""
import os
import zipfile

import numpy as np

from . import native_features
from .errors import FastTextError, did_you_mean
from .init_rows import initial_rows, scale_of

ROWS_FILE = "embedding_rows.npz"
DTYPES = ("float32", "float16", "int8", "int4")
QUANTIZED_BITS = {"int8": 8, "int4": 4}
LOSSY = ("float16", *QUANTIZED_BITS)  # rounded rows: the bundle scores (slightly) otherwise than the model trained
CHOICES = ("auto", "none") + DTYPES  # train --compact
# How a refusal names a choice, as its caller's user gives it (save's ``said_as``): save_bundle's argument
# (compact='float16': the Python API, the notebooks), or the command line's flag (--compact float16: cli)
COMPACT_ARGUMENT, COMPACT_FLAG = "compact", "--compact"
# ...and how a line that advises a compact bundle names how to make one (made_with): as above, or both where its
# reader may have made the bundle either way (an endpoint's log: sm_serve)
COMPACT_EITHER = "either"
# auto: compact (float32, exact) when at most this share of the rows changed. The bundle is then <= ~1/4
# of the full one, and loading it (the whole table rebuilt natively from the seed, then the stored rows)
# is faster than reading the full table; near all rows (Yelp-size data) the full bundle loads faster
# (docs/RESULTS.md section 4, Bundles: 5.9 s vs 3.9 s with every bucket touched).
AUTO_MAX_SHARE = 0.25
_BLOCK = 1 << 16  # rows compared per step: bounds the regenerated temporaries


def changed_rows(table, seed):
    """Numbers (int64, ascending) of the rows of ``table`` (numpy, float32) that differ from their initial value.

    Natively (featurize.cc, all cores, no temporary table) when available; numpy below is the reference."""
    if native_features.available() and table.dtype == np.float32 and table.flags.c_contiguous:
        return native_features.changed_rows(seed, table, scale_of(table.shape[1])).astype(np.int64)
    found = []
    for a in range(0, len(table), _BLOCK):
        b = min(len(table), a + _BLOCK)
        differs = (table[a:b] != initial_rows(seed, np.arange(a, b), table.shape[1])).any(axis=1)
        found.append(a + np.flatnonzero(differs))
    return np.concatenate(found) if found else np.zeros(0, np.int64)


def quantize(values, bits):
    """Per-row symmetric quantization: (codes, scales). int8 codes one per value; int4 two per byte."""
    top = 2 ** (bits - 1) - 1
    scales = np.abs(values).max(axis=1).astype(np.float32) if len(values) else np.zeros(0, np.float32)
    step = np.where(scales > 0, scales / top, 1.0).astype(np.float32)[:, None]
    codes = np.clip(np.rint(values / step), -top, top).astype(np.int8)
    if bits == 4:  # offset to 0..14, two per byte (an odd width gets a zero pad column)
        nibbles = (codes + 8).astype(np.uint8)
        if nibbles.shape[1] % 2:
            nibbles = np.concatenate([nibbles, np.full((len(nibbles), 1), 8, np.uint8)], axis=1)
        codes = (nibbles[:, 0::2] << 4) | nibbles[:, 1::2]
    return codes, scales


def dequantize(codes, scales, bits, emsize):
    """float32 values of :func:`quantize`'s output (``emsize`` columns)."""
    top = 2 ** (bits - 1) - 1
    if bits == 4:
        nibbles = np.empty((len(codes), codes.shape[1] * 2), np.int8)
        nibbles[:, 0::2], nibbles[:, 1::2] = codes >> 4, codes & 15
        codes = nibbles[:, :emsize] - 8
    return codes.astype(np.float32) * (scales / top)[:, None].astype(np.float32)


def _table(model):
    from .table_memory import cpu_view

    weight = model.embedding.weight.data(model.embedding.weight.list_ctx()[0])
    table = cpu_view(weight)
    return (weight.asnumpy() if table is None else table), weight  # (the weight keeps the view's memory alive)


def check_choice(compact):
    """Refuse a ``compact`` that is none of :data:`CHOICES` (None, and False as before, are "none"), before anything is
    written: the writer's own check came after a trial table was put in place, as a ValueError naming "dtype" and
    four of the six choices."""
    if compact is None or compact is False or (isinstance(compact, str) and compact in CHOICES):
        return
    raise FastTextError(f"compact must be one of {', '.join(CHOICES)} (or None), got {compact!r}"
                        f"{did_you_mean(compact, CHOICES)}")


def choose(model, seed, compact):
    """``(dtype or None, changed rows or None)`` for ``compact`` (one of :data:`CHOICES` or None):
    "auto" is float32 when at most :data:`AUTO_MAX_SHARE` of the rows changed (the rows found are
    returned for :func:`save`), else None (a full bundle); "none" and None are None."""
    if compact in (None, "none"):
        return None, None
    if compact != "auto":
        return compact, None
    table, _ = _table(model)
    rows = changed_rows(table, seed)
    return ("float32", rows) if len(rows) <= AUTO_MAX_SHARE * len(table) else (None, None)


def save(model, seed, directory, params_name, dtype="float32", rows=None, said_as=COMPACT_ARGUMENT):
    """Write ``model`` compactly into ``directory``; returns the ``compact`` entry of the bundle's config.

    ``rows``: :func:`changed_rows` of the model's table, if already known. ``said_as``: how a refusal names the
    choices (:data:`COMPACT_ARGUMENT`, or :data:`COMPACT_FLAG`)."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}")
    table, _weight = _table(model)
    if rows is None:
        rows = changed_rows(table, seed)
    if dtype in QUANTIZED_BITS:
        bits = QUANTIZED_BITS[dtype]
        width = table.shape[1] if bits == 8 else (table.shape[1] + 1) // 2
        codes = np.empty((len(rows), width), np.int8 if bits == 8 else np.uint8)
        scales = np.empty(len(rows), np.float32)
        for a in range(0, len(rows), _BLOCK):  # in blocks: no float32 copy of every changed row
            codes[a:a + _BLOCK], scales[a:a + _BLOCK] = quantize(table[rows[a:a + _BLOCK]], bits)
        stored = {"codes": codes, "scales": scales}
    else:  # float32: the rows as they are; float16: converted. Streamed from the table, a block at a time
        stored = {"values": _RowBlocks(table, rows, dtype, said_as)}
    write_npz(os.path.join(directory, ROWS_FILE), dict(seed=np.int64(seed), rows=rows.astype(np.int32), **stored))
    model.output.save_parameters(os.path.join(directory, params_name))
    return {"seed": int(seed), "dtype": dtype, "rows_stored": int(len(rows)), "file": ROWS_FILE}


class RowBlocks:
    """An array that :func:`write_npz` writes a block of rows at a time, never held whole: its ``shape`` and
    ``dtype``, and its consecutive blocks of rows as iteration yields them (C-ordered numpy arrays)."""


class _RowBlocks(RowBlocks):
    """``table[rows].astype(dtype)`` as consecutive blocks of rows, never gathered whole (~105 MB for a
    bigram model of 34k tweets): each block is gathered into a small buffer that stays in cache while
    write_npz checksums and writes it, and the next one is gathered meanwhile (numpy's take releases the GIL)."""
    block = 4096

    def __init__(self, table, rows, dtype, said_as=COMPACT_ARGUMENT):
        self.table, self.rows, self.dtype, self.said_as = table, rows, np.dtype(dtype), said_as
        self.shape = (len(rows), table.shape[1])

    def _gather(self, a, out):
        part = self.rows[a:a + self.block]
        if self.dtype == self.table.dtype:
            return np.take(self.table, part, axis=0, out=out[:len(part)])
        converted = out[:len(part)]
        converted[...] = np.take(self.table, part, axis=0)
        # float16 ends at 65504: a larger (finite) value, e.g. from --pretrained-vectors, became inf and the
        # bundle's predictions silently saturated or turned NaN. The table itself is finite (training checks).
        if not np.isfinite(converted).all():
            big = float(np.abs(self.table[self.rows]).max())
            choice = _said(self.said_as)
            raise FastTextError(f"{choice(str(self.dtype))} cannot store this model: it has values up to {big:.4g} and "
                                f"float16 ends at 65504; use {choice('float32')}, {choice('int8', alone=False)} or "
                                f"{choice('int4', alone=False)}")
        return converted

    def __iter__(self):
        from concurrent.futures import ThreadPoolExecutor

        starts = range(0, len(self.rows), self.block)
        buffers = [np.empty((min(self.block, len(self.rows)), self.shape[1]), self.dtype) for _ in range(2)]
        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(self._gather, 0, buffers[0]) if len(starts) else None
            for i in range(len(starts)):
                block = pending.result()
                if i + 1 < len(starts):  # gathered while this block is checksummed and written
                    pending = pool.submit(self._gather, starts[i + 1], buffers[(i + 1) % 2])
                yield block


def _said(said_as):
    """How a refusal names a choice ``dtype`` as ``said_as`` gives it: ``--compact float16`` or ``compact='float16'``
    (``alone=False``: one of several after the first, ``int8`` / ``'int8'``)."""
    flag = said_as.startswith("-")

    def said(dtype, alone=True):
        value = dtype if flag else repr(dtype)
        return (f"{said_as} {value}" if flag else f"{said_as}={value}") if alone else value
    return said


def write_npz(path, arrays):
    """``np.savez(path, **arrays)``, byte for byte (tests/test_compact.py compares them), where a value may
    also be a :class:`RowBlocks` (a compact bundle's rows, :class:`_RowBlocks`; an optimizer state's,
    state_file.StateRows): its blocks go straight into the zip member (zipfile computes the CRC as they pass)
    instead of being gathered into one array and then copied again by ``np.savez``."""
    from numpy.lib import format as npy

    with zipfile.ZipFile(path, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as zipf:
        for key, value in arrays.items():
            with zipf.open(key + ".npy", "w", force_zip64=True) as fid:  # (np.savez forces zip64 too)
                if not isinstance(value, RowBlocks):
                    npy.write_array(fid, np.asanyarray(value), allow_pickle=False)
                    continue
                header = npy.header_data_from_array_1_0(np.empty((0,) + value.shape[1:], value.dtype))
                npy.write_array_header_1_0(fid, dict(header, shape=value.shape))
                for block in value:
                    fid.write(memoryview(block).cast("B"))  # bytes: Python 3.8's zipfile counts len(data)


class BadRows(ValueError):
    """A compact bundle's rows file is not what :func:`save` writes (``str``: what is wrong, naming the file)."""


# The array types save() writes. A rows file whose checksum matches but whose arrays are of other types (an older or
# foreign writer, a hand edit) was a TypeError traceback (text, a seed array), or was loaded cast: fractional row
# numbers truncated, complex or integer values taken as floats, and the model predicted from rows nobody trained.
_VALUE_TYPES = {"float32": np.float32, "float16": np.float16}
_CODE_TYPES = {8: np.int8, 4: np.uint8}


def _checked(stored, name, ndim, dtype=None):
    """``stored[name]``, refused unless it has ``ndim`` dimensions and the type ``dtype`` (``None``: any integer)."""
    array = stored[name]
    if array.ndim != ndim or (array.dtype != dtype if dtype is not None else array.dtype.kind not in "iu"):
        wanted = "integer" if dtype is None else np.dtype(dtype).name
        raise BadRows(f"{ROWS_FILE}'s {name} is a {array.ndim}-d {array.dtype} array, not the {ndim}-d {wanted} "
                      f"array this library writes")
    return array


def made_with(said_as, dtype=None):
    """How a user makes a compact bundle (of ``dtype`` rows; None: any), as ``said_as`` says who reads it: the
    command line's (:data:`COMPACT_FLAG`: ``train --compact float16``), the Python API's (:data:`COMPACT_ARGUMENT`:
    ``save_bundle(..., compact='float16')``, which Predictor.load's callers and the notebooks save with), or both
    (:data:`COMPACT_EITHER`: an endpoint's log, read by whoever made the bundle, either way). Either names a value
    (``None``: float32, exact): ``train --compact`` alone is its default, auto, which wrote the full bundle the advice
    is about (it compacts only where at most 1/4 of the rows changed)."""
    dtype = dtype or "float32"
    flag = f"train --compact {dtype}"
    argument = f"save_bundle(..., compact={dtype!r})"
    if said_as == COMPACT_FLAG:
        return flag
    return f"{flag}, or {argument} in Python" if said_as == COMPACT_EITHER else argument


def rows_advice(dtype, said_as=COMPACT_ARGUMENT):
    """What to do when a compact bundle's stored rows of ``dtype`` are more than the machine can hold (how to make
    one of float16 rows: :func:`made_with`)."""
    more = "use a machine with more memory (an endpoint or notebook: a larger instance type)"
    return more if dtype == "float16" else f"{more}, or a bundle of float16 rows ({made_with(said_as, 'float16')}), " \
                                           f"which holds them in 2 bytes a value"


def held_bytes(count, emsize, dtype):
    """The memory :func:`read_rows` holds for ``count`` stored rows of ``dtype``: their values as scored (float16 as
    stored, float32 otherwise: int8 and int4 codes are read as float32, beside the codes themselves while they are
    converted) and their numbers (int32 as read, int64 as kept)."""
    values = count * emsize * (2 if dtype == "float16" else 4)
    bits = QUANTIZED_BITS.get(dtype)
    codes = count * ((emsize if bits == 8 else (emsize + 1) // 2) + 4) if bits else 0  # (+ a float32 scale a row)
    return values + codes + count * (4 + 8)


def _stored_count(path):
    """How many rows the rows file at ``path`` stores, from its ``rows`` array's header alone; None where that
    cannot be read (reading the file then says what is wrong with it)."""
    from numpy.lib import format as npy

    try:
        with zipfile.ZipFile(path) as archive, archive.open("rows.npy") as f:
            version = npy.read_magic(f)
            shape = (npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0)(f)[0]
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile):
        return None
    return int(shape[0]) if len(shape) == 1 else None


def read_rows(directory, compact, num_rows, emsize, what="the compact bundle", said_as=COMPACT_ARGUMENT):
    """The compact bundle's :class:`StoredRows`, checked against the bundle's table shape and its config's seed
    (:class:`BadRows` naming what is wrong). Never unpickles: the rows file is data from the bundle.

    Rows this process cannot hold are refused before they are read, in one line naming ``what`` (the bundle), as a
    table is (table_memory.check_room_for_stored_rows): they were read unchecked, the OOM killer's end with no line,
    or numpy's bare MemoryError under ``ulimit -v``; an allocation that fails all the same says the same (what to do
    as ``said_as`` says it: :func:`rows_advice`)."""
    from .table_memory import check_room_for_stored_rows, out_of_memory_for_stored_rows

    dtype = compact.get("dtype")
    path = os.path.join(directory, compact.get("file", ROWS_FILE))
    if not zipfile.is_zipfile(path):  # else np.load reads it as a pickle (refused, "pickled data": misleading)
        raise BadRows(f"{ROWS_FILE} is not an .npz archive")
    count = _stored_count(path)
    if count is not None:
        check_room_for_stored_rows(count, emsize, dtype, held_bytes(count, emsize, dtype), what,
                                   rows_advice(dtype, said_as))
    try:
        return _read_rows(path, compact, num_rows, emsize)
    except MemoryError as exc:
        if count is None:  # (a header that does not read fails the read first: a BadRows)
            raise
        raise out_of_memory_for_stored_rows(count, emsize, dtype, held_bytes(count, emsize, dtype), what,
                                            rows_advice(dtype, said_as), cause=str(exc) or "MemoryError") from None


def _read_rows(path, compact, num_rows, emsize):
    from .table_memory import NonFinite, all_finite

    dtype = compact.get("dtype")
    bits = QUANTIZED_BITS.get(dtype)
    try:
        with np.load(path, allow_pickle=False) as stored:
            seed, rows = int(_checked(stored, "seed", 0)), _checked(stored, "rows", 1)
            if bits:
                codes = _checked(stored, "codes", 2, dtype=_CODE_TYPES[bits])
                scales = _checked(stored, "scales", 1, dtype=np.float32)
                width = emsize if bits == 8 else (emsize + 1) // 2
                if codes.shape != (len(rows), width) or scales.shape != (len(rows),):
                    raise BadRows(f"{ROWS_FILE} does not fit a {num_rows} x {emsize} table")
                values = np.empty((len(rows), emsize), np.float32)
                with np.errstate(invalid="ignore", over="ignore"):  # inf scales: all_finite below names the file
                    for a in range(0, len(rows), _BLOCK):
                        values[a:a + _BLOCK] = dequantize(codes[a:a + _BLOCK], scales[a:a + _BLOCK], bits, emsize)
            else:
                values = _checked(stored, "values", 2, dtype=_VALUE_TYPES[dtype])
    except BadRows:
        raise
    except (OSError, KeyError, EOFError, ValueError, zipfile.BadZipFile) as exc:  # ValueError: an object array
        raise BadRows(f"unreadable {ROWS_FILE}: {exc}") from None
    if "seed" in compact and compact["seed"] != seed:
        raise BadRows(f"{ROWS_FILE}'s seed {seed} is not config.json's {compact['seed']!r}: its other rows would be "
                      f"made from another seed than the table was trained from")
    if len(rows) and (rows.min() < 0 or rows.max() >= num_rows) or values.shape != (len(rows), emsize):
        raise BadRows(f"{ROWS_FILE} does not fit a {num_rows} x {emsize} table")
    if not all_finite(values):  # float16 bundles written before save() refused values beyond 65504 hold inf
        raise NonFinite(f"{ROWS_FILE}'s stored {dtype} rows")
    return StoredRows(seed, rows, values, num_rows)


class StoredRows:
    """A compact bundle's embedding table without the table: the stored rows, and every other row made
    from the seed when it is asked for. Prediction on the CPU reads it as it reads the dense table
    (scoring.CpuScorer), so a served compact model holds the rows training changed instead of all
    ``num_rows x emsize`` floats (800 MB for a bigram model, ~1 GB per endpoint worker, of a corpus
    that changed a few thousand rows), and loads without building them."""

    def __init__(self, seed, rows, values, num_rows):
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) > 1 and not (np.diff(rows) > 0).all():  # save() writes them ascending; else as a dense
            order = np.argsort(rows, kind="stable")           # table reads them: a row listed twice keeps the last
            rows, values = rows[order], values[order]
            last = np.append(rows[1:] != rows[:-1], True)
            rows, values = rows[last], values[last]
        self.seed, self.rows, self.values, self.num_rows = seed, rows, values, num_rows
        self.dim = values.shape[1]

    def rows_of(self, ids):
        """Table rows ``ids`` (any int array) as float32 (len(ids), dim): stored values where stored
        (float16 widens exactly), the seeded initial value elsewhere; what the dense table holds, bit for bit."""
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        out = np.empty((len(ids), self.dim), np.float32)
        # A slice of ids at a time: the stored values and the initial ones are gathered into temporaries first, each
        # as large as its share of ``out`` (one 60 MB review's 680k rows: ~800 MB beside its 272 MB answer, the peak of
        # its whole prediction); each row's value is its own, so the slices change no bit.
        for a in range(0, len(ids), self.ROWS_AT_ONCE):
            part_ids, part = ids[a:a + self.ROWS_AT_ONCE], out[a:a + self.ROWS_AT_ONCE]
            at = np.minimum(np.searchsorted(self.rows, part_ids), max(len(self.rows) - 1, 0))
            stored = (self.rows[at] == part_ids) if len(self.rows) else np.zeros(len(part_ids), bool)
            part[stored] = self.values[at[stored]]
            if not stored.all():
                missing = ~stored
                part[missing] = initial_rows(self.seed, part_ids[missing], self.dim)
        return out

    ROWS_AT_ONCE = 1 << 16  # rows_of's slice of ids (26 MB of temporaries at emsize 100)

    def fill(self, table):
        """Write the whole table into ``table`` (a writable float32 (num_rows, dim) array)."""
        from .init_rows import fill_table

        fill_table(self.seed, table)
        table[self.rows] = self.values


def materialize(model, stored, ctx, what="the compact bundle", advice=None):
    """Give ``model``'s embedding the whole table of ``stored`` (:class:`StoredRows`), on ``ctx``.

    The table is built on the CPU first (then copied to a GPU ``ctx``), every row written: one the process cannot
    hold is one error line naming ``what`` and saying ``advice`` (table_memory.check_room_to_load), where it was
    MXNet's 'Failed to allocate CPU Memory' traceback under ``ulimit -v``, or the OOM killer; so is one the GPU
    cannot hold (table_memory.copied_to)."""
    import mxnet as mx

    from .errors import is_out_of_memory, reason_of
    from .table_memory import adopt_data, allocate_table, copied_to, cpu_view, out_of_memory_loading

    loading = (what, advice or "use a machine with more memory")
    table = allocate_table(stored.num_rows, stored.dim, loading=loading)
    stored.fill(cpu_view(table))
    try:  # (a GPU's copy: that device's memory)
        adopt_data(model.embedding.weight, table if ctx == table.context else copied_to(table, ctx), [ctx])
    except mx.base.MXNetError as exc:
        if not is_out_of_memory(exc):
            raise
        raise out_of_memory_loading(stored.num_rows, stored.dim, *loading, cause=reason_of(exc)) from None

