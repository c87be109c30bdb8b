"""Writing labeled text: fastText-format files (``__label__2 the food was great .``, normalized) and Zhang et al.
CSV files (``"2","the food ""rocked""\\nreally"``), each written atomically to a local path or ``s3://`` URI.

What a format cannot hold (a NUL or a lone surrogate in either; in fastText format also a label that is empty or
holds whitespace, or a word of a text that starts with ``__label__``) is refused in one line naming the label or the
document, and an older file is replaced only once the new one is written in full, so what is written reads back as it
was meant (:mod:`fasttext_lib.data` reads it).
"""
import io

from . import storage
from .errors import FastTextError, refuse_standard_output
from .stops import telling_stops
from .text import LABEL_PREFIX, normalize_text


def fasttext_line(label, text):
    return f"{LABEL_PREFIX}{label} {normalize_text(text)}\n"


def write_fasttext(data, uri):
    """Write normalized fastText-format lines atomically to a local path or ``s3://`` URI.

    A label with whitespace (a CSV class such as ``very good``) is refused: written as ``__label__very good``
    it read back as the class ``very`` and the text ``good ...``. ``~``: the home folder."""
    uri = storage.expand_home(uri)  # (~: the home folder's, as the readers read it)
    refuse_standard_output(uri, "uri", "the fastText file", "a file")
    check_fasttext_labels(data, uri)
    with storage.atomic_write(uri, "wb") as f:
        write_fasttext_rows(data, f, uri)
    return str(uri)


def splits_written_line(prefix, stem):
    """The line of a Stop once ``stem``'s splits are written to ``prefix``: :func:`write_fasttext_splits`' last steps,
    and notebook 01's look at them just after its write (workspace.Workspace.writing_data)."""
    return (f"stopped by the user once {stem}'s splits were written to {prefix} (all of them, whole: the older ones "
            f"are replaced); run the cell again to go on")


# (a Stop: one line in a notebook; one that left the pair mixed is said so, storage.atomic_writes' note)
@telling_stops(lambda splits, prefix, stem, *_, **__: f"stopped by the user while writing {stem}'s splits to "
               f"{prefix}; none was replaced (written together: an older one is as it was); run the cell again "
               f"to write them",
               done=lambda splits, prefix, stem, *_, **__: splits_written_line(prefix, stem))
def write_fasttext_splits(splits, prefix, stem, names=None):
    """Each split of ``splits`` (``{"train": data, "test": data}``) to ``{prefix}/{stem}.{name}``, written together:
    all in full before any replaces an older file (storage.atomic_writes), so a failure in one (a full disk, a text
    the format cannot hold) never leaves a new train split beside the old test split. ``names`` (``{label: name}``,
    :attr:`~fasttext_lib.data.LabeledTexts.names`): also ``{stem}.classes.txt`` (``id=name`` lines) beside them, put
    in place first, as download.prepare writes a dataset's, where reading a split finds it (label_names.py). Returns
    ``{name: uri}`` (and ``"label_names"``: that file's)."""
    from .label_names import SUFFIX

    prefix = storage.expand_home(prefix)  # (~: the home folder's, as the readers read it)
    refuse_standard_output(prefix, "prefix", "the splits", "a directory")
    uris = {name: storage.join(prefix, f"{stem}.{name}") for name in splits}
    for name, data in splits.items():  # before anything is written
        check_fasttext_labels(data, uris[name])
    names_file = [storage.join(prefix, stem + SUFFIX)] if names else []
    # (a refusal says what to do as this function's caller does it: notebook 01 and the Python API have no command)
    with storage.atomic_writes(names_file + list(uris.values()), overwrite_as=storage.OVERWRITE_ARGUMENT) as files:
        if names:
            files[0].write("".join(f"{label}={name}\n" for label, name in names.items()).encode("utf-8"))
        for (name, data), f in zip(splits.items(), files[len(names_file):]):
            write_fasttext_rows(data, f, uris[name])
    return {**uris, "label_names": names_file[0]} if names else uris


def check_fasttext_labels(data, uri):
    bad = next((label for label in dict.fromkeys(data.labels) if not label or any(c.isspace() for c in label)), None)
    if bad is not None:
        raise FastTextError(f"cannot write the label {bad!r} to the fastText-format file {uri}: labels there may not be "
                            f"empty or hold whitespace (write CSV instead, or rename the class)")
    _check_no_nul(data, uri)


def _check_no_nul(data, uri):
    """A label or text holding NUL (``\\x00``) is refused before anything is written: every reader refuses a file
    with NUL bytes as no text (UTF-16, binary), so the written file could not be read back (fastText reads NUL as a
    word break, training from memory as part of a word). In a string it is mostly a sign of a source read with the
    wrong encoding (UTF-16 read as Latin-1: a NUL after every letter), which a space would hide."""
    bad = next((label for label in dict.fromkeys(data.labels) if "\x00" in label), None)
    if bad is not None:
        raise FastTextError(f"cannot write the label {bad!r} to {uri}: it holds a NUL character (\\x00), which a text "
                            f"file cannot hold (reading it back would refuse it as binary); rename the class")
    row = next((i for i, text in enumerate(data.texts, start=1) if "\x00" in text), None)
    if row is not None:
        text = data.texts[row - 1]
        raise FastTextError(f"cannot write document {row} (class {data.labels[row - 1]!r}) to {uri}: its text holds "
                            f"{text.count(chr(0))} NUL character(s) (\\x00, at position {text.index(chr(0))}), which a "
                            f"text file cannot hold (reading it back would refuse it as binary; was its source UTF-16 "
                            f"read as another encoding?); remove them, or replace them with spaces")


