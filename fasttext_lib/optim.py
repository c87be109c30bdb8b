"""Where the optimizer runs: MXNet's lazy sgd/adam, applied by a local updater or a kvstore.

:class:`Updater` takes every device's :class:`~fasttext_lib.step.StepResult` and updates just the
rows the batch touched. One device: MXNet's updater, or on the CPU with plain SGD a native operator
that fuses the backward product with the update. Several devices or hosts: an MXNet kvstore sums
the row-sparse gradients and holds the optimizer.
"""
import functools
import typing

import numpy as np

from .schedule import sgd_row_shrink
from .step import embedding_gradient, shrink_attr

EMBEDDING_KEY, OUTPUT_KEY = 0, 1
STATE_FORMAT = 1  # OptimizerState.counters["format"]


def make_optimizer(config, steps_per_epoch):
    """MXNet's optimizer for a :class:`~fasttext_lib.config.TrainConfig`: lazy, with its lr schedule.

    ``steps_per_epoch``: the optimizer's updates per key and epoch, which its schedule counts (dist_async
    servers update on every worker's push: a worker's steps times the workers).

    SGD with n-grams on batches above 256 documents: the output layer's lr is ``1 + row_shrink``
    times the embedding's, the factor the SGD row scale gives rows found in many documents of a
    batch (batches.sgd_row_scale_entries); the output layer is in every document.
    """
    import mxnet as mx

    params = {"learning_rate": config.learning_rate, "wd": config.wd, "lazy_update": True, "rescale_grad": 1.0}
    if config.lr_schedule == "linear":
        # Step k of T (MXNet counts from 1) takes lr * (1 - k / (T + 1)): the schedule's 0 lies one step past the
        # run, and its T steps spend lr * T / 2, as fastText's linear decay does. With max_update T the last step's
        # lr was 0: every run lost a step, and a run of one step (data within a batch, 1 epoch) learned nothing.
        params["lr_scheduler"] = mx.lr_scheduler.PolyScheduler(
            max_update=max(1, steps_per_epoch * config.epochs) + 1, base_lr=config.learning_rate, pwr=1, final_lr=0.0)
    optimizer = mx.optimizer.create(config.optimizer, **params)
    shrink = sgd_row_shrink(config)
    if shrink:
        optimizer.set_lr_mult({OUTPUT_KEY: 1.0 + shrink})
    return optimizer


@functools.lru_cache(maxsize=8)  # called three times a step; wd and rescale_grad stay the same all run
def as_mxnet_parses(value):
    """The float32 an MXNet operator computes with when given the Python float ``value`` as a float
    parameter (``lr``, ``wd``, ...), as a float that names it exactly.

    Operator parameters travel as text (``str(value)``) and MXNet reads a float field with dmlc-core's
    fast parser (``dmlc::ParseFloat<float>``, include/dmlc/strtonum.h), which is not correctly
    rounded: the integer part and the fraction (up to 19 digits, divided in double) are rounded to
    float separately and added in float, and an exponent scales in float. So ``sgd_update`` with
    lr=3.1578947368421053 steps with 3.1578946 (one unit in the last place below the nearest
    float). The fused SGD operator reads its text exactly (strtod), so it is handed the float the
    updater's ``sgd_update`` uses: both routes then take bit-identical steps.
    """
    text = str(float(value)).lower()
    negative = text.startswith("-")
    text = text.lstrip("+-")
    if text in ("inf", "nan"):
        return float(value)
    mantissa, _, exponent = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    result = np.float32(int(whole or "0"))
    if fraction:
        digits = fraction[:19]  # later digits are ignored
        result = np.float32(result + np.float32(float(int(digits)) / float(10 ** len(digits))))
    if exponent:
        power = abs(int(exponent))
        scale = np.float32(1.0)
        while power >= 8:
            scale, power = np.float32(scale * np.float32(1e8)), power - 8
        while power > 0:
            scale, power = np.float32(scale * np.float32(10.0)), power - 1
        result = np.float32(result / scale) if exponent.startswith("-") else np.float32(result * scale)
    return -float(result) if negative else float(result)


