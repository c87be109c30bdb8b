"""The reference recipe, kept only to be measured against: GluonNLP's ``fasttext_word_ngram.py``.

Its model embeds padded (batch, max_len) ids with a *dense* embedding gradient, so every batch of
16 writes the whole table (46M floats with Yelp bigrams) through Adam. That, not the model, is
why its laptop CPU run never finished an epoch. Notebook 03 and benchmarks/ time it for a few
hundred batches next to :func:`fasttext_lib.train.train` on the same documents.
"""
import time

import numpy as np

from .errors import FastTextError

# The recipe's batch, and the batches run before the clock starts (MXNet allocates and compiles in the first ones).
BATCH_SIZE, WARMUP = 16, 3


def check_documents(count, what=None, batch_size=BATCH_SIZE, warmup=WARMUP):
    """One error if ``count`` documents cannot time the recipe: it needs its warm-up batches and one full batch more.
    Notebook 03 gives ``what`` (``"batches * batch_size = 32"``) so that the line names its parameters: too few
    documents were found only after every device had been timed, in a ValueError traceback."""
    needed = (warmup + 1) * batch_size
    if count < needed:
        raise FastTextError(f"{what or count} documents are too few for the dense recipe: it needs at least {needed} "
                            f"({warmup} warm-up batches of {batch_size}, then one timed)")


def time_dense_recipe(bags, labels, num_rows, emsize=100, batch_size=BATCH_SIZE, batches=200, warmup=WARMUP, ctx=None, seed=0,
                      max_seconds=None):
    """Train the dense-gradient recipe for ``batches`` timed batches (or ``max_seconds``); returns docs/s.

    ``bags`` are documents encoded by a fitted :class:`~fasttext_lib.features.Featurizer` (the
    recipe's ids are the same rows, padded); ``labels`` are 0/1 (the recipe's sigmoid output).
    """
    import mxnet as mx
    from mxnet import autograd, gluon
    from mxnet.gluon import nn

    check_documents(len(bags), batch_size=batch_size, warmup=warmup)
    ctx = ctx or mx.cpu()

    class DenseRecipe(gluon.HybridBlock):  # the recipe's FastTextClassificationModel
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.embedding = nn.Embedding(num_rows, emsize)  # dense gradient: the whole table every step
                self.dense = nn.Dense(1)

        def hybrid_forward(self, F, ids, length):
            vectors = F.SequenceMask(self.embedding(ids), sequence_length=length, use_sequence_length=True, axis=1)
            return self.dense(F.broadcast_div(F.sum(vectors, axis=1), length.expand_dims(axis=1)))

    mx.random.seed(seed)
    net = DenseRecipe()
    net.initialize(mx.init.Xavier(), ctx=ctx)
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.05})
    loss_fn = gluon.loss.SigmoidBinaryCrossEntropyLoss()
    order = np.random.RandomState(seed).permutation(len(bags))
    total = min(batches + warmup, len(bags) // batch_size)  # full batches: more than warmup (check_documents)
    labels = np.asarray(labels, dtype=np.float32)
    timed, started = 0, None
    for b in range(total):
        if b == warmup:
            mx.nd.waitall()
            started = time.time()
        docs = order[b * batch_size:(b + 1) * batch_size]
        lengths = bags.offsets[docs + 1] - bags.offsets[docs]
        ids = np.zeros((len(docs), lengths.max()), dtype=np.float32)
        for i, d in enumerate(docs):
            ids[i, :lengths[i]] = bags.rows[bags.offsets[d]:bags.offsets[d + 1]]
        with autograd.record():
            loss = loss_fn(net(mx.nd.array(ids, ctx=ctx), mx.nd.array(lengths, ctx=ctx)), mx.nd.array(labels[docs], ctx=ctx))
        loss.backward()
        trainer.step(len(docs))
        if started is not None:
            timed += len(docs)
            if max_seconds is not None:
                loss.wait_to_read()
                if time.time() - started > max_seconds:
                    break
    mx.nd.waitall()
    seconds = time.time() - started
    return {"docs_per_s": timed / seconds, "batches": timed // batch_size, "seconds": seconds}
