"""The model bundle's format: its files, its config.json and what both sides read the same way.

Writing a bundle is bundle.py (:func:`~fasttext_lib.bundle.save_bundle`); reading and checking one is
bundle_read.py (:func:`~fasttext_lib.bundle_read.load_bundle_files`: the verified files and the checked config.json,
then :func:`~fasttext_lib.bundle_read.read_bundle_contents`: the vocabulary, metrics and parameters parsed and
checked against it), which predict.py's :class:`~fasttext_lib.predict.Predictor` scores with. Both take this
module's names and version, so a field or file added to the format is added here and on both sides.

A bundle is a set published by :func:`fasttext_lib.storage.publish` (a directory or an ``s3://``
prefix) with ``config.json`` as its manifest::

    config.json                      format version, labels, label names ({raw label: name} when
                                     known, label_names.py), model shape, n-gram settings,
                                     normalization, the training config (and "pretrained_vectors":
                                     the .vec file the table started from, named as the training
                                     config names it: an absolute path or an S3 URI), and "files": the stored
                                     name, size and sha256 of each file below (on S3, where the bucket
                                     keeps versions, also the version its upload created) (written last)
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
"""
import json
from typing import NamedTuple, Optional

from . import storage
from .errors import FastTextError
from .text import AS_WRITTEN, TRAINING_FORM, UNICODE_FORMS

FORMAT_VERSION = 2
NORMALIZATION = "fasttext-classification-example"
# config.json's "unicode_normalization": how the bundle's text was put in NFC (text.UNICODE_FORMS), read so by
# features.Featurizer's unicode_form: "NFC-tokens-quotes-br-fixpoint-marks" (text.MARKS) written now;
# "NFC-tokens-quotes-br-fixpoint" (text.FORMED_BREAKS) by the versions that read emoji variation selectors (❤️) and
# direction marks as parts of words; "NFC-tokens-quotes-br" (text.QUOTES_AND_BREAKS) by the versions that applied the
# rules once (a <br /> they formed, as <br\t/> once squeezed, stayed in words); "NFC-tokens" (text.NFC_TOKENS) by those
# before, which read typographic quotes (don’t, “great”) and <br>, <br/> as parts of words;
# "NFC" (text.NFC_FIRST) by those that put text in NFC before lowercasing only; none by those before NFC
# (text.AS_WRITTEN): their words spelled with combining accents, or out of NFC once lowercased, were trained on as such.
UNICODE_NORMALIZATION = TRAINING_FORM
READ_UNICODE_NORMALIZATIONS = tuple(form for form in UNICODE_FORMS if form is not AS_WRITTEN)  # (the newest last)
# config.json's "unicode_data_version": the Unicode data (unicodedata.unidata_version) of the Python that trained
# the bundle. Lowercasing and NFC follow it: another version knows characters that one did not (their case and
# composition unknown to it) or does not know some it did, so words outside ASCII may be read otherwise than in
# training (bundle_read.unicode_data_note). Absent in bundles written before it was recorded.
UNICODE_DATA_VERSION = "unicode_data_version"
CONFIG, PARAMS, VOCAB, METRICS = "config.json", "model.params", "vocab.json", "metrics.json"
DATA_FILES = (PARAMS, VOCAB, METRICS)  # logical names; config.json is the manifest that lists them

# vocab.json's record of the rule its tokens were made with (the featurizer's unicode_form; null: text.AS_WRITTEN),
# after GluonNLP's keys (its from_json ignores others). The file is checksummed in config.json, so the record tells
# an edited config.json "unicode_normalization" (Predictor reads text by that, the model learned the record's tokens).
FORM_RECORD = "unicode_normalization"


# metrics.json's mark of scores that are not the bundle's: every score was taken of the float32 model training had,
# and a bundle saved with a lossy compact (compact.LOSSY) stores rounded rows. A field beside them, not new names: the
# readers of val_accuracy (held_out_score, notebooks, scripts) keep reading it (the trial table renames its columns:
# autotune.FLOAT32_SCORES).
SCORED_AS = "scored_as"


class HeldOutScore(NamedTuple):
    """The held-out accuracy a bundle's training recorded at its last epoch (:func:`held_out_score`)."""

    # "validation": an autotuned model's, on the search's split of the training data; "test": 02's test split; None:
    # there is no accuracy (no split it was measured on: 02's plot then draws no held-out line)
    split: Optional[str]
    accuracy: Optional[float]  # None: trained without validation data, or autotune's refit (refitted)
    scored_as: Optional[str] = None  # "float32": the model training had, not the bundle's lossy rows (metrics_summary)
    refitted: bool = False  # autotune's final model, trained again on training + validation data: nothing held out

    def describe(self):
        """``final held-out accuracy at training: 0.7936``, as notebook 04 (and 02's training job) show it: on the
        validation data training was given (02's test split; the CLI's --validation), which the bundle does not name."""
        if self.accuracy is None:
            # (autotune's default refit is trained on the validation data too: "without validation data" misled)
            why = ("the final model was refitted on training + validation data, so it has no held-out score"
                   if self.refitted else "trained without validation data")
            return f"no held-out accuracy at training ({why})"
        split = "validation (autotune's split of the training data)" if self.split == "validation" else "held-out"
        whose = (f" (the {self.scored_as} model's: this bundle's embedding rows are stored lossy; evaluate scores it "
                 f"as saved)") if self.scored_as else ""
        return f"final {split} accuracy at training: {round(self.accuracy, 4)}{whose}"


def held_out_score(metrics):
    """The :class:`HeldOutScore` of a bundle's ``metrics.json`` (:func:`~fasttext_lib.bundle.metrics_summary`): its
    last epoch's ``val_accuracy``, and the split it was measured on. Notebook 02 validates on the test split, except
    with autotune: the chosen trial's model is validated on the search's split of the training data (an autotune
    record in the metrics), and whose model it scored where that is not the bundle's (``"scored_as"``: a lossy compact
    bundle). Without an accuracy there is no split (None), and ``refitted`` says whether that is because autotune
    refitted the final model on its validation split too (its record's ``"refit"``, which bundles autotuned before
    the refit existed lack: they have an accuracy). ``Predictor.held_out_score`` and ``TrainedModel.held_out_score``
    give it."""
    metrics = metrics if isinstance(metrics, dict) else {}
    final = metrics.get("final") if isinstance(metrics.get("final"), dict) else {}
    record = metrics.get("autotune") if isinstance(metrics.get("autotune"), dict) else {}
    scored_as = metrics.get(SCORED_AS) if isinstance(metrics.get(SCORED_AS), str) else None
    accuracy = final.get("val_accuracy")
    if accuracy is None:
        return HeldOutScore(None, None, scored_as, refitted=record.get("refit") is True)
    return HeldOutScore("validation" if metrics.get("autotune") else "test", accuracy, scored_as)


def older_format(src):
    """A one-line error if ``src`` holds a format-1 bundle (no marker), else ``None``: the writer's refusal to replace
    it and the reader's to read it both name it so."""
    try:
        with storage.open_read(storage.join(str(src), CONFIG), "rb") as f:
            old = json.loads(f.read())
    except (FastTextError, ValueError):
        return None
    if isinstance(old, dict) and storage.MARKER_KEY not in old and "format_version" in old:
        return (f"{src} holds a model bundle in the older format {old['format_version']!r}, which this version "
                f"(format {FORMAT_VERSION}) neither reads nor replaces")
    return None
