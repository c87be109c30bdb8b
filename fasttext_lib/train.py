"""The one training loop: every caller (CLI, notebooks, SageMaker entry point, benchmarks) uses it.

Data in, trained model + per-epoch history out:

1. the vocabulary and n-gram features come from the training split only (features.py);
2. each epoch shuffles the documents (seeded) and a background thread cuts them into compact
   sparse batches while MXNet computes the previous one;
3. :func:`sparse_step` per context: the document means (one bag-of-rows product), autograd only
   for the small dense classifier, and the embedding gradient as a row-sparse array over the
   batch's rows; the optimizer is *lazy*, so a step updates only those rows. On the CPU the bag
   products are native MXNet operators (bag_ops.py) and SGD's step is fused with the backward
   product; elsewhere MXNet's generic ``take`` / ``dot(csr, dense)`` compute the same numbers;
4. with one device a local updater applies the step; with several (or several hosts, kvstore
   ``dist_sync``) an MXNet kvstore sums the devices' gradients and holds the optimizer;
5. after each epoch the validation split is scored, a history row is recorded and, if asked, a
   checkpoint is written from which an interrupted run resumes exactly.
"""
import json
import math
import os
import pickle
import queue
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import List, Optional

import numpy as np

from . import storage
from .data import sort_labels
from .errors import FastTextError
from .features import BatchMaker, Featurizer
from .progress import bar

OPTIMIZERS = ("sgd", "adam")
LR_SCHEDULES = ("linear", "constant")
KVSTORES = ("auto", "local", "device", "dist_sync", "dist_async")
# Both take batch-averaged gradients (SGD with the per-row scale of _sgd_row_scale). These suit short
# runs (the demo: 20k docs, 5 epochs, ~100 steps). Longer runs do better with smaller steps: see
# docs/RESULTS.md for the settings that match or beat fastText C++ at 10 epochs
# (sgd lr 0.5 with batch 256, for unigrams and bigrams alike).
DEFAULT_LR = {"sgd": 8.0, "adam": 0.01}
HISTORY_COLUMNS = ["epoch", "train_loss", "val_loss", "val_accuracy", "seconds", "samples_per_s"]


