"""Bags -> training and scoring batches: compact sparse batches in numpy, then NDArrays on a device.

One vocabulary for every CSR layout here (and in :class:`~fasttext_lib.features.Bags`): ``offsets``
(one per document, plus one), ``columns`` (each entry's column) and ``weights`` (each entry's mean
weight), with ``rows`` the embedding rows.

A batch is a CSR matrix over only the rows the batch touches ("compact" columns: column ``j`` is
embedding row ``rows[j]``). The forward pass reads each entry's row and sums with its weight; the
backward pass needs the transpose (rows x documents), which the native CPU operators (bag_ops.py)
build by themselves and MXNet's generic ``dot(csr, dense)`` route gets from :class:`SparseBatch`'s
``t_*`` arrays. Either way the optimizer then updates only those rows (row-sparse gradients).
"""
import queue
import threading
from dataclasses import dataclass

import numpy as np

from .errors import FastTextError

# MXNet 1.9 wheels index tensors with int32: even a CSR matrix may not have 2^31 (rows x cols) cells.
MAX_TENSOR_CELLS = 2**31 - 1


def too_big_for_a_tensor(num_docs, num_columns):
    return num_docs * num_columns > MAX_TENSOR_CELLS


@dataclass
class SparseBatch:
    """One batch in compact-column CSR form, as numpy arrays (built off the main thread).

    ``rows[j]`` is the embedding row of compact column ``j``; ``offsets/columns/weights`` is the
    (docs x columns) matrix of mean weights, ``entry_rows`` each entry's embedding row
    (``rows[columns]``), and ``t_*`` the transpose (columns x docs), for the generic backward
    product (only made when asked for: the native operators transpose by themselves, see bag_ops.py).
    """

    rows: np.ndarray
    offsets: np.ndarray
    columns: np.ndarray
    weights: np.ndarray
    entry_rows: np.ndarray
    t_offsets: np.ndarray
    t_columns: np.ndarray
    t_weights: np.ndarray
    labels: np.ndarray

    @property
    def size(self):
        return len(self.offsets) - 1

    @property
    def nbytes(self):
        """The memory its arrays hold (while a step is queued, MXNet holds them: train.QUEUED_BATCH_BYTES)."""
        return sum(a.nbytes for a in (self.rows, self.offsets, self.columns, self.weights, self.entry_rows,
                                      self.t_offsets, self.t_columns, self.t_weights, self.labels) if a is not None)


class BatchMaker:
    """Gathers documents of a :class:`~fasttext_lib.features.Bags` (or ``TokenBags``, encoded on the
    fly) into :class:`SparseBatch` es.

    Not thread-safe (it reuses two row-sized scratch arrays); give each thread its own.
    """

    def __init__(self, bags, labels, num_rows):
        self.bags = bags
        self.labels = np.asarray(labels, dtype=np.float32)
        self._seen = np.zeros(num_rows, dtype=bool)
        self._column = np.zeros(num_rows, dtype=np.int32)

    def make(self, docs, with_transpose=True):
        chosen = self.bags.select(docs)  # Bags: gathered; TokenBags: encoded now
        offsets, entry_rows, weights = chosen.offsets, chosen.rows, chosen.weights
        lens = np.diff(offsets)
        # Distinct rows of the batch, in row order, and each entry's compact column. A scan of a row
        # mask is O(table rows + nnz), no sort; a small batch (short texts, batch 16) sorts instead
        # (O(nnz log nnz)) rather than scan 2M rows per step. Both give the same arrays.
        if len(entry_rows) * 256 < len(self._seen):
            rows, columns = np.unique(entry_rows, return_inverse=True)
            rows, columns = rows.astype(np.int32), columns.astype(np.int32).reshape(-1)
        else:
            self._seen[entry_rows] = True
            rows = np.flatnonzero(self._seen).astype(np.int32)
            self._seen[rows] = False
            self._column[rows] = np.arange(len(rows), dtype=np.int32)
            columns = self._column[entry_rows]
        if with_transpose:
            order = _stable_argsort(columns)
            t_offsets = np.zeros(len(rows) + 1, dtype=np.int64)
            np.cumsum(np.bincount(columns, minlength=len(rows)), out=t_offsets[1:])
            doc_in_batch = np.repeat(np.arange(len(docs), dtype=np.int32), lens)
            t_columns, t_weights = doc_in_batch[order], weights[order]
        else:
            t_offsets = t_columns = t_weights = None
        return SparseBatch(rows, offsets, columns, weights, entry_rows, t_offsets, t_columns, t_weights, self.labels[docs])


