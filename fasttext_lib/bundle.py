"""Writing a model bundle: a :class:`~fasttext_lib.train.TrainedModel` published as its files and config.json.

The layout, the names and the format version both sides share are in bundle_format.py; reading a bundle back is
bundle_read.py. Besides :func:`save_bundle` (and :func:`publish_bundle`, which packaging.py republishes a job's
model with), this is what a run checks before training so that its bundle can be saved (:func:`check_output`,
:func:`refuse_checkpoints_in_output`), the names a published bundle consists of (:func:`stored_names`), the
guard of other outputs against them (:func:`refuse_a_file_of`) and what a bundle a save replaces was
(:func:`saved_before`).

Publishing replaces ``config.json`` in one step, so a reader sees the whole old bundle or the whole
new one (see storage/sets.py for the guarantees on failures and kills). A format-1 bundle at the destination is
not replaced: training to its directory is refused up front (remove it or choose another ``--output``).
"""
import contextlib
import datetime
import json
import math
import os
import unicodedata

import numpy as np

from . import __version__, storage
from .bundle_format import (CONFIG, DATA_FILES, FORM_RECORD, FORMAT_VERSION, METRICS, NORMALIZATION, PARAMS, SCORED_AS,
                            UNICODE_DATA_VERSION, UNICODE_NORMALIZATION, VOCAB, older_format)
from .errors import FastTextError, refuse_standard_output
from .stops import note_what_a_stop_left
from .text import AS_WRITTEN


