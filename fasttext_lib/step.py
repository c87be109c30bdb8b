"""One device's share of a training step: forward, and backward with a hand-made row-sparse gradient.

Autograd records only the small dense classifier on the document means ``h``; the embedding
gradient ``bag_t x dL/dh`` over just the batch's rows follows from ``dL/dh``
(:func:`embedding_gradient`), or is fused into the SGD update (optim.py). On the CPU the bag products
are native MXNet operators (bag_ops.py); elsewhere MXNet's generic ``take`` / ``dot(csr, dense)``
compute the same numbers.
"""
from typing import NamedTuple


def use_bag_ops(ctxs):
    """Whether training on ``ctxs`` uses the native CPU operators of bag_ops.py (built on first use)."""
    from . import bag_ops

    return all(c.device_type == "cpu" for c in ctxs) and bag_ops.available()


class StepResult(NamedTuple):
    """What :func:`sparse_step` leaves for the optimizer (optim.Updater.apply)."""

    arrays: object  # the batch (batches.BatchArrays)
    loss_sum: object  # summed (not averaged) loss of the batch, shape (1,)
    docs_grad: object  # dL/dh, one row per document
    output_grad: object  # gradient of the output layer's weight


def sparse_step(model, values, entry_index, arrays, global_batch):
    """Forward and backward for one device's share of a batch, with the embedding done by hand.

    ``arrays`` is a :class:`~fasttext_lib.batches.BatchArrays`; ``values`` holds the embedding rows
    it reads (:meth:`~fasttext_lib.optim.Updater.embedding_for`): the whole table, read at
    ``entry_index`` (each entry's table row, native operators), or the batch's rows already
    gathered (read at ``entry_index``, the compact columns, or through ``bag`` when it is None).

    The loss is averaged over ``global_batch`` documents (all devices and workers).
    """
    from mxnet import autograd, nd

    if arrays.native:
        docs = nd.fasttext_bag_mean(values, arrays.offsets, entry_index, arrays.weights)
    else:
        docs = nd.sparse.dot(arrays.bag, values)
    docs.attach_grad()
    weight = model.output.weight.data(arrays.rows.context)
    with autograd.record():
        loss_sum = model.loss(model.classify(docs), arrays.labels).sum()
        scaled = loss_sum * (1.0 / global_batch)
    scaled.backward()
    return StepResult(arrays, loss_sum, docs.grad, weight.grad)


def embedding_gradient(model, arrays, docs_grad):
    """The embedding gradient ``bag_t x dL/dh`` as a row-sparse array over the batch's rows.

    Native and generic operators compute the same sums in the same order (bit-identical results).
    """
    from mxnet import nd

    if arrays.native:  # the operator calls SGD's row scale doc_freq_scale
        grad = nd.fasttext_bag_mean_backward(arrays.offsets, arrays.columns, arrays.weights, docs_grad,
                                             num_rows=len(arrays.rows), doc_freq_scale=int(arrays.sgd_row_scale),
                                             **shrink_attr(arrays))
    else:
        grad = nd.sparse.dot(arrays.bag_t, docs_grad)  # SGD's row scale is already in bag_t
    return nd.sparse.row_sparse_array((grad, arrays.rows), shape=(model.num_rows, model.emsize), ctx=arrays.rows.context)


def shrink_attr(arrays):
    """The native operators' ``shrink`` attribute for ``arrays.row_shrink`` (none when it is 0)."""
    return {"shrink": arrays.row_shrink} if arrays.row_shrink else {}
