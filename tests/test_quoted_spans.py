"""quoted_spans: the check pass decides to read predict's input as CSV records only when the answering pass
(quoted_spans.one_column_records) can read every record of it; else a line at a time, as before."""
import json
import os

import pytest

from conftest import cli_in_process
from fasttext_lib.formats import CSV_FIELD_LIMIT
from fasttext_lib.quoted_spans import QuotedSpans, one_column_records

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REAL = os.path.join(os.environ.get("FASTTEXT_LIB_SHARED") or os.path.join(ROOT, "..", "shared"), "data", "real")
SPANNED = ['"a review typed', 'in two paragraphs"', "a plain review"]


def _reading(lines):
    spans = QuotedSpans()
    for _ in spans.tap(lines):
        pass
    spans.end()
    return spans.reading("in.txt")


@pytest.mark.parametrize("line", ["bad\rline here", '"quoted",\rrest', '"quoted"\rrest',
                                  "x" * (CSV_FIELD_LIMIT + 1)],
                         ids=["lone CR in an unquoted line", "lone CR after a quoted field",
                              "lone CR right after a closing quotation mark", "unquoted line over the field limit"])
def test_a_line_no_csv_reader_reads_as_a_record_keeps_the_input_read_a_line_at_a_time(line):
    """A CSV writer quotes a field holding a carriage return (and writes no field of 16 Mi characters): a line that
    holds one outside quotes, or is that long, is no writer's. It was read as a CSV record: the check pass chose
    records, then the answering pass refused the line ("new-line character seen in unquoted field", "field larger than
    field limit") after the answers of the 4096 documents before it were written."""
    lines = SPANNED + [line, "last"]
    records, said = _reading(lines)
    assert not records and said.startswith("in.txt: read a line at a time, one answer per line: line 1 opens"), said
    assert "line 4:" in said, said


def test_what_the_check_reads_as_records_the_answering_pass_reads_alike():
    lines = SPANNED + ['"with ""doubled"" marks"', "", '"one more', "", 'over a blank line"', "last"]
    records, said = _reading(lines)
    assert records and "read as CSV of one column" in said
    found = {}
    read = []
    for text in one_column_records(iter(lines), "in.txt", found):
        read.append((text, found["line"]))
    assert read == [("a review typed\nin two paragraphs", 1), ("a plain review", 3), ('with "doubled" marks', 4),
                    ("", 5), ("one more\n\nover a blank line", 6), ("last", 9)]


@pytest.fixture(scope="module")
def small_model(tmp_path_factory):
    out = tmp_path_factory.mktemp("snippets") / "model"
    r = cli_in_process("train", "--train", os.path.join(REAL, "amazon_snippets_train.csv"), "--output", out,
                       "--epochs", "1", "--emsize", "4", "--no-progress")
    assert r.returncode == 0, r.stderr
    return out


def test_a_lone_carriage_return_late_in_a_one_column_csv_is_answered_line_by_line_not_cut_off(tmp_path, small_model):
    """The error came after 4096 answers had been written: a stdout that stops half way."""
    lines = SPANNED + [f"plain review number {i}" for i in range(5000)] + ["bad\rline here", "last"]
    path = tmp_path / "reviews.txt"
    path.write_bytes("".join(line + "\n" for line in lines).encode())
    r = cli_in_process("predict", "--model", small_model, "--input", path)
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == len(lines)
    assert all(json.loads(line) for line in r.stdout.splitlines()[:3])
    assert "read a line at a time" in r.stderr and "line 5004" in r.stderr, r.stderr


def test_a_quotation_mark_left_open_over_lines_of_doubled_marks_is_read_once_not_once_a_line(monkeypatch):
    """A stray quotation mark, then lines of text that double theirs (``""the best""``: a CSV's text column cut out
    without its outer quotes): each such line parsed every line since the mark again, so the check pass took time
    in the square of the lines (4000 lines: 2.5 s; a file of 16 Mi characters: hours, before the first answer). The
    characters the csv module is given are counted: about the input's once."""
    import fasttext_lib.quoted_spans as quoted_spans

    lines = ['"a stray mark'] + [f'he called it ""the best"" number {i}' for i in range(3000)] + ['the end"', "last"]
    given = []
    real_reader = quoted_spans.csv.reader

    def counting_reader(rows, **options):
        rows = list(rows)
        given.append(sum(len(row) for row in rows))
        return real_reader(rows, **options)

    monkeypatch.setattr(quoted_spans.csv, "reader", counting_reader)
    records, said = _reading(lines)
    assert records and said.startswith("in.txt: read as CSV of one column") and "closes on line 3002" in said, said
    assert sum(given) <= 3 * sum(len(line) + 1 for line in lines), sum(given)
