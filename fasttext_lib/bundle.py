"""Model bundles: everything needed to rebuild a trained model and its preprocessing.

A bundle is a set published by :func:`fasttext_lib.storage.publish` (a directory or an ``s3://``
prefix) with ``config.json`` as its manifest::

    config.json                      format version, labels, label names ({raw label: name} when
                                     known, label_names.py), model shape, n-gram settings,
                                     normalization, the training config (and "pretrained_vectors":
                                     the .vec file the table started from), and "files": the stored
                                     name, size and sha256 of each file below (written last)
    model-<publish id>.params        the Gluon parameters (``save_parameters``)
    vocab-<publish id>.json          the GluonNLP vocabulary
    metrics-<publish id>.json        ``{"history": [per-epoch rows], "final": {...}, "ctx": ...}``
                                     (and ``"autotune"``: its trials and chosen setting; ``"data"``: what
                                     ``save_bundle(data=)`` was given, notebook 02's test split)
    embedding_rows-<id>.npz          compact bundles only (``train --compact``, compact.py): the
                                     embedding rows training changed; model.params then holds only
                                     the output layer and the other rows are rebuilt from the seed

Publishing replaces ``config.json`` in one step, so a reader sees the whole old bundle or the whole
new one, and loading verifies every file's size and checksum: a truncated ``model.params`` or one
from another run is named as such (see storage/sets.py for the guarantees on failures and kills).

Format 2 (this layout). ``"label_names"`` came later within format 2: a bundle without it shows
its raw labels, and readers that predate it ignore it. Format 1 bundles (plain file names; their ``config.json`` has no
``"written_by"`` marker) are neither read nor replaced: loading one says to
retrain, and training to its directory is refused up front (remove it or choose another
``--output``). A format-1 reader refuses a format-2 bundle by its version number.

Saving is :func:`save_bundle`; reading is :func:`load_bundle_files` (the verified files and the checked config.json)
then :func:`read_bundle_contents` (the vocabulary, metrics and parameters parsed and checked against it), which
predict.py's :class:`~fasttext_lib.predict.Predictor` scores with.
"""
import contextlib
import json
import math
import os
import re
import unicodedata
from typing import NamedTuple, Optional

import numpy as np

from . import __version__, storage
from .errors import FastTextError, is_number, lone_surrogate_message, reason_of
from .label_names import check_name, for_labels
from .text import AS_WRITTEN, TRAINING_FORM, UNICODE_FORMS

FORMAT_VERSION = 2
NORMALIZATION = "fasttext-classification-example"
# config.json's "unicode_normalization": how the bundle's text was put in NFC (text.UNICODE_FORMS), read so by
# features.Featurizer's unicode_form: "NFC-tokens-quotes-br-fixpoint" (text.FORMED_BREAKS) written now;
# "NFC-tokens-quotes-br" (text.QUOTES_AND_BREAKS) by the versions that applied the rules once (a <br /> they formed,
# as <br\t/> once squeezed, stayed in words); "NFC-tokens" (text.NFC_TOKENS) by those before, which read typographic
# quotes (don’t, “great”) and <br>, <br/> as parts of words;
# "NFC" (text.NFC_FIRST) by those that put text in NFC before lowercasing only; none by those before NFC
# (text.AS_WRITTEN): their words spelled with combining accents, or out of NFC once lowercased, were trained on as such.
UNICODE_NORMALIZATION = TRAINING_FORM
READ_UNICODE_NORMALIZATIONS = tuple(form for form in UNICODE_FORMS if form is not AS_WRITTEN)  # (the newest last)
# config.json's "unicode_data_version": the Unicode data (unicodedata.unidata_version) of the Python that trained
# the bundle. Lowercasing and NFC follow it: another version knows characters that one did not (their case and
# composition unknown to it) or does not know some it did, so words outside ASCII may be read otherwise than in
# training (unicode_data_note). Absent in bundles written before it was recorded.
UNICODE_DATA_VERSION = "unicode_data_version"
CONFIG, PARAMS, VOCAB, METRICS = "config.json", "model.params", "vocab.json", "metrics.json"
DATA_FILES = (PARAMS, VOCAB, METRICS)  # logical names; config.json is the manifest that lists them


