"""Checkpoints: ``<checkpoint_dir>/epoch-NNNN/`` (a directory or ``s3://`` prefix), newest kept.

Each epoch directory is a set published with :func:`fasttext_lib.storage.publish`: the parameters
and the optimizer state's arrays as data files (``optimizer.npz``, read with ``allow_pickle=False``: nothing in a
checkpoint runs code when it is read), ``checkpoint.json`` (epoch, labels, config, history, the optimizer's counters;
with each file's checksum) as its manifest, written last. Only then are older epochs removed
(:func:`storage.remove`), so a kill or a full disk at any point leaves at least one complete,
verified checkpoint. In an S3 bucket that keeps versions they are removed by the versions their uploads created,
which ``checkpoint.json`` records: no older epoch stays as a noncurrent version (storage/versions.py). :func:`load_checkpoint` refuses one written by another run (other data or settings:
the classes, the table size, :func:`data_fingerprint` (the documents' tokens too) and the config are
compared; one whose fingerprint an older version wrote, without the tokens, is refused as such), one
validated on other data or scored with the other ``score_train`` (its history would mix them), one written by a
dist_* cluster of another number of workers (their steps per epoch differ: a resumed cluster's servers count on from
the checkpoint's epoch times its steps, optim.continue_schedule), one whose epoch does not fit its name and history,
and a damaged one, each in one line; :func:`save_checkpoint` refuses to replace or remove another run's. Two runs of
one command may share the directory: a reader whose checkpoint the other removed reads the newer one.
"""
import contextlib
import hashlib
import mmap
import os
import re
import shlex
import sys
from dataclasses import dataclass

from . import storage
from . import text as text_rules
from .bundle import json_safe
from .errors import FastTextError, flag_of, is_out_of_memory, out_of_memory_naming, reason_of, refuse_standard_output
from .stops import (files_written, note_checkpoint_being_written, note_checkpoint_kept,
                    note_checkpoints_kept_by_the_first_host, note_what_a_stop_came_after, tell_a_late_stop)
from .text import FORMED_BREAKS, MARKS, NFC_FIRST, NFC_TOKENS, QUOTES_AND_BREAKS, TRAINING_FORM, UNICODE_FORMS

CHECKPOINT_MARKER = "checkpoint.json"
UNICODE_KEY = "unicode_normalization"  # the featurizer's unicode_form (text.UNICODE_FORMS), as in a bundle's config
# What the library did before each rule (text.UNICODE_FORMS), said when an older rule's checkpoint cannot resume
_BEFORE_RULE = {NFC_FIRST: "did not put text in Unicode NFC", NFC_TOKENS: "put words in Unicode NFC otherwise",
                QUOTES_AND_BREAKS: "read typographic quotes (don’t, “great”) and <br>, <br/> as parts of words",
                FORMED_BREAKS: "read a <br /> its rules formed (<br\\t/>, <br;/>) and invisible characters (a byte "
                               "order mark, a soft hyphen) as parts of words",
                MARKS: "read emoji variation selectors (❤️) and right-to-left direction marks as parts of words"}
CHECKPOINT_FILES = ("model.params", "optimizer.npz")  # data files; checkpoint.json lists them
PICKLED_STATES = "optimizer.states"  # what versions before optimizer.npz wrote: a pickle, never read
TRAIN_ACCURACY = "train_accuracy"  # the history column of train(score_train=True)
# data_fingerprint's start: it covers the documents' tokens. Before, a bare hex digest covered their counts only.
DATA_FINGERPRINT = "tokens-sha256:"
# On S3, beside the epochs: the newest epoch saved ({"epoch": N}), for a resume that may not list (_s3_marker_names)
NEWEST_EPOCH = "newest-epoch.json"
# A resume without s3:ListBucket asks for the markers of this many epochs past its own and the note's
# (_s3_marker_names): a checkpoint further past them is not seen. One HEAD each, 16 at a time, once per resume.
PROBED_PAST = 100


def _checkpoint_epochs(checkpoint_dir, last_epoch, past=False):
    """Epochs with a complete checkpoint (their marker exists), newest last. ``last_epoch`` bounds the
    search only where S3 refuses to list the prefix (then each epoch's marker is asked for; ``past``: a resume's
    search, past ``last_epoch`` too: :func:`_s3_marker_names`)."""
    return _epochs_found(checkpoint_dir, last_epoch, past)[0]


def _epochs_and_sizes(checkpoint_dir, last_epoch, past=False):
    """:func:`_checkpoint_epochs`, and the size of every object under an S3 ``checkpoint_dir`` by its name there
    (``epoch-NNNN/model-....params``), as the listing that found them gave it; None where nothing was listed (a
    local directory; S3 that refused the listing, asked for each marker instead)."""
    complete, _, names = _epochs_found(checkpoint_dir, last_epoch, past)
    return complete, names if isinstance(names, dict) else None


def _epochs_found(checkpoint_dir, last_epoch, past=False):
    """``(epochs with a complete checkpoint, newest last; every epoch-NNNN directory seen, marker or not; the names
    found: :func:`_s3_marker_names`')``.
    A directory without a marker holds what a killed or interrupted save left (or what a SageMaker sync
    cut short copied back): no resume reads it, so only :func:`save_checkpoint`'s sweep ever removes it."""
    if storage.is_s3(checkpoint_dir):
        with storage.s3_errors(checkpoint_dir):
            names = _s3_marker_names(checkpoint_dir, last_epoch, past)
    else:
        if os.path.lexists(checkpoint_dir) and not os.path.isdir(checkpoint_dir):
            raise FastTextError(f"checkpoint directory {checkpoint_dir} exists and is not a directory")
        if not os.path.isdir(checkpoint_dir):
            return [], set(), set()
        dirs = [d for d in os.listdir(checkpoint_dir) if os.path.isdir(os.path.join(checkpoint_dir, d))]
        for d in dirs:  # (not a checkpoint cut short: passed over as one, every epoch was trained again, then its save
            #            refused the directory)
            if storage.is_a_loop(os.path.join(checkpoint_dir, d, CHECKPOINT_MARKER)):
                raise _looping(os.path.join(checkpoint_dir, d), CHECKPOINT_MARKER)
        names = {f"{d}/" for d in dirs} | {f"{d}/{CHECKPOINT_MARKER}" for d in dirs
                                            if os.path.isfile(os.path.join(checkpoint_dir, d, CHECKPOINT_MARKER))}
    complete, seen = [], set()
    for name in names:
        head, _, tail = name.partition("/")
        if head.startswith("epoch-") and head[6:].isdigit():
            seen.add(int(head[6:]))
            if tail == CHECKPOINT_MARKER:
                complete.append(int(head[6:]))
    return sorted(complete), seen, names


def _s3_marker_names(checkpoint_dir, last_epoch, past=False):
    """``epoch-NNNN/checkpoint.json`` names under an S3 prefix: listed (a dict: every object's name there -> its
    size, which the listing gives with it: :func:`_refuse_damaged_files`), or, where S3 refuses the listing (a
    role without s3:ListBucket), asked for one epoch at a time: 1 .. ``last_epoch`` (a run's checkpoints
    are numbered by its epochs, and a checkpoint resumes only under the same settings, epochs included), and
    the epoch :data:`NEWEST_EPOCH` names. ``past``: a resume's question, also the :data:`PROBED_PAST` epochs past
    both, for a checkpoint that has no note (saved before notes were written, or past a note left by checkpoints
    removed since): without them one past ``last_epoch`` (a rerun with fewer epochs) went unseen, and the run
    started over where a listing refuses it. (Each epoch is asked for: a save removes the epoch before it, so only
    the newest marker is there, and a search that skips numbers, as a binary one does, misses it.)
    Without ListBucket S3 answers 403 for a missing key, so a refused HEAD means "no checkpoint there"."""
    from concurrent.futures import ThreadPoolExecutor

    bucket, prefix = storage.split_s3(checkpoint_dir)
    prefix = prefix.rstrip("/") + "/" if prefix else ""
    try:
        pages = storage.s3_client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return {o["Key"][len(prefix):]: o.get("Size") for page in pages for o in page.get("Contents", [])}
    except Exception as exc:
        if not storage.is_forbidden(exc):
            raise
    noted = _read_note(bucket, prefix + NEWEST_EPOCH)[0]
    asked = set(range(1, last_epoch + 1)) | {noted} - {None}
    if past:
        top = max(asked, default=0)
        asked |= set(range(top + 1, top + PROBED_PAST + 1))

    def marked(epoch):
        return storage.exists(storage.join(_epoch_dir(checkpoint_dir, epoch), CHECKPOINT_MARKER), forbidden_is_missing=True)

    epochs = sorted(asked)
    with ThreadPoolExecutor(min(16, len(epochs) or 1)) as pool:  # (one round trip each: together, not in turn)
        found = list(pool.map(marked, epochs))
    return {f"epoch-{e:04d}/{CHECKPOINT_MARKER}" for e, there in zip(epochs, found) if there}


