"""The one training loop: every caller (CLI, notebooks, SageMaker entry point, benchmarks) uses it.

Data in, trained model + per-epoch history out:

1. the vocabulary and n-gram features come from the training split only (features.py);
2. each epoch shuffles the documents (seeded) and a background thread cuts them into compact
   sparse batches while MXNet computes the previous one (batches.py);
3. :func:`~fasttext_lib.step.sparse_step` per context: the document means (one bag-of-rows
   product), autograd only for the small dense classifier, and the embedding gradient as a
   row-sparse array over the batch's rows (step.py); the optimizer is *lazy*, so a step updates
   only those rows. On the CPU the bag products are native MXNet operators (bag_ops.py) and SGD's
   step is fused with the backward product; elsewhere MXNet's generic ``take`` / ``dot(csr,
   dense)`` compute the same numbers;
4. with one device a local updater applies the step; with several (or several hosts, kvstore
   ``dist_sync``) an MXNet kvstore sums the devices' gradients and holds the optimizer (optim.py);
5. after each epoch the validation split is scored (predict.py; the training split too with
   ``score_train=True``), a history row is recorded and, if asked, a checkpoint is written from
   which an interrupted run resumes exactly (checkpoints.py).
"""
import math
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

from . import cluster
from .batches import BatchMaker, prefetch, to_batch_arrays
from .checkpoints import (TRAIN_ACCURACY, data_fingerprint, load_checkpoint, remove_older_than, save_checkpoint,
                          text_rule_of)
from .config import TrainConfig
from .class_checks import check_classes
from .data import SAMPLE_DOCS, CountedTexts, LabeledTexts, as_read_from_a_file, check_labeled_texts, sort_labels
from .devices import parse_ctx
from .errors import FastTextError, check_bool, keeping_stops, note_progress, raise_if_interrupted
from .features import Featurizer
from .label_names import for_labels
from .lean_import import forget_an_interrupted_import
from .optim import Updater, make_optimizer, sgd_row_shrink
from .predict import encode_labels, evaluate_bags, not_unicode_error, probabilities
from .progress import bar
from .schedule import mean_tokens
from .step import sparse_step, summed_loss_block, use_bag_ops

ENGINE_BULK_OPS = 64  # operators per engine task while stepping (about two steps; see train)
# Back the embedding table with 2 MB pages (table_memory.advise_huge_pages) when training will read and
# update at least this many (document, row) entries: ~40 ns saved per entry (34k short texts, 10 bigram
# epochs, ~10M entries: epochs -0.4 s), against up to ~2 s more to fault 800 MB of huge pages in on
# this project's VM (a steady 0.35 s with 4 KB pages). Yelp-shaped 560k, 5 epochs: ~0.4-0.9 billion.
HUGE_PAGES_MIN_READS = 50_000_000
QUEUED_BATCH_BYTES = 8 << 20  # batch arrays the loop may queue on MXNet's engine before it waits (see train)
HISTORY_COLUMNS = ["epoch", "train_loss", "val_loss", "val_accuracy", "seconds", "samples_per_s"]
# train(score_train=True) adds TRAIN_ACCURACY ("train_accuracy"), shown beside val_accuracy (history_frame)


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
    autotune: Optional[dict] = None  # the trials and the chosen setting, when autotune.py chose this model
    pretrained: Optional[dict] = None  # the pretrained vectors the table started from (vectors.describe)
    label_names: Dict[str, str] = field(default_factory=dict)  # raw label -> name, when known (label_names.py)

    def names(self):
        """The name of each class, in the order of ``labels`` (the raw label where none is known)."""
        return [self.label_names.get(label, label) for label in self.labels]

    @property
    def held_out_score(self):
        """The held-out accuracy of the last epoch, and the split it was measured on, as the saved bundle's
        ``Predictor.held_out_score`` gives it (:func:`~fasttext_lib.bundle.held_out_score`)."""
        from .bundle import held_out_score, metrics_summary

        return held_out_score(metrics_summary(self))

    def history_frame(self):
        """The history as a pandas DataFrame indexed by epoch: :data:`HISTORY_COLUMNS`, and
        ``train_accuracy`` before ``val_accuracy`` when training scored its training split."""
        import pandas as pd

        columns = list(HISTORY_COLUMNS)
        if any(TRAIN_ACCURACY in row for row in self.history):
            columns.insert(columns.index("val_accuracy"), TRAIN_ACCURACY)
        return pd.DataFrame(self.history, columns=columns).set_index("epoch")


