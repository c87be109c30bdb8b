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
5. after each epoch the validation split is scored (scoring.probabilities, measured by evaluation.metrics_of: the
   answers are kept, TrainedModel.val_right, for autotune's paired test; the training split too with
   ``score_train=True``, its accuracy by scoring.probabilities), a history row is recorded and, if asked, a
   checkpoint is written from which an interrupted run resumes exactly (checkpoints.py).

:func:`train` reads as its steps: :func:`_checked_inputs` (the settings no data decides, the inputs' kinds),
:func:`_look_into_checkpoints` (a checkpoint refused before the data is featurized), :func:`_prepare_data` (every
check of the input data, then its features), :func:`_join_workers` (the kvstore, a ``dist_*`` cluster's),
:func:`_resolve_settings_and_release_texts`,
:func:`_build_or_resume` (the model, a checkpoint's state, the optimizer), then :func:`_run_epoch` and
:func:`_end_epoch` (scores, history row, checkpoint) per epoch.
"""
import contextlib
import importlib
import math
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

from . import cluster, storage
from .batches import BatchMaker, prefetch, to_batch_arrays
from .checkpoints import (TRAIN_ACCURACY, KeptCheckpoint, data_fingerprint, load_checkpoint, refusals_said_as_arguments,
                          remove_older_than, save_checkpoint, text_rule_of)
from .class_checks import check_classes
from .config import TrainConfig, check_choice
from .data import (SAMPLE_DOCS, CountedTexts, LabeledTexts, as_read_from_a_file, check_labeled_texts, lines_named,
                   pandas_class_column, sort_labels)
from .devices import parse_ctx
from .errors import (SETTINGS_AS_ARGUMENTS, SETTINGS_AS_FLAGS, FastTextError, check_bool, refuse_standard_output,
                     setting_named, settings_said_as)
from .stops import (NOT_COMPARED_CONDITION, keeping_stops, note_progress, older_condition, older_or_newer,
                    raise_if_interrupted)
from .features import Featurizer, TokenBags, chunk_stops
from .label_names import display, for_labels
from .lean_import import forget_an_interrupted_import
from .optim import Updater, make_optimizer
from .evaluation import metrics_of
from .label_encoding import encode_labels
from .scoring import probabilities
from .text_arguments import not_unicode_error
from .progress import bar
from .schedule import mean_tokens, sgd_row_shrink
from .step import sparse_step, summed_loss_block, use_bag_ops

ENGINE_BULK_OPS = 64  # operators per engine task while stepping (about two steps; see train)
# Back the embedding table with 2 MB pages (table_memory.advise_huge_pages) when training will read and
# update at least this many (document, row) entries: ~40 ns saved per entry (34k short texts, 10 bigram
# epochs, ~10M entries: epochs -0.4 s), against up to ~2 s more to fault 800 MB of huge pages in on
# this project's VM (a steady 0.35 s with 4 KB pages). Yelp-shaped 560k, 5 epochs: ~0.4-0.9 billion.
HUGE_PAGES_MIN_READS = 50_000_000
QUEUED_BATCH_BYTES = 8 << 20  # batch arrays the loop may queue on MXNet's engine before it waits (see train)
# The keys of a history record, as metrics.json and checkpoints store them (val_: the split train() was given as
# val_data, whichever it is; history_frame names it); train(score_train=True) adds TRAIN_ACCURACY ("train_accuracy")
HISTORY_COLUMNS = ["epoch", "train_loss", "val_loss", "val_accuracy", "seconds", "samples_per_s"]
HELD_OUT_SPLITS = ("validation", "test")
# Tokens (or encoded entries) of the training split score_train scores at a time (accuracy_on): their bags, ~8 bytes an
# entry (a token's word and n-grams), are ~20 MB with bigrams. A chunk of 65,536 documents (~10M Yelp-shaped tokens) was
# ~190 MB, kept in the heap for the rest of the run (keep_freed_memory): most of notebook 02's peak above the CLI's.
SCORED_AT_ONCE = 1 << 20


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
    pretrained: Optional[dict] = None  # the pretrained vectors the table started from (pretrained.describe)
    label_names: Dict[str, str] = field(default_factory=dict)  # raw label -> name, when known (label_names.py)
    # Whether the last epoch's scoring of the validation data got each document right (a boolean array, in its order;
    # None where no epoch was scored here): autotune's paired test of two trials reads it, where it scored the
    # validation split a second time for it
    val_right: Optional[object] = field(default=None, repr=False, compare=False)

    def names(self):
        """The name of each class, in the order of ``labels`` (the raw label where none is known)."""
        return display(self.labels, self.label_names)

    @property
    def held_out_score(self):
        """The held-out accuracy of the last epoch, and the split it was measured on, as the saved bundle's
        ``Predictor.held_out_score`` gives it (:func:`~fasttext_lib.bundle_format.held_out_score`)."""
        from .bundle import metrics_summary
        from .bundle_format import held_out_score

        return held_out_score(metrics_summary(self))

    def history_frame(self, held_out="validation"):
        """The history as a pandas DataFrame indexed by epoch: :data:`HISTORY_COLUMNS` with the held-out split's
        scores named after ``held_out``, the split training was given as ``val_data``: ``validation_loss`` and
        ``validation_accuracy``, or ``test_loss`` and ``test_accuracy`` where that was the test split (notebook 02's,
        ``held_out_score.split``; a training job's test channel). Both were ``val_``, and the test split's scores read as
        a validation split's. None: none was scored (no columns for it). ``train_accuracy`` comes before the held-out
        accuracy when training scored its training split."""
        import pandas as pd

        if held_out is not None:
            check_choice(held_out, "held_out", HELD_OUT_SPLITS)
        columns = list(HISTORY_COLUMNS)
        if any(TRAIN_ACCURACY in row for row in self.history):
            columns.insert(columns.index("val_accuracy"), TRAIN_ACCURACY)
        frame = pd.DataFrame(self.history, columns=columns).set_index("epoch")
        if held_out is None:
            return frame.drop(columns=["val_loss", "val_accuracy"])
        return frame.rename(columns={"val_loss": f"{held_out}_loss", "val_accuracy": f"{held_out}_accuracy"})


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


@cluster.told_if_it_fails()  # a cluster's worker that fails before joining tells the others, as the CLI does
@keeping_stops  # the Stop button of a notebook stops it, also when it lands in a finalizer (stops.kept_stops)
def train(train_data, val_data=None, config=None, on_epoch_end=None, checkpoint_dir=None, featurized=None,
          release_texts=False, pretrained=None, release_pretrained=False, score_train=False,
          val_name="validation data", checkpoint_search=None, kept=None, said_as_flags=False):
    """Train a :class:`FastTextClassifier` on :class:`LabeledTexts` (or, for training data, the
    :class:`~fasttext_lib.data.CountedTexts` of ``data.read_counted``); returns a :class:`TrainedModel`.

    Settings ``config`` leaves unset (``lr``, ``batch_size``) come from the training data
    (:meth:`TrainConfig.resolve`); the returned model's ``config`` holds the values used.

    ``checkpoint_dir`` (a directory or ``s3://`` prefix): write a checkpoint after every epoch, and
    resume from the latest one found there. A resumed run ends with the same parameters as an
    uninterrupted one (a ``dist_sync`` cluster too, with SGD; its servers' adam moments cannot be saved and
    start again from zero, while its lr schedule goes on where it stopped). ``checkpoint_search``: what
    :func:`~fasttext_lib.checkpoints.refuse_an_older_format` found there before the data was read (the CLI's and
    the training job's look), resumed from without a second search. ``kept``: the caller's
    :class:`~fasttext_lib.checkpoints.KeptCheckpoint` of ``checkpoint_dir`` (theirs: a stop as this returns, before
    the caller could confirm the last epoch's checkpoint, named none), set as the run goes on. A checkpoint it
    cannot resume from is refused naming ``checkpoint_dir`` and the ``TrainConfig`` to rerun with;
    ``said_as_flags=True`` (the CLI's, and the training job's, which says them as its hyperparameters:
    sm_train.in_job_terms): as the command line's flags; so are the settings other lines name (config.setting_said;
    the job's said as its hyperparameters: errors.settings_said_as around this call).
    ``featurized``: :func:`featurize` of the same data and n-gram settings, made earlier; autotune
    passes it so that trials sharing ``ngrams`` / ``buckets`` / ``min_count`` featurize once.

    ``train_data.names`` (what the labels mean, label_names.py) is checked against the labels before
    anything is trained (a name for a label the data lacks, or two classes shown alike, is an error)
    and kept as ``TrainedModel.label_names``, which the bundle stores.

    ``val_name``: what errors call ``val_data`` (the CLI: its file's name), e.g. for a label training lacks.
    ``release_texts=True`` empties ``train_data.texts`` and ``val_data.texts`` once they are encoded
    (the CLI's choice: at Yelp size the review strings are ~0.4 GB it no longer needs), or a
    :class:`~fasttext_lib.data.CountedTexts`' ``counts`` and ``sample`` once the settings are resolved.

    ``config.pretrained_vectors``: the ``.vec`` file's header and first lines are checked before
    featurization, and the file is read (and checked whole) once the vocabulary is known, holding only
    the vocabulary's rows (a wiki .vec is gigabytes); those words' vectors replace their rows of the
    seeded table (pretrained.py). ``pretrained``: that file already read
    (:func:`~fasttext_lib.vec_files.read_vec`), so that callers training several times (autotune's trials)
    read it once; ``release_pretrained=True`` empties it once the table holds its rows.

    ``score_train=True`` also scores the training split after every epoch, with the epoch's final
    parameters, and records its accuracy as ``train_accuracy`` (beside ``val_accuracy``: how far the
    model fits its training data beyond what it gets right on unseen data). It is one more pass
    over the training data per epoch, so it is off by default (notebook 02 turns it on); it changes
    no parameter. A checkpoint written with it resumes only a run with it, and the reverse (refused in one
    line: the history would have ``train_accuracy`` for some epochs only). (``train_loss`` is the mean loss of the epoch's documents as each step met them,
    while the parameters were still changing: not the same measurement.)
    """
    checkpoint_dir = storage.expand_home(checkpoint_dir)  # ("~/ckpt": the home folder's, as a shell reads it)
    refuse_standard_output(checkpoint_dir, "checkpoint_dir", "the checkpoints", "a directory")  # (before any epoch)
    forget_an_interrupted_import("mxnet")  # a Stop pressed during this call's import in the kernel before
    importlib.import_module("mxnet")  # once, here: every step below uses it

    config = config or TrainConfig()
    train_data, val_data, ctxs = _checked_inputs(train_data, val_data, config, score_train)
    with refusals_said_as_arguments(said_as_flags):
        checkpoint_search = _look_into_checkpoints(checkpoint_dir, checkpoint_search, config, val_data, score_train)
    if kept is None:  # (a stop says it, and how to resume from it)
        kept = KeptCheckpoint(checkpoint_dir, checkpoint_search)
    # (the note made, then told); a line said on the way (a .vec of another dimension, a warning) names a setting as
    # the caller's user sets it (config.setting_said), unless the caller said how (the training job: hyperparameters)
    said_as = SETTINGS_AS_FLAGS if said_as_flags else SETTINGS_AS_ARGUMENTS
    with refusals_said_as_arguments(said_as_flags), settings_said_as(said_as), _told_to_the_caller_on_a_stop(), \
            kept.told_on_a_stop():
        data = _prepare_data(train_data, val_data, ctxs, config, featurized, pretrained, release_pretrained, val_name)
        kv, workers = _join_workers(config, data)
        kept.joined_as(workers.rank)  # (a cluster's other workers: the first one keeps the checkpoints)
        # (the order of these two matters: the texts are freed before the model's table is allocated)
        config = _resolve_settings_and_release_texts(config, data, workers, release_texts)
        run = _build_or_resume(config, data, workers, kv, checkpoint_dir, score_train, checkpoint_search, kept)
        del kv  # (the updater's is now the last reference: _leave_cluster drops it, a dist_* kvstore's barrier)
        keep_freed_memory()  # the big one-off arrays (features, the table) exist: from here on the heap is kept whole
        for epoch in range(run.first_epoch, config.epochs + 1):
            # (each epoch's arrays, its 4.5 MB order at 560k among them, are freed when _run_epoch returns, so that
            # the next epoch's take their place in the heap rather than grow it)
            row = _run_epoch(run, epoch)
            _end_epoch(run, row, on_epoch_end)
        _leave_cluster(run)
        result = run.result
        del run, data  # (the bags, the batch maker, the updater: freed, for the heap to give their pages back)
    give_freed_memory_back()  # the caller saves, plots, imports on: kept, the heap's free pages were its peak too
    return result


@contextlib.contextmanager
def _told_to_the_caller_on_a_stop():
    """A stop of a training whose checkpoint is kept (checkpoints.KeptCheckpoint) ends its traceback with where that
    checkpoint is and how to resume, for a caller of the Python API (a script's Ctrl-C): a bare KeyboardInterrupt
    did not say that the same call goes on from it. (The CLI and a notebook show their own line: stops.stop_message.)
    A cluster's worker other than the first keeps none: the first host (worker 0) keeps them, in its checkpoint_dir."""
    try:
        yield
    except KeyboardInterrupt as exc:
        kept, written = getattr(exc, "checkpoint_kept", None), getattr(exc, "checkpoint_being_written", None)
        first_host = getattr(exc, "checkpoints_kept_by_the_first_host", None)
        if not hasattr(exc, "add_note"):  # (Python 3.11 on; the SageMaker 3.8 image's job prints its line)
            raise
        if written:  # (its checkpoint.json's PUT awaited S3's answer: S3 may apply it yet)
            where, epoch, checkpoint_dir, manifest = written
            which = f"epoch {older_or_newer(kept, epoch)}" if kept else f"epoch {epoch}, if S3 applies its {manifest},"
            exc.add_note(f"the checkpoint of {which} is kept in {checkpoint_dir if kept else where} (epoch {epoch}'s "
                         f"{manifest} was being written when the stop came): train again with the same checkpoint_dir "
                         f"to resume from {'the newer' + older_condition(kept) if kept else 'it'}")
        elif kept:
            where, epoch, _, compared = kept
            exc.add_note(f"the checkpoint of epoch {epoch} is kept in {where}: train again with the same "
                         f"checkpoint_dir to resume from it{'' if compared else NOT_COMPARED_CONDITION}")
        elif first_host:
            exc.add_note(f"the checkpoints are kept by the first host (worker 0) in {first_host}: train again with the "
                         f"same checkpoint_dir to resume from the newest")
        raise


@dataclass
class _Data:
    """The input as the epochs read it (:func:`_prepare_data`)."""

    train_split: object  # train_data as read from a file (data.as_read_from_a_file), or read_counted's CountedTexts
    val_split: object  # val_data so, or None
    ctxs: list
    classes: List[str]
    names: Dict[str, str]  # raw label -> name, where known (label_names.py)
    featurizer: Featurizer
    train_bags: object  # features.TokenBags: each batch's bags are encoded on the fly
    y_train: np.ndarray
    val: Optional[tuple]  # (val_bags, y_val); None without validation documents
    pretrained: object  # the vectors that start their words' rows (vec_files.WordVectors), or None
    release_pretrained: bool  # empty them once the table holds their rows
    featurized_here: bool  # train_bags made from train_split by this run (not given as train's featurized)


@dataclass
class _Workers:
    """This process's share of the training: the one process, or a worker of a ``dist_*`` kvstore's cluster."""

    kv_type: Optional[str]  # None (one device), "device" (several), "dist_sync" or "dist_async"
    watch: Optional[cluster.Watch]  # ends a run its cluster can no longer finish (cluster.py); None outside one
    rank: int
    count: int
    per_worker: int  # the documents each worker steps through per epoch: its equal share of one permutation


@dataclass
class _Run:
    """What the epochs need (:func:`_build_or_resume`)."""

    config: TrainConfig  # resolved
    data: _Data
    workers: _Workers
    model: object
    result: TrainedModel  # what train returns; its history grows by a row per epoch
    updater: Updater
    first_epoch: int  # 1, or the one after a resumed checkpoint's
    steps_per_epoch: int
    checkpoint_dir: Optional[str]
    data_id: Optional[str]  # the fingerprints a checkpoint is saved with (None without checkpoint_dir)
    val_id: Optional[str]
    score_train: bool
    kept: KeptCheckpoint  # the checkpoint checkpoint_dir keeps (its epoch: None without one), said on a stop
    # how a step runs (batches.py, step.py)
    maker: BatchMaker
    summed_loss: object  # step.summed_loss_block, hybridized
    native: bool  # the native CPU bag operators (step.use_bag_ops)
    sgd: bool
    row_shrink: float  # schedule.sgd_row_shrink


def _checked_inputs(train_data, val_data, config, score_train):
    """``(train_data, val_data, ctxs)``: the settings of the run that no data decides (the kvstore's environment,
    ``score_train``, the devices), then the inputs' kinds, as the data is read from a file (data.as_read_from_a_file),
    each in one line."""
    cluster.check_kvstore_environment(config.kvstore)
    check_bool(score_train, "score_train")  # "no" was true: a pass over the training data per epoch
    ctxs = parse_ctx(config.ctx)
    check_labeled_texts(train_data, "train_data", counted_too=True)
    if isinstance(train_data, LabeledTexts):  # (read_counted's CountedTexts: read from files, str already)
        train_data = as_read_from_a_file(train_data, "train_data")  # a DataFrame's int classes, its NaNs
    if val_data is not None:
        val_data = as_read_from_a_file(val_data, "val_data")
    return train_data, val_data, ctxs


def _look_into_checkpoints(checkpoint_dir, search, config, val_data, score_train):
    """What ``checkpoint_dir`` holds (checkpoints.Search; ``search``: a caller's look, the CLI's and the training
    job's, made before they read the data), its checkpoint refused before the data is featurized (the vocabulary and
    every document's tokens: minutes at Yelp size) for what a resume would refuse it for that the data does not
    decide (checkpoints.refuse_other_settings). None without ``checkpoint_dir``."""
    if not checkpoint_dir or search is not None:
        return search
    from .checkpoints import refuse_an_older_format, refuse_other_settings

    search = refuse_an_older_format(checkpoint_dir, config.epochs)
    refuse_other_settings(checkpoint_dir, search, config, validated=val_data is not None and len(val_data) > 0,
                          score_train=score_train, num_workers=cluster.workers_to_come(config.kvstore))
    return search


def _prepare_data(train_data, val_data, ctxs, config, featurized, pretrained, release_pretrained, val_name):
    """Every check of the input data that needs no model, in one line each and before anything long runs, then its
    features: the training split's vocabulary and n-grams (or ``featurized``), and the pretrained vectors' rows."""
    classes = sort_labels(train_data.labels)
    check_classes(train_data, classes)
    names = for_labels(train_data.names, classes, "train_data.names", strict=True)
    y_train = encode_labels(train_data.labels, classes, "training data")
    has_val = val_data is not None and len(val_data) > 0
    # validation data may be labeled by the classes' names (positive) instead of their ids, as evaluate's may; a
    # label that is no class is named with its first line, as evaluate names it (read_labeled's first_lines)
    y_val = (encode_labels(val_data.labels, classes, val_name, names, lines_named(val_data.first_lines, val_name),
                           pandas_class_column(val_data))
             if has_val else None)
    pretrained = check_pretrained(config, pretrained)
    featurizer, train_bags, val_bags = featurized or featurize(train_data, val_data if has_val else None, config)
    _check_features(featurizer, config)
    if config.pretrained_vectors and pretrained is None:  # only the vocabulary's rows are held
        from .vec_files import read_vec

        release_pretrained = True  # (read here: nobody else holds it)
        pretrained = read_vec(config.pretrained_vectors, dim=config.emsize, keep=featurizer.vocab.token_to_idx,
                              form=featurizer.unicode_form)
    return _Data(train_data, val_data, ctxs, classes, names, featurizer, train_bags, y_train,
                 (val_bags, y_val) if has_val else None, pretrained, release_pretrained, featurized is None)


def _check_features(featurizer, config):
    """Refuse features made with other n-gram settings (``featurized``), and a vocabulary of ``<unk>`` alone."""
    if (featurizer.ngrams, featurizer.buckets) != (config.ngrams, config.buckets if config.ngrams > 1 else 0):
        raise ValueError("featurized: made with other ngrams / buckets than this config's")
    if featurizer.vocab_size <= 1:  # only <unk>: every document would look the same
        if config.min_count <= 1:  # (no word at all: "lower min_count" could not be followed)
            raise FastTextError("empty vocabulary: the training data holds no words, every document's text is empty "
                                "(a file of labels alone?), so every document would get the same prediction")
        raise FastTextError(f"empty vocabulary: no word occurs at least {config.min_count} times in the training data "
                            f"({setting_named('min_count', config.min_count)}), so every document would get the same "
                            f"prediction; lower {setting_named('min_count')}")


def kvstore_type(config, ctxs):
    """The kvstore a run on ``ctxs`` creates: ``config.kvstore``, or with ``auto`` none on one device (MXNet's own
    updater then keeps the optimizer's state on that device, beside the table) and ``device`` on several."""
    return config.kvstore if config.kvstore != "auto" else ("device" if len(ctxs) > 1 else None)


def _join_workers(config, data):
    """``(kv, workers)``: the kvstore (None on one device) and this process's :class:`_Workers`. With a ``dist_*``
    kvstore this joins its cluster, watched so that a lost worker, server or scheduler ends the run (cluster.py)."""
    import mxnet as mx

    kv_type = kvstore_type(config, data.ctxs)
    watch = cluster.Watch() if str(kv_type).startswith("dist") else None
    # (a stop there is held until the others are told of it: cluster.stops_told_as_it_joins)
    with cluster.armed(watch, cluster.JOINING), cluster.stops_told_as_it_joins(watch) as stopped:
        kv = mx.kv.create(kv_type) if kv_type else None
        if watch is not None:  # (its peers known from here: one lost before the first step is found as soon)
            cluster.introduce(kv, watch, stopped=stopped())
    rank, count = (kv.rank, kv.num_workers) if kv is not None else (0, 1)
    # Every worker draws the same permutation and takes an equal share: in dist_sync every worker
    # must push the same number of batches, or the last ones would wait forever.
    per_worker = len(data.y_train) // count
    if per_worker == 0:
        raise FastTextError(f"{len(data.y_train)} training documents cannot be shared by {count} workers")
    return kv, _Workers(kv_type, watch, rank, count, per_worker)


def _resolve_settings_and_release_texts(config, data, workers, release_texts):
    """``config`` with the settings left to the data resolved for each worker's share (:func:`resolve_settings`);
    then, with ``release_texts``, the texts emptied (their token ids live on in the bags): before the model's table
    is allocated, so that it can take their place (~0.4 GB at Yelp size)."""
    split = data.train_split
    texts = split.sample if isinstance(split, CountedTexts) else split.texts
    # (the token bags of features this run made count the split's documents, in order: the first ones are the texts')
    lengths = data.train_bags.lengths if data.featurized_here else None
    config = resolve_settings(config, texts, len(data.classes), workers.per_worker, lengths,  # each worker's steps
                              rare_class=lambda: rare_class_of(data))
    del texts  # (release_texts below frees them)
    if release_texts:
        for texts_of in (data.train_split, data.val_split):
            if isinstance(texts_of, CountedTexts):
                texts_of.counts = None  # its token ids live on in train_bags
                texts_of.sample = []  # read only by resolve_settings above (10k reviews: ~12 MB)
            elif texts_of is not None and isinstance(texts_of.texts, list):
                texts_of.texts.clear()  # (len(texts_of) is 0 from here: y_train counts the documents)
    return config


def _build_or_resume(config, data, workers, kv, checkpoint_dir, score_train, search=None, kept=None):
    """The model, its optimizer and its history as the first epoch to run finds them: a new model (the table
    seeded, pretrained rows in it), or where the latest checkpoint of this run in ``checkpoint_dir`` left them.
    In a cluster, every worker's data and settings are compared here, before the first step."""
    model, result = _build_model(config, data)
    vectors_id = result.pretrained["sha256"] if result.pretrained else None
    data_id = data_fingerprint(data.featurizer, data.train_bags, data.y_train, vectors_id) if checkpoint_dir else None
    val_id = data_fingerprint(data.featurizer, *data.val) if checkpoint_dir and data.val is not None else None
    resumed = _resume(model, result, config, data, workers, checkpoint_dir, data_id, val_id, score_train, search)
    kept = kept or KeptCheckpoint(checkpoint_dir)
    if resumed is not None:  # (the one the search found, unless the resume set aside an incomplete one)
        kept.confirm(resumed["epoch"])
    result.rank, result.num_workers = workers.rank, workers.count
    if workers.watch is not None:  # every worker must train on the same data with the same settings: refused otherwise
        with workers.watch.armed("while the workers compared their data and settings"):
            cluster.agree(kv, cluster.describe(
                workers.watch, workers.rank,
                data_id or data_fingerprint(data.featurizer, data.train_bags, data.y_train, vectors_id), config,
                data.classes, None if resumed is None else resumed["epoch"]))
    steps_per_epoch = math.ceil(workers.per_worker / config.batch_size)
    updater = _make_updater(model, config, data.ctxs, kv, workers, steps_per_epoch, resumed)
    native = use_bag_ops(data.ctxs)
    sgd, shrink = config.optimizer == "sgd", sgd_row_shrink(config)
    # The part of a step autograd records (the output layer, the loss and its sum) runs as one cached
    # graph (step.summed_loss_block): the same operators in the same order, so the same numbers.
    summed_loss = summed_loss_block(model)
    summed_loss.hybridize(static_alloc=True)
    model.output.hybridize(static_alloc=True)  # scoring (scoring.probabilities) runs it alone
    maker = BatchMaker(data.train_bags, data.y_train, data.featurizer.num_rows)
    return _Run(config, data, workers, model, result, updater, 1 if resumed is None else resumed["epoch"] + 1,
                steps_per_epoch, checkpoint_dir, data_id, val_id, score_train, kept, maker, summed_loss, native, sgd,
                shrink)


def _build_model(config, data):
    """``(model, result)``: the model as a new run starts it (:func:`initial_model`), and the
    :class:`TrainedModel` that will hold it."""
    reads = entries_per_epoch(data.train_bags, config.ngrams) * config.epochs  # huge pages pay off on long runs only
    model, pretrained_record = initial_model(data.featurizer, len(data.classes), config, data.ctxs, data.pretrained,
                                             huge_pages=reads >= HUGE_PAGES_MIN_READS)
    if data.release_pretrained and data.pretrained is not None:
        data.pretrained.release()  # its rows are in the table now (a wiki .vec holds GBs the run no longer needs)
    result = TrainedModel(model, data.featurizer, data.classes, config, data.ctxs, pretrained=pretrained_record,
                          label_names=data.names)
    return model, result


def _resume(model, result, config, data, workers, checkpoint_dir, data_id, val_id, score_train, search=None):
    """The latest checkpoint of this run in ``checkpoint_dir`` (checkpoints.load_checkpoint; ``search``: what was
    found there before, checkpoints.Search), its parameters loaded into ``model`` and its history into ``result``;
    None without one (or without ``checkpoint_dir``)."""
    if not checkpoint_dir:
        return None
    resumed = load_checkpoint(checkpoint_dir, model, config, data.classes, data_id, validation=val_id,
                              score_train=score_train, num_workers=workers.count,
                              text_rule=text_rule_of(data.featurizer, config), search=search)
    if resumed is None:
        return None
    result.history = resumed["history"]
    # rerunning the same command after a crash or a spot interruption: say that it picked up where it stopped
    print(f"resuming from the checkpoint in {checkpoint_dir}: epoch {resumed['epoch']} of {config.epochs} done",
          file=sys.stderr, flush=True)
    if resumed["epoch"] >= config.epochs and workers.rank == 0:  # finished: no save will remove what a kill left
        remove_older_than(checkpoint_dir, resumed["epoch"], model, config, data.classes, data_id, validation=val_id,
                          score_train=score_train, num_workers=workers.count)
    return resumed


def _make_updater(model, config, ctxs, kv, workers, steps_per_epoch, resumed):
    """The optimizer and the one who applies it (optim.Updater: locally, or through ``kv``), with ``resumed``'s
    state and its lr schedule where the checkpoint's epoch ended."""
    # A dist_* kvstore's servers hold the optimizer, and no checkpoint holds their state: a resumed cluster
    # starts their update count where the checkpoint's epoch ended (each worker's steps, one update per key
    # and step; dist_async: an update per worker's push), or its lr schedule would start over.
    # dist_async servers update on every worker's push: a worker's step is `workers` of their updates (the lr
    # schedule counted them against one worker's steps and reached 0 when half the run was left to train).
    updates_per_step = workers.count if workers.kv_type == "dist_async" else 1
    updates_done = 0 if resumed is None else resumed["epoch"] * steps_per_epoch * updates_per_step
    with cluster.armed(workers.watch, "while the parameter servers were set up"):
        updater = Updater(model, ctxs, make_optimizer(config, steps_per_epoch * updates_per_step), kv,
                          updates_done=updates_done)
    if resumed is not None:
        updater.load_states(resumed["optimizer_states"])
    if updater.server_state_lost and workers.rank == 0:
        print(f"note: the parameter servers' {config.optimizer} state (its moments) is not in checkpoints (MXNet "
              f"cannot read it back from the servers): it starts again from zero, so this run ends near, not exactly "
              f"at, an uninterrupted run's parameters (the lr schedule goes on where it stopped)",
              file=sys.stderr, flush=True)
    return updater


def _run_epoch(run, epoch):
    """One pass over this worker's share of the documents, shuffled for ``epoch``: the epoch's history row, its
    training loss and speed (the validation columns NaN until :func:`_end_epoch` scores them). A diverged run
    stops here (:class:`Diverged`)."""
    import mxnet as mx

    # (bound once here: the step loop below reads them every step, and a local is the cheapest read)
    config, ctxs, model, updater, watch = run.config, run.data.ctxs, run.model, run.updater, run.workers.watch
    workers, native, sgd, shrink, summed_loss = run.workers.count, run.native, run.sgd, run.row_shrink, run.summed_loss
    checkpoint_dir = run.checkpoint_dir
    mx.random.seed(config.seed + epoch)  # dropout masks: the same whether or not the run was resumed
    order = np.random.RandomState([config.seed, epoch]).permutation(len(run.data.y_train))
    rank, share = run.workers.rank, run.workers.per_worker
    order = order[rank * share:(rank + 1) * share]  # every worker draws the same order and steps through its share
    started = time.time()
    total_loss = mx.nd.zeros((1,), ctx=ctxs[0])
    batches = prefetch(run.maker, order, config.batch_size, len(ctxs), with_transpose=not native)
    queued = _QueuedSteps()
    progress = bar(batches, total=run.steps_per_epoch, desc=f"epoch {epoch}/{config.epochs}", disable=not config.progress, unit="batch",
                   log_final=True)
    with cluster.armed(watch, f"in epoch {epoch}"):  # (scoring and checkpoints after it: local work)
        try:
            # MXNet's engine runs each operator on a worker thread: a step's ~30 small operators were
            # ~30 hand-offs between threads, which on short texts and small batches cost more than the
            # work (and, on a busy machine, a scheduler time slice each). Bulking runs consecutive
            # operators as one engine task: the same operators in the same order, the same numbers.
            with mx.engine.bulk(ENGINE_BULK_OPS):
                for step, parts in enumerate(progress, 1):
                    raise_if_interrupted()  # a SIGTERM whose first raise a __del__ swallowed (stops.py)
                    if checkpoint_dir is None:  # a Stop here is told in one line: nothing saved (stops.stopped_line)
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
                    queued.add([step_result.loss_sum for step_result in steps], sum(p.nbytes for p in parts))
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
    return {"epoch": epoch, "train_loss": train_loss, "val_loss": float("nan"), "val_accuracy": float("nan"),
            "seconds": seconds, "samples_per_s": len(order) * workers / seconds}


class _QueuedSteps:
    """The steps the loop has queued on MXNet's engine and not waited for yet, oldest first.

    MXNet runs the operators asynchronously, and queuing a Yelp-size step takes Python far less time than
    computing it: unchecked, the loop ran up to 50 steps ahead (to its sync every 50 steps), each holding its
    batch's arrays (~1.5 MB with unigrams, ~5 MB with bigrams) until its operators ran: 70-230 MB of peak memory
    for no speed. Past :data:`QUEUED_BATCH_BYTES` the loop waits for its oldest step. Small batches (short texts:
    ~0.1 MB) never reach it: a wait flushes the engine's bulk, and waiting every step measured ~30% more CPU time
    there (Yelp-size steps: none)."""

    __slots__ = ("steps", "nbytes")

    def __init__(self):
        self.steps, self.nbytes = deque(), 0  # each queued step's (losses, batch bytes); their batches' bytes

    def add(self, losses, nbytes):
        """A step queued (its devices' loss sums, its batch's bytes): wait for the oldest ones while the queued
        batches hold more than :data:`QUEUED_BATCH_BYTES` (always leaving the newest one queued)."""
        self.steps.append((losses, nbytes))
        self.nbytes += nbytes
        while self.nbytes > QUEUED_BATCH_BYTES and len(self.steps) > 1:
            oldest, oldest_bytes = self.steps.popleft()
            self.nbytes -= oldest_bytes
            for loss_sum in oldest:
                loss_sum.wait_to_read()


def _end_epoch(run, row, on_epoch_end):
    """The epoch's ``row`` completed with its scores (the validation split; the training split with
    ``score_train``) and added to the history; then the checkpoint (worker 0's), and ``on_epoch_end``."""
    model, featurizer, ctx = run.model, run.data.featurizer, run.data.ctxs[0]
    if run.data.val is not None:
        bags, y = run.data.val
        probs = probabilities(model, featurizer, bags, ctx)
        metrics = metrics_of(probs, y)
        row.update(val_loss=metrics["loss"], val_accuracy=metrics["accuracy"])
        run.result.val_right = probs.argmax(axis=1) == y  # (the same scoring: autotune's paired test reads it)
    if run.score_train:
        row[TRAIN_ACCURACY] = accuracy_on(model, featurizer, run.data.train_bags, run.data.y_train, ctx)
    run.result.history.append(row)
    if run.checkpoint_dir and run.workers.rank == 0:
        save_checkpoint(run.checkpoint_dir, row["epoch"], model, run.config, run.data.classes, run.result.history,
                        run.updater.get_states(), names=run.data.names, data=run.data_id, validation=run.val_id,
                        score_train=run.score_train, num_workers=run.workers.count,
                        unicode_form=featurizer.unicode_form, kept=run.kept)
    if on_epoch_end is not None:
        on_epoch_end(row)


def _leave_cluster(run):
    """Drop the kvstore: a ``dist_*`` kvstore's destructor waits for every worker (a barrier), watched."""
    with cluster.armed(run.workers.watch, "while leaving the cluster"):
        run.updater.kv = None


def accuracy_on(model, featurizer, bags, y, ctx, chunk_size=None):
    """The model's accuracy on every document of ``bags`` (``Bags`` or ``TokenBags``), encoded and scored a chunk of
    documents of at most ``chunk_size`` tokens (``TokenBags``) or entries (``Bags``) at a time (None:
    :data:`SCORED_AT_ONCE`), so that a large training split is never encoded whole; each document's probabilities are
    its own (scoring.py), whatever the chunk."""
    sizes = bags.lengths if isinstance(bags, TokenBags) else np.diff(bags.offsets)
    correct = start = 0
    for stop in chunk_stops(np.cumsum(sizes), chunk_size or SCORED_AT_ONCE):
        raise_if_interrupted()  # a SIGTERM whose first raise a __del__ swallowed (stops.py)
        docs = np.arange(start, stop)
        correct += int((probabilities(model, featurizer, bags.select(docs), ctx).argmax(axis=1) == y[docs]).sum())
        start = stop
    return correct / len(y)


def check_pretrained(config, pretrained=None):
    """``pretrained`` (:class:`~fasttext_lib.vec_files.WordVectors` of ``config.pretrained_vectors``) checked
    against ``config.emsize`` and returned; not given, the file's start is checked (``None`` is returned: train reads
    the file once the vocabulary is known, keeping only its rows). ``None`` without pretrained vectors. Nothing is
    read whole here."""
    from .vec_files import check_dim, check_vec_start

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
    from .pretrained import describe, pretrained_rows, start_line

    mx.random.seed(config.seed)
    model = FastTextClassifier(featurizer.num_rows, config.emsize, num_classes, dropout=config.dropout)
    rows = (pretrained_rows(pretrained, featurizer.vocab.token_to_idx, featurizer.unicode_form)
            if pretrained is not None else None)
    if rows is not None and not len(rows[0]):  # asked for, yet no row would start from them: say so, not train as without
        raise FastTextError(f"none of the {pretrained.words_in_file} words of {pretrained.source} is in the training data's "
                            f"vocabulary ({featurizer.vocab_size} words), so no row would start from its vectors: vectors "
                            f"of other text, or of words not split as the data is (punctuation split off: don ' t)")
    model.initialize_like_fasttext(ctxs, seed=config.seed, rows=rows, huge_pages=huge_pages,
                                   state_tables=2 if config.optimizer == "adam" else 0,  # adam's two moment tables
                                   kvstore=kvstore_type(config, ctxs))  # (which decides where they live)
    if rows is None:
        return model, None
    record = describe(pretrained, len(rows[0]), featurizer.vocab_size)
    if config.progress:  # (with the settings line: TrainConfig.progress's help says both)
        print(start_line(record, pretrained.source), file=sys.stderr, flush=True)
    return model, record


def stop_if_diverged(value, what, epoch, step, config):
    """Stop a diverged run (nothing is saved: checkpoints and bundles come after this check)."""
    if not math.isfinite(value):
        raise diverged(f"{what} became {value}", epoch, step, config)


class Diverged(FastTextError):
    """Training diverged (a loss or parameter became NaN or infinite): a setting's failure, which autotune
    records as a failed trial and goes on from."""


def diverged(what, epoch, step, config):
    lr, optimizer = setting_named("lr", config.learning_rate), setting_named("optimizer", config.optimizer)
    return Diverged(f"training diverged: {what} at epoch {epoch}, step {step} ({lr}, {optimizer}); try a smaller "
                    f"{setting_named('lr')}")


def resolve_settings(config, texts, num_classes, num_docs, lengths=None, rare_class=None):
    """``config`` with the settings left to the data filled in (TrainConfig.resolve), announced on stderr.

    ``num_docs``: the documents one process steps through per epoch (its share with dist_* kvstores),
    so a cluster takes the steps, and spends the lr budget, of one process. ``lengths``: the token count of each of
    ``texts`` and after (``TokenBags.lengths``), when held: not counted again (schedule.mean_tokens).
    ``rare_class``: a function giving class_signal.rare_class_signal of the data, called only when the lr is the
    data's (the test reads the words of skewed data).
    """
    if config.resolved:
        return config
    texts = texts[:SAMPLE_DOCS]
    signal = rare_class() if rare_class is not None and lr_from_the_data(config) else None
    resolved = config.resolve(num_docs, mean_tokens(texts, lengths), num_classes, rare_class=signal)
    if config.progress:
        print(settings_line(config, resolved, num_docs, signal), file=sys.stderr, flush=True)
    return resolved


def lr_from_the_data(config):
    """Whether ``config``'s lr is left to the data (SGD's rule: schedule.default_schedule), not given or adam's."""
    from .config import DEFAULT_LR

    return config.lr is None and config.optimizer not in DEFAULT_LR


def rare_class_of(data):
    """class_signal.rare_class_signal of the run's training split: its labels and every word of its documents, whatever
    the run's min_count, as autotune's start reads them from the texts (class_signal.py: a property of the data). From
    the token ids the run holds (TokenBags.every_word: no text tokenized again, a streamed split's neither); a
    caller's ``featurized`` Bags hold the vocabulary's words only: from the split's texts, where it holds them."""
    from .class_signal import pairs_of_bags, rare_class_signal, texts_pairs

    bags = data.train_bags
    if isinstance(bags, TokenBags):
        words = bags.every_word()
        return rare_class_signal(data.y_train, lambda docs: pairs_of_bags(words.select(docs), words.featurizer))
    if isinstance(data.train_split, LabeledTexts):
        return rare_class_signal(data.y_train, texts_pairs(data.train_split))
    # (read_counted's split with a caller's Bags, which no library route makes: the vocabulary's words)
    return rare_class_signal(data.y_train, lambda docs: pairs_of_bags(bags.select(docs), data.featurizer))


def settings_line(config, resolved, num_docs, rare_class=None, searched=()):
    """``settings from the data: batch=16 (2888 documents, 5 epochs); given: sgd lr=0.25``: which of ``resolved``'s lr
    and batch size came from the data, which were ``config``'s own, and adam's fixed lr. It said "from the data" of
    them all, an lr the user had given too (02's -p lr 0.25). ``rare_class`` (class_signal.RareClassSignal) that
    lowered the lr (schedule.skew_factor) is said after it, with why. ``searched``: those of ``("lr", "batch_size")``
    an autotune search chose (``config``'s own, said as searched, not given: autotune's final model)."""
    from .config import DEFAULT_LR
    from .schedule import skew_factor

    lr, batch = f"{resolved.optimizer} lr={resolved.lr:g}", f"batch={resolved.batch_size}"
    lr_fixed = config.lr is None and config.optimizer in DEFAULT_LR  # (adam's 0.01: neither the data's nor given)
    lr_from_data = config.lr is None and not lr_fixed
    from_data = [s for s, of_data in ((lr, lr_from_data), (batch, config.batch_size is None)) if of_data]
    own = [(s, name in searched) for s, name, value in ((lr, "lr", config.lr), (batch, "batch_size", config.batch_size))
           if value is not None]
    parts = []
    if from_data:
        epochs = f"{resolved.epochs} epoch{'' if resolved.epochs == 1 else 's'}"
        skew = skew_factor(rare_class) if lr_from_data else 1.0
        why = (f"; the lr {skew:.2g}x: the rarer class, {rare_class.share:.0%} of the documents, is barely told apart "
               f"by its words (held-out AUC {rare_class.auc:.2f})" if skew < 1 else "")
        parts.append(f"from the data: {' '.join(from_data)} ({num_docs} documents, {epochs}{why})")
    for said, by_search in (("given", False), ("searched by autotune", True)):
        of_kind = [s for s, chosen in own if chosen is by_search]
        if of_kind:
            parts.append(f"{said}: {' '.join(of_kind)}")
    if lr_fixed:
        parts.append(f"{resolved.optimizer}'s default: lr={resolved.lr:g}")
    return "settings " + "; ".join(parts)


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
    libc = give_freed_memory_back()
    if libc is not None:
        libc.mallopt(-3, 1 << 30)  # M_MMAP_THRESHOLD: allocations below 1 GiB come from the heap
        libc.mallopt(-1, (1 << 31) - 1)  # M_TRIM_THRESHOLD: do not give the heap top back


def give_freed_memory_back():
    """Hand the heap's free pages back to the kernel (glibc's ``malloc_trim``); returns glibc (None outside it).

    Called as :func:`keep_freed_memory` starts, and by :func:`train` as it returns: the bags and the steps'
    temporaries, freed by then, stayed resident (the heap is kept whole), and what the caller did next (the CLI's save
    of the bundle, notebook 02's plot and imports) added to them: ~55 MB at 94k Yelp-shaped reviews (the CLI's peak
    1,080 -> 1,048 MiB; notebook 02's later steps take about as much again)."""
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim(0)
        return libc
    except (OSError, AttributeError):
        return None
