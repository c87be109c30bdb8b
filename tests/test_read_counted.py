"""data.read_counted: training data tokenized and counted while it streams (the CLI's route).

It must give exactly what reading everything (read_labeled) and then counting gives, on the
native and the Python route, across any chunking of the documents; its errors must be
read_labeled's, naming the same physical line; and a model trained from it must be the same.
"""
import gzip
import os
import re

import numpy as np
import pytest

from conftest import params_of, synthetic_reviews
from fasttext_lib import native_features as nf
from fasttext_lib.config import TrainConfig
from fasttext_lib.data import SAMPLE_DOCS, CountedTexts, read_counted, read_labeled
from fasttext_lib.errors import FastTextError
from fasttext_lib.features import count_tokens
from fasttext_lib.train import train

HOSTILE_ROWS = [
    ('1', 'multi\nline "quoted"\nfield, with a comma'),  # physical line breaks inside quotes
    ('2', 'İstanbul ΣΑΣ ΟΔΟΣ. Σ ß 👍🏽 我喜欢'),
    ('1', ''),
    ('2', '...!?'),
    ('1', 'x\r\ny\n\n\nz'),
]


def _csv(rows):
    """Zhang CSV text with *real* line breaks inside quoted fields (write_csv escapes them)."""
    return "".join('"{}","{}"\n'.format(label, text.replace('"', '""')) for label, text in rows)


def _corpus(tmp_path, n=300, name="train.csv", header=True, compress=False):
    data = synthetic_reviews(n, seed=4)
    rows = []
    for i, (label, text) in enumerate(zip(data.labels, data.texts)):
        rows.append((label, text))
        if i % 23 == 0:
            rows.append(HOSTILE_ROWS[i % len(HOSTILE_ROWS)])
    text = ('"label","text"\n' if header else "") + _csv(rows)
    path = tmp_path / name
    if compress:
        path = tmp_path / (name + ".gz")
        path.write_bytes(gzip.compress(text.encode("utf-8")))
    else:
        path.write_text(text, encoding="utf-8")
    return str(path)


def _codes_in_memory(codes):
    return codes.read_all() if isinstance(codes, nf.CodesFile) else codes


def _assert_same_counts(a, b):
    assert a.words == b.words
    for field in ("counts", "hashes", "codes", "starts", "lengths", "ids"):
        x, y = getattr(a, field), getattr(b, field)
        x, y = (_codes_in_memory(x), _codes_in_memory(y)) if field == "codes" else (x, y)
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), field


@pytest.fixture(params=["native", "python"])
def route(request, monkeypatch):
    if request.param == "python":
        monkeypatch.setenv(nf.ENV_SWITCH, "0")
    else:
        assert nf.available()
        monkeypatch.setattr(nf, "CHUNK_DOCS", 7)  # many chunks, boundaries everywhere
    return request.param


@pytest.mark.parametrize("compress", [False, True])
def test_same_documents_and_counts_as_reading_everything(tmp_path, route, compress):
    path = _corpus(tmp_path, compress=compress)
    whole = read_labeled(path)
    streamed = read_counted(path)
    assert isinstance(streamed, CountedTexts)
    assert streamed.labels == whole.labels and len(streamed) == len(whole)
    assert streamed.sample == whole.texts[:SAMPLE_DOCS]
    assert streamed.counts.lengths.sum() > 0 and (streamed.counts.lengths == 0).any()  # empty documents kept
    _assert_same_counts(streamed.counts, count_tokens(whole.texts))


def test_native_and_python_routes_count_the_same(tmp_path, monkeypatch):
    path = _corpus(tmp_path, n=500, header=False)
    monkeypatch.setattr(nf, "CHUNK_DOCS", 11)
    native = read_counted(path)
    monkeypatch.setenv(nf.ENV_SWITCH, "0")
    _assert_same_counts(native.counts, read_counted(path).counts)


def test_several_files_read_in_order(tmp_path, route):
    first = _corpus(tmp_path, n=40, name="a.csv")
    second = _corpus(tmp_path, n=60, name="b.csv", header=False)
    both = read_counted([first, second])
    texts = read_labeled(first).texts + read_labeled(second).texts
    assert both.labels == read_labeled(first).labels + read_labeled(second).labels
    _assert_same_counts(both.counts, count_tokens(texts))


def _error(fn, path):
    with pytest.raises(FastTextError) as info:
        fn(path)
    return str(info.value)


@pytest.mark.parametrize("breakage,line_of", [
    ("unclosed", lambda lines: lines),  # the record that starts on the last line never closes
    ("utf8", lambda lines: lines),
    ("one column", lambda lines: lines),
])
def test_errors_after_many_chunks_name_the_same_line(tmp_path, route, breakage, line_of):
    good = _csv([(str(1 + i % 2), f"review {i}\nsecond line {i}") for i in range(200)])  # 2 lines a record
    lines = good.count("\n") + 1  # the line the broken record starts on
    bad = {"unclosed": b'"1","never closed\n', "utf8": b'"1","bad \xff byte"\n', "one column": b'"1"\n'}[breakage]
    path = tmp_path / "bad.csv"
    path.write_bytes(good.encode("utf-8") + bad + b'"2","after"\n')
    message = _error(read_counted, str(path))
    assert message == _error(read_labeled, str(path))
    assert f"{path}:{line_of(lines)}:" in message


