"""fastText's text normalization, shared by data prep, training and inference.

These are the rules of ``normalize_text`` in fastText's ``classification-example.sh``:
lowercase; put spaces around ``. , ( ) ! ?`` and ``'``; drop ``"``; turn ``;``, ``:`` and ``<br />`` into spaces;
squeeze spaces. We also squeeze tabs and newlines, since tokens are split on any whitespace.
Before those, text is put in Unicode's composed form (NFC: :func:`nfc`), so that a word is one token however its
accents are encoded (``café`` with U+00E9, or ``e`` and a combining U+0301, as macOS file names and some editors
write it), and again once lowercased and its ``"`` dropped (:data:`NFC_TOKENS`), so every token is in NFC. And
(:data:`QUOTES_AND_BREAKS`) typographic apostrophes and quotes are read as the ASCII ones (``don’t`` is ``don't``,
``“great”`` is ``"great"``, :data:`APOSTROPHES`, :data:`DOUBLE_QUOTES`), and ``<br>`` and ``<br/>`` are line breaks
as ``<br />`` is (:data:`LINE_BREAKS`), so a word is the same feature whatever keyboard or HTML wrote it. And
(:data:`FORMED_BREAKS`) the rules are applied until nothing changes: squeezing whitespace, or putting a space for
``;``, ``:`` or a line break, can form a ``<br />`` (``<br\\t/>``, ``<br;/>``, ``a<br<br>/>b``), a space too. So the
function is idempotent: normalizing already-normalized text (a file ``prepare`` wrote) changes nothing. Under that
rule too, characters nobody sees are dropped (:data:`INVISIBLE`: a byte order mark inside a line, a soft hyphen) and a
zero-width space splits words as a space does. And (:data:`MARKS`) emoji variation selectors and bidirectional
controls are dropped too (:data:`_MARK`): ``❤️`` is ``❤``, and a Hebrew word with a right-to-left mark the word.
"""
import re
import unicodedata

LABEL_PREFIX = "__label__"  # fastText format's class word (formats.py); never a feature (without_labels)
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
# Characters that show nothing and join or split no word, dropped (since FORMED_BREAKS): the byte order mark
# U+FEFF (a Windows file's first bytes, inside a line where files were joined), the word joiner U+2060 and the soft
# hyphen U+00AD (a hyphenation hint: inter\u00adnational is international). Not the zero-width joiners U+200C and
# U+200D, which change how Persian words and emoji are written. The zero-width space U+200B splits words: a space.
INVISIBLE = "\ufeff\u2060\u00ad"
ZERO_WIDTH_SPACE = "\u200b"
# Characters that choose how the character before them is drawn, or which way text runs, and make no word (dropped
# since MARKS): the variation selectors U+FE00-U+FE0F (U+FE0F: ❤️ is U+2764 U+FE0F, the emoji style phones write;
# U+FE0E the text style) and U+E0100-U+E01EF (ideographic variants of Japanese names), and the bidirectional
# controls: the direction marks U+200E, U+200F and U+061C (web pages and phones put them beside Hebrew and Arabic
# words), the embeddings and overrides U+202A-U+202E, the isolates U+2066-U+2069. Not the zero-width joiners U+200C,
# U+200D (INVISIBLE's comment) nor the tag characters U+E0020-U+E007F, which spell a subdivision's flag (England's).
BIDI_CONTROLS = "\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069"  # (a regex class's ranges)
_MARKS = "\ufe00-\ufe0f\U000e0100-\U000e01ef" + BIDI_CONTROLS  # (a class's ranges)
_MARK = re.compile(f"[{_MARKS}]")

