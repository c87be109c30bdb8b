"""Label names: what a dataset's classes mean (``"2"`` -> ``"positive"``), shown instead of the raw id.

Data keeps its raw labels (``__label__2``); a mapping ``{raw label: name}`` travels beside it and
is stored in the bundle's ``config.json`` (``"label_names"``), so predictions, tables, the confusion
matrix and the endpoint say ``"positive"`` while the raw label stays available (``"class_id"``).

Where training takes a mapping from (the first that applies):

1. an explicit one: ``train --label-names`` (CLI and SageMaker hyperparameter) or
   ``LabeledTexts.names`` set by the caller. A names file (local or ``s3://``), a known dataset
   (``--label-names ag_news``: :data:`KNOWN`), inline ``1=negative,2=positive`` (or a JSON
   object), or ``none`` for no names. Every id it names must be a label of the training data;
2. a names file beside the training data: ``<stem>.classes.txt`` next to ``<stem>.<ext>``
   (``prepare`` writes ``yelp_review_polarity.classes.txt`` beside ``yelp_review_polarity.train``;
   ``.train.gz`` / ``.bz2`` / ``.xz`` too),
   else ``classes.txt`` in the same folder (the Zhang et al. archives' own layout), else, for data in
   a folder named as an unpacked Zhang et al. archive (``yelp_review_polarity_csv/``, whose archive has
   no classes.txt), that dataset's names from :data:`KNOWN`. Ids it names that the training data lacks
   (a ``limit``-ed split) are dropped; a ``classes.txt`` elsewhere must fit the data (:func:`kept_for_data`:
   another dataset's is refused); else the same beside the validation or test data read with it
   (:func:`find_beside_either`: two that differ are refused);
3. nothing: each label is its own name.

A names file is either the Zhang et al. ``classes.txt`` (line *i* names class ``i``) or ``id=name``
lines (or JSON: a list naming classes ``0``, ``1``, ... as Hugging Face's ``ClassLabel`` does, or an object of them); lines starting with ``#`` are comments in both (in classes.txt lines ``#`` alone or before a space: ``#sports``
may be a hashtag class, and is refused), as a title above the names would shift each name one class off (a
classes.txt line ending in ``:``, ``names:``, is refused as one; so is a first line of title words, ``Classes``, above
more names than the data has classes: :func:`refuse_a_title`). Labels a mapping does not name keep their raw id as name. Every malformed mapping (an empty
or duplicate name, an id given twice, a binary or huge file) is a :class:`FastTextError`.
"""
import copy
import json
import os
import re

from . import storage
from .errors import FastTextError
from .lines import utf16_text
from .text import nfc

SUFFIX = ".classes.txt"
ZHANG_FILE = "classes.txt"
MAX_FILE_BYTES = 1 << 20
MAX_NAME_CHARS = 200
NONE_WORDS = ("", "none", "null")  # --label-names none: no names, even with a names file beside the data


def _numbered(*names):
    return {str(i): name for i, name in enumerate(names, 1)}


_STARS = _numbered("1 star", "2 stars", "3 stars", "4 stars", "5 stars")
_POLARITY = _numbered("negative", "positive")
# The meanings of the Zhang, Zhao & LeCun (2015) classes, as their archives' classes.txt and readme.txt
# state them (the polarity and full-star sets say it in readme.txt only: 1 = negative, 2 = positive;
# 1 to 5 stars).
KNOWN = {
    "ag_news": _numbered("World", "Sports", "Business", "Sci/Tech"),
    "amazon_review_polarity": _POLARITY,
    "amazon_review_full": _STARS,
    "dbpedia": _numbered("Company", "EducationalInstitution", "Artist", "Athlete", "OfficeHolder",
                         "MeanOfTransportation", "Building", "NaturalPlace", "Village", "Animal", "Plant",
                         "Album", "Film", "WrittenWork"),
    "sogou_news": _numbered("sports", "finance", "entertainment", "automobile", "technology"),
    "yahoo_answers": _numbered("Society & Culture", "Science & Mathematics", "Health", "Education & Reference",
                               "Computers & Internet", "Sports", "Business & Finance", "Entertainment & Music",
                               "Family & Relationships", "Politics & Government"),
    "yelp_review_polarity": _POLARITY,
    "yelp_review_full": _STARS,
}


