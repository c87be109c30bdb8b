"""Is the training data read right? Refusals of classes that cannot train a classifier (none, one) or that are
not classes at all: a CSV read with its columns the wrong way round (the reviews taken for classes) or pandas' row
numbers taken for classes. Each is one error line that says which column was read as the class and how to fix the
file; :func:`check_classes` runs them before anything is featurized (train.train).
"""
import contextlib
import os
import re
import sys

from .columns import distinct_row_numbers, restarted_row_numbers
from .data import CLASS_FROM_FASTTEXT, SAMPLE_DOCS, CountedTexts, pandas_class_column
from .errors import FastTextError
from .formats import separator_bytes
from .shell_words import shell_word
from .text import nfc
from .unknown_labels import case_folded, invisible_in, invisible_named, removal, without_invisible

MANY_CLASSES = 20  # from this many classes on, more classes than half the documents, named like text, is data read wrong


def classes_look_like_text(classes):
    """Do class values read like documents rather than labels: the middle one (by length) of four or more words, or
    over 40 characters (text without spaces)? A CSV with the class last and no header reads its reviews as classes;
    labels are a word or a short name (``book_flight``, ``Sci/Tech``, ``Society & Culture``, ``1 star``)."""
    words = sorted(len(c.split()) for c in classes)
    chars = sorted(len(c) for c in classes)
    return words[len(words) // 2] >= 4 or chars[len(chars) // 2] > 40


def texts_look_like_labels(texts, labels):
    """Do the documents' texts read like the labels of a class-last file read class first (``great food,positive``:
    the class ``great food``, the text ``positive``): at most half as many different texts as different classes among
    the same documents? Short texts (three words or fewer) pass :func:`classes_look_like_text` as classes, but then
    the texts are the few real labels, repeated; a genuine set of many classes has a text of its own per document.
    Texts that read like text themselves (:func:`classes_look_like_text`) are no labels: a multi-label set written as
    one row per tag (each abstract repeated with each of its tags) repeats its documents, not labels.
    ``(distinct texts, the most frequent one)`` when they do, else None."""
    counts = {}
    for text in texts:
        key = " ".join(text.split())
        counts[key] = counts.get(key, 0) + 1
    if not counts or 2 * len(counts) > len(set(labels)) or classes_look_like_text(list(counts)):
        return None
    return len(counts), max(counts, key=counts.get)


def _where_classes_were(data):
    """What the many-classes refusal says of where ``data``'s classes were read from (``data.class_from``): what is
    true of the file read, a CSV header that named the class column, or none."""
    where = getattr(data, "class_from", "")
    if isinstance(where, list):  # several files that differ in it (data.class_from_files): each file's own
        kinds = {}
        for uri, one in where:
            kinds.setdefault(one, []).append(os.path.basename(str(uri).rstrip("/")) or str(uri))
        said = "; ".join(
            f"{', '.join(names[:3])}{f' and {len(names) - 3} more' if len(names) > 3 else ''}: "
            + ("its __label__ words (fastText format)" if one == CLASS_FROM_FASTTEXT else
               f"{one}, as the header row names it" if one else "the first column (no header row names one)")
            for one, names in kinds.items())
        return (f"is the text in the class column? The files differ in where each row's class is read from ({said}): "
                f"in a file whose rows hold the text first, name the columns in a header row (text,label)")
    if where == CLASS_FROM_FASTTEXT:
        return ("are the __label__ words texts? In fastText format each line's class is its __label__ word "
                "(__label__positive the text)")
    if where:
        return (f"is the text in the class column? The header row names {where} as the class column: name the "
                f"columns in the order the rows hold them (text,label when each row's text comes first)")
    return ("is the text in the class column? Without a header row naming it the class is the first column: put "
            "it first, or add a header row that names it (e.g. text,label)")


def refuse_classes_spelled_alike(classes, data=None):
    """Refuse two classes that are one label in two Unicode normalizations (``café`` precomposed and ``cafe`` + a
    combining accent: files joined from two sources). They trained as two classes, each with part of the class's
    documents, shown alike in every prediction and table; the text is read in NFC, its labels as written. Then two
    that differ in invisible characters alone (:func:`_invisible_characters_refusal`; ``data``: the training data,
    whose lines the error names)."""
    _refuse_a_pair(classes, nfc, lambda other, label: (
        f"training data has classes {ascii(other)} and {ascii(label)}, one label in two Unicode normalizations "
        f"(precomposed letters and combining accents), which would train as two classes shown alike; write the "
        f"labels one way (NFC: unicodedata.normalize('NFC', label))"))
    _refuse_a_pair(classes, lambda label: without_invisible(nfc(label)),
                   lambda other, label: _invisible_characters_refusal(other, label, data))


def _pairs_alike(classes, key):
    """``(earlier, later)`` for each class whose ``key`` an earlier one of ``classes`` has (the first with it)."""
    seen = {}
    for label in classes:
        other = seen.setdefault(key(label), label)
        if other != label:
            yield other, label


def _refuse_a_pair(classes, key, message):
    """Refuse the first two of ``classes`` that share a ``key``: one label written two ways, which would train as two
    classes. ``message(earlier, later)``: the error's text."""
    for other, label in _pairs_alike(classes, key):
        raise FastTextError(message(other, label))


def _invisible_characters_refusal(other, label, data):
    """The refusal's text of two classes that are one label but for invisible characters (unknown_labels.
    without_invisible: a zero-width space, a soft hyphen, a byte order mark, a word joiner, a direction mark; a
    zero-width joiner at an end), in some rows only: a label pasted from a web page or a spreadsheet cell. The readers
    strip whitespace around a class, not these; the two trained as two classes, each with part of the class's
    documents, printed alike in evaluate's table and the notebooks', without a word. Each character is named, and
    removed by the fix: naming the first alone, the fix left a label with a second one (a soft hyphen and a zero-width
    space) a class of its own."""
    hidden = list(dict.fromkeys(invisible_in(other) + invisible_in(label)))  # (each once, in the order met)
    column = pandas_class_column(data) if data is not None else "label"
    named, them = invisible_named(hidden)
    return (f"training data has classes {ascii(other)}{_first_place(data, other)} and "
            f"{ascii(label)}{_first_place(data, label)}, one label with {named} in some rows, which would train as "
            f"two classes shown alike; write the labels without {them} ({removal(column, hidden)})")


def warn_classes_cased_alike(classes, data=None):
    """A ``warning:`` line for classes that are one label in two cases (``Positive`` in some rows, ``positive`` in
    others: a column labelled by hand, or files joined from two sources). They train as two classes, each with part
    of the class's documents; the text is lowercased, its labels are not. A warning, not a refusal: classes that
    differ in case alone can be meant (``#NYC`` and ``#nyc`` tags), as fastText keeps them. (After the Unicode check:
    two normalizations of one label are named as that.) Each spelling is named with where it is first met in
    ``data`` (the training data, :func:`_first_place`), and the line says how to merge them (:func:`_how_to_merge`)."""
    pairs = [sorted(pair) for pair in _pairs_alike(classes, case_folded)]
    if pairs:
        more = f" (and {len(pairs) - 3} more pairs)" if len(pairs) > 3 else ""
        shown = "; ".join(" and ".join(f"{c!r}{_first_place(data, c)}" for c in pair) for pair in pairs[:3])
        line = (f"warning: training data has classes {shown}{more}, each one label written in two cases, which train "
                f"as separate classes; if they are one class, write the labels one way ({_how_to_merge(data, pairs)})")
        if _SAID is not None:
            if line in _SAID:
                return
            _SAID.add(line)
        print(line, file=sys.stderr)


def _first_place(data, label):
    """`` (train.txt:3)``: where ``label`` is first met in ``data`` (read from a file: data.LabeledTexts.first_lines),
    or `` (train_data.labels[2])`` (a DataFrame's column: its position)."""
    if data is None:
        return ""
    if label in data.first_lines:
        uri, line = data.first_lines[label]
        return f" ({uri}:{line})"
    return f" (train_data.labels[{list(data.labels).index(label)}])"


_COMMAND_SAFE = re.compile(r"[\w-]+")  # labels the printed command holds as written (no quote, no regex character)


def _how_to_merge(data, pairs):
    """How to write the classes of ``pairs`` one way (lowercased): a pandas line of the class column
    (data.pandas_class_column), or for fastText-format files, which have no column, a perl line that rewrites their
    ``__label__`` words in place (keeping ``.bak`` copies): each file read (the classes of one may be first met in
    another), all local, none compressed (perl edits no gzip; else the words to rewrite are named), each quoted for a
    shell; a word is a label where the reader takes one, at the start of a token (``x__label__Pos`` is text).

    Perl, not sed: GNU sed's ``\\t`` and ``\\xHH`` escapes, which the separators need, are no BSD sed's (a Mac's), and
    ``perl -i.bak -pe`` reads alike on macOS and Linux (Debian's perl-base is required). ``-C0``: the files are read as
    bytes whatever ``PERL_UNICODE`` says, as :func:`formats.separator_bytes` matches them. The separator before a
    label is matched and kept out of the rewrite (``\\K``), the one after only looked at (``(?=...)``): matched as part
    of the label (sed's ``\\2``), it was consumed, and of two labels a separator apart only the first was rewritten."""
    files = list(dict.fromkeys(uri for uri, _ in getattr(data, "files", ())))
    column = pandas_class_column(data)  # (the file's own: a header's sentiment, a JSON Lines key, a Series' name)
    if column is not None or not files:  # (a fastText file has no column for pandas to name)
        column = "label" if column is None else column
        return f"pandas: df[{column!r}] = df[{column!r}].str.lower()"
    spelled = sorted({c for pair in pairs for c in pair if c != c.lower()})
    if (any("://" in uri or uri == "-" or compression for uri, compression in data.files)
            or not all(_COMMAND_SAFE.fullmatch(c) and _COMMAND_SAFE.fullmatch(c.lower()) for c in spelled)):
        return f"the __label__ words in the file{'s' if len(files) > 1 else ''}"
    separator = separator_bytes()
    # (a line's start may hold a UTF-8 byte order mark, Notepad's, which the reader skips before a label)
    before = f"(?:^(?:\\xef\\xbb\\xbf)*|{separator})"  # (every mark a line starts with: the reader skips them all)
    program = "; ".join(f"s/{before}\\K__label__{c}(?={separator}|$)/__label__{c.lower()}/g" for c in spelled)
    paths = " ".join(shell_word(uri) for uri in files)
    return f"{'this file' if len(files) == 1 else 'these files'}: perl -C0 -i.bak -pe '{program}' {paths}"


_SAID = None  # inside warnings_said_once(): the warnings said so far


@contextlib.contextmanager
def warnings_said_once():
    """Within the block (an autotune search, whose every trial and refit is a train() of the same data), each of
    these warnings is said once: it was said again by each trial, four lines of a short search."""
    global _SAID
    outer = _SAID
    _SAID = set() if outer is None else outer
    try:
        yield
    finally:
        _SAID = outer


def check_classes(train_data, classes):
    """Refuse ``train_data`` (whose sorted distinct labels are ``classes``) when it cannot train a classifier, or
    when its classes were read from the wrong column (one error line each)."""
    if len(train_data) == 0:
        raise FastTextError("training data is empty")
    if len(classes) < 2:
        raise FastTextError(f"training data has a single class ({classes[0]!r}); a classifier needs at least 2")
    refuse_classes_spelled_alike(classes, train_data)
    warn_classes_cased_alike(classes, train_data)
    if len(classes) >= MANY_CLASSES:
        # A CSV with the class last and no header ("the review","positive") reads the review as the class:
        # a model of (nearly) one class per document, trained without a word. Either the classes, more than half
        # the documents, read like text, or, when the reviews are short ("great food","positive"), the texts read
        # like labels: a few values, repeated. (A genuine small set of many short labels, 20 intents in 30
        # sentences, trains.)
        texts = train_data.sample if isinstance(train_data, CountedTexts) else train_data.texts[:SAMPLE_DOCS]
        if len(classes) == len(train_data) and distinct_row_numbers(classes):
            # every document a class of its own, each a whole number: row numbers (pandas' index written without a
            # header, df.to_csv(path, header=False): 0,positive,the text), the real class read as the text's first word
            raise FastTextError(
                f"training data has {len(classes)} classes for {len(train_data)} documents, each a different whole "
                f"number ({', '.join(repr(c) for c in train_data.labels[:3])}, ...): row numbers, not classes; is the "
                f"first column pandas' index (df.to_csv(path, header=False) writes it first)? Write the file with "
                f"index=False; a classifier needs several documents per class")
        if restarted_row_numbers(train_data.labels, texts):
            # the same after pd.concat: the numbers start again at each frame (0..545, 0..999), so each class was
            # 1 to 2 documents, and trained on without a word
            raise FastTextError(
                f"training data has {len(classes)} classes for {len(train_data)} documents, whole numbers that count "
                f"up and start again ({', '.join(repr(c) for c in train_data.labels[:3])}, ...), each text opening "
                f"with one of a few words ({', '.join(repr(w) for w in sorted({t.split()[0] for t in texts if t.split()})[:3])}"
                f", ...): row numbers, not classes; is the first column pandas' index (pd.concat(...).to_csv(path, "
                f"header=False) writes it first)? Write the file with index=False")
        repeated = texts_look_like_labels(texts, train_data.labels[:len(texts)])
        if repeated or (2 * len(classes) > len(train_data) and classes_look_like_text(classes)):
            example = max(classes, key=len)
            texts_are = (f"; the texts hold only {repeated[0]} different value(s), such as {repeated[1][:60]!r}"
                         if repeated else "")
            raise FastTextError(f"training data has {len(classes)} classes for {len(train_data)} documents (one is "
                                f"{example[:60]!r}{texts_are}): {_where_classes_were(train_data)}; a classifier "
                                f"needs several documents per class")
