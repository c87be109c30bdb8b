"""JSON Lines: one object a line (the Yelp dataset's ``review.json``, Amazon's reviews,
``df.to_json(orient="records", lines=True)``).

An object's keys are read as a header's column names (:mod:`fasttext_lib.columns`): the class key, the text keys,
the rest left out and named. ``{"source": ...}`` lines are BlazingText's request shape, read as the endpoint reads them.
"""
import itertools
import json
import re

from .columns import (HEADER_LABEL_NAMES, HEADER_LOOKAHEAD, HEADER_TEXT_NAMES, ColumnsToName, check_text_columns,
                      chosen_columns, header_layout, header_text_columns, left_out_columns, read_from_note)
from .errors import FastTextError
from .lines import chain_lines, json_integer


def missing_json(value):
    """Is ``value`` a missing value as pandas and Python write one in JSON: ``null``, or ``NaN`` (Python's json module
    writes a float column's missing value so, and reads it back as a float nan)?"""
    return value is None or (isinstance(value, float) and value != value)


def _json_value(value):
    """A JSON value as the text a CSV field would hold: null (or NaN) is nothing, a whole float is written without its
    ``.0`` (the Yelp dataset's ``"stars": 5.0`` is the class ``5``, as its CSV sets number them), a list or an object is
    its JSON."""
    if missing_json(value):
        return ""  # (a NaN was the text "nan": a missing review answered as that word, a missing class trained as one)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, dict)):
        value = json.dumps(value, ensure_ascii=False)
    return whole_characters(str(value))


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def whole_characters(text):
    """``text`` with each lone surrogate as U+FFFD. A lone surrogate escape (``"\\ud83d"`` without its other half: a
    tweet cut inside an emoji) is valid JSON but no character: it stopped training and predict in a UnicodeEncodeError
    traceback, and failed an endpoint request. It is the replacement character, as a UTF-8 decoder makes of half a
    character (a pair, ``"\\ud83d\\ude00"``, is read as its one emoji)."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def _json_objects(lines, uri, predicting=False):
    """``(line number, object)`` of each non-blank line of JSON Lines; a line that is no JSON object is an error at
    its line. ``predicting``: a ``null`` (or ``NaN``) line is a missing review, an object with no text (``{}``), as the
    endpoint's application/jsonlines answers it; predict refused the file the endpoint answered."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line, parse_int=json_integer)
        except ValueError as exc:
            raise FastTextError(f"{uri}:{number}: not a JSON object ({getattr(exc, 'msg', exc)} at column "
                                f"{getattr(exc, 'colno', '?')}); JSON Lines hold one object per line") from None
        except RecursionError:  # ([[[[... thousands deep: json's recursive decoder gives up; it was a traceback)
            raise FastTextError(f"{uri}:{number}: not a JSON object json can read (nested too deeply); JSON Lines hold "
                                f"one object per line") from None
        if predicting and missing_json(value):
            value = {}
        if not isinstance(value, dict):
            raise FastTextError(f"{uri}:{number}: a JSON {type(value).__name__}, not an object; JSON Lines hold one "
                                f"object per line")
        yield number, value


def _json_keys(objects):
    """The keys of JSON Lines' first ``objects`` (``(line number, object)`` pairs: the look-ahead), each once, in the
    order they first come: a record may lack a key that later ones have (Amazon's reviews without ``reviewText``,
    ``style`` or ``vote``). Read from the first object only, a text key it lacked was never read: a file whose first
    review had no ``reviewText`` was trained on its summaries alone."""
    return list(dict.fromkeys(str(k) for _, o in objects for k in o))


TEXT_FORMAT_HINT = ", or give --format text to answer each line as it is"  # (predict's way out of a format it refuses)