@dataclass
class TrainConfig:
    """Every knob of a run; plain values so notebooks, argv and SageMaker hyperparameters map 1:1."""

    epochs: int = 10
    lr: Optional[float] = None  # None: DEFAULT_LR[optimizer]
    optimizer: str = "adam"
    batch_size: int = 1024
    emsize: int = 100
    ngrams: int = 1
    buckets: int = 2_000_000
    min_count: int = 1
    dropout: float = 0.0
    lr_schedule: str = "linear"  # linear decay to zero over the run, as fastText does
    wd: float = 0.0
    ctx: str = "auto"
    kvstore: str = "auto"  # auto: none for one device, "device" for several; dist_sync across hosts
    seed: int = 42
    progress: bool = True

    def __post_init__(self):
        for name in ("epochs", "batch_size", "emsize", "ngrams", "min_count"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0:
                raise FastTextError(f"{name} must be a positive integer, got {value!r}")
        if self.ngrams > 1 and (not isinstance(self.buckets, (int, np.integer)) or self.buckets <= 0):
            raise FastTextError(f"buckets must be a positive integer when ngrams > 1, got {self.buckets!r}")
        if self.optimizer not in OPTIMIZERS:
            raise FastTextError(f"optimizer must be one of {', '.join(OPTIMIZERS)}, got {self.optimizer!r}")
        if self.lr_schedule not in LR_SCHEDULES:
            raise FastTextError(f"lr_schedule must be one of {', '.join(LR_SCHEDULES)}, got {self.lr_schedule!r}")
        if self.kvstore not in KVSTORES:
            raise FastTextError(f"kvstore must be one of {', '.join(KVSTORES)}, got {self.kvstore!r}")
        if self.lr is not None and not self.lr > 0:
            raise FastTextError(f"lr must be positive, got {self.lr!r}")
        if not self.wd >= 0:
            raise FastTextError(f"wd must be non-negative, got {self.wd!r}")
        if not 0 <= self.dropout < 1:
            raise FastTextError(f"dropout must be in [0, 1), got {self.dropout!r}")

    @property
    def learning_rate(self):
        return self.lr if self.lr is not None else DEFAULT_LR[self.optimizer]

    def to_dict(self):
        return asdict(self)

    def same_run(self, other):
        """Whether a checkpoint written under ``other`` (a dict) can be resumed under this config."""
        mine = self.to_dict()
        return all(mine[k] == other.get(k) for k in mine if k not in ("progress", "ctx"))


def parse_ctx(spec="auto"):
    """``auto`` | ``cpu`` | ``gpu`` | ``gpu:N`` | ``gpu:0,1`` | a list of those -> list of mx.Context.

    ``auto`` is every GPU when ``mx.context.num_gpus() > 0``, else the CPU.
    """
    import mxnet as mx

    if isinstance(spec, (list, tuple)):
        return [c for s in spec for c in parse_ctx(s)]
    if isinstance(spec, mx.Context):
        return [spec]
    spec = str(spec).strip().lower()
    num_gpus = mx.context.num_gpus()
    if spec == "auto":
        return [mx.gpu(i) for i in range(num_gpus)] or [mx.cpu()]
    if spec == "cpu":
        return [mx.cpu()]
    if spec.startswith("cpu:"):  # several CPU "devices" exercise the multi-device path without GPUs
        return [mx.cpu(int(i)) for i in spec[4:].split(",")]
    if spec == "gpu" or spec.startswith("gpu:"):
        ids = [0] if spec == "gpu" else [int(i) for i in spec[4:].split(",") if i.strip()]
        if num_gpus == 0:
            raise FastTextError(f"ctx {spec!r} asks for a GPU but none is visible (mx.context.num_gpus() == 0)")
        missing = [i for i in ids if i >= num_gpus]
        if missing:
            raise FastTextError(f"ctx {spec!r}: only {num_gpus} GPU(s) visible")
        return [mx.gpu(i) for i in ids]
    raise FastTextError(f"unknown ctx {spec!r}: use auto, cpu, gpu, gpu:N or gpu:0,1")


def describe_ctx(ctxs):
    return ", ".join(str(c) for c in ctxs)


@dataclass
class TrainedModel:
    """What training produces: everything a bundle saves, plus the history."""

    model: object
    featurizer: Featurizer
    labels: List[str]
    config: TrainConfig
    ctx: list
    history: List[dict] = field(default_factory=list)
    rank: int = 0  # this worker's rank in distributed training (kvstore dist_*), else 0
    num_workers: int = 1

    def history_frame(self):
        import pandas as pd

        return pd.DataFrame(self.history, columns=HISTORY_COLUMNS).set_index("epoch")


def encode_labels(labels, label_names, where):
    index = {name: i for i, name in enumerate(label_names)}
    unknown = sorted(set(labels) - set(index))
    if unknown:
        shown = ", ".join(repr(u) for u in unknown[:5])
        raise FastTextError(f"{where} has label(s) {shown} not seen in training (known: {', '.join(label_names)})")
    return np.array([index[label] for label in labels], dtype=np.int64)


def train(train_data, val_data=None, config=None, on_epoch_end=None, checkpoint_dir=None):
    """Train a :class:`FastTextClassifier` on :class:`LabeledTexts`; returns a :class:`TrainedModel`.

    ``checkpoint_dir`` (a directory or ``s3://`` prefix): write a checkpoint after every epoch, and
    resume from the latest one found there. A resumed run ends with the same parameters as an
    uninterrupted one (single process; with ``dist_*`` kvstores the optimizer state restarts).
    """
    import mxnet as mx

    from .model import FastTextClassifier

    config = config or TrainConfig()
    ctxs = parse_ctx(config.ctx)
    label_names = sort_labels(train_data.labels)
    if len(train_data) == 0:
        raise FastTextError("training data is empty")
    if len(label_names) < 2:
        raise FastTextError(f"training data has a single class ({label_names[0]!r}); a classifier needs at least 2")
    y_train = encode_labels(train_data.labels, label_names, "training data")
    featurizer, train_bags = Featurizer.fit(
        train_data.texts, min_count=config.min_count, ngrams=config.ngrams, buckets=config.buckets,
        return_bags=True, progress=config.progress and len(train_data) > 50_000)
    val = None
    if val_data is not None and len(val_data):
        y_val = encode_labels(val_data.labels, label_names, "validation data")
        val = (featurizer.transform(val_data.texts), y_val)

    mx.random.seed(config.seed)
    model = FastTextClassifier(featurizer.num_rows, config.emsize, len(label_names), dropout=config.dropout)
    model.initialize_like_fasttext(ctxs)
    result = TrainedModel(model, featurizer, label_names, config, ctxs)
    first_epoch = 1
    resumed = load_checkpoint(checkpoint_dir, model, config, label_names) if checkpoint_dir else None
    if resumed is not None:
        first_epoch = resumed["epoch"] + 1
        result.history = resumed["history"]

    kv_type = config.kvstore if config.kvstore != "auto" else ("device" if len(ctxs) > 1 else None)
    kv = mx.kv.create(kv_type) if kv_type else None
    rank, workers = (kv.rank, kv.num_workers) if kv is not None else (0, 1)
    # Every worker draws the same permutation and takes an equal share: in dist_sync every worker
    # must push the same number of batches, or the last ones would wait forever.
    per_worker = len(train_data) // workers
    if per_worker == 0:
        raise FastTextError(f"{len(train_data)} training documents cannot be shared by {workers} workers")
    result.rank, result.num_workers = rank, workers
    steps_per_epoch = math.ceil(per_worker / config.batch_size)
    updates = _Updates(model, ctxs, _make_optimizer(config, steps_per_epoch), kv)
    if resumed is not None:
        updates.load_states(resumed["optimizer_states"])
    native = use_bag_ops(ctxs)
    maker = BatchMaker(train_bags, y_train, featurizer.num_rows)
    keep_freed_memory()
    for epoch in range(first_epoch, config.epochs + 1):
        mx.random.seed(config.seed + epoch)  # dropout masks: the same whether or not the run was resumed
        order = np.random.RandomState([config.seed, epoch]).permutation(len(train_data))
        order = order[rank * per_worker:(rank + 1) * per_worker]
        started = time.time()
        total_loss = mx.nd.zeros((1,), ctx=ctxs[0])
        batches = _prefetch(maker, order, config.batch_size, len(ctxs), with_transpose=not native)
        progress = bar(batches, total=steps_per_epoch, desc=f"epoch {epoch}/{config.epochs}", disable=not config.progress, unit="batch")
        for step, parts in enumerate(progress, 1):
            global_batch = sum(p.size for p in parts) * workers
            steps = []
            for i, (part, ctx) in enumerate(zip(parts, ctxs)):
                arrays = _to_ndarrays(part, ctx, model.binary, native, sgd_row_scale=config.optimizer == "sgd")
                steps.append((arrays,) + sparse_step(model, *updates.embedding_for(i, arrays), arrays, global_batch))
            updates.apply(model, steps)
            for _, loss_sum, _, _ in steps:
                total_loss += loss_sum.as_in_context(ctxs[0])
            if config.progress and step % 50 == 0:
                progress.set_postfix(loss=f"{total_loss.asscalar() / min(step * config.batch_size, len(order)):.4f}")
        updates.sync_tables()
        train_loss = total_loss.asscalar() / len(order)  # waits for the epoch's last batch
        seconds = time.time() - started
        progress.close()
        row = {"epoch": epoch, "train_loss": train_loss, "val_loss": float("nan"), "val_accuracy": float("nan"),
               "seconds": seconds, "samples_per_s": len(order) * workers / seconds}
        if val is not None:
            metrics = evaluate_bags(model, featurizer, val[0], val[1], ctxs[0])
            row.update(val_loss=metrics["loss"], val_accuracy=metrics["accuracy"])
        result.history.append(row)
        if checkpoint_dir and rank == 0:
            save_checkpoint(checkpoint_dir, epoch, model, config, label_names, result.history, updates.get_states())
        if on_epoch_end is not None:
            on_epoch_end(row)
    return result


def use_bag_ops(ctxs):
    """Whether training on ``ctxs`` uses the native CPU operators of bag_ops.py (built on first use)."""
    from . import bag_ops

    return all(c.device_type == "cpu" for c in ctxs) and bag_ops.available()


def sparse_step(model, values, index, arrays, global_batch):
    """Forward and backward for one device's share of a batch, with the embedding done by hand.

    ``arrays`` is a batch from :func:`_to_ndarrays`; ``values`` holds the embedding rows it reads
    (:meth:`_Updates.embedding_for`): the whole table, read at ``index`` (each entry's table row,
    native operators), or the batch's rows already gathered (compact columns). Autograd only
    records the small dense classifier on the document means ``h``; the embedding gradient
    follows from ``dL/dh`` (:func:`embedding_gradient`, or fused into the SGD step).

    The loss is averaged over ``global_batch`` documents (all devices and workers). Returns
    ``(summed loss, dL/dh, output-layer gradient)``.
    """
    from mxnet import autograd, nd

    if arrays.native:
        docs = nd.fasttext_bag_mean(values, arrays.offsets, index, arrays.weights)
    else:
        docs = nd.sparse.dot(arrays.bag, values)
    docs.attach_grad()
    weight = model.output.weight.data(arrays.rows.context)
    with autograd.record():
        loss_sum = model.loss(model.classify(docs), arrays.labels).sum()
        scaled = loss_sum * (1.0 / global_batch)
    scaled.backward()
    return loss_sum, docs.grad, weight.grad


def embedding_gradient(model, arrays, docs_grad):
    """The embedding gradient ``bag_t x dL/dh`` as a row-sparse array over the batch's rows.

    Native and generic operators compute the same sums in the same order (bit-identical results).
    """
    from mxnet import nd

    if arrays.native:
        grad = nd.fasttext_bag_mean_backward(arrays.offsets, arrays.columns, arrays.weights, docs_grad,
                                             num_rows=len(arrays.rows), doc_freq_scale=int(arrays.sgd_row_scale))
    else:
        grad = nd.sparse.dot(arrays.bag_t, docs_grad)  # SGD's row scale is already in bag_t
    return nd.sparse.row_sparse_array((grad, arrays.rows), shape=(model.num_rows, model.emsize), ctx=arrays.rows.context)


def _make_optimizer(config, steps_per_epoch):
    import mxnet as mx

    params = {"learning_rate": config.learning_rate, "wd": config.wd, "lazy_update": True, "rescale_grad": 1.0}
    if config.lr_schedule == "linear":
        params["lr_scheduler"] = mx.lr_scheduler.PolyScheduler(
            max_update=max(1, steps_per_epoch * config.epochs), base_lr=config.learning_rate, pwr=1, final_lr=0.0)
    return mx.optimizer.create(config.optimizer, **params)


EMBEDDING_KEY, OUTPUT_KEY = 0, 1


class _Updates:
    """Where the optimizer runs: a local updater (one device) or a kvstore (several, or several hosts).

    With a kvstore the store holds the embedding table as row_sparse and applies the optimizer
    (``update_on_kvstore``): each step pulls just the batch's rows, pushes the row-sparse gradients
    (summed over devices and, with ``dist_sync``, over workers), and pulls the small output layer.
    Device copies of the full table are refreshed once per epoch (:meth:`sync_tables`).
    """

    def __init__(self, model, ctxs, optimizer, kv):
        from mxnet import optimizer as mxopt

        self.ctxs, self.kv = ctxs, kv
        self.tables = [model.embedding.weight.data(c) for c in ctxs]
        self.outputs = [model.output.weight.data(c) for c in ctxs]
        if kv is None:
            self.updater = mxopt.get_updater(optimizer)
            return
        kv.set_optimizer(optimizer)
        kv.init(EMBEDDING_KEY, self.tables[0].tostype("row_sparse"))
        kv.init(OUTPUT_KEY, self.outputs[0])
        self._pull_outputs()  # dist: every worker starts from the values worker 0 initialized
        self.sync_tables()

    def embedding_for(self, i, arrays):
        """``(values, index)`` for :func:`sparse_step` on device ``i``: what the batch reads.

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
        """One optimizer step from every device's ``(arrays, loss, dL/dh, output grad)``."""
        output_grads = [step[3] for step in steps]
        if self.kv is None:
            arrays, _, docs_grad, _ = steps[0]
            if arrays.native and self._plain_sgd():
                self._fused_sgd(arrays, docs_grad)
            else:
                self.updater(EMBEDDING_KEY, embedding_gradient(model, arrays, docs_grad), self.tables[0])
            self.updater(OUTPUT_KEY, output_grads[0], self.outputs[0])
            return
        self.kv.push(EMBEDDING_KEY, [embedding_gradient(model, arrays, docs_grad) for arrays, _, docs_grad, _ in steps])
        self.kv.push(OUTPUT_KEY, output_grads)
        self._pull_outputs()

    def _plain_sgd(self):
        opt = self.updater.optimizer  # not cached: set_states (resume) replaces it
        return (type(opt).__name__ == "SGD" and not opt.momentum and not opt.clip_gradient
                and not opt.multi_precision)

    def _fused_sgd(self, arrays, docs_grad):
        """Exactly the updater's lazy SGD step on the embedding (the same lr schedule, counts and
        formula), fused with the backward product: the row-sparse gradient is never materialized."""
        from mxnet import nd

        opt = self.updater.optimizer
        opt._update_count(EMBEDDING_KEY)  # what SGD.update does first: the lr schedule counts steps
        nd.fasttext_bag_sgd_update(self.tables[0], arrays.offsets, arrays.columns, arrays.weights, docs_grad,
                                   arrays.rows, lr=opt._get_lr(EMBEDDING_KEY), wd=opt._get_wd(EMBEDDING_KEY),
                                   rescale_grad=opt.rescale_grad, doc_freq_scale=int(arrays.sgd_row_scale))

    def _pull_outputs(self):
        self.kv.pull(OUTPUT_KEY, out=self.outputs)

    def sync_tables(self):
        """Bring every device's full table up to date (kvstore only): before scoring or saving."""
        from mxnet import nd

        if self.kv is None:
            return
        full = nd.sparse.zeros("row_sparse", self.tables[0].shape, ctx=self.ctxs[0])
        # a row_sparse_pull of every row: dist kvstores cannot pull a sparse value whole
        every_row = nd.arange(self.tables[0].shape[0], ctx=self.ctxs[0], dtype="int64")
        self.kv.row_sparse_pull(EMBEDDING_KEY, out=full, row_ids=every_row)
        dense = full.tostype("default")
        for table in self.tables:
            dense.copyto(table)

    def get_states(self):
        """Optimizer state as bytes (``None`` where the servers hold it: dist kvstores)."""
        if self.kv is None:
            return self.updater.get_states(dump_optimizer=True)
        if self.kv.type.startswith("dist"):
            return None
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "states")
            self.kv.save_optimizer_states(path, dump_optimizer=True)
            with open(path, "rb") as f:
                return f.read()

    def load_states(self, states):
        if states is None:
            return
        if self.kv is None:
            self.updater.set_states(states)
            return
        if self.kv.type.startswith("dist"):
            return
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "states")
            with open(path, "wb") as f:
                f.write(states)
            self.kv.load_optimizer_states(path)


