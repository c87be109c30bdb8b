"""Prediction: bags -> class probabilities, and :class:`Predictor`, a loaded bundle (raw text in,
labels out), which the CLI, notebook 04 and the SageMaker endpoint (sm_serve.py) use.

Serving imports this module and never the training modules (train, optim, step, checkpoints,
config, progress) nor tqdm, which the inference containers do not have
(tests/test_architecture.py checks it).
"""
import json
import tempfile

import numpy as np

from .batches import BatchMaker, to_batch_arrays, too_big_for_a_tensor
from .bundle import METRICS, PARAMS, VOCAB, load_bundle_files
from .devices import parse_ctx
from .errors import FastTextError
from .features import Featurizer


def encode_labels(labels, label_names, where):
    index = {name: i for i, name in enumerate(label_names)}
    unknown = sorted(set(labels) - set(index))
    if unknown:
        shown = ", ".join(repr(u) for u in unknown[:5])
        raise FastTextError(f"{where} has label(s) {shown} not seen in training (known: {', '.join(label_names)})")
    return np.array([index[label] for label in labels], dtype=np.int64)


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
            if not too_big_for_a_tensor(batch.size, len(batch.rows)) or size == 1:
                break
            size //= 2
        arrays = to_batch_arrays(batch, ctx, model.binary)
        out.append(model.probabilities(model(arrays.bag, arrays.rows)).asnumpy())
        start += batch.size
    return np.concatenate(out) if out else np.zeros((0, model.num_classes), dtype=np.float32)


def evaluate_bags(model, featurizer, bags, y, ctx):
    """Accuracy and mean cross-entropy (natural log) of the model on encoded documents."""
    probs = predict_bags(model, featurizer, bags, ctx)
    p_true = np.clip(probs[np.arange(len(y)), y], 1e-12, 1.0)
    return {"accuracy": float((probs.argmax(axis=1) == y).mean()), "loss": float(-np.log(p_true).mean()), "n": int(len(y))}


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

        src = str(src)
        device = parse_ctx(ctx)[0]
        with tempfile.TemporaryDirectory() as tmp:
            config, paths = load_bundle_files(src, tmp)  # verified against config.json's checksums
            try:
                with open(paths[VOCAB]) as f:
                    vocab = gluonnlp.Vocab.from_json(f.read())
                with open(paths[METRICS]) as f:
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
                model.load_parameters(paths[PARAMS], ctx=device)
            except (mx.base.MXNetError, AssertionError, ValueError) as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise FastTextError(f"model parameters in {src} do not match config.json: {first}") from None
        return cls(model, featurizer, config["labels"], config, metrics, device)

    def predict_proba(self, texts):
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
        y = encode_labels(data.labels, self.labels, "evaluation data")
        return evaluate_bags(self.model, self.featurizer, self.featurizer.transform(data.texts), y, self.ctx)

    def word_vectors(self):
        """(tokens, vectors) for the vocabulary part of the embedding table."""
        table = self.model.word_vectors()
        return list(self.featurizer.vocab.idx_to_token), table[: self.featurizer.vocab_size]
