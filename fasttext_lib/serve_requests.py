"""A SageMaker request's body -> the reviews it holds (:class:`Reviews`), for ``sm_serve.input_fn``:

* ``application/json``: a string, a list of strings or ``{"instances": [...]}``;
* ``application/jsonlines`` (Batch Transform's ``SplitType=Line``): ``{"source": "review", "k": 2}`` per line,
  BlazingText's shape;
* ``text/plain``: one review per line (one line with lone ``\\r`` inside is a 400);
* ``text/csv``: one review per record; when the first record is a labeled row, ``"2","the text"``, each record's
  text columns, the class not scored. ``text/csv; header=present``: the first record is a header, not answered by an
  endpoint; in Batch Transform answered with :class:`~fasttext_lib.serve_responses.FieldNames`, so that each record
  of a mini-batch has its answer. Without the parameter, a header row predict would recognize is read as one, and
  answered as with it: not by an endpoint, with ``FieldNames`` in Batch Transform. A body whose first line is a
  TSV's header row is read tab-separated (that row a record when the rows after it say so: :func:`_tsv_header`).
  Every decision about a table's first row and columns looks at the rows predict looks at (:func:`_rows_ahead`). A
  record ends at ``\\n`` only (:func:`_lines_of`), as SageMaker's line splitting does: a lone ``\\r`` inside a line
  is whitespace in its review, or, in a field of a CSV that is no review a line, a 400, as predict reads and refuses
  it. A semicolon-separated table is a 400, as predict refuses it (formats.semicolon_table, the rule of both, on the
  same lines), named before any other 400 of the body's CSV, as predict asks first; with ``header=absent`` only its
  rows tell, the first line among them. A body of JSON Lines (its first line that is not blank a JSON object, as
  predict tells a file: lines.json_lines_start) is read as ``application/jsonlines`` reads it.

A body is decoded with the Content-Type's charset, UTF-8 when it names none (:func:`body_text`), and a leading
UTF-8 BOM is skipped. A request this cannot read raises :class:`RequestError`, a 4xx (sm_serve's docstring lists
them).
"""
import codecs
import contextlib
import copy
import csv
import http
import io
import itertools
import json
import os
from typing import NamedTuple

from .columns import HEADER_LOOKAHEAD
from .errors import FastTextError
from .formats import predicted_record  # (module-level: _blank_or asks it of every record of a body)
from .jsonl import missing_json, whole_characters
from .lines import json_integer, json_lines_start
from .quoted_spans import QUOTED_FIELD  # (what predict reads as a quoted field too)
from .serve_limits import in_batch_transform

JSON_TYPE, TEXT_TYPE, CSV_TYPE = "application/json", "text/plain", "text/csv"
JSONLINES_TYPE = "application/jsonlines"  # SageMaker Batch Transform's (and BlazingText's) JSON Lines
CONTENT_TYPES = (JSON_TYPE, JSONLINES_TYPE, TEXT_TYPE, CSV_TYPE)


try:  # the inference toolkit turns these into an HTTP response with their status code
    from sagemaker_inference.errors import BaseInferenceToolkitError as _ToolkitError
except ImportError:  # outside the container (tests, local use): the same shape
    class _ToolkitError(Exception):
        def __init__(self, status_code, message, phrase):
            self.status_code, self.message, self.phrase = status_code, message, phrase
            super().__init__(status_code, message, phrase)


class RequestError(_ToolkitError):
    """A bad request, answered with ``status_code`` (4xx) and a one-line ``message``."""

    def __init__(self, status_code, message):
        super().__init__(status_code, message, http.HTTPStatus(status_code).phrase)

    def __str__(self):
        return f"{self.status_code} {self.phrase}: {self.message}"


class Reviews(list):
    """``input_fn``'s result: the review texts, and ``top`` = ``(k, threshold)`` when the request asked for
    ranked classes (``"configuration"``), else ``None``; for JSON Lines, ``top`` is a list with each
    line's ``(k, threshold)`` and ``lines`` is True."""

    top = None
    lines = False
    records = None  # text/csv: each record's fields (the review is its fields joined with its delimiter: , or tab)
    quoted = False  # text/csv: the first record's first field is quoted
    class_first = False  # text/csv: every record is a labeled row, the class first, whatever the model's classes: a TSV
    # whose first row is no header (serve_requests._tsv_header), every record of which predict reads so
    after_header = False  # text/csv: a Batch Transform mini-batch after the first of a header=present file
    may_follow_header = False  # text/csv: a Batch Transform mini-batch without a header row, not header=absent: a
    # later one of a file whose header the first mini-batch held (recognized there without header=present)
    header_record = False  # text/csv: the first record (after lead_blank blank ones) is a header that is answered, with
    lead_blank = 0         # FieldNames (in Batch Transform); the blank records as blank lines
    header_repeats = ()    # text/csv in Batch Transform: where the header is repeated among the records after it
    first_number = 1       # text/csv: the number in the body of the first of ``records`` (a header and blank records
    repeats_at = ()        # before it counted), and where the header's repeats stood among them (numbered, unanswered)
    header_names = None    # text/csv: the header row, as the body writes it (a 400 for a header without rows names it)
    body_lines = None      # text/csv in Batch Transform: the lines of the mini-batch (SplitType=Line joins answers to them)
    semicolon_lines = None  # text/csv: _Opening (its first line that is not blank, the lines after it) when that line
    # holds a semicolon, for csv_texts to ask whether it is a semicolon-separated table (the model's classes tell)
    tab_separated = None  # text/csv: when its first line holds a tab, serve_requests._tab_body of the model's classes
    unread = None  # text/csv: the 400 the body's reading as CSV ended in, when semicolon_lines may start such a table:
    # raised by csv_texts once the model's classes tell it is none, as predict asks before it reads a file as CSV


# ---- The body: its media type and charset, its text

def media_type(header):
    """``'text/csv; charset=utf-8'`` -> (``'text/csv'``, ``'utf-8'``). A 400 when the header names two charsets
    that are different codecs (:func:`_one_parameter`)."""
    charset = _one_parameter(header, "charset", "charsets", same=_codec_name)
    return str(header).split(";")[0].strip().lower(), charset or "utf-8"


def header_parameter(header):
    """The ``header`` parameter of a ``text/csv`` Content-Type ``header`` (RFC 4180: ``present`` or ``absent``,
    lower-cased; ``""`` when it names none). A 400 when it names two different values (:func:`_one_parameter`): a
    review read as a header or a header as a review."""
    return (_one_parameter(header, "header", "header parameters") or "").lower()


def _one_parameter(header, name, plural, same=str.lower):
    """The value of the Content-Type ``header``'s parameter ``name`` (None: it names none). A 400 when it names two
    that are not the ``same``, naming them: the last was taken without a word (a header built by appending to a
    default one)."""
    values = {}  # (the first spelling of each: utf-8 and UTF-8 are one charset, said once)
    for key, value in _params(header):
        if key == name:
            values.setdefault(same(value), value)
    values = list(values.values())
    if len(values) > 1:
        raise RequestError(400, f"conflicting {plural} in the Content-Type: {values[0]!r} and {values[1]!r}; name one")
    return values[0] if values else None


def _codec_name(charset):
    """The codec ``charset`` names (``latin-1`` and ``ISO-8859-1`` are one), or the name itself when it names none."""
    try:
        return codecs.lookup(charset).name
    except LookupError:
        return charset.lower()


def text_codec(charset):
    """A 415 unless ``charset`` names a codec that decodes bytes into text a client writes (lines.text_codec: not one
    of Python's transforms, rot13, base64, nor its other codecs that are no charset, unicode_escape, punycode)."""
    from .lines import NoCharset, text_codec as charset_codec

    try:
        charset_codec(charset)
    except LookupError:
        raise RequestError(415, f"unknown charset {charset!r}") from None
    except NoCharset as exc:
        raise RequestError(415, f"charset {charset!r} is no text charset (Python's {exc.codec} codec); send the body's "
                                f"charset, e.g. utf-8") from None


def _params(header):
    """The parameters of a Content-Type, in order, as (name lower-cased, value unquoted), those without a value left
    out (``charset=""`` too, as ``charset=`` is: it was a 415 "unknown charset ''")."""
    for param in str(header).split(";")[1:]:
        key, _, value = param.partition("=")
        value = value.strip().strip('"')
        if value:
            yield key.strip().lower(), value


def body_text(body, charset, limit):
    """A request's body (bytes, or a str another server decoded) as text, decoded with ``charset``: a 413 when it
    is over ``limit`` bytes (``sm_serve.MAX_REQUEST_BYTES``), a 415 when ``charset`` is no text charset
    (:func:`text_codec`), a 400 when it does not decode or holds NUL characters."""
    if body is None:
        body = b""
    if isinstance(body, str):
        # (a str another server decoded may hold a lone surrogate, as JSON's "\ud83d" escape does once read: measured
        # as it stands, it was a UnicodeEncodeError, a 500; in JSON it is U+FFFD, in other text a 400, below)
        raw_size = len(body.encode("utf-8", "surrogatepass"))
    elif isinstance(body, (bytes, bytearray, memoryview)):
        raw_size = len(body)
    else:
        raise RequestError(400, f"unexpected request body of type {type(body).__name__}")
    if raw_size > limit:
        # (also said to a body of one long review, a whole book pasted, which no fewer reviews fit into)
        raise RequestError(413, f"request body has {raw_size} bytes; the limit is {limit} "
                                f"(FASTTEXT_MAX_REQUEST_BYTES; in Batch Transform, max_payload): send fewer reviews "
                                f"per request, or cut a review that long")
    if isinstance(body, str):
        text = body
    else:
        body = bytes(body)
        text_codec(charset)
        binary = _binary_body(body, charset)
        if binary:  # (before decoding: what a charset makes of such bytes says nothing useful)
            raise RequestError(400, f"request body is not valid {charset} text{binary}")
        try:
            text = body.decode(charset)
        except ValueError as exc:  # UnicodeDecodeError; a plain UnicodeError from a codec that raises one: it was a 500
            from .binary_data import bom_charset

            marked = bom_charset(body)
            bom = f" (it starts with a {marked.upper()} byte order mark: send charset={marked})" \
                if marked and marked[4:] not in charset else ""
            raise RequestError(400, f"request body is not valid {charset} text"
                                    f"{bom or _undecoded_place(body, charset, exc)}") from None
    if "\x00" in text:
        # UTF-16 text without a byte order mark decodes as UTF-8 (every other byte a NUL) and was answered
        # with a score per line of that garbage; predict refuses NUL bytes too. UTF-32 text is named as such: sent
        # as utf-16, it was told to send charset=utf-16, the charset it was sent with.
        from .binary_data import utf32_text

        sent = "UTF-32" if utf32_text(body if isinstance(body, bytes) else text.encode("utf-8", "surrogatepass")) \
            else "UTF-16"
        raise RequestError(400, f"request body holds NUL characters, which no review text does ({sent} text sent as "
                                f"{charset}? send UTF-8, or charset={sent.lower()} in the Content-Type)")
    return text


