"""The one training loop: every caller (CLI, notebooks, SageMaker entry point, benchmarks) uses it.

Data in, trained model + per-epoch history out:

1. the vocabulary and n-gram features come from the training split only (features.py);
2. each epoch shuffles the documents (seeded) and a background thread cuts them into compact
   sparse batches while MXNet computes the previous one;
3. forward / backward per context; the embedding gradient is row-sparse and the optimizer is
   *lazy*, so a step updates only the rows the batch touched (model.py explains the layout);
4. after each epoch the validation split is scored and a history row is recorded.
"""
import math
import queue
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import List, Optional

import numpy as np

from .data import sort_labels
from .errors import FastTextError
from .features import BatchMaker, Featurizer
from .progress import bar

OPTIMIZERS = ("sgd", "adam")
LR_SCHEDULES = ("linear", "constant")
# Both take batch-averaged gradients (SGD with the per-row scale of _sgd_row_scale). Measured on
# the synthetic corpus: SGD at 8.0 matches fastText's accuracy in as many epochs; Adam is scale-free.
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
        if self.lr is not None and not self.lr > 0:
            raise FastTextError(f"lr must be positive, got {self.lr!r}")
        if not 0 <= self.dropout < 1:
            raise FastTextError(f"dropout must be in [0, 1), got {self.dropout!r}")

    @property
    def learning_rate(self):
        return self.lr if self.lr is not None else DEFAULT_LR[self.optimizer]

    def to_dict(self):
        return asdict(self)


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


def train(train_data, val_data=None, config=None, on_epoch_end=None):
    """Train a :class:`FastTextClassifier` on :class:`LabeledTexts`; returns a :class:`TrainedModel`."""
    import mxnet as mx
    from mxnet import autograd, gluon

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
    steps_per_epoch = math.ceil(len(train_data) / config.batch_size)
    optimizer_params = {"learning_rate": config.learning_rate, "wd": config.wd, "lazy_update": True}
    if config.lr_schedule == "linear":
        optimizer_params["lr_scheduler"] = mx.lr_scheduler.PolyScheduler(
            max_update=max(1, steps_per_epoch * config.epochs), base_lr=config.learning_rate, pwr=1, final_lr=0.0)
    trainer = gluon.Trainer(model.collect_params(), config.optimizer, optimizer_params,
                            kvstore="device" if len(ctxs) > 1 else None)

    result = TrainedModel(model, featurizer, label_names, config, ctxs)
    rng = np.random.RandomState(config.seed)
    for epoch in range(1, config.epochs + 1):
        order = rng.permutation(len(train_data))
        started = time.time()
        total_loss = mx.nd.zeros((1,), ctx=ctxs[0])
        batches = _prefetch(BatchMaker(train_bags, y_train, featurizer.num_rows), order, config.batch_size, len(ctxs))
        progress = bar(batches, total=steps_per_epoch, desc=f"epoch {epoch}/{config.epochs}", disable=not config.progress, unit="batch")
        for step, parts in enumerate(progress, 1):
            with autograd.record():
                losses = []
                for part, ctx in zip(parts, ctxs):
                    bag, bag_t, rows, y = _to_ndarrays(part, ctx, model.binary)
                    scale = _sgd_row_scale(part, ctx) if config.optimizer == "sgd" else None
                    losses.append(model.loss(model(bag, rows, bag_t, scale), y))
            autograd.backward(losses)
            trainer.step(sum(p.size for p in parts))
            for loss in losses:
                total_loss += loss.sum().as_in_context(ctxs[0])
            if config.progress and step % 50 == 0:
                progress.set_postfix(loss=f"{total_loss.asscalar() / min(step * config.batch_size, len(order)):.4f}")
        train_loss = total_loss.asscalar() / len(order)  # waits for the epoch's last batch
        seconds = time.time() - started
        progress.close()
        row = {"epoch": epoch, "train_loss": train_loss, "val_loss": float("nan"), "val_accuracy": float("nan"),
               "seconds": seconds, "samples_per_s": len(order) / seconds}
        if val is not None:
            metrics = evaluate_bags(model, featurizer, val[0], val[1], ctxs[0])
            row.update(val_loss=metrics["loss"], val_accuracy=metrics["accuracy"])
        result.history.append(row)
        if on_epoch_end is not None:
            on_epoch_end(row)
    return result


def _prefetch(maker, order, batch_size, num_parts, depth=3):
    """Yield lists of :class:`SparseBatch` (one per context) built in a background thread.

    numpy releases the GIL in the gathers and sorts, so batch building overlaps MXNet's compute.
    """
    out = queue.Queue(maxsize=depth)
    done = object()

    def work():
        try:
            for start in range(0, len(order), batch_size):
                docs = order[start:start + batch_size]
                out.put([maker.make(part) for part in np.array_split(docs, min(num_parts, len(docs)))])
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


def _sgd_row_scale(batch, ctx):
    """Per-row gradient scale for SGD: batch size / documents of the batch that contain the row.

    fastText steps once per document. Trainer.step averages over the batch, which would shrink a
    rare word's step by the batch size; summing instead would give a word in every document a
    step a thousand times too large. Scaling row r by B / df(r) makes every row take the mean
    step over the documents that contain it: fastText's per-document step for rare words and a
    stable averaged one for frequent words.
    """
    from mxnet import nd

    df = np.diff(batch.t_indptr).astype(np.float32)
    return nd.array((batch.size / df).reshape(-1, 1), ctx=ctx)


# MXNet 1.9 wheels index tensors with int32: even a CSR matrix may not have 2^31 (rows x cols) cells.
MAX_TENSOR_CELLS = 2**31 - 1


def _to_ndarrays(batch, ctx, binary):
    from mxnet import nd

    n, cols = batch.size, len(batch.rows)
    if n * cols > MAX_TENSOR_CELLS:
        raise FastTextError(f"a batch of {n} documents touching {cols} feature rows exceeds MXNet's 2^31-cell "
                            f"tensor limit; use a smaller batch size")
    bag = nd.sparse.csr_matrix((batch.data, batch.indices, batch.indptr), shape=(n, cols), ctx=ctx)
    bag_t = None
    if batch.t_indptr is not None:
        bag_t = nd.sparse.csr_matrix((batch.t_data, batch.t_indices, batch.t_indptr), shape=(cols, n), ctx=ctx)
    rows = nd.array(batch.rows, ctx=ctx, dtype="int32")
    y = nd.array(batch.labels, ctx=ctx)
    return bag, bag_t, rows, (y.reshape((-1, 1)) if binary else y)


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
        bag, _, rows, _ = _to_ndarrays(batch, ctx, model.binary)
        out.append(model.probabilities(model(bag, rows)).asnumpy())
        start += batch.size
    return np.concatenate(out) if out else np.zeros((0, model.num_classes), dtype=np.float32)


def evaluate_bags(model, featurizer, bags, y, ctx):
    """Accuracy and mean cross-entropy (natural log) of the model on encoded documents."""
    probs = predict_bags(model, featurizer, bags, ctx)
    p_true = np.clip(probs[np.arange(len(y)), y], 1e-12, 1.0)
    return {"accuracy": float((probs.argmax(axis=1) == y).mean()), "loss": float(-np.log(p_true).mean()), "n": int(len(y))}
