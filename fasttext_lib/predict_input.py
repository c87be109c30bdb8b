"""What ``predict`` reads: one review per line, unless the input is a labeled or headed table (CSV, TSV) or JSON
Lines, whose records are read as training reads them, or a CSV of one column with a review over lines
(:mod:`fasttext_lib.quoted_spans`) (docs/INPUT.md, "Predict's input").

Every line is checked (UTF-8, no NUL bytes, a bounded length) and every record read before the first answer, so a
bad byte or record at the end of a file is one error line and no answers, not a stdout that stops half way
(:func:`checked_lines`); :func:`input_check` recognizes a table; :func:`documents` gives the texts to answer.
"""
import contextlib
import csv
import io
import itertools
import os
import sys
from dataclasses import dataclass

from .errors import FastTextError


def refuse_own_output(path, flag):
    """Refuse an input ``path`` (``-``: stdin) that is the file or pipe stdout writes to: ``predict --input f >> f``
    (or a link to ``f``, or ``< f >> f``) wrote its answers into the reviews they answer, and with ``> f`` the
    shell had emptied the file, so predict answered nothing and exited 0; ``--input /dev/stdout | ...`` read
    stdout's own pipe and waited on it for ever. ``flag``: the option that names the input, for the error. A
    terminal or /dev/null on both sides is no such case (reviews typed in, nothing to read)."""
    import stat

    from . import storage

    if path != "-" and storage.is_s3(path):
        return
    try:
        out = os.fstat(sys.stdout.fileno())
        given = os.fstat(sys.stdin.fileno()) if path == "-" else os.stat(path)
    except (OSError, ValueError, AttributeError):  # no descriptor (a notebook), None (closed), no such file (said later)
        return
    if not (stat.S_ISREG(out.st_mode) or stat.S_ISFIFO(out.st_mode)) or (given.st_dev, given.st_ino) != (out.st_dev, out.st_ino):
        return
    what = "standard input is" if path == "-" else f"{flag} {path} is"
    if stat.S_ISFIFO(out.st_mode):
        raise FastTextError(f"{what} standard output itself (a pipe): it would read its own answers; give the input "
                            f"with {flag} FILE or on stdin")
    emptied = " (> has emptied it already, before this command started)" if out.st_size == 0 else ""
    raise FastTextError(f"{what} the file standard output writes to{emptied}: the answers would go into the data "
                        f"they answer; write them to another file")


class _TerminalInput(io.RawIOBase):
    """stdin on a terminal, ended by its first end-of-file (Ctrl-D). A terminal's end-of-file is no state, only
    one read that returns nothing: the next read waits for more typing. Each stage of the reading (the first
    bytes peeked, the blocks) asked again, so the answers came only after a second or third Ctrl-D."""

    def __init__(self, fd):
        self.fd, self.ended = fd, False

    def readable(self):
        return True

    def readinto(self, buffer):
        if self.ended:
            return 0
        data = os.read(self.fd, len(buffer))
        self.ended = not data
        buffer[:len(data)] = data
        return len(data)


def _stdin():
    """stdin's bytes: on a terminal, read to its first Ctrl-D, with a line on stderr that says so (nothing else
    told a user who left out --input that predict was waiting for reviews typed in)."""
    if not sys.stdin.isatty():
        return sys.stdin.buffer
    print("stdin: reading reviews from the terminal, one per line; the answers come once Ctrl-D ends them (or give "
          "--input FILE)", file=sys.stderr, flush=True)
    return io.BufferedReader(_TerminalInput(sys.stdin.fileno()))


def _said_as_damage(name, stream, compression, lines):
    """Raise the error for the compressed data of ``stream`` (``name``'s, of ``compression``, None if it is none)
    where it is found damaged past the ``lines`` read from it (lines.damaged_past), when the check of those lines
    refused them: damaged data decompresses to garbage before its decompressor fails (gzip's check is at a member's
    end), and a labeled CSV's check ("malformed CSV record") was said of that garbage, not the damage."""
    from .lines import damaged_past

    damaged = compression and damaged_past(stream, name, compression, lines)
    if damaged:
        raise FastTextError(damaged) from None


class _FirstBytes:
    """The first ``left`` bytes of a binary stream (``read`` and ``read1``, what lines.line_blocks calls)."""

    def __init__(self, stream, left):
        self.stream, self.left = stream, left

    def _take(self, read, n):
        data = read(min(n, self.left)) if self.left > 0 else b""
        self.left -= len(data)
        return data

    def read(self, n):
        return self._take(self.stream.read, n)

    def read1(self, n):
        return self._take(self.stream.read1, n)