# ---- checkpoints: <checkpoint_dir>/epoch-NNNN/ each published atomically, newest kept ----

CHECKPOINT_MARKER = "checkpoint.json"
CHECKPOINT_FILES = ("model.params", "optimizer.states", CHECKPOINT_MARKER)


def _checkpoint_epochs(checkpoint_dir):
    """Epochs with a complete checkpoint (their marker exists), newest last."""
    found = []
    if storage.is_s3(checkpoint_dir):
        bucket, prefix = storage.split_s3(checkpoint_dir)
        prefix = prefix.rstrip("/") + "/" if prefix else ""
        with storage.s3_errors(checkpoint_dir):
            pages = storage.s3_client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
            keys = [o["Key"] for page in pages for o in page.get("Contents", [])]
        names = {k[len(prefix):] for k in keys}
    else:
        if not os.path.isdir(checkpoint_dir):
            return []
        names = {f"{d}/{CHECKPOINT_MARKER}" for d in os.listdir(checkpoint_dir)
                 if os.path.isfile(os.path.join(checkpoint_dir, d, CHECKPOINT_MARKER))}
    for name in names:
        head, _, tail = name.partition("/")
        if tail == CHECKPOINT_MARKER and head.startswith("epoch-") and head[6:].isdigit():
            found.append(int(head[6:]))
    return sorted(found)