def featurize(train_data, val_data, config):
    """``(featurizer, train_bags, val_bags or None)``: the vocabulary and n-grams of ``config``
    (``ngrams``, ``buckets``, ``min_count``), fitted on the training split only. The training split is
    kept as token ids (:class:`~fasttext_lib.features.TokenBags`; each batch's bags are encoded on the fly)."""
    counted = isinstance(train_data, CountedTexts)  # read_counted: tokenized while read, no texts kept
    try:  # (a lone surrogate, which no UTF-8 holds: JSON's "\ud83d" loaded, or a str decoded with surrogateescape)
        featurizer, train_bags = Featurizer.fit(
            train_data.counts if counted else train_data.texts, min_count=config.min_count, ngrams=config.ngrams,
            buckets=config.buckets, return_bags="tokens",
            progress=bar if config.progress and not counted and len(train_data) > 50_000 else None)
    except UnicodeEncodeError:  # (read_counted's files are UTF-8: only texts in memory can hold one)
        raise not_unicode_error(train_data.texts, "train text {}") from None
    try:
        val_bags = featurizer.transform(val_data.texts) if val_data is not None and len(val_data) else None
    except UnicodeEncodeError:
        raise not_unicode_error(val_data.texts, "validation text {}") from None
    return featurizer, train_bags, val_bags


