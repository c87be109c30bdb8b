"""Prediction: bags -> class probabilities, and :class:`Predictor`, a loaded bundle (raw text in,
labels out), which the CLI, notebook 04 and the SageMaker endpoint (sm_serve.py) use.

On the CPU the forward pass runs in numpy (:class:`CpuScorer`): the embedding table is read in
place through a view of the MXNet parameter, each document's mean is one native loop
(``native_features.bag_mean``, numpy without it), then one small matrix product and a
sigmoid/softmax. For one review that is tens of microseconds where MXNet's operator launches cost
milliseconds; the probabilities equal the MXNet route (:func:`predict_bags`, used on GPUs and
kept as the reference) to float rounding (tests/test_predict.py).

Serving imports this module and never the training modules (train, optim, step, checkpoints,
config, progress, and bundle.py, the bundle's writer: bundles are read with bundle_read.py) nor tqdm, which the
inference containers do not have (tests/test_architecture.py checks it).
"""
import collections.abc
import contextlib
import itertools
import reprlib
import sys
import threading
import unicodedata

import numpy as np

from . import native_features, storage
from .batches import BatchMaker, to_batch_arrays, too_big_for_a_tensor
from .bundle_format import held_out_score
from .bundle_read import load_bundle_files, read_bundle_contents, unicode_data_note
from .columns import distinct_row_numbers, whole_number
from .data import as_read_from_a_file, missing_value, whole_number_classes
from .devices import parse_ctx
from .errors import (FastTextError, is_number, is_out_of_memory, lone_surrogate_message, out_of_memory_to,
                     raise_if_interrupted)
from .features import NoRoomToFeaturize
from .label_names import display
from .text import LABEL_PREFIX, fingerprint, fingerprint_of_normalized, is_sampled


def encode_labels(labels, classes, where, names=None, lines=None):
    """Each label's index in ``classes`` (the trained labels, in order); a label training never saw is an
    error naming ``where`` (and the line it first occurs at, where ``lines``, ``{label: line}``, has it). ``names``
    (``{class id: name}``, the model's label names): data labeled by the names the model shows (``positive``,
    ``__label__positive``) instead of the class ids is read as those classes (:func:`class_ids`)."""
    index = {label: i for i, label in enumerate(classes)}
    return np.array([index[label] for label in class_ids(labels, classes, where, names, lines)], dtype=np.int64)


def class_ids(labels, classes, where, names=None, lines=None):
    """``labels`` as class ids of ``classes``: the labels themselves when each is a class id (the list given,
    unchanged: ids always read as ids), or, when each is a class as predictions show it (its name, ``names``:
    ``{class id: name}``, or its id where it has no name), those classes' ids.

    The labels are read as every command reads a file's (``data.whole_number_classes``: ``5.0`` for ``5`` only when every
    label is a whole float); a label that is no class is the class written as its whole float, where one is (``5``:
    the ``5.0`` of a model of half stars, or of one trained on ``__label__5.0`` before that rule). A file is labeled one way: a mix of ids and names is an error, and so is a file of names one of which is
    also another class's id (names ``1=2,2=good``, labels ``2`` and ``good``): read as names, ``2`` would be
    class 1, which is not what it means as an id. Any other label is unknown, and the error lists the known
    classes with their names (``known: 1 (negative), 2 (positive)``)."""
    present = set(labels)
    ids = set(classes)
    if present <= ids:
        return labels
    # The labels were read by data.whole_number_classes (5.0 is 5 when every label of the file is a whole float), the
    # model's classes from its training data: a class written 5.0 is kept so beside classes that are no whole floats
    # (half stars: 1.0, 1.5, 2.0, which a file of whole stars alone reads as 1 and 2), and by a model trained on
    # __label__5.0 before the rule. A label that is no class is then the class written as its whole float.
    as_float = {}
    for label in classes:
        whole = whole_number(label)
        if whole is not None and whole not in ids:
            as_float.setdefault(whole, []).append(label)
    as_float = {whole: spelled[0] for whole, spelled in as_float.items() if len(spelled) == 1}  # (5.0 and 05.0: no)
    if present <= ids | set(as_float):
        return [label if label in ids else as_float[label] for label in labels]
    by_name = {}
    for label in classes:  # each class as predictions show it: its name, or its id where it has none
        by_name.setdefault((names or {}).get(label, label), []).append(label)
    if present <= set(by_name):
        flips = sorted(label for label in present if label in ids and by_name[label] != [label])
        if flips:
            shown = ", ".join(f"{label!r} (class {label}'s id, and the name of class "
                              f"{' / '.join(by_name[label])})" for label in flips[:3])
            raise FastTextError(f"{where}: label(s) {shown} could mean either class: the model's class names reuse "
                                f"its class ids (known: {_known(classes, names)}); label the data by class id")
        twice = sorted(name for name in present if len(by_name[name]) > 1)
        if twice:  # (a mapping set by hand; names files and --label-names refuse one)
            raise FastTextError(f"{where}: label(s) {', '.join(map(repr, twice[:3]))} name several classes "
                                f"(known: {_known(classes, names)}); label the data by class id")
        return [by_name[label][0] for label in labels]
    unknown = sorted(present - ids - set(by_name))
    if not unknown:  # each label is an id or a name, but not all of one kind
        raise FastTextError(f"{where} mixes class ids ({', '.join(map(repr, sorted(present & ids)[:5]))}) and class "
                            f"names ({', '.join(map(repr, sorted(present - ids)[:5]))}); label every document one "
                            f"way (known: {_known(classes, names)})")
    lines = lines or {}
    shown = ", ".join(repr(u) + (f" (line {lines[u]})" if lines.get(u) else "") for u in unknown[:5])
    # every document a label of its own, each a whole number: pandas' index written first without a header
    hint = ("; each document's is a different whole number: row numbers? (df.to_csv(path, header=False) writes "
            "pandas' index first: write the file with index=False)"
            if len(present) == len(labels) and distinct_row_numbers(present) else _spelled_otherwise(unknown, ids))
    raise FastTextError(f"{where} has label(s) {shown} not seen in training (known: {_known(classes, names)}){hint}")


