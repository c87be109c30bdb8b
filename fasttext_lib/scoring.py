"""Scoring: encoded documents (``Bags``) -> class probabilities.

On the CPU the forward pass runs in numpy (:class:`CpuScorer`): the embedding table is read in
place through a view of the MXNet parameter, each document's mean is one native loop
(``native_features.bag_mean``, numpy without it), then one small matrix product and a
sigmoid/softmax. For one review that is tens of microseconds where MXNet's operator launches cost
milliseconds; the probabilities equal the MXNet route (:func:`predict_bags`, used on GPUs and
kept as the reference) to float rounding (tests/test_predict.py).

Serving (predict.py) imports this module: it imports no training module (tests/test_architecture.py).
"""
import numpy as np

from . import native_features
from .batches import BatchMaker, to_batch_arrays, too_big_for_a_tensor
from .stops import raise_if_interrupted


def predict_bags(model, featurizer, bags, ctx, batch_size=4096):
    """Class probabilities (n, num_classes) as numpy, in document order.

    A batch that would exceed MXNet's tensor-size limit (many documents x many distinct n-gram
    rows) is halved until it fits; the probabilities do not depend on the batching.
    """
    maker = BatchMaker(bags, np.zeros(len(bags)), featurizer.num_rows)
    out, start = [], 0
    while start < len(bags):
        size = batch_size
        while True:
            batch = maker.make(np.arange(start, min(start + size, len(bags))), with_transpose=False)
            if not too_big_for_a_tensor(batch.size, len(batch.rows)) or size == 1:
                break
            size //= 2
        arrays = to_batch_arrays(batch, ctx, model.binary)
        out.append(model.probabilities(model(arrays.bag, arrays.rows)).asnumpy())
        start += batch.size
    return np.concatenate(out) if out else np.zeros((0, model.num_classes), dtype=np.float32)