def _read_note(bucket, key):
    """``(the epoch :func:`_note_newest` noted, the GetObject answer of the note)``: its ETag, its VersionId;
    ``(None, None)``: no note (without ListBucket a missing one is refused). A note this library did not write is
    ``(None, its answer)``: a hint for what to ask for, which is then checked as every checkpoint is, and replaced by
    the next save's."""
    import json

    try:
        answer = storage.s3_client().get_object(Bucket=bucket, Key=key)
        body = answer["Body"].read(1024)
    except Exception as exc:
        if storage.is_forbidden(exc) or storage.s3._is_missing(exc):
            return None, None
        raise
    try:
        epoch = json.loads(body)["epoch"]
    except (ValueError, TypeError, KeyError):
        epoch = None
    valid = isinstance(epoch, int) and not isinstance(epoch, bool) and epoch > 0
    return (epoch if valid else None), answer


_UNCONDITIONAL_NOTES = set()  # (endpoint, bucket) of stores that refused the note's conditional PUT (_write_note)


def _note_newest(checkpoint_dir, epoch):
    """On S3, ``NEWEST_EPOCH`` names ``epoch`` once its checkpoint is published (and before the one it replaces is
    removed), so that a resume that may not list the prefix finds it past its own epochs (:func:`_s3_marker_names`;
    a noted checkpoint removed since is asked for and not found). The note is a hint: a failure to write it fails
    no save (its checkpoint is published by then), it is one warning line; a resume without s3:ListBucket then finds
    the checkpoint only among the epochs it asks for anyway."""
    if not storage.is_s3(checkpoint_dir):
        return
    where = storage.join(checkpoint_dir, NEWEST_EPOCH)
    try:
        with storage.s3_errors(where):
            _write_note(where, epoch)
    except Exception as exc:  # (a Stop or KeyboardInterrupt is no Exception: it still ends the run)
        from .config import setting_said  # (--epochs as the caller's user sets it: TrainConfig's, the job's)

        print(f"warning: {where} was not written ({reason_of(exc)}); epoch {epoch}'s checkpoint is saved, but a resume "
              f"without s3:ListBucket finds it only among the epochs it asks for (1 to {setting_said('epochs')}, the "
              f"one noted before and the {PROBED_PAST} past them)", file=sys.stderr, flush=True)


def _write_note(where, epoch, attempts=5):
    """:func:`_note_newest`'s write. Never a lower epoch than the note names: two runs of one command may share the
    prefix, and one at epoch 3 writing after one at 7 hid the 7th from such a resume. So the note is read, and
    replaced only by a higher epoch, with a conditional PUT (If-Match its ETag; If-None-Match where there is none)
    that S3 refuses if another save wrote it between the two: then read again, and so is a note deleted between the
    two (If-Match answered 404). A store without conditional writes (501), or one that answers a condition it does
    not support with 400 (S3-compatible stores that take If-None-Match and not If-Match), is then written
    unconditionally: a note lowered only when two saves interleave to the millisecond. Such a store is remembered
    (:data:`_UNCONDITIONAL_NOTES`) once an unconditional PUT has followed the refusal, so that every later epoch is
    one PUT, not a refused one and another. (One object per epoch noted would need no condition, but they pile up,
    and one a kill left unwritten is a hole a search skipping numbers misses.) A GET and a small PUT an epoch (and
    a DELETE of the replaced note's version, where the bucket keeps versions)."""
    import json

    bucket, key = storage.split_s3(where)
    body = json.dumps({"epoch": epoch}).encode("ascii")
    client = storage.s3_client()
    store = (client.meta.endpoint_url, bucket)
    members = set() if store in _UNCONDITIONAL_NOTES else storage.s3._operation_members(client)
    refused = False
    for _ in range(attempts):
        noted, read = _read_note(bucket, key)
        if noted is not None and noted >= epoch:
            return
        etag = (read or {}).get("ETag")
        condition = {"IfMatch": etag} if etag else {"IfNoneMatch": "*"}
        if not set(condition) <= members:
            condition = {}
        try:
            put = client.put_object(Bucket=bucket, Key=key, Body=body, ContentType="application/json", **condition)
            if refused:  # (only now: a 400 for another cause, an expired token, fails the unconditional PUT too)
                _UNCONDITIONAL_NOTES.add(store)
            # In a bucket that keeps versions the note replaced stays as a noncurrent version, one an epoch: deleted.
            # (A few bytes: where S3 refuses, it stays unsaid; the epoch's own files are named when they stay.)
            with contextlib.suppress(Exception):
                storage.delete_replaced(client, bucket, key, read, put, kept=[])
            return
        except Exception as exc:
            code, status = getattr(exc, "response", {}).get("Error", {}).get("Code"), storage.s3._status(exc)
            if condition and (code in ("NotImplemented", "501") or status == 400):  # the condition not supported
                members, refused = set(), True
            elif code in ("NoSuchKey", "404") and "IfMatch" in condition:
                continue  # deleted since it was read: read again (none: If-None-Match)
            elif code not in ("PreconditionFailed", "412", "ConditionalRequestConflict", "409"):
                raise
    # (another save replaced the note at each attempt: theirs, as high as ours or higher by now, stays)


def _epoch_dir(checkpoint_dir, epoch):
    return storage.join(checkpoint_dir, f"epoch-{epoch:04d}")


def data_fingerprint(featurizer, bags, y, pretrained_sha256=None):
    """What identifies the training data beyond its classes and table size: the vocabulary, every document's
    label, token count and tokens, in order. Labels fixed in a few documents, or the file reordered, left the
    vocabulary unchanged, and so did words swapped between documents or one replaced by another word of the
    vocabulary: such a run resumed the old data's checkpoint silently (ending with neither run's parameters).
    ``pretrained_sha256``: the content of the ``.vec`` file the table started from (``None``: none), which the
    settings name only by its path: vectors replaced under the same name resumed the old ones' checkpoint, and
    the bundle recorded the new file's hash for rows that came from the old one. ``DATA_FINGERPRINT`` and hex."""
    import numpy as np

    digest = hashlib.sha256("\n".join(featurizer.vocab.idx_to_token).encode("utf-8"))
    if pretrained_sha256 is not None:  # (without vectors the fingerprint is what it always was)
        digest.update(f"\npretrained vectors {pretrained_sha256}\n".encode("ascii"))
    lengths = bags.lengths if hasattr(bags, "lengths") else np.diff(bags.offsets)
    for values in (y, lengths):
        digest.update(np.ascontiguousarray(values, dtype=np.int64).tobytes())
    _hash_tokens(digest, bags)
    return DATA_FINGERPRINT + digest.hexdigest()