def _epoch_dir(checkpoint_dir, epoch):
    return storage.join(checkpoint_dir, f"epoch-{epoch:04d}")


def save_checkpoint(checkpoint_dir, epoch, model, config, labels, history, optimizer_states):
    """Publish ``epoch-NNNN/`` (marker last), then delete older epochs: a kill at any point leaves
    at least one complete checkpoint."""
    older = _checkpoint_epochs(checkpoint_dir)
    with tempfile.TemporaryDirectory() as tmp:
        model.save_parameters(os.path.join(tmp, "model.params"))
        with open(os.path.join(tmp, "optimizer.states"), "wb") as f:
            pickle.dump(optimizer_states, f)
        with open(os.path.join(tmp, CHECKPOINT_MARKER), "w") as f:
            json.dump({"epoch": epoch, "labels": list(labels), "num_rows": model.num_rows,
                       "config": config.to_dict(), "history": history}, f)
        storage.publish_directory(tmp, _epoch_dir(checkpoint_dir, epoch), marker=CHECKPOINT_MARKER)
    for old in older:
        if old != epoch:
            storage.remove_directory(_epoch_dir(checkpoint_dir, old), CHECKPOINT_FILES)


def load_checkpoint(checkpoint_dir, model, config, labels):
    """Load the newest checkpoint into ``model``; ``None`` when there is none yet."""
    epochs = _checkpoint_epochs(checkpoint_dir)
    if not epochs:
        return None
    where = _epoch_dir(checkpoint_dir, epochs[-1])
    with tempfile.TemporaryDirectory() as tmp:
        storage.fetch_directory(where, CHECKPOINT_FILES, tmp)
        with open(os.path.join(tmp, CHECKPOINT_MARKER)) as f:
            meta = json.load(f)
        if meta.get("labels") != list(labels) or meta.get("num_rows") != model.num_rows or not config.same_run(meta.get("config", {})):
            raise FastTextError(f"checkpoint {where} was written by a different run (other data or settings); "
                                f"use another --checkpoint-dir or remove it")
        model.load_parameters(os.path.join(tmp, "model.params"), ctx=model.embedding.weight.list_ctx())
        with open(os.path.join(tmp, "optimizer.states"), "rb") as f:
            meta["optimizer_states"] = pickle.load(f)
    return meta