@contextlib.contextmanager
def checked_lines(path, check=None, reviews=False):
    """The documents of ``path`` (stdin for ``-``; gzip, bzip2, xz and .lzma read directly), one per line (``\\n``,
    CRLF too), as an iterator, in constant memory; with ``check``, ``(lines, what check returned)``.

    Every line is checked (UTF-8, no NUL bytes, a bounded length: lines.line_blocks) before the first one
    is handed out, so a bad byte at the end of a file is one error line and no predictions, not a stdout
    that stops half way. A regular file is simply read twice (the answers stop at the bytes checked, should
    it grow meanwhile; one that got shorter is an error); stdin, a pipe or an S3 object is copied to an
    unlinked temporary file (TMPDIR) as it is checked, and read back from there.

    ``check(lines)``: a further check of the lines (an iterator of them), run in the checking pass; what it
    leaves of them is read on to the end. ``reviews``: every line a review (``--format text``: lines.line_blocks)."""
    import stat

    from . import storage
    from .lines import LONE_CR_HINT, decompressed, has_lone_cr, line_blocks

    name = "stdin" if path == "-" else path
    regular = path != "-" and not storage.is_s3(path) and os.path.exists(path) and stat.S_ISREG(os.stat(path).st_mode)
    opened = []  # what this function opened and must close (not stdin itself)
    checking = {}  # the checking pass's decompressed stream and its compression, for damaged_past

    def blocks(limit=None, sink=None):
        if path == "-" and sys.stdin is None:  # started with stdin closed (<&-): Python sets it to None
            raise FastTextError("standard input is closed: give the reviews with --input FILE or on stdin")
        raw = _stdin() if path == "-" else storage.open_read(path)
        stream, compression = decompressed(raw, name)
        opened.extend([raw, stream] if path != "-" else [stream] if compression else [])
        checking.setdefault("stream", (stream, compression))
        return line_blocks(stream if limit is None else _FirstBytes(stream, limit), name, compression, sink, reviews)

    def checked_blocks(blocks):
        # An input whose lines end in a lone \r (an old Mac file) is one line: it was answered as one document.
        count, lone_cr = 0, False  # (not the first line kept: it may be one of 60 MB)
        for lines in blocks:
            lone_cr = lone_cr if count else bool(lines) and has_lone_cr(lines[0])
            count += len(lines)
            yield lines
        if count == 1 and lone_cr:
            raise FastTextError(f"{name}:1: the input is one line with carriage returns inside it, which would be "
                                f"answered as one document{LONE_CR_HINT}")

    def documents(blocks, checked=None):
        read = 0
        for size, lines in blocks:
            read += size
            yield from lines
        if checked is not None and read < checked:
            raise FastTextError(f"{name} changed while it was read: it is shorter than when its lines were checked; "
                                f"predict again once nothing writes to it")

    def check_pass(blocks):  # the lines checked, check's result
        read = {"lines": 0, "failed": False}  # the lines handed to check; whether their reading failed

        def lines():
            try:
                for block in checked_blocks(lines for _, lines in blocks):
                    read["lines"] += len(block)
                    yield from block
            except BaseException:
                read["failed"] = True
                raise

        each = lines()
        try:
            result = check(each) if check is not None else None
        except FastTextError:
            if not read["failed"]:  # (a line's own error has said the damage past it: lines.line_blocks)
                _said_as_damage(name, *checking["stream"], read["lines"])
            raise
        for _ in each:  # what check left unread: checked all the same
            pass
        return result

    try:
        if regular:  # answered for the bytes checked: lines appended meanwhile (a file still written) were not
            sizes = []
            result = check_pass(blocks(sink=lambda raw: sizes.append(len(raw))))
            checked = sum(sizes)
            lines = documents(blocks(limit=checked), checked)
            yield lines if check is None else (lines, result)
            return
        spool = storage.temporary_file()
        opened.append(spool)
        with storage.room_in_tmpdir():
            result = check_pass(blocks(sink=spool.write))
            spool.flush()
        spool.seek(0)
        lines = documents(line_blocks(spool, name, reviews=reviews))
        yield lines if check is None else (lines, result)
    finally:
        for f in opened:
            with contextlib.suppress(OSError):  # the spool's close flushes what a full TMPDIR refused again
                f.close()