def json_safe(value):
    """A history value as strict JSON holds it: numpy scalars as Python numbers, NaN (no validation split) as null."""
    if isinstance(value, (np.floating, np.integer)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def metrics_summary(trained, compact=None):
    """``{"history": [...], "final": {...}, "ctx": [...]}`` of a TrainedModel, JSON-safe (NaN -> null).

    The bundle's ``metrics.json``; the SageMaker entry point adds a few keys to it for its output. ``compact``: the
    dtype the bundle stores its embedding rows as; a lossy one adds ``"scored_as": "float32"`` (:data:`SCORED_AS`) at
    the top (the history's scores) and in the autotune record (its trials' and best's)."""
    from .compact import LOSSY

    history = [{k: json_safe(v) for k, v in row.items()} for row in trained.history]
    summary = {"history": history, "final": history[-1] if history else {}, "ctx": [str(c) for c in trained.ctx]}
    if getattr(trained, "autotune", None):  # autotune.py: {"trials": [...], "best": {...}, ...}
        summary["autotune"] = json.loads(json.dumps(trained.autotune, default=json_safe), parse_constant=lambda c: None)
    if compact in LOSSY:
        summary[SCORED_AS] = "float32"
        if "autotune" in summary:
            summary["autotune"][SCORED_AS] = "float32"
    return summary


def stored_names(config):
    """The names a published bundle consists of: ``config.json`` and each data file's stored name."""
    return [CONFIG] + sorted(entry["object"] for entry in config["files"].values())


def refuse_a_file_of(uri, location, names, instead):
    """An output ``uri`` must not be a file of the bundle at ``location`` (``names``: its
    :func:`stored_names`): written over its config.json or params it destroys the model it was made
    from. ``instead``: what to do."""
    for name in list(names) + [storage.LOCK_NAME]:
        if storage.same_location(uri, storage.join(location, name)):
            raise FastTextError(f"{uri} is a file of the model bundle {location}; {instead}")


@contextlib.contextmanager
def _explaining_an_older_bundle(dest, hint):
    """storage refuses a destination it did not write; when that is a format-1 bundle, say so, and the way out of
    ``hint`` (the caller's: :data:`SAVE_HINT`, the command line's :data:`OVERWRITE_HINT`) that is one here: not to
    replace it (this version does not), the other place after its ``, or``."""
    try:
        yield
    except FastTextError as exc:
        older = "not written by this library" in str(exc) and older_format(dest)
        if older:
            elsewhere = hint.rpartition(", or ")[2] or "choose another destination"
            raise FastTextError(f"refusing to write to {dest}: {older}; remove it or {elsewhere}") from None
        raise


# What a refusal of a bundle already at the destination says to do, as the caller gives it: the Python API's
# arguments (SAVE_HINT, below: notebook 02 saves through it), the command line's flags.
OVERWRITE_HINT = "pass --overwrite to replace it, or choose another --output"


def check_output(dest, overwrite=True, hint=None):
    """Fail fast, before training: ``dest`` must be writable and new, empty, or a bundle of ours;
    ``overwrite=False``: not a bundle either (``hint``: what to do instead, in the message; None:
    :data:`SAVE_HINT`, the Python API's). Where S3 cannot tell (no s3:ListBucket: 403 for a missing key too) the
    save itself refuses one (``save_bundle(..., overwrite=False)``, a conditional PUT)."""
    hint = hint or SAVE_HINT
    with _explaining_an_older_bundle(dest, hint):
        storage.check_writable(dest, CONFIG)
    if not overwrite and storage.would_replace(storage.join(str(dest), CONFIG)):
        raise FastTextError(f"{dest} already holds a model bundle; {hint}")


def refuse_checkpoints_in_output(checkpoint_dir, dest, checkpoint_what, dest_what):
    """Before training: checkpoints must not go into the bundle's directory (or a folder inside it). The
    bundle refuses the epoch-NNNN/ folders (or the folder) it finds there, so every epoch was trained and
    then nothing was saved (a training job's checkpoint_dir = SM_MODEL_DIR or under it; train's
    --checkpoint-dir OUT/ckpt)."""
    if storage.within(checkpoint_dir, dest):
        raise FastTextError(f"{checkpoint_what} {checkpoint_dir} is the {dest_what} directory or inside it, where the "
                            f"bundle goes; give the checkpoints a directory of their own")
    # Another run's bundle given as the checkpoints' folder got epoch-NNNN/ folders written among its files.
    if _holds_a_bundle(checkpoint_dir):
        raise FastTextError(f"{checkpoint_what} {checkpoint_dir} holds a model bundle ({CONFIG}); give the checkpoints a "
                            f"directory of their own")
    # The other way round, a bundle named as an epoch's checkpoint (--output ck/epoch-0003 --checkpoint-dir ck) was
    # saved, and the next run that read those checkpoints stopped at that epoch: "holds files this library did not
    # write (config.json)".
    if storage.within(dest, checkpoint_dir):
        inside = (str(dest).rstrip("/")[len(str(checkpoint_dir).rstrip("/")) + 1:].split("/")[0] if storage.is_s3(dest)
                  else os.path.relpath(os.path.realpath(dest), os.path.realpath(checkpoint_dir)).split(os.sep)[0])
        if inside.startswith("epoch-") and inside[6:].isdigit():
            raise FastTextError(f"{dest_what} {dest} would be the checkpoint folder {inside} of {checkpoint_what} "
                                f"{checkpoint_dir}; give the bundle a place of its own")


def _holds_a_bundle(folder):
    """Whether ``folder`` (local or ``s3://``) holds a bundle this library wrote: a ``config.json`` with the sets'
    marker (another tool's config.json, in a project folder given as ``--checkpoint-dir .``, is none)."""
    where = storage.join(str(folder), CONFIG)
    try:
        if not storage.exists(where, forbidden_is_missing=True):
            return False
        manifest = json.loads(storage.read_bytes(where))
    except (FastTextError, ValueError):  # unreadable, or no JSON: not one of ours
        return False
    return isinstance(manifest, dict) and manifest.get(storage.sets.MARKER_KEY) == storage.sets.MARKER


def saved_before(dest):
    """The bundle at ``dest`` (a local folder or ``s3://``) as a save that replaces it names it, from its config.json:
    when it was saved (that file's last write: the save's commit) and its training's epochs and word n-grams, as
    ``"saved 2025-06-01 14:03 UTC: 5 epochs, 2-grams"``, its time alone where config.json cannot be read. None where
    no bundle is there, or S3 will not say whether one is (403 without s3:ListBucket). Asked before the save, which
    replaces that config.json: nothing of this is written anywhere, so a failure to read it is no error."""
    try:
        when = storage.modified_at(storage.join(str(dest), CONFIG))  # (None: nothing there)
    except FastTextError:  # (S3 failing to answer: the save that follows says so, if it fails too)
        return None
    if when is None:
        return None
    saved = f"saved {when.astimezone(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC"
    try:
        config = storage.read_manifest(str(dest), CONFIG)  # (a dict: refused otherwise)
    except FastTextError:
        return saved
    settings = config.get("train_config") if isinstance(config.get("train_config"), dict) else {}
    epochs, ngrams = settings.get("epochs"), config.get("ngrams")
    trained = ", ".join(([f"{epochs} epoch{'s' * (epochs != 1)}"] if isinstance(epochs, int) else [])
                        + ([f"{ngrams}-grams"] if isinstance(ngrams, int) else []))
    return f"{saved}: {trained}" if trained else saved


SAVE_HINT = "save with overwrite=True to replace it, or choose another destination"


def publish_bundle(dest, config, paths, move=False, overwrite=True, hint=SAVE_HINT, on_commit=None,
                   on_undecided=None):
    """Publish data files ``paths`` (logical name -> local path) with ``config`` as the manifest
    (``move``: they are temporaries, see storage.publish; ``overwrite=False``: never replace a bundle,
    ``hint``: what the refusal suggests; ``on_commit``: called with where the bundle is, what this returns, the
    moment its config.json is in place; ``on_undecided``: storage.publish's, config.json's PUT abandoned unanswered;
    None: a stop, or the error of a read timeout, then says that S3 may still put the bundle in place
    (:func:`undecided_line`), where the CLI's train, the Python API's save_bundle said "stopped and cleaned up", or
    only that the save failed)."""
    refuse_standard_output(dest, "dest", "the bundle", "a directory")
    where = str(dest) if storage.is_s3(dest) else os.path.abspath(dest)  # (as storage.publish returns it)
    undecided = []
    try:
        with _explaining_an_older_bundle(dest, hint):
            return storage.publish(str(dest), paths, CONFIG, config, move=move, overwrite=overwrite, hint=hint,
                                   on_commit=on_commit and (lambda: on_commit(where)),
                                   on_undecided=on_undecided or (lambda: undecided.append(where)))
    except KeyboardInterrupt as stop:
        if undecided:
            note_what_a_stop_left(stop, undecided_line(where, overwrite, hint))
        raise
    except FastTextError as failed:  # (a read timeout: S3 may apply the PUT it had not answered, as after a stop)
        if undecided:
            raise FastTextError(f"{failed}; {undecided_line(where, overwrite, hint)}") from None
        raise


def undecided_line(where, overwrite=True, hint=SAVE_HINT):
    """What a stop left where it abandoned the PUT of a bundle's config.json to ``where`` before S3 answered it: S3 may
    still apply it after the stop (publish_bundle's ``on_undecided``). Without ``overwrite`` a bundle there refuses
    the next save, which ``hint`` says what to do about."""
    unanswered = "S3 had not answered the PUT of its config.json"
    if overwrite:
        return f"{where} may still be replaced by this save ({unanswered})"
    return f"a bundle may still be created at {where} by this save ({unanswered}): if one is there, {hint}"


def check_trained_model(trained, what="save_bundle"):
    """Refuse, in one line saying what to pass, anything but the model ``train(...)`` returns (a TrainedModel).

    What a user has at hand instead failed deep inside the save in an AttributeError: the AutotuneResult itself
    (its model is ``.trained``), or a loaded bundle (a Predictor, which has no training config or history to save).
    Checked by the fields a save reads, not by type, as bundle.py imports no training code."""
    if all(hasattr(trained, name) for name in ("model", "featurizer", "labels", "history", "ctx")) and \
            hasattr(getattr(trained, "config", None), "seed"):
        return
    got = "None" if trained is None else f"a {type(trained).__name__}"
    if hasattr(trained, "trained") and hasattr(trained, "best_config"):
        instead = f"the search's model is its .trained: {what}(result.trained, ...)"
    elif hasattr(trained, "predict_proba"):
        instead = ("a loaded bundle is saved already: copy its folder (or s3:// prefix) whole to move it, or train "
                   "again to save another way (compact=...)")
    else:
        instead = "pass the model train(...) or autotune(...).trained returns"
    raise FastTextError(f"{what} saves a TrainedModel, got {got}: {instead}")


def save_bundle(trained, dest, compact="auto", overwrite=True, hint=SAVE_HINT, data=None, on_commit=None,
                compact_as=None, on_undecided=None, keep_beside=False, taken_beside=None):
    """Write a :class:`~fasttext_lib.train.TrainedModel` to ``dest``; returns the bundle's location.

    ``overwrite=True`` (the default): a bundle of ours already at ``dest`` is replaced (its files
    deleted once the new config.json is in place); ``False``: it is refused (one-line FastTextError ending in
    ``hint``, also for a bundle a concurrent save commits first), and nothing of this save is left behind.
    ``keep_beside=True`` (with ``overwrite=False``): the bundle there is kept and this model is saved beside it
    instead, at the first free ``<dest>.N``; a one-line :class:`BundleKept` (a FastTextError) names where. The
    command line asks for that: it refuses a bundle already at ``--output`` before any data is read, so one found
    here was saved by another run while this one trained, and a refusal would throw that training away (a script
    still holds ``trained`` and can save it elsewhere, so it is not done unasked). ``taken_beside``: a file that pairs
    with the bundle at ``dest`` found written by another run meanwhile (save_bundle_with_trials' trial table): the
    model is kept beside ``dest`` even where ``dest`` is free (that run's bundle is on its way there, to pair with it).

    ``compact="float32"`` (exact), ``"float16"``, ``"int8"`` or ``"int4"`` (quantized per row, lossy): store only
    the embedding rows training changed (compact.py); config.json's ``compact`` entry says so and Predictor.load
    rebuilds the rest.
    ``"auto"`` (the default): float32 when at most a quarter of the rows changed (small data: a
    bigram model of a few thousand sentences is ~12 MB instead of 800), else the full table;
    ``None`` or ``"none"``: always the full table. ``compact_as``: how a refusal of that choice names it (None: this
    argument, ``compact='float16'``; the command line passes its flag, compact.COMPACT_FLAG).

    ``data``: a JSON-able record of the data trained on, stored as metrics.json's ``"data"`` (notebook 02's test
    split: provenance.data_record, which 04 checks).

    ``on_commit``: called with the bundle's location (what this returns) the moment its config.json is in place,
    before the staging folder is removed: a caller telling a stop that the bundle is written is told it from there on
    (a stop in between, told as one before the save, had the user run again a command --output then refused).
    ``on_undecided``: called (no arguments) on S3 where a stop (or a read timeout) abandoned config.json's PUT before
    S3 answered: the new bundle may still be put in place after the stop (storage.publish's)."""
    from . import compact as compacting

    dest = storage.expand_home(dest)  # ("~/model": the home folder's, as a shell reads it)
    refuse_standard_output(dest, "dest", "the bundle", "a directory")  # (before the table is compacted)
    check_trained_model(trained)
    compacting.check_choice(compact)

    compact, changed = compacting.choose(trained.model, trained.config.seed, compact)
    model, featurizer = trained.model, trained.featurizer
    config = {
        "format_version": FORMAT_VERSION,
        "library_version": __version__,
        "labels": list(trained.labels),
        "label_names": dict(getattr(trained, "label_names", None) or {}),
        "num_classes": model.num_classes,
        "emsize": model.emsize,
        "num_rows": model.num_rows,
        "vocab_size": featurizer.vocab_size,
        "ngrams": featurizer.ngrams,
        "buckets": featurizer.buckets,
        "dropout": trained.config.dropout,
        "normalization": NORMALIZATION,
        "train_config": trained.config.to_dict(),
    }
    unicode_form = getattr(featurizer, "unicode_form", UNICODE_NORMALIZATION)
    if unicode_form is not AS_WRITTEN:
        config["unicode_normalization"] = unicode_form
    config[UNICODE_DATA_VERSION] = unicodedata.unidata_version
    if getattr(trained, "pretrained", None):  # pretrained.describe: the .vec file the table started from
        config["pretrained_vectors"] = dict(trained.pretrained)
        # and train_config names it so too: as given (v/w.vec) it named nothing once the bundle was elsewhere
        config["train_config"]["pretrained_vectors"] = trained.pretrained["file"]
    metrics = metrics_summary(trained, compact)
    if data is not None:
        metrics["data"] = data
    with storage.staging_dir() as tmp:
        paths = {name: os.path.join(tmp, name) for name in DATA_FILES}
        if compact:
            config["compact"] = compacting.save(model, trained.config.seed, tmp, PARAMS, dtype=compact, rows=changed,
                                                said_as=compact_as or compacting.COMPACT_ARGUMENT)
            paths[config["compact"]["file"]] = os.path.join(tmp, config["compact"]["file"])
        else:
            model.save_parameters(paths[PARAMS])
        with open(paths[VOCAB], "w") as f:
            f.write(vocabulary_json(featurizer))
        with open(paths[METRICS], "w") as f:
            json.dump(metrics, f, indent=2)

        def publish(where, overwrite):  # (staged here, removed on the way out)
            return publish_bundle(where, config, paths, move=True, overwrite=overwrite, hint=hint, on_commit=on_commit,
                                  on_undecided=on_undecided)

        try:
            if keep_beside and taken_beside is not None:
                raise storage.already_exists(taken_beside, hint)
            return publish(dest, overwrite)
        except storage.AlreadyExists as refused:  # (only without overwrite: a bundle there, or committed meanwhile)
            if overwrite or not keep_beside:
                raise
            raise _kept_beside(dest, publish, refused, taken_beside) from None


class BundleKept(storage.AlreadyExists):
    """save_bundle(overwrite=False, keep_beside=True) found a bundle at ``dest`` (another run's, saved there while this
    one trained: the command line checked before), or a trial table ``taken`` that pairs with it
    (save_bundle_with_trials), and kept this model at ``kept``, a free name beside it: refused, it was lost with the
    staging folder, and the training time with it. Still an error: ``dest`` was not written."""

    def __init__(self, dest, kept, taken=None):
        # (taken: what pairs with dest, a trial table another run wrote meanwhile; None: the bundle at dest)
        self.dest, self.kept, self.taken = dest, kept, taken
        self.trials = "" if taken is None else ", its trials in its metrics.json (autotune)"
        found = f"{dest} already holds a model bundle" if taken is None else f"{taken} already holds a trial table"
        super().__init__(f"{found}, which is kept; this model is saved as {kept} instead{self.trials}")


MAX_SIBLINGS = 100  # the names beside a taken destination tried for its model (<dest>.1 ... <dest>.100)


def _kept_beside(dest, publish, refused, taken=None):
    """The error of a save to ``dest`` that another bundle took (``refused``: the publish's AlreadyExists; or the file
    ``taken`` that pairs with it), the model published (``publish(where, overwrite)``) at the first free ``<dest>.N``:
    a :class:`BundleKept`, or, where that fails too, one line saying both. Never in place of anything: a name taken,
    even meanwhile, is passed by."""
    for sibling in _siblings(dest):
        try:
            if storage.is_taken(sibling):
                continue
            return BundleKept(dest, publish(sibling, False), taken)
        except storage.AlreadyExists:  # (taken since the look: another run's again)
            continue
        except FastTextError as failed:
            return FastTextError(f"{refused}; keeping this model as {sibling} failed too: {failed}")
    return FastTextError(f"{refused}; and every name beside it this model could be kept as ({_siblings(dest)[0]} to "
                         f"{_siblings(dest)[-1]}) is taken")


def _siblings(dest):
    """The names beside ``dest`` a model it could not be saved to is kept as: ``<dest>.1``, ``<dest>.2``, ... (the
    absolute path of a local one, as a save returns it); under a bucket's top, ``s3://bucket/bundle.1`` and on."""
    dest = str(dest)
    if storage.is_s3(dest):
        base = dest.rstrip("/") if storage.split_s3(dest)[1].strip("/") else storage.join(dest, "bundle")
    else:
        base = os.path.abspath(dest)
    return [f"{base}.{n}" for n in range(1, MAX_SIBLINGS + 1)]


def vocabulary_json(featurizer):
    """vocab.json's text: GluonNLP's vocabulary of ``featurizer``, and, last, the rule its tokens were made with."""
    text = featurizer.vocab.to_json()
    form = getattr(featurizer, "unicode_form", UNICODE_NORMALIZATION)
    return f"{text.rstrip()[:-1]}, {json.dumps(FORM_RECORD)}: {json.dumps(form)}}}"

