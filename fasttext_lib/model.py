"""The fastText classifier as a Gluon block: embedding -> mean over real tokens -> dense.

Why the forward pass takes a compact CSR batch instead of padded token ids: the GluonNLP recipe
embeds (batch, max_len) ids and averages, and its embedding gradient is dense: every batch of 16
writes all 46M floats of the table, so a CPU epoch takes hours. Here a batch arrives as

* ``rows``: the distinct embedding rows the batch touches (a few thousand of millions);
* ``bag``: a (docs x len(rows)) CSR matrix of mean weights (``count / length``), so
  ``dot(bag, embedding(rows))`` is exactly the per-document mean, with no padding.

This block's ``forward`` is GPU scoring's path (and the block is what a bundle stores); CPU scoring does the
same sum in NumPy (predict.CpuScorer), reading the bundle's arrays. Training does the same forward
pass but computes the embedding gradient itself, as the row-sparse ``bag_t x dL/dh`` over the
batch's rows (step.py, :func:`~fasttext_lib.step.sparse_step`), instead of letting autograd
route it through MXNet's generic transposed CSR product and ``Embedding``'s sparse backward,
which re-sorts rows that are already unique. On the CPU both products are native MXNet operators
that read the table in place (bag_ops.py); the numbers are the same.
"""
import ctypes
import errno
import os
import sys

import mxnet as mx
import numpy as np
from mxnet import gluon, nd
from mxnet.gluon import nn

from .devices import AFTER_TABLE_BYTES, AFTER_TABLE_BYTES_PER_ROW, address_space_left, available_memory, check_table_size
from .errors import FastTextError, is_out_of_memory
from .init_rows import fill_table