def input_check(name, fmt, classes, note):
    """predict's ``check`` of its input (see :func:`checked_lines`): is it labeled CSV, a test file such as Zhang
    et al.'s (``"2","the food was great"``; ``--format csv``, or ``auto`` and formats.labeled_csv_start, then
    formats.labeled_csv_records of the first records, or the class last in each of them: formats.class_last_table;
    ``classes``: the model's class ids and names)? Then every
    record is read as training reads it (errors before any answer) and a :class:`ReadAs` is returned: ``"labeled"``,
    ``"texts"`` when its header row names text columns only (``title,body``: columns.text_header_columns), ``"json"``
    for JSON Lines, ``"records"`` for a CSV of one column with a review over lines (quoted_spans, which may refuse a
    headerless table with such a record), or with ``--format csv`` any headerless CSV of one column; else False
    (plain reviews, one per line). ``note(line)``: how the input was read."""
    given = _Given(name, fmt, classes, note)
    return lambda lines: _input_kind(lines, given)


@dataclass(frozen=True)
class _Given:
    """What :func:`input_check` was given: the input's ``name`` (as its errors say it), ``fmt`` (``--format``), the
    model's class ids and names (``classes``) and ``note(line)``, which says how the input was read."""

    name: str
    fmt: str
    classes: object
    note: object


def _input_kind(lines, given):
    """:func:`input_check`'s check of ``lines``: a :class:`ReadAs`, or False (plain reviews, one per line)."""
    from .quoted_spans import QuotedSpans

    if given.fmt == "csv":
        return _csv_table_or_records(lines, given)
    if given.fmt != "auto":
        return _table(lines, given)
    # Read a line at a time (no table recognized), a CSV record over lines would be answered once per line: the
    # lines are read as CSV too as they pass, and such a record decides (quoted_spans)
    spans = QuotedSpans()
    tapped = spans.tap(lines)
    return _table(tapped, given) or _records_over_lines(tapped, spans, given)


def _records_over_lines(lines, spans, given):
    """``auto``, no table recognized: :class:`ReadAs` ``"records"`` where a record of the input read as CSV goes on over
    lines (``spans``, the :class:`~fasttext_lib.quoted_spans.QuotedSpans` that ``lines``, the rest of them, feed),
    else False."""
    for _ in lines:
        pass
    spans.end()
    records, said = spans.reading(given.name)
    if said:
        given.note(said)
    return ReadAs("records") if records else False


def _csv_table_or_records(lines, given):
    """``--format csv``: a labeled table, a header of text columns, JSON Lines (:func:`_table`); or, where that
    reading fails, a CSV of one column without a header row as a program writes it (every record one field:
    QuotedSpans), whose records are the texts. It was refused as a labeled CSV whose rows lack a class: predict
    scores none, and auto-detection reads the same file so."""
    from .lines import past_a_sep_review
    from .quoted_spans import QuotedSpans

    source_failed = []

    def source():  # (a line's own error, a bad byte: said as it is, never taken for the table's)
        try:
            yield from lines
        except BaseException:
            source_failed.append(True)
            raise

    spans, rest = QuotedSpans(), source()
    opening = past_a_sep_review(spans.tap(rest), given.name)  # (its refusal is the line's, no CSV's: said as it is)
    try:
        return _table_past_a_sep_review(*opening, given)
    except FastTextError as exc:
        if source_failed:
            raise
        for line in rest:  # (each line the reading took was fed to spans as it passed: the rest, in order)
            spans.push(line)
        spans.end()
        if spans.width != 1:
            raise
        if spans.unwritten is not None:  # (its first record of one field: said why it is not read as such)
            line, why = spans.unwritten
            raise FastTextError(f"{exc}; nor is it a CSV of one column as a program writes it (line {line}: "
                                f"{why}); --format text answers each line as one review") from None
    given.note(f"{given.name}: read as CSV of one column without a header row: one answer per record, each its text")
    return ReadAs("records")


def _table(lines, given):
    """Is the input (``lines``) a table, a TSV or CSV whose records are all read as training reads them, or JSON
    Lines? Its :class:`ReadAs`, else False (plain reviews). The checks look at its start (:class:`_Opening`), in this
    order: the first to give a verdict (a :class:`ReadAs`, an error) decides, and :func:`_csv_table`, the last,
    always gives one."""
    from .lines import past_a_sep_review

    if given.fmt == "text":
        return False
    # (a first review that reads sep=; is judged past, as the endpoint judges a body; after blank lines, where no line
    # is Excel's, such a line above a table or JSON Lines is refused, as training refuses it)
    return _table_past_a_sep_review(*past_a_sep_review(lines, given.name), given)


def _table_past_a_sep_review(blank, first, lines, given):
    """:func:`_table`'s checks of an input whose ``blank`` lines (a first review that reads ``sep=``, too:
    lines.past_a_sep_review) are above its ``first`` other line and the iterator ``lines`` of those after it."""
    if first is None:
        return False
    opening = _Opening(blank, first, lines)
    for check in (_tsv_with_header, _headerless_tsv, _json_lines, _refuse_json_array, _refuse_semicolon_table):
        verdict = check(opening, given)
        if verdict is not None:
            return verdict
    return _csv_table(opening, given)