def _hash_tokens(digest, bags):
    """Every document's tokens into ``digest``: a TokenBags' packed ids as they are (varints of ids numbered in
    first-seen order, a function of the token sequence alone: in memory or in read_counted's file, native or not)
    with what each id stands for (its vocabulary id, and its hash: an <unk> word's sets its n-grams' rows); a
    Bags' rows and weights. Nothing is converted or copied: the ids are hashed where they are (the file
    memory-mapped): ~0.05 s for 100k synthetic reviews (15.5M tokens, 25 MB of ids), ~0.3 s for Yelp's ~125 MB."""
    import numpy as np

    if not hasattr(bags, "codes"):  # features.Bags (validation data, or train's featurized)
        for values, dtype in ((bags.rows, np.int32), (bags.weights, np.float32)):
            digest.update(np.ascontiguousarray(values, dtype=dtype))
        return
    for values in (bags.to_id, bags.to_hash):
        digest.update(np.ascontiguousarray(values, dtype=np.int64))
    end = int(bags.starts[-1]) if len(bags.starts) else 0  # (the ids' bytes; a file may hold no more)
    if not hasattr(bags.codes, "fileno"):
        digest.update(np.ascontiguousarray(bags.codes[:end], dtype=np.uint8))
    elif end:
        with mmap.mmap(bags.codes.fileno(), end, access=mmap.ACCESS_READ) as codes:
            digest.update(codes)


def _refuse_an_older_fingerprint(where, meta):
    """A checkpoint whose data fingerprint is an older version's (:func:`data_fingerprint` without the tokens):
    whether this run's data is the data it was written with cannot be told. Refused in one line, as other data is,
    saying why (a refusal as "other data" sent the user looking for a change that is not there)."""
    older = [value for value in (meta.get("data"), meta.get("validation"))
             if isinstance(value, str) and not value.startswith(DATA_FINGERPRINT)]
    if older:
        raise FastTextError(f"checkpoint {where} was written by an older version of this library, whose fingerprint "
                            f"of the training data did not cover the documents' words, so whether this run's data is "
                            f"the data it was written with cannot be told; resume it with the version that wrote it, "
                            f"or use another --checkpoint-dir or remove it to train from the start")


def save_checkpoint(checkpoint_dir, epoch, model, config, labels, history, optimizer_states, names=None, data=None,
                    validation=None, score_train=False, num_workers=1, unicode_form=TRAINING_FORM, kept=None):
    """Publish ``epoch-NNNN/`` (manifest last), then remove older epochs: a kill at any point leaves
    at least one complete checkpoint. ``names``: the label names (recorded, not compared on resume:
    they change how classes are shown, not the run). ``data`` / ``validation``: :func:`data_fingerprint` of
    the training and the validation data (``None``: no validation split). ``score_train``: whether the history
    holds ``train_accuracy`` (train's ``score_train``), which a resumed run must go on recording, or not.
    ``num_workers``: the workers of a dist_* cluster (1 otherwise), whose number sets each one's share of the
    data and its steps per epoch: a resumed cluster must have as many. ``unicode_form``: how the run's featurizer
    read text (text.UNICODE_FORMS; bundle's "unicode_normalization"), which the data fingerprint may not show
    (:func:`_check_text_rule`). ``kept``: the run's :class:`KeptCheckpoint`, confirmed here to be this epoch's before
    the epoch before is removed (confirmed by the caller once this returned, a stop in between named the removed one)."""
    refuse_standard_output(checkpoint_dir, "checkpoint_dir", "the checkpoints", "a directory")
    older, leftovers, _ = _epochs_found(checkpoint_dir, epoch)
    for other in older:  # (epoch itself too: this save would replace it)
        _refuse_another_runs(checkpoint_dir, other, model, config, labels, data, validation, score_train, num_workers)
    meta = {"epoch": epoch, "labels": list(labels), "label_names": dict(names or {}), "data": data,
            "validation": validation, "score_train": bool(score_train), "num_workers": int(num_workers),
            UNICODE_KEY: unicode_form,
            "num_rows": model.num_rows, "config": _recorded_config(config),
            "history": [{k: json_safe(v) for k, v in row.items()} for row in history]}  # NaN -> null: read back as NaN
    with storage.staging_dir() as tmp:
        paths = {name: os.path.join(tmp, name) for name in CHECKPOINT_FILES}
        model.save_parameters(paths["model.params"])
        _write_optimizer_state(paths["optimizer.npz"], meta, optimizer_states)
        committed, undecided = [], []

        def commit():  # its checkpoint.json is in place: the one a rerun resumes from (on S3 known by the PUT's answer)
            committed.append(epoch)
            if kept is not None:
                kept.confirm(epoch)

        try:
            storage.publish(_epoch_dir(checkpoint_dir, epoch), paths, CHECKPOINT_MARKER, meta, move=True,
                            on_commit=commit, on_undecided=lambda: undecided.append(epoch))
        except KeyboardInterrupt as exc:  # stopped just after its commit (local: its manifest in place), it stays
            if committed or not storage.is_s3(checkpoint_dir) and os.path.isfile(
                    os.path.join(_epoch_dir(checkpoint_dir, epoch), CHECKPOINT_MARKER)):
                note_checkpoint_kept(exc, _epoch_dir(checkpoint_dir, epoch), epoch, checkpoint_dir)
            elif undecided:  # its checkpoint.json's PUT awaited S3's answer: S3 may apply it yet, or not
                note_checkpoint_being_written(exc, _epoch_dir(checkpoint_dir, epoch), epoch, checkpoint_dir,
                                              CHECKPOINT_MARKER)
            raise  # (else the epoch before stays: the stop's line names it, KeptCheckpoint)
    # From here on this epoch's checkpoint is the one kept (the one before is removed next): a stop up to the return,
    # the sweep of leftovers too, names it (else the caller's note named the epoch before, removed by then)
    try:
        if kept is not None:
            kept.confirm(epoch)
        _note_newest(checkpoint_dir, epoch)
        for old in older:
            if old < epoch:  # (a newer one stays: a checkpoint a resume set aside, or that of a run ahead sharing it)
                storage.remove(_epoch_dir(checkpoint_dir, old), CHECKPOINT_MARKER)
        _sweep_leftovers(checkpoint_dir, sorted(leftovers - set(older) - {epoch}))
    except KeyboardInterrupt as exc:
        note_checkpoint_kept(exc, _epoch_dir(checkpoint_dir, epoch), epoch, checkpoint_dir)
        raise


def _sweep_leftovers(checkpoint_dir, epochs):
    """Remove the directories of ``epochs`` that have no marker: what an interrupted save uploaded (an upload a signal
    abandoned may land after it took its files back), or the rest of a removal a kill cut short. Nothing else would
    ever visit them again. storage.remove deletes only our own files there (on S3 those older than its grace period:
    younger ones may be a concurrent run's upload in progress), and a failure here (files the user put there) never
    turns a saved checkpoint into an error."""
    for old in epochs:
        with contextlib.suppress(FastTextError):
            storage.remove(_epoch_dir(checkpoint_dir, old), CHECKPOINT_MARKER)


