"""The fastText classifier as a Gluon block: embedding -> mean over real tokens -> dense.

Why the forward pass takes a compact CSR batch instead of padded token ids: the GluonNLP recipe
embeds (batch, max_len) ids and averages, and its embedding gradient is dense: every batch of 16
writes all 46M floats of the table, so a CPU epoch takes hours. Here a batch arrives as

* ``rows``: the distinct embedding rows the batch touches (a few thousand of millions);
* ``bag``: a (docs x len(rows)) CSR matrix of mean weights (``count / length``), so
  ``dot(bag, embedding(rows))`` is exactly the per-document mean, with no padding.

This block is the *inference* path (and what a bundle stores). Training does the same forward
pass but computes the embedding gradient itself, as the row-sparse ``bag_t x dL/dh`` over the
batch's rows (step.py, :func:`~fasttext_lib.step.sparse_step`), instead of letting autograd
route it through MXNet's generic transposed CSR product and ``Embedding``'s sparse backward,
which re-sorts rows that are already unique. On the CPU both products are native MXNet operators
that read the table in place (bag_ops.py); the numbers are the same.
"""
import mxnet as mx
from mxnet import gluon, nd
from mxnet.gluon import nn


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
        self.binary = num_classes == 2
        with self.name_scope():
            self.embedding = nn.Embedding(self.num_rows, self.emsize, sparse_grad=True, prefix="embedding_")
            self.dropout = nn.Dropout(dropout) if dropout else None
            self.output = nn.Dense(1 if self.binary else num_classes, in_units=self.emsize, use_bias=False, prefix="output_")
        if self.binary:
            self.loss = gluon.loss.SigmoidBinaryCrossEntropyLoss()
        else:
            self.loss = gluon.loss.SoftmaxCrossEntropyLoss()

    def initialize_like_fasttext(self, ctx):
        """Input rows uniform in +-1/dim as fastText; output weights Xavier rather than fastText's zeros.

        With batched SGD the output layer takes batch-averaged steps; starting it at zero would
        leave the embeddings without gradient until it has grown, which takes many epochs.
        """
        self.embedding.initialize(mx.init.Uniform(1.0 / self.emsize), ctx=ctx)
        self.output.initialize(mx.init.Xavier(), ctx=ctx)

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
            p = nd.sigmoid(scores.reshape((-1,)))
            return nd.stack(1 - p, p, axis=1)
        return nd.softmax(scores, axis=1)

    def word_vectors(self):
        """The embedding table as numpy (rows: vocabulary, then n-gram buckets)."""
        return self.embedding.weight.data(self.embedding.weight.list_ctx()[0]).asnumpy()