def _stable_argsort(keys):
    """Stable argsort of non-negative int32 keys as LSD radix passes over 16-bit digits.

    numpy's radix sort only serves 16-bit keys; two stable passes sort any int32 key 4-5x faster
    than ``np.argsort`` on the keys (the transpose of a bigram batch: 7 ms instead of 34 ms).
    Stable, so each column's documents stay in batch order.
    """
    order = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    if len(keys) and keys.max() > 0xFFFF:
        high = (keys[order] >> 16).astype(np.uint16)
        order = order[np.argsort(high, kind="stable")]
    return order


def sgd_row_scale_entries(batch, shrink=0.0):
    """SGD's row scale, one value per entry of the transpose: batch size / documents of the batch
    that contain the row (with ``shrink`` k > 0: B (1 + k) / (df + k)).

    fastText steps once per document. The loss is averaged over the batch, which would shrink a
    rare word's step by the batch size; summing instead would give a word in every document a
    step a thousand times too large. Scaling row r by B / df(r) makes every row take the mean
    step over the documents that contain it: fastText's per-document step for rare words and a
    stable averaged one for frequent words.

    The mean gives a row in 40 of the batch's documents the same step as a row in one, however
    large the batch: on big batches that is too little for the rows that carry the signal against
    the rare ones, which are mostly noise. ``shrink`` (:func:`~fasttext_lib.schedule.row_shrink`:
    with n-grams, 0 up to batch 256) counts k more documents of zero gradient into each row's mean and multiplies
    by 1 + k: a rare row (df 1) keeps its step, a row in many documents takes up to 1 + k times the
    mean (the output layer gets the same factor, optim.make_optimizer). docs/RESULTS.md 3, "At scale".
    """
    df = np.diff(batch.t_offsets)
    if shrink:
        scale = batch.size * (1.0 + shrink) / (df + shrink)  # float64 as the native operator's
    else:
        scale = batch.size / df
    return np.repeat(scale.astype(np.float32), df)  # one value per entry of each bag_t row


@dataclass
class BatchArrays:
    """One device's batch as NDArrays: what :func:`~fasttext_lib.step.sparse_step` reads.

    Native operators read the CSR parts as they are (``offsets``, ``weights``, ``entry_rows`` and
    ``columns`` per entry); the generic path reads ``bag`` (docs x compact columns) and its
    transpose ``bag_t``. ``sgd_row_scale``: the embedding gradient carries SGD's row scale
    (:func:`sgd_row_scale_entries`, with ``row_shrink``), applied by the native backward operator
    or already multiplied into ``bag_t``.
    """

    rows: object  # int64 (columns,): the batch's distinct embedding rows, sorted
    labels: object
    native: bool
    sgd_row_scale: bool
    row_shrink: float = 0.0
    offsets: object = None
    weights: object = None
    entry_rows: object = None
    columns: object = None
    bag: object = None
    bag_t: object = None


def to_batch_arrays(batch, ctx, binary, native=False, sgd_row_scale=False, row_shrink=0.0):
    """A :class:`SparseBatch` as :class:`BatchArrays` on ``ctx``, for the native or the generic operators.

    With ``sgd_row_scale`` each row of the gradient is multiplied by :func:`sgd_row_scale_entries`:
    by the native backward operator itself, or folded into ``bag_t`` so that the generic product
    ``dot(bag_t, grad)`` comes out scaled without another pass over the gradient.
    """
    from mxnet import nd

    n, cols = batch.size, len(batch.rows)
    labels = batch.labels.reshape((-1, 1)) if binary else batch.labels  # shaped in numpy: one MXNet call less
    out = BatchArrays(rows=_to_nd(batch.rows, ctx, np.int64),  # int64: row_sparse's index type
                      labels=_to_nd(labels, ctx, np.float32), native=native, sgd_row_scale=sgd_row_scale,
                      row_shrink=float(row_shrink) if sgd_row_scale else 0.0)
    if native:
        out.offsets = _to_nd(batch.offsets, ctx, np.int64)
        out.weights = _to_nd(batch.weights, ctx, np.float32)
        out.entry_rows = _to_nd(batch.entry_rows, ctx, np.int32)
        out.columns = _to_nd(batch.columns, ctx, np.int32)
        return out
    if too_big_for_a_tensor(n, cols):
        raise FastTextError(f"a batch of {n} documents touching {cols} feature rows exceeds MXNet's 2^31-cell "
                            f"tensor limit; use a smaller batch size")
    out.bag = nd.sparse.csr_matrix((batch.weights, batch.columns, batch.offsets), shape=(n, cols), ctx=ctx)
    if batch.t_offsets is not None:
        t_weights = batch.t_weights
        if sgd_row_scale:
            t_weights = t_weights * sgd_row_scale_entries(batch, out.row_shrink)
        out.bag_t = nd.sparse.csr_matrix((t_weights, batch.t_columns, batch.t_offsets), shape=(cols, n), ctx=ctx)
    return out