def _note_first_lines(first_lines, chunk, start, line_of):
    """Put in ``first_lines`` (``{label: line}``) the line of each label of ``chunk`` (``(label, text)`` pairs, the
    first at index ``start`` among all read) seen for the first time."""
    for i, (label, _) in enumerate(chunk):
        if label not in first_lines:
            first_lines[label] = line_of(start + i)


def _first_lines_as_read(first_lines):
    """``first_lines`` (``{label: line}``, in the order first seen) keyed by the labels as
    :func:`data.whole_number_classes` reads them (``5.0`` as ``5`` when all are), each keeping its first line."""
    as_read = {}
    for label, line in zip(whole_number_classes(list(first_lines)), first_lines.values()):
        as_read.setdefault(label, line)
    return as_read


def _spelled_otherwise(unknown, ids):
    """The error's hint when every label in ``unknown`` is one of the class ids ``ids`` written otherwise: ``1.0``
    for ``1`` (pandas writes a class column of floats so, as when it holds a NaN), ``__label__2`` for ``2``
    (fastText's prefix in a CSV's class column). Still refused: which class a label means is not guessed."""
    def plain(label):
        label = label.strip()
        label = label[len(LABEL_PREFIX):] if label.startswith(LABEL_PREFIX) else label
        with contextlib.suppress(ValueError, OverflowError):
            number = float(label)
            label = str(int(number)) if number.is_integer() else label
        return label

    meant = {label: plain(label) for label in unknown}
    if not all(m in ids for m in meant.values()):
        return _normalized_otherwise(unknown, ids)
    shown = ", ".join(f"{label!r} for {m}" for label, m in list(meant.items())[:3])
    return f"; the model's classes written otherwise ({shown}): write them as the training data did"


def _normalized_otherwise(unknown, ids):
    """The error's hint when every label in ``unknown`` is one of the class ids ``ids`` in another Unicode normalization
    (``cafe`` + a combining accent for a precomposed ``café``): shown escaped, as they print alike."""
    by_nfc = {unicodedata.normalize("NFC", label): label for label in ids}
    meant = {label: by_nfc.get(unicodedata.normalize("NFC", label)) for label in unknown}
    if not all(meant.values()):
        return ""
    shown = ", ".join(f"{ascii(label)} for {ascii(m)}" for label, m in list(meant.items())[:3])
    return (f"; the model's classes in another Unicode normalization ({shown}: combining accents and precomposed "
            f"letters): write them as the training data did")


def _known(classes, names):
    """``1 (negative), 2 (positive)``: the class ids, each with its name where it has one of its own."""
    names = names or {}
    return ", ".join(f"{label} ({names[label]})" if names.get(label, label) != label else label for label in classes)


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


