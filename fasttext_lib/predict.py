"""Prediction: :class:`Predictor`, a loaded bundle (raw text in, labels out), which the CLI, notebook 04 and the
SageMaker endpoint (sm_serve.py) use. What it is made of: the texts checked (text_arguments.py), scored
(scoring.py: numpy on the CPU, MXNet's operators on a GPU), labeled data's labels read as the model's classes
(label_encoding.py) and its metrics (evaluation.py; trained_on.py: data an autotune refit trained on).

Serving imports this module and never the training modules (train, optim, step, checkpoints,
config, progress, and bundle.py, the bundle's writer: bundles are read with bundle_read.py) nor tqdm, which the
inference containers do not have (tests/test_architecture.py checks it).
"""
import collections.abc
import itertools
import sys
import threading

import numpy as np

from . import storage
from .bundle_format import held_out_score
from .bundle_read import load_bundle_files, read_bundle_contents, unicode_data_note
from .data import (as_read_from_a_file, first_lines_as_read, label_as_read, lines_named, pandas_class_column,
                   whole_number_classes)
from .devices import parse_one_ctx
from .errors import FastTextError, is_number, out_of_memory_naming
from .evaluation import Evaluation, metrics_of, per_class_scores
from .features import NoRoomToFeaturize
from .label_encoding import encode_labels, note_first_lines
from .label_names import display
from .scoring import CpuScorer, predict_bags
from .stops import stopped_reading, telling_stops
from .text_arguments import example_texts, not_unicode_error, refuse_a_dataframe_of_examples, review_texts
from .trained_on import TrainedOnCheck