def _to_nd(array, ctx, dtype):
    """A batch array as an NDArray on ``ctx``, without waiting for MXNet's engine.

    ``nd.array`` copies synchronously, and that copy queues behind the operators still running on
    the CPU: every step's Python then waited for the previous step's compute, nothing overlapped
    (on short texts most of the step). Instead the values are copied straight into the memory of a
    new NDArray, which no operator can be using yet. (``from_numpy``'s zero-copy DLPack hand-over,
    used before, cost twice the Python time, and freeing such an array runs a Python callback on
    whichever thread drops it last: MXNet's engine thread, which then waited for the interpreter
    lock.) Other devices copy it asynchronously from there.
    """
    import ctypes

    import mxnet as mx
    from mxnet.base import _LIB, check_call
    from mxnet.ndarray.ndarray import NDArray, _new_alloc_handle

    array = np.ascontiguousarray(array, dtype=dtype)
    host = ctx if ctx.device_type == "cpu" else mx.cpu()
    out = NDArray(handle=_new_alloc_handle(array.shape, host, False, array.dtype))  # allocated now
    if array.nbytes:
        pointer = ctypes.c_void_p()
        check_call(_LIB.MXNDArrayGetData(out.handle, ctypes.byref(pointer)))
        ctypes.memmove(pointer, array.ctypes.data, array.nbytes)
    return out if host is ctx else out.as_in_context(ctx)


PREFETCH_JOIN_SECONDS = 10  # how long a closed prefetch waits for its builder thread (it stops within a batch)


def prefetch(maker, order, batch_size, num_parts, depth=3, with_transpose=True):
    """Yield lists of :class:`SparseBatch` (one per context) built in a background thread.

    numpy releases the GIL in the gathers and sorts, so batch building overlaps MXNet's compute.
    Closing the generator (or an exception in the consumer, once it is closed) stops the thread.
    """
    out = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def put(item):
        while not stop.is_set():
            try:
                out.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def work():
        try:
            for start in range(0, len(order), batch_size):
                docs = order[start:start + batch_size]
                parts = np.array_split(docs, min(num_parts, len(docs)))
                if not put([maker.make(part, with_transpose=with_transpose) for part in parts]):
                    return
            put(done)
        except BaseException as exc:  # surfaced in the consumer
            put(exc)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    try:
        while True:
            try:
                item = out.get()
            except RuntimeError as exc:
                # A stop (stops.stop_on_signals' handler; a notebook's Stop button) raised inside the wait, in
                # Python's own Condition._acquire_restore, leaves the queue's lock unheld, and the get's `with` block
                # raises "release unlocked lock" over it: a traceback and exit 1 where the stop's line was due. The
                # stop is what happened: raised again (a RuntimeError over no stop is raised as it is).
                from .stops import raise_if_interrupted

                raise_if_interrupted()
                if isinstance(exc.__context__, KeyboardInterrupt):
                    raise exc.__context__ from None
                raise
            if item is done:
                break
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        # Bounded: a stop landing just as the get's `with` block took the queue's lock (CPython lets a signal
        # handler run there) leaves that lock held for good, and the builder, waiting for it to put its batch,
        # never ends: joined without a bound, the run hung with no line. It is a daemon thread, gone at exit.
        thread.join(PREFETCH_JOIN_SECONDS)