def test_empty_files_are_refused(tmp_path, route):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert "file is empty" in _error(read_counted, str(empty))
    header_only = tmp_path / "header.csv"
    header_only.write_text('"label","text"\n')
    assert "only a header row" in _error(read_counted, str(header_only))
    assert _error(read_counted, str(header_only)) == _error(read_labeled, str(header_only))
    good = _corpus(tmp_path, n=10, name="good.csv")
    blank = tmp_path / "blank.csv"
    blank.write_text("\n\n")
    with pytest.raises(FastTextError, match="blank.csv: file is empty"):
        read_counted([good, str(blank)])


def test_training_from_counted_texts_gives_the_same_model(tmp_path):
    path = _corpus(tmp_path, n=1200)
    cfg = TrainConfig(epochs=2, progress=False, ngrams=2, buckets=5000, seed=3, ctx="cpu")  # lr, batch from the data
    reference = train(read_labeled(path), None, cfg)
    counted = read_counted(path)
    streamed = train(counted, None, cfg, release_texts=True)
    assert counted.counts is None  # released once featurized
    assert streamed.config == reference.config and streamed.featurizer.vocab.idx_to_token == reference.featurizer.vocab.idx_to_token
    for k, v in params_of(reference).items():
        np.testing.assert_array_equal(v, params_of(streamed)[k])
    assert streamed.history[-1]["train_loss"] == reference.history[-1]["train_loss"]


def test_cli_train_streams_and_writes_the_same_bundle(tmp_path, monkeypatch):
    from fasttext_lib import cli, features
    from fasttext_lib.predict import Predictor

    path = _corpus(tmp_path, n=800)
    seen = []
    monkeypatch.setattr(features, "count_tokens", lambda texts, progress=None, to_file=False, _f=features.count_tokens:
                        seen.append((type(texts).__name__, to_file)) or _f(texts, progress, to_file))
    out = tmp_path / "bundle"
    assert cli.main(["train", "--train", path, "--output", str(out), "--epochs", "2", "--ngrams", "2",
                     "--buckets", "5000", "--no-progress", "--ctx", "cpu"]) == 0
    # counted from the file as it was read, not from a list of texts; the ids kept in a temporary file
    assert seen == [("generator", True)]
    cfg = TrainConfig(epochs=2, progress=False, ngrams=2, buckets=5000, ctx="cpu")
    reference = train(read_labeled(path), None, cfg)
    loaded = Predictor.load(str(out))
    np.testing.assert_array_equal(loaded.model.embedding.weight.data().asnumpy(),
                                  reference.model.embedding.weight.data().asnumpy())


def test_an_unusable_temporary_directory_is_one_error(tmp_path, monkeypatch):
    # read_counted keeps the token ids in a temporary file (native_features.CodesFile): a TMPDIR
    # that cannot hold it is the user's to fix, said in one line.
    import tempfile

    path = _corpus(tmp_path, n=50)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-dir"))
    with pytest.raises(FastTextError, match=r"temporary file in .*no-such-dir .*set TMPDIR"):
        read_counted(path)
    monkeypatch.undo()
    assert len(read_counted(path)) == len(read_labeled(path))


def _changing_after(monkeypatch, docs, change):
    """Run ``change()`` once the reader has taken ``docs`` documents of a file: a writer at a fixed point of the read."""
    import fasttext_lib.data as data

    examples_of_lines = data.examples_of_lines

    def changing(*args, **kwargs):
        for i, example in enumerate(examples_of_lines(*args, **kwargs)):
            if i == docs:
                change()
            yield example

    monkeypatch.setattr(data, "examples_of_lines", changing)