def check_top(k, threshold, num_classes):
    """``(k, threshold)`` for :meth:`Predictor.predict_top`: ``k`` a whole number >= 1 (more than the
    classes means all of them) or -1 (all), ``threshold`` a probability in [0, 1]."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not (k >= 1 or k == -1):
        raise FastTextError(f"k must be a whole number >= 1, or -1 for every class; got {k!r}")
    if not is_number(threshold) or not 0.0 <= float(threshold) <= 1.0:
        raise FastTextError(f"threshold must be a probability between 0 and 1; got {threshold!r}")
    return (num_classes if k == -1 else min(int(k), num_classes)), float(threshold)


# What to do when a bundle's table is more than the process can hold (table_memory.check_room_to_load): on the CPU a
# compact bundle is scored from its stored rows, without the table (made as its reader makes one: compact.made_with);
# elsewhere only more memory helps.
_CPU_LOAD_ADVICE = ("use a machine with more memory (an endpoint or notebook: a larger instance type), or a compact "
                    "bundle ({made_with}), which scoring on the CPU reads without building the table")
_GPU_LOAD_ADVICE = ("the table is read into the machine's memory before it is copied to the GPU: use a machine "
                    "with more memory (a larger instance type)")
_GPU_COMPACT_ADVICE = ("a GPU needs the whole table, built in the machine's memory first: {on_the_cpu}, which scores "
                       "a compact bundle from its stored rows without the table, or use a machine with more memory (a "
                       "larger instance type)")
# ...and how its reader has it loaded on the CPU (_load_advice): the Python API's argument, the command line's flag,
# or (an endpoint, which serves on a GPU wherever its instance has one: sm_serve._serving_ctx) a CPU instance type
_ON_THE_CPU = "load it on the CPU (ctx='cpu')"
_ON_THE_CPU_BY_FLAG = "load it on the CPU (--ctx cpu)"
_ON_THE_CPU_SERVED = "serve it on a CPU instance type"
_BUILT_TABLE_ADVICE = ("Predictor.model builds the whole table, which predict, evaluate and word_vectors do not "
                       "need (Predictor.block is the Gluon block without it); or use a machine with more memory")


def _load_advice(config, device, compact_as):
    """What to do when the table of the bundle of ``config`` cannot be held loading it on ``device`` (a compact
    bundle made, or one loaded on the CPU, as ``compact_as`` says its reader does it: compact.made_with)."""
    from .compact import COMPACT_EITHER, COMPACT_FLAG, made_with

    if device.device_type == "cpu":
        return _CPU_LOAD_ADVICE.format(made_with=made_with(compact_as))
    if config.get("compact"):
        on_the_cpu = {COMPACT_FLAG: _ON_THE_CPU_BY_FLAG, COMPACT_EITHER: _ON_THE_CPU_SERVED}.get(compact_as, _ON_THE_CPU)
        return _GPU_COMPACT_ADVICE.format(on_the_cpu=on_the_cpu)
    return _GPU_LOAD_ADVICE


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
    @telling_stops(lambda cls, src, *_, **__: stopped_reading(f"the bundle {src}"))  # (a Stop: one line in a notebook)
    def load(cls, src, ctx="cpu", compact_as=None):
        """The bundle at ``src`` (a directory or ``s3://`` prefix), its files verified against ``config.json``'s
        sizes and sha256 (a bundle replaced meanwhile is read again), on ``ctx``: one device (``cpu``, ``gpu`` or
        ``gpu:N``; ``auto``: the first GPU, else the CPU), a list of them refused.
        A missing, incomplete, foreign or damaged bundle, or one holding inf/NaN parameters, is one
        :class:`~fasttext_lib.errors.FastTextError`. One trained under other Unicode data than this Python's, with
        words outside ASCII, loads with a note on stderr (bundle_read.unicode_data_note). ``~``: the home folder.
        ``compact_as``: how a line advising a compact bundle says to make one (None: ``save_bundle(...,
        compact=...)``, this API's; the command line passes compact.COMPACT_FLAG, an endpoint COMPACT_EITHER)."""
        src = str(storage.expand_home(src))
        device = parse_one_ctx(ctx)  # (a list of devices refused: a bundle is scored on one)
        # (what the table's check, table_memory, leaves over fails so under a tight ulimit -v: the vocabulary, a
        # buffer copying the files)
        with out_of_memory_naming(f"load {src}"), storage.staging_dir() as tmp:
            config, paths = load_bundle_files(src, tmp)  # verified against config.json's checksums
            predictor = cls.from_files(src, config, paths, device, compact_as)
        predictor.source = src
        note = unicode_data_note(src, config, predictor.featurizer.vocab.idx_to_token)
        if note:
            print(note, file=sys.stderr, flush=True)
        return predictor

    @classmethod
    def from_files(cls, src, config, paths, device, compact_as=None):
        """The predictor of the bundle ``src`` whose files ``load_bundle_files`` put at ``paths`` (their parsing and
        checks against config.json: bundle_read.read_bundle_contents). Memory it cannot have is the one line
        :meth:`load` gives, naming the bundle (``compact_as``: :meth:`load`'s)."""
        with out_of_memory_naming(f"load {src}"):  # (packaging calls it on its own, to check a bundle before packing it)
            from .compact import COMPACT_ARGUMENT

            compact_as = compact_as or COMPACT_ARGUMENT
            contents = read_bundle_contents(src, config, paths, device, _load_advice(config, device, compact_as),
                                            compact_as)
        return cls(contents.model, contents.featurizer, config["labels"], config, contents.metrics, device,
                   label_names=config.get("label_names"), stored=contents.stored)

    def predict_proba(self, texts):
        """Class probabilities (n, num_classes) of raw texts, in order. A ``__label__`` word is no part of a
        review (fastText's predict skips it): a labeled line (``__label__2 the food ...``, a line of a
        ``.test`` file) gets the answer of its text, as training read it (the Featurizer skips it: text.without_labels)."""
        texts = review_texts(texts)
        if not texts:
            return np.zeros((0, len(self.labels)), dtype=np.float32)
        return self._scored_from(texts, 0, "texts[{}]")

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
        probs = np.asarray(probs)  # (a list was "bad operand type for unary -", a traceback)
        if probs.ndim != 2 or probs.shape[1] != len(self.labels):  # (another model's: an IndexError, or with fewer
            # classes each text's answer named this model's first classes, silently)
            raise FastTextError(f"probs must be class probabilities of shape (texts, {len(self.labels)}), this model's "
                                f"predict_proba, got shape {probs.shape}")
        order = np.argsort(-probs, axis=1, kind="stable")[:, :k]  # ties: the first class, as argmax
        return [[{"label": self.names[j], "probability": float(p[j]), "class_id": self.labels[j]}
                 for j in row if p[j] >= threshold] for p, row in zip(probs, order)]

    @property
    def held_out_score(self):
        """The held-out accuracy training recorded at its last epoch, and the split it was measured on
        (:func:`~fasttext_lib.bundle_format.held_out_score`: ``.describe()`` says it in a line)."""
        return held_out_score(self.metrics)

    def name_of(self, label):
        """The name a raw label is shown with; a label that is no str (pandas' int class 2) as the class a DataFrame's
        is read as (data.label_as_read: "2"), which was given back as it came, not named."""
        if not isinstance(label, str):
            label = label_as_read(label, "label")
        return display([label], self.label_names)[0]

    def evaluate(self, data, confusion=False):
        """``{"accuracy", "loss", "n"}`` on labeled data (raw labels, as in training, or every label one of
        :attr:`names`: ``positive`` for class ``2``; see :func:`~fasttext_lib.label_encoding.class_ids`);
        ``confusion=True`` adds ``"confusion_matrix"``: ``{"labels": names, "class_ids": raw labels, "counts":
        [[...]]}`` (rows: true class, columns: predicted class), and ``"per_class"``: each class's precision,
        recall, F1 and support (fastText's ``test-label``)."""
        return self._evaluated(data, confusion).metrics

    def evaluation(self, data):
        """:meth:`evaluate` of ``data`` with the confusion matrix, and what it scored kept: an :class:`Evaluation`, whose
        metrics, :meth:`~Evaluation.confusion_frame` and :meth:`~Evaluation.documents_frame` all come from this one
        scoring (notebook 04 scored its test split three times for them: evaluate, predict_proba, confusion_frame)."""
        return self._evaluated(data, confusion=True)

    def _evaluated(self, data, confusion):
        data = as_read_from_a_file(data, "data")  # a DataFrame's int classes, its NaNs (data.py)
        # Its classes are all at hand: one the model does not know is refused before any document is scored
        try:
            y = encode_labels(data.labels, self.labels, "evaluation data", self.label_names,
                              lines_named(data.first_lines, "evaluation data"),  # (read_labeled's: its lines)
                              pandas_class_column(data))  # (a hint's pandas line names the user's column)
        except FastTextError:  # (read_labeled of text,label rows without a header reads them class first, as evaluate)
            _refuse_class_last(_few_texts(data.texts), self.labels, self.label_names, "evaluation data")
            raise
        return self._evaluation(zip(data.labels, data.texts), confusion, "evaluation data", "the evaluation data",
                                classes=y, texts=data.texts, text_name="data.texts[{}]")

    EVALUATED_PER_CHUNK = 4096  # documents featurized and scored at once by evaluate and evaluate_examples (as predict)

    def evaluate_examples(self, examples, confusion=False, where="evaluation data", line_of=None, found=None):
        """:meth:`evaluate` of ``(label, text)`` pairs as they come (``data.iter_examples`` of a file), in memory that
        does not grow with the texts: each chunk is scored and dropped, and only its labels and class probabilities
        are kept (read whole first, evaluate held a 1 GB file's texts and bags at once, several GB). The labels are
        checked once all are read, as :meth:`evaluate` checks them; no example at all is an error naming ``where``, and
        so is a label the model does not know, with the line it first occurs at when ``line_of`` (a callable: an
        example's 0-based index -> its line, for the examples of the chunk just read: ``data.RecentLines.line_of``)
        is given. ``found``: the reader's (``data.iter_examples``'), whose class column a hint's pandas line names.

        A bundle whose autotune refit trained on its ``--autotune-validation`` data (:meth:`refit_documents`) scored on
        those documents is said to be, on stderr (its accuracy there is no held-out score; it was said by the CLI's
        evaluate only): each text is fingerprinted for it, for such bundles only."""
        if examples is None or isinstance(examples, (str, bytes)):  # ("positive good": its characters were examples)
            raise FastTextError(f"examples must be (label, text) pairs, got {type(examples).__name__}; for one review "
                                f"pass [(label, text)]")
        refuse_a_dataframe_of_examples(examples)
        return self._evaluation(examples, confusion, where, where, line_of=line_of, found=found).metrics

    def _evaluation(self, examples, confusion, where, warned_as, classes=None, texts=None, line_of=None, found=None,
                    text_name="examples[{}]"):
        """The :class:`Evaluation` of ``(label, text)`` pairs, scored :data:`EVALUATED_PER_CHUNK` at a time (each
        chunk's texts and bags dropped once scored), the one route of :meth:`evaluate` and :meth:`evaluate_examples`.
        ``classes``: their classes encoded already (:meth:`evaluate`'s, all at hand: their probabilities are written
        into one array of their number, not joined from the chunks' at the end, a second copy); else their labels are
        read as they come and encoded once all are (:class:`_LabelsRead`: ``line_of``, ``found``). ``where``: the
        data as its errors name it; ``warned_as``: as the refit's warning does (:meth:`refit_documents`); ``texts``:
        the texts the Evaluation keeps (None: none kept); ``text_name``: what text ``i`` is called in an error."""
        refit = self.refit_documents()
        examples = iter(examples if refit is None else refit.watch(examples))  # (islice of a list gave its first
        #                                                                           chunk again and again: no end)
        read = _LabelsRead(line_of) if classes is None else None
        probs = [] if classes is None else np.empty((len(classes), len(self.labels)), dtype=np.float32)
        done = 0
        for chunk in iter(lambda: list(itertools.islice(examples, self.EVALUATED_PER_CHUNK)), []):
            scored = self._scored_from(example_texts(chunk, done), done, text_name)
            if read is None:
                probs[done:done + len(chunk)] = scored
            else:
                read.add(chunk)
                probs.append(scored)
            done += len(chunk)
        if not done:  # (its accuracy and loss were NaN)
            raise FastTextError(f"{where}: contains no labeled documents")
        if read is not None:
            classes, probs = read.encoded(self.labels, self.label_names, where, found), np.concatenate(probs)
        metrics = self._metrics(probs, classes, confusion)
        if refit is not None:
            refit.warn(warned_as)
        return Evaluation(self.names, texts, classes, probs, metrics)

    def _scored_from(self, texts, start, name="examples[{}]"):
        """The class probabilities of ``texts``, the documents from index ``start`` on: memory they cannot have is
        :class:`NoRoomToFeaturize` naming the document by its index among all of them, and a text UTF-8 cannot encode
        one error naming it as ``name`` does (``.format(index)``)."""
        try:
            bags = self.featurizer.transform(texts, scoring=self._held_scoring())
        except NoRoomToFeaturize as exc:
            raise NoRoomToFeaturize(start + exc.index, exc.chars, exc.documents, exc.need, exc.room, exc.what) from None
        except UnicodeEncodeError:  # a lone surrogate (a str decoded with surrogateescape, or unicode_escape): it was
            # evaluate's raw UnicodeEncodeError from inside the featurizer
            raise not_unicode_error(texts, name, start) from None
        return self._probabilities(bags)

    def refit_documents(self):
        """A :class:`TrainedOnCheck` of the ``--autotune-validation`` documents the bundle's autotune refit trained
        on (its metrics.json records a sample of them, fingerprinted by its text rule), or None: no refit, or a bundle
        written before the record."""
        record = (self.metrics or {}).get("autotune") or {}
        if not record.get("validation_documents"):
            return None
        return TrainedOnCheck(record["validation_documents"], self.featurizer.unicode_form)

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


class _LabelsRead:
    """The labels of ``(label, text)`` pairs read a chunk at a time (:meth:`Predictor.evaluate_examples`), one str per
    class, not per document, encoded as the model's classes once all are read (:meth:`encoded`). ``line_of``: as
    evaluate_examples' (the line of each class first met, while its chunk is the one just read), or None."""

    # texts told apart at most (:attr:`texts`): more, and they are no few classes
    FEW_TEXTS = 64

    def __init__(self, line_of):
        self.labels, self.seen, self.first_lines, self.line_of = [], {}, {}, line_of
        self.fields = None  # the first pair's column names, where it carries them (df.itertuples()' rows)
        self.texts = set()  # the texts, stripped, while FEW_TEXTS at most (else None): a class-last file's classes?

    def add(self, chunk):
        if not self.labels:
            self.fields = getattr(chunk[0], "_fields", None)
        if self.texts is not None:
            self.texts = _few_texts((text for _, text in chunk), self.texts)
        classes_before, start = len(self.seen), len(self.labels)
        self.labels.extend(self._read(label, start + i) for i, (label, _) in enumerate(chunk))
        if self.line_of is not None and len(self.seen) > classes_before:  # a class first seen: its line, while known
            note_first_lines(self.first_lines, chunk, len(self.labels) - len(chunk), self.line_of)

    def _read(self, label, index):
        """The label of ``examples[index]`` as :meth:`Predictor.evaluate` reads a DataFrame's (data.label_as_read, once
        per class): ``zip(df['label'], df['text'])`` of an int class column, as its refusal of a DataFrame says to
        pass, was a TypeError traceback from reading its classes (a NaN class is refused naming the pair). A str is
        as a file's reader gave it."""
        if isinstance(label, str):
            return self.seen.setdefault(label, label)
        if isinstance(label, collections.abc.Hashable) and label in self.seen:
            return self.seen[label]
        read = label_as_read(label, f"examples[{index}][0]", self._own_column() or "label")
        self.seen[label] = read
        return read

    def _own_column(self):
        """The pairs' own class column, where they carry it (df.itertuples()' rows), else None; a field ``_0`` is none:
        namedtuple's rename of a column that is no Python name, "Class Index", by its position."""
        fields = self.fields
        return fields[0] if fields and isinstance(fields[0], str) and not fields[0].startswith("_") else None

    def encoded(self, classes, names, where, found):
        """Each label's index in ``classes`` (a model's, ``names`` its label names: label_encoding.encode_labels, whose
        errors name ``where``); ``found``: the reader's (data.iter_examples'), whose class column a hint's pandas line
        names."""
        labels = whole_number_classes(self.labels)  # (the file's classes as training reads them: __label__5.0 is 5
        #                                             when all are)
        # (a hint's pandas line names the rows' own class column: df['label'] of a frame's sentiment was a KeyError)
        column = pandas_class_column(class_column=self._own_column()) if found is None else pandas_class_column(
            class_from=found.get("class_from", ""), class_column=found.get("class_column"))
        try:
            return encode_labels(labels, classes, where, names, first_lines_as_read(self.first_lines), column)
        except FastTextError:
            _refuse_class_last(self.texts, classes, names, where)
            raise


def _refuse_class_last(texts, classes, names, where):
    """Refuse labels the model does not know whose documents' ``texts`` (a set, stripped; None: too many to be its
    classes) are each one of its ``classes`` (or their ``names``): rows of a text and then its class read class first,
    as a CSV without a header row is (``"a text, with a comma",positive``: a quoted first field reads as a class), by
    evaluate or by read_labeled before Predictor.evaluate; the refusal listed the texts as unknown labels, which said
    nothing of why."""
    from .formats import class_last_header_advice

    if texts and texts <= set(classes) | set((names or {}).values()):
        raise FastTextError(f"{where}: each document's text is one of the model's classes "
                            f"({', '.join(sorted(texts)[:3])}) and its labels are not: its rows are a text "
                            f"and then its class, read class first as a file without a header row is; "
                            f"{class_last_header_advice()}")


def _few_texts(texts, seen=None, limit=_LabelsRead.FEW_TEXTS):
    """The different ``texts``, stripped, added to ``seen`` (a set of those read before), while ``limit`` at most
    (else None: no few classes), for :func:`_refuse_class_last`."""
    seen = set() if seen is None else seen
    for text in texts:
        seen.add(text.strip())
        if len(seen) > limit:
            return None
    return seen