@keeping_stops  # the Stop button of a notebook stops it, also when it lands in a finalizer (errors.kept_stops)
def train(train_data, val_data=None, config=None, on_epoch_end=None, checkpoint_dir=None, featurized=None,
          release_texts=False, pretrained=None, release_pretrained=False, score_train=False):
    """Train a :class:`FastTextClassifier` on :class:`LabeledTexts` (or, for training data, the
    :class:`~fasttext_lib.data.CountedTexts` of ``data.read_counted``); returns a :class:`TrainedModel`.

    Settings ``config`` leaves unset (``lr``, ``batch_size``) come from the training data
    (:meth:`TrainConfig.resolve`); the returned model's ``config`` holds the values used.

    ``checkpoint_dir`` (a directory or ``s3://`` prefix): write a checkpoint after every epoch, and
    resume from the latest one found there. A resumed run ends with the same parameters as an
    uninterrupted one (a ``dist_sync`` cluster too, with SGD; its servers' adam moments cannot be saved and
    start again from zero, while its lr schedule goes on where it stopped).
    ``featurized``: :func:`featurize` of the same data and n-gram settings, made earlier; autotune
    passes it so that trials sharing ``ngrams`` / ``buckets`` / ``min_count`` featurize once.

    ``train_data.names`` (what the labels mean, label_names.py) is checked against the labels before
    anything is trained (a name for a label the data lacks, or two classes shown alike, is an error)
    and kept as ``TrainedModel.label_names``, which the bundle stores.

    ``release_texts=True`` empties ``train_data.texts`` and ``val_data.texts`` once they are encoded
    (the CLI's choice: at Yelp size the review strings are ~0.4 GB it no longer needs), or a
    :class:`~fasttext_lib.data.CountedTexts`' ``counts`` and ``sample`` once the settings are resolved.

    ``config.pretrained_vectors``: the ``.vec`` file's header and first lines are checked before
    featurization, and the file is read (and checked whole) once the vocabulary is known, holding only
    the vocabulary's rows (a wiki .vec is gigabytes); those words' vectors replace their rows of the
    seeded table (vectors.py). ``pretrained``: that file already read
    (:func:`~fasttext_lib.vectors.read_vec`), so that callers training several times (autotune's trials)
    read it once; ``release_pretrained=True`` empties it once the table holds its rows.

    ``score_train=True`` also scores the training split after every epoch, with the epoch's final
    parameters, and records its accuracy as ``train_accuracy`` (beside ``val_accuracy``: how far the
    model fits its training data beyond what it gets right on unseen data). It is one more pass
    over the training data per epoch, so it is off by default (notebook 02 turns it on); it changes
    no parameter. A checkpoint written with it resumes only a run with it, and the reverse (refused in one
    line: the history would have ``train_accuracy`` for some epochs only). (``train_loss`` is the mean loss of the epoch's documents as each step met them,
    while the parameters were still changing: not the same measurement.)
    """
    forget_an_interrupted_import("mxnet")  # a Stop pressed during this call's import in the kernel before
    import mxnet as mx

    config = config or TrainConfig()
    cluster.check_kvstore_environment(config.kvstore)
    check_bool(score_train, "score_train")  # "no" was true: a pass over the training data per epoch
    check_labeled_texts(train_data, "train_data", counted_too=True)
    if isinstance(train_data, LabeledTexts):  # (read_counted's CountedTexts: read from files, str already)
        train_data = as_read_from_a_file(train_data, "train_data")  # a DataFrame's int classes, its NaNs
    if val_data is not None:
        val_data = as_read_from_a_file(val_data, "val_data")
    ctxs = parse_ctx(config.ctx)
    classes = sort_labels(train_data.labels)
    check_classes(train_data, classes)
    names = for_labels(train_data.names, classes, "train_data.names", strict=True)
    y_train = encode_labels(train_data.labels, classes, "training data")
    has_val = val_data is not None and len(val_data) > 0
    # validation data may be labeled by the classes' names (positive) instead of their ids, as evaluate's may
    y_val = encode_labels(val_data.labels, classes, "validation data", names) if has_val else None
    pretrained = load_pretrained(config, pretrained)
    featurizer, train_bags, val_bags = featurized or featurize(train_data, val_data if has_val else None, config)
    if (featurizer.ngrams, featurizer.buckets) != (config.ngrams, config.buckets if config.ngrams > 1 else 0):
        raise ValueError("featurized: made with other ngrams / buckets than this config's")
    if featurizer.vocab_size <= 1:  # only <unk>: every document would look the same
        if config.min_count <= 1:  # (no word at all: "lower min_count" could not be followed)
            raise FastTextError("empty vocabulary: the training data holds no words, every document's text is empty "
                                "(a file of labels alone?), so every document would get the same prediction")
        raise FastTextError(f"empty vocabulary: no word occurs at least min_count={config.min_count} times in the "
                            f"training data, so every document would get the same prediction; lower min_count")
    if config.pretrained_vectors and pretrained is None:  # only the vocabulary's rows are held
        from .vectors import read_vec

        release_pretrained = True  # (read here: nobody else holds it)
        pretrained = read_vec(config.pretrained_vectors, dim=config.emsize, keep=featurizer.vocab.token_to_idx)
    val = (val_bags, y_val) if has_val else None
    kv_type = config.kvstore if config.kvstore != "auto" else ("device" if len(ctxs) > 1 else None)
    # dist_*: a worker of a cluster, watched so that a lost worker, server or scheduler ends it (cluster.py)
    watch = cluster.Watch() if str(kv_type).startswith("dist") else None
    with cluster.armed(watch, "while joining the cluster"):
        kv = mx.kv.create(kv_type) if kv_type else None
    rank, workers = (kv.rank, kv.num_workers) if kv is not None else (0, 1)
    # Every worker draws the same permutation and takes an equal share: in dist_sync every worker
    # must push the same number of batches, or the last ones would wait forever.
    per_worker = len(y_train) // workers
    if per_worker == 0:
        raise FastTextError(f"{len(y_train)} training documents cannot be shared by {workers} workers")
    texts = train_data.sample if isinstance(train_data, CountedTexts) else train_data.texts
    config = resolve_settings(config, texts, len(classes), per_worker)  # each worker's steps
    del texts  # (release_texts below frees them)
    if release_texts:
        for data in (train_data, val_data):
            if isinstance(data, CountedTexts):
                data.counts = None  # its token ids live on in train_bags
                data.sample = []  # read only by resolve_settings above (10k reviews: ~12 MB)
            elif data is not None and isinstance(data.texts, list):
                data.texts.clear()  # (len(data) is 0 from here: y_train counts the documents)


    reads = entries_per_epoch(train_bags, config.ngrams) * config.epochs
    model, result_pretrained = initial_model(featurizer, len(classes), config, ctxs, pretrained,
                                             huge_pages=reads >= HUGE_PAGES_MIN_READS)
    if release_pretrained and pretrained is not None:
        pretrained.release()  # its rows are in the table now (a wiki .vec holds GBs the run no longer needs)
    result = TrainedModel(model, featurizer, classes, config, ctxs, pretrained=result_pretrained, label_names=names)
    first_epoch = 1
    vectors_id = result_pretrained["sha256"] if result_pretrained else None
    data_id = data_fingerprint(featurizer, train_bags, y_train, vectors_id) if checkpoint_dir else None
    val_id = data_fingerprint(featurizer, val_bags, y_val) if checkpoint_dir and has_val else None
    resumed = load_checkpoint(checkpoint_dir, model, config, classes, data_id, validation=val_id,
                              score_train=score_train, num_workers=workers,
                              text_rule=text_rule_of(featurizer, config)) if checkpoint_dir else None
    if resumed is not None:
        first_epoch = resumed["epoch"] + 1
        result.history = resumed["history"]
        # rerunning the same command after a crash or a spot interruption: say that it picked up where it stopped
        print(f"resuming from the checkpoint in {checkpoint_dir}: epoch {resumed['epoch']} of {config.epochs} done",
              file=sys.stderr, flush=True)
        if first_epoch > config.epochs and rank == 0:  # finished: no save will remove what a kill left before it
            remove_older_than(checkpoint_dir, resumed["epoch"], model, config, classes, data_id, validation=val_id,
                              score_train=score_train, num_workers=workers)

    result.rank, result.num_workers = rank, workers
    if watch is not None:  # every worker must train on the same data with the same settings: refused otherwise
        with watch.armed("while the workers compared their data and settings"):
            cluster.agree(kv, watch, cluster.describe(
                watch, rank, data_id or data_fingerprint(featurizer, train_bags, y_train, vectors_id), config, classes))
    steps_per_epoch = math.ceil(per_worker / config.batch_size)
    # A dist_* kvstore's servers hold the optimizer, and no checkpoint holds their state: a resumed cluster
    # starts their update count where the checkpoint's epoch ended (each worker's steps, one update per key
    # and step; dist_async: an update per worker's push), or its lr schedule would start over.
    # dist_async servers update on every worker's push: a worker's step is `workers` of their updates (the lr
    # schedule counted them against one worker's steps and reached 0 when half the run was left to train).
    updates_per_step = workers if kv_type == "dist_async" else 1
    updates_done = 0 if resumed is None else resumed["epoch"] * steps_per_epoch * updates_per_step
    with cluster.armed(watch, "while the parameter servers were set up"):
        updater = Updater(model, ctxs, make_optimizer(config, steps_per_epoch * updates_per_step), kv,
                          updates_done=updates_done)
    if resumed is not None:
        updater.load_states(resumed["optimizer_states"])
    if updater.server_state_lost and rank == 0:
        print(f"note: the parameter servers' {config.optimizer} state (its moments) is not in checkpoints (MXNet "
              f"cannot read it back from the servers): it starts again from zero, so this run ends near, not exactly "
              f"at, an uninterrupted run's parameters (the lr schedule goes on where it stopped)",
              file=sys.stderr, flush=True)
    native = use_bag_ops(ctxs)
    sgd, shrink = config.optimizer == "sgd", sgd_row_shrink(config)
    # The part of a step autograd records (the output layer, the loss and its sum) runs as one cached
    # graph (step.summed_loss_block): the same operators in the same order, so the same numbers.
    summed_loss = summed_loss_block(model)
    summed_loss.hybridize(static_alloc=True)
    model.output.hybridize(static_alloc=True)  # scoring (evaluate_bags) runs it alone
    maker = BatchMaker(train_bags, y_train, featurizer.num_rows)
    keep_freed_memory()
    order = batches = progress = None
    for epoch in range(first_epoch, config.epochs + 1):
        mx.random.seed(config.seed + epoch)  # dropout masks: the same whether or not the run was resumed
        # the last epoch's order (4.5 MB at 560k) goes first, so that this one can take its place in
        # the heap rather than grow it (the heap is kept whole, keep_freed_memory)
        order = batches = progress = None
        order = np.random.RandomState([config.seed, epoch]).permutation(len(y_train))
        order = order[rank * per_worker:(rank + 1) * per_worker]
        started = time.time()
        total_loss = mx.nd.zeros((1,), ctx=ctxs[0])
        batches = prefetch(maker, order, config.batch_size, len(ctxs), with_transpose=not native)
        queued, queued_bytes = deque(), 0  # each queued step's (losses, batch bytes), oldest first
        progress = bar(batches, total=steps_per_epoch, desc=f"epoch {epoch}/{config.epochs}", disable=not config.progress, unit="batch",
                       log_final=True)
        with cluster.armed(watch, f"in epoch {epoch}"):  # (scoring and checkpoints after it: local work)
            try:
                # MXNet's engine runs each operator on a worker thread: a step's ~30 small operators were
                # ~30 hand-offs between threads, which on short texts and small batches cost more than the
                # work (and, on a busy machine, a scheduler time slice each). Bulking runs consecutive
                # operators as one engine task: the same operators in the same order, the same numbers.
                with mx.engine.bulk(ENGINE_BULK_OPS):
                    for step, parts in enumerate(progress, 1):
                        raise_if_interrupted()  # a SIGTERM whose first raise a __del__ swallowed (errors.py)
                        if checkpoint_dir is None:  # a Stop here is told in one line: nothing saved (errors.stopped_line)
                            note_progress(epoch, step)
                        global_batch = sum(p.size for p in parts) * workers
                        steps = []
                        for i, (part, ctx) in enumerate(zip(parts, ctxs)):
                            arrays = to_batch_arrays(part, ctx, model.binary, native, sgd_row_scale=sgd, row_shrink=shrink)
                            values, entry_index = updater.embedding_for(i, arrays)
                            steps.append(sparse_step(model, values, entry_index, arrays, global_batch, summed_loss))
                        updater.apply(model, steps)
                        if watch is not None:
                            watch.tick()
                        for step_result in steps:
                            total_loss += step_result.loss_sum.as_in_context(ctxs[0])
                        # MXNet runs the operators asynchronously, and queuing a Yelp-size step takes Python
                        # far less time than computing it: unchecked, the loop ran up to 50 steps ahead (to
                        # the sync below), each holding its batch's arrays (~1.5 MB with unigrams, ~5 MB
                        # with bigrams) until its operators ran: 70-230 MB of peak memory for no speed.
                        # Past QUEUED_BATCH_BYTES the loop waits for its oldest step. Small batches (short
                        # texts: ~0.1 MB) never reach it: a wait flushes the engine's bulk, and waiting
                        # every step measured ~30% more CPU time there (Yelp-size steps: none).
                        queued.append(([step_result.loss_sum for step_result in steps], sum(p.nbytes for p in parts)))
                        queued_bytes += queued[-1][1]
                        while queued_bytes > QUEUED_BATCH_BYTES and len(queued) > 1:
                            losses, nbytes = queued.popleft()
                            queued_bytes -= nbytes
                            for loss_sum in losses:
                                loss_sum.wait_to_read()
                        if step % 50 == 0:  # a sync every 50 steps: cheap, and a diverged run stops early
                            running = total_loss.asscalar() / min(step * config.batch_size, len(order))
                            stop_if_diverged(running, "the training loss", epoch, step, config)
                            if config.progress:
                                progress.set_postfix(loss=f"{running:.4f}", refresh=False)  # (drawn at the next redraw: a log line each 30 s)
                updater.sync_tables()
                train_loss = total_loss.asscalar() / len(order)  # waits for the epoch's last batch
            finally:
                batches.close()  # stops the prefetch thread, also when a signal or an error ends the epoch
            stop_if_diverged(train_loss, "the training loss", epoch, step, config)
            # (watched too: with a kvstore this waits for the table sync_tables pulled, which a lost worker can hold)
            if not updater.parameters_finite():  # no pass over the table on the native SGD route (optim.py)
                raise diverged("the model parameters became NaN or infinite", epoch, step, config)
        seconds = time.time() - started
        progress.close()
        row = {"epoch": epoch, "train_loss": train_loss, "val_loss": float("nan"), "val_accuracy": float("nan"),
               "seconds": seconds, "samples_per_s": len(order) * workers / seconds}
        if val is not None:
            metrics = evaluate_bags(model, featurizer, val[0], val[1], ctxs[0])
            row.update(val_loss=metrics["loss"], val_accuracy=metrics["accuracy"])
        if score_train:
            row[TRAIN_ACCURACY] = accuracy_on(model, featurizer, train_bags, y_train, ctxs[0])
        result.history.append(row)
        if checkpoint_dir and rank == 0:
            save_checkpoint(checkpoint_dir, epoch, model, config, classes, result.history, updater.get_states(),
                            names=names, data=data_id, validation=val_id, score_train=score_train,
                            num_workers=workers, unicode_form=featurizer.unicode_form)
        if on_epoch_end is not None:
            on_epoch_end(row)
    with cluster.armed(watch, "while leaving the cluster"):
        updater.kv = kv = None  # a dist_* kvstore's destructor waits for every worker (a barrier)
    return result