class CpuScorer:
    """The classifier's forward pass in numpy, from its parameters on the CPU (no MXNet operators).

    ``model`` is a :class:`~fasttext_lib.model.FastTextClassifier` on a CPU context; its table is
    read through :func:`~fasttext_lib.table_memory.cpu_view`, so nothing is copied and training's later updates are seen
    (build a new scorer after loading other parameters). ``stored``: a compact bundle's
    :class:`~fasttext_lib.compact.StoredRows`, read instead of a table (``model``'s is never built).
    """

    DOCS_PER_CHUNK = 65536  # bounds the (docs x emsize) temporaries
    # Stored rows: the entries gathered at once (a long document's a slice at a time), which bounds the rows made from
    # them. A chunk of 65,536 documents needs most of a bigram table at once (1.26M of 2M rows for 40,000 synthetic
    # reviews: 500 MB at emsize 100), the very table the stored rows are there to avoid; so did one 60 MB review.
    STORED_ENTRIES = 1 << 16

    def __init__(self, model, ctx, stored=None):
        from .table_memory import cpu_view

        self._weight, self.stored = None, stored
        if stored is None:
            self._weight = model.embedding.weight.data(ctx)  # keeps the viewed memory alive
            self.table = cpu_view(self._weight)
            if self.table is None:
                raise ValueError("CpuScorer needs a dense float32 table on the CPU")
        self.output = model.output.weight.data(ctx).asnumpy()  # (1 or classes, emsize): small
        self.binary, self.num_classes = model.binary, model.num_classes
        self.dim = self.output.shape[1]

    @staticmethod
    def usable(ctx):
        return ctx.device_type == "cpu"

    NUMPY_ENTRIES = 1 << 18  # entries gathered at once by the numpy route of :meth:`means` (no native library)
    # What a gathered entry's bookkeeping takes: np.unique's sorted copy, its order and the inverse (int64 each), and
    # the int32 copy of the inverse bag_mean reads; the numpy route's owner and position of each (int64).
    ENTRY_BYTES = 40

    def held_bytes(self, entries, documents):
        """About the bytes :meth:`probabilities` of bags of ``entries`` entries in all, of ``documents`` documents, holds
        beside the bags (features.Featurizer.check_room weighs them before featurizing): the means and answers, and
        the rows it gathers. A dense table is read in place (natively); a compact bundle's rows are gathered
        :data:`STORED_ENTRIES` entries at a time (made by rows_of a slice at a time: a second slice's worth), and the
        numpy route's :data:`NUMPY_ENTRIES` at a time (without the native library), each row twice (gathered, then
        weighed)."""
        row = 4 * self.dim
        held = min(documents, self.DOCS_PER_CHUNK) * (row + 8 * self.num_classes) + 4 * self.num_classes * documents
        if self.stored is not None:
            gathered = min(entries, self.STORED_ENTRIES)
            held += gathered * (row + self.ENTRY_BYTES) + min(gathered, self.stored.ROWS_AT_ONCE) * row
        if not native_features.available():
            at_once = self.STORED_ENTRIES if self.stored is not None else self.NUMPY_ENTRIES
            held += min(entries, at_once) * (2 * row + self.ENTRY_BYTES)
        return held

    def means(self, bags, start, stop):
        """The mean embedding of documents ``start:stop`` of ``bags``."""
        first, last = bags.offsets[start], bags.offsets[stop]
        offsets = bags.offsets[start:stop + 1] - first
        rows, weights = bags.rows[first:last], bags.weights[first:last]
        if self.stored is None and native_features.available():  # the table read in place
            return native_features.bag_mean(self.table, rows, weights, offsets)
        num_rows = self.stored.num_rows if self.stored is not None else len(self.table)
        if len(rows) and (rows.min() < 0 or rows.max() >= num_rows):
            raise ValueError("a bag row is outside the table")
        out = np.zeros((stop - start, self.dim), dtype=np.float32)
        at_once = self.STORED_ENTRIES if self.stored is not None else self.NUMPY_ENTRIES
        for a in range(0, len(rows), at_once):
            self._add_entries(out, rows, weights, offsets, a, min(len(rows), a + at_once))
        return out

    def _add_entries(self, out, rows, weights, offsets, a, b):
        """Add entries ``a:b`` of the documents whose entries are ``rows``/``weights``/``offsets`` to their sums
        ``out``, gathering only those entries' rows. A document's entries a slice at a time, summed on in the same
        order, give the same bits as all at once (one long review's 1.36M bigram rows were gathered at once from a
        compact bundle, 545 MB at emsize 100, five times what featurizing it took)."""
        d0 = int(np.searchsorted(offsets, a, side="right")) - 1  # the documents holding entries a:b
        d1 = int(np.searchsorted(offsets, b, side="left"))
        local = np.clip(offsets[d0:d1 + 1], a, b) - a
        part = rows[a:b]
        if self.stored is None:
            table = self.table
        else:  # the entries' own rows, as a small table that they index into
            needed, part = np.unique(part, return_inverse=True)
            table = self.stored.rows_of(needed)
        if native_features.available():
            native_features.bag_mean(table, part, weights[a:b], local, out=out[d0:d1], add=True)
            return
        owners = np.searchsorted(local, np.arange(b - a), side="right") - 1
        np.add.at(out[d0:d1], owners, table[part] * weights[a:b, None])  # (in entry order, unbuffered)

    def probabilities(self, bags):
        """Class probabilities (n, num_classes), float32, as :meth:`FastTextClassifier.probabilities`."""
        if self._weight is not None:
            self._weight.wait_to_read()  # MXNet's engine may still be writing the table (training)
        out = np.empty((len(bags), self.num_classes), dtype=np.float32)
        for start in range(0, len(bags), self.DOCS_PER_CHUNK):
            raise_if_interrupted()  # a SIGTERM whose first raise a __del__ swallowed (errors.py)
            stop = min(len(bags), start + self.DOCS_PER_CHUNK)
            scores = self.means(bags, start, stop) @ self.output.T
            if self.binary:
                # Each class's own sigmoid, not 1 - p: in float32 1 - p is 0 once p is within 6e-8 of 1, where the
                # first class's probability is ~1e-10 (its log loss was capped where the second class's was exact).
                with np.errstate(over="ignore"):  # a score beyond +-88: exp overflows to inf, and that class's p is
                    out[start:stop, 1] = 1.0 / (1.0 + np.exp(-scores[:, 0]))  # 0, as it is (the warning went among
                    out[start:stop, 0] = 1.0 / (1.0 + np.exp(scores[:, 0]))  # a CLI's answers on stderr)
            else:
                scores -= scores.max(axis=1, keepdims=True)
                np.exp(scores, out=scores)
                out[start:stop] = scores / scores.sum(axis=1, keepdims=True)
        return out


