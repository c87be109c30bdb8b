"""Evaluation: the metrics of class probabilities against true classes (accuracy, log loss, the confusion matrix,
each class's precision, recall and F1), and :class:`Evaluation`, one scoring of labeled documents kept for its tables
(notebook 04's). Training's validation (train.py; autotune.py's trials) and
:class:`~fasttext_lib.predict.Predictor` share them.
"""
import numpy as np

from .errors import check_positive_int


def per_class_scores(counts):
    """Precision, recall, F1 and support of each class from confusion counts[true][predicted]; ``None``
    where a ratio is 0/0 (precision of a class never predicted, recall of a class absent from the data)."""
    counts = np.asarray(counts, dtype=np.int64)
    right, predicted, actual = np.diag(counts), counts.sum(axis=0), counts.sum(axis=1)
    scores = []
    for c in range(len(counts)):
        precision = right[c] / predicted[c] if predicted[c] else None
        recall = right[c] / actual[c] if actual[c] else None
        f1 = (2 * precision * recall / (precision + recall) if precision + recall else 0.0) \
            if precision is not None and recall is not None else None
        scores.append({"precision": None if precision is None else float(precision),
                       "recall": None if recall is None else float(recall),
                       "f1": None if f1 is None else float(f1), "support": int(actual[c])})
    return scores


def metrics_of(probs, y, confusion=False):
    """Accuracy and mean cross-entropy (natural log) of the class probabilities ``probs`` of documents labeled ``y``.

    ``confusion=True`` adds ``"confusion"``: counts[true class][predicted class] (nested lists).
    """
    p_true = np.clip(probs[np.arange(len(y)), y], 1e-12, 1.0)
    predicted = probs.argmax(axis=1)
    loss = 0.0 - np.log(p_true).mean()  # (not -mean: every p_true 1.0 gave a loss of -0.0 in evaluate's output)
    metrics = {"accuracy": float((predicted == y).mean()), "loss": float(loss), "n": int(len(y))}
    if confusion:
        counts = np.zeros((probs.shape[1], probs.shape[1]), dtype=np.int64)
        np.add.at(counts, (y, predicted), 1)
        metrics["confusion"] = counts.tolist()
    return metrics


class Evaluation:
    """One scoring of labeled documents (:meth:`~fasttext_lib.predict.Predictor.evaluation`): ``metrics``
    (:meth:`~fasttext_lib.predict.Predictor.evaluate`'s, with ``confusion_matrix`` and ``per_class``), and each
    document's class probabilities (``probabilities``, (n, classes)) and true class (``classes``, indexes into
    ``names``), from which its tables are made."""

    def __init__(self, names, texts, classes, probabilities, metrics):
        self.names, self.texts, self.classes = list(names), texts, classes
        self.probabilities, self.metrics = probabilities, metrics

    def confusion_frame(self):
        """The confusion matrix as a pandas DataFrame, rows (true) and columns (predicted) named."""
        import pandas as pd

        counts = self.metrics["confusion_matrix"]["counts"]
        return pd.DataFrame(counts, index=pd.Index(self.names, name="true"),
                            columns=pd.Index(self.names, name="predicted"))

    def per_class_frame(self):
        """Each class's ``precision``, ``recall``, ``f1`` and ``support`` (its documents) as a pandas DataFrame, one row
        per class by name, as :meth:`confusion_frame` names them: the table ``evaluate`` prints on the command line
        (notebook 04 showed the confusion matrix alone). NaN where a ratio is 0/0 (the precision of a class never
        predicted, the recall of a class absent from the data)."""
        import pandas as pd

        ratios = ["precision", "recall", "f1"]
        rows = self.metrics["per_class"]
        return pd.DataFrame([{k: row[k] for k in [*ratios, "support"]} for row in rows],
                            index=pd.Index(self.names, name="class")).astype({k: float for k in ratios})

    def documents_frame(self, text_chars=80):
        """A pandas DataFrame of one row per document, in order: its ``true`` and ``predicted`` class by name (as
        the bundle shows them: ``World``, ``Sports`` where it knows what the classes mean, else as written), the
        predicted class's probability (``confidence``) and the ``text``'s first ``text_chars`` characters (None: all of
        it)."""
        import pandas as pd

        if text_chars is not None:  # (-1 cut each text's last character, without a word; 1.5 was a TypeError traceback)
            check_positive_int(text_chars, "text_chars")

        names = np.asarray(self.names, dtype=object)  # (evaluate refuses data with no document)
        return pd.DataFrame({"true": names[self.classes], "predicted": names[self.probabilities.argmax(axis=1)],
                             "confidence": self.probabilities.max(axis=1), "text": [t[:text_chars] for t in self.texts]})