def _json_lookahead(lines, uri, predicting=False):
    """``(objects, ahead, keys, rows)`` of JSON Lines: the ``(line number, object)`` iterator, the look-ahead taken
    from it (the first :data:`HEADER_LOOKAHEAD` + 1 objects), their keys (:func:`_json_keys`) and the look-ahead's
    values under those keys as a CSV's rows (:func:`_json_value`), on which the header rules decide."""
    objects = _json_objects(lines, uri, predicting)
    ahead = list(itertools.islice(objects, HEADER_LOOKAHEAD + 1))
    orient = len(ahead) == 1 and whole_table_orient(ahead[0][1])
    if orient:
        given = "" if orient in ("columns", "series") else f", orient={orient!r}"
        writer, reader = (("Series.to_json(path)", "pd.read_json(path, typ='series').to_frame('text')")
                          if orient == "series" else (f"df.to_json(path{given})", f"pd.read_json(path{given})"))
        raise FastTextError(f"{uri}: is one JSON object holding a whole table (pandas' {writer} writes one so), not "
                            f"JSON Lines (one object a line); write it as JSON Lines: {reader}.to_json(new_path, "
                            f"orient='records', lines=True){TEXT_FORMAT_HINT if predicting else ''}")
    keys = _json_keys(ahead)
    return objects, ahead, keys, [[_json_value(o.get(k)) for k in keys] for _, o in ahead]


def whole_table_orient(obj):
    """The ``orient`` of pandas' ``to_json`` that wrote ``obj`` (a file's one object) as a whole table, else None:
    ``df.to_json(path)`` (orient ``columns``, the default: ``{"review": {"0": ..., "1": ...}, ...}``), ``index``
    (``{"0": {"review": ...}, ...}``), ``split`` or ``table``. Such a file is one line, one object: training took the
    class column's JSON for the class of one document (refused as one class, in a line that held the whole column),
    and predict answered the whole table as one review. ``series``: a Series' ``to_json(path)``, ``{"0": "great food",
    "1": ...}``."""
    keys, values = set(obj), list(obj.values())
    numbered = len(obj) > 1 and all(str(k).isdigit() for k in obj)  # (rows numbered: the index outside)
    if keys == {"schema", "data"} and isinstance(obj["data"], list):
        return "table"
    if {"columns", "data"} <= keys <= {"columns", "index", "data"} and isinstance(obj["data"], list):
        return "split"
    if values and all(isinstance(v, dict) and v for v in values) and len({tuple(v) for v in values}) == 1:
        return "index" if numbered else "columns"
    return "series" if numbered and not any(isinstance(v, (dict, list)) for v in values) else None


def _json_text(obj, text_keys):
    """An object's text: its ``text_keys``' values joined (a missing or null one is nothing)."""
    return " ".join(t for t in (_json_value(obj.get(k)) for k in text_keys) if t)