class KeptCheckpoint:
    """The checkpoint a run's ``checkpoint_dir`` keeps for a rerun to resume from, as the run goes on: ``epoch`` (None:
    none), first the one the look before the data found and a resume would read (``search``:
    :func:`refuse_an_older_format`'s), then the one resumed and each one saved (the caller sets it). A stop that ends
    the run within :meth:`told_on_a_stop` carries it (stops.note_checkpoint_kept): its one line says where it is and
    how to resume, where "stopped and cleaned up" had the user think the checkpoints were gone too. Once the run's
    bundle is written (:meth:`bundle_written`), the line says where instead: there is nothing left to resume."""

    def __init__(self, checkpoint_dir, search=None):
        self.checkpoint_dir, self.epoch, self.compared = checkpoint_dir, None, False
        self.bundle = None  # where the run wrote its bundle (None: not yet)
        self.written_since = []  # the files the run wrote after it, (what, where) each (also_written)
        self.rank = 0  # this worker's in a dist_* cluster (joined_as): only the first one (0) writes checkpoints
        if checkpoint_dir and search is not None:
            self.found(search)

    def joined_as(self, rank):
        """This process is worker ``rank`` of a ``dist_*`` cluster: any other than the first (0) writes no checkpoint,
        and the one it resumed is not the one kept once the first worker saves (and removes it): its stop's line says
        that the first host keeps them, and where."""
        self.rank = rank

    def found(self, search):
        """What the look before the data found (:func:`refuse_an_older_format`'s ``search``): the one a resume reads.
        Not yet compared with the data: it may be another run's, which the resume refuses (the stop's line says so)."""
        self.epoch, self.compared = _resumed_epoch(self.checkpoint_dir, search), False

    def confirm(self, epoch):
        """The checkpoint of ``epoch`` is this run's: the one it resumed (compared with its data), or one it saved."""
        self.epoch, self.compared = epoch, True

    def bundle_written(self, where):
        """The run's bundle is in place at ``where``: a stop from here on (its last lines) said 'stopped and cleaned
        up, keeping the checkpoint ...: run the same command again to resume from it', and that command was refused,
        as ``where`` held a bundle. Its line now says that it stopped after the bundle was written there."""
        self.bundle = where

    def also_written(self, what, where):
        """Once the bundle is written, ``what`` (the trial table, history.csv) is too, at ``where``: a stop's line names
        it after the bundle (stops.files_written). Said only as 'stopped after the bundle was written to ...', a file
        written and kept beside it went unsaid."""
        self.written_since.append((what, where))

    @contextlib.contextmanager
    def told_on_a_stop(self):
        """A stop within this block carries what the run keeps (:meth:`tell`); so does one that ends the stop block
        around it (stops.tell_a_late_stop): one Python dropped in a finalizer is raised again only there."""
        if self.checkpoint_dir:
            tell_a_late_stop(self.tell)
        try:
            yield self
        except KeyboardInterrupt as exc:
            self.tell(exc)
            raise

    def tell(self, exc):
        """Note on the stop ``exc`` where the bundle is, or which checkpoint a rerun resumes from, or, on a cluster's
        other workers, that the first one keeps them."""
        if self.bundle is not None:
            note_what_a_stop_came_after(exc, files_written([("the bundle", self.bundle), *self.written_since]))
        elif self.checkpoint_dir and self.rank:
            note_checkpoints_kept_by_the_first_host(exc, self.checkpoint_dir)
        elif self.checkpoint_dir and self.epoch is not None:
            note_checkpoint_kept(exc, _epoch_dir(self.checkpoint_dir, self.epoch), self.epoch, self.checkpoint_dir,
                                 compared=self.compared)


def remove_older_than(checkpoint_dir, epoch, model, config, labels, data=None, validation=None, score_train=False,
                      num_workers=1):
    """Remove this run's checkpoints older than ``epoch`` (the one a finished run resumed from). A kill between a
    save's publish and its removal of the epoch before left two; the rerun then trains nothing and saves nothing, so
    the older one (as large as the model, 3x with adam) stayed for good. Another run's checkpoints stay."""
    for old in _checkpoint_epochs(checkpoint_dir, epoch):
        if old < epoch:
            with contextlib.suppress(FastTextError):  # (another run's: refused, kept; or removed meanwhile)
                _refuse_another_runs(checkpoint_dir, old, model, config, labels, data, validation, score_train,
                                     num_workers)
                storage.remove(_epoch_dir(checkpoint_dir, old), CHECKPOINT_MARKER)


def _write_optimizer_state(path, meta, states):
    """``states`` (optim.OptimizerState, ``None`` where a dist_* cluster's servers hold it): its arrays into ``path``
    (.npz), its counters into the manifest's "optimizer". (np.savez into an open file left its zip unclosed when the
    disk filled: its finalizer then failed on the closed file, a traceback below the error line; write_npz closes it.)"""
    from .compact import write_npz

    meta["optimizer"] = None if states is None else states.counters
    write_npz(path, {} if states is None else states.arrays)


def _read_optimizer_state(path, meta, model, config):
    """:func:`_write_optimizer_state`'s state back, checked against the model's weights (optim.check_states):
    ``None`` for a dist_* cluster's. No pickle is read: a crafted checkpoint ran code at resume when this was
    MXNet's pickled updater. Adam's moments are read into the MXNet arrays the optimizer keeps (state_file.read_npz):
    read with numpy and then copied, a resume held them twice."""
    from .optim import EMBEDDING_KEY, OUTPUT_KEY, OptimizerState, check_states
    from .state_file import read_npz

    arrays = read_npz(path)
    counters = meta.get("optimizer")
    if counters is None and not arrays:
        return None
    states = OptimizerState(counters, arrays)
    check_states(states, {EMBEDDING_KEY: model.embedding.weight.shape, OUTPUT_KEY: model.output.weight.shape},
                 config.optimizer)
    return states


def _refuse_pickled(where, manifest):
    """A checkpoint of a version that pickled the optimizer state: refused, never unpickled (unpickling runs any code
    a crafted file holds, and a checkpoint directory is often a shared folder or S3 prefix)."""
    files = manifest.get("files", {})
    if PICKLED_STATES in files and "optimizer.npz" not in files:
        raise FastTextError(f"checkpoint {where} was written by an older version of this library, whose optimizer "
                            f"state is a Python pickle (loading one runs any code it holds), and is not read: resume "
                            f"it with the version that wrote it, or remove it or use another --checkpoint-dir to "
                            f"train from the start")


@dataclass(frozen=True)
class Search:
    """What a run's look into its checkpoint directory before its data is read found (:func:`refuse_an_older_format`),
    for :func:`load_checkpoint` to resume from (train's ``checkpoint_search``) instead of searching again: without
    s3:ListBucket a search asks S3 for every epoch's marker and the :data:`PROBED_PAST` after them, and each run
    searched twice. ``synced``: the directory is the one SageMaker syncs with the job's checkpoint_s3_uri, where
    an incomplete newest checkpoint is set aside (:func:`load_checkpoint`)."""
    epochs: tuple  # with a complete checkpoint (its marker there), newest last
    synced: bool = False
    listed: object = None  # on S3, the listing's size of each object by its name there (None: none was listed)


def refuse_an_older_format(checkpoint_dir, epochs, synced=False):
    """Before the data is read (minutes at Yelp size): every checkpoint a resume of ``epochs`` may read, refused now if
    a version that pickled its optimizer state wrote it (:func:`_refuse_pickled`), not after the reading. That is the
    newest, and in SageMaker's synced directory each one from the newest down to the one :func:`_resumed_epoch` picks
    (the resume sets aside the incomplete ones above it, and refuses a pickled one whole or not): checking the newest
    alone let an older pickled one through, behind a newest that a sync cut short. Its other faults are
    :func:`refuse_other_settings`' (what is known without the data) and :func:`load_checkpoint`'s, which say them
    with what to do. Returns the :class:`Search` it made, to pass on (on S3, with the sizes its listing gave)."""
    found, listed = _epochs_and_sizes(checkpoint_dir, epochs, past=True)
    search = Search(tuple(found), synced, listed)
    resumed = _resumed_epoch(checkpoint_dir, search)
    for epoch in reversed(found):
        if resumed is not None and epoch < resumed:
            break
        _refuse_if_pickled(_epoch_dir(checkpoint_dir, epoch))
    return search


