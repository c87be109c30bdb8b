"""The fastText classifier as a Gluon block: embedding -> mean over real tokens -> dense.

Why the forward pass takes a compact CSR batch instead of padded token ids: the GluonNLP recipe
embeds (batch, max_len) ids and averages, and its embedding gradient is dense: every batch of 16
writes all 46M floats of the table, so a CPU epoch takes hours. Here a batch arrives as

* ``rows``: the distinct embedding rows the batch touches (a few thousand of millions);
* ``bag``: a (docs x len(rows)) CSR matrix of mean weights (``count / length``), so
  ``dot(bag, embedding(rows))`` is exactly the per-document mean, with no padding.

This block's forward pass (``hybrid_forward``, Gluon's ``forward`` of a HybridBlock) is GPU scoring's path (and the
block is what a bundle stores); CPU scoring does the same sum in NumPy (scoring.CpuScorer), reading the bundle's
arrays. Training does the same forward
pass but computes the embedding gradient itself, as the row-sparse ``bag_t x dL/dh`` over the
batch's rows (step.py, :func:`~fasttext_lib.step.sparse_step`), instead of letting autograd
route it through MXNet's generic transposed CSR product and ``Embedding``'s sparse backward,
which re-sorts rows that are already unique. On the CPU both products are native MXNet operators
that read the table in place (bag_ops.py); the numbers are the same.

How the table's memory is held (allocated with a check, on 2 MB pages, handed to Gluon and read by
numpy without a copy) is table_memory.py's; this module is the model.
"""
import errno
import os

import mxnet as mx
import numpy as np
from mxnet import gluon, nd
from mxnet.gluon import nn

from .devices import check_table_size
from .init_rows import fill_table
from .params_file import read_into
from .table_memory import (adopt_data, adopt_table, advise_huge_pages, allocate_table, copied_to, cpu_view,
                           states_place)


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

    def initialize_like_fasttext(self, ctx, seed=0, rows=None, huge_pages=True, state_tables=0, kvstore=None):
        """Input rows uniform in +-1/dim as fastText; output weights Xavier rather than fastText's zeros.

        The input rows are a function of (``seed``, row) (init_rows.py), written straight into the
        parameter's memory: no sequential generator over 200M values, and no second copy of the
        table (Gluon's ``initialize`` fills a temporary and copies it to each context).
        ``rows``: ``(row numbers, values)`` written over the seeded ones (pretrained word vectors,
        pretrained.py), before the table reaches any device, so every training route starts from them.
        The output layer draws from MXNet's generator (``mx.random.seed``). ``huge_pages``: back the
        table with 2 MB pages (:func:`~fasttext_lib.table_memory.advise_huge_pages`; train() decides by the work
        ahead). ``state_tables``: the optimizer's tables of the same size, counted where they will live
        (:func:`~fasttext_lib.table_memory.states_place`, from the run's ``kvstore``, None for MXNet's own updater):
        in the host's memory check (:func:`~fasttext_lib.table_memory.allocate_table`, with the kvstore's copy of the
        table where kv.init makes it in host memory, :func:`~fasttext_lib.table_memory.host_need`), or on the GPUs
        that will hold them, whose room (and a ``device`` kvstore's for its copy of the table) is tried where the
        table is copied (:func:`~fasttext_lib.table_memory.adopt_table`).

        With batched SGD the output layer takes batch-averaged steps; starting it at zero would
        leave the embeddings without gradient until it has grown, which takes many epochs.
        """
        ctxs = ctx if isinstance(ctx, (list, tuple)) else [ctx]
        place = states_place(kvstore, ctxs)
        table = allocate_table(self.num_rows, self.emsize, state_tables, place=place, ctxs=ctxs)
        view = cpu_view(table)
        if huge_pages:
            advise_huge_pages(view)  # before the first write: the pages are not there yet
        fill_table(seed, view)
        if rows is not None and len(rows[0]):
            view[rows[0]] = rows[1]
        # (a GPU's copy waited for, and the room for the optimizer's tables there tried: their error here)
        adopt_table(self.embedding.weight, table, ctxs, state_tables, place)
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
        twice. A model already initialized (a resumed run's) reads the file into its parameters' memory
        (params_file.read_into). Anything unusual (other options, several contexts, names or shapes that do not
        match) goes to Gluon's own method, which also raises its usual errors.
        """
        one = ctx[0] if isinstance(ctx, (list, tuple)) and len(ctx) == 1 else ctx
        params = self._collect_params_with_prefix()
        initialized = [p._data is not None for p in params.values()]
        where = None if ctx is None else set(ctx) if isinstance(ctx, (list, tuple)) else {ctx}
        if not kwargs and all(initialized) and all(where in (None, set(p.list_ctx())) for p in params.values()) \
                and read_into(params, filename):  # a resume: the table it holds takes the file's values
            return
        if kwargs or not isinstance(one, mx.Context) or any(initialized):
            return super().load_parameters(filename, ctx=ctx, **kwargs)
        loaded = nd.load(filename)
        if not isinstance(loaded, dict) or set(loaded) != set(params) or any(
                loaded[n].shape != p.shape or loaded[n].dtype != np.dtype(p.dtype) or loaded[n].stype != "default"
                for n, p in params.items()):
            del loaded
            return super().load_parameters(filename, ctx=ctx, **kwargs)
        for name, param in params.items():
            data = loaded.pop(name)
            adopt_data(param, data if data.context == one else copied_to(data, one), [one])

    def embedding_table(self):
        """The whole embedding table as numpy (rows: vocabulary, then n-gram buckets)."""
        return self.embedding.weight.data(self.embedding.weight.list_ctx()[0]).asnumpy()

    def embedding_rows(self, stop):
        """Rows ``0:stop`` of the embedding table as numpy (a copy of those rows only: :meth:`embedding_table`
        copies all of them, a bigram table's n-gram buckets with the vocabulary's few rows)."""
        weight = self.embedding.weight.data(self.embedding.weight.list_ctx()[0])
        view = cpu_view(weight)
        return view[:stop].copy() if view is not None else weight[:stop].asnumpy()


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