class CpuScorer:
    """The classifier's forward pass in numpy, from its parameters on the CPU (no MXNet operators).

    ``model`` is a :class:`~fasttext_lib.model.FastTextClassifier` on a CPU context; its table is
    read through :func:`~fasttext_lib.table_memory.cpu_view`, so nothing is copied and training's later updates are seen
    (build a new scorer after loading other parameters). ``stored``: a compact bundle's
    :class:`~fasttext_lib.compact.StoredRows`, read instead of a table (``model``'s is never built).
    """

    DOCS_PER_CHUNK = 65536  # bounds the (docs x emsize) temporaries
    # Stored rows: the entries gathered at once (a long document's a slice at a time), which bounds the rows made from
    # them. A chunk of 65,536 documents needs most of a bigram table at once (1.26M of 2M rows for 40,000 synthetic
    # reviews: 500 MB at emsize 100), the very table the stored rows are there to avoid; so did one 60 MB review.
    STORED_ENTRIES = 1 << 16

    def __init__(self, model, ctx, stored=None):
        from .table_memory import cpu_view

        self._weight, self.stored = None, stored
        if stored is None:
            self._weight = model.embedding.weight.data(ctx)  # keeps the viewed memory alive
            self.table = cpu_view(self._weight)
            if self.table is None:
                raise ValueError("CpuScorer needs a dense float32 table on the CPU")
        self.output = model.output.weight.data(ctx).asnumpy()  # (1 or classes, emsize): small
        self.binary, self.num_classes = model.binary, model.num_classes
        self.dim = self.output.shape[1]

    @staticmethod
    def usable(ctx):
        return ctx.device_type == "cpu"

    NUMPY_ENTRIES = 1 << 18  # entries gathered at once by the numpy route of :meth:`means` (no native library)
    # What a gathered entry's bookkeeping takes: np.unique's sorted copy, its order and the inverse (int64 each), and
    # the int32 copy of the inverse bag_mean reads; the numpy route's owner and position of each (int64).
    ENTRY_BYTES = 40

    def held_bytes(self, entries, documents):
        """About the bytes :meth:`probabilities` of bags of ``entries`` entries in all, of ``documents`` documents, holds
        beside the bags (features.Featurizer.check_room weighs them before featurizing): the means and answers, and
        the rows it gathers. A dense table is read in place (natively); a compact bundle's rows are gathered
        :data:`STORED_ENTRIES` entries at a time (made by rows_of a slice at a time: a second slice's worth), and the
        numpy route's :data:`NUMPY_ENTRIES` at a time (without the native library), each row twice (gathered, then
        weighed)."""
        row = 4 * self.dim
        held = min(documents, self.DOCS_PER_CHUNK) * (row + 8 * self.num_classes) + 4 * self.num_classes * documents
        if self.stored is not None:
            gathered = min(entries, self.STORED_ENTRIES)
            held += gathered * (row + self.ENTRY_BYTES) + min(gathered, self.stored.ROWS_AT_ONCE) * row
        if not native_features.available():
            at_once = self.STORED_ENTRIES if self.stored is not None else self.NUMPY_ENTRIES
            held += min(entries, at_once) * (2 * row + self.ENTRY_BYTES)
        return held

    def means(self, bags, start, stop):
        """The mean embedding of documents ``start:stop`` of ``bags``."""
        first, last = bags.offsets[start], bags.offsets[stop]
        offsets = bags.offsets[start:stop + 1] - first
        rows, weights = bags.rows[first:last], bags.weights[first:last]
        if self.stored is None and native_features.available():  # the table read in place
            return native_features.bag_mean(self.table, rows, weights, offsets)
        num_rows = self.stored.num_rows if self.stored is not None else len(self.table)
        if len(rows) and (rows.min() < 0 or rows.max() >= num_rows):
            raise ValueError("a bag row is outside the table")
        out = np.zeros((stop - start, self.dim), dtype=np.float32)
        at_once = self.STORED_ENTRIES if self.stored is not None else self.NUMPY_ENTRIES
        for a in range(0, len(rows), at_once):
            self._add_entries(out, rows, weights, offsets, a, min(len(rows), a + at_once))
        return out

    def _add_entries(self, out, rows, weights, offsets, a, b):
        """Add entries ``a:b`` of the documents whose entries are ``rows``/``weights``/``offsets`` to their sums
        ``out``, gathering only those entries' rows. A document's entries a slice at a time, summed on in the same
        order, give the same bits as all at once (one long review's 1.36M bigram rows were gathered at once from a
        compact bundle, 545 MB at emsize 100, five times what featurizing it took)."""
        d0 = int(np.searchsorted(offsets, a, side="right")) - 1  # the documents holding entries a:b
        d1 = int(np.searchsorted(offsets, b, side="left"))
        local = np.clip(offsets[d0:d1 + 1], a, b) - a
        part = rows[a:b]
        if self.stored is None:
            table = self.table
        else:  # the entries' own rows, as a small table that they index into
            needed, part = np.unique(part, return_inverse=True)
            table = self.stored.rows_of(needed)
        if native_features.available():
            native_features.bag_mean(table, part, weights[a:b], local, out=out[d0:d1], add=True)
            return
        owners = np.searchsorted(local, np.arange(b - a), side="right") - 1
        np.add.at(out[d0:d1], owners, table[part] * weights[a:b, None])  # (in entry order, unbuffered)

    def probabilities(self, bags):
        """Class probabilities (n, num_classes), float32, as :meth:`FastTextClassifier.probabilities`."""
        if self._weight is not None:
            self._weight.wait_to_read()  # MXNet's engine may still be writing the table (training)
        out = np.empty((len(bags), self.num_classes), dtype=np.float32)
        for start in range(0, len(bags), self.DOCS_PER_CHUNK):
            raise_if_interrupted()  # a SIGTERM whose first raise a __del__ swallowed (stops.py)
            stop = min(len(bags), start + self.DOCS_PER_CHUNK)
            scores = _scores(self.means(bags, start, stop), self.output)
            if self.binary:
                # Each class's own sigmoid, not 1 - p: in float32 1 - p is 0 once p is within 6e-8 of 1, where the
                # first class's probability is ~1e-10 (its log loss was capped where the second class's was exact).
                with np.errstate(over="ignore"):  # a score beyond +-88: exp overflows to inf, and that class's p is
                    out[start:stop, 1] = 1.0 / (1.0 + np.exp(-scores[:, 0]))  # 0, as it is (the warning went among
                    out[start:stop, 0] = 1.0 / (1.0 + np.exp(scores[:, 0]))  # a CLI's answers on stderr)
            else:
                scores -= scores.max(axis=1, keepdims=True)
                np.exp(scores, out=scores)
                out[start:stop] = scores / scores.sum(axis=1, keepdims=True)
        return out


# Up to this many classes (every Zhang et al. set has at most 14) a document's scores are its own sums, whatever
# else is scored with it; past it, BLAS's product, 3-4x faster there (100 classes: 2 against 5 us a document).
OWN_SUMS_CLASSES = 64


def _scores(means, output):
    """``means @ output.T``, each document's row by its own sums (einsum's loops) up to :data:`OWN_SUMS_CLASSES`:
    BLAS's kernels differ by the number of rows, and gave a review other last digits in another request or
    mini-batch (0.6600844860 alone, 0.6600845456 among others), so an endpoint's answer differed from predict's on
    the file (docs/SERVING.md)."""
    if len(output) <= OWN_SUMS_CLASSES:
        return np.einsum("dj,cj->dc", means, output, optimize=False)
    return means @ output.T


def probabilities(model, featurizer, bags, ctx):
    """Class probabilities of encoded documents: numpy on the CPU, MXNet's operators elsewhere."""
    if CpuScorer.usable(ctx):
        return CpuScorer(model, ctx).probabilities(bags)
    return predict_bags(model, featurizer, bags, ctx)