def check_name(name, what):
    if not name:
        raise FastTextError(f"{what}: empty name")
    if len(name) > MAX_NAME_CHARS:
        raise FastTextError(f"{what}: name of {len(name)} characters (at most {MAX_NAME_CHARS})")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise FastTextError(f"{what}: name {name[:40]!r} holds a control character")


def _add(mapping, label, name, what):
    label, name = label.strip(), name.strip()
    if not label:
        raise FastTextError(f"{what}: empty class id before '='")
    check_name(name, what)
    if label in mapping:
        raise FastTextError(f"{what}: class {label!r} is named twice")
    mapping[label] = name


def _check_distinct(mapping, where):
    seen = {}
    for label, name in mapping.items():
        if name in seen:
            raise FastTextError(f"{where}: classes {seen[name]!r} and {label!r} have the same name {name!r}")
        seen[name] = label
    _refuse_reused_ids(mapping, mapping, where)
    return mapping


def _refuse_reused_ids(mapping, ids, where):
    """A name that is the id of another class (``1=2,2=1``; ``ids``: the class ids) is an error: a file labeled
    ``2`` could then mean class 2 (its id) or class 1 (its name), and predictions would show class 1 as ``2``.
    (A name that is its own class's id, ``1=1``, is no clash.) Checked for every new mapping (names files,
    ``--label-names``, the names training stores); a bundle written before this check still loads (evaluate reads
    ids as ids and refuses a label that could mean either class: label_encoding.class_ids)."""
    ids = set(ids)
    clash = next(((label, name) for label, name in mapping.items() if name != label and name in ids), None)
    if clash is not None:
        label, name = clash
        raise FastTextError(f"{where}: class {label!r} is named {name!r}, which is the id of class {name!r}: data "
                            f"labeled {name} would mean either class; give class {label!r} a name that is no class id")


COMMENT = "#"  # a line starting so is a comment in both forms (no Zhang et al. class name starts so); in classes.txt
# lines only '#' alone or before a space: '#sports' may be a class (hashtags), and read as a comment it shifted every
# class after it one off (:func:`_refuse_hashtag_or_comment`)


def _is_comment(line, keyed):
    return line.startswith(COMMENT) and (keyed or line == COMMENT or line[len(COMMENT)].isspace())


def _refuse_hashtag_or_comment(line, what):
    raise FastTextError(f"{what}: {line[:40]!r} starts with '#' but not '# ': a comment or a class name? Write a "
                        f"comment as '# {line[1:40]}', and class names starting with '#' in the id=name form "
                        f"(1={line[:40]})")
_ID_NAME_LINE = re.compile(r"\d+\s*=")  # 1=negative: a class id before '=' (no classes.txt name starts so)


class NamesFile(dict):
    """A names file's mapping. ``title``: ``(where, its first line)`` when the file is classes.txt lines and that
    line reads as a title above the names (``Classes``, ``Label names``: :func:`_looks_like_a_title`), else None.
    Such a line cannot be told from class 1's name by itself; a file that then names more classes than the data has
    is refused (:func:`refuse_a_title`)."""

    def __init__(self, mapping=(), title=None):
        super().__init__(mapping)
        self.title = title


# The words a title above a list of class names is made of ("Classes", "Label names", "List of categories"); a line of
# these only, as class 1's name, with the file naming more classes than the data has, is that title.
_TITLE_WORDS = {"class", "classes", "label", "labels", "name", "names", "category", "categories", "target", "targets",
                "topic", "topics"}
_TITLE_FILLERS = {"list", "of", "the", "all", "and", "id", "ids", "our", "my", "dataset", "data"}