def _binary_body(body, charset):
    """`` (it is ...: send ...)`` for a body (bytes) that is compressed data, an archive or a binary table (by its
    structure, not its magic bytes alone: binary_data.binary_kind, the file readers' rule too), else ``""``, whatever
    the charset: a bzip2 or zstd body was told it "reads as Windows-1252: send charset=windows-1252", and under
    latin-1 (which decodes every byte) each, gzip too, was asked whether it was UTF-16 text, as a zip archive was.
    (The endpoint gets the bytes as sent: no Content-Encoding is undone.)"""
    from .binary_data import binary_kind

    kind = binary_kind(body, (charset,))
    if kind in ("gzip", "bzip2", "xz", "lzma", "zstd"):
        return (f" (it is {kind}-compressed: send it uncompressed; a Batch Transform job's compression_type='Gzip' has "
                f"SageMaker decompress gzip input)")
    what = {"zip": "a zip archive", "parquet": "a Parquet file", "xls": "an Excel workbook (.xls)"}.get(kind)
    return f" (it is {what}: send the reviews it holds as text, JSON or CSV)" if what else ""


def _undecoded_place(body, charset, exc):
    """Where ``body`` holds the bytes ``charset`` does not decode (``exc``), ``: line N holds byte 0xNN at column C``
    (in bytes, as predict names a file's), and for a UTF-8 body that reads as Windows-1252 (Excel's 'CSV', Windows
    programs) the charset to send: a 400 that said only "not valid utf-8 text" left a Batch Transform user to search a
    mini-batch of thousands of lines, not knowing the Content-Type that reads it. ``""`` for a codec's error that names
    no byte, or a charset whose line end is no newline byte (UTF-16: no line to count)."""
    newline = b"\n"
    if not isinstance(exc, UnicodeDecodeError) or "\n".encode(charset, "ignore") != newline:
        return ""
    start = exc.start
    line, column = body.count(newline, 0, start) + 1, start - body.rfind(newline, 0, start)
    place = f": line {line} holds byte {body[start]:#04x} at column {column}"
    from .lines import reads_as_windows_1252

    if _codec_name(charset) != "utf-8" or not reads_as_windows_1252(body):
        return place
    return (f"{place}; it reads as Windows-1252, as Excel's 'CSV' and Windows programs write it: send "
            f"charset=windows-1252 in the Content-Type, or send UTF-8")


def without_boms(text):
    """A body's ``text`` without the BOMs that start its lines (lines.without_line_boms: Windows files joined with
    cat). In Batch Transform a last line of BOMs alone, without its line end, is a line all the same, a record
    SageMaker's SplitType=Line sends: it is kept as a blank line, answered as one (:func:`answered_blank`). Dropped
    with its BOM, it left the mini-batch one answer short of its lines, every answer joined to a line after it one
    off. (A body of BOMs alone is no record: :func:`no_record_in_batch`.)"""
    from .lines import without_line_boms

    kept = without_line_boms(text)
    if in_batch_transform(os.environ) and text.endswith("\ufeff") and text.rstrip("\ufeff").endswith("\n"):
        return kept + "\n"
    return kept


def answered_blank(texts):
    """Are ``texts``, every one blank, answered? In Batch Transform, yes: a mini-batch of empty reviews (one, with
    strategy="SingleRecord": pandas writes it as ``""`` in a one-column CSV) was a 400, which fails the whole job,
    where the same records among others are answered; and a body with no record at all (an empty object of the
    input: Spark's ``_SUCCESS``, an empty part file; ``[]``) gets no answer, a 200 (:func:`no_record_in_batch`). An
    endpoint's client is told (a 400)."""
    return in_batch_transform(os.environ)


def no_review_text(text=None, byte_order_mark=False):
    """The 400 of an endpoint's request without any review text (in Batch Transform each record is answered:
    :func:`answered_blank`), in one message for every content type, saying what a body of nothing else held: empty,
    a byte order mark alone, or blank lines. application/json said "not valid JSON: Expecting value: line 2 column 1
    (char 1)" of a body ``\n``, and JSON Lines "no JSON lines". ``text``: the body's, without its BOMs (None, or one
    with text: its records hold none); ``byte_order_mark``: the body held one (the client sent bytes, not nothing)."""
    from .lines import excel_separator

    said = "request holds no review text"
    first, _, rest = (text or "").partition("\n")
    if text and excel_separator(first.rstrip("\r")) and not rest.strip():  # (a CSV's or JSON Lines' blank line now)
        blank, shown = f" and {_blank_lines(rest)}" if rest else "", first.rstrip("\r").replace("\t", "<TAB>")
        return RequestError(400, f"{said}: the body holds only Excel's separator line ({shown}){blank}")
    if text is None or text.strip():
        return RequestError(400, said)
    if not text:
        return RequestError(400, f"{said}: the body is {'a byte order mark alone' if byte_order_mark else 'empty'}")
    return RequestError(400, f"{said}: the body is {_blank_lines(text)}")


def _blank_lines(text):
    """What ``text`` (blank) holds, as its lines are read: ``one blank line``, ``N blank lines``, counted at ``\\n``
    as :func:`_lines_of` ends them, and as SageMaker's SplitType=Line splits a file ("on a newline character
    boundary"), a last one without its end too; a carriage return that ends no CRLF is whitespace of its line, said
    as such (``\\r\\r`` was "one blank line", the old Mac line ends it may have meant unsaid)."""
    lines = text.count("\n") + (not text.endswith("\n"))
    blank = "one blank line" if lines == 1 else f"{lines} blank lines"
    lone = text.count("\r") - text.count("\r\n")
    if not lone:
        return blank
    carriage = "a carriage return that ends" if lone == 1 else f"{lone} carriage returns that end"
    return (f"{blank} holding {carriage} no line "
            f"(a line ends at \\n, as SageMaker's SplitType=Line splits a body)")


def no_record_in_batch(text):
    """Is ``text`` (a body's) no record at all in Batch Transform? An empty object of the job's input (Spark's
    ``_SUCCESS``, an empty part file) is sent as an empty body, and its 400 failed the whole job: zero records in,
    zero answers out. (A blank line is a record of text/plain, CSV and JSON Lines, answered as an empty review.)"""
    return not text and in_batch_transform(os.environ)


# ---- application/json

class _RepeatedKey(Exception):
    """A JSON object of a request names ``key`` twice (:func:`_unique_keys`)."""

    def __init__(self, key):
        super().__init__(key)
        self.key = key


def _unique_keys(pairs):
    """json's ``object_pairs_hook``: the object, or :class:`_RepeatedKey` for a key it names twice. json keeps the
    last of a repeated key without a word: ``{"instances": [...], "instances": [...]}`` (two requests' bodies merged)
    was answered for its second list alone. (One dict of the pairs: the check costs a length compare an object.)"""
    obj = dict(pairs)
    if len(obj) < len(pairs):
        seen = set()
        raise _RepeatedKey(next(key for key, _ in pairs if key in seen or seen.add(key)))
    return obj


def _repeated_key_message(exc):
    return f"repeats the key {json.dumps(exc.key)} in one JSON object, of which only one value can be read: send it once"


def json_request(text):
    """An ``application/json`` body's text -> :class:`Reviews` (:func:`json_texts`); a 400 when it is not JSON, or
    an object in it names a key twice. In Batch Transform a body of whitespace alone (an empty object of the input,
    or one ``echo`` wrote) holds no JSON value: no review, answered with none (:func:`no_record_in_batch`)."""
    if not text.strip():  # (no JSON value: json said "Expecting value: line 2 column 1 (char 1)" of a body \n)
        if in_batch_transform(os.environ):
            return Reviews()
        raise no_review_text(text)
    try:
        payload = json.loads(text, parse_int=json_integer, object_pairs_hook=_unique_keys)
    except _RepeatedKey as exc:
        raise RequestError(400, f"request body {_repeated_key_message(exc)}") from None
    except ValueError as exc:
        raise RequestError(400, f"request body is not valid JSON: {exc}{_json_lines_hint(text, exc)}") from None
    except RecursionError:  # "[[[[..." a few thousand deep: json's recursive decoder gives up
        raise RequestError(400, "request body is not valid JSON: nested too deeply") from None
    return json_texts(payload)


def json_texts(payload):
    """A JSON request's value (a string, a list of strings or ``{"instances": [...]}`` with an optional
    ``"configuration"``) -> :class:`Reviews`."""
    top = None
    if isinstance(payload, dict):
        if "instances" not in payload or not set(payload) <= {"instances", "configuration"}:
            lines = " (a line of JSON Lines? send it as application/jsonlines)" if "source" in payload else ""
            if "inputs" in payload and "instances" not in payload:  # (not taken as "instances": docs/SERVING.md)
                lines = (' ({"inputs": [...]} is the Hugging Face and TF Serving request shape: send {"instances": '
                         '[...]}, the same reviews under that key)')
            raise RequestError(400, 'a JSON object must be {"instances": [review, ...]} with an optional '
                                    '"configuration": {"k": K, "threshold": P}' + lines)
        if "configuration" in payload:
            top = _configuration(payload["configuration"])
        payload = payload["instances"]
        if not isinstance(payload, list):
            raise RequestError(400, '"instances" must be a list of strings')
    if isinstance(payload, str) or missing_json(payload):  # one review; a lone null is a missing one, as in a list
        payload = [payload]
    if not isinstance(payload, list):
        raise RequestError(400, f'expected a string, a list of strings or {{"instances": [...]}}, got JSON {_json_kind(payload)}')
    # a missing review (null as pandas writes it, NaN as Python's json does) is empty, as in JSON Lines and as predict
    # reads a file: it was a 400 that failed the whole request (in Batch Transform with split_type=None, the job)
    payload = ["" if missing_json(item) else item for item in payload]
    bad = [i for i, item in enumerate(payload) if not isinstance(item, str)]
    if bad:
        kind = _json_kind(payload[bad[0]])
        raise RequestError(400, f"every review must be a JSON string (or null); item {bad[0]} is {kind}"
                                f"{_ITEM_HINTS.get(kind, '')}")
    texts = Reviews(whole_characters(item) for item in payload)
    texts.top = top
    return texts


# What a review that is no string was, and what to send instead: the SDK's JSONSerializer sends a DataFrame's records
# (df.to_dict("records")) as objects and its .values (or a 2-D array) as arrays, and the 400 said only "item 0 is
# object", not how to send the reviews
_ITEM_HINTS = {
    "object": ' (a record, as df.to_dict("records") writes one: send each review as a string, e.g. '
              'df["text"].tolist(), or send such records one a line as application/jsonlines)',
    "array": ' (a row, as a DataFrame\'s .values or a 2-D array holds one: send each review as a string, e.g. '
             'df["text"].tolist())',
}