class _Opening:
    """The start of an input as :func:`_table`'s checks see it: its ``blank`` lines, its ``first`` other one, and
    ``rest``, an iterator of the lines after that, before which a check puts back the lines it read ahead.

    A first line of 60 MB was copied whole by each test that stripped it: they look at its start (``start``:
    lines.stripped_start), and at all of it only when its start says it may be JSON. A header row (a TSV's, one text
    column's) is column names: a first line longer than :data:`HEADER_CHARS` is none (``long``; its csv parse was a
    copy too)."""

    def __init__(self, blank, first, rest):
        from .lines import stripped_start

        self.blank, self.first, self.rest = blank, first, rest
        self.start, self.long = stripped_start(first, 1), len(first) > HEADER_CHARS
        self.line = len(blank) + 1  # the first's, as errors say it

    def ahead(self):
        """The next HEADER_LOOKAHEAD lines after the first (fewer at the end), put back (formats.lines_ahead: what the
        endpoint judges a body by too)."""
        from .formats import lines_ahead

        following, self.rest = lines_ahead(self.rest)
        return following

    def lines(self):
        """Every line of the input, from its first: those read ahead too."""
        return itertools.chain(self.blank, [self.first], self.rest)


def _tsv_with_header(opening, given):
    """``auto``: a TSV with a header row, read as a CSV with one would be (:class:`ReadAs` of ``"tsv"``), when the
    records after it are as wide as it, as for a CSV's header (formats.tsv_with_header, as labeled_csv_records);
    else None. Reviews whose first line holds a tab and a text column's name (Summary<TAB>works great) were refused,
    or answered without their first line, every answer one off."""
    from .columns import tsv_header_line
    from .formats import tsv_with_header

    if not _tab_separated_read(given) or opening.long or not tsv_header_line(opening.first):
        return None
    if not tsv_with_header([opening.first] + opening.ahead(), given.classes):
        return None  # (plain reviews: checked as such by the checks after this one)
    try:
        return _read_all(opening.lines(), "tsv", given)
    except FastTextError as exc:
        raise FastTextError(f"{exc} (read as TSV because line {opening.line} is a header row; --format text reads "
                            f"every line as one review)") from None


def _tab_separated_read(given):
    """Is a TSV read as such (:func:`_tsv_with_header`, :func:`_headerless_tsv`) with the format ``given``? With
    ``auto``, and with ``--format csv`` too, as auto reads one (a TSV is read as a CSV is): read with commas, its
    records were one field each, refused as rows without a text, or malformed CSV at a text's quotation mark."""
    return given.fmt in ("auto", "csv")


def _headerless_tsv(opening, given):
    """``auto``: a TSV without a header row, one of the model's classes first (``2<TAB>great food``, as training reads
    a labeled TSV) or last (``great food<TAB>2``) in every one of its first records (formats.labeled_tsv_rows): read
    as :func:`_tsv_with_header` reads a TSV, each record for its text; else None. Each line was answered whole, its
    class a word of its review."""
    from .formats import START_CHARS, allow_long_csv_fields, labeled_tsv_rows
    from .lines import stripped_start

    # (only a first line that starts or ends with a class and a tab is parsed ahead: no copy of a long review)
    first, classes = opening.first, given.classes
    head = stripped_start(first, START_CHARS, boms=True).partition("\t")
    if not _tab_separated_read(given) or not ((head[1] and head[0].strip().strip('"') in classes)
                                              or _ends_in_class(first, classes, "\t")):
        return None
    allow_long_csv_fields()
    kind = labeled_tsv_rows(_first_records(opening, "\t")[0], classes)
    if kind is None:
        return None
    try:
        return _read_all(opening.lines(), "tsv", given, () if kind == "last" else None)
    except FastTextError as exc:
        raise FastTextError(f"{exc} (read as TSV because its first records {'end' if kind == 'last' else 'start'} "
                            f"with one of the model's classes; --format text reads every line as one review)") from None


def _json_lines(opening, given):
    """JSON Lines: :class:`ReadAs` ``"json"``, each object's text keys, every object checked before the first answer;
    else None. With ``--format csv`` too: each object was read as a labeled CSV row, its first key's value as the
    class."""
    from .jsonl import jsonl_texts
    from .lines import json_lines_start

    if given.fmt not in ("auto", "csv") or not json_lines_start(opening.first):
        return None
    notes, found = [], {}
    for _ in jsonl_texts(opening.lines(), given.name, note=notes.append, found=found):
        pass  # every object checked before the first answer
    first_blank, count = found.get("blank_lines", (None, 0))
    if count:  # (more answers than pandas' rows: read_json(lines=True) skips blank lines)
        notes.append(f"{given.name}:{first_blank}: a blank line, answered as an empty review in its place ({count} "
                     f"in all), one answer per line as the endpoint answers application/jsonlines")
    for line in notes:
        given.note(line)
    return ReadAs("json")