def _looks_like_a_title(line):
    words = re.findall(r"[^\W\d_]+", line.lower())
    return (bool(words) and any(word in _TITLE_WORDS for word in words)
            and all(word in _TITLE_WORDS | _TITLE_FILLERS for word in words)
            and not re.search(r"[^\w\s:_-]", line))


def refuse_a_title(found, labels, where):
    """Refuse a names file whose first classes.txt line reads as a title (``found.title``) when it names more classes
    than ``labels`` has: the title was class 1's name, and every name one class off (``Classes`` then ``negative``,
    ``positive`` named class 1 ``Classes`` and class 2 ``negative``)."""
    title = getattr(found, "title", None)
    classes = len(set(labels))
    if title is not None and len(found) > classes:
        at, line = title
        raise FastTextError(f"{at}: {line[:40]!r} looks like a title, not the name of class 1: with it the file names "
                            f"{len(found)} classes for the data's {classes}, each name one class off; remove it, or "
                            f"make it a comment ('# {line[:40]}')")


def parse_text(text, where):
    """A names file's text -> ``{raw label: name}`` (a :class:`NamesFile`): ``classes.txt`` lines, or ``id=name``
    lines."""
    # Lines end at \n, \r\n or \r only, as the data's lines do: str.splitlines would also end one at
    # \x0b, \x0c, \x1c-\x1e, \x85, U+2028 and U+2029, turning a name holding one into two classes and
    # silently renumbering every class after it.
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    written_as_json = _json_names(text, where)
    if written_as_json is not None:
        return NamesFile(written_as_json)
    lines = [(n, line.strip()) for n, line in enumerate(text.split("\n"), 1)]
    lines = [(n, line) for n, line in lines if line]
    first = next((line for _, line in lines if not line.startswith(COMMENT)), "")  # (the form is its)
    keyed = "=" in first
    lines = [(n, line) for n, line in lines if not _is_comment(line, keyed)]
    if not lines:
        raise FastTextError(f"{where}: names no class (empty file)")
    mapping = {}
    for n, line in lines:
        what = f"{where}:{n}"
        if keyed:
            if "=" not in line:
                raise FastTextError(f"{what}: expected id=name like the lines before, got {line[:40]!r}")
            label, _, name = line.partition("=")
            _add(mapping, label, name, what)
        else:
            if line.startswith(COMMENT):
                _refuse_hashtag_or_comment(line, what)
            if _ID_NAME_LINE.match(line):  # a title or comment above id=name lines: each name would be one class off
                raise FastTextError(f"{what}: an id=name line ({line[:40]!r}), but line {lines[0][0]} is a name "
                                    f"({lines[0][1][:40]!r}): a names file is classes.txt lines (line i names "
                                    f"class i) or id=name lines, not both; remove the line(s) that are neither, or start them with '# ' (a comment)")
            if line.endswith(":"):  # a title (names:, Classes:) read as class 1 would name each class one off
                raise FastTextError(f"{what}: {line[:40]!r} is a title, not a class name (line i names class i): "
                                    f"remove it, or make it a comment ('# {line[:40]}')")
            _add(mapping, str(len(mapping) + 1), line, what)
    first_line, first = lines[0]
    title = (f"{where}:{first_line}", first) if not keyed and _looks_like_a_title(first) else None
    return NamesFile(_check_distinct(mapping, where), title=title)


def _json_names(text, where):
    """The mapping of a names file written as JSON, else None: a list of names, as Hugging Face's ``ClassLabel`` holds
    them (``json.dump(ds.features["label"].names, f)``), names classes ``0``, ``1``, ... in its order, as the datasets
    number them; an object maps ids to names (a model config's ``id2label``), as inline JSON does. Such a file was
    read as one classes.txt line: class 1 named ``["neg", "pos"]``."""
    text = text.strip()
    if not text.startswith(("[", "{")):
        return None
    try:
        value = json.loads(text, object_pairs_hook=_refuse_repeated_ids(where))
    except ValueError:
        return None  # (not JSON: classes.txt lines, the first a name such as "[positive]")
    if isinstance(value, dict):
        return parse_inline(text, where)
    if not isinstance(value, list) or not value or not all(isinstance(name, str) for name in value):
        raise FastTextError(f"{where}: JSON, but neither a list of class names ([\"negative\", \"positive\"]: "
                            f"classes 0, 1, ...) nor an object of them ({{\"0\": \"negative\", ...}})")
    mapping = {}
    for label, name in enumerate(value):
        _add(mapping, str(label), name, where)
    return _check_distinct(mapping, where)