def probabilities(model, featurizer, bags, ctx):
    """Class probabilities of encoded documents: numpy on the CPU, MXNet's operators elsewhere."""
    if CpuScorer.usable(ctx):
        return CpuScorer(model, ctx).probabilities(bags)
    return predict_bags(model, featurizer, bags, ctx)


def check_top(k, threshold, num_classes):
    """``(k, threshold)`` for :meth:`Predictor.predict_top`: ``k`` a whole number >= 1 (more than the
    classes means all of them) or -1 (all), ``threshold`` a probability in [0, 1]."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not (k >= 1 or k == -1):
        raise FastTextError(f"k must be a whole number >= 1, or -1 for every class; got {k!r}")
    if not is_number(threshold) or not 0.0 <= float(threshold) <= 1.0:
        raise FastTextError(f"threshold must be a probability between 0 and 1; got {threshold!r}")
    return (num_classes if k == -1 else min(int(k), num_classes)), float(threshold)


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


def evaluate_bags(model, featurizer, bags, y, ctx, confusion=False):
    """Accuracy and mean cross-entropy (natural log) of the model on encoded documents.

    ``confusion=True`` adds ``"confusion"``: counts[true class][predicted class] (nested lists).
    """
    return metrics_of(probabilities(model, featurizer, bags, ctx), y, confusion)


def metrics_of(probs, y, confusion=False):
    """:func:`evaluate_bags`'s metrics from the class probabilities ``probs`` of documents labeled ``y``."""
    p_true = np.clip(probs[np.arange(len(y)), y], 1e-12, 1.0)
    predicted = probs.argmax(axis=1)
    metrics = {"accuracy": float((predicted == y).mean()), "loss": float(-np.log(p_true).mean()), "n": int(len(y))}
    if confusion:
        counts = np.zeros((probs.shape[1], probs.shape[1]), dtype=np.int64)
        np.add.at(counts, (y, predicted), 1)
        metrics["confusion"] = counts.tolist()
    return metrics


def _example_texts(chunk, start):
    """The texts of ``chunk`` (``(label, text)`` pairs, the first one ``examples[start]``), or one error naming the first
    that is none: a pair with a NaN text (a DataFrame's missing value) or no pair at all was a traceback from inside
    the featurizer (``object of type 'float' has no len()``, ``not enough values to unpack``)."""
    for i, example in enumerate(chunk, start):
        pair = isinstance(example, (tuple, list)) and len(example) == 2
        if not (pair and isinstance(example[1], str)):
            hint = ": a missing text? fill it first (df['text'].fillna(''))" if pair and missing_value(example[1]) else ""
            raise FastTextError(f"examples[{i}] is {reprlib.repr(example)} ({type(example).__name__}), not a (label, "
                                f"text) pair whose text is a str{hint}")
    return [text for _, text in chunk]