def _refuse_json_array(opening, given):
    """``auto``: a JSON array, or other JSON that is no object per line (jsonl.json_input), is refused: each line was
    answered, keys and braces as words. Else None."""
    from .jsonl import json_input

    hint = (given.fmt == "auto" and opening.start in ("[", "{")
            and json_input(opening.first.strip(), given.name, predicting=True))
    if hint:
        raise FastTextError(hint)
    return None


def _refuse_semicolon_table(opening, given):
    """``auto``: a semicolon-separated table (formats.semicolon_table) is refused: its header was answered as a
    review, each row's class as a word of its text. Else None."""
    from .formats import semicolon_table

    if given.fmt != "auto":
        return None
    semicolons, opening.rest = semicolon_table(opening.first, opening.rest, given.classes)  # (what it read, put back)
    if semicolons:
        raise FastTextError(f"{given.name}: line {opening.line} {semicolons}, or give --format text to answer each "
                            f"line as it is")
    return None


def _csv_table(opening, given):
    """The input read as CSV, every record as training reads it (:func:`_read_all`): with ``--format csv`` whatever
    it is; in ``auto``, one whose first line is a header of one text column (:func:`_one_column_header`), or that
    starts as a labeled CSV (:func:`_labeled_start`); in either, one with the class last (:func:`_class_last`, read
    so); else False."""
    one_column = given.fmt == "auto" and _one_column_header(opening)
    labeled = one_column or (given.fmt == "auto" and _labeled_start(opening, given))
    class_last = None if labeled else _class_last(opening, given)
    if class_last is not None:
        return _read_class_last(opening, given, class_last)
    if given.fmt == "auto" and not labeled:
        return False
    try:
        return _read_all(opening.lines(), "csv", given)
    except FastTextError as exc:
        if given.fmt == "csv":
            raise
        if one_column:  # "review" was a review after all (it occurs again, or no CSV follows): text, as before
            return False
        raise FastTextError(f"{exc} (read as CSV because line {opening.line} is a labeled CSV row or header; "
                            f"--format text reads every line as one review)") from None


def _class_last(opening, given):
    """Is the input a labeled CSV with the class last, the model's classes in every one of its first records
    (formats.class_last_table)? Its header row's names, stripped (``feedback,verdict``), ``()`` without a header
    (``df[["text", "label"]].to_csv(header=False, index=False)``), else None. Each record was answered whole, its
    class a word of its review (and the answer partly the label), and such a header as a review too."""
    from .formats import allow_long_csv_fields, class_last_table
    from .header_row import RepeatedHeader

    if not _may_start_class_last(opening, given.classes):
        return None  # (the first records of reviews were parsed as CSV to be judged: one of 20 MB, 5 bytes a byte)
    allow_long_csv_fields()
    records = [r for r in _first_records(opening)[0] if r]
    if not records:
        return None
    # (the first row's repeats, files joined with their headers, are none of the rows under it, as the endpoint leaves
    # them out: feedback,verdict repeated among them made every line a review here; a row's repeats change nothing)
    repeated = RepeatedHeader([(records[0], 1)], given.name, None)
    kind = class_last_table(records[:1] + [r for r in records[1:] if not repeated.repeats(r)], given.classes)
    if kind is None:
        return None
    return tuple(name.lstrip("\ufeff").strip() for name in records[0]) if kind == "header" else ()


def _may_start_class_last(opening, classes):
    """Could the input's first line start a table with one of the model's ``classes`` last (:func:`_class_last`, whose
    records are then read to tell)? It ends in a comma and one of them, quoted or not, or inside a quoted field (one
    that holds a line break: only its record tells), or it is a header row of two names or more (columns.short_names).
    Looked at by its end and, when short, whole: no copy of a long line."""
    from .columns import short_names

    first = opening.first
    if _ends_in_class(first, classes, ",") or first.count('"') % 2 == 1:
        return True
    if opening.long or "," not in first:
        return False
    with contextlib.suppress(csv.Error):
        row = next(csv.reader([first.strip()]), [])
        return len(row) >= 2 and short_names(row)
    return False


def _ends_in_class(line, classes, delimiter):
    """Is the last field of ``line`` (after its last ``delimiter``) one of the model's ``classes``, quoted or not?
    Looked at by its end only: no copy of a long line."""
    tail = line[-(max((len(str(c)) for c in classes), default=0) + 64):]
    return tail.rstrip().rpartition(delimiter)[2].strip().strip('"').strip() in classes