def parse_inline(spec, where="--label-names"):
    """``1=negative,2=positive`` or a JSON object ``{"1": "negative", ...}`` -> ``{raw label: name}``."""
    spec = spec.strip()
    mapping = {}
    if spec.startswith("{"):
        try:
            obj = json.loads(spec, object_pairs_hook=_refuse_repeated_ids(where))
        except FastTextError:
            raise
        except ValueError as exc:
            raise FastTextError(f"{where}: not a valid JSON object ({exc})") from None
        if not isinstance(obj, dict) or not all(isinstance(v, str) for v in obj.values()):
            raise FastTextError(f"{where}: a JSON mapping must map class ids to strings")
        for label, name in obj.items():
            _add(mapping, label, name, where)
    else:
        for item in spec.split(","):
            if "=" not in item:
                raise FastTextError(f"{where}: expected id=name pairs separated by commas, got {item.strip()[:40]!r}")
            label, _, name = item.partition("=")
            _add(mapping, label, name, where)
    if not mapping:
        raise FastTextError(f"{where}: names no class")
    return _check_distinct(mapping, where)


def _refuse_repeated_ids(where):
    """json.loads keeps the last of a repeated key: an id named twice is an error, as in the id=name form."""
    def pairs_to_dict(pairs):
        obj = {}
        for key, value in pairs:
            if key in obj:
                raise FastTextError(f"{where}: class {key!r} is named twice")
            obj[key] = value
        return obj
    return pairs_to_dict


def to_inline(mapping):
    """The inline form of a mapping (a SageMaker hyperparameter): ``1=negative,2=positive``, or JSON
    when a name or id holds a comma or ``=``; ``None`` for an empty mapping."""
    if not mapping:
        return None
    if any(("," in k or "=" in k or "," in v) for k, v in mapping.items()) or next(iter(mapping)).lstrip().startswith("{"):
        return json.dumps(mapping, ensure_ascii=False)
    return ",".join(f"{k}={v}" for k, v in mapping.items())


def read_file(uri, where=None):
    """A names file (local or ``s3://``; ``~``: the home folder) -> ``{raw label: name}``; errors name it as ``where``
    (default: ``uri``)."""
    uri = storage.expand_home(uri)  # (~: the home folder's, as the readers read it)
    where = where or uri
    with storage.open_read(uri, "rb") as f:
        raw = f.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:
        raise FastTextError(f"{where}: a label names file of more than {MAX_FILE_BYTES} bytes; is it the data?")
    if b"\x00" in raw:
        raise FastTextError(_not_text(raw, uri, where))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FastTextError(f"{where}: not UTF-8 text (byte {raw[exc.start]:#04x} at offset {exc.start})") from None
    return parse_text(text, where)


def _not_text(raw, uri, where):
    """The error for a names file holding NUL bytes: UTF-16 text (Windows Notepad's "Unicode") is said so at the line of
    its first NUL, with how to convert it, as the data's readers say it (lines.utf16_text); else a binary file."""
    at = raw.index(b"\x00")
    start = raw.rfind(b"\n", 0, at) + 1
    lineno = raw.count(b"\n", 0, start) + 1
    utf16 = utf16_text(raw[start:raw.find(b"\n", at) + 1 or len(raw)], uri, lineno, os.path.splitext(uri)[1] or ".txt")
    if utf16:
        return f"{where}:{lineno}: not a text file this program reads: {utf16}, or save it again as UTF-8 in its editor"
    return f"{where}: not a text file (contains NUL bytes)"


def _is_file(spec):
    # A file, not any path: "prepare --dataset ag_news --output ag_news" leaves a folder called ag_news, and
    # "--label-names ag_news" then means the dataset (it was read as that folder and refused).
    return storage.is_s3(spec) or os.path.isfile(spec)


