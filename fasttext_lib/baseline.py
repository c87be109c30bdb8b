"""The reference recipe, kept only to be measured against: GluonNLP's ``fasttext_word_ngram.py``.

Its model embeds padded (batch, max_len) ids with a *dense* embedding gradient, so every batch of
16 writes the whole table (46M floats with Yelp bigrams) through Adam. That, not the model, is
why its laptop CPU run never finished an epoch. Notebook 03 (``dense_batches``, 50) and benchmarks/ time it for
some batches next to :func:`fasttext_lib.train.train` on the same documents
(:func:`compare_with_dense`: notebook 03's table).
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
                      max_seconds=None, num_classes=2):
    """Train the dense-gradient recipe for ``batches`` timed batches (or ``max_seconds``): ``{"docs_per_s", "batches",
    "seconds", "loss"}`` (``loss``: the last batch's mean).

    ``bags`` are documents encoded by a fitted :class:`~fasttext_lib.features.Featurizer` (the
    recipe's ids are the same rows, padded); ``labels`` are class ids 0..``num_classes - 1``
    (:func:`fasttext_lib.label_encoding.encode_labels`). As the recipe's FastTextClassificationModel, two classes
    are one sigmoid output and more are ``num_classes`` outputs under a softmax cross-entropy: with one
    sigmoid for every dataset, the class ids 2, 3, ... of a multi-class set were read as probabilities.
    """
    import mxnet as mx
    from mxnet import autograd, gluon
    from mxnet.gluon import nn

    check_documents(len(bags), batch_size=batch_size, warmup=warmup)
    labels = np.asarray(labels)
    if len(labels) != len(bags) or (len(labels) and not (0 <= labels.min() and labels.max() < num_classes)):
        raise FastTextError(f"labels must be one class id in 0..{num_classes - 1} per document (label_encoding.encode_labels)")
    outputs = 1 if num_classes <= 2 else num_classes
    ctx = ctx or mx.cpu()

    class DenseRecipe(gluon.HybridBlock):  # the recipe's FastTextClassificationModel
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.embedding = nn.Embedding(num_rows, emsize)  # dense gradient: the whole table every step
                self.dense = nn.Dense(outputs)

        def hybrid_forward(self, F, ids, length):
            vectors = F.SequenceMask(self.embedding(ids), sequence_length=length, use_sequence_length=True, axis=1)
            return self.dense(F.broadcast_div(F.sum(vectors, axis=1), length.expand_dims(axis=1)))

    mx.random.seed(seed)
    net = DenseRecipe()
    net.initialize(mx.init.Xavier(), ctx=ctx)
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.05})
    loss_fn = gluon.loss.SigmoidBinaryCrossEntropyLoss() if outputs == 1 else gluon.loss.SoftmaxCrossEntropyLoss()
    order = np.random.RandomState(seed).permutation(len(bags))
    total = min(batches + warmup, len(bags) // batch_size)  # full batches: more than warmup (check_documents)
    labels = labels.astype(np.float32)  # (the sigmoid's target, or the softmax's class id)
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
    return {"docs_per_s": timed / seconds, "batches": timed // batch_size, "seconds": seconds,
            "loss": float(loss.mean().asscalar())}  # the last batch's: a cross-entropy, so >= 0


# compare_with_dense's row names: the recipe measured against, and this library
DENSE_RECIPE = "GluonNLP fasttext_word_ngram.py (dense gradient, batch 16)"


def compare_with_dense(data, batch_size, epoch_docs, emsize=100, ngrams=2, buckets=200_000, optimizer="sgd",
                       dense_batches=50, seed=0):
    """Notebook 03's recipe table: the dense-gradient recipe (:func:`time_dense_recipe`, ``dense_batches`` batches of
    16 on the CPU) and :func:`fasttext_lib.train.train` (2 epochs at ``batch_size``, the second timed) on the same
    documents ``data`` (a :class:`~fasttext_lib.data.LabeledTexts`) and the same features (``ngrams``, a
    ``buckets``-row table for both). A pandas DataFrame indexed by ``recipe``: ``samples_per_s``,
    ``epoch_hours_estimate`` (an epoch of ``epoch_docs`` documents at that speed: a Yelp epoch only with its size and
    Yelp-shaped documents, as 03's ``epoch_s_estimate``) and ``speedup`` over the recipe.

    The recipe's classes are those of ``data`` (sorted, as training sorts them), with its output layer for that
    many (:func:`time_dense_recipe`)."""
    import pandas as pd

    from .config import TrainConfig
    from .label_encoding import encode_labels
    from .train import featurize, train

    config = TrainConfig(epochs=2, optimizer=optimizer, emsize=emsize, ngrams=ngrams, buckets=buckets,
                         batch_size=batch_size, ctx="cpu", seed=seed, progress=False)
    # the features train() would make of the documents, made once for both recipes (the vocabulary was fitted twice)
    featurized = featurize(data, None, config)
    featurizer, token_bags, _ = featurized
    classes = data.classes()
    labels = encode_labels(data.labels, classes, "the timed documents")
    dense = time_dense_recipe(token_bags.encode_all(), labels, featurizer.num_rows, emsize=emsize,  # on the CPU
                              batches=dense_batches, num_classes=len(classes))
    sparse = train(data, None, config, featurized=featurized)
    recipes = pd.DataFrame([
        {"recipe": DENSE_RECIPE, "samples_per_s": dense["docs_per_s"]},
        {"recipe": f"fasttext_lib (row-sparse, batch {batch_size})", "samples_per_s": sparse.history[-1]["samples_per_s"]},
    ]).set_index("recipe")
    recipes["epoch_hours_estimate"] = epoch_docs / recipes.samples_per_s / 3600
    recipes["speedup"] = recipes.samples_per_s / recipes.samples_per_s.iloc[0]
    return recipes