def refuse_other_settings(checkpoint_dir, search, config, validated=None, score_train=None, num_workers=None):
    """Before the data is read: the newest checkpoint ``search`` (:func:`refuse_an_older_format`'s) found, refused now
    for whatever a resume would refuse it for that is known without the data: a setting of ``config`` that differs
    from the one it was written with, a text rule or data fingerprint of an older version that no data can make exact
    (:func:`_refuse_older_rules`), validation data where it had none or none where it had some (``validated``: whether
    this run has validation data), the other ``score_train``, another number of workers (``num_workers``), an epoch
    that does not fit its name and history, a checkpoint.json edited into other types (``None``: not known yet, not
    compared), a file of it missing or not at its size (:func:`_refuse_damaged_files`). Each came only after the whole training data was read (minutes at Yelp size). Settings left to the
    data (lr, batch_size unset), the data, its vocabulary and the validation data's content are compared by
    :func:`load_checkpoint`, as is every other fault of the checkpoint. In SageMaker's synced directory an incomplete
    newest one is set aside and an older one resumed: the one compared is the one the resume reads
    (:func:`_resumed_epoch`); the whole directory was let through, and a job of other settings read all its data
    before it was refused."""
    epoch = _resumed_epoch(checkpoint_dir, search)
    if epoch is None:
        return
    where = _epoch_dir(checkpoint_dir, epoch)
    try:
        meta = storage.read_manifest(where, CHECKPOINT_MARKER)
    except FastTextError:
        return  # (load_checkpoint says what is wrong with it)
    try:
        _check_meta(where, meta)
    except storage.Damaged as exc:
        raise _refusal(where, exc) from None  # (as the resume refuses it: no set-aside takes an unsound manifest)
    if not search.synced:  # (in SageMaker's, _resumed_epoch has passed over one whose files are not all there)
        _refuse_damaged_files(where, epoch, meta, search.listed)
    _refuse_older_rules(where, meta, text_rule_before_reading(config))
    found = _setting_differences(meta, config, known_only=True)
    if found:
        raise FastTextError(f"{_different_run_line(where, meta, config, found)}; use another --checkpoint-dir or "
                            f"remove it")
    _refuse_another_kind_of_run(where, meta, epoch, config, validated, score_train, num_workers, validation_read=False)


def _resumed_epoch(checkpoint_dir, search):
    """The epoch of ``search`` a resume reads (``None``: none): the newest, or in SageMaker's synced directory the
    newest whose files are all there at the sizes its checkpoint.json gives, as :func:`load_checkpoint` sets aside
    one a cut-short sync left without them. (One whose file has its size but not its content is set aside too, known
    only from the checksums, which reading gigabytes to compare settings would not be worth: its settings are
    compared, and the resume says what it finds.)"""
    epochs = list(search.epochs)
    if not search.synced:
        return epochs[-1] if epochs else None
    for epoch in reversed(epochs):
        if _files_there(_epoch_dir(checkpoint_dir, epoch)):
            return epoch
    return None


def _files_there(where):
    """Whether the local checkpoint at ``where`` holds every file its checkpoint.json names, at its size; true too of
    one whose checkpoint.json cannot be read, which no resume sets aside (:func:`load_checkpoint` says what is wrong)."""
    try:
        files = storage.read_manifest(where, CHECKPOINT_MARKER)["files"]
    except FastTextError:
        return True
    for entry in files.values():
        path = os.path.join(where, entry["object"])
        if not os.path.isfile(path) or os.path.getsize(path) != entry["bytes"]:
            return False
    return True


def _refuse_damaged_files(where, epoch, meta, listed):
    """Before the data is read: the checkpoint at ``where`` (of ``epoch``, its checkpoint.json ``meta``) refused, as
    its resume refuses it (:func:`load_checkpoint`: outside SageMaker's synced directory, for good, no earlier one
    resumed), when a file the resume reads is missing or not at the size its checkpoint.json gives: asked of the
    disk, or on S3 of the sizes the listing that found the epochs gave (``listed``; None: S3 refused the listing, and
    the resume's read tells). Its checksums are left to the resume, which reads the files anyway."""
    files = meta.get("files")
    if (storage.is_s3(where) and listed is None) or not isinstance(files, dict):
        return  # (a checkpoint.json without its files: the resume says what is wrong with it)
    for name in CHECKPOINT_FILES:
        entry = files.get(name)
        if not (isinstance(entry, dict) and isinstance(entry.get("object"), str)
                and isinstance(entry.get("bytes"), int)):
            continue  # (as above)
        stored, expected = entry["object"], entry["bytes"]
        if listed is not None:
            size = listed.get(f"epoch-{epoch:04d}/{stored}")
        else:
            path = os.path.join(where, stored)
            size = os.path.getsize(path) if os.path.isfile(path) else None
        # (in the words of storage.read_set's refusals, which the resume gives)
        if size is None and listed is None and storage.is_a_loop(path):  # (not "missing, deleted since")
            raise _looping(where, stored)
        if size is None:
            raise _missing_file(where, storage.SetChanged(f"{where}: {name} is missing", missing=(name, stored)))
        if size < expected:
            raise _refusal(where, storage.Damaged(f"{where}: {name} is truncated: {size} of {expected} bytes"))
        if size != expected:
            raise _refusal(where, storage.Damaged(f"{where}: {name} does not match its checksum in the manifest "
                                                  f"(corrupt or from another set)"))


def _refuse_if_pickled(where):
    """:func:`_refuse_pickled` for the checkpoint at ``where``; nothing where its manifest cannot be read (the caller
    says that fault its own way)."""
    try:
        manifest = storage.read_manifest(where, CHECKPOINT_MARKER)
    except FastTextError:
        return
    _refuse_pickled(where, manifest)


def _same_run(meta, model, config, labels, data):
    # ("data" is None in checkpoints written before it was recorded: those are compared on the rest)
    return meta.get("labels") == list(labels) and meta.get("num_rows") == model.num_rows \
        and config.same_run(meta.get("config", {})) and meta.get("data", data) == data


def _run_differences(meta, model, config, labels, data):
    """What differs between the run that wrote a checkpoint (``meta``) and this one, each as ``epochs 2 -> 3``
    (``[]``: the same run). A refusal that named none of it left the user to guess which of a dozen settings, or
    the data, had changed."""
    found = _setting_differences(meta, config)
    if meta.get("labels") != list(labels):
        found.append(f"classes {', '.join(map(str, meta.get('labels') or []))} -> {', '.join(map(str, labels))}")
    if meta.get("data", data) != data:
        found.append("the training data (its vocabulary, labels or documents)"
                     + (" or the pretrained vectors' content" if config.pretrained_vectors else ""))
    if meta.get("num_rows") != model.num_rows and not found:  # (settings or data explain it when they differ)
        found.append(f"embedding rows {meta.get('num_rows')} -> {model.num_rows}")
    return found


def _setting_differences(meta, config, known_only=False):
    """The settings of ``config`` that differ from those a checkpoint (``meta``) was written with, each as
    ``epochs 2 -> 3``. ``known_only``: leave out those ``config`` leaves to the data (None: lr, batch_size), which a
    checkpoint holds as the data made them. The vectors' path is compared by whether it is given (config.GIVEN_OR_NOT):
    ``pretrained_vectors None`` is known, and refused here, for a checkpoint that started from vectors."""
    from .config import RUN_ONLY, as_resumed

    theirs = meta.get("config", {})
    return [f"{name} {theirs.get(name)} -> {value}" for name, value in config.to_dict().items()
            if name not in RUN_ONLY and as_resumed(name, theirs.get(name)) != as_resumed(name, value)
            and not (known_only and as_resumed(name, value) is None)]


def _different_run(where, meta, model, config, labels, data):
    """``checkpoint <where> was written by a different run (epochs 2 -> 3)``: the refusal's start, naming what differs."""
    return _different_run_line(where, meta, config, _run_differences(meta, model, config, labels, data))