class DatasetNames(NamesFile):
    """An explicit names file's mapping: a dataset's classes.txt, which a split of it may not all have (dbpedia's
    files are sorted by class, so a head of one holds a few of its 14). The user points at it: its names for
    classes the data lacks are dropped, where inline pairs or a dataset name naming them are an error (a typo)."""


def from_option(spec):
    """The explicit ``--label-names`` value -> ``{raw label: name}`` (``{}`` for ``none``).

    A local file or ``s3://`` URI (``~``: the home folder), a dataset of :data:`KNOWN`, or an inline mapping, in that
    order."""
    return _read_option(spec, _explicit_file)


def option_meaning(spec):
    """What a ``--label-names`` value (the job's ``label_names``) means, to tell two values of it apart (cli._Once:
    ``none`` and ``None``, ``1=a,2=b`` and ``2=b, 1=a``, ``ag_news`` and its pairs were refused as two values): the
    mapping :func:`from_option` reads, but of a file its path (read later, once: not while the options are parsed);
    a value it refuses is itself (the refusal comes when it is read)."""
    def where(path):
        return ("file", path if storage.is_s3(path) else os.path.realpath(path))

    try:
        return _read_option(spec, where)
    except FastTextError:
        return ("refused", str(spec))


def _explicit_file(path):
    names = read_file(path)
    return DatasetNames(names, title=names.title)


def _read_option(spec, file_read):
    """:func:`from_option`, a names file read by ``file_read(its path)``."""
    spec = str(storage.expand_home(spec))  # (~: the home folder's, as the readers read it)
    if spec.strip().lower() in NONE_WORDS:
        return {}
    if _is_file(spec):
        return file_read(spec)
    if spec.strip() in KNOWN:
        return dict(KNOWN[spec.strip()])
    if "=" in spec or spec.strip().startswith("{"):
        return parse_inline(spec)
    if os.path.isdir(spec):
        raise FastTextError(f"--label-names {spec!r} is a folder; give its names file (e.g. "
                            f"{os.path.join(spec, ZHANG_FILE)})")
    if os.path.lexists(spec):  # a link to nothing, or a loop (named so: "no such file" of a name that is there)
        raise storage.missing_file(spec, "--label-names")
    raise FastTextError(f"--label-names {spec!r}: no such file, not a known dataset ({', '.join(sorted(KNOWN))}) "
                        f"and not id=name pairs")


COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".lzma")  # what the data reader decompresses (by content, not by name)


def beside(data_uri):
    """Where a names file for ``data_uri`` may be: ``<stem>.classes.txt``, then ``classes.txt``."""
    data_uri = str(data_uri)
    head, sep, base = data_uri.rpartition("/")
    folder = head + sep
    for compressed in COMPRESSED_SUFFIXES:  # yelp.train.gz: its names are still yelp.classes.txt's
        if base.endswith(compressed) and "." in base[:-len(compressed)].lstrip("."):
            base = base[:-len(compressed)]
            break
    stem = base.rsplit(".", 1)[0] if "." in base.lstrip(".") else base
    return [folder + stem + SUFFIX, folder + ZHANG_FILE]


def find_beside(data_uri):
    """``(the names file beside data_uri, its mapping)`` (see :func:`beside`), ``(None, {})`` when there is none."""
    for uri in beside(data_uri):
        # The names file is optional: a role that may read the data but not list its bucket gets 403 for a
        # missing one, which must not stop training (an explicit --label-names file still reports it).
        if uri != str(data_uri) and _exists_beside(uri, data_uri) and (storage.is_s3(uri) or os.path.isfile(uri)):
            return uri, read_file(uri)
    dataset = archive_dataset(data_uri)
    if dataset is not None:
        return f"the names of {dataset} (its data is in a folder named {dataset}{ARCHIVE_SUFFIX})", dict(KNOWN[dataset])
    return None, {}