# How text is put in NFC before its tokens are split: a bundle records it (config.json's "unicode_normalization",
# bundle_format.py) and its text is read so, as it was trained (features.Featurizer's unicode_form).
AS_WRITTEN = None  # before NFC was done: the text as it came, lowercased (a bundle without the entry)
NFC_FIRST = "NFC"  # NFC, then lowercased: a word could end up out of NFC, and normalizing it again composed it
NFC_TOKENS = "NFC-tokens"  # NFC again after lowercasing and dropping '"': every token in NFC
# and typographic apostrophes and quotes read as ASCII ones, <br> and <br/> as <br /> (text.LINE_BREAKS)
QUOTES_AND_BREAKS = "NFC-tokens-quotes-br"
# and a <br /> the rules form (<br\t/>, once whitespace is squeezed) a space too: applied until nothing changes
# (normalize_text is idempotent; written since). Under the rules before, normalizing text once more could change it.
# Also invisible characters dropped (INVISIBLE: \ufeffgreat is great) and a zero-width space read as a space
FORMED_BREAKS = "NFC-tokens-quotes-br-fixpoint"
# and emoji variation selectors and bidirectional controls dropped (_MARK: ❤️ is ❤, שלום\u200f is שלום)
MARKS = "NFC-tokens-quotes-br-fixpoint-marks"
UNICODE_FORMS = (AS_WRITTEN, NFC_FIRST, NFC_TOKENS, QUOTES_AND_BREAKS, FORMED_BREAKS, MARKS)  # (oldest first)
# How models trained now read text (Featurizer.fit, count_tokens: looked up when they run), recorded in their
# bundles and checkpoints; other forms are only read, as the bundles that record them were trained.
TRAINING_FORM = MARKS


def _since(form, rule):
    """Whether ``form`` (one of :data:`UNICODE_FORMS`) has the steps ``rule`` added: it is ``rule`` or a later one."""
    return form in UNICODE_FORMS[UNICODE_FORMS.index(rule):]


def reads_every_line_break(form):
    """Whether text read in ``form`` has its ``<br>`` and ``<br/>`` (:data:`LINE_BREAKS`) as spaces, not only its
    ``<br />``, and its typographic quotes as ASCII ones (the native featurizer is told so: native_features)."""
    return _since(form, QUOTES_AND_BREAKS)