def _json_kind(value):
    """What JSON calls ``value``'s type (``null``, not Python's ``NoneType``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {int: "number", float: "number", str: "string", list: "array", dict: "object"}.get(type(value), type(value).__name__)


def _json_lines_hint(text, exc):
    """What a JSON error says when the body is JSON Lines, a JSON value a line: Batch Transform with
    ``content_type="application/json"`` and ``split_type="Line"`` sends a mini-batch of such lines, and every one was
    a 400 that said only ``Extra data: line 2 column 1``."""
    if getattr(exc, "msg", None) != "Extra data" or not text[:exc.pos].rstrip(" \t").endswith(("\n", "\r")):
        return ""
    return " (one JSON value a line is JSON Lines: send it as application/jsonlines, {\"source\": \"review\"} a line)"


def _configuration(config, named="configuration: "):
    """``{"k": 3, "threshold": 0.1}`` (both optional; SageMaker BlazingText's request shape) -> (k, threshold).
    ``named``: how an error names where they were (a JSON Lines record holds them itself: no "configuration")."""
    from .predict import check_top

    if not isinstance(config, dict) or not set(config) <= {"k", "threshold"}:
        raise RequestError(400, '"configuration" must be an object with "k" and/or "threshold"')
    # pandas writes a k column with a row that has none as floats and null ("k": 2.0, "k": null): each such line
    # was a 400 that failed its Batch Transform mini-batch. null is the default; a whole float, that number.
    k, threshold = config.get("k"), config.get("threshold")
    k, threshold = (1 if k is None else k), (0.0 if threshold is None else threshold)
    if isinstance(k, float) and k.is_integer():
        k = int(k)
    try:
        check_top(k, threshold, 1)
    except FastTextError as exc:
        raise RequestError(400, f"{named}{exc}") from None
    return k, threshold


# ---- application/jsonlines

def jsonlines_texts(text):
    """JSON Lines, one review per line, in BlazingText's Batch Transform shape: ``{"source": "review"}``
    with optional ``"k"`` (and ``"threshold"``); other keys (an id carried along) are left alone. A bare
    JSON string line (what an ``InputFilter`` of ``$.source`` leaves) is a review too. Line ends: ``\\n``
    or ``\\r\\n``; the last line's end is optional, and blank lines after the last record are no records (a file an
    editor or jq wrote often ends with one: it was a 400). A blank line before or between records (empty, or spaces)
    is a record, answered as an empty review in its place, as ``predict`` answers it (jsonl.jsonl_texts): Batch
    Transform (SplitType=Line) joins answer i to line i, and the whole mini-batch was a 400, which failed the job,
    where predict skipped the line, one answer short. In Batch Transform every line of the mini-batch is a record, the
    blank ones at its end too: it cuts a file wherever MaxPayloadInMB falls, so they may stand between records of the
    file (taken for its last lines, they were left unanswered, the mini-batch one answer short; alone, with
    SingleRecord, a 400 that failed the job). A broken line is a 400 naming its line number (counted within
    this request: one Batch Transform mini-batch). A line without ``"source"`` is answered for its text keys
    (``{"stars": 5.0, "text": "..."}``: the Yelp dataset's lines)."""
    lines = _excel_sep_blank(text)[0].split("\n")  # (a first line sep=,: blank, as predict reads any file's)
    if in_batch_transform(os.environ):
        if lines[-1] == "":
            lines.pop()  # the final line's end only: each line before it was sent as a record
    else:
        while lines and not lines[-1].strip():
            lines.pop()  # the final line's end, and blank lines after the last record
    texts = Reviews()
    texts.lines, texts.top = True, []
    for number, line in enumerate(lines, 1):
        if not line.strip():  # (a blank line among records: an empty review, the default k and threshold)
            texts.append("")
            texts.top.append(_configuration({}))
            continue
        record = _jsonlines_record(line[:-1] if line.endswith("\r") else line, number, len(lines) == 1)
        try:
            top = _configuration({key: record[key] for key in ("k", "threshold") if key in record}, named="")
        except RequestError as exc:
            raise RequestError(400, f"line {number}: {exc.message}") from None
        texts.append(whole_characters(record["source"]))
        texts.top.append(top)
    if not texts and not no_record_in_batch(text):
        raise no_review_text(text)
    return texts


def _jsonlines_record(line, number, only_line):
    """Line ``number`` of a JSON Lines request (its ``\\r`` taken off; ``only_line``: the request's one line) -> its
    record, a dict whose ``"source"`` is the review; a 400 naming the line when it holds none."""
    from .columns import HEADER_LABEL_NAMES, HEADER_TEXT_NAMES

    try:
        record = json.loads(line, parse_int=json_integer, object_pairs_hook=_unique_keys)
    except _RepeatedKey as exc:
        raise RequestError(400, f"line {number} {_repeated_key_message(exc)}") from None
    except json.JSONDecodeError as exc:
        from .lines import LONE_CR_HINT, has_lone_cr

        hint = LONE_CR_HINT if only_line and has_lone_cr(line) else ""  # an old Mac file: one line
        raise RequestError(400, f"line {number} is not valid JSON: {exc.msg} at column {exc.colno}{hint}") from None
    except RecursionError:
        raise RequestError(400, f"line {number} is not valid JSON: nested too deeply") from None
    if isinstance(record, str) or missing_json(record):  # a bare line null: a missing review, as {"source": null}
        record = {"source": record}
    if isinstance(record, dict) and "source" in record and missing_json(record["source"]):
        record = dict(record, source="")  # pandas' missing review (or NaN): empty, as predict reads it (was a 400)
    if isinstance(record, dict) and "source" not in record:
        # a line of a dataset as it is published (the Yelp dataset's review.json: {"review_id": ..., "stars": 5.0,
        # "text": ...}), sent as it is: its text keys, as predict reads such a file (jsonl.jsonl_texts); it was a
        # 400 for want of "source"
        # (a null text is empty, as predict reads it: pandas writes a missing review as null, and that one line
        # was a 400 that stopped the Batch Transform job)
        texts_of = ["" if missing_json(v) else v for k, v in record.items() if isinstance(k, str)
                    and k.strip().lower() in HEADER_TEXT_NAMES and k.strip().lower() not in HEADER_LABEL_NAMES
                    and (isinstance(v, str) or missing_json(v))]
        if texts_of:
            record = dict(record, source=" ".join(t for t in texts_of if t))
    if not isinstance(record, dict) or not isinstance(record.get("source"), str):
        raise RequestError(400, f'line {number} must be {{"source": "review text"}} (with optional "k"; or a '
                                f'text key such as "text" or "review"), got {line[:80]!r}'
                                f'{_json_request_hint(record, only_line)}')
    return record


def _json_request_hint(record, only_line):
    """What a JSON Lines 400 adds when the line is an application/json request (``{"instances": [...]}``, or a body
    that is one array of reviews), sent with the SDK's JSONLinesSerializer or content type: it said only what a line
    must be, not that the same body is answered as application/json (as JSON Lines sent as JSON is told the other
    way round: _json_lines_hint)."""
    if (isinstance(record, dict) and "instances" in record) or (only_line and isinstance(record, list)):
        return " (a JSON request? send it as application/json)"
    return ""


# ---- text/plain

def plain_texts(text):
    """A ``text/plain`` body -> its reviews, one a line."""
    from .text import split_lines

    texts = split_lines(text)  # (every line a review, one that reads sep=; too: _excel_sep_blank)
    _refuse_lone_cr(texts)
    return texts


def _excel_sep_blank(text, csv_body=False):
    """``(text, judged)``: an ``application/jsonlines`` or ``text/csv`` (``csv_body``) body's ``text`` with its first
    line read as a blank one when it is Excel's separator line (lines.excel_sep_line: the one rule of predict's files
    and the endpoint's bodies; ``sep=,``, a tab's), as predict reads any file's first line. It was answered as a review
    (and over a header row, that row too, each row whole; in JSON Lines, a 400), where predict reads the table under
    it. Alone without its line end (a Batch Transform record of its own: SingleRecord) it is a blank line still: read
    as no line at all, its request was a 400 that failed the job. (An unquoted ``sep=,`` is two fields in CSV, no
    review a CSV writer writes: the review ``sep=,`` is written ``"sep=,"``, and read as it.)

    Another separator's line (``sep=;``) in CSV: above a table of that separator (a header row of names training
    knows or not, ``Titel;Bewertung;Sterne``; rows with a class first), refused with predict's 400; above a comma- or
    tab-separated table (a header row, ``label,text`` or one column's ``text``; rows with a class first), blank as
    ``sep=,`` is (the line named the wrong separator; it was answered as a review, and the header and rows under it as
    reviews, one a line, each row whole), so that Batch Transform answers it as an empty review and its answers stay
    line for line; else a review that reads ``sep=;``, answered as one in its place, and no
    row of the table under it: ``judged``, the text the table is judged by, has it blank (the same ``text`` else), so
    that the rows under it are read as they are without it (csv_request). In JSON Lines (a ``text/csv`` body of them
    too) no such line is a review (nor JSON): a 400 at the endpoint, as predict refuses it (above JSON Lines: to remove
    it); a blank line in Batch Transform, where a mini-batch (SplitType=Line) may start anywhere in a file. (text/plain
    reads no separator line: plain_texts.)"""
    from .lines import excel_sep_line, excel_separator

    first = text[:text.find("\n")] if "\n" in text else text
    blanked = text[len(first):] or "\n"
    if excel_separator(first) and in_batch_transform(os.environ) and (not csv_body or _json_lines_body(blanked)):
        return blanked, blanked  # (a mini-batch of JSON Lines may start anywhere in the file: never refused there)
    try:
        excel = excel_sep_line(first, "request", _lines_of(blanked))
    except FastTextError as exc:
        raise RequestError(400, str(exc)) from None
    if excel:
        return blanked, blanked
    judged, past = _judged_past_a_sep_review(text)
    # (a sep=, or a tab's judged past after blank lines, which only Batch Transform does not refuse: a joined file's
    # Excel line where a mini-batch starts at the blank lines above it, read as a blank one, as where one starts at
    # it; answered as a review, it made the header under it one, which the whole file's batch reads as the header)
    return (judged if excel_separator(past or "") in (",", "\t") else text), judged


def _json_lines_body(text):
    """Is ``text`` (a ``text/csv`` body) JSON Lines, as :func:`csv_request` reads it (lines.json_lines_start)?"""
    opening = _opening(text, "")
    return opening is not None and json_lines_start(opening.first)


def _judged_past_a_sep_review(text):
    """``(judged, past)``: ``text`` with its first line that is not blank blanked where it reads as Excel's (lines.reads_as_excel_sep) but
    is none (a review: :func:`_excel_sep_blank`), its line end kept, so that the table under it is judged without it,
    as predict judges a file (lines.past_a_sep_review, the rule of both). After blank lines, where no line is Excel's
    (only the first is), such a line above a table or JSON Lines is a 400, as training and predict refuse it: in JSON
    Lines too, and in Batch Transform (the line was a 400 there all the same, "not valid JSON"), but for a ``sep=,``
    (or a tab's) above a comma or tab table there: a mini-batch may start at the blank lines above the ``sep=,`` of
    files joined with cat, a line answered where it stands between rows (lines.past_a_sep_review's ``anywhere``).
    ``past``: that line, without its line end (None: none was, and ``judged`` is ``text``)."""
    from .lines import past_a_sep_review

    try:
        blank = past_a_sep_review(_lines_of(text), "request", anywhere=in_batch_transform(os.environ))[0]
    except FastTextError as exc:
        raise RequestError(400, str(exc)) from None
    review = next((number for number, line in enumerate(blank) if line.strip()), None)
    if review is None:
        return text, None
    start, past = _after_lines(text, review), blank[review].rstrip("\n")
    return text[:start] + text[start + len(past):], past


def _refuse_lone_cr(lines):
    """A ``text/plain`` body that is one line with carriage returns inside it: its lines end in a lone ``\\r``
    (an old Mac file), and it was answered as one review. 400, as ``predict`` refuses such input (split at the
    ``\\r``, a review holding a stray one would be answered as two, out of step with what the client sent)."""
    from .lines import LONE_CR_HINT, has_lone_cr

    if len(lines) == 1 and has_lone_cr(lines[0]):
        raise RequestError(400, f"request body is one line with carriage returns inside it, which would be answered "
                                f"as one review{LONE_CR_HINT}, or send the reviews as JSON")


# ---- text/csv: its records and header row (csv_request), then their texts as the model's classes tell them (csv_texts)

def csv_request(text, header):
    """A ``text/csv`` body -> :class:`Reviews`: one per record, its fields joined with commas (a review's unquoted
    commas split it), with ``records`` and ``quoted`` for predict_fn, which reads them as training does instead when
    the first is a labeled row (the class first).

    ``header``: the Content-Type's ``header`` parameter (RFC 4180). ``present``: the first record is the header,
    not answered (it was scored as a review, every answer after it one off; in Batch Transform it is answered with
    :class:`~fasttext_lib.serve_responses.FieldNames` by predict_fn, one answer a record); when training recognizes its column
    names (``label,text``, ``text,label``, ``"Class Index","Title","Description"``), each record's text columns
    are answered, the class column not scored; when it names text columns only (``title,body``), each record's
    columns are answered joined, as training joins text columns. In Batch Transform every mini-batch carries the content type but
    only the first holds the header: there the first record is skipped only when it is such a header row."""
    from .formats import allow_long_csv_fields

    header = header.lower()
    if header not in ("", "present", "absent"):
        raise RequestError(400, f'text/csv: header must be "present" or "absent" (RFC 4180), got {header!r}')
    allow_long_csv_fields(len(text))  # a review may be as long as the body (the csv default: 128 KiB)
    text, judged = _excel_sep_blank(text, csv_body=True)
    # A TSV sent as text/csv (df.to_csv(sep="\t")) whose first line is a header row, as predict reads one: tab-separated
    # (each line was answered whole, the class and pandas' row number as words of the review, the header as a review)
    opening = _opening(judged, header)  # (the lines predict judges a file by: one rule of both, on the same lines)
    delimiter = "\t" if header != "absent" and _tsv_with_header(opening) else ","
    if delimiter == "," and opening is not None and json_lines_start(opening.first):
        # JSON Lines sent as text/csv (a .jsonl file given to Batch Transform with content_type="text/csv"): read as
        # predict reads such a file, and as application/jsonlines answers it, one answer a line. Read as CSV, each
        # review was its object's JSON, keys and braces as words. (A line that is no JSON object, {curly} text: CSV.)
        return jsonlines_texts(text)
    if delimiter == "," and header == "present" and _refuse_unread_tsv_header(opening):
        # Batch Transform: a later mini-batch's first line is a row, whatever it holds, so every mini-batch of such a
        # file is read as header=absent reads one, every line answered (a row quoted first, "cold soup"<TAB>1, failed
        # the comma reading: a 400 that failed the whole job)
        header = "absent"
    # (a body read tab-separated is a TSV, as predict reads a file before it asks whether it is semicolon-separated)
    semicolons = opening if delimiter == "," and opening is not None and ";" in opening.first else None
    # Its header row is known without the model's classes: refused before the body is read as CSV, which
    # R's "sentiment";"review" is not (a 400 that named no semicolon). Rows with a class first: csv_texts.
    _refuse_semicolon_table(semicolons, ())
    try:
        texts = _csv_body(text, header, delimiter)
    except RequestError as exc:
        if semicolons is None:
            raise
        # Rows with a class first may be a semicolon-separated table, which predict names before it reads the file
        # as CSV (headerless quoted rows, "positive";"great food", are no valid CSV read with commas: with
        # header=present that 400 was said instead): csv_texts asks with the model's classes, then says this
        texts = Reviews([semicolons.first])
        texts.records, texts.unread = [[semicolons.first]], exc
    texts.semicolon_lines = semicolons
    if delimiter == "," and header != "present" and opening is not None and "\t" in opening.first:
        # a TSV without a header row, its class first or last: csv_texts tells by the model's classes (_tab_rows)
        texts.tab_separated = lambda classes: _tab_body(text, header, opening, classes)
    return texts


def _csv_body(text, header, delimiter):
    """:func:`csv_request`'s reading of a ``text/csv`` body whose fields ``delimiter`` separates -> :class:`Reviews`."""
    records, names, start, blank, fell_back = _csv_records(text, header, delimiter)
    records, names, start, blank, repeats = _header_row_repeated(records, names, start, blank, header, delimiter,
                                                                 fell_back)
    if names is not None and not start:  # a header not declared, on the line after the blank ones (short names: one
        # line): the records begin after it, and whether the first is quoted is told there, as under a declared one
        # (it was told by the header's first character: "2","great food" under text read whole, as no labeled row)
        start = _after_lines(text, blank + 1)
    # Batch Transform joins answer i to record i (JoinSource=Input) or writes them line for line: the header (and the
    # blank lines before it) skipped unanswered left the mini-batch one answer short, the job failed or every joined
    # answer one record off. There they are answered (predict_fn): the header with the answer's field names, declared
    # or not. An endpoint answers the rows only, one answer a row, as predict answers a file with a header (an
    # undeclared header was answered with the field names, one answer more than the rows the client sent).
    lead = (blank, names is not None and in_batch_transform(os.environ))
    first_number = blank + 2  # the record number of the first one after the header (a blank line is a record, as
    #                          csv_texts numbers them)
    texts = _led(_csv_reviews(text, records, names, start, (first_number, repeats), header, delimiter), lead)
    texts.header_repeats = repeats if lead[1] else ()  # (answered with FieldNames in Batch Transform, as the header)
    # (csv_texts' 400s number its records as the body does: without a header, from 1)
    texts.first_number, texts.repeats_at = (first_number, repeats) if names is not None else (1, ())
    texts.header_names = names
    if in_batch_transform(os.environ):  # (text.split_lines' count, without a copy of every line of a 6 MB body)
        texts.body_lines = text.count("\n") + (not text.endswith("\n") and text != "")
    return texts


def _after_lines(text, count):
    """Where in ``text`` the lines after its first ``count`` (ended at ``\n``, as :func:`_lines_of` ends them) begin."""
    at = 0
    for _ in range(count):
        at = text.find("\n", at) + 1
        if not at:
            return len(text)
    return at


class _Opening(NamedTuple):
    """The start of a ``text/csv`` body, as predict's of a file (predict_input._Opening): its first line that is not
    blank (``first``, ``number``), the lines after it that tell what it starts (``following``: formats.lines_ahead),
    and whether that line may be a header row (``header``: not told ``header=absent``)."""

    number: int
    first: str
    following: list
    header: bool


def _opening(text, header):
    """The :class:`_Opening` of a ``text/csv`` body, its lines read as predict reads a file's (at ``\\n``, a CRLF's
    ``\\r`` dropped: text.split_lines), under the Content-Type's ``header`` parameter; None when every line is blank."""
    from .formats import lines_ahead
    from .lines import leading_blank_lines

    lines = (line[:-1] if line.endswith("\r") else line
             for line in (line[:-1] if line.endswith("\n") else line for line in _lines_of(text)))
    blank, first = leading_blank_lines(lines)
    if first is None:
        return None
    return _Opening(len(blank) + 1, first, lines_ahead(lines)[0], header != "absent")


def _record_numbers(first_number, repeats):
    """The numbers in the body of the records after a CSV body's header, in order: the first is ``first_number``,
    and the header's ``repeats`` (where they stood among them: cat a.csv b.csv), none of the records, are lines of the
    body all the same (a 400 after one named the record before it, as predict names the file's lines)."""
    skipped = set(repeats)
    return (first_number + at for at in itertools.count() if at not in skipped)


def _record_number(position, numbering):
    """The number in the body of the record at ``position`` among those :func:`_record_numbers` numbers
    (``numbering``: its arguments)."""
    return next(itertools.islice(_record_numbers(*numbering), position, None))


def _csv_records(text, header, delimiter):
    """:func:`csv_request`'s reading of a ``text/csv`` body -> (``records``, ``names``: the declared header row or
    None, ``start``: where the records after it begin in ``text``, ``blank``: the blank records before it,
    ``fell_back``: the body was read a line at a time, as it is not valid CSV or is the SDK's reviews one a line)."""
    fell_back = False  # a body that is not valid CSV, read a line at a time
    for quoting in (csv.QUOTE_MINIMAL, csv.QUOTE_NONE):
        stream = _lines_of(text)
        reader = csv.reader(stream, strict=True, delimiter=delimiter, quoting=quoting)
        records, spanned = [], False  # spanned: a record read before an error went on over a line break (CSV's quoting)
        try:
            names, start, blank = None, 0, 0
            if header == "present":
                reader, names, start, blank = _declared_header(stream, reader, delimiter, quoting)
            line, seen = reader.line_num, names is not None  # seen: a row read (a header too: _blank_or's leading)
            at = stream.tell()  # where the record read next begins, while no row is read (_blank_or's leading)
            for record in reader:
                if len(record) == 1:  # (only a record of one field may be blank: no call for the others)
                    record = _blank_or(record, leading=None if seen else text[at:stream.tell()])
                records.append(record)
                seen = seen or bool(record)
                at = at if seen else stream.tell()
                spanned, line = spanned or reader.line_num - line > 1, reader.line_num
            if _sdk_reviews(text, records, spanned, header, delimiter, error=False):
                # Quotes that went on over line breaks in a body no CSV writer wrote (_read_a_line_at_a_time): the
                # SDK's CSVSerializer did, one review a line, unquoted; one review opening a quotation mark at its
                # start and a later one closing one at its end were read as one record over the lines between: fewer
                # answers than reviews, every answer after them off. Read a line at a time, as a body that is not
                # valid CSV.
                records, fell_back = _csv_lines(text), True
            break
        except csv.Error as exc:
            if delimiter == "\t" and not spanned and quoting != csv.QUOTE_NONE:
                continue  # a TSV whose quotation marks are no CSV quoting (GLUE's): each line split at its tabs, as
                #           pd.read_csv(sep="\t", quoting=3) reads it
            if _sdk_reviews(text, records, spanned, header, delimiter, error=True):
                # quotes over line breaks in a body no CSV writer wrote, as above, then an error (a review opening a
                # quotation mark it never closes, after such a pair): the SDK's body, read a line at a time; it was a
                # 400 that, in Batch Transform, failed the job
                records, fell_back = _csv_lines(text), True
                break
            if header == "present" and names is not None and len(names) == 1 and not spanned and _lone_cr(exc):
                # A CSV of one column: its record is the whole line, a lone \r in it whitespace of the review, as
                # predict reads the file (it was a 400): each line after the header whole
                records, fell_back = _csv_lines(text[start:]), True
                break
            # A file with a header row is CSV written by a program, and so is a body whose records went on over line
            # breaks inside quotes (pandas writes a review with a line break so): its error is the request's. Read a
            # line at a time, such a record was answered as two reviews, every answer after it one off.
            if header == "present" or spanned or delimiter == "\t" or _lone_cr_in_csv(exc, records, text):
                tabs = " (read tab-separated: its first line is a tab-separated header row)" if delimiter == "\t" else ""
                raise RequestError(400, f"request body is not valid CSV{tabs}: "
                                        f"{_csv_error(exc, reader.line_num)}{_cut_hint(exc)}") from None
            records = _csv_lines(text)
            fell_back = True
            break
    return records, names, start, blank, fell_back


def _lines_of(text):
    """``text`` as a stream of lines that end at ``\\n`` only (``\\r\\n`` too), as SageMaker's SplitType=Line cuts a file
    and joins answers to its lines, and as predict reads a file's lines: read with universal newlines, the csv module
    ended a record at a lone ``\\r`` as well (an old Mac file's line end inside a line, pasted text), and a line holding
    one got two answers, every answer after it a line off in Batch Transform."""
    return io.StringIO(text, newline="\n")


def _lone_cr(exc):
    """Is a CSV reader's error ``exc`` a lone ``\\r`` inside an unquoted field (a record ends at ``\\n`` only:
    :func:`_lines_of`)?"""
    return "new-line character seen in unquoted field" in str(exc)


def _csv_error(exc, line):
    """What a CSV reader's error ``exc`` at ``line`` says to the client: a lone ``\\r`` inside an unquoted field as
    predict says it (formats.csv_rows), Python's advice ("open the file with newline=''") left out: it is not the
    client's."""
    from .lines import LONE_CR_HINT

    if _lone_cr(exc):
        return f"line {line}: a line break inside an unquoted field{LONE_CR_HINT}"
    return str(exc)


def _lone_cr_in_csv(exc, records, text):
    """Is ``exc`` a lone ``\\r`` inside an unquoted field of a body whose first row (``records``: those read before
    it) is a header row over rows that make a table of it, which predict reads as CSV and refuses so? predict tells
    a table by the first lines read with each lone \\r a space (predict_input.input_check): over lines that are no
    table (``label,text`` over reviews without a class) every line is a review, the \\r whitespace in it, and the
    body was a 400 (in Batch Transform, a failed job) where the same body with a space for the \\r was answered. A
    body read a line at a time has each line whole as one review, as predict reads it as text."""
    from .columns import index_header_start, short_header
    from .lines import lone_cr_as_space

    if not _lone_cr(exc):
        return False
    first = next((record for record in records if record), None)
    if first is not None and not (short_header(first) or index_header_start(first)):
        return False
    read = []  # the last line read (_blank_or's leading)

    def lines():
        for line in _lines_of(text):
            read[:] = [lone_cr_as_space(line.rstrip("\r\n")) + "\n"]
            yield read[0]

    ahead = []  # (not strict, as predict reads the first lines: the strict reading's 400s are said after)
    with contextlib.suppress(csv.Error):
        for record in csv.reader(lines()):
            if _blank_or(record, leading=None if ahead else read[0]):
                ahead.append(record)
            if len(ahead) > HEADER_LOOKAHEAD:
                break
    if first is None:  # the \r in the first row itself (\rlabel,text): that row with it a space, as predict reads it
        # (\rreview, a header of one column, is no table to predict, which reads every line as a review)
        first = ahead[0] if ahead else []
        if not (short_header(first) or index_header_start(first)):
            return False
    return _undeclared_header(ahead)


def _cut_hint(exc):
    """What a CSV error says in Batch Transform when a quoted field is open at the end of the body: SplitType=Line cut
    the file at a line break inside a review quoted over lines (pandas writes one so), and the 400 that failed the job
    said only "unexpected end of data"."""
    if not in_batch_transform(os.environ) or "unexpected end of data" not in str(exc):
        return ""
    return (' (a quoted field open at the end of the mini-batch: with split_type="Line" SageMaker cuts a review quoted '
            'over several lines between mini-batches; write each review on one line, or send JSON Lines)')


def _blank_or(record, leading=None):
    """``record`` (a CSV reader's, or None), or ``[]`` when it is one field without text (formats.predicted_record: a
    line of spaces, or ``""``), a blank record as an empty line is ([]), as predict reads a table's records
    (formats.csv_rows). Read as a field, it was a record of one column: under a header of two (label,text), or among
    labeled rows, a 400 that failed a whole Batch Transform job, where predict answers it as an empty review; above a
    header, taken for the header itself. ``leading``: the record's line(s) as the body writes them, when no row came
    before it, where predict reads lines, not records (lines.leading_blank_lines): only a line of spaces is blank
    there, and a line ``""`` or ``"  "`` (a quoted field of spaces, no line of spaces) is the input's first, which
    starts no table (predict answers each line as a review): it stays a record of one field, no header or labeled
    row, as the look-ahead's first row (:func:`_rows_ahead`). (Its field was asked: ``"  "`` above ``label,text`` was
    blank, the table below it read as one, where predict answered every line whole, the header too.)"""
    if record is None or len(record) != 1:
        return record
    return [] if (leading.isspace() if leading is not None else not predicted_record(record)) else record


def _rows_ahead(records, count=HEADER_LOOKAHEAD):
    """The first ``count`` rows of a ``text/csv`` body's ``records`` (blank ones, ``[]``, left out: every record
    predict does not read as a row, :func:`_blank_or`), those its look-ahead holds (header_row.table_lookahead, whose
    rows after a table's first one decide what that one is and which columns are text; formats.labeled_csv_records'
    first records). Each of the endpoint's decisions takes its rows from here: they took the first records, blank
    ones among them, and a body with many blank lines was judged by fewer rows than predict judges the same file by
    (a header taken for a review, a column of ids or of prose read otherwise)."""
    return list(itertools.islice(filter(None, records), count))


def _declared_header(stream, reader, delimiter, quoting):
    """The header row of a ``header=present`` body, read from ``reader`` (over ``stream``) -> (the reader of the
    records after it, the header row or None, where they begin in the body, the blank records before it). In a
    Batch Transform mini-batch after the first, whose first record is data, none: the body is read from its start."""
    from .columns import index_header_start, one_column_text_header, short_header

    names, start, blank = None, 0, 0
    first = _header_line_record(stream, reader)
    while first == []:  # blank lines before the header: records all the same, as the numbers below count them
        blank, first = blank + 1, _header_line_record(stream, reader)
    if first is not None and (short_header(first) or one_column_text_header(first)
                              or index_header_start(first) or not in_batch_transform(os.environ)):
        names, start = first, stream.tell()
    else:  # a later Batch Transform mini-batch: its first record is data
        stream.seek(0)
        reader = csv.reader(stream, strict=True, delimiter=delimiter, quoting=quoting)
        blank = 0
    return reader, names, start, blank


def _header_line_record(stream, reader):
    """The next record of a ``header=present`` body up to its header (``reader`` over ``stream``), a blank one
    ``[]``. A line with a lone ``\\r`` in an unquoted field that is one column with it a space (``\\rreview``: an old
    Mac line end above the header) is that one column, the whole line, the \\r whitespace in it, as under a header
    of one column a later line is (:func:`_csv_records`) and as predict reads the file (each line a review: the header
    too). Wider (``\\rlabel,text``), it is the CSV error predict refuses the file with, the 400 the caller says."""
    from .lines import lone_cr_as_space

    at = stream.tell()
    try:
        record = next(reader, None)
        # (told header=present, a record without text above the header is none, a quoted field of spaces too)
        return _blank_or(record, leading=record[0] if record and len(record) == 1 else None)
    except csv.Error as exc:
        line = stream.getvalue()[at:stream.tell()]
        line = line[:-1] if line.endswith("\n") else line
        spaced = _one_record(lone_cr_as_space(line)) if _lone_cr(exc) and "\n" not in line else None
        if spaced is None or len(spaced) != 1:
            raise
        return _blank_or(spaced, leading=spaced[0])


def _sdk_reviews(text, records, spanned, header, delimiter, error):
    """Quotes that went on over line breaks in a body no CSV writer wrote (:func:`_read_a_line_at_a_time`; its
    reading ended in an error, or not): read it a line at a time."""
    return (spanned and header != "present" and delimiter == ","
            and _read_a_line_at_a_time(records, text, error, header == "" and _undeclared_header(records)))


def _header_row_repeated(records, names, start, blank, header, delimiter, fell_back):
    """:func:`_csv_header_row` of a body that may be files joined with their headers (``cat a.csv b.csv``, an export
    in parts): a later row that repeats the first one (two fields or more; capitals, spaces and a BOM count for
    nothing: header_row.RepeatedHeader, as predict compares them) is left out of the records that decide whether the
    first row is a header, and, when it is one, out of the records answered, as predict skips it in a file ->
    (``records``, ``names``, ``start``, ``blank``, ``repeats``: where the repeats stood among the records after the
    header, for Batch Transform, which answers each with the header's FieldNames). The header's repeat read as a
    record said its text column's name recurred below it: no header (header_columns), and the body was answered
    line by line, the header and its repeats as reviews, each record whole, its class a word of its text (predict
    answered the records' texts: fewer answers, the others different)."""
    first_at = None if names is not None else next((i for i, record in enumerate(records) if record), None)
    first = names if names is not None else None if first_at is None else records[first_at]
    after = 0 if names is not None else (first_at or 0) + 1  # where the records after the first row begin
    repeats = _repeats_of(first, records[after:]) if first else []
    if repeats:
        kept = records[:after] + _left_out(records[after:], repeats)
        # (an undeclared header is judged by predict's look-ahead, its repeats among them: _undeclared_header)
        got = _csv_header_row(kept, names, start, blank, header, delimiter, fell_back, judged=records)
        if got[1] is not None:  # a header: its repeats are none of the records
            return (*got, repeats)
    return (*_csv_header_row(records, names, start, blank, header, delimiter, fell_back), ())


def _repeats_of(first, records):
    """Where among ``records`` the header row ``first`` is repeated (files joined with their headers): capitals,
    spaces and a BOM count for nothing (header_row.RepeatedHeader, as predict compares them). Excel's separator line
    above a joined file's header (formats.excel_sep_record) is one of its lines too: no record, as predict skips it
    (it was answered as the review ``sep=`` under ``text,label`` or ``title,body``, else as an empty one)."""
    from .formats import excel_sep_record
    from .header_row import RepeatedHeader

    repeated = RepeatedHeader([(first, 1)], "request", None)
    return [i for i, record in enumerate(records) if repeated.repeats(record) or excel_sep_record(record)]


def _left_out(records, positions):
    """``records`` without those at ``positions`` (a set made once: made for each record, a body of many repeats took
    minutes, quadratically)."""
    skipped = set(positions)
    return [record for i, record in enumerate(records) if i not in skipped]


def _csv_header_row(records, names, start, blank, header, delimiter, fell_back, judged=None):
    """The header row of a ``text/csv`` body read by :func:`_csv_records`: one not declared taken from the records,
    one declared that only reads like one (a later Batch Transform mini-batch's review) given back to them ->
    (``records``, ``names``, ``start``, ``blank``). ``judged``: the records an undeclared header is judged by, the
    header's repeats among them (:func:`_header_row_repeated`: ``records`` are without them), else ``records``."""
    from .columns import header_columns, header_layout
    from .formats import header_alone

    undeclared = names is None and header == "" and (_tsv_header(records) if delimiter == "\t" else not fell_back and (
        _undeclared_header(records if judged is None else judged) or header_alone(records)))
    if undeclared:  # a header row (a TSV's, or one predict recognizes), not declared (header=present): read as declared
        blank = next(i for i, record in enumerate(records) if record)
        names, records = records[blank], records[blank + 1:]
    if (names is not None and in_batch_transform(os.environ) and header_layout(names) is not None
            and header_columns(names, _rows_ahead(records)) is None):
        # a later mini-batch whose first record only reads like a header: a review that is one word naming a class
        # column (2,Stars; positive,Score: its class recurs below it, columns.header_columns) was skipped, unanswered,
        # and every answer after it one off
        records, names, start, blank = [[]] * blank + [names] + records, None, 0, 0
    return records, names, start, blank


def _tsv_header(records):
    """Is the first row of a ``text/csv`` body read tab-separated (its first line a TSV's header row, by the rows after
    it: formats.tsv_with_header) its header, as predict reads the same file (data.examples_of_lines)? Not when the
    rows after it (:func:`_rows_ahead`) say it is a record, its first value or a text column's name recurring below it
    in its column (columns.text_header, columns.header_columns: ``positive<TAB>review`` over ``negative<TAB>cold soup``,
    ...): predict reads it as the first labeled row, every record's class first (:attr:`Reviews.class_first`),
    whatever the model's classes. It was taken for the header: unanswered, one answer fewer than predict gives."""
    from .columns import header_columns, index_header_start, text_header

    rows = _rows_ahead(records, HEADER_LOOKAHEAD + 1)
    if len(rows) < 2 or index_header_start(rows[0]):  # (pandas' index first: its rows tell, _csv_reviews)
        return True
    first, rest = rows[0], rows[1:]
    return text_header(first, rest, predicting=True) or header_columns(first, rest) is not None


def _csv_reviews(text, records, names, start, numbering, header, delimiter):
    """The reviews of a ``text/csv`` body's ``records`` under its header row ``names`` (None: none), numbered as
    :func:`_record_numbers` (``numbering``: its arguments) numbers them: each record whole, or, under a header
    training recognizes, its text columns."""
    from .columns import (header_layout, header_text_columns, index_column, index_rows, table_text_columns,
                          table_texts, text_header_columns)

    shown = names  # the header as the request writes it
    index = names is not None and index_column(names, records)
    if index:  # pandas' index column first (,label,text; df.to_csv() without index=False): left out, as training does
        try:
            records = [record for record, _ in index_rows(zip(records, _record_numbers(*numbering)),
                                                         lambda number: f"CSV record {number}")]
        except FastTextError as exc:
            raise RequestError(400, str(exc)) from None
        names = names[1:]
    if names is not None and text_header_columns(names) is not None:
        # a header of text columns only (title,body): no class column, every column text (only the body was
        # answered, the title dropped as if it were a class)
        try:
            return Reviews(table_texts(zip(records, _record_numbers(*numbering)), names,
                                       table_text_columns(names, _rows_ahead(records)),
                                       lambda number: f"CSV record {number}"))
        except FastTextError as exc:
            raise RequestError(400, str(exc)) from None
    layout = header_layout(names) if names is not None else None
    if layout is not None:  # a table's prose columns beside its named text columns are text, as training reads them
        layout = header_text_columns(names, layout, _rows_ahead(records))
    if layout is None:
        texts = Reviews(delimiter.join(record) for record in records)
        texts.records, texts.quoted = records, text[start:].lstrip()[:1] == '"'
        texts.class_first = names is None and delimiter == "\t"  # (a TSV whose first row is a record: _tsv_header)
        texts.after_header = header == "present" and names is None  # (its header was in the first mini-batch)
        # (plain text/csv, as docs/SERVING.md's transform() sends a file: its first mini-batch's header is recognized
        # without header=present, and the later ones were answered whole, row numbers and classes as words)
        texts.may_follow_header = names is None and header != "absent" and in_batch_transform(os.environ)
        return texts
    return _header_column_texts(records, names, shown, layout, index, numbering)


def _header_column_texts(records, names, shown, layout, index, numbering):
    """The reviews of ``records`` under a header whose ``layout`` (class column, text columns) training recognizes:
    each record's text columns (``shown``: the header as the request writes it, ``index``: pandas' index column left
    out of it; ``numbering``: :func:`_record_numbers`' arguments)."""
    from .columns import csv_text

    label_col, text_cols = layout
    # As training reads the rows (formats.csv_row_to_example): the class first and every other column text
    # (label,text): a record's columns after the class are all its text, an unquoted comma's too (only the column
    # under the header was answered, the review cut at its comma); a class elsewhere (text,label): every record as
    # wide as the header (a wider one was answered for the wrong column, or half its text)
    whole = label_col == 0 and text_cols == list(range(1, len(names)))
    bad = next((i for i, record in enumerate(records)
                if record and (len(record) < 2 if whole else len(record) != len(names))), None)
    if bad is not None:
        comma = " (a comma in an unquoted text? quote the field)" if len(records[bad]) > len(names) else ""
        number = _record_number(bad, numbering)
        raise RequestError(400, f"CSV record {number} has {len(records[bad]) + index} column(s), but the "
                                f"header ({','.join(shown)}) names {len(shown)}{comma}")
    _refuse_metadata_columns(records, layout, names)
    return Reviews((csv_text(record[1:]) if whole else csv_text([record[c] for c in text_cols])) if record else ""
                   for record in records)


def _undeclared_header(records):
    """Is the first record of a ``text/csv`` body without ``header=present`` (after blank ones) a header row, as
    ``predict`` recognizes one in a file (predict_input.input_check)? pandas' ``to_csv()`` writes one; the SDK's
    ``CSVSerializer`` never does. It is when it is a header row training recognizes (``label,text``; ``,label,text``
    with pandas' index; formats.labeled_csv_records: at least half the records after it as wide as it), and not a
    review of one word naming a class column whose class recurs below it (``2,Stars``), nor one with a space after a
    comma, as prose writes one (``Overall, highly recommended.``); or a header of one text column (``review``) whose
    name does not start any of the records after it in the look-ahead (a first line ``review`` that occurs again is a
    review), as predict reads it (columns.text_header), whatever their width: labeled rows under it (``text`` over
    ``1,bad``: a labeled file whose header names its text only) are read by :func:`csv_texts` as without it, reviews
    with unquoted commas whole. Over records wider than it, the header was answered as a review, one answer more than
    predict gives for the same bytes."""
    from .columns import (header_columns, header_layout, index_header_start, one_column_text_header, prose_commas,
                          short_header, text_header)
    from .formats import labeled_csv_records

    rows = _rows_ahead(records, HEADER_LOOKAHEAD + 1)
    if len(rows) < 2:  # a header alone: formats.header_alone
        return False
    first, rest = rows[0], rows[1:]
    if one_column_text_header(first):
        return text_header(first, rest, predicting=True)
    if not (short_header(first) or index_header_start(first)):
        return False
    if prose_commas(first):
        # A space after a comma is prose's, not a CSV writer's (pandas writes its column names as they are, no space
        # after the commas): a CSVSerializer's first review of two short phrases, one a class column's name
        # ("Overall, highly recommended."; "Class, style and comfort."; "Great phone, overall") over reviews of one
        # comma each was taken for the header, answered with the field names, and each review after it cut at its
        # comma, the words before it taken for a class (or, a review without a comma among them, a 400)
        return False
    # The rows are predict's look-ahead, the header's repeats (files joined with cat) among them: the columns are told
    # by them without the repeats, as training's look-ahead leaves them out (header_row.table_lookahead; a repeat
    # read as a row said the text column's name recurred: no header), and the table by them all, as predict's
    # formats.labeled_csv_records counts them (predict_input._labeled_start). Judged by rows further down, after the
    # repeats were left out, a body predict and training read under its header was answered a line at a time.
    if header_layout(first) is not None and header_columns(first, _left_out(rest, _repeats_of(first, rest))) is None:
        return False
    return labeled_csv_records([first] + rest, False, (), header=True)


def _tsv_with_header(opening):
    """Is a ``text/csv`` body that starts with ``opening`` (:class:`_Opening`) tab-separated, as ``predict`` reads an
    input (formats.tsv_with_header, which predict_input.input_check asks of the same lines): its first line (after
    blank ones) a TSV's header row and the records after it as wide as it? A review holding a tab (``great
    food<TAB>loved it``) is no header row: its line is not split."""
    from .formats import tsv_with_header

    return opening is not None and tsv_with_header([opening.first] + opening.following)


def _refuse_unread_tsv_header(opening):
    """A 400 for a ``header=present`` body (its :class:`_Opening`) whose header row is tab-separated
    (columns.tab_separated_row) of names no TSV header row has (columns.tsv_header_line): predict reads no
    columns from such a file, every line of it a review, the header too, so there are none to read its rows by. Read
    at commas, each row was answered whole, its class a word of its review, and a field quoted first in a row was a 400
    that named no tab. In Batch Transform, where a later mini-batch's first line is a row, whatever it holds, True:
    the body is read as ``header=absent`` reads one, line for line. Else (no such header row) False."""
    from .columns import tab_separated_row, tsv_header_line

    row = tab_separated_row(opening.first) if opening is not None else None
    if row is None or tsv_header_line(opening.first):
        return False
    if in_batch_transform(os.environ):
        return True
    raise RequestError(400, f"text/csv; header=present: the header row on line {opening.number} "
                            f"({'<TAB>'.join(row)}) is tab-separated but names no columns training reads (label, "
                            f"text, ...): name them so (label<TAB>text), or send the body without header=present to "
                            f"have every line answered as a review, as predict answers the file")


def _unwritten(records):
    """Do a ``text/csv`` body's ``records`` differ in width, as no CSV writer's do (pandas, csv and R quote every comma
    in a field), but the SDK's CSVSerializer's of reviews one a line, unquoted, may (a review's unquoted comma)?"""
    return len({len(r) for r in records if r}) > 1




def _read_a_line_at_a_time(records, text, error=False, header_row=False):
    """Is a comma-separated ``text/csv`` body that is valid CSV, some of its ``records`` going on over line breaks
    inside quotes, the SDK's ``CSVSerializer`` output of a list of reviews (one a line, unquoted), to be read a line
    at a time, rather than CSV written by a program (pandas' ``to_csv``, the csv module, R; the SDK's CSVSerializer
    of a DataFrame), whose record over lines is one review? A 400 when it can be neither told nor safely guessed.

    A CSV writer quotes every field holding a comma, a quotation mark (doubled inside) or a line break, and ends every
    record with a line break, the last one too. The SDK's CSVSerializer joins reviews with line breaks, the last
    without one, and quotes nothing. So the body is the SDK's when its records differ in width (a review's unquoted
    comma) or a field that is not quoted holds a quotation mark (``He said "wow" twice``), whatever else it holds: no
    writer wrote it. Else it is a writer's when it ends with a line break (a review opening a quotation mark at its
    start and a later one closing one at its end, no other mark, in a body that ends as a writer's does, cannot be
    told from pandas' quoting of a review over lines, and is read as CSV). Else, without its last line break, it is
    the SDK's list of reviews unless it holds a writer's quoting (a field quoted on one line holding a comma, or a
    doubled quotation mark): pandas' output stripped, or the SDK's CSVSerializer of a list of rows, cannot be told from
    reviews one a line, and either reading would answer the other's reviews: a 400.

    ``error``: CSV's reading of the body ended in an error (``records`` are those before it). Its quotation mark that
    is never closed is no sign of the SDK's body (pandas' output with one bad record holds one too): a body that ends
    with a line break is then CSV with an error (False: the caller's 400).

    ``header_row``: the first record is a header row ``predict`` recognizes (:func:`_undeclared_header`), and the body
    is read as if it were declared (``header=present``: CSV). pandas' ``to_csv()`` writes one, the SDK's CSVSerializer
    never does: a writer's body, read as CSV whatever the widths of its records when it is valid CSV (``text`` over
    ``"2","great<LF>food"``: each line was answered, the header and both halves of the quoted field, where predict
    answers the one record; with an error after records of different widths, predict reads the file a line at a time,
    and so does this) and whether or not it ends with a line break (pandas' output with a review
    over lines, stripped of its last line break, or such a file's first mini-batch in Batch Transform, which ends
    with none, was a 400, where with ``header=present`` it was read as CSV, one review a record). Not valid CSV, it
    is a writer's with an error (False)."""
    if header_row and not error:  # (before the widths: under a header of one name, labeled rows are wider)
        return False
    if _unwritten(records):  # (after an error too, with a header row: predict reads such a file a line at a time)
        return True
    if header_row:
        return False
    fields = list(QUOTED_FIELD.finditer(text))
    if not error and '"' in QUOTED_FIELD.sub("", text):  # a quotation mark in a field that is not quoted
        return True
    if text.endswith(("\n", "\r")):
        return False
    written = next((m for m in fields if '""' in m.group(1)
                    or ("," in m.group(1) and "\n" not in m.group(1) and "\r" not in m.group(1))), None)
    if written is None:
        return True
    line = text.count("\n", 0, written.start()) + 1
    raise RequestError(400, f"text/csv: the body's records go on over line breaks inside quotes and it is quoted as "
                            f"a CSV writer quotes (line {line}), but it does not end with a line break as a CSV "
                            f"writer's does: it cannot be told whether it is CSV (a review over lines) or reviews one "
                            f"a line; end the body with a line break if it is CSV, or send the reviews as "
                            f"application/json or text/plain")


def _led(texts, lead):
    """``texts`` with ``lead`` = (blank records before the header, is the header answered: in a Batch Transform
    mini-batch): answered ahead of the reviews by predict_fn, so that every record has its answer."""
    if lead[1]:
        texts.lead_blank, texts.header_record = lead
    return texts


def _csv_lines(text):
    """The records of a ``text/csv`` body that is not valid CSV as a whole, a line at a time: a line that is a CSV
    record alone is that record, a line that is not is one field, whole (as a ``text/plain`` line).

    The sagemaker SDK's ``CSVSerializer`` writes a list of reviews one per line, unquoted, so a review that opens
    with a quoted phrase (``"Best buy ever" until it broke``) or holds one quotation mark is no CSV record: the
    whole request was a 400 ("not valid CSV"), for reviews the SDK itself had written."""
    from .lines import has_lone_cr, lone_cr_as_space
    from .text import split_lines

    lines = split_lines(text)
    _refuse_lone_cr(lines)  # an old Mac file's lines: one line for SageMaker and predict, which refuses it
    records, seen = [], False  # seen: a row read (_blank_or's leading)
    for line in lines:
        if not line.strip():  # (a line of spaces too: _blank_or)
            records.append([])
            continue
        if "\r" in line and has_lone_cr(line):
            # Its \r inside a quoted field is the field's: the line is that record. Else (without a quotation mark,
            # surely) it stands in an unquoted field, which no CSV record holds: the line is read whole, parsed once
            # with the \r a space (it was parsed as it is first, to fail: each such line twice, a body of them read
            # about 4 times as slowly as one without)
            record = _one_record(line) if '"' in line else None
            records.append(record or WholeLine([line], _one_record(lone_cr_as_space(line))))
        else:
            record = _one_record(line)  # ("": blank, as read as CSV, but for a first row: _blank_or)
            records.append([line] if record is None else _blank_or(record, leading=None if seen else line))
        seen = seen or bool(records[-1])
    return records


def _one_record(line):
    """The CSV record that ``line`` is alone, or None when it is none (or more than one)."""
    try:
        parsed = list(csv.reader([line], strict=True))
    except csv.Error:
        return None
    return parsed[0] if len(parsed) == 1 else None


class WholeLine(list):
    """A line of a ``text/csv`` body read whole, one field, as it is no CSV record for a lone ``\\r`` in an unquoted
    field; ``fields``: the record it would be with that ``\\r`` a space (None: none), for csv_texts to tell whether
    the body is a table (then the \\r is refused, as predict refuses it) or reviews one a line."""

    def __init__(self, line, fields):
        super().__init__(line)
        self.fields = fields


def _refuse_metadata_columns(records, layout, names=None, under_header=True):
    """A 400 for a CSV request whose columns after the class hold ids, dates or user names (Sentiment140's),
    refused as training and predict refuse them (``layout``: a header's (class column, text columns), or None:
    the class first), over the rows predict's look-ahead holds (:func:`_rows_ahead`): the first HEADER_LOOKAHEAD
    after a header (``under_header``), else HEADER_LOOKAHEAD + 1 with the first row."""
    from .columns import check_text_columns

    try:
        check_text_columns(_rows_ahead(records, HEADER_LOOKAHEAD + (not under_header)), layout, "request", names)
    except FastTextError as exc:
        raise RequestError(400, str(exc)) from None


def csv_texts(reviews, predictor):
    """The reviews of a ``text/csv`` request: when its first record is a labeled row, the class first and the text
    after it (``"2","the food was great"``, a line of a Zhang et al. file: formats.labeled_csv_records), every record's
    text columns as training reads them (the class not scored, as by ``predict``); else each record whole.

    A Batch Transform mini-batch after the first of a ``header=present`` file (``reviews.after_header``), or of a file
    sent without ``header=present`` whose header the first mini-batch's rows made known (``reviews.may_follow_header``:
    any mini-batch without a header row), holds no header: when the file was written with pandas' index
    (``,label,text``), its records begin with the row numbers (``8123,2,the food was great``). When every record does
    (columns.headless_index_rows), they are left out, as the first mini-batch's header had them left out, and the rest
    is read as above (a labeled row: its class first). Records with the class last (``text,label``:
    formats.class_last_rows) are read for their other columns, as under the header. A TSV whose first row is a record
    (``reviews.class_first``: :func:`_tsv_header`) is read as labeled rows whatever the model's classes, as predict
    reads it."""
    from .columns import csv_text, headless_index_rows
    from .formats import class_last_header, typed_header_kind
    from .lines import LONE_CR_HINT, has_lone_cr

    reviews = _tab_rows(reviews, predictor.class_values) or reviews
    records, quoted, after_header = reviews.records, reviews.quoted, reviews.after_header
    told_header = after_header  # (header=present: a later mini-batch's rows are under the file's header row)
    header_names, class_first = reviews.header_names, reviews.class_first
    numbering = (reviews.first_number, reviews.repeats_at)
    _refuse_semicolon_table(reviews.semicolon_lines, predictor.class_values)
    if reviews.unread is not None:  # (no semicolon-separated table: the body's own error, as predict says it)
        raise reviews.unread
    _refuse_lone_cr_in_table(reviews, predictor, numbering)
    typed = None if after_header else _typed_header_at(records, predictor.class_values)
    if typed is not None:  # Sentiment, Review Body: a header, read as training reads it (input_fn knows no classes)
        at, repeats, ahead = typed
        if in_batch_transform(os.environ):  # (answered as a header record is, its repeats too: predict_fn)
            reviews.lead_blank, reviews.header_record, reviews.header_repeats = at, True, repeats
        names, records = records[at], _left_out(records[at + 1:], repeats)
        numbering = (_record_number(at + 1, numbering), tuple(repeats))
        # (no kind: v1,v2,,,, formats.unnamed_class_header, the class first as under Sentiment, Review Body)
        if typed_header_kind(names) not in ("class first", None):  # Review Body, Sentiment; Title, Review Body: read as
            # the same header without its spaces is (its text columns), as predict reads the file
            return list(_csv_reviews("", records, names, 0, numbering, "", ","))
        if class_last_header(names, ahead, predictor.class_values):  # feedback,verdict: the class last
            return _class_last_texts(records, numbering, "the header row")
    # (a typed header, Sentiment, Review Body, is known here: its rows are read under it, as in the first mini-batch)
    guessed = not after_header and typed is None and reviews.may_follow_header  # (not told header=present)
    after_header = after_header or guessed
    if (after_header and headless_index_rows(records, predictor.class_values)
            and not (guessed and _thin_index_sign(records))):
        records = [record[1:] for record in records]
        reviews = [",".join(record) for record in records]
        quoted = True  # the index is a sign of CSV written by a program, as a quoted class is (not a review's words)
    if not (class_first or _labeled_rows(records, quoted, header_names, predictor.class_values)):
        if _class_last_rows(records, after_header, header_names, predictor.class_values):
            # text,label (the class last: Hugging Face's to_csv): each record was answered whole, its class a word of
            # the review (and the answer partly the label); its text columns, as predict reads the same bytes, and as
            # a first mini-batch read them under the header
            return _class_last_texts(records, numbering, "the header row" if told_header else "the first row")
        return list(reviews)
    short = next((i for i, record in enumerate(records) if len(record) == 1), None)  # [] (a blank line): answered
    if short is not None:
        labeled = next(i for i, record in enumerate(records) if record)
        if has_lone_cr(records[short][0]):  # (a line read whole: a lone \r in an unquoted field, as predict says it)
            raise RequestError(400, f"request body is not valid CSV: line {_record_number(short, numbering)}: a line "
                                    f"break inside an unquoted field{LONE_CR_HINT}")
        raise RequestError(400, f"CSV record {_record_number(short, numbering)} has one column, but record "
                                f"{_record_number(labeled, numbering)} is a labeled row (class "
                                f"{records[labeled][0].strip()!r}, then the text), so every record must be one")
    records = _without_sep_records(records)
    _refuse_metadata_columns(records, None, under_header=typed is not None or header_names is not None)
    return [csv_text(record[1:]) for record in records]


def _tab_rows(reviews, classes):
    """A ``text/csv`` body read tab-separated (``reviews.tab_separated``) when it is a TSV without a header row whose
    first records hold one of the model's ``classes`` first or last, every one of them (formats.labeled_tsv_rows, as
    predict judges the same file), with its class first told (:attr:`Reviews.class_first`); else None. Read with
    commas, each line was answered whole, its class a word of its review."""
    from .formats import labeled_tsv_rows

    tabbed = reviews.tab_separated and reviews.tab_separated(classes)
    kind = tabbed and tabbed.records and labeled_tsv_rows(_rows_ahead(tabbed.records, HEADER_LOOKAHEAD + 1), classes)
    if not kind:
        return None
    tabbed.class_first = kind == "first"
    return tabbed


def _tab_body(text, header, opening, classes):
    """A ``text/csv`` body (``text``, its Content-Type's ``header``) read tab-separated, when its first lines
    (``opening``) read so may be rows with one of the model's ``classes`` first or last (formats.labeled_tsv_rows:
    only then is all of it read again); else None, as when it is no valid TSV (its lines are reviews)."""
    from .formats import labeled_tsv_rows

    with contextlib.suppress(csv.Error):
        rows = csv.reader([opening.first] + opening.following, delimiter="\t")
        if labeled_tsv_rows(list(filter(predicted_record, rows)), classes):
            with contextlib.suppress(RequestError):
                return _csv_body(text, header, "\t")
    return None


def _without_sep_records(records):
    """A labeled body's ``records`` without Excel's sep=, between them (files joined), no record, as predict skips it
    (formats.csv_rows); in Batch Transform every line has its answer: an empty review's (``[]``), as a blank line's."""
    from .formats import excel_sep_record

    answered = in_batch_transform(os.environ)
    return [[] if excel_sep_record(record) else record for record in records
            if answered or not excel_sep_record(record)]


def _class_last_rows(records, after_header, names, classes):
    """Are a ``text/csv`` body's ``records`` (no header row read among them: ``names`` is None) rows with one of the
    model's ``classes`` last, as predict judges the same file (formats.class_last_table, by its first records:
    HEADER_LOOKAHEAD + 1)? A later Batch Transform mini-batch (``after_header``) by as many of its records, but for a
    repeat of the file's header (:func:`_without_header_rows`): judged by all of them, a mini-batch whose 52nd row was
    narrower, or ended in no class, was answered whole, class and all, where predict refuses the file or reads that
    row's text (and the realtime endpoint does as predict)."""
    from .formats import class_last_table

    if after_header:
        records = _without_header_rows(records, classes)
    elif names is not None:
        return False
    return class_last_table(_rows_ahead(records, HEADER_LOOKAHEAD + 1), classes) == "rows"


def _class_last_texts(records, numbering, against="the first row"):
    """The texts of a ``text/csv`` body's ``records`` with the class last (:func:`_class_last_rows`, or under a header
    of names of the user's own: formats.class_last_header), each record's other columns, as predict reads them under
    a header ``text,label`` (a row as wide as the first one, ``against``, its class given, else a 400 as predict's
    error)."""
    from .columns import csv_text, width_error
    from .formats import excel_sep_record

    width = len(next(record for record in records if record))
    for i, record in enumerate(records):
        if record and not excel_sep_record(record) and (len(record) != width or not record[-1].strip()):
            where = f"CSV record {_record_number(i, numbering)}"
            raise RequestError(400, f"{where} has an empty class column (its last): a document without a class"
                               if len(record) == width else
                               str(width_error(where, len(record), width, against=against)))
    return [csv_text(record[:-1]) for record in _without_sep_records(records)]


def _refuse_semicolon_table(semicolon_lines, classes):
    """A 400 for a ``text/csv`` body that is a semicolon-separated table (formats.semicolon_table: ``sentiment;review``
    over its rows, or rows that start with one of the model's ``classes`` and a semicolon), as predict refuses such a
    file, for the same reason: its header was answered as a review, and each row whole, its class a word of its
    text. ``semicolon_lines``: the body's :class:`_Opening` (None: nothing to judge); told ``header=absent``, only its
    rows tell, its first line among them, and the refusal calls none of them a header."""
    if semicolon_lines is None:
        return
    from .formats import semicolon_table

    number, first, following, header = semicolon_lines
    what, _ = semicolon_table(first, iter(following), classes, header)
    if what:
        raise RequestError(400, f"text/csv: line {number} {what}, or send it as text/plain to answer each line as it "
                                f"is")


def _thin_index_sign(records):
    """Are ``records`` (a Batch Transform mini-batch without a header row, sent without ``header=present``) too few
    to take their first numbers for pandas' row numbers? They are when fewer than
    :data:`~fasttext_lib.formats.MIN_UNQUOTED_ROWS` and the numbers do not count up as an index does
    (columns.index_column): a review or two that begin with a number and a class (``1, 2, 3 stars`` for a model of
    classes 1 and 2, ``strategy="SingleRecord"``) lost them, where the endpoint and predict answer them whole.
    Told ``header=present``, the file has a header, and one such record is read as before."""
    from .columns import index_column
    from .formats import MIN_UNQUOTED_ROWS

    rows = [r for r in records if r]
    return len(rows) < MIN_UNQUOTED_ROWS and not index_column([""] * len(rows[0]), rows)


def _labeled_rows(records, quoted, names, classes):
    """Are a ``text/csv`` body's ``records`` labeled rows of the model's ``classes`` (the class first:
    formats.labeled_csv_records; ``quoted``: the first one's first field is quoted), to be read for their text? Under a
    header of one text column (``names``: ``text`` over ``"2","great food"``), as predict reads the same file
    (header_row.labeled_rows_under_one_name). The records judged are those predict judges: the first that are not
    blank (the first HEADER_LOOKAHEAD + 1 records, blank ones among them, made rows far apart reviews)."""
    from .columns import one_column_text_header
    from .formats import labeled_csv_records
    from .header_row import labeled_rows_under_one_name

    if names is not None and one_column_text_header(names):
        rows = _rows_ahead(records)
        return labeled_rows_under_one_name([(names, 0)] + [(row, 0) for row in rows], classes, quoted)
    return labeled_csv_records(_rows_ahead(records, HEADER_LOOKAHEAD + 1), quoted, classes, header=False)


def _refuse_lone_cr_in_table(reviews, predictor, numbering):
    """A 400 for a body read a line at a time that is a table all the same (labeled rows, a typed or v1,v2,,, header)
    once its lines read whole for a lone ``\\r`` in an unquoted field (:class:`WholeLine`) are read with it a space:
    its first line's \\r (or one under a header known by its rows) hid the table, and every record was answered whole,
    its class a word of its review. predict refuses such a file at that line; so does the endpoint."""
    from .lines import LONE_CR_HINT

    records = reviews.records or []
    at = next((i for i, record in enumerate(records) if getattr(record, "fields", None) is not None), None)
    if at is None:
        return
    probe = copy.copy(reviews)  # (csv_texts sets what a Batch Transform answers first on what it reads)
    probe.records = [record.fields if getattr(record, "fields", None) is not None else record for record in records]
    if csv_texts(probe, predictor) != list(reviews):
        raise RequestError(400, f"request body is not valid CSV: line {_record_number(at, numbering)}: a line break "
                                f"inside an unquoted field{LONE_CR_HINT}")


def _without_header_rows(records, classes):
    """``records`` of a later Batch Transform mini-batch without the rows that read as a header row (columns.short_header:
    ``text,label``) whose last field is none of the model's ``classes``: a repeat of the file's header inside it (files
    joined with cat) made every row of the mini-batch answered whole, its class a word of its review, where the rows
    alone are read for their text columns. Only the others decide; the repeat is still answered as a record, there
    being no header above it in the mini-batch to be a repeat of (docs/SERVING.md)."""
    from .columns import short_header

    return [record for record in records
            if not (record and short_header(record) and record[-1].strip() not in classes)]


def _typed_header_at(records, classes):
    """Where the first record of a ``text/csv`` body without a header read as one stands, when it is a header typed
    with a space after a comma over rows that leave no doubt (formats.typed_header: ``Sentiment, Review Body`` over
    labeled rows of the model's ``classes``, ``Review Body, Sentiment`` over rows with one last, ``Title, Review Body``
    over a CSV writer's rows), as predict reads the same file, and where it is repeated among the records after it
    (files joined with their headers: header_row.RepeatedHeader, as predict skips them; each was answered as the
    review ``Review Body``) -> ``(at, repeats, ahead)``, ``ahead`` the rows that decided; else None. Its first line
    was answered as a review, and every row whole, its class a word of its text. (Only here: the rows decide, by the
    model's classes, which input_fn lacks.)"""
    from .columns import class_and_text_names, prose_commas, short_names
    from .formats import class_last_header, typed_header, unnamed_class_header

    at = next((i for i, record in enumerate(records) if record), None)
    if at is None:
        return None
    first = records[at]
    typed = prose_commas(first)
    if not (typed or class_and_text_names(first) or short_names(first)):
        return None
    repeats = _repeats_of(first, records[at + 1:])
    # The rows that decide are those of predict's look-ahead (predict_input._class_last, header_row.table_lookahead):
    # the first rows after it, its repeats counted among them, then left out. Taken after the repeats were left out,
    # they were rows further down than predict judges the file by, and a body of many repeats (files of a few rows
    # joined with cat) was a table with the class last to one and reviews, one a line, to the other.
    window = _rows_ahead(records[at + 1:])
    ahead = _left_out(window, _repeats_of(first, window))
    header = ((typed and typed_header(first, ahead, classes)) or unnamed_class_header(first, ahead, classes)
              or class_last_header(first, ahead, classes))  # (feedback,verdict over rows with a class last)
    return (at, repeats, ahead) if header else None