def keep_freed_memory():
    """Keep freed buffers in the process heap rather than handing them back to the kernel (glibc).

    MXNet's CPU allocator mallocs every temporary array; a training step makes several of tens of
    MB, which glibc serves with fresh mmaps that page-fault on first touch. Measured on a bigram
    batch: copying a 43 MB array took 20 ms this way and 6 ms with these settings. The cost is
    that the process keeps its peak heap, so it is called once the big one-off arrays (features,
    the embedding table) exist. (A 256 MiB threshold measured ~10% slower per epoch than 1 GiB.)
    No effect (and no error) outside glibc.
    """
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 1 << 30)  # M_MMAP_THRESHOLD: allocations below 1 GiB come from the heap
        libc.mallopt(-1, (1 << 31) - 1)  # M_TRIM_THRESHOLD: do not give the heap top back
    except (OSError, AttributeError):
        pass


def _prefetch(maker, order, batch_size, num_parts, depth=3, with_transpose=True):
    """Yield lists of :class:`SparseBatch` (one per context) built in a background thread.

    numpy releases the GIL in the gathers and sorts, so batch building overlaps MXNet's compute.
    """
    out = queue.Queue(maxsize=depth)
    done = object()

    def work():
        try:
            for start in range(0, len(order), batch_size):
                docs = order[start:start + batch_size]
                parts = np.array_split(docs, min(num_parts, len(docs)))
                out.put([maker.make(part, with_transpose=with_transpose) for part in parts])
            out.put(done)
        except BaseException as exc:  # surfaced in the consumer
            out.put(exc)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    while True:
        item = out.get()
        if item is done:
            break
        if isinstance(item, BaseException):
            raise item
        yield item
    thread.join()