def accuracy_on(model, featurizer, bags, y, ctx, chunk_docs=65536):
    """The model's accuracy on every document of ``bags`` (``Bags`` or ``TokenBags``), encoded and
    scored ``chunk_docs`` at a time so that a large training split is never encoded whole."""
    correct = 0
    for start in range(0, len(y), chunk_docs):
        raise_if_interrupted()  # a SIGTERM whose first raise a __del__ swallowed (errors.py)
        docs = np.arange(start, min(len(y), start + chunk_docs))
        correct += int((probabilities(model, featurizer, bags.select(docs), ctx).argmax(axis=1) == y[docs]).sum())
    return correct / len(y)


def load_pretrained(config, pretrained=None):
    """``pretrained`` (:class:`~fasttext_lib.vectors.WordVectors` of ``config.pretrained_vectors``) checked
    against ``config.emsize``; not given, the file's start is checked (``None`` is returned: train reads the
    file once the vocabulary is known, keeping only its rows). ``None`` without pretrained vectors."""
    from .vectors import check_dim, check_vec_start

    if not config.pretrained_vectors:
        if pretrained is not None:
            raise ValueError("pretrained vectors given, but config.pretrained_vectors names no file")
        return None
    if pretrained is None:
        check_vec_start(config.pretrained_vectors, dim=config.emsize)
        return None
    check_dim(pretrained, config.emsize)
    return pretrained


