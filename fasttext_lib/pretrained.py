"""Pretrained vectors in training: a ``.vec`` file's rows (vec_files.py reads it) start a vocabulary's rows.

:func:`pretrained_rows` matches a file's words to a vocabulary: ``train --pretrained-vectors``
(``TrainConfig.pretrained_vectors``) overwrites those rows of the seeded table (model.py), as
fastText does; the file's other words are ignored and every other row keeps its seeded value.
(fastText also adds the file's words that training never saw to its dictionary; this library's
vocabulary comes from the training split only.) Compact bundles keep such rows: they differ from
the seeded values, so compact.py stores them like rows training changed. :func:`describe` is the bundle's
record of the file.
"""
import numpy as np


def pretrained_rows(pretrained, token_to_idx):
    """``(rows, values)``: the table rows of ``pretrained``'s words found in ``token_to_idx`` (a
    vocabulary's), and their vectors; words the vocabulary lacks are ignored. A word listed twice
    gives its last vector. Words are matched in NFC, as training text is read (``text.nfc``): a ``.vec``
    written with combining accents (``e`` + U+0301) starts the row of the precomposed word.

    Training text is lowercased too, and fastText's vectors are of text as written: a row whose word the file
    holds only with capitals (``Haus``, ``Paris``) starts from the first such spelling in the file (published
    files list the most frequent first). A spelling already lowercase wins wherever the file lists it."""
    from .text import lowered, nfc

    found, cased = {}, {}
    for i, word in enumerate(pretrained.words):
        word = nfc(word)
        row = token_to_idx.get(word)
        if row is not None:
            found[row] = i
        elif word != word.lower():  # (the cheap test first: most words of a large file are neither)
            row = token_to_idx.get(lowered(word))  # (a word with punctuation training splits off is no token)
            if row is not None:
                cased.setdefault(row, i)
    for row, i in cased.items():
        found.setdefault(row, i)
    rows = np.array(sorted(found), dtype=np.int64)
    return rows, pretrained.vectors[[found[r] for r in rows.tolist()]].reshape(len(rows), pretrained.dim)


def describe(pretrained, rows_set, vocab_size):
    """The bundle's record of the pretrained vectors a model started from."""
    return {"file": pretrained.source, "sha256": pretrained.sha256, "words_in_file": pretrained.words_in_file,
            "dim": pretrained.dim, "rows_initialized": int(rows_set), "vocab_size": int(vocab_size)}