class FastTextClassifier(gluon.HybridBlock):
    """Joulin et al. (2016): mean of word and n-gram embeddings, then a linear classifier.

    Two classes use one output unit (sigmoid + binary cross-entropy), more use one unit per
    class (softmax cross-entropy); :attr:`loss` is the matching Gluon loss.
    """

    def __init__(self, num_rows, emsize, num_classes, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        if num_classes < 2:
            raise ValueError("a classifier needs at least 2 classes")
        self.num_rows, self.emsize, self.num_classes = int(num_rows), int(emsize), int(num_classes)
        check_table_size(self.num_rows, self.emsize)  # the vocabulary's words count too (TrainConfig checks buckets)
        self.binary = num_classes == 2
        with self.name_scope():
            self.embedding = nn.Embedding(self.num_rows, self.emsize, sparse_grad=True, prefix="embedding_")
            self.dropout = nn.Dropout(dropout) if dropout else None
            self.output = nn.Dense(1 if self.binary else num_classes, in_units=self.emsize, use_bias=False, prefix="output_")
        if self.binary:
            self.loss = gluon.loss.SigmoidBinaryCrossEntropyLoss()
        else:
            self.loss = gluon.loss.SoftmaxCrossEntropyLoss()

    def initialize_like_fasttext(self, ctx, seed=0, rows=None, huge_pages=True, state_tables=0):
        """Input rows uniform in +-1/dim as fastText; output weights Xavier rather than fastText's zeros.

        The input rows are a function of (``seed``, row) (init_rows.py), written straight into the
        parameter's memory: no sequential generator over 200M values, and no second copy of the
        table (Gluon's ``initialize`` fills a temporary and copies it to each context).
        ``rows``: ``(row numbers, values)`` written over the seeded ones (pretrained word vectors,
        vectors.py), before the table reaches any device, so every training route starts from them.
        The output layer draws from MXNet's generator (``mx.random.seed``). ``huge_pages``: back the
        table with 2 MB pages (:func:`advise_huge_pages`; train() decides by the work ahead). ``state_tables``: the
        optimizer's tables of the same size, counted in the memory check (:func:`allocate_table`).

        With batched SGD the output layer takes batch-averaged steps; starting it at zero would
        leave the embeddings without gradient until it has grown, which takes many epochs.
        """
        ctxs = ctx if isinstance(ctx, (list, tuple)) else [ctx]
        table = allocate_table(self.num_rows, self.emsize, state_tables)
        view = cpu_view(table)
        if huge_pages:
            advise_huge_pages(view)  # before the first write: the pages are not there yet
        fill_table(seed, view)
        if rows is not None and len(rows[0]):
            view[rows[0]] = rows[1]
        adopt_data(self.embedding.weight, table, ctxs)
        self.output.initialize(mx.init.Xavier(), ctx=ctxs)

    def hybrid_forward(self, F, bag, rows):
        return self.classify(F.sparse.dot(bag, self.embedding(rows)))

    def classify(self, docs):
        """Document vectors (the means) -> raw outputs; the part of the model autograd records."""
        if self.dropout is not None:
            docs = self.dropout(docs)
        return self.output(docs)

    def probabilities(self, scores):
        """Class probabilities (n, num_classes) from the raw outputs."""
        if self.binary:
            scores = scores.reshape((-1,))  # (each class's own sigmoid: 1 - p is 0 in float32 where p is ~1 - 1e-10)
            return nd.stack(nd.sigmoid(-scores), nd.sigmoid(scores), axis=1)
        return nd.softmax(scores, axis=1)

    def save_parameters(self, filename, deduplicate=False):
        """Gluon's ``save_parameters`` (the same file), without its copy of every parameter first.

        Gluon copies each parameter to the CPU (``_reduce``) before writing: for the 800 MB bigram
        table that copy was a bundle's or checkpoint's peak memory. One context: its arrays are
        written as they are; several: Gluon's way (their mean, the tables being equal).
        """
        params = self._collect_params_with_prefix()
        try:
            if deduplicate or any(len(p.list_ctx()) != 1 for p in params.values()):
                return super().save_parameters(filename, deduplicate=deduplicate)
            nd.save(filename, {name: p.data(p.list_ctx()[0]) for name, p in params.items()})
        except mx.base.MXNetError as exc:
            if "Write incomplete" not in str(exc):
                raise
            raise _incomplete_write(filename, params) from None

    def load_parameters(self, filename, ctx=None, **kwargs):
        """Gluon's ``load_parameters``, keeping the loaded arrays instead of copying them (one context).

        Gluon copies every loaded array into the parameter: loading a bigram bundle held the table
        twice. Anything unusual (other options, several contexts, names or shapes that do not
        match) goes to Gluon's own method, which also raises its usual errors.
        """
        one = ctx[0] if isinstance(ctx, (list, tuple)) and len(ctx) == 1 else ctx
        params = self._collect_params_with_prefix()
        if kwargs or not isinstance(one, mx.Context) or any(p._data is not None for p in params.values()):
            return super().load_parameters(filename, ctx=ctx, **kwargs)
        loaded = nd.load(filename)
        if not isinstance(loaded, dict) or set(loaded) != set(params) or any(
                loaded[n].shape != p.shape or loaded[n].dtype != np.dtype(p.dtype) or loaded[n].stype != "default"
                for n, p in params.items()):
            del loaded
            return super().load_parameters(filename, ctx=ctx, **kwargs)
        for name, param in params.items():
            data = loaded.pop(name)
            adopt_data(param, data if data.context == one else data.copyto(one), [one])

    def embedding_table(self):
        """The whole embedding table as numpy (rows: vocabulary, then n-gram buckets)."""
        return self.embedding.weight.data(self.embedding.weight.list_ctx()[0]).asnumpy()


def allocate_table(num_rows, emsize, state_tables=0):
    """An uninitialized ``num_rows`` x ``emsize`` float32 table on the CPU; one error line naming its size when
    there is not the memory for it (MXNet's 'Failed to allocate CPU Memory' was a traceback). Also when the kernel
    would hand it out but not back it: every row is written next (fill_table), and a table larger than the memory
    available was killed by the OOM killer (an exit with no line) once filled. ``state_tables``: how many more
    tables of its size the optimizer will keep (adam's two moments, allocated at its first step: without them in
    the count, an adam run passed this check and was killed at its first step). Under a ``ulimit -v`` the tables
    and what the run maps after them (:data:`~fasttext_lib.devices.AFTER_TABLE_BYTES`) must fit in the address
    space left: a limit a little above the tables crashed MXNet at its first steps (a segfault, or 'terminate
    called' when a thread found no stack), exit 134 with no line."""
    size = num_rows * emsize * 4
    tables = size * (1 + state_tables)
    _check_address_space(num_rows, emsize, tables)
    room = available_memory()
    if room is not None and tables > room:
        states = (f", and {state_tables} more of that size for adam's moments ({tables / 2**30:.1f} "
                  f"GiB in all)" if state_tables else "")
        raise FastTextError(f"out of memory for the embedding table: {num_rows:,} rows x emsize {emsize} = "
                            f"{size / 2**30:.1f} GiB of float32{states}, more than the {room / 2**30:.1f} GiB of memory "
                            f"available here; lower emsize or buckets" + (", or use sgd" if state_tables else ""))
    try:
        return nd.empty((num_rows, emsize), ctx=mx.cpu(), dtype="float32")
    except mx.base.MXNetError as exc:
        if not is_out_of_memory(exc):
            raise
        raise FastTextError(f"out of memory for the embedding table: {num_rows:,} rows x emsize {emsize} = "
                            f"{size / 2**30:.1f} GiB of float32; lower emsize or buckets") from None


def _check_address_space(num_rows, emsize, tables_bytes):
    left = address_space_left()
    if left is None:
        return
    need = tables_bytes + AFTER_TABLE_BYTES + AFTER_TABLE_BYTES_PER_ROW * num_rows
    if need > left:
        raise FastTextError(f"out of memory for the embedding table: {num_rows:,} rows x emsize {emsize} need about "
                            f"{need >> 20:,} MB more address space, and this process may map {left >> 20:,} MB more "
                            f"(ulimit -v): raise that limit, or lower emsize or buckets")


def _incomplete_write(filename, params):
    """The OSError of a parameters file MXNet could not write in full (its error keeps no errno): EFBIG
    when the parameters take more than the process's file-size limit (``ulimit -f``: it was taken for EIO,
    a traceback), ENOSPC when the filesystem has less room left than they take, else EIO."""
    import resource

    needed = sum(int(np.prod(p.shape)) * np.dtype(p.dtype).itemsize for p in params.values())
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    try:
        stats = os.statvfs(os.path.dirname(os.path.abspath(filename)))
        full = stats.f_bavail * stats.f_frsize < needed
    except OSError:
        full = False
    code = errno.EFBIG if limit != resource.RLIM_INFINITY and limit < needed else errno.ENOSPC if full else errno.EIO
    return OSError(code, os.strerror(code), filename)


def adopt_data(param, data, ctxs):
    """Initialize Gluon ``param`` with ``data`` (an NDArray), kept as is on its own context.

    ``Parameter.initialize`` and ``set_data`` copy: with an 800 MB table that copy is the run's peak
    memory. Gluon 1.9's ``_init_impl`` (pinned mxnet==1.9.1) calls ``data.copyto(ctx)`` once per
    context, so a wrapper whose ``copyto`` hands back ``data`` itself on its own context adopts it.
    """
    class _Adopted:
        def copyto(self, ctx):
            return data if ctx == data.context else data.copyto(ctx)

    param._deferred_init = ()
    param._init_impl(_Adopted(), list(ctxs))


class NonFinite(ValueError):
    """Loaded parameters hold inf or NaN (``str``: which ones)."""


def all_finite(array):
    """Whether a parameter (NDArray, or numpy) holds no inf or NaN.

    A dense float32 CPU array is scanned through its numpy view in blocks of 4M values (no temporary the
    size of the table; a 2M x 100 table takes ~0.1 s, about 6% of loading its bundle from a warm page
    cache); anything else (a GPU array) asks MXNet's ``all_finite`` on its own device."""
    view = array if isinstance(array, np.ndarray) else cpu_view(array)
    if view is None:
        return bool(nd.all_finite(array).asscalar())
    flat = view.reshape(-1)
    return all(np.isfinite(flat[a:a + (1 << 22)]).all() for a in range(0, flat.size, 1 << 22))


def check_finite(model, skip=()):
    """Raise :class:`NonFinite` naming the first parameter of ``model`` (all but ``skip``) with inf or NaN."""
    for name, param in model._collect_params_with_prefix().items():
        if name not in skip and not all_finite(param.data(param.list_ctx()[0])):
            raise NonFinite(f"parameter {name!r}")


HUGE_PAGE = 2 << 20
MADV_HUGEPAGE = 14  # linux/mman.h


def advise_huge_pages(view):
    """Ask Linux to back a large array that nothing has written yet with 2 MB pages (transparent
    huge pages, when the system's setting is ``madvise`` or ``always``). No effect elsewhere.

    A training step reads and updates a few thousand rows scattered over the table (800 MB with
    bigrams). With 4 KB pages nearly every row is also a TLB miss and a page-table walk: the native
    bag operators spent about half their time on that (a 256-document batch of short texts: 1.1 ms
    per ``fasttext_bag_mean`` with 4 KB pages, 0.5 ms with 2 MB pages; docs/RESULTS.md 4). numpy
    asks for huge pages on its own large arrays; MXNet's allocator does not, hence this call on the
    table it allocates. The advice only shapes how pages are first faulted in, so it has to come
    before the first write. The values, and so the results, are the same either way.

    Faulting huge pages in can cost more than small ones where the host backs a virtual machine's
    memory lazily (this project's 2-core VM: 0.2-2 s instead of a steady 0.35 s for 800 MB), so a
    short run may lose more at the start than it saves (train.HUGE_PAGES_MIN_READS).
    """
    if not sys.platform.startswith("linux") or view.nbytes < 2 * HUGE_PAGE:
        return False
    start = view.ctypes.data
    first = -(-start // HUGE_PAGE) * HUGE_PAGE  # whole huge pages inside the array only
    last = (start + view.nbytes) // HUGE_PAGE * HUGE_PAGE
    try:
        madvise = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return False
    madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    return madvise(first, last - first, MADV_HUGEPAGE) == 0  # EINVAL where THP is compiled out: fine


def cpu_view(array):
    """A numpy view (no copy) of a dense float32 CPU NDArray; ``None`` for anything else.

    The view shares the NDArray's memory: it sees later in-place updates and is valid while the
    NDArray lives (keep a reference to it). Pending writes are waited for first; later ones are
    not (call ``array.wait_to_read()`` before reading again).
    """
    from mxnet.base import _LIB, check_call

    if array.context.device_type != "cpu" or array.stype != "default" or array.dtype != np.float32:
        return None
    array.wait_to_read()
    if not array.size:
        return np.zeros(array.shape, dtype=np.float32)
    pointer = ctypes.c_void_p()
    check_call(_LIB.MXNDArrayGetData(array.handle, ctypes.byref(pointer)))
    buffer = (ctypes.c_float * array.size).from_address(pointer.value)
    return np.frombuffer(buffer, dtype=np.float32).reshape(array.shape)
