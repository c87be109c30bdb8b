"""fastText's text normalization, shared by data prep, training and inference.

These are the rules of ``normalize_text`` in fastText's ``classification-example.sh``:
lowercase; put spaces around ``. , ( ) ! ?`` and ``'``; drop ``"``; turn ``;``, ``:`` and ``<br />`` into spaces;
squeeze spaces. We also squeeze tabs and newlines, since tokens are split on any whitespace.
Before those, text is put in Unicode's composed form (NFC: :func:`nfc`), so that a word is one token however its
accents are encoded (``café`` with U+00E9, or ``e`` and a combining U+0301, as macOS file names and some editors
write it), and again once lowercased and its ``"`` dropped (:data:`NFC_TOKENS`), so every token is in NFC. And
(:data:`QUOTES_AND_BREAKS`) typographic apostrophes and quotes are read as the ASCII ones (``don’t`` is ``don't``,
``“great”`` is ``"great"``, :data:`APOSTROPHES`, :data:`DOUBLE_QUOTES`), and ``<br>`` and ``<br/>`` are line breaks
as ``<br />`` is (:data:`LINE_BREAKS`), so a word is the same feature whatever keyboard or HTML wrote it. The
function is idempotent, so normalizing already-normalized text (a file ``prepare`` wrote) changes nothing.
"""
import re
import unicodedata

LABEL_PREFIX = "__label__"  # fastText format's class word (data.py); never a feature (without_labels)
_LABEL_WORD = re.compile(r"(?<!\S)" + re.escape(LABEL_PREFIX) + r"\S*")  # \s, \S: str.split's whitespace
_SPACED = re.compile(r"([.,()!?'])")
_DROPPED = re.compile(r'"')
_TO_SPACE = re.compile(r"<br />|[;:]")
LINE_BREAKS = ("<br />", "<br/>", "<br>")  # HTML line breaks as scraped reviews (IMDB, Amazon) spell them
_TO_SPACE_EVERY_BREAK = re.compile("|".join(map(re.escape, LINE_BREAKS)) + "|[;:]")  # (featurize.cc matches them too)
# Typographic apostrophes, read as "'" (then a token of its own, as fastText's rule puts it), and quotes, read as '"'
# (then dropped): phones' and word processors' "smart punctuation" writes ’ “ ” for ' and "; German „...“ and
# ‚...‘, reversed ‛ ‟, French « ». U+02BC (modifier letter apostrophe) is how some keyboards (Ukrainian) and
# editors write the apostrophe in words; U+00B4 (acute accent, spacing) is what European keyboards give for
# one (don´t). Not primes (U+2032, U+2033: feet and inches, minutes), nor fullwidth or CJK quotes: not what
# anyone types for ' or ".
APOSTROPHES = "\u2018\u2019\u201a\u201b\u02bc\u00b4"
DOUBLE_QUOTES = "\u201c\u201d\u201e\u201f\u00ab\u00bb"

# How text is put in NFC before its tokens are split: a bundle records it (config.json's "unicode_normalization",
# bundle.py) and its text is read so, as it was trained (features.Featurizer's unicode_form).
AS_WRITTEN = None  # before NFC was done: the text as it came, lowercased (a bundle without the entry)
NFC_FIRST = "NFC"  # NFC, then lowercased: a word could end up out of NFC, and normalizing it again composed it
NFC_TOKENS = "NFC-tokens"  # NFC again after lowercasing and dropping '"': every token in NFC
# and typographic apostrophes and quotes read as ASCII ones, <br> and <br/> as <br /> (written since)
QUOTES_AND_BREAKS = "NFC-tokens-quotes-br"
UNICODE_FORMS = (AS_WRITTEN, NFC_FIRST, NFC_TOKENS, QUOTES_AND_BREAKS)  # (oldest first)
# How models trained now read text (Featurizer.fit, count_tokens: looked up when they run), recorded in their
# bundles and checkpoints; other forms are only read, as the bundles that record them were trained.
TRAINING_FORM = QUOTES_AND_BREAKS


def reads_every_line_break(form):
    """Whether text read in ``form`` has its ``<br>`` and ``<br/>`` (:data:`LINE_BREAKS`) as spaces, not only its
    ``<br />`` (the native featurizer is told so: native_features)."""
    return form == QUOTES_AND_BREAKS


def nfc(text):
    """``text`` in Unicode's normalization form C (precomposed characters: ``e`` + U+0301 becomes U+00E9), the
    same string when it is NFC already (ASCII always is: the cheap checks first). Before lowercasing: text that is
    NFC already is lowercased exactly as before. The native featurizer calls it on its chunks of documents too
    (native_features), so both give the same tokens."""
    if text.isascii() or unicodedata.is_normalized("NFC", text):
        return text
    return unicodedata.normalize("NFC", text)


def lowered(text, form=TRAINING_FORM):
    """``text`` put in NFC as ``form`` says (one of :data:`UNICODE_FORMS`) and lowercased: the first steps of
    :func:`normalize_text`, what the native featurizer's C++ splits (native_features; the rest of the rules are
    ASCII). With :data:`NFC_TOKENS`, its ``"`` dropped and NFC again: lowercasing can leave text out of NFC (``Ά``
    with a combining ypogegrammeni U+0345 lowercases to ``ά`` + U+0345, which is ``ᾴ`` in NFC; ``Ϊ`` + U+0301 to
    ``ΐ``), and so can a dropped ``"`` between a letter and its accent. The rules after it compose nothing: they put
    spaces around and in place of ASCII punctuation, and nothing composes with a space. With
    :data:`QUOTES_AND_BREAKS`, its typographic apostrophes are ``'`` and its typographic quotes dropped too, before
    that NFC (a dropped “ may stand between a letter and its accent as a '"' may; ' composes with nothing). ASCII
    text is returned with its ``"`` (NFC changes none of it, it has no typographic quote, and the rules after drop
    them): a pass over Yelp-sized text for nothing."""
    text = (text if form is AS_WRITTEN else nfc(text)).lower()
    if text.isascii() or form not in (NFC_TOKENS, QUOTES_AND_BREAKS):
        return text
    if form == QUOTES_AND_BREAKS:
        text = _ascii_quotes(text)
    return nfc(text.replace('"', ""))


def _ascii_quotes(text):
    """``text`` with :data:`APOSTROPHES` as ``'`` and without :data:`DOUBLE_QUOTES` (the rules drop '"'). One
    ``str.replace`` each: ~0.5 ms for a MB of text, where ``str.translate`` takes 50 (it has no fast path for text
    outside ASCII) and a regular expression 6; none of these characters changes case or takes part in NFC."""
    for apostrophe in APOSTROPHES:
        text = text.replace(apostrophe, "'")
    for quote in DOUBLE_QUOTES:
        text = text.replace(quote, "")
    return text


def normalize_text(text, form=TRAINING_FORM):
    """``form``: how the text is put in NFC (:data:`UNICODE_FORMS`: :func:`lowered`); a bundle's text is read with
    the form it records, so :data:`NFC_TOKENS`, :data:`NFC_FIRST` or :data:`AS_WRITTEN` for one written before
    :data:`QUOTES_AND_BREAKS` (whose ``<br>`` and ``<br/>`` were parts of words, as its quotes were)."""
    text = _DROPPED.sub("", lowered(text, form))
    text = (_TO_SPACE_EVERY_BREAK if reads_every_line_break(form) else _TO_SPACE).sub(" ", text)
    text = _SPACED.sub(r" \1 ", text)
    return " ".join(text.split())


def tokenize(text, form=TRAINING_FORM):
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
