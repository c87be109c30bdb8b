"""Does input ``predict`` would read one review a line hold CSV records that go on over lines?

``df[["text"]].to_csv(path, index=False, header=False)`` writes a review typed in paragraphs as one quoted field
over several lines. Read a line at a time, each of its lines was answered, and every answer after it was off by
one line, with nothing said. Read as CSV records, quotation marks people type could pair up over lines (a sentence
a line: ``"We will fight.`` then ``We will win."``) and join lines that are reviews of their own. The two readings
give the same answers (a quotation mark is no word: text.normalize_text drops it) unless a quoted field goes on over
a line break, so only that case is decided, by what a CSV writer writes (docs/INPUT.md, "Reviews over several
lines"): :class:`QuotedSpans` reads the lines as ``csv.reader(strict=True)`` would, one at a time as they are
checked, and :meth:`QuotedSpans.reading` says what they are read as.
"""
import csv
import re

from .errors import FastTextError

# A quoted field where CSV's reader starts one (at a field's start: the text's, or after a comma or a line break),
# to its closing quotation mark (quotation marks inside doubled), as csv.reader(strict=True) reads it. A CSV writer
# quotes every field that holds a quotation mark: one left outside such fields is no writer's.
QUOTED_FIELD = re.compile(r'(?:(?<=[,\r\n])|\A)"([^"]*(?:""[^"]*)*)"')


class QuotedSpans:
    """Fed an input's lines in order, without their line ends (:meth:`tap`), then :meth:`end`.

    ``span``: ``(first line, last line)`` of the first record that goes on over lines (a quoted field CSV's reader
    closes on a later line), or None. ``unwritten``: ``(line, why)`` of the first sign that no CSV writer wrote the
    input (a line that is no CSV, a quotation mark never closed or outside a quoted field, a record of another width
    than the first), or None. ``width``: the fields of the first record that is not blank."""

    def __init__(self):
        from .formats import CSV_FIELD_LIMIT, allow_long_csv_fields

        allow_long_csv_fields()  # (a review may be longer than the csv module's 128 KiB)
        self.limit = CSV_FIELD_LIMIT
        self.span, self.unwritten, self.width, self.width_line = None, None, None, None
        self.lineno, self.start, self.pending, self.pending_chars, self.open = 0, 0, [], 0, False

    def tap(self, lines):
        """``lines``, each one read as CSV as it passes."""
        for line in lines:
            self.push(line)
            yield line

    def push(self, line):
        self.lineno += 1
        if self.pending:  # inside a quoted field opened on an earlier line: only a quotation mark can close it
            self.pending.append(line)
            self.pending_chars += len(line) + 1
            # Each mark opens or closes a quoted field (a doubled one, "", closes and opens it again): after an odd
            # count the field may be closed, and the lines are parsed; after an even one it is still open. (Parsed on
            # every line with a mark, lines of doubled marks, ""the best"", took time in the square of their count.)
            self.open ^= line.count('"') & 1
            if not self.open:
                self._parse()
            elif self.pending_chars > self.limit:
                self._unclosed()
            return
        if '"' not in line:  # (most lines: no parse)
            if "\r" in line or len(line) > self.limit:  # what one_column_records' reader refuses in an unquoted field
                self._not_written(self.lineno, "a carriage return outside a quoted field" if "\r" in line
                                  else f"a field longer than {self.limit >> 20} Mi characters")
            elif line:
                self._record(self.lineno, line.count(",") + 1)
            return
        self.start, self.pending, self.pending_chars = self.lineno, [line], len(line) + 1
        self._parse()

    def end(self):
        if self.pending:
            self._unclosed()

    def _parse(self):
        """Read the pending lines as CSV: one record, or a quoted field still open (more lines to come)."""
        text = "\n".join(self.pending) + "\n"
        try:  # (fed as one_column_records feeds them: a lone \r outside quotes is an error, not a record's end)
            records = list(csv.reader([line + "\n" for line in self.pending], strict=True))
        except csv.Error as exc:
            if str(exc) == "unexpected end of data":  # (strict CSV's error for a quoted field open at the end)
                self.open = True
                if self.pending_chars > self.limit:
                    self._unclosed()
                return
            self._not_written(self.start, f"no CSV record ({exc})")
            self.pending = []
            return
        if '"' in QUOTED_FIELD.sub("", text):
            self._not_written(self.start, "a quotation mark outside a quoted field")
        self._record(self.start, len(records[0]))
        if len(self.pending) > 1 and self.span is None:
            self.span = (self.start, self.lineno)
        self.pending = []

    def _record(self, line, width):
        if self.width is None:
            self.width, self.width_line = width, line
        elif width != self.width:
            self._not_written(line, f"{width} field{'s' * (width > 1)}, where line {self.width_line} has {self.width}")

    def _unclosed(self):
        """The quotation mark opened at ``start`` is not closed (by the end, or within a field's limit): a stray one,
        as people type them. The lines after it that were read meanwhile are not read again."""
        self._not_written(self.start, "a quotation mark never closed")
        self.pending = []

    def _not_written(self, line, why):
        if self.unwritten is None:
            self.unwritten = (line, why)

    def reading(self, name):
        """``(records, note)``: whether to read the input as CSV records (else a line at a time) and the line to say
        on stderr (None: nothing to say, the readings give the same answers). A CSV of several columns without a
        header row (pandas' index or an id first) is refused: its first column read as a word of every review, or
        left out, or each line answered, only its writer knows which."""
        if self.span is None:
            return False, None
        (first, last) = self.span
        where = f"line {first} opens a quotation mark that a CSV reader closes on line {last}"
        if self.unwritten is not None:
            line, why = self.unwritten
            return False, (f"{name}: read a line at a time, one answer per line: {where}, but the input is no CSV as "
                           f"a program writes it (line {line}: {why})")
        if self.width == 1:
            return True, (f"{name}: read as CSV of one column, one answer per record, as an endpoint reads text/csv: "
                          f"{where}, a review over lines as a CSV writer quotes it; --format text answers each line as "
                          f"one review")
        raise FastTextError(
            f"{name}: {where}, a record over lines of a CSV of {self.width} columns without a header row (pandas: "
            f"df.to_csv(path, header=False)); read a line at a time, each of those lines would get an answer and every "
            f"answer after them would be off: --format csv reads each record's columns after the first (an id or "
            f"pandas' index, where a class goes: left out); write it with its header row (pandas: df.to_csv(path, "
            f"index=False)) to have its columns read by their names; --format text answers each line as one review")


def one_column_records(lines, name, found):
    """The reviews of a CSV of one column (:meth:`QuotedSpans.reading` said so): each record, its fields joined with
    commas as the endpoint joins them; ``found["line"]``: the line each starts at (data.RecentLines)."""
    reader = csv.reader((line + "\n" for line in lines), strict=True)
    line = 0
    try:
        for record in reader:
            found["line"] = line + 1
            line = reader.line_num
            yield ",".join(record)
    except csv.Error as exc:  # (the file changed since it was checked: the check pass read it as such a CSV)
        raise FastTextError(f"{name}:{reader.line_num}: not a CSV record: {exc}") from None