def reads_formed_line_breaks(form):
    """Whether text read in ``form`` has the ``<br />`` its rules form as a space too (:data:`FORMED_BREAKS`)."""
    return _since(form, FORMED_BREAKS)


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
    spaces around and in place of ASCII punctuation, and nothing composes with a space. Since
    :data:`QUOTES_AND_BREAKS`, its typographic apostrophes are ``'`` and its typographic quotes dropped too, before
    that NFC (a dropped “ may stand between a letter and its accent as a '"' may; ' composes with nothing). ASCII
    text is returned with its ``"`` (NFC changes none of it, it has no typographic quote, and the rules after drop
    them): a pass over Yelp-sized text for nothing. Since :data:`FORMED_BREAKS`, a zero-width space is a space before
    lowercasing, as it splits words as one (to the final-sigma rule it was a character nobody sees: ΟΔΟΣ\u200bΑΛΛΟΣ
    lowercased to οδοσ, not οδος), and the characters nobody sees are dropped (:func:`_visible`); since
    :data:`MARKS`, the variation selectors and bidirectional controls too (:func:`_unmarked`)."""
    if reads_formed_line_breaks(form) and ZERO_WIDTH_SPACE in text:  # (free for ASCII text: no such character there)
        text = text.replace(ZERO_WIDTH_SPACE, " ")
    text = (text if form is AS_WRITTEN else nfc(text)).lower()
    if text.isascii() or not _since(form, NFC_TOKENS):
        return text
    if reads_every_line_break(form):
        text = _ascii_quotes(text)
    if reads_formed_line_breaks(form):
        text = _visible(text)
    if _since(form, MARKS):
        text = _unmarked(text)
    return nfc(text.replace('"', ""))


def _visible(text):
    """``text`` without the characters nobody sees (:data:`INVISIBLE`): a byte order mark inside a line (Windows
    files joined with ``cat``) made ``\ufeffgreat`` a word of its own, unknown where ``great`` was known. One
    ``str.replace`` each, as :func:`_ascii_quotes`; they change no case (to the final-sigma rule they are as absent)
    and take part in no composition, but one between a letter and its accent kept them apart (the NFC after composes
    them)."""
    for character in INVISIBLE:
        if character in text:
            text = text.replace(character, "")
    return text


def _unmarked(text):
    """``text`` without its variation selectors and bidirectional controls (:data:`_MARK`): ``❤️`` (U+2764 U+FE0F) was
    another word than ``❤``, and a word with a direction mark beside it (copied from a web page) another than the
    word, so text that reads the same got other answers. Text with no character past U+00FF (accented Latin text,
    once its typographic quotes are ASCII ones) has none of them: its Latin-1 encoding is a copy (~0.02 ms a MB; for
    other text it stops, at most ~1 ms a MB in, at the first wider character). Other text is searched once, with a
    precompiled regular expression (~5 ms a MB below U+10000, ~3 past it, where lowercasing and NFC take ~11; ``in``
    checks take 3 for the 27 marks below U+10000 alone), and changed only where one is found. They are nonspacing
    marks or formatting characters: case-ignorable, as absent to the final-sigma rule, so dropped after lowercasing as
    before it; one between a letter and its accent kept them apart (the NFC after composes them)."""
    try:
        text.encode("latin-1")
        return text
    except UnicodeEncodeError:
        return _MARK.sub("", text) if _MARK.search(text) else text


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
    """``form``: how the text is put in NFC (:data:`UNICODE_FORMS`: :func:`lowered`) and which rules follow; a
    bundle's text is read with the form it records, so :data:`FORMED_BREAKS` for one written before :data:`MARKS`
    (its variation selectors and direction marks parts of words), :data:`QUOTES_AND_BREAKS` for one written before
    :data:`FORMED_BREAKS` (the rules applied once), :data:`NFC_TOKENS`, :data:`NFC_FIRST` or :data:`AS_WRITTEN` for
    one written before that (whose ``<br>`` and ``<br/>`` were parts of words, as its quotes were)."""
    text = _punctuation_rules(lowered(text, form), form)
    return _without_formed_line_breaks(text) if reads_formed_line_breaks(form) else text


def _punctuation_rules(text, form):
    """fastText's rules (all ASCII) on lowered text: '"' dropped, ``;``, ``:`` and line breaks spaces, punctuation
    spaced, whitespace squeezed."""
    text = _DROPPED.sub("", text)
    text = (_TO_SPACE_EVERY_BREAK if reads_every_line_break(form) else _TO_SPACE).sub(" ", text)
    text = _SPACED.sub(r" \1 ", text)
    return " ".join(text.split())


def _without_formed_line_breaks(text):
    """``text`` (the rules' result) as the rules give it applied again and again until it no longer changes
    (:data:`FORMED_BREAKS`; it ends: every change takes characters out), in one pass over its tokens.

    In their result the rules can change only a ``<br />`` they formed: it has no '"', ``;``, ``:`` or whitespace but
    single spaces, its punctuation is spaced, and its ``<br>`` and ``<br/>`` were taken out (a line break formed
    anew holds the space put for something: only ``<br />`` has one). So only a token ending in ``<br`` before one
    starting with ``/>`` change: both lose those ends (``x<br />y`` is ``x y``); one left empty goes, and its
    neighbours meet (``a<br<br />/>b``: ``a<br />b``, then ``a b``). :func:`lowered` changes nothing of the result
    (lowercase, NFC, its quotes dropped), so it is not repeated. Each repetition took out one level of line breaks
    formed inside each other, a pass over the text each (a hostile review of a MB: ~10^5 passes): here a stack of the
    tokens kept cancels them as they come, as featurize.cc's FormedBreaks does."""
    if "<br />" not in text:
        return text
    kept = []  # [token, start, end]: what is left of each token kept, token[start:end] (cut without copying)
    for token in text.split(" "):
        start = 0
        while kept and token.startswith("/>", start) and kept[-1][0].endswith("<br", kept[-1][1], kept[-1][2]):
            start += 2
            kept[-1][2] -= 3
            if kept[-1][1] == kept[-1][2]:
                kept.pop()
        if start < len(token):
            kept.append([token, start, len(token)])
    return " ".join(token[start:end] for token, start, end in kept)


def tokenize(text, form=TRAINING_FORM):
    """Normalized whitespace tokens of one document (``form``: as :func:`normalize_text`)."""
    return normalize_text(text, form).split()


# Every character any form's rules do more to than lowercase and compose (:func:`lowered`'s passes, then
# :func:`_punctuation_rules` and the line breaks, which all hold a '<'); \s is str.split's whitespace (str.isspace)
_RULED = re.compile(f"[\\s.,()!?'\";:<{APOSTROPHES}{DOUBLE_QUOTES}{INVISIBLE}{ZERO_WIDTH_SPACE}{_MARKS}]")


def one_token(word, form=TRAINING_FORM):
    """The one token :func:`tokenize` reads ``word`` (in NFC) as, else None (none, or several): what a ``.vec`` word
    is to the rule ``form`` (vec_files.VocabularyMatch). A word whose lowercase holds no character the rules do more
    to (:data:`_RULED`: no punctuation, space, quote, mark) and is in NFC is that lowercase, whatever the form: the
    rules' passes change nothing of it (~0.3 us for a Cyrillic word, where they take ~5: a published .vec holds
    millions of words). Another word is read by the rules."""
    if word.isascii() and word.isalnum() and word.islower():  # (most words of a large file: no lowercasing copy)
        return word
    folded = word.lower()  # (a character's lowercase holds every _RULED character it held: they have no case)
    if folded and not _RULED.search(folded) and (folded == word or nfc(folded) == folded):
        return folded
    tokens = tokenize(word, form)
    return tokens[0] if len(tokens) == 1 else None


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


# ---------------------------------------------------------------- documents recognized again

FINGERPRINTS_KEPT = 1024  # at most this many of a data set's documents are fingerprinted (~20 KB of metrics.json)


def fingerprint(text, form=TRAINING_FORM):
    """A 64-bit hash of a document as the model reads it (its normalized text, by the rule ``form``: the model's,
    :data:`UNICODE_FORMS`): the same in a CSV and in the fastText file ``prepare`` writes of it, whatever its quotes or
    case."""
    return fingerprint_of_normalized(normalize_text(text, form).encode("utf-8"))


def fingerprint_of_normalized(raw):
    """:func:`fingerprint` of a document whose normalized text, UTF-8 encoded, is ``raw`` (the native tokenizer's
    tokens joined by a space: ``native_features.normalized_utf8``)."""
    import hashlib

    return int.from_bytes(hashlib.sha256(raw).digest()[:8], "big")


def sampled_fingerprints(texts, form=TRAINING_FORM):
    """``{"fraction": f, "fingerprints": [hex, ...]}``: the fingerprints of the documents of ``texts`` whose fingerprint
    falls in the lowest fraction ``f`` of the range, ``f`` chosen so that about :data:`FINGERPRINTS_KEPT` are kept. A
    sample by content, not by position: another file holding those documents, in any order, shows the same ones
    (:func:`is_sampled`). ``form``: the model's text rule, which they are read by again (trained_on.TrainedOnCheck)."""
    fraction = min(1.0, FINGERPRINTS_KEPT / max(len(texts), 1))
    values = (fingerprint(text, form) for text in texts)
    kept = sorted({f"{value:016x}" for value in values if is_sampled(value, fraction)})
    return {"fraction": fraction, "fingerprints": kept}


def is_sampled(value, fraction):
    """Whether the fingerprint ``value`` is among those :func:`sampled_fingerprints` keeps at ``fraction``."""
    return value < fraction * 2.0 ** 64
