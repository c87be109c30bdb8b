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


def sparse_step(model, values, entry_index, arrays, global_batch, summed_loss=None):
    """Forward and backward for one device's share of a batch, with the embedding done by hand.

    ``arrays`` is a :class:`~fasttext_lib.batches.BatchArrays`; ``values`` holds the embedding rows
    it reads (:meth:`~fasttext_lib.optim.Updater.embedding_for`): the whole table, read at
    ``entry_index`` (each entry's table row, native operators), or the batch's rows already
    gathered (read at ``entry_index``, the compact columns, or through ``bag`` when it is None).
    ``summed_loss``: the model's :func:`summed_loss_block` (train() passes one it has hybridized).

    The loss is averaged over ``global_batch`` documents (all devices and workers).
    """
    from mxnet import autograd, nd

    if arrays.native:
        docs = nd.fasttext_bag_mean(values, arrays.offsets, entry_index, arrays.weights)
    else:
        docs = nd.sparse.dot(arrays.bag, values)
    docs.attach_grad()
    weight = model.output.weight.data(arrays.rows.context)
    if summed_loss is None:
        summed_loss = summed_loss_block(model)
    with autograd.record():
        loss_sum = summed_loss(model.dropout(docs) if model.dropout is not None else docs, arrays.labels)
    # d(loss_sum / global_batch): the head gradient 1 / global_batch, exactly as MXNet's own
    # `loss_sum * (1 / global_batch)` would pass it back (one operator and autograd record less)
    loss_sum.backward(out_grad=mean_head_gradient(global_batch, loss_sum.context))
    return StepResult(arrays, loss_sum, docs.grad, weight.grad)


def summed_loss_block(model):
    """The output layer, the loss and its sum over the batch: the part of a step autograd records.

    train() hybridizes it, so that a step runs it as one cached graph (one call into MXNet and one
    autograd record, where op by op there were ~12 of each): on short texts that bookkeeping was a
    third of the training loop's Python time. The same operators in the same order, so the same
    numbers (tests/test_train.py). Not a child of the model (its parameter would be saved twice
    over): it shares the model's output layer and loss.
    """
    from mxnet import gluon

    class SummedLoss(gluon.HybridBlock):
        def __init__(self):
            super().__init__(prefix="summed_loss_")
            self.output, self.loss = model.output, model.loss

        def hybrid_forward(self, F, docs, labels):
            return F.sum(self.loss(self.output(docs), labels))

    return SummedLoss()


_HEAD_GRADIENTS = {}


def mean_head_gradient(global_batch, ctx):
    """``[1 / global_batch]`` as the float32 that MXNet's scalar multiply makes of it (kept per batch size)."""
    from mxnet import nd

    key = (int(global_batch), ctx)
    if key not in _HEAD_GRADIENTS:
        _HEAD_GRADIENTS[key] = nd.ones((1,), ctx=ctx) * (1.0 / global_batch)
    return _HEAD_GRADIENTS[key]


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