def _different_run_line(where, meta, config, found):
    """:func:`_different_run`'s line for the differences ``found``."""
    text = f"checkpoint {where} was written by a different run ({'; '.join(found) or 'other data or settings'})"
    written_with = meta.get("config", {})
    differ = [f.split(" ")[0] for f in found]  # (the settings' names; "classes", "the training data", ...)
    if config.epochs != written_with.get("epochs"):  # more epochs change the lr schedule of those already trained
        why = ("a finished or interrupted run resumes only with the epochs it started with (the lr schedule spans "
               "them)")
    elif "lr" in differ or "batch_size" in differ:
        # (a run that left them to the data, written by a version whose rule gave others: schedule.py's changes, as
        # the skew test's lower lr; nothing else told it how to go on)
        why = ("a run resumes with the lr and batch size it started with (left to the data, they are this version's "
               "rule's, which may have changed since)")
    else:
        return text
    # Every setting that differs, as it was written (each is train's --flag): "--epochs 3" alone was refused
    # again for the others
    names = config.to_dict()
    vectors, relative = _recorded_vectors(meta)
    settings = [_as_flag(name, vectors if name == "pretrained_vectors" else written_with.get(name))
                for name in names if name in differ]
    same_data = "" if all(name in names for name in differ) else " on the same data"
    text += f"; {why}: rerun with {' '.join(settings)}{same_data} to resume it"
    if relative and "pretrained_vectors" in differ:
        text += f" ({relative})"
    return text


# A refusal here says what to do as the command line does (its flags), for its two callers that take flags: the CLI,
# and the training job, whose sm_train.in_job_terms says them as its hyperparameters and S3 prefix. A caller of
# train() (the Python API, the notebooks) gave them as its arguments (checkpoint_dir, val_data, TrainConfig's fields).
# Each pattern matches the remedy's own words only: the checkpoint's path comes first in the same text, and a path
# holding "rerun with " or "--checkpoint-dir" was rewritten as if it were the remedy (or broke the rewrite).
_ARGUMENT_REMEDIES = (
    (r"(another|this) --checkpoint-dir\b", r"\1 checkpoint_dir"),
    (r"the --validation it was written with", "the val_data it was written with"),
)
# One of _as_flag's settings: "without --flag", or "--flag WORD" with WORD as shlex.quote writes it (bare safe
# characters, or single-quoted pieces joined by "'" in double quotes)
_SHELL_WORD = r"""(?:[A-Za-z0-9_@%+=:,./-]+|'[^']*'(?:"'"'[^']*')*)"""
_SETTING = rf"(?:without --[a-z][a-z-]*|--[a-z][a-z-]* {_SHELL_WORD})"
_RERUN_WITH = re.compile(rf"rerun with ({_SETTING}(?: {_SETTING})*)((?: on the same data)? to resume it)")


def in_argument_terms(message):
    """A checkpoint refusal ``message`` said as a caller of train() gives what it names: ``use another checkpoint_dir``,
    ``rerun with TrainConfig(epochs=2, ngrams=1)``. Any other message is returned as it is."""
    if not re.match(r"(cannot resume from )?checkpoint ", message):
        return message
    message = rerun_settings_said(message, lambda settings: f"TrainConfig({_as_arguments(settings)})")
    for pattern, said in _ARGUMENT_REMEDIES:
        message = re.sub(pattern, said, message)
    return message


def rerun_settings_said(message, said):
    """``message`` with its "rerun with --epochs 2 --seed 1 to resume it" said by ``said`` (given
    :func:`rerun_settings`' pairs) in its caller's terms; a message without one is returned as it is."""
    return _RERUN_WITH.sub(lambda m: f"rerun with {said(rerun_settings(m[1]))}{m[2]}", message)


def rerun_settings(flags):
    """``--epochs 2 without --pretrained-vectors`` (:func:`_as_flag`'s) as ``[("epochs", "2"),
    ("pretrained_vectors", None)]``: each setting's name and the value it was written with (None: not given)."""
    words, settings = shlex.split(flags), []
    while words:
        word = words.pop(0)
        name = (words.pop(0) if word == "without" else word)[2:].replace("-", "_")
        settings.append((name, None if word == "without" else words.pop(0)))
    return settings


def _as_arguments(settings):
    """:func:`rerun_settings`' pairs as TrainConfig's arguments: ``epochs=2, pretrained_vectors=None``."""
    arguments = []
    for name, value in settings:
        literal = value is None or value in ("True", "False") or re.fullmatch(r"-?[\d.]+(e-?\d+)?", value)
        arguments.append(f"{name}={value if literal else repr(value)}")
    return ", ".join(arguments)


@contextlib.contextmanager
def refusals_said_as_arguments(as_flags=False):
    """A checkpoint refusal raised inside (train()'s) said in the caller's terms (:func:`in_argument_terms`), unless
    the caller takes flags (``as_flags``: the CLI, the training job)."""
    try:
        yield
    except FastTextError as exc:
        said = str(exc) if as_flags else in_argument_terms(str(exc))
        if said == str(exc):
            raise
        raise FastTextError(said) from None


def _as_flag(name, value):
    """``--name value`` as the rerun suggestion gives it: a shell word (a path with a space was two)."""
    flag = flag_of(name)
    return f"without {flag}" if value is None else f"{flag} {shlex.quote(value) if isinstance(value, str) else value}"


def _recorded_config(config):
    """``config`` as a checkpoint records it: the pretrained vectors' local path made absolute (a ``~`` read as the
    home folder: ``~/wiki.vec`` was recorded as ``<here>/~/wiki.vec``). A resume compares it by whether it is given
    (config.GIVEN_OR_NOT), but a refused one suggests it back (:func:`_different_run_line`): as the first run typed it
    (v.vec), it named no file from another directory."""
    recorded = config.to_dict()
    vectors = recorded.get("pretrained_vectors")
    if vectors and not storage.is_s3(vectors):
        recorded["pretrained_vectors"] = os.path.abspath(storage.expand_home(vectors))
    return recorded


def _recorded_vectors(meta):
    """The pretrained vectors' path a checkpoint (``meta``) suggests a rerun with, and what to say of it (or None).
    Checkpoints written before the path was recorded absolute (:func:`_recorded_config`) hold it as the first run was
    given it, relative to the folder that run was started in, which they do not record: where it names a file from
    here it is given absolute (its content is compared on resume: another file of that name is refused), else as it
    is, said to be relative to that folder."""
    vectors = meta.get("config", {}).get("pretrained_vectors")
    if not vectors or storage.is_s3(vectors) or os.path.isabs(vectors):
        return vectors, None
    if os.path.isfile(vectors):
        return os.path.abspath(vectors), None
    return vectors, (f"{vectors} is relative to the folder the run that wrote this checkpoint was started in, which "
                     f"the checkpoint does not record")


def _same_validation(meta, validation):
    """The validation data a checkpoint's history was measured on. Validation changes no parameter, but a run
    resumed with another (or none) carried the old history on: its epochs' val_loss and val_accuracy, and the
    bundle's metrics, were then measured on two validation sets, silently."""
    return meta.get("validation", validation) == validation  # (absent in checkpoints written before it was recorded)


def _scored_train(meta):
    """Whether a checkpoint's history holds ``train_accuracy`` (train's ``score_train``): recorded, or, in
    checkpoints written before it was, seen in the history."""
    if "score_train" in meta:
        return bool(meta["score_train"])
    return any(TRAIN_ACCURACY in row for row in meta.get("history", []))


def _refuse_another_runs(checkpoint_dir, epoch, model, config, labels, data, validation=None, score_train=False,
                         num_workers=1):
    """Before a save replaces or removes ``epoch``'s checkpoint: it must be this run's. A run refuses at its
    start a directory that holds another's checkpoints, but two runs started together both found it empty,
    and each save then replaced or removed the other's checkpoints (the other's rerun was then refused)."""
    where = _epoch_dir(checkpoint_dir, epoch)
    try:
        meta = storage.read_manifest(where, CHECKPOINT_MARKER)
        _check_meta(where, meta)
    except FastTextError:
        return  # removed meanwhile by a run of this same command, or not ours (storage.remove refuses that)
    if not (_same_run(meta, model, config, labels, data) and _same_validation(meta, validation)
            and _scored_train(meta) == bool(score_train) and meta.get("num_workers", num_workers) == num_workers):
        raise FastTextError(f"{_different_run(where, meta, model, config, labels, data)} while this one "
                            f"trained: two trainings share this --checkpoint-dir; give each its own (nothing of this "
                            f"run's epoch was saved there)")