def jsonl_examples(lines, uri, choice=None, note=None, found=None):
    """``(label, text)`` of JSON Lines (``df.to_json(path, orient="records", lines=True)``; the Yelp dataset's
    ``review.json``: ``{"review_id": ..., "stars": 5.0, ..., "text": ..., "date": ...}`` a line). The keys of
    the first objects (:func:`_json_keys`) are read as a CSV header's names (:func:`header_layout`): the class key
    (``stars``), the text keys (``text``, ``reviewText``, ``summary``, ...) and any other of prose
    (:func:`header_text_columns`), joined in the order they first come; the other keys are left out, and ``note`` is told which. ``choice``
    (columns.Columns): the keys named by ``--label-column`` / ``--text-column``. An object without the class key,
    or with an empty class, is an error at its line; a missing or null text key is empty text. An object of nothing
    but empty values is left out, as a blank line is (:func:`_holds_nothing`)."""
    found = {} if found is None else found
    objects, ahead, keys, rows = _json_lookahead(lines, uri)
    if not ahead:
        raise FastTextError(f"{uri}: file is empty")
    if choice is not None:
        label_col, text_cols = chosen_columns(keys, choice, rows, uri, keys=True)
    else:
        layout = header_layout(keys)
        # (a CSV header's first column is the class unnamed when the others are named as text, as Zhang et al.'s
        # "Class Index" is; an object's first key is where its writer put it: {"review_id": ..., "text": ...}, reviews
        # to label, was trained on its ids as classes, one class per review)
        if layout is not None and keys[layout[0]].strip().lower() not in HEADER_LABEL_NAMES:
            layout = None
        classes = [k for k in keys if k.strip().lower() in HEADER_LABEL_NAMES]
        if (layout is None or len(keys) < 2) and len(classes) > 1:  # (it said "no class key training knows")
            raise ColumnsToName(
                f"{uri}: its objects' keys ({','.join(keys)}) name {len(classes)} class keys ({', '.join(classes)}): "
                f"one is the class")
        if layout is None or len(keys) < 2:
            raise ColumnsToName(
                f"{uri}: its objects' keys ({','.join(keys)}) name no class key training knows "
                f"({', '.join(sorted(HEADER_LABEL_NAMES)[:8])}, ...) beside a text key "
                f"({', '.join(sorted(HEADER_TEXT_NAMES)[:6])}, ...)")
        label_col = layout[0]
        named = [i for i, k in enumerate(keys) if k.strip().lower() in HEADER_TEXT_NAMES and i != label_col]
        # (a class key first reads every other column of a CSV as text, as Zhang et al.'s do; an object's other keys
        # are ids and dates as often: only the named text keys, and prose)
        text_cols = header_text_columns(keys, (label_col, named), rows)[1] or (layout[1] if len(layout[1]) == 1 else [])
        if not text_cols:
            raise ColumnsToName(f"{uri}: its objects' keys ({','.join(keys)}) name no text key training knows beside "
                                f"the class key {keys[label_col]!r}", "name the text key", flags="--text-column NAME")
    if choice is None or not choice.texts:  # (text keys the user named are read as named)
        # as a CSV's columns are checked: a labels file ({"review_id": ..., "stars": 5.0}, its texts elsewhere) had
        # its one key beside the class read as the text, and was trained on its ids as words
        check_text_columns(rows, (label_col, text_cols), uri, keys, keys=True)
    label_key, text_keys = keys[label_col], [keys[c] for c in text_cols]
    left = left_out_columns(keys, (label_col, text_cols))
    if left and note is not None:
        note(read_from_note(uri, "key", keys, text_cols, left, label_col))
    found["class_from"] = f"key {label_key!r}"
    found["class_column"] = label_key  # (data.LabeledTexts.class_column: the pandas lines' name)
    found["text_names"] = text_keys  # (data.note_no_words' pandas line)
    for number, obj in chain_lines(ahead, objects):
        found["line"] = number
        label = _json_value(obj[label_key]).strip() if label_key in obj else ""
        if not label and _holds_nothing(obj):  # (looked at for no object that has a class: no cost per record)
            continue
        if label_key not in obj:
            raise FastTextError(f"{uri}:{number}: this object has no {label_key!r} key (the class, as the first "
                                f"object's keys say)")
        if not label:
            raise FastTextError(f"{uri}:{number}: this object's class ({label_key!r}) is empty: a document without a "
                                f"class; drop such rows first (pandas: df.dropna(subset=[{label_key!r}]).to_json("
                                f"new_path, orient='records', lines=True))")
        yield label, _json_text(obj, text_keys)


def _holds_nothing(obj):
    """Is ``obj`` an object whose every value is empty (null, NaN, "" or spaces; ``{}``)? pandas' row of NaNs written
    as JSON Lines (``{"label":null,"text":null}``) is one. Training leaves it out as it leaves out a blank line of
    JSON Lines, and as the CSV readers leave out the same row written as CSV (``,``: formats.csv_rows): it was refused
    as "this object's class is empty", so one frame read as CSV and was refused as JSON Lines. (Predict answers it as
    an empty review in its place, as it answers a blank line: jsonl_texts.) An object with a text but no class is no
    blank line and is still refused."""
    return all(not _json_value(value).strip() for value in obj.values())