def find_beside_either(first, second, roles, way_out=""):
    """``(the names file, its mapping, the data file it is beside)`` of two data files read together, the training
    data (``first``) and its test or validation data (``second``): those beside ``first`` (:func:`find_beside`), else
    those beside ``second`` (beside it only, they were ignored, and the bundle said the classes' ids). Two that name the
    classes differently are refused, ``roles`` naming the two files as the user gave them (``("--train",
    "--validation")``) and ``way_out`` saying any other way than making them agree: which is right is the user's to
    say."""
    first_names, first_found = find_beside(first)
    second_names, second_found = find_beside(second)
    if first_names is None:
        return second_names, second_found, second
    if second_names is not None:
        refuse_disagreeing((f"{first_names} (beside {roles[0]})", first_found),
                           (f"{second_names} (beside {roles[1]})", second_found), way_out)
    return first_names, first_found, first


def refuse_disagreeing(first, second, way_out=""):
    """Refuse two names files of data read together that name the classes differently, ``first`` and ``second``
    each ``(the file as the user knows it, its mapping)``: the one rule of the CLI, notebook 01
    (:func:`find_beside_either`) and the SageMaker job's train and test channels (sm_train.names_of_channels).
    ``way_out``: any other way than making them agree."""
    (first_said, first_found), (second_said, second_found) = first, second
    differ = sorted((c for c in set(first_found) | set(second_found) if first_found.get(c) != second_found.get(c)),
                    key=lambda c: (len(c), c))
    if differ:
        at = differ[0]
        raise FastTextError(f"{first_said} and {second_said} name the classes differently (class {at!r}: "
                            f"{_name_or_none(first_found, at)} and {_name_or_none(second_found, at)}): make them the "
                            f"same, or remove the one that is wrong{way_out}")


def _name_or_none(found, label):
    return repr(found[label]) if label in found else "no name"


def _exists_beside(uri, data_uri):
    """Whether the names file ``uri`` exists. A refusal of its location (another scheme, a bucket name botocore
    will not send, no credentials) is the data's own: it is named by the data's URI, which the user gave, not
    by the names file's, which the user never saw (the look for it comes before the data is read). An endpoint out
    of reach is not asked again: each attempt waits out a timeout."""
    try:
        return storage.exists(uri, forbidden_is_missing=True)
    except storage.Unreachable as exc:
        raise exc.about(data_uri) from None
    except FastTextError:
        storage.exists(data_uri, forbidden_is_missing=True)  # the same refusal, naming the data, if it is one
        raise


ARCHIVE_SUFFIX = "_csv"  # yelp_review_polarity_csv.tgz unpacks to yelp_review_polarity_csv/{train,test}.csv


def archive_dataset(data_uri):
    """The dataset of :data:`KNOWN` whose unpacked archive folder holds ``data_uri``
    (``.../yelp_review_polarity_csv/train.csv``), else None. The polarity and star archives ship no
    classes.txt (their readme.txt says what the classes mean); the names are the same table's."""
    data_uri = str(data_uri)
    if storage.is_s3(data_uri):
        folder = data_uri.rpartition("/")[0].rpartition("/")[2]
    else:
        folder = os.path.basename(os.path.dirname(os.path.abspath(data_uri)))
    if folder.endswith(ARCHIVE_SUFFIX) and folder[:-len(ARCHIVE_SUFFIX)] in KNOWN:
        return folder[:-len(ARCHIVE_SUFFIX)]
    return None


def _renumbered(found, present):
    """``found``'s names given to the data's classes (``present``) in the order of both: ``0=negative,1=positive`` for
    data numbered from 0 and a classes.txt that names 1 and 2 (what the refusal above suggests)."""
    def ordered(labels):
        return sorted(labels, key=lambda label: (len(label), label))

    pairs = zip(ordered(present), (found[label] for label in ordered(found)))
    return ",".join(f"{label}={name}" for label, name in pairs) + ("" if len(present) <= len(found) else ",...")