def json_safe(value):
    """A history value as strict JSON holds it: numpy scalars as Python numbers, NaN (no validation split) as null."""
    if isinstance(value, (np.floating, np.integer)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# metrics.json's mark of scores that are not the bundle's: every score was taken of the float32 model training had,
# and a bundle saved with a lossy compact (compact.LOSSY) stores rounded rows. A field beside them, not new names: the
# readers of val_accuracy (held_out_score, notebooks, scripts) keep reading it (the trial table renames its columns:
# autotune.FLOAT32_SCORES).
SCORED_AS = "scored_as"


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


class HeldOutScore(NamedTuple):
    """The held-out accuracy a bundle's training recorded at its last epoch (:func:`held_out_score`)."""

    split: str  # "validation": an autotuned model's, on the search's split of the training data; "test": 02's test split
    accuracy: Optional[float]  # None: trained without validation data (or autotune's refit on training + validation)
    scored_as: Optional[str] = None  # "float32": the model training had, not the bundle's lossy rows (metrics_summary)

    def describe(self):
        """``final held-out accuracy at training: 0.7936``, as notebook 04 (and 02's training job) show it: on the
        validation data training was given (02's test split; the CLI's --validation), which the bundle does not name."""
        if self.accuracy is None:
            return "no held-out accuracy at training (trained without validation data)"
        split = "validation (autotune's split of the training data)" if self.split == "validation" else "held-out"
        whose = (f" (the {self.scored_as} model's: this bundle's embedding rows are stored lossy; evaluate scores it "
                 f"as saved)") if self.scored_as else ""
        return f"final {split} accuracy at training: {round(self.accuracy, 4)}{whose}"


def held_out_score(metrics):
    """The :class:`HeldOutScore` of a bundle's ``metrics.json`` (:func:`metrics_summary`): its last epoch's
    ``val_accuracy``, and the split it was measured on. Notebook 02 validates on the test split, except with autotune:
    the chosen trial's model is validated on the search's split of the training data (an autotune record in the
    metrics), and whose model it scored where that is not the bundle's (``"scored_as"``: a lossy compact bundle).
    ``Predictor.held_out_score`` and ``TrainedModel.held_out_score`` give it."""
    metrics = metrics if isinstance(metrics, dict) else {}
    final = metrics.get("final") if isinstance(metrics.get("final"), dict) else {}
    scored_as = metrics.get(SCORED_AS) if isinstance(metrics.get(SCORED_AS), str) else None
    return HeldOutScore("validation" if metrics.get("autotune") else "test", final.get("val_accuracy"), scored_as)


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


def _older_format(src):
    """A one-line error if ``src`` holds a format-1 bundle (no marker), else ``None``."""
    try:
        with storage.open_read(storage.join(str(src), CONFIG), "rb") as f:
            old = json.loads(f.read())
    except (FastTextError, ValueError):
        return None
    if isinstance(old, dict) and storage.MARKER_KEY not in old and "format_version" in old:
        return (f"{src} holds a model bundle in the older format {old['format_version']!r}, which this version "
                f"(format {FORMAT_VERSION}) neither reads nor replaces")
    return None


@contextlib.contextmanager
def _explaining_an_older_bundle(dest):
    """storage refuses a destination it did not write; when that is a format-1 bundle, say so."""
    try:
        yield
    except FastTextError as exc:
        older = "not written by this library" in str(exc) and _older_format(dest)
        if older:
            raise FastTextError(f"refusing to write to {dest}: {older}; remove it or choose another --output") from None
        raise


OVERWRITE_HINT = "pass --overwrite to replace it, or choose another --output"


def check_output(dest, overwrite=True, hint=OVERWRITE_HINT):
    """Fail fast, before training: ``dest`` must be writable and new, empty, or a bundle of ours;
    ``overwrite=False``: not a bundle either (``hint``: what to do instead, in the message). Where S3
    cannot tell (no s3:ListBucket: 403 for a missing key too) the save itself refuses one
    (``save_bundle(..., overwrite=False)``, a conditional PUT)."""
    with _explaining_an_older_bundle(dest):
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


SAVE_HINT = "save with overwrite=True to replace it, or choose another destination"


def publish_bundle(dest, config, paths, move=False, overwrite=True, hint=SAVE_HINT):
    """Publish data files ``paths`` (logical name -> local path) with ``config`` as the manifest
    (``move``: they are temporaries, see storage.publish; ``overwrite=False``: never replace a bundle,
    ``hint``: what the refusal suggests)."""
    with _explaining_an_older_bundle(dest):
        return storage.publish(str(dest), paths, CONFIG, config, move=move, overwrite=overwrite, hint=hint)


def save_bundle(trained, dest, compact="auto", overwrite=True, hint=SAVE_HINT, data=None):
    """Write a :class:`~fasttext_lib.train.TrainedModel` to ``dest``; returns the bundle's location.

    ``overwrite=True`` (the default): a bundle of ours already at ``dest`` is replaced (its files
    deleted once the new config.json is in place); ``False``: it is refused (one-line FastTextError
    ending in ``hint``, also for a bundle a concurrent save commits first), and nothing of this save is
    left behind. ``python -m fasttext_lib train`` refuses unless given ``--overwrite``.

    ``compact="float32"`` (exact), ``"float16"``, ``"int8"`` or ``"int4"`` (quantized per row, lossy): store only
    the embedding rows training changed (compact.py); config.json's ``compact`` entry says so and Predictor.load
    rebuilds the rest.
    ``"auto"`` (the default): float32 when at most a quarter of the rows changed (small data: a
    bigram model of a few thousand sentences is ~12 MB instead of 800), else the full table;
    ``None`` or ``"none"``: always the full table.

    ``data``: a JSON-able record of the data trained on, stored as metrics.json's ``"data"`` (notebook 02's test
    split: workspace.data_record, which 04 checks)."""
    from . import compact as compacting

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
    if getattr(trained, "pretrained", None):  # vectors.describe: the .vec file the table started from
        config["pretrained_vectors"] = dict(trained.pretrained)
    metrics = metrics_summary(trained, compact)
    if data is not None:
        metrics["data"] = data
    with storage.staging_dir() as tmp:
        paths = {name: os.path.join(tmp, name) for name in DATA_FILES}
        if compact:
            config["compact"] = compacting.save(model, trained.config.seed, tmp, PARAMS, dtype=compact, rows=changed)
            paths[config["compact"]["file"]] = os.path.join(tmp, config["compact"]["file"])
        else:
            model.save_parameters(paths[PARAMS])
        with open(paths[VOCAB], "w") as f:
            f.write(vocabulary_json(featurizer))
        with open(paths[METRICS], "w") as f:
            json.dump(metrics, f, indent=2)
        return publish_bundle(dest, config, paths, move=True, overwrite=overwrite, hint=hint)  # staged here, removed on the way out


# vocab.json's record of the rule its tokens were made with (the featurizer's unicode_form; null: text.AS_WRITTEN),
# after GluonNLP's keys (its from_json ignores others). The file is checksummed in config.json, so the record tells
# an edited config.json "unicode_normalization" (Predictor reads text by that, the model learned the record's tokens).
FORM_RECORD = "unicode_normalization"
_FORM_RECORD_AT_END = re.compile(r', "unicode_normalization": ("[A-Za-z-]*"|null)\}\s*$')


def vocabulary_json(featurizer):
    """vocab.json's text: GluonNLP's vocabulary of ``featurizer``, and, last, the rule its tokens were made with."""
    text = featurizer.vocab.to_json()
    form = getattr(featurizer, "unicode_form", UNICODE_NORMALIZATION)
    return f"{text.rstrip()[:-1]}, {json.dumps(FORM_RECORD)}: {json.dumps(form)}}}"


def recorded_form(vocab_text):
    """``(True, form)``: the rule vocab.json's text records (the last key: found without parsing the file again, 0.6 s
    a million tokens); ``(False, None)``: a vocabulary written before the record."""
    found = _FORM_RECORD_AT_END.search(vocab_text[-200:])
    return (True, json.loads(found.group(1))) if found else (False, None)


def check_form(src, config, vocab_text):
    """Refuse a config.json ``unicode_normalization`` that is not the rule vocab.json records (when it does)."""
    recorded, form = recorded_form(vocab_text)
    written = config.get("unicode_normalization", AS_WRITTEN)
    if recorded and written != form:
        def said(value):
            return "none" if value is AS_WRITTEN else value

        raise FastTextError(f"corrupt model bundle {src}: config.json's 'unicode_normalization' is {said(written)} but "
                            f"the vocabulary was made with {said(form)} ({VOCAB}'s record): it would read text otherwise "
                            f"than in training; put back {json.dumps(form) if form else 'no such entry'}, or retrain")


def _not_a_bundle(src, exc):
    text = str(exc)
    if "its manifest lists no" in text:
        return FastTextError(f"incomplete model bundle: {text}")
    if text.endswith(f"has no {CONFIG}"):
        return FastTextError(f"not a model bundle: {text}{_where_the_bundle_is(src)}")
    if "is not valid JSON" in text or "is malformed" in text:
        return FastTextError(f"not a model bundle: {text}")
    if "not written by this library" in text:
        older = _older_format(src)
        if older:
            return FastTextError(f"{older}: retrain it with this version")
        return FastTextError(f"not a model bundle: {text}")
    if not storage.is_s3(src) and text.endswith(("does not exist", "is not a directory")):
        return FastTextError(f"model bundle not found: {text}")
    return exc  # the real cause (no such bucket, no credentials, endpoint down, ...) as storage said it


ARCHIVE_ENDINGS = (".tar.gz", ".tgz", ".tar")


def _where_the_bundle_is(src, depth=2):
    """What a local folder without config.json holds instead, said after its error: an endpoint's model directory
    is what SageMaker extracted from model.tar.gz, and an archive packed from the bundle's folder
    (``tar czf model.tar.gz model/``), holding two bundles, or holding the bundle's own archive left the endpoint's
    log with only "has no config.json". Folders ``depth`` deep are looked at (``code/`` is the served code)."""
    if storage.is_s3(src):
        return _where_the_bundle_is_on_s3(src)
    if not os.path.isdir(src):
        return ""
    archives, bundles = [], []
    folders = [(src, 0)]
    while folders and len(folders) < 1000:  # (a model directory is small; a wrong --model may be a big tree)
        folder, level = folders.pop(0)
        with contextlib.suppress(OSError):
            for entry in sorted(os.scandir(folder), key=lambda e: e.name):
                where = os.path.relpath(entry.path, src)
                if level == 0 and entry.name.endswith(ARCHIVE_ENDINGS) and entry.is_file():
                    archives.append(where)
                elif entry.is_dir() and not (level == 0 and entry.name == "code"):
                    if os.path.isfile(os.path.join(entry.path, CONFIG)):
                        bundles.append(where)
                    elif level + 1 < depth:
                        folders.append((entry.path, level + 1))
    if len(bundles) == 1:
        return (f"; it holds a bundle in {bundles[0]}/, not at its top: pack the bundle's files at the top of "
                f"model.tar.gz (packaging.pack_model does), or load {os.path.join(src, bundles[0])}")
    if bundles:
        return (f"; it holds {len(bundles)} bundles, in {_folders_shown(bundles)}, none at its top: a model directory "
                f"is one bundle, its files at the top")
    if archives:
        return (f"; it holds {', '.join(archives[:3])}, not extracted (an archive packed inside the model archive?): "
                f"extract it there, or pack the bundle's own files")
    return ""


def _folders_shown(folders):
    """``a/ and b/ and 3 more``: the first two of ``folders`` (the bundles a hint names), and how many others."""
    return " and ".join(f"{f}/" for f in folders[:2]) + (f" and {len(folders) - 2} more" if len(folders) > 2 else "")


def _where_the_bundle_is_on_s3(src, most=20):
    """An S3 prefix without config.json: the bundle in a folder one level down, said after the error (``--model
    s3://b/models`` for a bundle in ``models/m1/``), as :func:`_where_the_bundle_is` says it of a local folder. Needs
    s3:ListBucket; without it, or anything else failing, nothing is said (the error stands alone, as before). At most
    ``most`` folders are looked in (one HEAD each)."""
    bucket, key = storage.split_s3(src)
    prefix = key.rstrip("/") + "/" if key.strip("/") else ""
    try:
        client = storage.s3_client()
        if key.strip("/") and storage.exists(f"s3://{bucket}/{key.rstrip('/')}", forbidden_is_missing=True):
            parent = key.rstrip("/").rpartition("/")[0]
            return (f"; s3://{bucket}/{key.rstrip('/')} is an object, not a bundle's folder: load the folder that "
                    f"holds it, s3://{bucket}/{parent}" if parent else
                    f"; s3://{bucket}/{key.rstrip('/')} is an object, not a bundle's folder")
        listed = client.list_objects_v2(Bucket=bucket, Prefix=prefix, Delimiter="/", MaxKeys=most)
        bundles = []
        for folder in (p["Prefix"] for p in listed.get("CommonPrefixes", [])):
            with contextlib.suppress(Exception):
                client.head_object(Bucket=bucket, Key=folder + CONFIG)
                bundles.append(folder[len(prefix):].rstrip("/"))
    except Exception:  # (no s3:ListBucket, the endpoint gone: the hint is a courtesy)
        return ""
    if len(bundles) == 1:
        return f"; it holds a bundle in {bundles[0]}/: load s3://{bucket}/{prefix}{bundles[0]}"
    if bundles:
        return f"; it holds {len(bundles)} bundles, in {_folders_shown(bundles)}: load one of them"
    return ""


def unicode_data_note(src, config, tokens):
    """One line to show when the bundle at ``src`` was trained under other Unicode data than this Python's
    (:data:`UNICODE_DATA_VERSION`) and its vocabulary (``tokens``) has a word outside ASCII: lowercasing and NFC
    of some characters may differ from training's, so such a word may not be found. None otherwise (ASCII reads
    alike under every version; a bundle that does not record it says nothing)."""
    trained = config.get(UNICODE_DATA_VERSION)
    if trained is None or trained == unicodedata.unidata_version or all(map(str.isascii, tokens)):
        return None
    if not (isinstance(trained, str) and trained.isprintable() and len(trained) <= 20):  # (one line, whatever it holds)
        trained = repr(trained)[:40]
    return (f"note: {src} was trained with Unicode {trained} data and this Python has Unicode "
            f"{unicodedata.unidata_version}: lowercasing and NFC of a few characters outside ASCII may differ from "
            f"training's, so a few of its words may not be found (predictions still work; train and predict with "
            f"the same Python version for identical results)")


def _check_config(src, config):
    version = config.get("format_version")
    if version != FORMAT_VERSION:
        raise FastTextError(f"{src}: bundle format version {version!r} is not supported (this library reads version {FORMAT_VERSION})")
    normalization = config.get("normalization", NORMALIZATION)
    if normalization != NORMALIZATION:
        # the text is normalized before its words are looked up: another scheme's bundle loaded and answered with
        # its words unmatched, silently
        raise FastTextError(f"{src}: the bundle's text normalization is {normalization!r} (written by library version "
                            f"{config.get('library_version')!r}); this library applies {NORMALIZATION!r}: load it with "
                            f"the version that wrote it, or retrain")
    labels = config.get("labels")
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        raise FastTextError(f"not a model bundle: {storage.join(src, CONFIG)} has no list of labels")
    if len(set(labels)) < 2 or len(set(labels)) != len(labels):
        raise FastTextError(f"corrupt model bundle {src}: config.json lists {len(labels)} label(s) "
                            f"({', '.join(map(repr, labels[:5]))}); a classifier has at least 2 distinct labels")
    for key in ("num_classes", "emsize", "num_rows", "vocab_size", "ngrams"):
        if not isinstance(config.get(key), int) or isinstance(config.get(key), bool) or config[key] <= 0:
            raise FastTextError(f"corrupt model bundle {src}: config.json has no valid {key!r}")
    if config["num_classes"] != len(labels):
        raise FastTextError(f"corrupt model bundle {src}: config.json lists {len(labels)} labels for {config['num_classes']} classes")
    buckets = config.get("buckets")  # 0: no n-gram buckets (unigrams)
    if not isinstance(buckets, int) or isinstance(buckets, bool) or buckets < 0:
        raise FastTextError(f"corrupt model bundle {src}: config.json has no valid 'buckets'")
    if config.get("unicode_normalization", UNICODE_NORMALIZATION) not in READ_UNICODE_NORMALIZATIONS:
        # any other value was read as "none" (words spelled with combining accents looked up as such, unmatched)
        raise FastTextError(f"corrupt model bundle {src}: config.json's 'unicode_normalization' is "
                            f"{config['unicode_normalization']!r}; this library writes {UNICODE_NORMALIZATION!r}, and "
                            f"reads {', '.join(map(repr, READ_UNICODE_NORMALIZATIONS[:-1]))} (older versions' bundles) "
                            f"or none")
    _check_against_training(src, config)
    dropout = config.get("dropout") or 0.0  # (training-only, but text or 2 there was taken silently)
    if not is_number(dropout) or not 0 <= dropout < 1:
        raise FastTextError(f"corrupt model bundle {src}: config.json's 'dropout' is {config['dropout']!r}, not a number in [0, 1)")
    _check_compact(src, config)
    names = config.get("label_names") or {}  # absent in bundles written before label names
    if not isinstance(names, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in names.items()):
        raise FastTextError(f"corrupt model bundle {src}: config.json's label_names is not a mapping of labels to names")
    try:
        config["label_names"] = for_labels(names, labels, "label_names", strict=True, stored=True)
        for name in names.values():
            check_name(name, "label_names")
    except FastTextError as exc:
        raise FastTextError(f"corrupt model bundle {src}: config.json's {exc}") from None


def _is_count(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _check_against_training(src, config):
    """config.json's featurization values must be those training used (``train_config``, which ``save_bundle``
    records beside them; the rule is train.train's: no buckets for unigrams). An edited ``ngrams`` fits the parameter
    shapes, so such a bundle loaded and predicted with other features than the model learned, silently; ``buckets``
    and ``emsize`` are caught by the shapes too, but this names the field. Bundles without it are not checked."""
    trained = config.get("train_config")
    if not isinstance(trained, dict) or not _is_count(trained.get("ngrams")):
        return
    expected = {"ngrams": trained["ngrams"], "emsize": trained.get("emsize"),
                "buckets": trained.get("buckets") if trained["ngrams"] > 1 else 0}
    for key, value in expected.items():
        if _is_count(value) and config[key] != value:
            raise FastTextError(f"corrupt model bundle {src}: config.json's {key!r} is {config[key]} but the model was "
                                f"trained with {key} {value} (its 'train_config'): it would predict with other features "
                                f"than it learned; put back {key} {value}, or retrain")


def _check_compact(src, config):
    """A compact bundle's entry (compact.py) must name a storage type and one of the bundle's own files:
    anything else (a string, a list, a path outside the bundle) was a traceback or read an unverified file."""
    from .compact import DTYPES, ROWS_FILE

    entry = config.get("compact")
    if not entry:  # a full bundle (absent in bundles written before compact ones)
        return
    if (not isinstance(entry, dict) or entry.get("dtype") not in DTYPES
            or entry.get("file", ROWS_FILE) not in (config.get("files") or {})):
        raise FastTextError(f"corrupt model bundle {src}: config.json's 'compact' entry is not a storage type "
                            f"({', '.join(DTYPES)}) and a file the bundle lists")


def load_bundle_files(src, local_dir, names=None):
    """Read the bundle at ``src``: its checked config and its data files (verified) in ``local_dir``
    (``names``: these logical names only; ``None``: every file config.json lists).

    Returns ``(config, {logical name: local path})``. Reads the set again if a publisher replaced it
    meanwhile; every failure is one line naming its real cause.
    """
    src = str(src)
    try:
        config, paths = storage.read_set(src, CONFIG, names, local_dir)
    except storage.SetChanged as exc:
        if exc.missing:  # still missing after read_set's retries: deleted or never copied, "try again" would not help
            name, stored = exc.missing
            said = "is missing or S3 refused to read it (403: without s3:ListBucket its answer for a missing object " \
                "too); check that the file is there and readable, or" if exc.refused else \
                "is missing (deleted, or not copied with the bundle);"
            raise FastTextError(f"incomplete model bundle: {src}: {name} ({stored}), which its {CONFIG} lists, {said} "
                                f"copy the whole bundle again or retrain") from None
        raise FastTextError(f"incomplete model bundle: {exc}") from None
    except FastTextError as exc:
        raise _not_a_bundle(src, exc) from None
    _check_config(src, config)
    missing = [name for name in DATA_FILES if name not in paths and (names is None or name in names)]
    if missing:
        raise FastTextError(f"incomplete model bundle: {storage.join(src, CONFIG)} lists no {', '.join(missing)}")
    return config, paths


# ---- Reading a bundle's contents: its data files parsed and checked against config.json ----

# What put inf into a bundle that training had kept finite (compact.save refuses it since).
_FLOAT16_HINT = " (float16 bundles written by older versions stored values beyond 65504 as inf)"


class BundleContents(NamedTuple):
    """A bundle's data files read and checked against its config.json (:func:`read_bundle_contents`)."""

    featurizer: object  # features.Featurizer: the vocabulary and config.json's n-gram settings and text rule
    model: object  # model.FastTextClassifier with its parameters on the device (a compact bundle's table: see stored)
    metrics: dict  # metrics.json (metrics_summary)
    stored: object  # compact.StoredRows of a compact bundle read on the CPU, scored instead of model's table; else None


def read_bundle_contents(src, config, paths, device, advice=""):
    """The :class:`BundleContents` of the bundle ``src`` whose files :func:`load_bundle_files` put at ``paths`` (its
    ``config``), the parameters on ``device``. Every file that does not parse or does not fit config.json is one
    :class:`FastTextError` naming it; inf or NaN parameters are refused (their predictions are garbage); a table the
    machine cannot hold is refused before it is read, in one line that ends with ``advice`` (what to do)."""
    vocab = _read_vocabulary(src, paths[VOCAB], config)
    metrics = _read_metrics(src, paths[METRICS])
    featurizer = _featurizer_of(src, config, vocab)
    model, stored = _read_parameters(src, config, paths, device, advice)
    return BundleContents(featurizer, model, metrics, stored)


def _read_vocabulary(src, path, config):
    """The GluonNLP vocabulary in the bundle's ``vocab.json``, as training wrote it, with ``<unk>`` first: a list,
    or indexes of other types, were an AttributeError / TypeError traceback. (GluonNLP builds it from
    ``token_to_idx`` alone; the file is parsed once: a second parse to compare ``idx_to_token`` with it costs
    0.6 s a million tokens, for a difference only a hand edit makes.) ``config``: config.json's, whose
    ``unicode_normalization`` must be the rule the file records (:func:`check_form`)."""
    import warnings

    import gluonnlp

    from .features import UNK

    where = f"corrupt model bundle {src}: {VOCAB}"
    try:
        with open(path) as f:
            text = f.read()
        with warnings.catch_warnings():  # GluonNLP's warning about "a corrupted index" (its older versions' bug)
            warnings.simplefilter("ignore")
            vocab = gluonnlp.Vocab.from_json(text)
    except (ValueError, TypeError, AttributeError, KeyError, AssertionError) as exc:
        raise FastTextError(f"{where} is not a vocabulary this library wrote ({type(exc).__name__}: "
                            f"{reason_of(exc)})") from None
    check_form(src, config, text)
    if not vocab.idx_to_token or vocab.idx_to_token[0] != UNK:
        raise FastTextError(f"{where}: its first token is not {UNK}, which words training never saw are read as")
    try:  # (one join and encode: a Yelp-size vocabulary in milliseconds; the token is looked for only if it fails)
        "\n".join(vocab.idx_to_token).encode("utf-8")
    except UnicodeEncodeError:  # JSON's "\ud800", a lone surrogate: no text read as UTF-8 holds one
        raise FastTextError(f"{where}: {lone_surrogate_message(vocab.idx_to_token, 'token {}'.format)}") from None
    return vocab


def _read_metrics(src, path):
    """The bundle's ``metrics.json``: a JSON object (shown by notebooks and the training job's output as one)."""
    try:
        with open(path) as f:
            metrics = json.load(f)
    except ValueError as exc:
        raise FastTextError(f"corrupt model bundle {src}: {METRICS}: {exc}") from None
    if not isinstance(metrics, dict):
        raise FastTextError(f"corrupt model bundle {src}: {METRICS} holds no JSON object")
    return metrics


def _featurizer_of(src, config, vocab):
    """The featurizer of ``vocab`` with config.json's settings; the vocabulary's size and the rows its features need
    must be config.json's."""
    from .features import Featurizer

    if len(vocab) != config["vocab_size"]:
        raise FastTextError(f"model/vocabulary mismatch in {src}: vocab.json has {len(vocab)} tokens, config.json says {config['vocab_size']}")
    # (its text is read as it was trained: a bundle written before text was put in NFC has no
    # "unicode_normalization"; one written before its tokens were, "NFC": UNICODE_NORMALIZATION)
    featurizer = Featurizer(vocab, ngrams=config["ngrams"], buckets=config["buckets"] or 0,
                            unicode_form=config.get("unicode_normalization"))
    if featurizer.num_rows != config["num_rows"]:
        raise FastTextError(f"model/vocabulary mismatch in {src}: features need {featurizer.num_rows} rows, the model has {config['num_rows']}")
    return featurizer


def _read_parameters(src, config, paths, device, advice):
    """``(model, stored)``: the classifier config.json describes, its parameters loaded on ``device``, and a compact
    bundle's stored rows when it is read on the CPU (else None: its table built from them). ``advice``: what the
    one line says to do when the machine cannot hold the table (table_memory.check_room_to_load)."""
    import mxnet as mx

    from .errors import is_out_of_memory
    from .model import FastTextClassifier
    from .table_memory import NonFinite, check_finite, check_room_to_load, out_of_memory_loading

    model = FastTextClassifier(config["num_rows"], config["emsize"], config["num_classes"], dropout=config.get("dropout") or 0.0)
    stored = None
    try:
        if config.get("compact"):  # only the changed embedding rows are stored (compact.py)
            from . import compact

            directory = os.path.dirname(paths[PARAMS])
            try:
                stored = compact.read_rows(directory, config["compact"], config["num_rows"], config["emsize"], src)
            except compact.BadRows as exc:
                raise FastTextError(f"corrupt model bundle {src}: {exc}") from None
            if device.device_type != "cpu":  # MXNet's operators need the table; CpuScorer reads the stored rows
                compact.materialize(model, stored, device, src, advice)
                stored = None
            model.output.load_parameters(os.path.join(directory, PARAMS), ctx=device)
        else:  # the whole table read from the file into memory of its own (then copied to a GPU device)
            check_room_to_load(config["num_rows"], config["emsize"], src, advice)
            model.load_parameters(paths[PARAMS], ctx=device)
        # Predictions from inf/NaN weights are garbage (NaN probabilities, one class for everything):
        # refuse them. Compact bundles' other rows come from the seed: only what was stored is checked.
        check_finite(model, skip=("embedding.weight",) if config.get("compact") else ())
    except NonFinite as exc:
        raise FastTextError(f"corrupt model bundle {src}: {exc} holds inf or NaN values, so it cannot "
                            f"predict{_FLOAT16_HINT if (config.get('compact') or {}).get('dtype') == 'float16' else ''}; "
                            f"retrain it") from None
    except (mx.base.MXNetError, MemoryError) as exc:
        if is_out_of_memory(exc):  # the machine's, not the file's: what the check leaves over (the finite
            if config.get("compact") and device.device_type == "cpu":  # check's block; a GPU's copy). A compact
                raise  # bundle on the CPU holds its stored rows, not the table: the CLI's own line says it
            raise out_of_memory_loading(config["num_rows"], config["emsize"], src, advice,
                                        cause=reason_of(exc)) from None
        if "Invalid NDArray file format" in str(exc):  # not a parameter file at all (its checksum matched)
            raise FastTextError(f"corrupt model bundle {src}: {PARAMS} is not an MXNet parameter file "
                                f"(Invalid NDArray file format)") from None
        raise FastTextError(f"model parameters in {src} do not match config.json: {reason_of(exc)}") from None
    except (AssertionError, ValueError) as exc:
        raise FastTextError(f"model parameters in {src} do not match config.json: {reason_of(exc)}") from None
    return model, stored