def _sgd_row_scale(batch):
    """Per-entry scale of ``bag_t`` for SGD: batch size / documents of the batch that contain the row.

    fastText steps once per document. The loss is averaged over the batch, which would shrink a
    rare word's step by the batch size; summing instead would give a word in every document a
    step a thousand times too large. Scaling row r by B / df(r) makes every row take the mean
    step over the documents that contain it: fastText's per-document step for rare words and a
    stable averaged one for frequent words.
    """
    df = np.diff(batch.t_indptr)
    return np.repeat((batch.size / df).astype(np.float32), df)  # one value per entry of each bag_t row


# MXNet 1.9 wheels index tensors with int32: even a CSR matrix may not have 2^31 (rows x cols) cells.
MAX_TENSOR_CELLS = 2**31 - 1


@dataclass
class BatchArrays:
    """One device's batch as NDArrays: what :func:`sparse_step` reads.

    Native operators read the CSR parts as they are (``offsets``, ``weights``, ``entry_rows`` and
    ``columns`` per entry); the generic path reads ``bag`` (docs x compact columns) and its
    transpose ``bag_t``, with SGD's row scale already multiplied into ``bag_t``.
    """

    rows: object  # int64 (columns,): the batch's distinct embedding rows, sorted
    labels: object
    native: bool
    sgd_row_scale: bool
    offsets: object = None
    weights: object = None
    entry_rows: object = None
    columns: object = None
    bag: object = None
    bag_t: object = None


