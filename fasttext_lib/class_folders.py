"""Datasets laid out as class folders, one document per file (IMDB's ``aclImdb/train/pos/*.txt``, 20 Newsgroups'
``20news-bydate-train/<group>/<number>``, BBC News' ``bbc/<topic>/*.txt``), written as one ``label,text`` CSV file
that every reader takes (``import-folders``: :func:`folders_to_csv`), and named as such where a directory is given as
data (:func:`directory_hint`).

The class is the folder's name and the text the file's content, whole: its line breaks are kept inside the quoted CSV
field (the readers take such a field whole; normalizing turns line breaks and IMDB's ``<br />`` into spaces), only
the file's last line end dropped. The header is ``label,text`` unless a class is called ``label`` (then ``class``
is: :func:`_header`). Rows are in sorted order, by folder then by file name, so the same folders give the
same bytes on any file system. Hidden files and folders (``.DS_Store``, ``.ipynb_checkpoints``) are no documents;
files beside the class folders (aclImdb's ``urls_pos.txt``, ``labeledBow.feat``) are left out, with a note.

A folder named as unlabeled data (aclImdb's ``unsup``) is refused unless skipped (``--skip unsup``): written as a
class it would train a third class of 50,000 reviews that are positive and negative alike, and dropped without being
asked, a user's own class of that name would be lost. Either way the user says which, once, in the command.
"""
import codecs
import io
import itertools
import os
import shlex
import unicodedata

from . import storage
from .binary_data import bom_charset
from .columns import HEADER_LOOKAHEAD
from .errors import FastTextError, refuse_standard_output
from .formats import CSV_FIELD_LIMIT
from .lines import DECOMPRESS_ERRORS, MAX_LINE_BYTES, decompressed
from .shell_words import shell_word
from .writers import compressing

UNLABELED_NAMES = ("unsup", "unlabeled", "unlabelled")  # aclImdb's unsup/: reviews without a rating
SHOWN = 6  # folder and file names a message lists before "... and N more"
# The header's names, the first of each that no class (no document in the readers' look-ahead) is: a class called
# "label" made the header "label,text" a document to every reader (a class that recurs names no column), and a row
# Label,Text a repeat of the header, skipped. (Each is a name the readers know: columns.HEADER_LABEL_NAMES, ...)
CLASS_HEADER_NAMES = ("label", "class", "category", "target")
TEXT_HEADER_NAMES = ("text", "document", "content", "body")
# A document is one CSV field of the file written, which every reader refuses over formats.CSV_FIELD_LIMIT characters
# ("a field longer than 16 Mi characters"), or where a line of it is over lines.MAX_LINE_BYTES ("line longer than 64
# MiB"): in UTF-8 (the file's), its quotes doubled, with the class and the quotes around the text on its first and last
# line (room for a folder's name of 255 bytes, quoted, each quote doubled): LINE_BYTES. One that long is refused here,
# naming its file. A file is read up to the bytes that many characters take at most (4 each, in UTF-8, UTF-16 or
# UTF-32; with room for a byte order mark and the last line end): a 10 GB file, or a gzip "bomb" (10 MB of gzip of
# 10 GB of zeros), was read whole into memory, which ran out (a crash, no error line), or written as a row that every
# reader refused.
LINE_BYTES = MAX_LINE_BYTES - 1024
DOCUMENT_BYTES = 4 * CSV_FIELD_LIMIT + 16
_FIELD_BOUND = (f"the {CSV_FIELD_LIMIT >> 20} Mi characters a document may be (every reader refuses a CSV field that "
                f"long)")


def _visible(entries):
    return [e for e in entries if not e.name.startswith(".")]


def _listed(path):
    """``(folders, files)``: the sorted names of ``path``'s visible subfolders and of its other visible entries."""
    with os.scandir(path) as it:
        entries = _visible(it)
    folders = sorted(e.name for e in entries if e.is_dir())
    return folders, sorted(e.name for e in entries if not e.is_dir())