def review_texts(texts):
    """``texts`` (any iterable of str: a list, a pandas Series, a numpy array, a generator) as a list, each
    one a str. A str itself was answered once per character (``predict("great food")``: 10 answers for one
    review); a NaN (a DataFrame's missing text), a number or bytes was a TypeError from inside the featurizer; a
    bytearray or memoryview, read as its bytes, was refused as ``texts[0] is 116 (int)``."""
    if texts is None or isinstance(texts, (str, bytes, bytearray, memoryview)):  # (iterated, bytes are ints)
        raise FastTextError(f"texts must be a list of review texts, got {'None' if texts is None else 'one ' + type(texts).__name__}; "
                            f"for one review pass [text]")
    # Iterated, these are no reviews in order: a DataFrame is its column names (one answer per column, not per row),
    # a dict its keys (the ids of {id: review}), a set its reviews in an order no answer can be matched back to.
    pandas = sys.modules.get("pandas")  # (only ever given a DataFrame where pandas is imported; not imported here)
    if pandas is not None and isinstance(texts, pandas.DataFrame):  # a subclass too (geopandas' GeoDataFrame)
        raise FastTextError("texts must be a list of review texts, got a pandas DataFrame, whose items are its column "
                            "names: pass its text column (df['text'])")
    if isinstance(texts, collections.abc.Mapping):
        raise FastTextError(f"texts must be a list of review texts, got a {type(texts).__name__}, whose items are its "
                            f"keys: pass its values (list(d.values()))")
    if isinstance(texts, (set, frozenset)):
        raise FastTextError(f"texts must be a list of review texts, got a {type(texts).__name__}, which has no order "
                            f"to answer in: pass a list")
    try:
        texts = list(texts)
    except TypeError:
        raise FastTextError(f"texts must be a list of review texts, got {type(texts).__name__}") from None
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            hint = (": a missing value? fill it first (df['text'].fillna(''))" if missing_value(text)
                    else ": decode it first (text.decode('utf-8'))" if isinstance(text, bytes) else "")
            raise FastTextError(f"texts[{i}] is {text!r} ({type(text).__name__}), not a str{hint}")
    return texts


def not_unicode_error(texts, name="texts[{}]"):
    """The error for the first of ``texts`` that UTF-8 cannot encode (a lone surrogate: errors.lone_surrogate_message);
    ``name``: what text ``i`` is called (``.format(i)``)."""
    return FastTextError(lone_surrogate_message(texts, name.format)
                         or "texts hold text that is not valid Unicode")  # (pragma: no cover)


class TrainedOnCheck:
    """Are the documents seen (:meth:`see`) those of a sample (``text.sampled_fingerprints``) the model trained on?
    Autotune's refit trains on the validation data too: scored on it, the model looked far better than on unseen data
    (0.99 against the chosen trial's 0.67 on a real set), with no word why."""

    def __init__(self, record):
        self.fraction, self.known = float(record["fraction"]), set(record["fingerprints"])
        self.sampled = self.found = 0

    def see(self, text):
        self._count(fingerprint(text))

    def see_all(self, texts):
        """:meth:`see` each of ``texts`` (a list), natively in one pass when it can (a Python fingerprint a document
        made evaluate of a refitted bundle take up to twice as long)."""
        normalized = native_features.normalized_utf8(texts) if native_features.available() else None
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


class Evaluation:
    """One scoring of labeled documents (:meth:`Predictor.evaluation`): ``metrics`` (:meth:`Predictor.evaluate`'s,
    with ``confusion_matrix`` and ``per_class``), and each document's class probabilities (``probabilities``, (n,
    classes)) and true class (``classes``, indexes into ``names``), from which its tables are made."""

    def __init__(self, names, texts, classes, probabilities, metrics):
        self.names, self.texts, self.classes = list(names), texts, classes
        self.probabilities, self.metrics = probabilities, metrics

    def confusion_frame(self):
        """The confusion matrix as a pandas DataFrame, rows (true) and columns (predicted) named."""
        import pandas as pd

        counts = self.metrics["confusion_matrix"]["counts"]
        return pd.DataFrame(counts, index=pd.Index(self.names, name="true"),
                            columns=pd.Index(self.names, name="predicted"))

    def documents_frame(self, text_chars=80):
        """A pandas DataFrame of one row per document, in order: its ``true`` and ``predicted`` class by name (as
        the bundle shows them: ``World``, ``Sports`` where it knows what the classes mean, else as written), the
        predicted class's probability (``confidence``) and the ``text``'s first ``text_chars`` characters."""
        import pandas as pd

        names = np.asarray(self.names, dtype=object)  # (evaluate refuses data with no document)
        return pd.DataFrame({"true": names[self.classes], "predicted": names[self.probabilities.argmax(axis=1)],
                             "confidence": self.probabilities.max(axis=1), "text": [t[:text_chars] for t in self.texts]})


# What to do when a bundle's table is more than the process can hold (table_memory.check_room_to_load): on the CPU a
# compact bundle is scored from its stored rows, without the table; elsewhere only more memory helps.
_CPU_LOAD_ADVICE = ("use a machine with more memory (an endpoint or notebook: a larger instance type), or a compact "
                    "bundle (train --compact), which scoring on the CPU reads without building the table")