def _read_class_last(opening, given, names):
    """:func:`_read_all` of a labeled CSV with the class last (:func:`_class_last`: its header's ``names``), read as
    training reads one under a header naming its columns: its last column the class, the others its text."""
    try:
        return _read_all(opening.lines(), "csv", given, names)
    except FastTextError as exc:
        raise FastTextError(f"{exc} (read as CSV because its first records end in one of the model's classes; "
                            f"--format text reads every line as one review)") from None


def _one_column_header(opening):
    """Is the first line a header of one text column (review: pandas' df[["review"]].to_csv(index=False))? It was
    answered as a review."""
    from .columns import one_column_text_header

    if opening.long:
        return False
    with contextlib.suppress(csv.Error):  # (a lone \r inside the line: text, as labeled_csv_start says)
        return one_column_text_header(next(csv.reader([opening.first.strip()]), []))
    return False


def _labeled_start(opening, given):
    """Does the input start as a labeled CSV, its first line (formats.labeled_csv_start), then its first records
    (formats.labeled_csv_records)? A header row and nothing after it is refused.

    A lone \\r in an unquoted field is a csv.Error that stopped the reading which tells a table from reviews, at
    whichever of the first lines held it: a labeled file was answered as text, each class a word of its review,
    where a \\r past those lines is refused (formats.csv_rows). They are judged with it read as a space, so that a
    table is read as one, and refused at that line, as for any later line."""
    from .formats import allow_long_csv_fields, header_alone, labeled_csv_records, labeled_csv_start
    from .lines import has_lone_cr, lone_cr_as_space, stripped_start

    first = opening.first
    if not labeled_csv_start(lone_cr_as_space(first), given.classes):
        return False
    allow_long_csv_fields()  # the first records decide (a review may start as a labeled row does: 1,000 calories)
    records, malformed = _first_records(opening)
    alone = header_alone(records)
    if alone and not malformed:
        # a header row and nothing after it (label,text: a file whose rows were never written) was answered as a
        # review, exit 0, as if it held one
        raise FastTextError(f"{given.name}: no data rows (only a header row: {','.join(records[0])}); "
                            f"--format text answers it as a review")
    # A header row, then a record CSV cannot read (a quote row 2 opens and the file never closes, a field past the
    # limit): read as CSV after this, whose error names that record; it said "no data rows" (a header alone).
    if not alone and not labeled_csv_records(records, stripped_start(first, 1, boms=True) == '"', given.classes):
        return False
    # one line of lone \r's (an old Mac file's): refused as such by checked_lines, as before
    return not (len(records) == 1 and has_lone_cr(first))


def _first_records(opening, delimiter=","):
    """``(records, malformed)``: the input's first records read as CSV (blank ones skipped, a line of spaces too, as
    they are read after: formats.predicted_record; HEADER_LOOKAHEAD + 1 at most), each lone \\r read as a space, not
    strictly (all are read strictly after), and whether a malformed one (an unclosed quote) ended them: the records
    before it are judged. The lines read are put back. ``delimiter``: a TSV's is a tab (:func:`_headerless_tsv`)."""
    from .columns import HEADER_LOOKAHEAD
    from .formats import predicted_record
    from .lines import lone_cr_as_space

    read = []

    def kept(lines):
        for line in lines:
            read.append(line)
            yield lone_cr_as_space(line) + "\n"

    reader = csv.reader(itertools.chain([lone_cr_as_space(opening.first) + "\n"], kept(opening.rest)),
                        delimiter=delimiter)
    records, malformed = [], False
    try:
        for record in filter(predicted_record, reader):
            records.append(record)
            if len(records) > HEADER_LOOKAHEAD:
                break
    except csv.Error:  # malformed CSV (an unclosed quote): judged by the records before
        malformed = True
    opening.rest = itertools.chain(read, opening.rest)
    return records, malformed