def continue_schedule(optimizer, updates_done):
    """Start ``optimizer`` as one that has applied ``updates_done`` updates to every key: its lr
    schedule (``num_update``) and each key's count (adam's bias correction), as MXNet counts them
    (``Optimizer._update_count``: a key not seen yet starts from ``begin_num_update``).

    For dist_* kvstores, whose servers hold the optimizer and whose state no checkpoint can hold
    (:meth:`Updater.get_states`): the servers receive the optimizer pickled, counts included
    (``kv.set_optimizer``), so a resumed run's first step takes the lr of the step it stopped
    before, not the schedule's first lr again. Local runs restore the whole optimizer instead.
    """
    optimizer.begin_num_update = optimizer.num_update = int(updates_done)
    for counts in optimizer._all_index_update_counts.values():  # (empty: nothing updated yet)
        counts.clear()


def holds_state(optimizer, weight):
    """Whether ``optimizer`` keeps state per weight (adam's moments; plain SGD keeps none)."""
    return optimizer.create_state(OUTPUT_KEY, weight) is not None


class Updater:
    """Where the optimizer runs: a local updater (one device) or a kvstore (several, or several hosts).

    With a kvstore the store holds the embedding table as row_sparse and applies the optimizer
    (``update_on_kvstore``): each step pulls just the batch's rows, pushes the row-sparse gradients
    (summed over devices and, with ``dist_sync``, over workers), and pulls the small output layer.
    Device copies of the full table are refreshed once per epoch (:meth:`sync_tables`).
    """

    def __init__(self, model, ctxs, optimizer, kv, updates_done=0):
        """``updates_done``: a resumed dist_* run's optimizer updates per key so far (see
        :func:`continue_schedule`); other runs restore theirs with :meth:`load_states`."""
        from mxnet import optimizer as mxopt

        self.ctxs, self.kv = ctxs, kv
        self.server_state_lost = False  # a resumed dist_* run whose servers' optimizer state starts over
        self.tables = [model.embedding.weight.data(c) for c in ctxs]
        self.outputs = [model.output.weight.data(c) for c in ctxs]
        self._nonfinite_written = None  # (1,) flag the fused SGD operator raises (see parameters_finite)
        self._lazy_update_note_due = type(optimizer).__name__ != "SGD" and not (kv is not None and "dist" in kv.type)
        self._table_updated_elsewhere = False  # a table update since the last check that bypassed that flag
        if kv is None:
            self.updater = mxopt.get_updater(optimizer)
            return
        if kv.type.startswith("dist") and updates_done:
            continue_schedule(optimizer, updates_done)
            self.server_state_lost = holds_state(optimizer, self.outputs[0])
        kv.set_optimizer(optimizer)  # (dist: pickled, counts included, and sent to every server)
        kv.init(EMBEDDING_KEY, self.tables[0].tostype("row_sparse"))
        kv.init(OUTPUT_KEY, self.outputs[0])
        self._pull_outputs()  # dist: every worker starts from the values worker 0 initialized
        self.sync_tables()

    def embedding_for(self, i, arrays):
        """``(values, entry_index)`` for :func:`~fasttext_lib.step.sparse_step` on device ``i``.

        One device, native operators: the table itself, read at each entry's row. Otherwise the
        batch's rows gathered (``take``) or, with a kvstore, pulled (just those rows), which the
        entries address by compact column.
        """
        from mxnet import nd

        if self.kv is None:
            if arrays.native:
                return self.tables[i], arrays.entry_rows
            return nd.take(self.tables[i], arrays.rows), None
        pulled = nd.sparse.zeros("row_sparse", self.tables[i].shape, ctx=self.ctxs[i])
        self.kv.row_sparse_pull(EMBEDDING_KEY, out=pulled, row_ids=arrays.rows)
        return pulled.data, arrays.columns  # rows come back sorted and unique, as batch.rows already are

    def apply(self, model, steps):
        """One optimizer step from every device's :class:`~fasttext_lib.step.StepResult`."""
        output_grads = [step.output_grad for step in steps]
        if self._lazy_update_note_due:
            self._lazy_update_note_due = False
            use_up_mxnets_lazy_update_note()
        if self.kv is None:
            step = steps[0]
            if step.arrays.native and self._plain_sgd():
                self._fused_sgd(step.arrays, step.docs_grad)
                self._plain_sgd_output(output_grads[0])
                return
            self._table_updated_elsewhere = True
            self.updater(EMBEDDING_KEY, embedding_gradient(model, step.arrays, step.docs_grad), self.tables[0])
            self.updater(OUTPUT_KEY, output_grads[0], self.outputs[0])
            return
        self._table_updated_elsewhere = True
        self.kv.push(EMBEDDING_KEY, [embedding_gradient(model, step.arrays, step.docs_grad) for step in steps])
        self.kv.push(OUTPUT_KEY, output_grads)
        self._pull_outputs()

    def _plain_sgd(self):
        opt = self.updater.optimizer
        return (type(opt).__name__ == "SGD" and not opt.momentum and not opt.clip_gradient
                and not opt.multi_precision)

    def _fused_sgd(self, arrays, docs_grad):
        """Exactly the updater's lazy SGD step on the embedding (the same lr schedule, counts and
        formula), fused with the backward product: the row-sparse gradient is never materialized."""
        from mxnet import nd

        opt = self.updater.optimizer
        opt._update_count(EMBEDDING_KEY)  # what SGD.update does first: the lr schedule counts steps
        if self._nonfinite_written is None:
            self._nonfinite_written = nd.zeros((1,), ctx=self.tables[0].context)
        nd.fasttext_bag_sgd_update(self.tables[0], arrays.offsets, arrays.columns, arrays.weights, docs_grad,
                                   arrays.rows, self._nonfinite_written, with_status=1,
                                   lr=as_mxnet_parses(opt._get_lr(EMBEDDING_KEY)),
                                   wd=as_mxnet_parses(opt._get_wd(EMBEDDING_KEY)),
                                   rescale_grad=as_mxnet_parses(opt.rescale_grad),
                                   doc_freq_scale=int(arrays.sgd_row_scale),  # the operator's name for it
                                   **shrink_attr(arrays))

    def _plain_sgd_output(self, grad):
        """``self.updater(OUTPUT_KEY, grad, weight)`` for plain SGD, without the generic updater's
        bookkeeping (~0.1 ms of Python a step): MXNet's SGD on one dense weight is this same
        ``multi_sgd_update`` call with the same arguments (optimizer.py, ``SGD._update_impl``), so
        the same numbers; the updater's state entry (None for plain SGD) is made as it would be."""
        from mxnet import nd

        opt, weight = self.updater.optimizer, self.outputs[0]
        if OUTPUT_KEY not in self.updater.states:
            self.updater.states[OUTPUT_KEY] = opt.create_state_multi_precision(OUTPUT_KEY, weight)
            self.updater.states_synced[OUTPUT_KEY] = True
        opt._set_current_context(weight.context.device_id)
        opt._update_count([OUTPUT_KEY])
        nd.multi_sgd_update(weight, grad, out=[weight], num_weights=1, lrs=opt._get_lrs([OUTPUT_KEY]),
                            wds=opt._get_wds([OUTPUT_KEY]), rescale_grad=opt.rescale_grad)

    def parameters_finite(self):
        """Whether every parameter is finite (no NaN, no infinity): the per-epoch divergence check.

        The output layer is small: scanned whole. The embedding table (800 MB with bigrams) is not
        scanned when every update since the last check went through the fused SGD operator, which
        flags any non-finite value as it writes it (bag_ops.cc): only rows written can change, and
        the table starts finite (the seeded init, or a checkpoint that passed this check). Any
        other update (MXNet's updater, adam, a kvstore; the GPU route) gets one ``all_finite`` pass
        over the table (MXNet's operator, CPU and GPU, parallel; ~10x faster than a sum), after
        :meth:`sync_tables`. A sum over the table, the check before, cost ~0.9 s per epoch.
        """
        from mxnet import nd

        checks = [nd.all_finite(out, init_output=True) for out in self.outputs[:1]]  # devices hold equal copies
        if self._table_updated_elsewhere:
            checks.append(nd.all_finite(self.tables[0], init_output=True))
        if self._nonfinite_written is not None:
            checks.append(1 - self._nonfinite_written)
        finite = all(check.asscalar() == 1 for check in checks)
        self._table_updated_elsewhere = False
        return finite

    def _pull_outputs(self):
        self.kv.pull(OUTPUT_KEY, out=self.outputs)

    def sync_tables(self):
        """Bring every device's full table up to date (kvstore only): before scoring or saving.

        A block of rows at a time (:func:`table_blocks`), each pulled from the store and copied into every device's
        rows, waited for before the next: one pull of every row and its dense cast were two temporaries the size of
        the table on the first device (and a third, the store's retained rows, on the host for a ``local``
        kvstore), which a GPU holding the table and adam's moments had no room for: MXNet's traceback after the
        setup or an epoch. The tables end the same, byte for byte."""
        from mxnet import nd

        if self.kv is None:
            return
        first, shape = self.ctxs[0], self.tables[0].shape
        for start, stop in table_blocks(*shape):
            pulled = nd.sparse.zeros("row_sparse", shape, ctx=first)
            # a row_sparse_pull of the block's rows: dist kvstores cannot pull a sparse value whole
            self.kv.row_sparse_pull(EMBEDDING_KEY, out=pulled, row_ids=nd.arange(start, stop, ctx=first,
                                                                                   dtype="int64"))
            block = _dense_rows(pulled, start, stop)
            for table in self.tables:
                block.copyto(table[start:stop])  # (a view of the table's rows: written in place)
            for table in self.tables:
                table.wait_to_read()  # this block's temporaries freed before the next block's are made

    def _local_updater(self):
        """MXNet's updater that holds the optimizer and its state here (``None`` where the servers do: dist
        kvstores, whose servers MXNet cannot ask for it: ``save_optimizer_states`` refuses them, and a command
        to a server returns nothing. Their update count is restored from the checkpoint's epoch instead,
        :func:`continue_schedule`). A local kvstore's is the one its ``save_optimizer_states`` pickles."""
        if self.kv is None:
            return self.updater
        return None if self.kv.type.startswith("dist") else self.kv._updater

    def get_states(self):
        """The optimizer's state as data (:class:`OptimizerState`), ``None`` where the servers hold it."""
        updater = self._local_updater()
        return None if updater is None else dump_states(updater)

    def load_states(self, states):
        """Resume the optimizer from :meth:`get_states`'s ``states`` (checked by :func:`check_states`)."""
        updater = self._local_updater()
        if states is not None and updater is not None:
            restore_states(updater, states, self.weight_shapes(), self.weight_stypes(),
                           {c.device_id for c in self.ctxs})

    def weight_shapes(self):
        """Key -> the shape of the weight the optimizer updates under it."""
        return {EMBEDDING_KEY: self.tables[0].shape, OUTPUT_KEY: self.outputs[0].shape}

    def weight_stypes(self):
        """Key -> the storage type of the weight the optimizer updates under it: a kvstore holds the embedding as
        row_sparse (:meth:`__init__`)."""
        return {EMBEDDING_KEY: "default" if self.kv is None else "row_sparse", OUTPUT_KEY: "default"}