def load_checkpoint(checkpoint_dir, model, config, labels, data=None, attempts=3, validation=None, score_train=False,
                    num_workers=1, text_rule=(TRAINING_FORM, ()), search=None):
    """Load the newest checkpoint into ``model``; ``None`` when there is none yet. One written by a run that
    scored its training split (``score_train``) resumes only a run that does too, and the reverse; one written
    by a dist_* cluster only a cluster of as many workers (``num_workers``). ``text_rule``: (the featurizer's
    unicode_form, the rules whose change the data fingerprint tells: :func:`text_rule_of`). ``search``: what
    :func:`refuse_an_older_format` found (``None``: searched here)."""
    epochs = list(search.epochs) if search is not None else _checkpoint_epochs(checkpoint_dir, config.epochs, past=True)
    searched = 1
    while epochs:
        where = _epoch_dir(checkpoint_dir, epochs[-1])
        try:
            return _load_epoch(checkpoint_dir, epochs[-1], model, config, labels, data, validation, score_train,
                               num_workers, text_rule)
        except FastTextError as exc:
            # Another run with this --checkpoint-dir saved a newer epoch and removed this one while we read it (its
            # manifest is gone: "has no checkpoint.json"): that newer one is the one to resume from. Searched again
            # only then: a checkpoint refused for what it holds is still there.
            if searched < attempts and not storage.exists(storage.join(where, CHECKPOINT_MARKER),
                                                          forbidden_is_missing=True):
                searched += 1
                epochs = _checkpoint_epochs(checkpoint_dir, config.epochs, past=True)
                continue
            if not isinstance(exc, (storage.SetChanged, storage.Damaged)):
                raise
            if search is not None and search.synced and _manifest_sound(where):
                print(_set_aside_line(where, exc, epochs), file=sys.stderr, flush=True)
                epochs = epochs[:-1]
                continue
            raise _refusal(where, exc) from None
    return None


def _refusal(where, exc):
    """A damaged checkpoint's refusal (``exc``: storage.SetChanged, storage.Damaged), for good: "try again" would not
    help."""
    if isinstance(exc, storage.SetChanged) and exc.missing:
        return _missing_file(where, exc)
    reason = "a file its checkpoint.json names is missing" if isinstance(exc, storage.SetChanged) else \
        str(exc).replace(f"{where}: ", "", 1)
    return FastTextError(f"cannot resume from checkpoint {where}: {reason}; remove that directory (an earlier "
                         f"checkpoint, if any, is resumed instead) or use another --checkpoint-dir")


def _looping(where, name):
    """The refusal of the checkpoint at ``where`` whose file ``name`` is a loop of symbolic links, as a damaged
    one's."""
    return _refusal(where, storage.Damaged(f"cannot read {os.path.join(where, name)}: {storage.LOOP}"))


def _manifest_sound(where):
    """Whether the checkpoint at ``where`` has a checkpoint.json this library wrote, whole (only its data files are
    at fault): what a SageMaker sync cut short leaves, set aside in its directory. Another fault is refused there too."""
    try:
        _check_meta(where, storage.read_manifest(where, CHECKPOINT_MARKER))
    except FastTextError:
        return False
    return True


def _set_aside_line(where, exc, epochs):
    """The warning of a checkpoint set aside in SageMaker's synced directory (:func:`load_checkpoint`). SageMaker
    uploads /opt/ml/checkpoints to the job's checkpoint_s3_uri in its own order, so an interruption can leave the S3
    copy, which a restarted job starts from, with the newest checkpoint.json and not all its files; refused, a
    managed spot job's automatic restart failed. It is left where it is: renamed, the sync would delete its S3
    objects and upload them again under the new name, in its own order (the next interruption can lose both) and
    with the bandwidth the next checkpoint needs. No save removes it (only epochs before its own): the job's own save
    of that epoch replaces it. (Outside SageMaker the refusal stays: :func:`_missing_file` says why.) ``epochs``: the
    checkpoints' epochs, ``where``'s the last."""
    epoch, earlier = epochs[-1], epochs[:-1]
    if isinstance(exc, storage.SetChanged) and exc.missing:
        reason = f"its {CHECKPOINT_MARKER} names {exc.missing[0]} ({exc.missing[1]}), which is missing"
    else:
        reason = reason_of(exc).replace(f"{where}: ", "", 1)
    then = f"the job resumes from epoch {earlier[-1]}" if earlier else \
        "training starts over (no complete checkpoint before it)"
    return (f"warning: checkpoint {where} is incomplete ({reason}): SageMaker's upload of it to the job's "
            f"checkpoint_s3_uri was cut short; it is set aside, left as it is until this job saves epoch {epoch} "
            f"again, and {then}")


def _missing_file(where, exc):
    """The refusal of a checkpoint whose checkpoint.json names a file that is gone (``exc``: storage.SetChanged), by
    name. A save writes checkpoint.json after the files it names (storage.publish), and takes them back only with it,
    so this one was complete and lost the file since: deleted by hand or by a lifecycle rule, skipped by a copy. Not
    fallen back from to an earlier checkpoint (a kill before its removal leaves one): that run's next save would
    remove this one, and with it what can still be restored (the file from a backup or an object version); said so."""
    name, stored = exc.missing
    said = "is missing or S3 refused to read (403: without s3:ListBucket its answer for a missing object too)" \
        if exc.refused else "is missing (deleted since it was written: a save writes checkpoint.json last)"
    return FastTextError(f"cannot resume from checkpoint {where}: its {CHECKPOINT_MARKER} names {name} ({stored}), "
                         f"which {said}; put that file back, or remove that directory (an earlier checkpoint, if any, "
                         f"is resumed instead) or use another --checkpoint-dir")


def text_rule_of(featurizer, config):
    """:func:`load_checkpoint`'s ``text_rule``: how ``featurizer`` reads text, and the rules (text.UNICODE_FORMS)
    whose change the data fingerprint tells, so that a checkpoint written by the rule before them resumes exactly
    (:func:`_check_text_rule`): none but with min_count 1 (every word in the vocabulary); then those after which the
    words spelled otherwise before are never words (NFC, quotes, variation selectors and direction marks), and
    :data:`text.FORMED_BREAKS` unless the vocabulary has both a word ending in ``<br`` and one starting with ``/>``."""
    return featurizer.unicode_form, _rules_told(config, featurizer.vocab.idx_to_token)


def text_rule_before_reading(config):
    """:func:`text_rule_of` as far as it is known before the data is read: the rule a run trains with now
    (text.TRAINING_FORM, looked up as the featurizer does), and every rule the fingerprint may tell, the vocabulary
    not known yet: only what no data can make exact is refused with it."""
    return text_rules.TRAINING_FORM, _rules_told(config, None)


def _rules_told(config, words):
    """:func:`text_rule_of`'s rules the data fingerprint tells, for the vocabulary ``words`` (None: not known yet,
    so all those it may tell)."""
    if config.min_count != 1:
        return ()
    told = (NFC_FIRST, NFC_TOKENS, QUOTES_AND_BREAKS, MARKS)
    if words is None or not (any(w.endswith("<br") for w in words) and any(w.startswith("/>") for w in words)):
        told += (FORMED_BREAKS,)
    return told