def keyed_by_class(mapping, labels):
    """``mapping`` with a key that is no class of ``labels`` but the whole float of one (``1.0=negative`` for the
    class ``1``) keyed by that class, where no other key names it: data.whole_number_classes reads a file whose classes are
    all whole floats (fastText format's ``__label__1.0``, a CSV's float column) as whole numbers, and a names file
    written for its classes as they are spelled was dropped without a word (it named none of them). Same type.
    Likewise a key that is one class in another Unicode normalization (``négatif`` typed with U+00E9 for the class a
    Mac wrote with e + U+0301): it was refused as a class the data does not have, the two printing alike (training
    refuses one class in two normalizations, so such a key names one class)."""
    from .columns import whole_number

    present = set(labels)
    composed = {}
    for label in present:
        composed.setdefault(nfc(label), []).append(label)

    def class_meant(key):
        whole = whole_number(key)
        if whole in present:
            return whole
        spelled = composed.get(nfc(key), ())
        return spelled[0] if len(spelled) == 1 else None

    meant = {key: class_meant(key) for key in mapping if isinstance(key, str) and key not in present}
    claimed = [label for label in meant.values() if label in present and label not in mapping]
    moved = {key: label for key, label in meant.items() if label in claimed and claimed.count(label) == 1}
    if not moved:
        return mapping
    renamed = copy.copy(mapping)  # (a names file's title and type kept)
    renamed.clear()
    renamed.update((moved.get(key, key), name) for key, name in mapping.items())
    return renamed


def kept_for_data(found, labels, where, subset=False, option="--label-names", own_name=None):
    """The entries of a names file found beside the data (``where``) for the data's ``labels``.

    A file naming classes the data lacks is fine (a split without every class), but not one that also leaves some
    of the data's classes unnamed: its numbering is not the data's (a Zhang classes.txt, which names class 1 on its
    first line, beside data numbered from 0 named class 1 with class 0's name), and predictions would show wrong
    names. Nor, unless ``subset``, one that leaves some of the data's classes unnamed, or for which the data has
    at most half of the classes it names: a file that sits in the same folder but is another dataset's (ag_news'
    four topics beside two-class reviews named them World and Sports; a polarity file beside 5-star data named
    stars 1 and 2 only). A split that misses a class or two still has more than half. ``subset``: any share will do
    (the file is this data's, :func:`named_for`, or the data is a ``limit``-ed read of it). A file
    that names none of the data's classes is not about it and gives no names.

    ``option``: how the caller's user names the classes instead (the CLI's ``--label-names``); None where there is
    no such way (notebook 01): the refusals then say to write the file as ``id=name`` lines, or to name it
    ``own_name`` (the data's ``<stem>.classes.txt``, taken as the data's whatever classes it lacks: :func:`named_for`)."""
    found = keyed_by_class(found, labels)
    refuse_a_title(found, labels, where)
    present = set(labels)
    unused = [label for label in found if label not in present]
    unnamed = sorted((label for label in present if label not in found), key=lambda label: (len(label), label))
    if unused and unnamed and len(unnamed) < len(present):
        one_by_one = (f"name the classes one by one: {option} {_renumbered(found, present)}" if option else
                      f"write it as id=name lines, one class each ({_renumbered(found, present)})")
        raise FastTextError(f"{where} names class(es) {', '.join(map(repr, unused[:5]))} that the data does not have "
                            f"but not its class(es) {', '.join(map(repr, unnamed[:5]))}: its numbering is not the "
                            f"data's (a classes.txt names class 1 on its first line); fix it, or {one_by_one}")
    shared = len(found) - len(unused)
    if option:
        advice = (f"is it another dataset's? Move it away, or pass {option} (a names file, or 1=negative,2=positive; "
                  f"'none' for raw labels; {where} itself if it is this data's")
        lacking = f"{advice}: a split without every class)"
        advice += ")"
    else:
        advice = lacking = (f"is it another dataset's? Move it away; if it is this data's, rename it {own_name} (a "
                            f"names file of that name may leave classes out)")
    if shared and not subset and unnamed:
        raise FastTextError(f"{where} names {shared} of the data's {len(present)} classes, not its class(es) "
                            f"{', '.join(map(repr, unnamed[:5]))}: {advice}")
    if shared and not subset and 2 * shared <= len(found):
        raise FastTextError(f"{where} names {len(found)} classes but the data has {'only ' if shared else ''}{shared} of "
                            f"them (its classes: {', '.join(sorted(present, key=lambda c: (len(c), c))[:10])}): "
                            f"{lacking}")
    return {k: v for k, v in found.items() if k in present}