def _names(names):
    shown = ", ".join(names[:SHOWN])
    return shown + (f", ... and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def _is_class_folder(path):
    """Whether ``path`` holds documents (files) and no folders: a class folder."""
    try:
        folders, files = _listed(path)
    except OSError:
        return False
    return bool(files) and not folders


def directory_hint(path, then="", split="train"):
    """What to do with the local directory ``path`` given as labeled data, when it is a class-folder dataset or a
    folder of them (aclImdb/: train/ and test/); else ``""``. Appended to "expected a file but got a directory".
    ``then``: what to do with the file written, said after the command (predict's: :func:`predict_then`); ``split``:
    the folder of such a folder the command reads, when it holds one (``test`` for held-out data: --validation,
    predict, evaluate), else ``train``, else its first."""
    try:
        folders, _ = _listed(path)
    except OSError:
        return ""
    classes = [name for name in folders if _is_class_folder(os.path.join(path, name))]
    if classes:
        skip = [name for name in classes if name.lower() in UNLABELED_NAMES]
        return (f"; it is a directory of class folders ({_names(classes)}): write it as one CSV file first, with "
                f"python -m fasttext_lib import-folders --input {shell_word(path)} --output FILE.csv"
                + "".join(f" --skip {shlex.quote(name)}" for name in skip) + f"{then} (docs/INPUT.md#class-folders)")
    splits = [name for name in folders if any(_is_class_folder(os.path.join(path, name, sub))
                                              for sub in _listed(os.path.join(path, name))[0])]
    if splits:
        example = os.path.join(path, next((name for name in (split, "train") if name in splits), splits[0]))
        return (f"; it holds folders of class folders ({_names(splits)}): write each as one CSV file first, with "
                f"python -m fasttext_lib import-folders --input {shell_word(example)} --output FILE.csv{then} "
                f"(docs/INPUT.md#class-folders)")
    return ""


def predict_then(model):
    """What ``predict`` does with the CSV file that import-folders writes of class folders (:func:`directory_hint`'s
    ``then``): they are labeled documents, so ``evaluate`` scores ``model`` against their classes, and ``predict``
    answers each one's text (the class column not scored), as it reads any labeled CSV."""
    model = shell_word(str(model))
    return (f"; then evaluate --model {model} --data FILE.csv scores the model against their classes, or predict "
            f"--model {model} --input FILE.csv answers each document")


def refuse_a_directory(uri, flag="", then="", split="train"):
    """A local directory given as labeled data (``flag``: the option that named it, or ""): one line, which names a
    class-folder dataset's folders and the command that writes them as one file (:func:`directory_hint`; ``then``:
    what to do with it after, for ``predict``; ``split``: which of train/ and test/ to write, for held-out data
    ``test``)."""
    if not storage.is_s3(uri) and os.path.isdir(uri):
        raise FastTextError(f"{flag + ': ' if flag else ''}expected a file but got a directory: {uri}"
                            f"{directory_hint(uri, then, split)}")


class _Said:
    """How :func:`folders_to_csv`'s refusals name what its user gave: the command line's flags (``--skip unsup``:
    import-folders), or the Python API's arguments (``skip=['unsup']``: a notebook's cell, which has no flags)."""

    def __init__(self, flags):
        self.flags = flags

    def option(self, flag, argument):
        """The option or argument itself: ``--output`` / ``uri``."""
        return flag if self.flags else argument

    def given(self, flag, argument, value, listed=False):
        """The option or argument with ``value`` (``listed``: an argument that takes a list of them)."""
        return f"{flag} {value}" if self.flags else f"{argument}={[value] if listed else value!r}"


FLAGS, ARGUMENTS = _Said(True), _Said(False)


def _check_encoding(encoding, said=FLAGS):
    """Refuse an ``encoding`` that is no charset files are written in (lines.text_codec, the endpoint's rule for a
    request's charset): unicode_escape read the six characters caf\\xe9 as café, punycode was a traceback."""
    from .lines import NoCharset, text_codec

    given = said.given("--encoding", "encoding", encoding)
    try:
        text_codec(encoding)
    except LookupError:
        raise FastTextError(f"{given}: no text encoding Python knows; give one such as utf-8 "
                            f"(the default) or latin-1") from None
    except NoCharset as exc:
        raise FastTextError(f"{given}: Python's {exc.codec} codec reads no text file; give the files' "
                            f"encoding, such as utf-8 (the default) or latin-1") from None


def class_documents(directory, skip=(), said=FLAGS):
    """``[(class, [file path, ...]), ...]`` of the class folders of ``directory``, both sorted by name, those named
    in ``skip`` left out; and the notes to give. Refuses (FastTextError) what is no class-folder dataset, naming
    what to change as ``said`` (:class:`_Said`)."""
    directory = str(directory)
    if storage.is_s3(directory):
        raise FastTextError(f"{said.option('--input', 'directory')} {directory}: the class folders are read from a local directory; copy them "
                            f"down first (aws s3 sync {directory} DIR)")
    if storage.is_a_loop(directory):  # ("no such directory", of a name that is there)
        raise storage.missing_file(directory, said.option('--input', 'directory'))
    if not os.path.isdir(directory):
        what = "no such directory" if not os.path.exists(directory) else "not a directory"
        raise FastTextError(f"{said.option('--input', 'directory')}: {what}: {directory} (expected a directory of class folders, one document "
                            f"per file)")
    folders, files = _listed(directory)
    if not folders and not files:
        raise FastTextError(f"{directory} is empty: expected a directory of class folders (such as pos/ and neg/), "
                            f"each holding one document per file")
    if not folders:
        raise FastTextError(f"{directory} holds no class folders, only files ({_names(files)}): expected one folder "
                            f"per class, each holding one document per file (a file of labeled data is read by "
                            f"{'train --train' if said.flags else 'train()'} as it is)")
    skip = [_folder_name(name, directory) for name in skip]
    for name in skip:
        if name not in folders:
            raise FastTextError(f"{said.given('--skip', 'skip', name, listed=True)}: no folder {name} in {directory} (its folders: {_names(folders)})")
    notes = []
    if files:
        notes.append(f"{directory}: {len(files)} file(s) beside the class folders left out ({_names(files)})")
    classes = []
    for name in folders:
        path = os.path.join(directory, name)
        inside, documents = _listed(path)
        if name in skip:
            notes.append(f"{path}: skipped, {len(documents)} file(s) not written ({said.given('--skip', 'skip', name, listed=True)})")
            continue
        if inside:
            raise FastTextError(f"{path} holds folders ({_names(inside)}): expected one document per file in each "
                                f"class folder; is the directory of class folders {path}?")
        if not documents:
            raise FastTextError(f"{path} holds no documents: a class folder needs one file per document at least "
                                f"(hidden files are none); remove it, or "
                                f"{'' if said.flags else 'pass '}{said.given('--skip', 'skip', name, listed=True)}")
        if name.lower() in UNLABELED_NAMES:
            raise FastTextError(f"{path}: a folder of unlabeled documents by its name ({len(documents)} file(s), as "
                                f"IMDB's unsup); written as the class {name!r} they would train a class of their "
                                f"own: pass {said.given('--skip', 'skip', name, listed=True)} to leave them out")
        for document in documents:
            if not os.path.isfile(os.path.join(path, document)):
                raise FastTextError(f"{os.path.join(path, document)} is not a regular file (a broken link, a FIFO, "
                                    f"a socket): a class folder holds one document per file")
        classes.append((name, [os.path.join(path, document) for document in documents]))
    _refuse_folders_read_as_one_class([name for name, _ in classes], directory)
    if len(classes) < 2:
        left = f"only one class folder ({classes[0][0]})" if classes else "no class folder"
        skipped = f" once {_names(skip)} {'is' if len(skip) == 1 else 'are'} skipped" if skip else ""
        raise FastTextError(f"{directory} holds {left}{skipped}: a classifier needs two classes or more")
    return classes, notes


def _folder_name(skipped, directory):
    """A ``--skip`` value as a folder's name: ``unsup/`` as a shell completes it, or ``aclImdb/train/unsup``, the
    folder's path in ``directory``, name the folder ``unsup``."""
    name = skipped.rstrip("/" + os.sep) or skipped
    parent = os.path.dirname(name)
    if parent and os.path.isdir(os.path.join(directory, os.path.basename(name))) \
            and os.path.realpath(parent) == os.path.realpath(directory):
        return os.path.basename(name)
    return name


def _refuse_folders_read_as_one_class(names, directory):
    """Folder names that every reader takes for one class (its class is read stripped: ``pos`` and ``pos ``), that
    training refuses as one class in two Unicode normalizations (``café`` as macOS writes it, NFD, beside an NFC
    copy), or for none (a blank name: a row without a class), refused before anything is written."""
    seen = {}
    for name in names:
        if not name.strip():
            raise FastTextError(f"{os.path.join(directory, name)}: a folder named {name!r} gives no class (a class is "
                                f"read without the spaces at its ends); rename it")
        other = seen.setdefault(unicodedata.normalize("NFC", name.strip()), name)
        if other != name:
            raise FastTextError(f"{directory}: the folders {ascii(other)} and {ascii(name)} are one class as it is "
                                f"read (without the spaces at its ends, its accents composed: NFC), written as two; "
                                f"rename one, or move its files into the other")


def _header(classes, rows):
    """The header row: its class column's name no class's (case aside), its text column's no text's among ``rows``
    (the first documents, which the readers look ahead to)."""
    taken = {name.strip().lower() for name, _ in classes}
    texts = {text.strip().lower() for _, text in rows}
    label = next((name for name in CLASS_HEADER_NAMES if name not in taken), None)
    text = next((name for name in TEXT_HEADER_NAMES if name not in texts), None)
    if label is None or text is None:
        names = CLASS_HEADER_NAMES if label is None else TEXT_HEADER_NAMES
        raise FastTextError(f"classes or documents named {', '.join(names)}, each: no name is left for the CSV's "
                            f"header row; rename one")
    return f"{label},{text}\n"


def _quoted(value):
    return '"' + value.replace('"', '""') + '"'


def csv_row(label, text):
    """One row: the text always quoted (Python's csv writer leaves a field with a lone ``\\r`` unquoted, which a
    reader takes as a line end), the class where CSV needs it."""
    plain = not any(c in label for c in ',"\r\n') and label == label.strip()
    return f"{label if plain else _quoted(label)},{_quoted(text)}\n"


def _read_document(path, encoding, said=FLAGS):
    """A file's text, its last line end dropped; bytes the encoding cannot read are refused naming the file (a UTF-8
    file's byte order mark is no part of its text), and the encoding to give as ``said`` (:class:`_Said`), as is a
    text longer than a reader takes (:data:`DOCUMENT_BYTES`). Compressed data is read as the readers read it
    (:func:`_document_bytes`)."""
    utf8 = codecs.lookup(encoding).name == "utf-8"
    raw = _document_bytes(path, encoding)
    try:
        text = raw.decode("utf-8-sig" if utf8 else encoding)
    except UnicodeDecodeError as exc:
        marked = bom_charset(raw)
        if marked:
            hint = (f"it starts with a {marked.upper()} byte order mark: pass "
                    f"{said.given('--encoding', 'encoding', marked)}")
        else:
            hint = (f"if the files are Latin-1 (20 Newsgroups' are), pass "
                    f"{said.given('--encoding', 'encoding', 'latin-1')}")
        raise FastTextError(f"{path}: not {'UTF-8' if utf8 else encoding} (byte 0x{raw[exc.start]:02x} at offset "
                            f"{exc.start}); {hint}") from None
    if "\x00" in text:
        raise FastTextError(f"{path}: holds NUL characters (\\x00), as a binary file or UTF-16 text read as "
                            f"{encoding} does; remove the file, or pass the "
                            + ("--encoding it is written in" if said.flags else "encoding it is written in (encoding=...)"))
    text = text[:-2] if text.endswith("\r\n") else text[:-1] if text.endswith(("\n", "\r")) else text
    if len(text) > CSV_FIELD_LIMIT:
        raise _too_long(path, f"{len(text)} characters", _FIELD_BOUND)
    if 4 * len(text) > LINE_BYTES:  # (else no line of it is that long, in characters of 4 bytes each, UTF-8's most)
        longest = max(len(line) + line.count(b'"') for line in text.encode("utf-8").split(b"\n"))
        if longest > LINE_BYTES:
            raise _too_long(path, f"a line of {longest} bytes as written (UTF-8, its quotes doubled)",
                            f"the {MAX_LINE_BYTES >> 20} MiB a line may be (every reader refuses a line that long)")
    return text


def _document_bytes(path, encoding):
    """A document's bytes, decompressed where they are gzip, bzip2, xz or .lzma data, and zstd data, archives and
    binary tables refused, by the readers' rule (lines.decompressed: by their structure, told from text in
    ``encoding``; refused with advice for a file in a class folder). Read as bytes of the encoding, a bzip2 file was
    trained on as a review of garbage under ``--encoding latin-1`` (which decodes any byte), and each was told to pass
    that encoding without it. At most :data:`DOCUMENT_BYTES` are read (decompressed), one more to tell a longer one."""
    compression = None
    try:
        with open(path, "rb") as f:  # (closed here: a GzipFile leaves the file it is given open)
            stream, compression = decompressed(f, path, charsets=(encoding,), document=True)
            with stream:
                raw = _read_at_most(stream, DOCUMENT_BYTES + 1)
    except DECOMPRESS_ERRORS as exc:
        if compression is None or getattr(exc, "errno", None):  # (a file that may not be read, or gone since the
            raise FastTextError(f"cannot read {path}: {exc.strerror or exc}") from None  # folder was listed)
        raise FastTextError(f"{path}: corrupt or truncated {compression} data ({exc})") from None
    if len(raw) > DOCUMENT_BYTES:
        raise _too_long(path, f"over {DOCUMENT_BYTES >> 20} MiB{' decompressed' if compression else ''}", _FIELD_BOUND)
    return raw


def _read_at_most(stream, size, chunk=1 << 20):
    """Up to ``size`` bytes of ``stream``, read a ``chunk`` at a time: one read(size) set aside ``size`` bytes for
    every file, however short."""
    chunks = []
    while size > 0 and (data := stream.read(min(chunk, size))):
        chunks.append(data)
        size -= len(data)
    return b"".join(chunks)


def _too_long(path, size, bound):
    """The refusal of a document longer than a reader takes: ``size``, how long it is; ``bound``, the length it may
    be, and why."""
    return FastTextError(f"{path}: {size}, longer than {bound}; split it into documents, or move it out of the class "
                         f"folder")


def folders_to_csv(directory, uri, skip=(), encoding="utf-8", overwrite=False, note=None, on_written=None,
                   overwrite_as=None):
    """Write the class folders of the local ``directory`` as one ``label,text`` CSV file (a header, one row per file:
    the class its folder's name, the text its content) at ``uri`` (local or ``s3://``; compressed if it ends in .gz,
    .bz2, .xz or .lzma), atomically: the file appears whole or not at all, a failure or Ctrl-C midway leaves what was
    there. ``skip``: folder names to leave out; ``encoding``: the files' (20 Newsgroups': latin-1); ``overwrite``:
    replace an existing ``uri`` (else refused); ``note``: a callable given lines on what was left out. Returns ``{class:
    documents written}``; ``on_written`` is called with it once the file is in place. ``overwrite_as``: how the refusal
    of an existing ``uri`` says to replace it (None: this function's ``overwrite=True``; the command line passes its
    flag, storage.OVERWRITE_FLAG), which also has every other refusal and note name the command line's flags
    (``--encoding``) where it is the flag, else this function's arguments (``encoding=``). ``~`` in ``directory`` or
    ``uri``: the home folder."""
    directory, uri = storage.expand_home(directory), storage.expand_home(uri)  # (~: the home folder's, as readers do)
    overwrite_as = overwrite_as or storage.OVERWRITE_ARGUMENT
    said = FLAGS if overwrite_as == storage.OVERWRITE_FLAG else ARGUMENTS  # (the command line's, or the Python API's)
    output = said.option("--output", "uri")
    refuse_standard_output(uri, output, "the CSV file", "a file")
    _check_encoding(encoding, said)
    skip = list(dict.fromkeys(skip))
    classes, notes = class_documents(directory, skip, said)
    uri = str(uri)
    storage.check_output_file(uri, "train.csv", output, overwrite=overwrite,
                              hint=f"{storage.replace_with(overwrite_as)}, or choose another {output}")
    if not storage.is_s3(uri):  # written into a class folder, a second run would read it as a document
        inside = os.path.realpath(os.path.dirname(os.path.abspath(uri)))
        if any(inside == os.path.realpath(os.path.dirname(paths[0])) for _, paths in classes):
            raise FastTextError(f"{output} {uri} is inside a class folder, where it would be read as a document "
                                f"the next time; write it elsewhere")
    counts = {name: len(paths) for name, paths in classes}
    with storage.atomic_write(uri, "wb", overwrite=overwrite, overwrite_as=overwrite_as,
                              on_written=on_written and (lambda: on_written(counts))) as raw:
        out = compressing(raw, uri)
        text = io.TextIOWrapper(out, encoding="utf-8", newline="")
        empty = []  # files of no text: written (each is a document of its folder), and named after
        rows = ((name, _noted_if_empty(_read_document(path, encoding, said), path, empty))
                for name, paths in classes for path in paths)
        ahead = list(itertools.islice(rows, HEADER_LOOKAHEAD + 1))
        text.write(_header(classes, ahead))
        for name, document in itertools.chain(ahead, rows):
            text.write(csv_row(name, document))
        text.flush()
        text.detach()
        if out is not raw:
            out.close()
    if empty:  # (training says only "N documents have no words", with no file to look at)
        notes.append(f"{len(empty)} file(s) hold no text, written as empty documents ({_names(empty)})")
    for line in notes if note else ():
        note(line)
    return counts


def _noted_if_empty(text, path, empty):
    if not text.strip():
        empty.append(path)
    return text