@pytest.mark.parametrize("reader", [read_counted, read_labeled])
@pytest.mark.parametrize("change", ["truncated at a line end", "truncated mid-record", "rewritten shorter"])
def test_training_data_that_gets_shorter_while_it_is_read_is_refused(tmp_path, monkeypatch, reader, change):
    """predict refused an input that got shorter while it was read; training read the shorter file's end as the
    data's end and trained on part of it, silently (cut at a line end), or named a "malformed CSV record" that the
    file never had (cut inside one, or rewritten in place with ``>``)."""
    data = synthetic_reviews(500, seed=4)
    path = tmp_path / "train.csv"
    text = _csv((label, " ".join(text.split())) for label, text in zip(data.labels, data.texts))
    path.write_text(text, encoding="utf-8")
    path, size = str(path), len(text.encode("utf-8"))
    assert size > 256 << 10 and text.count("\n") == 500  # most of it is read after the change; one line a record
    cut = {"truncated at a line end": text.rfind("\n", 0, size // 2) + 1,
           "truncated mid-record": text.rfind("\n", 0, size // 2) + 5}.get(change)
    if cut is not None:
        _changing_after(monkeypatch, 20, lambda: os.truncate(path, cut))
    else:
        _changing_after(monkeypatch, 20, lambda: open(path, "w").write('"1","new"\n' * 10))
    with pytest.raises(FastTextError, match=rf"^{re.escape(path)} changed while it was read: it is shorter than "
                                            rf"when it was opened \(\d+ of its {size} bytes"):
        reader(path)


def test_training_data_appended_to_while_it_is_read_is_read_to_its_end(tmp_path, monkeypatch):
    """A file that only grows (lines appended meanwhile) is read to its new end, as before (not refused)."""
    path = _corpus(tmp_path, n=3000, header=False)
    whole = len(read_labeled(path))
    _changing_after(monkeypatch, 20, lambda: open(path, "a").write('"1","appended"\n'))
    assert len(read_counted(path)) == whole + 1


@pytest.mark.parametrize("counted", [True, False], ids=["train_channel", "validation_channel"])
@pytest.mark.parametrize("fmt", ["txt", "csv"])
def test_whole_float_classes_are_read_by_one_rule_over_all_the_files_of_one_read(tmp_path, fmt, counted):
    """The rule that reads ``1.0`` / ``2.0`` as the classes 1 and 2 when every class is a whole float was applied file
    by file: a channel of ``s1`` (1.0, 1.5, 2.0: kept as written) and ``s2`` (1.0, 2.0: read as 1, 2) trained the five
    classes 1, 1.0, 1.5, 2, 2.0, one class split in two. It now looks at every class of the read, as one file's."""
    from fasttext_lib.sm_train import read_channel

    line = "__label__{} {}\n" if fmt == "txt" else "{},{}\n"
    header = "" if fmt == "txt" else "label,text\n"
    (tmp_path / f"s1.{fmt}").write_text(header + "".join(line.format(*row) for row in
                                                          (("1.0", "bad"), ("1.5", "meh"), ("2.0", "good"))))
    (tmp_path / f"s2.{fmt}").write_text(header + "".join(line.format(*row) for row in (("1.0", "awful"), ("2.0", "great"))))
    files = [str(tmp_path / f"s1.{fmt}"), str(tmp_path / f"s2.{fmt}")]
    labels = ["1.0", "1.5", "2.0", "1.0", "2.0"]
    if counted:
        assert read_counted(files).labels == labels
    assert read_channel(str(tmp_path), counted=counted).labels == labels
    (tmp_path / f"s1.{fmt}").write_text(header + line.format("3.0", "fine"))  # every class a whole float: numbers
    assert read_channel(str(tmp_path), counted=counted).labels == ["3", "1", "2"]


def _wordless_file(tmp_path, name="w.csv"):
    """A CSV (header at line 1) of 40 documents, three of them without words: ``""`` at line 4, an empty field at
    line 20 and spaces at line 37; past many chunks of 7."""
    rows = [f'{"12"[i % 2]},"words of review {i}"' for i in range(40)]
    rows[2], rows[18], rows[35] = '2,""', "1,", '2,"   "'
    path = tmp_path / name
    path.write_text("label,text\n" + "\n".join(rows) + "\n")
    return str(path)


def test_documents_without_words_are_kept_and_said_once_per_file(tmp_path, route):
    """A class with an empty text (CSV 2,"", JSON "text": null) trained as a document of no words without a word said.
    fastText keeps such lines too, so they are kept (the trained numbers are unchanged), and one note per file says
    how many there are and where the first is: once, not once per chunk, by both training readers."""
    path = _wordless_file(tmp_path)
    said = (f"{path}: 3 documents have no words (the first at line 4); they are kept, as fastText keeps such lines, "
            f"each read as one unknown word (<unk>): to leave them out, drop them first (pandas: "
            f"df[df['text'].fillna('').str.strip() != ''])")
    for read in (read_counted, read_labeled):
        notes = []
        data = read(path, note=notes.append)
        assert len(data) == 40 and notes == [said], (read.__name__, notes)
    notes = []
    assert len(read_labeled(path, limit=10, note=notes.append)) == 10  # (the documents read: one of them)
    assert len(notes) == 1 and notes[0].startswith(f"{path}: 1 document has no words (line 4); it is kept, as")
    other = tmp_path / "full.csv"
    other.write_text("label,text\n1,good\n2,bad\n")
    notes = []
    read_counted([str(other), path, str(other)], note=notes.append)
    assert notes == [said]  # (only the file that has them)


def test_documents_without_words_of_json_lines_and_fasttext_format_are_said(tmp_path):
    (tmp_path / "w.jsonl").write_text('{"label": "a", "text": "good"}\n{"label": "b", "text": null}\n'
                                      '{"label": "b", "text": ""}\n{"label": "a"}\n')
    (tmp_path / "w.txt").write_text("__label__a good\n__label__b\n__label__b   \n")
    for name, count, line in [("w.jsonl", 3, 2), ("w.txt", 2, 2)]:
        notes = []
        read_counted(str(tmp_path / name), note=notes.append)
        assert len(notes) == 1 and notes[0].startswith(f"{tmp_path / name}: {count} documents have no words (the "
                                                        f"first at line {line})"), notes