def _read_all(lines, table, given, class_last=None):
    """Every record of ``lines`` read as training reads a ``table`` ("csv", "tsv"), so that a bad one is an
    error before any answer: a :class:`ReadAs` of kind "texts" (a header of text columns, no class) or "labeled"
    (with the first value of its class column that is none of the model's classes, if any). Its notes (pandas'
    index, the columns left out) are said once every record has been read. ``class_last``: see :class:`ReadAs`."""
    from .columns import whole_number
    from .data import examples_of_lines
    from .formats import BlankRecords

    name, classes = given.name, given.classes
    kind, notes, unknown, found = "labeled", [], None, {"blank_records": BlankRecords(keep=False)}
    read_as = ReadAs(kind, table, class_last=class_last)
    for label, _ in examples_of_lines(with_line_ends(lines), name, read_as.reading(), predicting=True,
                                      note=notes.append, found=found, classes=classes,
                                      class_last=class_last == ()):
        kind = "texts" if label is None else kind
        if unknown is None and label is not None and label not in classes and whole_number(label) not in classes:
            unknown = label  # (an id column first: id,text)
    blanks = found["blank_records"]
    if blanks.count:  # (more answers than pandas' rows, as it reads a file by default)
        notes.append(f"{name}:{blanks.first}: a blank record, answered as an empty review in its place "
                     f"({blanks.count} in all), one answer per record as the endpoint answers text/csv "
                     f"(pd.read_csv skips blank lines; skip_blank_lines=False keeps them, to join the answers "
                     f"to its rows)")
    for line in notes:
        given.note(line)
    return ReadAs(kind, table, None if unknown is None else (unknown, found.get("class_from", "")),
                  tuple(found.get("class_columns", ())), found.get("columns_flags", ""), class_last)


def with_line_ends(lines):
    """Each line with its ``\\n`` back, as the CSV readers take lines."""
    for line in lines:
        yield line + "\n"


@dataclass(frozen=True)
class ReadAs:
    """How predict's input was recognized: ``kind`` ``"labeled"`` (a labeled table: its text columns answered, the
    class not scored), ``"texts"`` (a header of text columns only), ``"json"`` (JSON Lines: each object's text
    keys) or ``"records"`` (a CSV of one column without a header, a review over lines: quoted_spans; with ``--format
    csv``, any); ``table``: ``"csv"`` or ``"tsv"``; ``not_classes``: for a labeled table whose class column holds a
    value that is none of the model's classes (``id,text``: ids), ``(that value, where the classes were read from)``;
    ``class_columns``: of kind ``"texts"``, the class columns of a header that names several (``rating``, ``label``:
    columns.several_class_columns), none of them scored."""

    kind: str
    table: str = "csv"
    not_classes: tuple = None
    class_columns: tuple = ()
    columns_flags: str = ""  # a header whose columns training is told (v1,v2,,,): the flags that name them
    # a CSV with one of the model's classes last in every first record (formats.class_last_table): None if not, ()
    # without a header row, else its header's names (feedback,verdict), the last one the class column's
    class_last: tuple = None

    def reading(self):
        """What data.examples_of_lines is told to read the table as: its ``table``, or the columns a class-last header
        names (as --label-column and --text-column name them: training reads none of its names)."""
        from .columns import Columns

        return Columns(label=self.class_last[-1], texts=self.class_last[:-1]) if self.class_last else self.table


@contextlib.contextmanager
def documents(path, fmt, classes, note):
    """The texts ``predict`` answers for ``path`` (``-``: stdin), one per review or record, checked in full first
    (:func:`checked_lines`, :func:`input_check`); what a table was read as is said on stderr. ``fmt``: ``auto``,
    ``text`` or ``csv``; ``classes``: the model's class ids and names; ``note(line)``: how the input was read."""
    from .data import RecentLines, examples_of_lines
    from .formats import BlankRecords
    from .jsonl import jsonl_texts
    from .quoted_spans import one_column_records
    from .shell_words import shell_word

    name, found = "stdin" if path == "-" else path, {}
    with checked_lines(path, input_check(name, fmt, classes, note), reviews=fmt == "text") as (lines, read_as):
        if read_as and read_as.kind == "json":  # JSON Lines: each object's text keys (the note above named them)
            yield Lines(RecentLines(jsonl_texts(lines, name, found=found), found, PREDICTED_PER_CHUNK))
            return
        if read_as and read_as.kind == "records":  # a CSV of one column with a review over lines (the note said so)
            yield Lines(RecentLines(one_column_records(lines, name, found), found, PREDICTED_PER_CHUNK))
            return
        if read_as and read_as.class_columns:  # id,date,rating,Review Text,label: training would ask which is the class
            print(f"{name}: read as {read_as.table.upper()} whose header row names {len(read_as.class_columns)} class "
                  f"columns ({', '.join(read_as.class_columns)}), none of them scored: one answer per record, for its "
                  f"text columns joined, as training joins them", file=sys.stderr)
        elif read_as and read_as.kind == "texts":  # a header of text columns only (title,body): no class
            print(f"{name}: read as {read_as.table.upper()} whose header row names text columns and no class: one "
                  f"answer per record, for its text columns joined, as training joins them", file=sys.stderr)
        elif read_as and read_as.class_last is not None:  # text,label: the class last, as under such a header
            print(f"{name}: read as labeled {read_as.table.upper()}, {_class_last_said(name, read_as)}",
                  file=sys.stderr)
        elif read_as and read_as.not_classes:  # id,text: its first column read as training reads a class, but it is
            # none of the model's (evaluate refuses the file): "evaluate --data scores the model against its classes"
            value, column = read_as.not_classes
            print(f"{name}: read as {read_as.table.upper()}, as training reads a labeled one: one answer per record, "
                  f"for its text columns; its {column or 'column 1'}, where a class goes, is left out (its values, "
                  f"such as {value!r}, are not this model's classes)", file=sys.stderr)
        elif read_as:  # a labeled file: its texts, as training reads them (the class is not scored)
            # (a header whose columns training is told, v1,v2,,,: evaluate --data alone refuses it)
            scores = (f"evaluate --data {shell_word(name)} {read_as.columns_flags}" if read_as.columns_flags
                      else "evaluate --data")
            print(f"{name}: read as labeled {read_as.table.upper()}, as training reads it: one answer per record, for "
                  f"its text columns ({scores} scores the model against its classes)", file=sys.stderr)
        if read_as:
            found["blank_records"] = BlankRecords()
            examples = examples_of_lines(with_line_ends(lines), name, read_as.reading(), predicting=True, found=found,
                                         classes=classes, class_last=read_as.class_last == ())
            lines = RecentLines(with_blank_records(examples, found), found, PREDICTED_PER_CHUNK)
        yield Lines(lines)