def named_for(names_file, data_uri):
    """Is ``names_file`` (what :func:`find_beside` found) surely ``data_uri``'s: ``<stem>.classes.txt`` (what
    ``prepare`` writes beside its splits), or any names of data in an unpacked Zhang et al. archive's folder
    (``ag_news_csv/classes.txt``)? Not so a ``classes.txt`` in any other folder: :func:`kept_for_data` then
    checks that it fits the data."""
    return names_file is not None and (str(names_file) == beside(data_uri)[0] or archive_dataset(data_uri) is not None)


def is_names_file(path):
    """Whether a file name is a names file's (a SageMaker channel may hold one beside the data)."""
    base = str(path).replace("\\", "/").rsplit("/", 1)[-1]
    return base == ZHANG_FILE or base.endswith(SUFFIX)


def for_labels(mapping, labels, where, strict, stored=False):
    """``mapping`` checked against the trained ``labels``: only their entries, names distinct from each other
    and from the raw ids of the labels left unnamed, and none the id of another class (:func:`_refuse_reused_ids`).

    ``strict`` (an explicit mapping): naming a label the data does not have is an error; otherwise
    (a names file found beside the data) such entries are dropped. ``stored``: the names of a bundle already
    written (bundle_read.load_bundle_files), which may reuse ids: training took such names before it refused them.
    """
    labels = list(labels)
    extra = [label for label in mapping if label not in set(labels)]
    if extra and strict:
        shown = ", ".join(repr(x) for x in extra[:5])
        raise FastTextError(f"{where} gives a name to class(es) {shown} that the training data does not have "
                            f"(its labels: {', '.join(labels[:20])})")
    kept = {label: mapping[label] for label in labels if label in mapping}
    shown = display(labels, kept)
    if len(set(shown)) != len(shown):
        twice = sorted({name for name in shown if shown.count(name) > 1})
        raise FastTextError(f"{where}: {len(labels)} classes would show as {len(set(shown))} names "
                            f"({', '.join(map(repr, twice[:5]))} twice); give every class its own name")
    if not stored:
        _refuse_reused_ids(kept, labels, where)
    return kept


def settle(data, explicit, where):
    """Set ``data.names`` for a training run and return the line that reports them (None: no names).

    ``explicit`` (``from_option`` of the CLI's ``--label-names`` or the job's ``label_names``, named by
    ``where`` in errors) wins over a names file found beside the data; inline pairs and a dataset name must name only
    classes the data has; a names file (:class:`DatasetNames`) that names some of them may name more (dropped: a split
    that lacks some), as long as it names every class the data has when it names others (:func:`kept_for_data`). One function so the CLI and the
    SageMaker job cannot drift apart.
    """
    if explicit is not None:
        classes = data.classes()  # (once: it sorts the distinct labels of every document)
        explicit = keyed_by_class(explicit, classes)
        refuse_a_title(explicit, classes, where)
        if isinstance(explicit, DatasetNames) and any(label in explicit for label in classes):
            explicit = kept_for_data(explicit, classes, where, subset=True)  # else refused: none is the data's
        data.names = for_labels(explicit, classes, where, strict=True)
    if not data.names:
        return None
    return "label names: " + ", ".join(f"{k}={v}" for k, v in data.names.items())


def display(labels, mapping):
    """The name of each label (its raw id when the mapping has none): the one rule by which training
    (``TrainedModel.names``), data (``LabeledTexts.display_labels``) and predictions (``Predictor.names``,
    ``Predictor.name_of``) show a class."""
    mapping = mapping or {}
    return [mapping.get(label, label) for label in labels]
