"""Reading a model bundle: its files verified, its config.json checked, its contents parsed and checked against it.

:func:`load_bundle_files` reads the set (every file's size and checksum verified: a truncated ``model.params`` or
one from another run is named as such) and checks config.json; :func:`read_bundle_contents` parses the vocabulary,
metrics and parameters and checks each against config.json; predict.py's :class:`~fasttext_lib.predict.Predictor`
scores with what it returns. Every failure is one line naming its real cause: a folder that holds the bundle one
level down, or an archive not extracted, says so. The layout and names are bundle_format.py's; writing is bundle.py.

Format 1 bundles are not read: loading one says to retrain.
"""
import contextlib
import json
import os
import re
import unicodedata
from typing import NamedTuple

from . import storage
from .bundle_format import (CONFIG, DATA_FILES, FORMAT_VERSION, METRICS, NORMALIZATION, PARAMS,
                            READ_UNICODE_NORMALIZATIONS, UNICODE_DATA_VERSION, UNICODE_NORMALIZATION, VOCAB,
                            older_format)
from .errors import FastTextError, is_number, lone_surrogate_message, reason_of
from .label_names import check_name, for_labels
from .text import AS_WRITTEN


# ---- The files verified and config.json checked (load_bundle_files) ----

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


# ---- A bundle that cannot be read: the cause in one line (and where the bundle is, when it is elsewhere) ----

def _not_a_bundle(src, exc):
    text = str(exc)
    if "its manifest lists no" in text:
        return FastTextError(f"incomplete model bundle: {text}")
    if text.endswith(f"has no {CONFIG}"):
        return FastTextError(f"not a model bundle: {text}{_where_the_bundle_is(src)}")
    if "is not valid JSON" in text or "is malformed" in text:
        return FastTextError(f"not a model bundle: {text}")
    if "not written by this library" in text:
        older = older_format(src)
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


# ---- Reading a bundle's contents: its data files parsed and checked against config.json ----

# What put inf into a bundle that training had kept finite (compact.save refuses it since).
_FLOAT16_HINT = " (float16 bundles written by older versions stored values beyond 65504 as inf)"


class BundleContents(NamedTuple):
    """A bundle's data files read and checked against its config.json (:func:`read_bundle_contents`)."""

    featurizer: object  # features.Featurizer: the vocabulary and config.json's n-gram settings and text rule
    model: object  # model.FastTextClassifier with its parameters on the device (a compact bundle's table: see stored)
    metrics: dict  # metrics.json (metrics_summary)
    stored: object  # compact.StoredRows of a compact bundle read on the CPU, scored instead of model's table; else None


def read_bundle_contents(src, config, paths, device, advice="", compact_as=None):
    """The :class:`BundleContents` of the bundle ``src`` whose files :func:`load_bundle_files` put at ``paths`` (its
    ``config``), the parameters on ``device``. Every file that does not parse or does not fit config.json is one
    :class:`FastTextError` naming it; inf or NaN parameters are refused (their predictions are garbage); a table the
    machine cannot hold is refused before it is read, in one line that ends with ``advice`` (what to do; a compact
    bundle's stored rows: compact.rows_advice, as ``compact_as`` says how its reader makes one, None: the Python
    API's)."""
    vocab = _read_vocabulary(src, paths[VOCAB], config)
    metrics = _read_metrics(src, paths[METRICS])
    featurizer = _featurizer_of(src, config, vocab)
    model, stored = _read_parameters(src, config, paths, device, advice, compact_as)
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


# vocab.json's FORM_RECORD (bundle_format.py), written as its last key
_FORM_RECORD_AT_END = re.compile(r', "unicode_normalization": ("[A-Za-z-]*"|null)\}\s*$')


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


def _read_parameters(src, config, paths, device, advice, compact_as=None):
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
                stored = compact.read_rows(directory, config["compact"], config["num_rows"], config["emsize"], src,
                                           compact_as or compact.COMPACT_ARGUMENT)
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