def _to_ndarrays(batch, ctx, binary, native=False, sgd_row_scale=False):
    """A :class:`SparseBatch` as :class:`BatchArrays` on ``ctx``, for the native or the generic operators.

    With ``sgd_row_scale`` each row of the gradient is multiplied by :func:`_sgd_row_scale`: by the
    native backward operator itself, or folded into ``bag_t`` so that the generic product
    ``dot(bag_t, grad)`` comes out scaled without another pass over the gradient.
    """
    from mxnet import nd

    n, cols = batch.size, len(batch.rows)
    y = nd.array(batch.labels, ctx=ctx)
    out = BatchArrays(rows=nd.array(batch.rows, ctx=ctx, dtype="int64"),  # int64: row_sparse's index type
                      labels=y.reshape((-1, 1)) if binary else y, native=native, sgd_row_scale=sgd_row_scale)
    if native:
        out.offsets = nd.array(batch.indptr, ctx=ctx, dtype="int64")
        out.weights = nd.array(batch.data, ctx=ctx, dtype="float32")
        out.entry_rows = nd.array(batch.entry_rows, ctx=ctx, dtype="int32")
        out.columns = nd.array(batch.indices, ctx=ctx, dtype="int32")
        return out
    if n * cols > MAX_TENSOR_CELLS:
        raise FastTextError(f"a batch of {n} documents touching {cols} feature rows exceeds MXNet's 2^31-cell "
                            f"tensor limit; use a smaller batch size")
    out.bag = nd.sparse.csr_matrix((batch.data, batch.indices, batch.indptr), shape=(n, cols), ctx=ctx)
    if batch.t_indptr is not None:
        t_data = batch.t_data
        if sgd_row_scale:
            t_data = t_data * _sgd_row_scale(batch)
        out.bag_t = nd.sparse.csr_matrix((t_data, batch.t_indices, batch.t_indptr), shape=(cols, n), ctx=ctx)
    return out


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
            if batch.size * len(batch.rows) <= MAX_TENSOR_CELLS or size == 1:
                break
            size //= 2
        arrays = _to_ndarrays(batch, ctx, model.binary)
        out.append(model.probabilities(model(arrays.bag, arrays.rows)).asnumpy())
        start += batch.size
    return np.concatenate(out) if out else np.zeros((0, model.num_classes), dtype=np.float32)


def evaluate_bags(model, featurizer, bags, y, ctx):
    """Accuracy and mean cross-entropy (natural log) of the model on encoded documents."""
    probs = predict_bags(model, featurizer, bags, ctx)
    p_true = np.clip(probs[np.arange(len(y)), y], 1e-12, 1.0)
    return {"accuracy": float((probs.argmax(axis=1) == y).mean()), "loss": float(-np.log(p_true).mean()), "n": int(len(y))}