def _class_last_said(name, read_as):
    """The rest of predict's note on a labeled CSV or TSV with the class last (``read_as``, a :class:`ReadAs`: its
    ``class_last``, its header's names): how it was read, and how evaluate scores it (training and evaluate are told
    its columns: a header row they know, or --label-column and --text-column). Without a header row, the pandas line
    that writes one (formats.class_last_header_advice, read with the table's separator): a TSV's ``text,label`` header
    typed in, as the note said to add, was no header of its tab-separated rows."""
    from .formats import class_last_header_advice

    names = read_as.class_last
    if names:
        return (f"its header row's last column ({names[-1]}) the class, one of the model's in every first record: "
                f"one answer per record, for its text columns ({_evaluate_columns(name, names)})")
    advice = class_last_header_advice("\t" if read_as.table == "tsv" else ",")
    return ("without a header row, its class last (one of the model's in every first record): one answer per record, "
            f"for its text columns; for evaluate --data to score the model against its classes, {advice}")


def _evaluate_columns(name, names):
    """The evaluate command that scores a class-last CSV under a header of ``names`` (the class last), its flags
    parsed back to those names (shell_words.column_flag). A text column's name with a comma cannot be named by
    --text-column, which splits its value at commas (``'feedback, text'`` was refused as no such column): the command
    names it renamed without its commas, and says to rename it."""
    from .shell_words import column_flag, comma_free, shell_word

    texts = names[:-1]
    text_columns = ",".join(map(comma_free, texts))
    flags = f"{column_flag('--label-column', names[-1])} {column_flag('--text-column', text_columns)}"
    said = f"evaluate --data {shell_word(name)} {flags} scores the model against its classes"
    renamed = [f"{n!r} as {comma_free(n)!r}" for n in texts if "," in n]
    return said + (f", once the header row renames {', '.join(renamed)}: --text-column splits its value at commas"
                   if renamed else "")


def with_blank_records(examples, found):
    """The texts of a table's ``examples`` (data.examples_of_lines', which sets ``found["line"]``), with an empty one in
    the place of each blank record ``found["blank_records"]`` was told of (formats.BlankRecords): one answer per
    record, as the endpoint's text/csv answers them."""
    def empty_texts(lines):
        for line in lines:
            found["line"] = line  # (data.RecentLines: the line of each)
            yield ""

    blanks = found["blank_records"]
    for _, text in examples:
        line = found["line"]
        yield from empty_texts(blanks.before(line))
        found["line"] = line
        yield text
    yield from empty_texts(blanks.before(None))  # (after the last record)


PREDICTED_PER_CHUNK = 4096  # documents predict featurizes and answers at once
HEADER_CHARS = 1 << 17  # a first line longer than this is no header row (the csv module's field limit, 128 KiB)


class Lines:
    """predict's texts (an iterator): the lines of plain text, where the n-th text is line n, or the records of a
    table or JSON Lines (a data.RecentLines), which may span lines, or follow blank lines or a header."""

    def __init__(self, texts):
        self.texts = iter(texts)

    def __iter__(self):
        return self

    def __next__(self):
        return next(self.texts)

    def line_of(self, index):
        """The line text ``index`` (0-based) starts at, while it is among the last :data:`PREDICTED_PER_CHUNK` read
        (else None)."""
        return self.texts.line_of(index) if hasattr(self.texts, "line_of") else index + 1
