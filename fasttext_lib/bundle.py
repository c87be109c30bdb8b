"""Model bundles: everything needed to rebuild a trained model and its preprocessing.

A bundle is a directory (local or an ``s3://`` prefix) holding

* ``model.params``  - the Gluon parameters (``save_parameters``);
* ``vocab.json``    - the GluonNLP vocabulary;
* ``metrics.json``  - ``{"history": [per-epoch rows], "final": {...}, "ctx": ...}``;
* ``config.json``   - format version, labels, model shape, n-gram settings, normalization and the
  training config. It is written last and read first, so it marks a complete bundle.

:class:`Predictor` loads a bundle and turns raw text into labels and probabilities, normalizing
it exactly as training did.
"""
import json
import math
import os
import tempfile

import numpy as np

from . import __version__, storage
from .errors import FastTextError
from .features import Featurizer

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
    return {"history": history, "final": history[-1] if history else {}, "ctx": [str(c) for c in trained.ctx]}


def fetch_bundle_files(src, names, local_dir):
    """Copy the named files of the bundle at ``src`` into ``local_dir``; a missing one is a one-line error."""
    missing = [n for n in names if not storage.exists(storage.join(str(src), n))]
    if missing:
        raise FastTextError(f"incomplete model bundle: {src} has no {', '.join(missing)}")
    storage.fetch_directory(str(src), names, local_dir)


def save_bundle(trained, dest):
    """Write a :class:`~fasttext_lib.train.TrainedModel` to ``dest``; returns the bundle's location."""
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


class Predictor:
    """A loaded bundle: raw text in, labels and probabilities out."""

    def __init__(self, model, featurizer, labels, config, metrics=None, ctx=None):
        self.model, self.featurizer, self.labels, self.config = model, featurizer, list(labels), config
        self.metrics = metrics or {}
        self.ctx = ctx

    @classmethod
    def load(cls, src, ctx="cpu"):
        import gluonnlp
        import mxnet as mx

        from .model import FastTextClassifier
        from .train import parse_ctx

        src = str(src)
        config = read_config(src)
        device = parse_ctx(ctx)[0]
        with tempfile.TemporaryDirectory() as tmp:
            fetch_bundle_files(src, (PARAMS, VOCAB, METRICS), tmp)
            try:
                with open(os.path.join(tmp, VOCAB)) as f:
                    vocab = gluonnlp.Vocab.from_json(f.read())
                with open(os.path.join(tmp, METRICS)) as f:
                    metrics = json.load(f)
            except ValueError as exc:
                raise FastTextError(f"corrupt model bundle {src}: {exc}") from None
            if len(vocab) != config["vocab_size"]:
                raise FastTextError(f"model/vocabulary mismatch in {src}: vocab.json has {len(vocab)} tokens, config.json says {config['vocab_size']}")
            featurizer = Featurizer(vocab, ngrams=config["ngrams"], buckets=config["buckets"] or 0)
            if featurizer.num_rows != config["num_rows"]:
                raise FastTextError(f"model/vocabulary mismatch in {src}: features need {featurizer.num_rows} rows, the model has {config['num_rows']}")
            model = FastTextClassifier(config["num_rows"], config["emsize"], config["num_classes"], dropout=config.get("dropout") or 0.0)
            try:
                model.load_parameters(os.path.join(tmp, PARAMS), ctx=device)
            except (mx.base.MXNetError, AssertionError, ValueError) as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise FastTextError(f"model parameters in {src} do not match config.json: {first}") from None
        return cls(model, featurizer, config["labels"], config, metrics, device)

    def predict_proba(self, texts):
        from .train import predict_bags

        texts = list(texts)
        if not texts:
            return np.zeros((0, len(self.labels)), dtype=np.float32)
        return predict_bags(self.model, self.featurizer, self.featurizer.transform(texts), self.ctx)

    def predict(self, texts):
        """One ``{"label": ..., "probability": ...}`` per text (the most probable class)."""
        probs = self.predict_proba(texts)
        best = probs.argmax(axis=1) if len(probs) else []
        return [{"label": self.labels[k], "probability": float(probs[i, k])} for i, k in enumerate(best)]

    def evaluate(self, data):
        from .train import encode_labels, evaluate_bags

        y = encode_labels(data.labels, self.labels, "evaluation data")
        return evaluate_bags(self.model, self.featurizer, self.featurizer.transform(data.texts), y, self.ctx)

    def word_vectors(self):
        """(tokens, vectors) for the vocabulary part of the embedding table."""
        table = self.model.word_vectors()
        return list(self.featurizer.vocab.idx_to_token), table[: self.featurizer.vocab_size]