def _check_text_rule(where, meta, text_rule):
    """A checkpoint resumes only a run that reads text as its own did (text.UNICODE_FORMS). The data fingerprint does
    not always tell: a word the old rule spelled otherwise, seen under min_count (<unk>), whose new spelling is a word
    of the vocabulary, leaves vocabulary, labels and token counts alike while its documents' ids differ (“great” was
    <unk>, great is a word; with n-grams, an <unk> word's spelling changes its n-grams' buckets too). One an older rule
    wrote (recorded, or no entry: NFC before lowercasing only, or no NFC) resumes when the fingerprint is exact: with
    min_count 1. A word the old rule spelled otherwise was then a word of its vocabulary, and never one of today's
    (every word now is in NFC, and has no typographic quote, no <br> or <br/>, no variation selector and no direction
    mark in it: ❤️ was a word, ❤ is): another vocabulary, refused as other data. Without n-grams and with an
    all-ASCII vocabulary it was exact too before typographic quotes were read as ASCII ones (“great” is ASCII now).
    Before :data:`text.FORMED_BREAKS`, great<br\\t/>food was great<br and />food, words today's rule still makes (of
    great<br x, and x />food), where today's reads great food, two words as well: with counts in the same order,
    vocabulary and token counts are alike, even with min_count 1. Not when the vocabulary has no word ending in <br,
    or none starting with />: the old one had both, where a <br /> formed.
    (A checkpoint whose fingerprint covers the tokens, :data:`DATA_FINGERPRINT`, tells every such difference as other
    data; checked before that, this names its cause.)"""
    form, told = text_rule
    recorded = meta.get(UNICODE_KEY, NFC_FIRST)  # (no entry: written before NFC_TOKENS, by NFC_FIRST or no NFC)
    if recorded == form:
        return
    newer = UNICODE_FORMS[UNICODE_FORMS.index(recorded) + 1:UNICODE_FORMS.index(form) + 1] \
        if recorded in UNICODE_FORMS and form in UNICODE_FORMS else ()
    if not newer:  # (a rule this library does not know, or a newer one)
        raise FastTextError(f"checkpoint {where} was written by a run that read text in Unicode form "
                            f"{recorded!r}, this one in {form!r}; use another --checkpoint-dir or remove it")
    if not set(newer) <= set(told):
        raise FastTextError(f"checkpoint {where} was written by an older version of this library, which "
                            f"{' and '.join(_BEFORE_RULE[rule] for rule in newer)} (a few words are spelled otherwise "
                            f"now): resumed, its epochs and the rest would have read the data differently; use "
                            f"another --checkpoint-dir or remove it to train from the start")


def _load_epoch(checkpoint_dir, epoch, model, config, labels, data, validation=None, score_train=False, num_workers=1,
                text_rule=(TRAINING_FORM, ())):
    where = _epoch_dir(checkpoint_dir, epoch)
    with storage.staging_dir() as tmp:
        try:
            meta, paths = storage.read_set(where, CHECKPOINT_MARKER, CHECKPOINT_FILES, tmp)  # sizes, checksums verified
        except FastTextError:  # (an older version's checkpoint lists no optimizer.npz: said as what it is)
            _refuse_if_pickled(where)
            raise
        _check_meta(where, meta)
        meta["history"] = [{k: float("nan") if v is None else v for k, v in row.items()} for row in meta.get("history", [])]
        _refuse_older_rules(where, meta, text_rule)
        if not _same_run(meta, model, config, labels, data):
            raise FastTextError(f"{_different_run(where, meta, model, config, labels, data)}; "
                                f"use another --checkpoint-dir or remove it")
        _refuse_another_kind_of_run(where, meta, epoch, config, validation, score_train, num_workers)
        # Content the checksums do not catch (a file replaced with its checksum updated): MXNet's error, or numpy's
        # for a cut-short archive, was a traceback. Memory the machine cannot give (adam's moments are allocated as
        # they are read) is the machine's, not the file's: out_of_memory_naming's line.
        with out_of_memory_naming(f"resume from checkpoint {where}"):
            try:
                model.load_parameters(paths["model.params"], ctx=model.embedding.weight.list_ctx())
            except Exception as exc:
                if is_out_of_memory(exc):
                    raise
                raise storage.Damaged(f"{where}: model.params cannot be loaded ({reason_of(exc)})") from None
            try:
                meta["optimizer_states"] = _read_optimizer_state(paths["optimizer.npz"], meta, model, config)
            except Exception as exc:
                if is_out_of_memory(exc):
                    raise
                raise storage.Damaged(f"{where}: optimizer.npz cannot be loaded ({type(exc).__name__}: "
                                      f"{reason_of(exc)})") from None
    return meta


def _refuse_older_rules(where, meta, text_rule):
    """Refuse a checkpoint an older version wrote where this run's resume of it cannot be exact: a data fingerprint
    without the tokens (:func:`_refuse_an_older_fingerprint`), a text rule the data fingerprint does not tell
    (:func:`_check_text_rule`; first: text read otherwise is other tokens, said as its cause)."""
    _refuse_an_older_fingerprint(where, meta)
    _check_text_rule(where, meta, text_rule)


def _refuse_another_kind_of_run(where, meta, epoch, config, validation, score_train, num_workers,
                                validation_read=True):
    """Refuse ``epoch``'s checkpoint (``meta``, at ``where``) as a resume of a run whose ``validation`` (its data
    fingerprint; with ``validation_read=False`` only whether the run has validation data, which is not read yet),
    ``score_train`` or ``num_workers`` differ from those it was written with (``None``: not known yet, not compared),
    or whose epoch does not fit its name and history. None of these depends on the training data, and only the
    validation data's fingerprint on the validation data."""
    if validation_read or validation is not None:
        _refuse_other_validation(where, meta, validation, validation_read)
    if score_train is not None:
        scored = _scored_train(meta)
        if scored != bool(score_train):  # (scoring changes no parameter, as validation does not)
            raise FastTextError(f"checkpoint {where} was written {'with' if scored else 'without'} "
                                f"train_accuracy (score_train={scored}): its history would have that "
                                f"column for some epochs only; rerun with score_train={scored}, or use "
                                f"another --checkpoint-dir or remove it")
    # (absent in checkpoints written before it was recorded: those resume as written by as many workers)
    written_by = meta.get("num_workers", num_workers)
    if num_workers is not None and written_by != num_workers:
        raise FastTextError(f"checkpoint {where} was written by {written_by} worker(s) and this run has "
                            f"{num_workers}: each worker's share of the data, its steps and the lr schedule would "
                            f"differ from the run it resumes; rerun with {written_by} worker(s) (hosts), or use "
                            f"another --checkpoint-dir or remove it")
    # The one field the checksums and the comparison above leave unchecked decides where training goes on:
    # an "epoch" edited by hand (or a directory renamed) would train epochs twice or skip them, silently.
    if meta.get("epoch") != epoch or [row.get("epoch") for row in meta["history"]] != list(range(1, epoch + 1)) \
            or epoch > config.epochs:
        raise FastTextError(f"checkpoint {where} is inconsistent (its epoch, its directory's name and its history "
                            f"disagree: edited or renamed by hand?); remove it to resume from an earlier one, or "
                            f"use another --checkpoint-dir")


def _refuse_other_validation(where, meta, validation, read=True):
    """Refuse a checkpoint validated on other data than this run's ``validation`` (its fingerprint, None: none), or,
    before it is read (``read=False``), one written with validation data where ``validation`` is falsy (this run has
    none) or without where it is truthy."""
    if "validation" not in meta:  # (absent in checkpoints written before it was recorded)
        return
    written = meta["validation"]
    if _same_validation(meta, validation) if read else bool(written) == bool(validation):
        return
    what = ("was written without validation data" if not written else
            "was validated on validation data this run lacks" if not validation else
            "was validated on other validation data than this run's")
    raise FastTextError(f"checkpoint {where} {what}: its history's val_loss and val_accuracy would go on with "
                        f"two validation sets mixed; rerun with the --validation it was written with, or use "
                        f"another --checkpoint-dir or remove it")


def _check_meta(where, meta):
    """The fields of a checkpoint.json that a resume compares or goes on with must have the types this library
    writes: edited by hand, they were an AttributeError / TypeError traceback (storage.Damaged: "cannot resume")."""
    kinds = {"labels": list, "config": dict, "history": list}
    for key, kind in kinds.items():
        if not isinstance(meta.get(key), kind) or (key == "history" and not all(isinstance(r, dict) for r in meta[key])):
            what = "a list of objects" if key == "history" else "an object" if kind is dict else "a list"
            raise storage.Damaged(f"{where}: {CHECKPOINT_MARKER}'s {key!r} is not {what} (edited by hand?)")
