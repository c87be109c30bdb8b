"""Model bundles: everything needed to rebuild a trained model and its preprocessing.

A bundle is a directory (local or an ``s3://`` prefix) holding

* ``model.params``  - the Gluon parameters (``save_parameters``);
* ``vocab.json``    - the GluonNLP vocabulary;
* ``metrics.json``  - ``{"history": [per-epoch rows], "final": {...}, "ctx": ...}`` (and ``"autotune"``:
  its trials and chosen setting, for a model autotune chose);
* ``config.json``   - format version, labels, model shape, n-gram settings, normalization and the
  training config. It is written last and read first, so it marks a complete bundle.

predict.py's :class:`~fasttext_lib.predict.Predictor` loads a bundle (:func:`read_config`,
:func:`fetch_bundle_files`) and turns raw text into labels and probabilities.
"""
import json
import math
import os
import tempfile

import numpy as np

from . import __version__, storage
from .errors import FastTextError

FORMAT_VERSION = 1
NORMALIZATION = "fasttext-classification-example"
CONFIG, PARAMS, VOCAB, METRICS = "config.json", "model.params", "vocab.json", "metrics.json"
BUNDLE_FILES = (PARAMS, VOCAB, METRICS, CONFIG)


def _json_safe(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, (np.floating, np.integer)):
        return _json_safe(value.item())
    return value


def metrics_summary(trained):
    """``{"history": [...], "final": {...}, "ctx": [...]}`` of a TrainedModel, JSON-safe (NaN -> null).

    The bundle's ``metrics.json``; the SageMaker entry point adds a few keys to it for its output.
    """
    history = [{k: _json_safe(v) for k, v in row.items()} for row in trained.history]
    summary = {"history": history, "final": history[-1] if history else {}, "ctx": [str(c) for c in trained.ctx]}
    if getattr(trained, "autotune", None):  # autotune.py: {"trials": [...], "best": {...}, ...}
        summary["autotune"] = json.loads(json.dumps(trained.autotune, default=_json_safe), parse_constant=lambda c: None)
    return summary


def fetch_bundle_files(src, names, local_dir):
    """Copy the named files of the bundle at ``src`` into ``local_dir``; a missing one is a one-line error."""
    missing = [n for n in names if not storage.exists(storage.join(str(src), n))]
    if missing:
        raise FastTextError(f"incomplete model bundle: {src} has no {', '.join(missing)}")
    storage.fetch_directory(str(src), names, local_dir)


def save_bundle(trained, dest, compact=None):
    """Write a :class:`~fasttext_lib.train.TrainedModel` to ``dest``; returns the bundle's location.

    ``compact="float32"`` (exact) or ``"float16"``: store only the embedding rows training changed
    (compact.py); config.json's ``compact`` entry says so and Predictor.load rebuilds the rest."""
    model, featurizer = trained.model, trained.featurizer
    config = {
        "format_version": FORMAT_VERSION,
        "library_version": __version__,
        "labels": list(trained.labels),
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
    metrics = metrics_summary(trained)
    with tempfile.TemporaryDirectory() as tmp:
        if compact:
            from . import compact as compacting

            config["compact"] = compacting.save(model, trained.config.seed, tmp, PARAMS, dtype=compact)
        else:
            model.save_parameters(os.path.join(tmp, PARAMS))
        with open(os.path.join(tmp, VOCAB), "w") as f:
            f.write(featurizer.vocab.to_json())
        with open(os.path.join(tmp, METRICS), "w") as f:
            json.dump(metrics, f, indent=2)
        with open(os.path.join(tmp, CONFIG), "w") as f:
            json.dump(config, f, indent=2)
        return storage.publish_directory(tmp, str(dest), marker=CONFIG)


def read_config(src):
    src = str(src)
    config_uri = storage.join(src, CONFIG)
    if not storage.is_s3(src) and not os.path.isdir(src):
        raise FastTextError(f"model bundle not found: {src} is not a directory")
    if not storage.exists(config_uri):
        raise FastTextError(f"not a model bundle: {src} has no {CONFIG}")
    try:
        config = json.loads(storage.read_bytes(config_uri))
    except ValueError:
        raise FastTextError(f"not a model bundle: {config_uri} is not valid JSON") from None
    version = config.get("format_version") if isinstance(config, dict) else None
    if version != FORMAT_VERSION:
        raise FastTextError(f"{src}: bundle format version {version!r} is not supported (this library reads version {FORMAT_VERSION})")
    return config
