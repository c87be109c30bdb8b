"""fastText's text normalization, shared by data prep, training and inference.

These are the rules of ``normalize_text`` in fastText's ``classification-example.sh``:
lowercase; put spaces around ``. , ( ) ! ?`` and ``'``; drop ``"``; turn ``;``, ``:`` and ``<br />`` into spaces;
squeeze spaces. We also squeeze tabs and newlines, since tokens are split on any whitespace.
Before those, text is put in Unicode's composed form (NFC: :func:`nfc`), so that a word is one token however its
accents are encoded (``café`` with U+00E9, or ``e`` and a combining U+0301, as macOS file names and some editors
write it), and again once lowercased and its ``"`` dropped (:data:`NFC_TOKENS`), so every token is in NFC. The
function is idempotent, so normalizing already-normalized text (a file ``prepare`` wrote) changes nothing.
"""
import re
import unicodedata

LABEL_PREFIX = "__label__"  # fastText format's class word (data.py); never a feature (without_labels)
_LABEL_WORD = re.compile(r"(?<!\S)" + re.escape(LABEL_PREFIX) + r"\S*")  # \s, \S: str.split's whitespace
_SPACED = re.compile(r"([.,()!?'])")
_DROPPED = re.compile(r'"')
_TO_SPACE = re.compile(r"<br />|[;:]")

# How text is put in NFC before its tokens are split: a bundle records it (config.json's "unicode_normalization",
# bundle.py) and its text is read so, as it was trained (features.Featurizer's unicode_form).
AS_WRITTEN = None  # before NFC was done: the text as it came, lowercased (a bundle without the entry)
NFC_FIRST = "NFC"  # NFC, then lowercased: a word could end up out of NFC, and normalizing it again composed it
NFC_TOKENS = "NFC-tokens"  # NFC again after lowercasing and dropping '"': every token in NFC (written since)
UNICODE_FORMS = (AS_WRITTEN, NFC_FIRST, NFC_TOKENS)


def nfc(text):
    """``text`` in Unicode's normalization form C (precomposed characters: ``e`` + U+0301 becomes U+00E9), the
    same string when it is NFC already (ASCII always is: the cheap checks first). Before lowercasing: text that is
    NFC already is lowercased exactly as before. The native featurizer calls it on its chunks of documents too
    (native_features), so both give the same tokens."""
    if text.isascii() or unicodedata.is_normalized("NFC", text):
        return text
    return unicodedata.normalize("NFC", text)


def lowered(text, form=NFC_TOKENS):
    """``text`` put in NFC as ``form`` says (one of :data:`UNICODE_FORMS`) and lowercased: the first steps of
    :func:`normalize_text`, what the native featurizer's C++ splits (native_features; the rest of the rules are
    ASCII). With :data:`NFC_TOKENS`, its ``"`` dropped and NFC again: lowercasing can leave text out of NFC (``Ά``
    with a combining ypogegrammeni U+0345 lowercases to ``ά`` + U+0345, which is ``ᾴ`` in NFC; ``Ϊ`` + U+0301 to
    ``ΐ``), and so can a dropped ``"`` between a letter and its accent. The rules after it compose nothing: they put
    spaces around and in place of ASCII punctuation, and nothing composes with a space. ASCII text is returned with
    its ``"`` (NFC changes none of it, and the rules after drop them): a pass over Yelp-sized text for nothing."""
    text = (text if form is AS_WRITTEN else nfc(text)).lower()
    return nfc(_DROPPED.sub("", text)) if form == NFC_TOKENS and not text.isascii() else text


def normalize_text(text, form=NFC_TOKENS):
    """``form``: how the text is put in NFC (:data:`UNICODE_FORMS`: :func:`lowered`); a bundle's text is read with
    the form it records, so :data:`NFC_FIRST` and :data:`AS_WRITTEN` for one written before :data:`NFC_TOKENS`."""
    text = _DROPPED.sub("", lowered(text, form))
    text = _TO_SPACE.sub(" ", text)
    text = _SPACED.sub(r" \1 ", text)
    return " ".join(text.split())


def tokenize(text, form=NFC_TOKENS):
    """Normalized whitespace tokens of one document (``form``: as :func:`normalize_text`)."""
    return normalize_text(text, form).split()


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
