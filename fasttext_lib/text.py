"""fastText's text normalization, shared by data prep, training and inference.

These are the rules of ``normalize_text`` in fastText's ``classification-example.sh``:
lowercase; put spaces around ``. , ( ) ! ?`` and ``'``; drop ``"``; turn ``;``, ``:`` and ``<br />`` into spaces;
squeeze spaces. We also squeeze tabs and newlines, since tokens are split on any whitespace.
Before those, text is put in Unicode's composed form (NFC: :func:`nfc`), so that a word is one token however its
accents are encoded (``café`` with U+00E9, or ``e`` and a combining U+0301, as macOS file names and some editors
write it). The function is idempotent, so normalizing already-normalized text changes nothing.
"""
import re
import unicodedata

LABEL_PREFIX = "__label__"  # fastText format's class word (data.py); never a feature (without_labels)
_LABEL_WORD = re.compile(r"(?<!\S)" + re.escape(LABEL_PREFIX) + r"\S*")  # \s, \S: str.split's whitespace
_SPACED = re.compile(r"([.,()!?'])")
_DROPPED = re.compile(r'"')
_TO_SPACE = re.compile(r"<br />|[;:]")


def nfc(text):
    """``text`` in Unicode's normalization form C (precomposed characters: ``e`` + U+0301 becomes U+00E9), the
    same string when it is NFC already (ASCII always is: the cheap checks first). Before lowercasing: text that is
    NFC already is lowercased exactly as before. The native featurizer calls it on its chunks of documents too
    (native_features), so both give the same tokens."""
    if text.isascii() or unicodedata.is_normalized("NFC", text):
        return text
    return unicodedata.normalize("NFC", text)


def normalize_text(text, compose=True):
    """``compose``: put the text in NFC first (:func:`nfc`); False for a bundle written before that was done
    (bundle.UNICODE_NORMALIZATION absent from its config.json): its words are the text's as it came, lowercased."""
    text = (nfc(text) if compose else text).lower()
    text = _DROPPED.sub("", text)
    text = _TO_SPACE.sub(" ", text)
    text = _SPACED.sub(r" \1 ", text)
    return " ".join(text.split())


def tokenize(text, compose=True):
    """Normalized whitespace tokens of one document (``compose``: as :func:`normalize_text`)."""
    return normalize_text(text, compose).split()


def without_labels(text):
    """``text`` without its ``__label__...`` words. Such a word is a class, no part of a review: fastText's predict
    skips it, and so do the Featurizer's training and prediction in every format (in fastText format the data reader
    takes it out first). Case-sensitive, as fastText's: ``__LABEL__x`` is a word, lowercased as any other."""
    return _LABEL_WORD.sub(" ", text) if LABEL_PREFIX in text else text


def split_lines(text):
    """One document per line, lines as files and training data have them: split at ``\\n`` only, a
    trailing ``\\r`` (CRLF) dropped. ``str.splitlines`` also splits at form feeds, ``\\x85`` and U+2028
    inside a review, which gave more predictions than lines, out of step with the input."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]