def write_fasttext_rows(data, f, uri, order=None, numbers=None):
    """fastText-format lines (labels checked by :func:`check_fasttext_labels`) into a binary file object, in the
    order of the document indices ``order`` (None: as they are); errors name a document by its number in
    ``numbers`` (a sample's rows in its source), else by its place in ``data`` (from 1).

    A text holding a word that starts with ``__label__`` (``__LABEL__`` too: normalizing lower-cases it) is
    refused: the format has no way to write it, and the file read back as a second label on that line
    (an error here, a silent extra class in fastText), so the written file could not be trained on."""
    writer = io.TextIOWrapper(f, encoding="utf-8", newline="\n")
    for index in (range(len(data)) if order is None else order):
        row = index + 1 if numbers is None else numbers[index]
        label, text = data.labels[index], data.texts[index]
        line = fasttext_line(label, text)
        if line.count(LABEL_PREFIX) > 1 and any(w.startswith(LABEL_PREFIX) for w in line.split()[1:]):
            raise FastTextError(f"cannot write document {row} (class {label!r}) to the fastText-format file {uri}: its text "
                                f"holds a word starting with {LABEL_PREFIX!r}, which that format reads as a second label "
                                f"(remove or rename that word, or write CSV instead)")
        try:
            writer.write(line)
        except UnicodeEncodeError as exc:
            raise FastTextError(_not_unicode(row, label, uri, exc)) from None
    writer.flush()
    writer.detach()


def _not_unicode(row, label, uri, exc):
    # a lone surrogate ("\ud800": JSON's escapes, or bytes decoded with errors="surrogateescape") stopped the write
    # in a traceback
    return (f"cannot write document {row} (class {label!r}) to {uri}: it is not valid Unicode text (character "
            f"{exc.object[exc.start]!r}, a lone surrogate); remove it")


def csv_line(label, text):
    """One Zhang et al. CSV row (quotes doubled, line breaks as a literal backslash-n)."""
    body = text.replace('"', '""').replace("\n", "\\n")
    return f'"{label}","{body}"\n'


def write_csv(data, uri, overwrite=True):
    """Write Zhang et al. CSV rows atomically (``overwrite=False``: refuse an existing ``uri``, saying to pass
    ``overwrite=True``). A label or text holding NUL is refused first, as by :func:`write_fasttext`. ``~``: the home
    folder."""
    uri = storage.expand_home(uri)  # (~: the home folder's, as the readers read it)
    refuse_standard_output(uri, "uri", "the CSV file", "a file")
    _check_no_nul(data, uri)
    with storage.atomic_write(uri, "wb", overwrite=overwrite, overwrite_as=storage.OVERWRITE_ARGUMENT) as f:
        write_csv_rows(data, f, uri)
    return str(uri)


def write_csv_rows(data, f, uri="the CSV file"):
    """Zhang et al. CSV rows into the binary file ``f`` (``uri``: its name, for errors)."""
    for row, (label, text) in enumerate(zip(data.labels, data.texts), start=1):
        try:
            f.write(csv_line(label, text).encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise FastTextError(_not_unicode(row, label, uri, exc)) from None


def compressing(raw, uri):
    """``raw`` (a binary stream) wrapped to compress what is written as ``uri``'s ending says: gzip (``.gz``), bzip2
    (``.bz2``), xz (``.xz``), legacy LZMA (``.lzma``: ``xz --format=lzma``'s, which the readers read too), or ``raw``
    itself. The wrapper's ``close`` leaves ``raw`` open. (A ``.vec.bz2`` or a ``trials.csv.gz`` got plain text under
    that name, which bzcat, zcat and readers that go by the name refused.)"""
    import bz2
    import gzip
    import lzma

    ending = uri.lower().rsplit(".", 1)[-1]
    if ending == "gz":
        return gzip.GzipFile(fileobj=raw, mode="wb", mtime=0)  # (mtime 0: the same content, the same bytes)
    if ending == "bz2":
        return bz2.BZ2File(raw, "wb")
    if ending == "lzma":
        return lzma.LZMAFile(raw, "wb", format=lzma.FORMAT_ALONE)
    return lzma.LZMAFile(raw, "wb") if ending == "xz" else raw


# Endings of formats :func:`compressing` does not write, which the tools and readers that go by a file's name (unzip,
# zstd -d, tar, pandas' read_csv) take it to be: text written under such a name, they all refused
NOT_WRITTEN = {"zip": "a zip archive", "zst": "zstd data", "tar": "a tar archive"}
COMPRESSED_ENDINGS = ("gz", "bz2", "xz", "lzma")  # what compressing writes


def refuse_a_name_not_written(uri, written_as, extension):
    """Refuse an output ``uri`` named as a format :func:`compressing` does not write (:data:`NOT_WRITTEN`: ``.zip``,
    ``.zst``, ``.tar``, or a ``.tar.gz`` whose gzip holds no tar archive): it would be ``written_as`` text under that
    name. ``extension``: the file's own (``.vec``), for the names :func:`compressing` writes."""
    endings = str(uri).lower().rsplit("/", 1)[-1].split(".")[1:] or [""]
    compressed_tar = endings[-1] in COMPRESSED_ENDINGS and endings[-2:-1] == ["tar"]
    if compressed_tar or endings[-1] in NOT_WRITTEN:
        names = ", ".join(f"{extension}.{ending}" for ending in COMPRESSED_ENDINGS)
        raise FastTextError(f"{uri}: {written_as}, or compressed by gzip, bzip2, xz or LZMA ({names}), not as "
                            f"{NOT_WRITTEN['tar' if compressed_tar else endings[-1]]}; give another name")


def compressed(data, uri):
    """``data`` (bytes) compressed as ``uri``'s ending says (:func:`compressing`)."""
    out = io.BytesIO()
    f = compressing(out, uri)
    if f is out:
        return data
    with f:
        f.write(data)
    return out.getvalue()