def entries_per_epoch(bags, ngrams):
    """About how many (document, row) entries an epoch reads and updates: exact for encoded
    :class:`~fasttext_lib.features.Bags`, tokens x n-gram orders for ``TokenBags`` (an upper bound)."""
    return bags.nnz if hasattr(bags, "nnz") else int(bags.lengths.sum()) * ngrams


def initial_model(featurizer, num_classes, config, ctxs, pretrained=None, huge_pages=True):
    """``(model, record)``: the classifier as training starts it. The embedding rows are the seeded
    values (init_rows.py) except the rows of ``pretrained``'s words found in the vocabulary, which
    hold their vectors; ``record`` describes those (the bundle keeps it), or is ``None``."""
    import mxnet as mx

    from .model import FastTextClassifier
    from .vectors import describe, pretrained_rows

    mx.random.seed(config.seed)
    model = FastTextClassifier(featurizer.num_rows, config.emsize, num_classes, dropout=config.dropout)
    rows = pretrained_rows(pretrained, featurizer.vocab.token_to_idx) if pretrained is not None else None
    if rows is not None and not len(rows[0]):  # asked for, yet no row would start from them: say so, not train as without
        raise FastTextError(f"none of the {pretrained.words_in_file} words of {pretrained.source} is in the training data's "
                            f"vocabulary ({featurizer.vocab_size} words), so no row would start from its vectors: vectors "
                            f"of other text, or of words not split as the data is (punctuation split off: don ' t)")
    model.initialize_like_fasttext(ctxs, seed=config.seed, rows=rows, huge_pages=huge_pages,
                                   state_tables=2 if config.optimizer == "adam" else 0)  # adam's two moment tables
    if rows is None:
        return model, None
    record = describe(pretrained, len(rows[0]), featurizer.vocab_size)
    if config.progress:
        print(f"pretrained vectors: {len(rows[0])} of the {featurizer.vocab_size} vocabulary words start from "
              f"{pretrained.source} ({pretrained.words_in_file} words, dim {pretrained.dim})", file=sys.stderr, flush=True)
    return model, record