def jsonl_texts(lines, uri, note=None, found=None):
    """The text of each object of JSON Lines to label (``predict``): its text keys, as :func:`jsonl_examples` reads
    them (``text``, ``review``, ..., and the endpoint's ``source``; any other of prose), a class key among them not
    scored; the other keys are left out, and ``note`` is told which. A line that is no JSON object, or first objects
    (:func:`_json_keys`) without a text key, is an error. ``found`` (a dict, or None): its ``"line"`` is set to each
    object's line number as its text is handed out (data.RecentLines), and ``"blank_lines"`` is ``[first, count]`` of
    the blank lines answered.

    A blank line before or between objects is a record, answered as an empty review (``""``) in its place, as the
    endpoint's application/jsonlines answers it (Batch Transform, SplitType=Line: one answer a line); skipped, the same
    file had fewer answers from predict, every one after it a line off. Blank lines after the last object are none
    (the endpoint's neither)."""
    found = {} if found is None else found
    objects, ahead, keys, rows = _json_lookahead(lines, uri, predicting=True)
    if not ahead:
        return
    lowered = [k.strip().lower() for k in keys]
    if "source" in lowered:  # BlazingText's request lines: "source" is the review, as the endpoint reads it
        text_cols = [lowered.index("source")]
    else:
        classes = [i for i, k in enumerate(lowered) if k in HEADER_LABEL_NAMES]
        named = [i for i, k in enumerate(lowered) if k in HEADER_TEXT_NAMES and i not in classes]
        text_cols = [c for c in header_text_columns(keys, (-1, named), rows)[1] if c not in classes]
    if not text_cols:
        raise FastTextError(f"{uri}: its objects' keys ({','.join(keys)}) name no text key "
                            f"({', '.join(sorted(HEADER_TEXT_NAMES)[:6])}, ..., source); rename the review's key to "
                            f"text, or give --format text to answer each line as it is")
    left = [c for c in range(len(keys)) if c not in text_cols]
    if left and note is not None:
        note(read_from_note(uri, "key", keys, text_cols, left))
    text_keys = [keys[c] for c in text_cols]
    last, blank = 0, found.setdefault("blank_lines", [None, 0])  # (the objects' line numbers: the gaps are blank)
    for number, obj in chain_lines(ahead, objects):
        for found["line"] in range(last + 1, number):
            blank[0], blank[1] = blank[0] or found["line"], blank[1] + 1
            yield ""
        found["line"], last = number, number
        yield _json_text(obj, text_keys)


def json_input(line, uri, predicting=False):
    """The error for an input whose first line (``line``, stripped) is JSON that is not read, else None: a JSON array
    (``df.to_json(path, orient="records")``, on one line or indented) or an object over several lines (JSON Lines,
    one object a line, are read: lines.json_object_line comes first). Training was "cannot detect the format", and
    predict answered each line, keys and braces as words: the error shows pandas' conversion, with the object's own
    keys when they name a class and a text column."""
    if line not in ("[", "{"):
        try:
            value = json.loads(line, parse_int=json_integer)
        except (ValueError, RecursionError):  # (nested too deeply for json: a traceback in predict; not read as JSON)
            return None
        value = value[0] if isinstance(value, list) and value else value
        if not isinstance(value, dict):
            return None
    keys = [k for k in (value if line not in ("[", "{") else {}) if isinstance(k, str)]
    label = next((k for k in keys if k.lower() in HEADER_LABEL_NAMES), "label")
    text = next((k for k in keys if k.lower() in HEADER_TEXT_NAMES), "text")
    # An indented object ("{" alone: to_json(path, indent=2), a whole table) is read by read_json(path); lines=True
    # said for it failed ("Expected object or value"). Indented objects one after another (jq's output) are JSON Lines
    # once each is on a line of its own: jq -c.
    read = f"pd.read_json(path{', lines=True' if line.startswith('{') and line != '{' else ''})"
    then = "; indented objects one after another: jq -c . path > new_path" if line == "{" else ""
    if predicting:
        return (f"{uri}: is JSON, not one review per line; convert it (e.g. pandas: {read}[[{text!r}]]"
                f".to_csv(new_path, index=False){then}), or give --format text to answer each line as it is")
    return (f"{uri}: is JSON but not JSON Lines (one object a line, which are read, as CSV, TSV and fastText format "
            f"are); convert it to CSV (e.g. pandas: {read}[[{label!r}, {text!r}]].to_csv(new_path, index=False){then})")
