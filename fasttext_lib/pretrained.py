"""Pretrained vectors in training: a ``.vec`` file's rows (vec_files.py reads it) start a vocabulary's rows.

:func:`pretrained_rows` matches a file's words to a vocabulary (by vec_files.py's ``VocabularyMatch``):
``train --pretrained-vectors`` (``TrainConfig.pretrained_vectors``) overwrites those rows of the seeded
table (model.py), as fastText does; the file's other words are ignored and every other row keeps its
seeded value.
(fastText also adds the file's words that training never saw to its dictionary; this library's
vocabulary comes from the training split only.) Compact bundles keep such rows: they differ from
the seeded values, so compact.py stores them like rows training changed. :func:`describe` is the bundle's
record of the file.
"""
import numpy as np

from .text import TRAINING_FORM


def pretrained_rows(pretrained, token_to_idx, form=TRAINING_FORM):
    """``(rows, values)``: the table rows of ``pretrained``'s words found in ``token_to_idx`` (a
    vocabulary's), and their vectors; words the vocabulary lacks are ignored. Words are matched as
    vec_files.VocabularyMatch says (the rule read_vec's ``keep`` holds rows by): as the model's text rule
    (``form``, text.UNICODE_FORMS) reads them, as training text is read; a word listed twice gives its last
    vector; a row whose word the file holds only otherwise spelled (``Haus``, ``Paris``, ``❤️`` for ``❤``)
    starts from the first such spelling in the file. Each row is taken once, however many words it is read from."""
    from .vec_files import VocabularyMatch

    match, taken = VocabularyMatch(token_to_idx, form), {}
    for i, word in enumerate(pretrained.words):
        spelling = match.spelling(word)
        if spelling is not None:
            taken[spelling] = i
    found = {token_to_idx[token]: i for token, i in match.chosen(taken).items()}
    rows = np.array(sorted(found), dtype=np.int64)
    return rows, pretrained.vectors[[found[r] for r in rows.tolist()]].reshape(len(rows), pretrained.dim)


def describe(pretrained, rows_set, vocab_size):
    """The bundle's record of the pretrained vectors a model started from: the file where it was read from
    (vec_files.recorded_source: an absolute path, an S3 URI, or a note that it was a stream), and its content's
    sha256, which names it whatever the file is called (checkpoints compare it)."""
    return {"file": pretrained.recorded_source or pretrained.source, "sha256": pretrained.sha256, "words_in_file": pretrained.words_in_file,
            "dim": pretrained.dim, "rows_initialized": int(rows_set), "vocab_size": int(vocab_size)}


def start_line(record, source):
    """The line a model started from pretrained vectors is told by (with progress on: TrainConfig.progress's help
    names it): how many of its vocabulary's rows start from them. ``record``: :func:`describe`'s; ``source``: the
    file as its user named it (VecFile.source). Said as training starts (train.initial_model), and by autotune once,
    of its final model (its trials and refit run with progress off: each would say it again)."""
    return (f"pretrained vectors: {record['rows_initialized']} of the {record['vocab_size']} vocabulary words start "
            f"from {source} ({record['words_in_file']} words, dim {record['dim']})")