def stop_if_diverged(value, what, epoch, step, config):
    """Stop a diverged run (nothing is saved: checkpoints and bundles come after this check)."""
    if not math.isfinite(value):
        raise diverged(f"{what} became {value}", epoch, step, config)


class Diverged(FastTextError):
    """Training diverged (a loss or parameter became NaN or infinite): a setting's failure, which autotune
    records as a failed trial and goes on from."""


def diverged(what, epoch, step, config):
    return Diverged(f"training diverged: {what} at epoch {epoch}, step {step} "
                         f"(lr={config.learning_rate:g}, optimizer {config.optimizer}); try a smaller lr")


def resolve_settings(config, texts, num_classes, num_docs):
    """``config`` with the settings left to the data filled in (TrainConfig.resolve), announced on stderr.

    ``num_docs``: the documents one process steps through per epoch (its share with dist_* kvstores),
    so a cluster takes the steps, and spends the lr budget, of one process.
    """
    if config.resolved:
        return config
    resolved = config.resolve(num_docs, mean_tokens(texts[:SAMPLE_DOCS]), num_classes)
    if config.progress:
        print(f"settings from the data: {resolved.optimizer} lr={resolved.lr:g} batch={resolved.batch_size} "
              f"({num_docs} documents, {resolved.epochs} epoch{'' if resolved.epochs == 1 else 's'})", file=sys.stderr, flush=True)
    return resolved


def keep_freed_memory():
    """Keep freed buffers in the process heap rather than handing them back to the kernel (glibc).

    MXNet's CPU allocator mallocs every temporary array; a training step makes several of tens of
    MB, which glibc serves with fresh mmaps that page-fault on first touch. Measured on a bigram
    batch: copying a 43 MB array took 20 ms this way and 6 ms with these settings. The cost is
    that the process keeps its peak heap, so it is called once the big one-off arrays (features,
    the embedding table) exist. (A 256 MiB threshold measured ~10% slower per epoch than 1 GiB.)
    No effect (and no error) outside glibc.

    First, what the heap holds free is given back (``malloc_trim``): reading and counting the data
    leave ~30 MB of free pages scattered through it, which training's allocations (mostly made on
    other threads, so in other arenas) would not reuse; kept, they are peak memory for nothing.
    """
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim(0)
        libc.mallopt(-3, 1 << 30)  # M_MMAP_THRESHOLD: allocations below 1 GiB come from the heap
        libc.mallopt(-1, (1 << 31) - 1)  # M_TRIM_THRESHOLD: do not give the heap top back
    except (OSError, AttributeError):
        pass