_GPU_LOAD_ADVICE = ("the table is read into the machine's memory before it is copied to the GPU: use a machine "
                    "with more memory (a larger instance type)")
_GPU_COMPACT_ADVICE = ("a GPU needs the whole table, built in the machine's memory first: load it on the CPU (ctx "
                       "'cpu'), which scores a compact bundle from its stored rows without the table, or use a "
                       "machine with more memory (a larger instance type)")
_BUILT_TABLE_ADVICE = ("Predictor.model builds the whole table, which predict, evaluate and word_vectors do not "
                       "need (Predictor.block is the Gluon block without it); or use a machine with more memory")


def _load_advice(config, device):
    """What to do when the table of the bundle of ``config`` cannot be held loading it on ``device``."""
    if device.device_type == "cpu":
        return _CPU_LOAD_ADVICE
    return _GPU_COMPACT_ADVICE if config.get("compact") else _GPU_LOAD_ADVICE


class Predictor:
    """A loaded bundle: raw text in, labels and probabilities out.

    ``labels``: the classes as the training data wrote them (``"2"``); ``names``: how they are shown
    (``"positive"``), from the bundle's ``label_names`` (the raw label where it has none).

    A compact bundle loaded on the CPU keeps only its stored rows (``stored``, compact.StoredRows): the
    predictions read them directly, and :attr:`model`'s full table is built the first time it is asked for.
    """

    def __init__(self, model, featurizer, labels, config, metrics=None, ctx=None, label_names=None, stored=None):
        self._model, self._stored = model, stored
        self._building = threading.Lock()  # threads serving one Predictor build the full table once
        self.featurizer, self.labels, self.config = featurizer, list(labels), config
        if label_names is None:
            label_names = (config or {}).get("label_names") if isinstance(config, dict) else None
        self.label_names = dict(label_names or {})
        self.names = display(self.labels, self.label_names)
        # what a labeled input to answer may write in its class column: a class id, or its name (negative)
        self.class_values = set(self.labels) | set(self.names)
        self.metrics = metrics or {}
        self.ctx = ctx if ctx is not None else model.embedding.weight.list_ctx()[0]  # where the parameters live
        self._scorer = None
        self.source = None  # the bundle's location, when loaded from one (export_vectors never writes over its files)

    @property
    def model(self):
        """The Gluon classifier, its embedding table complete (built now from a compact bundle's rows)."""
        if self._stored is not None:
            from . import compact

            with self._building:
                if self._stored is not None:  # another thread may have built it while this one waited
                    compact.materialize(self._model, self._stored, self.ctx, self.source or "the compact bundle",
                                        _BUILT_TABLE_ADVICE)
                    self._stored = None
        return self._model

    @property
    def block(self):
        """The Gluon classifier as loaded: a compact bundle's embedding table not built (see :attr:`model`)."""
        return self._model

    @classmethod
    def load(cls, src, ctx="cpu"):
        """The bundle at ``src`` (a directory or ``s3://`` prefix), its files verified against ``config.json``'s
        sizes and sha256 (a bundle replaced meanwhile is read again), on ``ctx`` (``cpu``, ``gpu`` or ``gpu:N``).
        A missing, incomplete, foreign or damaged bundle, or one holding inf/NaN parameters, is one
        :class:`~fasttext_lib.errors.FastTextError`. One trained under other Unicode data than this Python's, with
        words outside ASCII, loads with a note on stderr (bundle_read.unicode_data_note)."""
        src = str(src)
        device = parse_ctx(ctx)[0]
        try:
            with storage.staging_dir() as tmp:
                config, paths = load_bundle_files(src, tmp)  # verified against config.json's checksums
                predictor = cls.from_files(src, config, paths, device)
        except Exception as exc:
            # What the table's check (table_memory) leaves over, under a tight ulimit -v: the vocabulary, a buffer
            # copying the files. A bare MemoryError (MXNet's traceback) named neither the bundle nor what to do.
            if not is_out_of_memory(exc):
                raise
            raise out_of_memory_to(f"load {src}", exc) from None
        predictor.source = src
        note = unicode_data_note(src, config, predictor.featurizer.vocab.idx_to_token)
        if note:
            print(note, file=sys.stderr, flush=True)
        return predictor

    @classmethod
    def from_files(cls, src, config, paths, device):
        """The predictor of the bundle ``src`` whose files ``load_bundle_files`` put at ``paths`` (their parsing and
        checks against config.json: bundle_read.read_bundle_contents)."""
        contents = read_bundle_contents(src, config, paths, device, _load_advice(config, device))
        return cls(contents.model, contents.featurizer, config["labels"], config, contents.metrics, device,
                   label_names=config.get("label_names"), stored=contents.stored)

    def predict_proba(self, texts):
        """Class probabilities (n, num_classes) of raw texts, in order. A ``__label__`` word is no part of a
        review (fastText's predict skips it): a labeled line (``__label__2 the food ...``, a line of a
        ``.test`` file) gets the answer of its text, as training read it (the Featurizer skips it: text.without_labels)."""
        texts = review_texts(texts)
        if not texts:
            return np.zeros((0, len(self.labels)), dtype=np.float32)
        try:
            bags = self.featurizer.transform(texts, scoring=self._held_scoring())
        except UnicodeEncodeError:  # a lone surrogate (a str decoded with surrogateescape, or unicode_escape)
            raise not_unicode_error(texts) from None
        return self._probabilities(bags)

    def _held_scoring(self):
        """What scoring bags holds beside them (:meth:`CpuScorer.held_bytes`), for the featurizer's memory check; None
        on a GPU (MXNet's operators: the device's memory)."""
        scorer = self.scorer()
        return None if scorer is None else scorer.held_bytes

    def _probabilities(self, bags):
        scorer = self.scorer()
        if scorer is None:
            return predict_bags(self.model, self.featurizer, bags, self.ctx)
        return scorer.probabilities(bags)

    def scorer(self):
        """The :class:`CpuScorer` of a CPU predictor (made once), else None (GPU: MXNet's operators)."""
        if self._scorer is None and CpuScorer.usable(self.ctx):
            self._scorer = CpuScorer(self._model, self.ctx, stored=self._stored)
        return self._scorer

    def predict(self, texts):
        """One ``{"label": name, "probability": p, "class_id": raw label}`` per text (the most probable
        class); ``label`` is the class's name when the bundle knows one, else the raw label."""
        probs = self.predict_proba(texts)
        best = probs.argmax(axis=1) if len(probs) else []
        return [{"label": self.names[k], "probability": float(probs[i, k]), "class_id": self.labels[k]}
                for i, k in enumerate(best)]

    def predict_top(self, texts, k=1, threshold=0.0):
        """The ``k`` most probable classes of each text whose probability is at least ``threshold``, most
        probable first (fastText's ``predict(text, k, threshold)``): a list of ``{"label", "probability",
        "class_id"}`` per text, empty where no class reaches the threshold. ``k=-1``: every class."""
        return self.top_of(self.predict_proba(texts), k, threshold)

    def top_of(self, probs, k=1, threshold=0.0):
        """:meth:`predict_top`'s answer for class probabilities ``probs`` (:meth:`predict_proba`'s), so that texts
        scored together can each be cut to its own ``k`` and ``threshold``."""
        k, threshold = check_top(k, threshold, len(self.labels))
        order = np.argsort(-probs, axis=1, kind="stable")[:, :k]  # ties: the first class, as argmax
        return [[{"label": self.names[j], "probability": float(p[j]), "class_id": self.labels[j]}
                 for j in row if p[j] >= threshold] for p, row in zip(probs, order)]

    @property
    def held_out_score(self):
        """The held-out accuracy training recorded at its last epoch, and the split it was measured on
        (:func:`~fasttext_lib.bundle_format.held_out_score`: ``.describe()`` says it in a line)."""
        return held_out_score(self.metrics)

    def name_of(self, label):
        """The name a raw label is shown with."""
        return display([label], self.label_names)[0]

    def evaluate(self, data, confusion=False):
        """``{"accuracy", "loss", "n"}`` on labeled data (raw labels, as in training, or every label one of
        :attr:`names`: ``positive`` for class ``2``; see :func:`class_ids`); ``confusion=True``
        adds ``"confusion_matrix"``: ``{"labels": names, "class_ids": raw labels, "counts": [[...]]}``
        (rows: true class, columns: predicted class), and ``"per_class"``: each class's precision,
        recall, F1 and support (fastText's ``test-label``)."""
        return self._evaluated(data, confusion).metrics

    def evaluation(self, data):
        """:meth:`evaluate` of ``data`` with the confusion matrix, and what it scored kept: an :class:`Evaluation`, whose
        metrics, :meth:`~Evaluation.confusion_frame` and :meth:`~Evaluation.documents_frame` all come from this one
        scoring (notebook 04 scored its test split three times for them: evaluate, predict_proba, confusion_frame)."""
        return self._evaluated(data, confusion=True)

    def _evaluated(self, data, confusion):
        data = as_read_from_a_file(data, "data")  # a DataFrame's int classes, its NaNs (data.py)
        if not len(data.labels):  # (its accuracy and loss were NaN)
            raise FastTextError("evaluation data: contains no labeled documents")
        y = encode_labels(data.labels, self.labels, "evaluation data", self.label_names)
        bags = self.featurizer.transform(data.texts, scoring=self._held_scoring())
        probs = self._probabilities(bags)
        metrics = self._metrics(probs, y, confusion)
        refit = self.refit_documents()
        if refit is not None:  # (see evaluate_examples)
            refit.see_all(list(data.texts))
            refit.warn("the evaluation data")
        return Evaluation(self.names, data.texts, y, probs, metrics)

    EVALUATED_PER_CHUNK = 4096  # documents featurized and scored at once by evaluate_examples (as predict)

    def evaluate_examples(self, examples, confusion=False, where="evaluation data", line_of=None):
        """:meth:`evaluate` of ``(label, text)`` pairs as they come (``data.iter_examples`` of a file), in memory that
        does not grow with the texts: each chunk is scored and dropped, and only its labels and class probabilities
        are kept (read whole first, evaluate held a 1 GB file's texts and bags at once, several GB). The labels are
        checked once all are read, as :meth:`evaluate` checks them; no example at all is an error naming ``where``, and
        so is a label the model does not know, with the line it first occurs at when ``line_of`` (a callable: an
        example's 0-based index -> its line, for the examples of the chunk just read: ``data.RecentLines.line_of``)
        is given.

        A bundle whose autotune refit trained on its ``--autotune-validation`` data (:meth:`refit_documents`) scored on
        those documents is said to be, on stderr (its accuracy there is no held-out score; it was said by the CLI's
        evaluate only): each text is fingerprinted for it, for such bundles only."""
        if examples is None or isinstance(examples, (str, bytes)):  # ("positive good": its characters were examples)
            raise FastTextError(f"examples must be (label, text) pairs, got {type(examples).__name__}; for one review "
                                f"pass [(label, text)]")
        labels, probs, seen, first_lines = [], [], {}, {}
        refit = self.refit_documents()
        examples = iter(examples if refit is None else refit.watch(examples))  # (islice of a list gave its first
        #                                                                           chunk again and again: no end)
        for chunk in iter(lambda: list(itertools.islice(examples, self.EVALUATED_PER_CHUNK)), []):
            texts = _example_texts(chunk, len(labels))
            try:
                bags = self.featurizer.transform(texts, scoring=self._held_scoring())
            except NoRoomToFeaturize as exc:  # its index among all the examples
                raise NoRoomToFeaturize(len(labels) + exc.index, exc.chars, exc.documents, exc.need, exc.room,
                                        exc.what) from None
            classes_before = len(seen)
            labels.extend(seen.setdefault(label, label) for label, _ in chunk)  # one str per class, not per document
            if line_of is not None and len(seen) > classes_before:  # a class first seen: its line, while it is known
                _note_first_lines(first_lines, chunk, len(labels) - len(chunk), line_of)
            probs.append(self._probabilities(bags))
        if not labels:
            raise FastTextError(f"{where}: contains no labeled documents")
        labels = whole_number_classes(labels)  # (the file's classes as training reads them: __label__5.0 is 5 when all are)
        first_lines = _first_lines_as_read(first_lines)
        y = encode_labels(labels, self.labels, where, self.label_names, first_lines)
        metrics = self._metrics(np.concatenate(probs), y, confusion)
        if refit is not None:
            refit.warn(where)
        return metrics

    def refit_documents(self):
        """A :class:`TrainedOnCheck` of the ``--autotune-validation`` documents the bundle's autotune refit trained
        on (its metrics.json records a sample of them), or None: no refit, or a bundle written before the record."""
        record = (self.metrics or {}).get("autotune") or {}
        return TrainedOnCheck(record["validation_documents"]) if record.get("validation_documents") else None

    def _metrics(self, probs, y, confusion):
        """:meth:`evaluate`'s answer from the class probabilities ``probs`` of documents of the classes ``y``."""
        metrics = metrics_of(probs, y, confusion=confusion)
        if confusion:
            counts = metrics.pop("confusion")
            metrics["confusion_matrix"] = {"labels": list(self.names), "class_ids": list(self.labels), "counts": counts}
            metrics["per_class"] = [dict(label=name, class_id=label, **scores)
                                    for name, label, scores in zip(self.names, self.labels, per_class_scores(counts))]
        return metrics

    def confusion_frame(self, data):
        """The confusion matrix of ``data`` as a pandas DataFrame, rows (true) and columns (predicted) named."""
        return self.evaluation(data).confusion_frame()

    def vocabulary_rows(self):
        """``(tokens, rows)``: the vocabulary's rows of the embedding table, with ``<unk>``, not the n-gram buckets (a
        compact bundle's without building its whole table). :func:`fasttext_lib.vectors.word_vectors` wraps them."""
        vocab_size = self.featurizer.vocab_size
        rows = (self._stored.rows_of(np.arange(vocab_size)) if self._stored is not None
                else self._model.embedding_rows(vocab_size))  # (a copy of the whole table first: 2 tables held)
        return list(self.featurizer.vocab.idx_to_token), rows
