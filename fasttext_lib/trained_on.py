"""Was a model trained on the documents it is scored on? Autotune's refit trains on the ``--autotune-validation``
documents too, and records a sample of their fingerprints in the bundle's metrics.json; :class:`TrainedOnCheck`
recognizes them in evaluation data, whose accuracy is then no held-out score (a warning on stderr says so).
"""
import itertools
import sys

from . import native_features
from .text import TRAINING_FORM, fingerprint, fingerprint_of_normalized, is_sampled


class TrainedOnCheck:
    """Are the documents seen (:meth:`see`) those of a sample (``text.sampled_fingerprints``) the model trained on?
    Autotune's refit trains on the validation data too: scored on it, the model looked far better than on unseen data
    (0.99 against the chosen trial's 0.67 on a real set), with no word why.

    ``form``: the text rule of the model (text.UNICODE_FORMS, its bundle's), which its fingerprints were taken by:
    read by today's rule, the documents of a bundle of an older one that the rules read otherwise (❤️, don’t) were
    not found."""

    def __init__(self, record, form=TRAINING_FORM):
        self.fraction, self.known = float(record["fraction"]), set(record["fingerprints"])
        self.form = form
        self.sampled = self.found = 0

    def see(self, text):
        self._count(fingerprint(text, self.form))

    def see_all(self, texts):
        """:meth:`see` each of ``texts`` (a list), natively in one pass when it can (a Python fingerprint a document
        made evaluate of a refitted bundle take up to twice as long)."""
        normalized = native_features.normalized_utf8(texts, self.form) if native_features.available() else None
        if normalized is None:
            for text in texts:
                self.see(text)
            return
        for raw in normalized:
            self._count(fingerprint_of_normalized(raw))

    def watch(self, examples, per_chunk=4096):
        """``examples`` ((label, text) pairs) as they come, their texts seen a chunk at a time (:meth:`see_all`)."""
        examples = iter(examples)
        for chunk in iter(lambda: list(itertools.islice(examples, per_chunk)), []):
            self.see_all([text for _, text in chunk])
            yield from chunk

    def _count(self, value):
        if is_sampled(value, self.fraction):
            self.sampled += 1
            self.found += f"{value:016x}" in self.known

    def trained_on(self):
        """Whether at least half the documents seen that fall in the sample are in it."""
        return self.sampled > 0 and 2 * self.found >= self.sampled

    def warn(self, where):
        """Say on stderr that ``where`` (the data scored) was trained on, when it was (:meth:`trained_on`)."""
        if self.trained_on():
            print(f"warning: {where} holds the documents of the --autotune-validation data this model was trained on "
                  f"(autotune's refit trains the chosen setting on the training and validation data; "
                  f"--autotune-no-refit keeps them out): its accuracy here is not a held-out score", file=sys.stderr)