SYNC_BLOCK_BYTES = 64 << 20  # the most of the table Updater.sync_tables holds twice at once
SYNC_BLOCKS = 8  # and at most this fraction of it, so that a table that fits does with its moments and blocks


def table_blocks(num_rows, emsize):
    """``(start, stop)`` row ranges covering a ``num_rows`` x ``emsize`` float32 table in order, each at most an
    :data:`SYNC_BLOCKS`-th of it and :data:`SYNC_BLOCK_BYTES` (at least one row)."""
    rows = max(1, min(-(-num_rows // SYNC_BLOCKS), SYNC_BLOCK_BYTES // max(1, emsize * 4)))
    return [(start, min(num_rows, start + rows)) for start in range(0, num_rows, rows)]


def _dense_rows(pulled, start, stop):
    """Rows ``start:stop`` of a row_sparse ``pulled`` (a row_sparse_pull of those rows) as a dense block, as the
    table's dense cast has them: rows the store does not hold (kv.init's row_sparse cast drops all-zero rows) are
    zeros. Every row held (the usual case): its values as they are, no copy."""
    from mxnet import nd

    indices = pulled.indices  # (waits for the pull)
    if indices.shape[0] == stop - start:
        return pulled.data
    if indices.shape[0] <= 0:  # none held (a pull that wrote nothing leaves the shape unknown, -1)
        return nd.zeros((stop - start, pulled.shape[1]), ctx=pulled.context, dtype=pulled.dtype)
    block = nd.sparse.row_sparse_array((pulled.data, indices - start), shape=(stop - start, pulled.shape[1]),
                                       ctx=pulled.context, dtype=pulled.dtype)
    return block.tostype("default")


class OptimizerState(typing.NamedTuple):
    """An MXNet updater's state as plain data, which loading runs no code from (MXNet's ``Updater.get_states``
    is a pickle: a crafted checkpoint ran code at resume). ``counters``: JSON (the optimizer's update counts and
    lr schedule position, and how each key's state is made of ``arrays``); ``arrays``: name -> numpy array
    (an .npz file read with ``allow_pickle=False``)."""
    counters: dict
    arrays: dict


def use_up_mxnets_lazy_update_note():
    """MXNet logs "Optimizer with lazy_update = True detected. Be aware that lazy update ... may lead to different
    empirical results. See https://..." on stderr at a thread's first lazy adam update of a row_sparse gradient (its
    LogOnce, once per thread): a raw C++ log line in the middle of the progress bar, about a choice this library makes
    on purpose (only the rows a batch touched move, as in fastText). One tiny update of that kind in this thread, with
    descriptor 2 on /dev/null, uses up the once; nothing else runs meanwhile (the update is waited for)."""
    import os
    import sys

    from mxnet import nd

    weight, mean, var = nd.zeros((2, 1)), nd.zeros((2, 1)), nd.zeros((2, 1))
    grad = nd.sparse.row_sparse_array((nd.ones((1, 1)), nd.array([0], dtype="int64")), shape=(2, 1))
    try:
        sys.stderr.flush()
        saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    except (OSError, ValueError, AttributeError):  # no descriptor 2 to mute: the note may show
        return
    try:
        os.dup2(devnull, 2)
        nd.adam_update(weight, grad, mean, var, lr=0.0, lazy_update=True, out=weight)
        weight.wait_to_read()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def dump_states(updater):
    """What MXNet's ``updater.get_states(dump_optimizer=True)`` pickles, as an :class:`OptimizerState`: each key's
    state (None, an NDArray, dense or row_sparse, or a tuple of them: sgd, adam, multi-precision), and the
    optimizer's counters. Everything else of the optimizer (lr, wd, betas, lr_mult, the schedule's span) follows
    from the run's settings, which a resume must share: the resumed run's own optimizer is kept.

    Each state's values are a state_file.StateRows, read from the state's own memory when it is written (adam's
    moments are two tables the size of the embedding's: copied out, a save held them twice), so the state is to be
    written before the next step changes it."""
    from .state_file import StateRows

    opt, arrays = updater.optimizer, {}

    def encode(state):
        if state is None:
            return None
        if isinstance(state, (tuple, list)):
            return {"tuple": [encode(part) for part in state]}
        name = f"a{len(arrays)}"
        arrays[name] = StateRows(state)
        if state.stype == "row_sparse":  # rows absent from its storage are not zeros to MXNet's kernels: kept
            arrays[name + "_rows"] = state.indices.asnumpy()
            return {"row_sparse": name}
        return {"dense": name}

    current = [d for d, counts in opt._all_index_update_counts.items() if counts is opt._index_update_count]
    counters = {"format": STATE_FORMAT, "optimizer": type(opt).__name__.lower(),
                "num_update": opt.num_update, "begin_num_update": opt.begin_num_update,
                "update_counts": [[device, key, count] for device, counts in opt._all_index_update_counts.items()
                                  for key, count in counts.items()],
                "current_device": current[0] if current else 0,
                # PolyScheduler keeps the lr it last computed, and answers it past its max_update
                "scheduler_lr": getattr(opt.lr_scheduler, "base_lr", None),
                "states": [[key, encode(state)] for key, state in sorted(updater.states.items())]}
    return OptimizerState(counters, arrays)


def check_states(states, shapes, optimizer):
    """Refuse (ValueError, saying what) an :class:`OptimizerState` that is not what :func:`dump_states` writes for
    weights of ``shapes`` (key -> shape) and ``optimizer`` ("sgd", "adam"): a checkpoint edited by hand, whose
    checksums were updated, ran into MXNet's errors (a traceback) or took steps with other shapes' state."""
    counters, arrays, used = states.counters, states.arrays, set()

    def count(value, what):
        if type(value) is not int or value < 0:
            raise ValueError(f"{what} is not a count: {value!r}")
        return value

    def check(spec, shape):
        if spec is None:
            return
        if not isinstance(spec, dict) or len(spec) != 1:
            raise ValueError(f"a state is {spec!r}")
        (kind, value), = spec.items()
        if kind == "tuple" and isinstance(value, list):
            for part in value:
                check(part, shape)
            return
        names = [value, f"{value}_rows"] if kind == "row_sparse" else [value]
        if kind not in ("dense", "row_sparse") or not all(isinstance(n, str) and n in arrays for n in names):
            raise ValueError(f"a state names no array of the file: {spec!r}")
        used.update(names)
        data = arrays[value]
        if data.dtype != np.float32:
            raise ValueError(f"array {value} is {data.dtype}, not float32")
        if kind == "dense" and data.shape != shape:
            raise ValueError(f"array {value} has shape {data.shape}, its weight {shape}")
        if kind == "row_sparse":
            rows = arrays[f"{value}_rows"]
            if rows.dtype != np.int64 or rows.ndim != 1 or data.shape != (len(rows), *shape[1:]) \
                    or (len(rows) and (rows[0] < 0 or rows[-1] >= shape[0] or np.any(np.diff(rows) <= 0))):
                raise ValueError(f"array {value} is no row_sparse state of a {shape} weight")

    if not isinstance(counters, dict) or counters.get("format") != STATE_FORMAT:
        raise ValueError("its format is not this library's")
    if counters.get("optimizer") != optimizer:
        raise ValueError(f"it is {counters.get('optimizer')!r}'s state, not {optimizer}'s")
    count(counters.get("num_update"), "num_update")
    count(counters.get("begin_num_update"), "begin_num_update")
    count(counters.get("current_device"), "current_device")
    lr = counters.get("scheduler_lr")
    if lr is not None and (type(lr) not in (int, float) or not np.isfinite(lr)):
        raise ValueError(f"scheduler_lr is {lr!r}")
    triples = counters.get("update_counts")
    if not isinstance(triples, list) or not all(isinstance(t, list) and len(t) == 3 for t in triples):
        raise ValueError("update_counts is not a list of [device, key, count]")
    for device, key, value in triples:
        count(device, "a device")
        count(value, "an update count")
        if key not in shapes:
            raise ValueError(f"an update count of key {key!r}, which has no weight")
    entries = counters.get("states")
    if not isinstance(entries, list) or not all(isinstance(e, list) and len(e) == 2 and e[0] in shapes
                                                for e in entries) or len({e[0] for e in entries}) != len(entries):
        raise ValueError("states is not a list of [key, state], one per weight")
    for key, spec in entries:
        check(spec, tuple(shapes[key]))
    _check_state_kinds(dict(entries), shapes, optimizer)
    if used != set(arrays):
        raise ValueError(f"arrays no state names: {', '.join(sorted(set(arrays) - used))}")


def _check_state_kinds(specs, shapes, optimizer):
    """What ``optimizer`` keeps per weight, as :func:`dump_states` writes it after an epoch (``specs``: key -> state):
    plain SGD nothing (None: momentum is never set); adam its mean and variance, a pair of arrays for every weight
    (both are updated at every step). Arrays that fit their weights in another arrangement passed: one table or a pair
    cut to one stopped the first step in MXNet's unpacking (a traceback), and a weight without its state resumed with
    its moments at zero, silently away from the uninterrupted run."""
    if optimizer == "sgd":
        if any(spec is not None for spec in specs.values()):
            raise ValueError("it holds state for sgd, which keeps none")
        return
    for key in shapes:
        parts = (specs.get(key) or {}).get("tuple")
        if not (isinstance(parts, list) and len(parts) == 2 and None not in parts):
            raise ValueError(f"the state of key {key} is not adam's mean and variance: {specs.get(key)!r}")


def restore_states(updater, states, shapes, stypes=None, devices=()):
    """Put :func:`dump_states`'s ``states`` (checked by :func:`check_states` against the weights' ``shapes``, key ->
    shape) into ``updater`` and its optimizer:
    what MXNet's ``updater.set_states`` does with its pickle, the optimizer's counters set on the run's own.

    A resumed run may train on other devices (ctx is no setting of the run): each state is made the storage type
    the updater keeps for its weight (``stypes``, key -> "default" or "row_sparse": :func:`_state_array`), and each
    key's update count is its count on whatever device (``devices``: the device numbers this run's updates run on)
    updates it. MXNet counts per device number, and a count kept under the saving run's (cpu:1 or gpu:1 is 1) was
    not found on another: adam's bias correction started over.

    The arrays go to the updater: ``states.arrays`` is left empty, so that an array made into another (a state of
    the other storage type) is freed as soon as it is, not kept beside the updater's for the rest of the run."""
    counters, arrays, opt = states.counters, states.arrays, updater.optimizer
    stypes = stypes or {}

    def decode(spec, shape, stype):
        if spec is None:
            return None
        (kind, value), = spec.items()
        if kind == "tuple":
            return tuple(decode(part, shape, stype) for part in value)
        rows = arrays.pop(f"{value}_rows") if kind == "row_sparse" else None
        return _state_array(arrays.pop(value), rows, shape, stype)

    opt.num_update, opt.begin_num_update = counters["num_update"], counters["begin_num_update"]
    counts = {}  # (each key is updated on one device: its count there)
    for _, key, value in counters["update_counts"]:
        counts[key] = max(value, counts.get(key, value))
    numbers = {device for device, _, _ in counters["update_counts"]} | {counters["current_device"], 0, *devices}
    opt._all_index_update_counts = dict.fromkeys(numbers, counts)
    opt._index_update_count = counts
    if counters["scheduler_lr"] is not None and opt.lr_scheduler is not None:
        opt.lr_scheduler.base_lr = float(counters["scheduler_lr"])
    updater.states = {}
    for key, spec in counters["states"]:
        updater.states[key] = decode(spec, tuple(shapes[key]), stypes.get(key, "default"))
    updater.states_synced = dict.fromkeys(updater.states, False)  # moved to each weight's device at its next step


def _state_array(data, rows, shape, stype):
    """A state's values (``rows``: the rows ``data`` holds, None: all of them) as an NDArray of ``stype``, the type
    the updater's optimizer makes it for its weight (lazy adam: the weight's own). One device keeps the embedding
    dense, a kvstore row_sparse, and a state of the other type went to MXNet's dense fallback, which decays every
    row's moments and moves rows no gradient touched. A row_sparse one holds every row, as MXNet's lazy adam keeps
    it after its first step (and requires: it refuses a moment with rows missing).

    ``data``: numpy, or a dense float32 CPU NDArray (what checkpoints read, state_file.read_npz), which a dense state of
    all rows is, as it is: adam's moments, each the size of the embedding table, are not copied again."""
    from mxnet import nd

    from .table_memory import cpu_view

    if isinstance(data, nd.NDArray):
        if stype != "row_sparse" and rows is None:
            return data
        if stype != "row_sparse":
            full = nd.zeros(shape, dtype=data.dtype)
            cpu_view(full)[rows] = cpu_view(data)
            return full
    if stype == "row_sparse":
        rows = np.arange(shape[0], dtype=np.int64) if rows is None else rows
        return nd.sparse.row_sparse_array((data, rows), shape=shape, dtype=data.dtype)
    if rows is not None:
        full = np.zeros(shape, dtype=data.dtype)
        full[rows] = data
        data = full
    return nd.array(data, dtype=data.dtype)
