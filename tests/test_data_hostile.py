"""Hostile inputs to the data reader: each ends in one FastTextError naming the file and exact line."""
import bz2
import csv
import gzip
import io
import lzma
import os
import random
import re
import tarfile
import zipfile

import pytest

from conftest import cli_in_process, gzipped_with_extra, gzipped_with_unfilled_extra, ole2_header, zstd_frame
from fasttext_lib.data import LabeledTexts, read_labeled
from fasttext_lib.errors import FastTextError
from fasttext_lib.writers import write_fasttext

ROWS = ['"1","bad food"\n', '"2","great food"\n', '"1","slow service"\n']


@pytest.mark.parametrize("header", ['"label","text"\n', "label,text\n", '"class","title","body"\n', "Sentiment,Review\n"])
def test_csv_header_row_is_skipped(tmp_path, header):
    p = tmp_path / "h.csv"
    p.write_text(header + "".join(ROWS))
    data = read_labeled(str(p))
    assert data.labels == ["1", "2", "1"] and data.texts[0] == "bad food"


def test_unknown_header_name_skipped_when_every_other_class_is_numeric(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text('"stars_given","what they wrote"\n' + "".join(ROWS))
    assert read_labeled(str(p)).labels == ["1", "2", "1"]


def test_a_real_class_named_label_is_kept(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text('"label","a text about labels"\n"other","x"\n"label","y"\n')
    assert read_labeled(str(p)).labels == ["label", "other", "label"]


def test_word_classes_without_header_are_all_kept(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text('"pos","good"\n"neg","bad"\n"pos","fine"\n')
    assert read_labeled(str(p)).labels == ["pos", "neg", "pos"]


@pytest.mark.parametrize("header", ['"label","text"\n', "label,text\n"])
def test_header_only_file_is_no_data_rows(tmp_path, header):
    p = tmp_path / "h.csv"
    p.write_text(header)
    with pytest.raises(FastTextError, match="no data rows"):
        read_labeled(str(p))


@pytest.mark.parametrize("fmt", ["csv", "fasttext"])
def test_bad_utf8_reported_at_its_exact_line(tmp_path, fmt):
    line = '"1","some words here to fill the read buffer"\n' if fmt == "csv" else "__label__1 some words here to fill\n"
    body = line.encode() * 3000 + b'"2","caf\xe9"\n' + line.encode() * 10
    if fmt == "fasttext":
        body = line.encode() * 3000 + b"__label__2 caf\xe9\n" + line.encode() * 10
    p = tmp_path / "d.txt"
    p.write_bytes(body)
    with pytest.raises(FastTextError, match=r"d\.txt:3001: not UTF-8 text \(byte 0xe9"):
        read_labeled(str(p))


def test_multiline_records_keep_line_numbers_exact(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text('"1","first\nspans\nthree lines"\n"2","ok"\n"",  "empty class"\n')
    with pytest.raises(FastTextError, match=r"m\.csv:5: CSV row has an empty class"):
        read_labeled(str(p))


def test_unclosed_quote_reported_at_the_record_start(tmp_path):
    p = tmp_path / "q.csv"
    p.write_text('"1","fine"\n"2","never closed\n"1","more"\n')
    with pytest.raises(FastTextError, match=r"q\.csv:2: malformed CSV record"):
        read_labeled(str(p))


def test_a_review_longer_than_the_csv_modules_default_field_limit_is_read(tmp_path):
    """Python's csv refuses fields over 128 KiB by default: such a review was 'malformed CSV ... (an unclosed
    quote?)' for read_labeled and for training's read_counted."""
    from fasttext_lib.data import read_counted

    long_review = " ".join(["tasty"] * 40000)  # 240 kB
    p = tmp_path / "long.csv"
    p.write_text(f'"1","short one"\n"2","{long_review}"\n"1","another"\n')
    data = read_labeled(str(p))
    assert data.labels == ["1", "2", "1"] and data.texts[1] == long_review
    assert len(read_counted(str(p)).labels) == 3


@pytest.mark.parametrize("opener, suffix", [(gzip.open, ".gz"), (bz2.open, ".bz2"), (lzma.open, ".xz")])
def test_compressed_files_are_read_transparently(tmp_path, opener, suffix):
    p = tmp_path / ("d.csv" + suffix)
    with opener(p, "wt") as f:
        f.write("".join(ROWS))
    assert read_labeled(str(p)).texts == ["bad food", "great food", "slow service"]


def test_truncated_gzip_is_one_line_error(tmp_path):
    p = tmp_path / "d.csv.gz"
    p.write_bytes(gzip.compress("".join(ROWS * 200).encode())[:-30])
    with pytest.raises(FastTextError, match="corrupt or truncated gzip data"):
        read_labeled(str(p))


def test_zip_archive_is_named(tmp_path):
    p = tmp_path / "d.zip"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("d.csv", "".join(ROWS))
    with pytest.raises(FastTextError, match=r"zip archive \(its first file: d\.csv\); unzip it first"):
        read_labeled(str(p))


def _tar(p, mode, data):
    with tarfile.open(p, mode) as tar:
        info = tarfile.TarInfo("train.csv")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize("name, write, expected", [
    # a Kaggle download of one CSV, tarred: "not a text file (contains NUL bytes; UTF-16 text or a binary file?)"
    ("train.csv.tar.gz", lambda p, data: _tar(p, "w:gz", data), r"is a tar archive; extract the file from it first "
                                                                r"\(tar -xf .*train\.csv\.tar\.gz\)"),
    ("train.csv.tar", lambda p, data: _tar(p, "w", data), r"is a tar archive; extract"),
    # an Excel workbook is a zip archive too: "unzip it first" would have given its XML
    ("reviews.xlsx", lambda p, data: _zip(p, {"[Content_Types].xml": b"<Types/>", "xl/workbook.xml": b"<workbook/>"}),
     r"is an Excel workbook \(\.xlsx\), not text; save it as 'CSV UTF-8' in Excel, or convert it \(pandas: "
     r"pd\.read_excel\(path\)\.to_csv\(new_path, index=False\)\)"),
    # df.to_parquet(path): its first bytes read as "not UTF-8 text (byte 0x15 at column 5; ...)"
    ("train.parquet", lambda p, data: p.write_bytes(b"PAR1\x15\x04\x15\x80\x01" + data + b"\x00\x00PAR1"),
     r"is a Parquet file, not text; convert it to CSV first \(pandas: pd\.read_parquet\(path\)\.to_csv\(new_path"),
    ("reviews.xls", lambda p, data: p.write_bytes(ole2_header() + data),
     r"is an Excel workbook \(\.xls\), not text"),
    # zstd -c train.csv > ...: "not a text file (contains NUL bytes; UTF-16 text or a binary file?)"
    ("train.csv.zst", lambda p, data: _zstd(p, data), r"is zstd-compressed, which this program does not read; "
                                                     r"decompress it first \(zstd -d .*train\.csv\.zst\) and give "
                                                     r"that file \(gzip, bzip2, xz and \.lzma files are read directly\)"),
    ("t", lambda p, data: p.write_bytes(zstd_frame(data)),
     r"is zstd-compressed, .*\(zstd -d .*/t -o new\.txt\)"),
    # zstd -d names its output for a lowercase .zst only ("unknown suffix" for this one): the command names it
    ("train.csv.ZST", lambda p, data: p.write_bytes(zstd_frame(data)),
     r"is zstd-compressed, .*\(zstd -d .*/train\.csv\.ZST -o new\.csv\)"),
])
def test_archives_and_binary_table_formats_are_named_with_how_to_convert(tmp_path, name, write, expected):
    p = tmp_path / name
    write(p, "".join(ROWS).encode())
    with pytest.raises(FastTextError, match=f"^{p}: {expected}") as info:
        read_labeled(str(p))
    assert "\n" not in str(info.value) and "NUL bytes" not in str(info.value)


def _zstd(p, data):
    """``data`` compressed by the zstd program, or where it is missing, in a frame of one raw block."""
    import shutil
    import subprocess

    if shutil.which("zstd"):
        p.write_bytes(subprocess.run(["zstd", "-q", "-c"], input=data, capture_output=True, check=True).stdout)
    else:
        p.write_bytes(zstd_frame(data))


def test_a_conversion_command_runs_as_pasted_for_a_file_whose_name_a_shell_splits(tmp_path):
    """The commands of the UTF-16, zstd and tar refusals named the file as it is: pasted, a name with a space (or a
    quote) was two arguments and the command failed. Each is run here, in a shell, as printed."""
    import shlex
    import subprocess

    folder = tmp_path / "it's my"
    folder.mkdir()
    rows = "".join(ROWS).encode()
    (folder / "train data.csv").write_bytes(rows.decode().encode("utf-16-le"))
    _zstd(folder / "zstd data.csv.zst", rows)
    _tar(folder / "train data.csv.tar", "w", rows)
    for name, command, made in (("train data.csv", r"iconv -f UTF-16LE -t UTF-8 \S.*? > new\.csv", "new.csv"),
                                ("zstd data.csv.zst", r"zstd -d \S.*?(?=\) and give)", "zstd data.csv"),
                                ("train data.csv.tar", r"tar -xf \S.*?(?=\) and give)", "train.csv")):
        with pytest.raises(FastTextError) as info:
            read_labeled(str(folder / name))
        pasted = re.search(command, str(info.value)).group(0)
        assert shlex.split(pasted)[5 if name.endswith(".csv") else 2] == str(folder / name), pasted
        subprocess.run(pasted, shell=True, check=True, cwd=folder, capture_output=True)
        assert read_labeled(str(folder / made)).texts, name
        (folder / made).unlink()


def test_a_conversion_command_runs_as_pasted_for_a_name_that_starts_with_a_dash_or_ends_in_a_spaced_extension(
        tmp_path, monkeypatch):
    """A name that starts with "-" was given to iconv and zstd as it is, and they took it for their options ("iconv:
    invalid option"); the file a command writes, named from the input's extension, was unquoted ("a.c v": > new.c v
    wrote new.c and gave v to the command). Each command is run here, in a shell, as printed, in the file's folder."""
    import subprocess

    monkeypatch.chdir(tmp_path)
    rows = "".join(ROWS)
    (tmp_path / "-utf16.csv").write_bytes(rows.encode("utf-16-le"))
    _zstd(tmp_path / "-zstd data.c v", rows.encode())
    (tmp_path / "-mixed.c v").write_bytes('"1","café"\n'.encode() + '"2","naïve"\n'.encode("cp1252"))
    (tmp_path / "-cp1252.c v").write_bytes('"1","naïve"\n"2","good"\n'.encode("cp1252"))
    for name, command, made in (("-utf16.csv", r"iconv -f UTF-16LE .*? > new\.csv", "new.csv"),
                                ("-zstd data.c v", r"zstd -d .*?(?=\) and give)", "new.c v"),
                                ("-mixed.c v", r"python3 -c .*?(?=\)$)", "new.c v"),
                                ("-cp1252.c v", r"iconv -f CP1252 .*?(?=\)$)", "new.c v")):
        with pytest.raises(FastTextError) as info:
            read_labeled(name)
        pasted = re.search(command, str(info.value)).group(0)
        subprocess.run(pasted, shell=True, check=True, capture_output=True)
        assert read_labeled(made).texts, pasted
        (tmp_path / made).unlink()


@pytest.mark.parametrize("encoding, source, unmarked", [("utf-32", "UTF-32", ""),
                                                        ("utf-32-le", "UTF-32LE", " (no byte order mark)"),
                                                        ("utf-32-be", "UTF-32BE", " (no byte order mark)")])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_utf32_text_is_called_utf32_and_its_iconv_converts_it(tmp_path, encoding, source, unmarked, newline):
    """UTF-32-LE's mark (FF FE 00 00) starts as UTF-16-LE's: the file was called UTF-16 text, and the iconv -f UTF-16
    given wrote a NUL beside every character, a file refused again. Without its mark a UTF-32 file was "not a text
    file (contains NUL bytes; UTF-16 text or a binary file?)": no conversion said. Its order is named without one
    (iconv -f UTF-32LE / UTF-32BE), and the command converts it as pasted."""
    import subprocess

    (tmp_path / "train.csv").write_bytes("".join(ROWS).replace("\n", newline).encode(encoding))
    called = rf"train\.csv:1: not a text file this program reads: it is UTF-32 text{re.escape(unmarked)}; "
    with pytest.raises(FastTextError, match=called) as info:
        read_labeled(str(tmp_path / "train.csv"))
    pasted = re.search(rf"iconv -f {source} .*? > new\.csv", str(info.value)).group(0)
    subprocess.run(pasted, shell=True, check=True, cwd=tmp_path, capture_output=True)
    assert read_labeled(str(tmp_path / "new.csv")).texts == ["bad food", "great food", "slow service"]


def test_a_binary_file_of_small_32_bit_numbers_is_not_called_utf32_text(tmp_path):
    """Every fourth byte zero, as in UTF-32 text, but its characters are control characters: no iconv is said."""
    (tmp_path / "train.csv").write_bytes(b"".join(n.to_bytes(4, "little") for n in range(1, 9)) + b"\n")
    with pytest.raises(FastTextError, match=r"not a text file \(contains NUL bytes; UTF-16 text or a binary file\?\)"):
        read_labeled(str(tmp_path / "train.csv"))


def test_zstd_reviews_piped_to_predict_say_to_pipe_them_through_zstd(tmp_path, monkeypatch):
    """predict's reviews on stdin name no file to decompress: the hint is a pipe, not "zstd -d stdin"."""
    from fasttext_lib.lines import decompressed

    with pytest.raises(FastTextError, match=r"^stdin: is zstd-compressed, .*\(pipe it through zstd -dc\)"):
        decompressed(io.BytesIO(zstd_frame(b"junk")), "stdin")


@pytest.mark.parametrize("start, encoding", [
    ("\ub528\ufd2f", "utf-16-le"),  # 28 B5 2F FD: zstd's magic ("is zstd-compressed ...")
    ("\u28b5\u2ffd", "utf-16-be"),
    ("\u4b50\u0403", "utf-16-le"),  # PK 03 04: a zip archive's ("is a zip archive; unzip it first ...")
    ("\u504b\u0304", "utf-16-be"),
    ("\u8b1f", "utf-16-le"),  # 1F 8B: gzip's ("corrupt or truncated gzip data (Unknown compression method)")
    ("\u1f8b\u0804", "utf-16-be"),  # 1F 8B 08 04: gzip's method and FEXTRA flag ("... ended before the end-of-stream")
    ("\ufd37\u7a58\u5a00", "utf-16-be"),  # FD 37 7A 58 5A 00: xz's ("corrupt or truncated xz data")
    ("\ud0cf\u11e0", "utf-16-be"),  # D0 CF 11 E0: an .xls workbook's ("is an Excel workbook (.xls)")
    ("]", "utf-16-le"),  # 5D 00: an .lzma header's properties byte and its dictionary size's first byte
    ("]\u8000\u4e00", "utf-16-le"),  # 5D 00 00 80 00 4E: an .lzma header's first fields (an 8 MiB dictionary)
])
def test_a_utf16_file_that_begins_with_a_compressed_formats_magic_bytes_is_named_utf16(tmp_path, start, encoding):
    """A UTF-16 file without a byte order mark (with one it starts FF FE or FE FF: no format's magic) whose first
    characters are a compressed format's or an archive's magic bytes was refused as that format, or opened as gzip or
    xz and refused as corrupt: neither said what it was nor how to convert it. Each format is told by its structure
    after its magic (binary_data.binary_kind, the endpoint's rule): these are said to be UTF-16 text, with the iconv
    that converts them, by training's reader and by predict's, from a file or piped in."""
    p = tmp_path / "u.csv"
    p.write_bytes((start + " " + "".join(ROWS)).encode(encoding))
    said = (rf"1: not a text file this program reads: it is UTF-16 text \(no byte order mark\); convert it to UTF-8 "
            rf"first, e.g. .*iconv -f UTF-16{encoding[-2:].upper()} -t UTF-8")
    with pytest.raises(FastTextError, match=f"^{p}:{said}"):
        read_labeled(str(p))
    _tiny_model(tmp_path / "m")
    for got in (cli_in_process("predict", "--model", tmp_path / "m", "--input", p),
                cli_in_process("predict", "--model", tmp_path / "m", input=p.read_bytes())):
        assert got.returncode == 2 and got.stderr.count("error:") == 1, got.stderr
        assert re.search(said, got.stderr), got.stderr


@pytest.mark.parametrize("write", [
    lambda p, data: p.write_bytes(gzipped_with_extra(data)),  # bgzip's: an extra field (FEXTRA)
    # (an extra field whose subfields do not fill it: read by Python's gzip module, and so by zlib, and taken for text)
    lambda p, data: p.write_bytes(gzipped_with_unfilled_extra(data)),
    lambda p, data: p.write_bytes(gzip.compress(data, mtime=0)),
    lambda p, data: p.write_bytes(lzma.compress(data)),
    lambda p, data: p.write_bytes(bz2.compress(data)),
    # (legacy .lzma, xz --format=lzma's: was "not a text file (contains NUL bytes; UTF-16 text or a binary file?)")
    lambda p, data: p.write_bytes(lzma.compress(data, format=lzma.FORMAT_ALONE)),
    lambda p, data: p.write_bytes(lzma.compress(data, format=lzma.FORMAT_ALONE, preset=1)),  # (a 1 MiB dictionary)
], ids=["bgzip", "gzip-extra-not-filled", "gzip", "xz", "bzip2", "lzma", "lzma-preset-1"])
def test_compressed_files_told_by_their_structure_are_read(tmp_path, write):
    p = tmp_path / "train.csv.gz"
    write(p, "".join(ROWS * 40).encode())
    data = read_labeled(str(p))
    assert data.labels[:3] == ["1", "2", "1"] and data.texts[:2] == ["bad food", "great food"] and len(data.texts) == 120


def test_an_lzma_header_naming_a_4_gib_dictionary_is_probed_without_setting_it_aside(tmp_path):
    """The decompression probe that tells .lzma data (binary_data._lzma_start) allocated the dictionary its header
    names (FF FF FF FF: 4 GiB, which liblzma's rule admits) for a body of a few dozen bytes: where that memory could not
    be had (a small endpoint instance; here a 2 GiB address space) the endpoint's answer was a MemoryError (a 500), not
    the 400 it gives such bytes. The probe's dictionary is 1 MiB at most, enough for what it decompresses; such a file
    whose data is real is still read."""
    import subprocess
    import sys

    real = lzma.compress(b"1,good\n2,bad\n", format=lzma.FORMAT_ALONE)
    hostile = real[:1] + b"\xff\xff\xff\xff" + real[5:]
    code = ("import resource, sys\n"
            "from fasttext_lib import sm_serve\n"
            "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
            "try:\n"
            "    sm_serve.input_fn(sys.stdin.buffer.read(), 'text/csv')\n"
            "except sm_serve.RequestError as exc:\n"
            "    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", code], input=hostile, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()[-500:]
    assert "not valid utf-8 text (it is lzma-compressed" in done.stdout.decode()
    p = tmp_path / "train.csv"
    p.write_bytes(hostile)
    assert read_labeled(str(p)).texts == ["good", "bad"]


def test_predict_reads_gzip_whose_extra_field_its_subfields_do_not_fill(tmp_path):
    """A gzip file whose extra field's subfields do not fill XLEN (not RFC 1952; Python's gzip module reads it): zlib
    reads the data after the declared field, so it is gzip (binary_data._gzip_start), answered as its text is, from a
    file or piped in; it was taken for text and refused for its NUL bytes."""
    _answered_as_its_text(tmp_path, "to_label.txt.gz", gzipped_with_unfilled_extra)


def _answered_as_its_text(tmp_path, name, compress):
    """``(path, model)``: 30 reviews ``compress``ed as the file ``name``, which predict answers, read from it and piped
    in, as it answers their text (asserted)."""
    reviews = "".join(f"review {i} of the great food\n" for i in range(30))
    p, plain = tmp_path / name, tmp_path / "to_label.txt"
    p.write_bytes(compress(reviews.encode()))
    plain.write_text(reviews)
    model = _tiny_model(tmp_path / "m")
    expected = cli_in_process("predict", "--model", model, "--input", plain)
    assert expected.returncode == 0 and len(expected.stdout.splitlines()) == 30
    for got in (cli_in_process("predict", "--model", model, "--input", p),
                cli_in_process("predict", "--model", model, input=p.read_bytes())):
        assert (got.returncode, got.stdout) == (0, expected.stdout), got.stderr
    return p, model


@pytest.mark.parametrize("start, said", [
    (b"PK\x03\x04", r"is a zip archive; unzip it first"),  # (read as a review "PK\x03\x04")
    (b"\x1f\x8b", r"1: corrupt or truncated gzip data"),  # (refused as Windows-1252 text, an iconv of it said)
    (b"\x1f\x8b\x08\x00", r"1: corrupt or truncated gzip data"),  # (refused as a binary file's NUL bytes)
    (b"\x1f\x8b\x08\x08", r"1: corrupt or truncated gzip data"),  # (its FNAME flag: Windows-1252 text again)
    (b"\x28\xb5\x2f\xfd", r"is zstd-compressed"),
    (b"\xfd7zXZ\x00\x00\x04", r"1: corrupt or truncated xz data"),
])
def test_a_compressed_file_cut_within_its_header_is_named_as_its_format(tmp_path, start, said):
    """A compressed file or archive cut short within its header (a download stopped in its first bytes) is too short
    for its structure to tell it (binary_data.binary_kind): it is named as its magic's format, cut short, as it was
    before the structure was read. Its few bytes read as UTF-16 characters, and were read on as text: a 4-byte zip
    was trained on and predicted as a review, gzip's and zstd's refused as Windows-1252 text or a binary file."""
    p = tmp_path / "cut.csv"
    p.write_bytes(start)
    with pytest.raises(FastTextError, match=f"^{re.escape(str(p))}:? ?{said}"):
        read_labeled(str(p))
    _tiny_model(tmp_path / "m")
    got = cli_in_process("predict", "--model", tmp_path / "m", "--input", p)
    assert got.returncode == 2 and got.stderr.count("error:") == 1 and re.search(said, got.stderr), got.stderr


def _damaged_gzip(data, part):
    """Gzip of ``data`` (with FHCRC: a header CRC) with ``part`` wrong: its trailer's CRC or length, or its header's
    CRC."""
    import zlib

    header = b"\x1f\x8b\x08\x02" + bytes(4) + b"\x00\xff"
    header += ((zlib.crc32(header) ^ (part == "header crc")) & 0xFFFF).to_bytes(2, "little")
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
    trailer = [zlib.crc32(data) ^ (part == "crc"), len(data) + (part == "length")]
    return header + compressor.compress(data) + compressor.flush() + b"".join(v.to_bytes(4, "little") for v in trailer)


@pytest.mark.parametrize("part", ["crc", "length", "header crc"])
@pytest.mark.parametrize("lines", [100, 20000])  # (a file within binary_data's probe, and one past it)
def test_gzip_with_a_wrong_crc_or_length_is_corrupt_gzip(tmp_path, part, lines):
    """Gzip whose trailer's CRC or length (or header's CRC) is wrong is damaged gzip, said to be: a small file was
    "not a text file (contains NUL bytes; UTF-16 text or a binary file?)" (binary_data._gzip_start took zlib's error
    at the trailer for text that is no deflate data), where a large one was "corrupt or truncated gzip data"."""
    data = "".join(f"__label__{i % 2} review number {i}\n" for i in range(lines)).encode()
    p = tmp_path / "damaged.csv.gz"
    p.write_bytes(_damaged_gzip(data, part))
    with pytest.raises(FastTextError, match=r"damaged\.csv\.gz:\d+: corrupt or truncated gzip data \(Error -3"):
        read_labeled(str(p))
    p.write_bytes(_damaged_gzip(data, None))
    assert len(read_labeled(str(p)).labels) == lines


def _xz_with_a_wrong_check(data):
    """xz of ``data`` whose block's check (its CRC64, just before the index) is wrong: the decompressor fails only past
    the block's text, as gzip's does at a wrong CRC."""
    whole = bytearray(lzma.compress(data))
    index = len(whole) - 12 - (int.from_bytes(whole[-8:-4], "little") + 1) * 4  # (the footer's backward size)
    whole[index - 1] ^= 0xFF
    return bytes(whole)


@pytest.mark.parametrize("compress", [lambda data: _damaged_gzip(data, "crc"), _xz_with_a_wrong_check],
                         ids=["gzip", "xz"])
def test_predict_says_the_damage_of_a_compressed_labeled_csv_whose_garbage_it_refuses_first(tmp_path, compress):
    # Damaged compressed data decompresses to garbage before its decompressor fails (gzip's check is at its end): a
    # labeled CSV whose garbage (here a malformed record, past predict's first block) broke the CSV reading was
    # "malformed CSV record ... (read as CSV because line 1 is a labeled CSV row ...)", where training's reader says
    # the damage
    rows = '"1","fine food"\n"2","cold soup"\n'
    data = (rows * 30 + '"1","x"y\n' + rows * 40000).encode()  # (2 MB: the damage past predict's first block)
    p = tmp_path / "damaged.csv.gz"
    p.write_bytes(compress(data))
    model = _tiny_model(tmp_path / "m")
    said = r"damaged\.csv\.gz:\d+: corrupt or truncated (gzip|xz) data \("
    got = cli_in_process("predict", "--model", model, "--input", p)
    assert got.returncode == 2 and got.stdout == "" and got.stderr.count("error:") == 1, got.stderr
    assert re.search(said, got.stderr) and "malformed" not in got.stderr, got.stderr
    with pytest.raises(FastTextError, match=said):
        read_labeled(str(p))
    p.write_bytes(gzip.compress(data))  # undamaged: the record's own error
    got = cli_in_process("predict", "--model", model, "--input", p)
    assert got.returncode == 2 and "damaged.csv.gz:61: malformed CSV record" in got.stderr, got.stderr


@pytest.mark.parametrize("header, dim", [("2 0", None), ("2 5", 4)], ids=["dimension-0", "not-the-models"])
def test_a_vec_header_garbled_in_damaged_compressed_data_is_said_as_the_damage(tmp_path, header, dim):
    # a .vec.gz whose header reads a dimension 0, or one not the model's, in damaged data was "the header gives
    # dimension 0" or "the pretrained vectors have dimension 5 but the model's emsize is 4", not the damage (a
    # malformed header was said as the damage already)
    from fasttext_lib.vec_files import read_vec

    data = (header + "\n" + "".join(f"w{i} 0.1 0.2 0.3 0.4\n" for i in range(20000))).encode()
    p = tmp_path / "damaged.vec.gz"
    p.write_bytes(_damaged_gzip(data, "crc"))
    with pytest.raises(FastTextError, match=r"damaged\.vec\.gz:\d+: corrupt or truncated gzip data \(Error -3"):
        read_vec(str(p), dim=dim)
    p.write_bytes(gzip.compress(data))  # undamaged: the header's own error
    with pytest.raises(FastTextError, match="dimension 0; it must be positive" if dim is None else "dimension 5 but"):
        read_vec(str(p), dim=dim)


def _fails_in_zlib(data):
    import zlib

    try:
        zlib.decompressobj(wbits=31).decompress(data[:1 << 16])
    except zlib.error:
        return True
    return False


@pytest.mark.parametrize("lines", [100, 20000])  # (a file within binary_data's probe, and one past it)
def test_gzip_damaged_in_its_first_bytes_is_corrupt_gzip(tmp_path, lines):
    """A bit flipped in a gzip file's deflate data, within binary_data's probe (its first 64 KiB), where zlib fails on
    it: binary_data._gzip_start took that for text (the U+8B1F of a UTF-16 review), and the file, read as text, was
    "not a text file (contains NUL bytes; UTF-16 text or a binary file?)"; damaged past 64 KiB, "corrupt or truncated
    gzip data". It is gzip data unless it reads as text in a charset it may be in (a UTF-16 review is read as such)."""
    data = "".join(f"__label__{i % 2} review number {i}\n" for i in range(lines)).encode()
    whole = gzip.compress(data)
    flipped = (whole[:at] + bytes([whole[at] ^ 0x10]) + whole[at + 1:] for at in range(20, 500))
    damaged = next(each for each in flipped if _fails_in_zlib(each))  # (the first flip that zlib fails on)
    p = tmp_path / "damaged.csv.gz"
    p.write_bytes(damaged)
    with pytest.raises(FastTextError, match=r"damaged\.csv\.gz:\d+: corrupt or truncated gzip data \("):
        read_labeled(str(p))


def test_predict_reads_an_lzma_file_and_names_one_cut_short(tmp_path):
    """Legacy .lzma data (xz --format=lzma, Python's lzma.FORMAT_ALONE) is read as xz data is, from a file or piped
    in; it was "not a text file (contains NUL bytes; UTF-16 text or a binary file?)". One cut short is named as it."""
    p, model = _answered_as_its_text(tmp_path, "to_label.txt.lzma",
                                     lambda data: lzma.compress(data, format=lzma.FORMAT_ALONE))
    for cut in (16, 40):  # (within its header, and past it)
        (tmp_path / "cut.lzma").write_bytes(p.read_bytes()[:cut])
        got = cli_in_process("predict", "--model", model, "--input", tmp_path / "cut.lzma")
        assert got.returncode == 2 and got.stderr.count("error:") == 1, got.stderr
        assert "1: corrupt or truncated lzma data" in got.stderr, got.stderr


@pytest.mark.parametrize("text", ["] a review that starts with a bracket\n", "]\u8000\u4e00 review\n"])
def test_text_that_starts_as_an_lzma_header_might_is_text(text):
    """An .lzma header has no magic: its first byte is most often 5D, "]" (binary_data._lzma_start). UTF-8 text that
    starts with "]" is 5D then a printable byte; UTF-16 text's 5D 00 is no header, by the fields after it."""
    from fasttext_lib.binary_data import binary_kind

    assert binary_kind(text.encode(), ("utf-8",)) is None
    assert binary_kind(text.encode("utf-16-le"), ("utf-16-le",)) is None
    assert binary_kind(text.encode("utf-16-le"), ()) is None  # (by its structure alone, whatever its charset)
    assert binary_kind(lzma.compress(text.encode(), format=lzma.FORMAT_ALONE), ("utf-16-le",)) == "lzma"


def test_nuls_are_no_lzma_data(tmp_path):
    """liblzma takes a dictionary size of 0 and an uncompressed size of 0: 13 NULs read as an empty .lzma stream, and
    NULs without end (/dev/zero) as endless such streams, which hung training. No encoder writes a dictionary below 4
    KiB: NULs are refused as a binary file, as before .lzma was read."""
    from fasttext_lib.binary_data import binary_kind, magic_kind

    assert magic_kind(bytes(64)) is None and binary_kind(bytes(64), ("utf-16-le",)) is None
    (tmp_path / "zeros.txt").write_bytes(bytes(4096))
    with pytest.raises(FastTextError, match=r"zeros\.txt:1: not a text file \(contains NUL bytes"):
        read_labeled(str(tmp_path / "zeros.txt"))
    smallest = lzma.compress(b"__label__1 good\n", format=lzma.FORMAT_ALONE,
                             filters=[{"id": lzma.FILTER_LZMA1, "dict_size": 4096}])
    (tmp_path / "small.lzma").write_bytes(smallest)
    assert read_labeled(str(tmp_path / "small.lzma")).labels == ["1"]


def test_text_too_short_to_be_lzma_is_said_to_be_what_it_is(tmp_path):
    """' hi' in UTF-32-BE (12 bytes: 00 00 00 20 00 ..., a properties byte and a 2 MiB dictionary) passes an .lzma
    header's first fields, and was refused as "corrupt or truncated lzma data" by every reader. Data that ends within
    the header is .lzma only where it is a cut of the header xz and Python write (its size bytes all FF): this is a
    UTF-32 text to the readers (once "NUL bytes"); a cut of xz's .lzma as short is lzma still, cut short."""
    from fasttext_lib.binary_data import binary_kind

    text = " hi".encode("utf-32-be")
    assert binary_kind(text, ()) is None
    p = tmp_path / "hi.txt"
    p.write_bytes(text)
    said = "hi.txt:1: not a text file this program reads: it is UTF-32 text (no byte order mark)"
    with pytest.raises(FastTextError, match=re.escape(said)):
        read_labeled(str(p))
    _tiny_model(tmp_path / "m")
    for got in (cli_in_process("predict", "--model", tmp_path / "m", "--input", p),
                cli_in_process("predict", "--model", tmp_path / "m", input=text)):
        assert got.returncode == 2 and got.stderr.count("error:") == 1, got.stderr
        assert "1: not a text file this program reads: it is UTF-32 text (no" in got.stderr, got.stderr
    p.write_bytes(lzma.compress(b"1,good\n", format=lzma.FORMAT_ALONE)[:12])
    with pytest.raises(FastTextError, match=r"hi\.txt:1: corrupt or truncated lzma data"):
        read_labeled(str(p))


@pytest.mark.parametrize("cut", [5, 6, 13])
def test_an_lzma_file_cut_within_its_header_is_said_to_be_cut_short(tmp_path, cut):
    """A cut of xz's .lzma header (a stopped download) is .lzma cut short at every length from its 5 first fields on:
    at exactly those 5 (5D 00 00 80 00) it was "not a text file (contains NUL bytes; UTF-16 text or a binary file?)",
    and at 6 "corrupt or truncated lzma data". No text is 5 bytes that pass those fields (three NULs in four bytes:
    UTF-32's, 4 bytes a character)."""
    p = tmp_path / "in.csv.lzma"
    p.write_bytes(lzma.compress(b"1,good food\n", format=lzma.FORMAT_ALONE)[:cut])
    with pytest.raises(FastTextError, match=re.escape(f"{p}:1: corrupt or truncated lzma data")):
        read_labeled(str(p))

def _damaged_lzma_files(tmp_path, text, flips):
    """``(path, xz -t's verdict)`` for each of ``flips`` .lzma files made by xz --format=lzma of ``text`` (bytes), each
    with one bit of its compressed data (past its 13-byte header) flipped, at random (fixed) places: the verdict is
    None where xz -t --format=lzma reads the file, else what it says."""
    import random
    import subprocess

    rng = random.Random(0)
    whole = subprocess.run(["xz", "--format=lzma", "-c"], input=text, capture_output=True, check=True).stdout
    for n in range(flips):
        at, bit = rng.randrange(13, len(whole)), rng.randrange(8)
        p = tmp_path / f"damaged{n}.lzma"
        p.write_bytes(whole[:at] + bytes([whole[at] ^ 1 << bit]) + whole[at + 1:])
        tested = subprocess.run(["xz", "-t", "--format=lzma", p], capture_output=True, text=True)
        yield p, tested.stderr.strip() if tested.returncode else None


_WORDS = ["good", "bad", "cold", "soup", "fine", "slow", "service", "tasty", "menu", "noisy", "cheap", "staff"]


@pytest.mark.parametrize("reader", ["labeled", "vec"])
def test_an_lzma_file_with_a_bit_flipped_is_said_to_be_corrupt_lzma(tmp_path, reader):
    """A bit flipped in an .lzma file's compressed data (xz --format=lzma's), where xz -t --format=lzma finds it
    corrupt: within binary_data's probe (its first 64 KiB), the probe's decompression of it failed and the file,
    an .lzma by its header, was read as text: "not a text file (contains NUL bytes; UTF-16 text or a binary file?)"
    (43 of these 100 flips of reviews, 68 of the .vec's); and where the decompressor gave garbage before it failed
    (.lzma has no check), the garbage was refused as text ("line has no __label__ prefix", "not UTF-8 text ... iconv
    -f CP1252 ... .lzma": 12 more; of the .vec, "expected a word and 3 values": 11). Each is corrupt .lzma data, said
    so by training's reader and predict's, and by read_vec (a decompressor read again after its error, at the .vec's
    peek, said "Internal error": Streams says its first error again)."""
    from fasttext_lib.lines import decompressed, line_blocks
    from fasttext_lib.vec_files import read_vec

    rng = random.Random(0)
    if reader == "labeled":
        text = "".join(f"__label__{i % 2} {' '.join(rng.choices(_WORDS, k=8))}\n" for i in range(3000))
    else:
        text = "3000 3\n" + "".join(f"{rng.choice(_WORDS)}{i} {rng.random():.4f} {rng.random():.4f} "
                                    f"{rng.random():.4f}\n" for i in range(3000))
    damaged = [p for p, verdict in _damaged_lzma_files(tmp_path, text.encode(), 100) if verdict]
    assert len(damaged) > 80
    said = r"damaged\d+\.lzma:\d+: corrupt or truncated lzma data \((Corrupt input data|Compressed file ended)"
    for p in damaged:
        with pytest.raises(FastTextError, match=f"^{re.escape(str(tmp_path))}/{said}"):
            read_labeled(str(p)) if reader == "labeled" else read_vec(str(p), dim=3)
        if reader == "vec":
            continue
        with open(p, "rb") as f, pytest.raises(FastTextError, match=f"^{re.escape(str(p))}:\\d+: corrupt or trunc"):
            stream, compression = decompressed(f, str(p))
            for _ in line_blocks(stream, str(p), compression):  # (predict's reader)
                pass
    if reader == "labeled":
        model = _tiny_model(tmp_path / "m")
        got = cli_in_process("predict", "--model", model, "--input", damaged[0])
        assert got.returncode == 2 and got.stderr.count("error:") == 1 and re.search(said, got.stderr), got.stderr


def _gzipped_with_long_extra(data):
    """``data`` gzipped with an extra field (FEXTRA) of XLEN's largest, 65535 bytes, that are no subfields (not RFC
    1952's; gzip -d reads any bytes there): its header runs past binary_data's probe (64 KiB)."""
    import zlib

    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    deflated = compressor.compress(data) + compressor.flush()
    header = b"\x1f\x8b\x08\x04" + bytes(4) + b"\x00\xff" + b"\xff\xff" + b"x" * 0xFFFF
    return header + deflated + zlib.crc32(data).to_bytes(4, "little") + len(data).to_bytes(4, "little")


def test_gzip_whose_extra_field_runs_past_the_probe_is_read_as_gzip_d_reads_it(tmp_path):
    """A gzip file whose extra field runs past binary_data's probe (its first 64 KiB) was judged by the field's
    subfields alone, which these bytes are not, and refused as "not a text file (contains NUL bytes; ...)"; gzip -dc
    reads it. It is read as gzip -dc reads it, by training's reader and by predict's (a file, and piped in)."""
    import subprocess

    _answered_as_its_text(tmp_path, "to_label.txt.gz", _gzipped_with_long_extra)
    p = tmp_path / "train.csv.gz"
    p.write_bytes(_gzipped_with_long_extra("".join(ROWS * 40).encode()))
    plain = tmp_path / "train.csv"
    plain.write_bytes(subprocess.run(["gzip", "-dc", p], capture_output=True, check=True).stdout)
    read = read_labeled(str(p))
    assert (read.labels, read.texts) == (read_labeled(str(plain)).labels, read_labeled(str(plain)).texts)
    assert len(read.texts) == 120


@pytest.mark.parametrize("reader, contents, refused", [
    ("labeled", "".join(ROWS), None),
    ("labeled", '"1","caf\xe9"\n', "1: not UTF-8 text"),
    ("vec", "2 2\ngood 0.1 0.2\nbad 0.3 0.4\n", None),
], ids=["read", "refused", "vec"])
def test_a_compressed_file_is_closed_when_its_reading_ends(tmp_path, monkeypatch, reader, contents, refused):
    """The readers closed the decompressed stream, which leaves the file under it open (as GzipFile leaves it): the
    file was closed by garbage collection, with a ResourceWarning, or not while it was referenced. Closing the stream
    closes the file (lines.open_decompressed), whether the reading ends or is refused. (bzip2: no wrapper of the
    probe, which closes the file as it is collected, holds it.)"""
    from fasttext_lib import storage
    from fasttext_lib.vec_files import read_vec

    opened, open_read = [], storage.open_read
    monkeypatch.setattr(storage, "open_read", lambda *args, **kw: opened.append(open_read(*args, **kw)) or opened[-1])
    p = tmp_path / "in.bz2"
    p.write_bytes(bz2.compress(contents.encode("latin-1")))
    if refused:
        with pytest.raises(FastTextError, match=re.escape(f"{p}:{refused}")):
            read_labeled(str(p))
    else:
        read_labeled(str(p)) if reader == "labeled" else read_vec(str(p), dim=2)
    assert len(opened) == 1 and opened[0].closed


def test_a_text_error_in_a_large_bzip2_file_is_said_without_decompressing_far_past_it(tmp_path, monkeypatch):
    """A line refused as text (not UTF-8, line 1) in a bzip2 file had the next 64 MiB of its text decompressed, to tell
    damage past it (lines.damaged_past): bzip2 decompresses some 15 MB/s, so a genuine error waited seconds (5 s for
    line 1 of a 96 MiB file; 0.01 s before). bzip2 data is checked block by block (900 kB before its run-length
    step), and .lzma's and xz's decoder fails within KiB of the garbage it gives: the look-ahead reaches no further
    than gzip's, whose check is at its member's end. Here: 24 MiB of text past line 1, as concatenated streams."""
    from fasttext_lib import storage

    rng = random.Random(0)
    chunk = "".join(f"__label__{i % 2} {' '.join(rng.choices(_WORDS, k=8))}\n" for i in range(20000)).encode()
    p = tmp_path / "big.txt.bz2"
    p.write_bytes(bz2.compress("__label__1 caf\xe9\n".encode("latin-1")) + bz2.compress(chunk * 2) * 24)
    assert len(chunk) * 48 > 24 << 20
    read, open_read = [], storage.open_read

    class Counted(io.RawIOBase):  # (the file's bytes read, counted)
        def __init__(self, f):
            self.f = f

        def readable(self):
            return True

        def readinto(self, buffer):
            n = self.f.readinto(buffer)
            read.append(n)
            return n

    monkeypatch.setattr(storage, "open_read", lambda *args, **kw: Counted(open_read(*args, **kw)))
    with pytest.raises(FastTextError, match=re.escape(f"{p}:1: not UTF-8 text")):
        read_labeled(str(p))
    assert sum(read) < p.stat().st_size / 2  # (the whole file was read)


@pytest.mark.parametrize("extension, tool", [(".gz", "gzip"), (".bz2", "bzip2"), (".xz", "xz"),
                                             (".lzma", "xz --format=lzma")])
@pytest.mark.parametrize("contents, command", [
    ("__label__1 caf\xe9\n".encode("latin-1"), "| iconv -f CP1252 -t UTF-8 > new.txt)"),
    ("__label__1 café\n__label__2 caf\xe9\n".encode("latin-1").replace(b"caf\xe9\n__", "café\n__".encode()),
     "| python3 -c"),
    ("__label__1 good\n".encode("utf-16"), "| iconv -f UTF-16 -t UTF-8 > new.csv"),
], ids=["cp1252", "mixed", "utf16"])
def test_the_conversion_a_compressed_file_is_told_to_make_decompresses_it_first(tmp_path, extension, tool, contents,
                                                                                 command):
    """The command a text error gives to convert a compressed file (not UTF-8, UTF-16) was given the compressed file,
    "iconv -f CP1252 -t UTF-8 train.txt.gz > new.txt", which converts its compressed bytes into garbage: it is piped the
    file's text by its decompressor (xz -dc --format=lzma for .lzma), by training's reader and predict's."""
    import subprocess

    from fasttext_lib.lines import decompressed, line_blocks

    p = tmp_path / f"train.txt{extension}"
    p.write_bytes(subprocess.run([*tool.split(), "-c"], input=contents, capture_output=True, check=True).stdout)
    told = re.escape(f"{tool.split()[0]} -dc{tool[len(tool.split()[0]):]} {p} {command}")
    with pytest.raises(FastTextError, match=told):
        read_labeled(str(p))
    with open(p, "rb") as f, pytest.raises(FastTextError, match=told):
        stream, found = decompressed(f, str(p))
        for _ in line_blocks(stream, str(p), found):
            pass


def _run_cli(*args, stdin=None, preexec_fn=None):
    """The CLI in a child process (``stdin``: a file it reads from), bounded by a timeout: what a reader that never
    ends would be (subprocess.TimeoutExpired fails the test)."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "fasttext_lib", *map(str, args)], stdin=stdin, capture_output=True,
                          text=True, timeout=120, preexec_fn=preexec_fn)


@pytest.mark.parametrize("after, said", [
    # (8 MiB and 8 bytes: 466034 empty streams of 18 NULs, read without a word; 8 MiB alone ends in a cut one, "corrupt
    # or truncated lzma data"; /dev/zero's never end)
    (bytes((8 << 20) + 8), "is followed by NUL bytes that are not lzma data"),
    (b"garbage\n", "is followed by bytes (67 61 72 62 61 67 65 0a) that are not lzma data"),  # (read without a word)
], ids=["NULs", "text"])
def test_bytes_after_lzma_data_are_refused_by_every_reader(tmp_path, after, said):
    """liblzma starts an .lzma stream on any 13 bytes with a dictionary of 0, and Python's LZMAFile read on after a
    stream: NULs after .lzma data (cat x.lzma /dev/zero | predict) read as empty streams without end, other bytes
    were dropped. A stream after the first is read where it passes the first's rule; other bytes are refused, with
    the command that keeps the .lzma data, by training's reader, predict's (a file, and piped in) and import-folders'."""
    data = lzma.compress(b"1,good food\n2,cold soup\n", format=lzma.FORMAT_ALONE)
    p = tmp_path / "in.csv.lzma"
    p.write_bytes(data + data + after)  # (a second stream is read)
    with pytest.raises(FastTextError, match=re.escape(f"{p}: its lzma data (its first {2 * len(data)} bytes) {said} "
                                                      f"(xz -d refuses them too); keep the .lzma data alone (head -c {2 * len(data)} {p} > "
                                                      f"new.lzma) and give that file")):
        read_labeled(str(p))
    model = _tiny_model(tmp_path / "m")
    with open(p, "rb") as piped:
        for got in (_run_cli("predict", "--model", model, "--input", p),
                    _run_cli("predict", "--model", model, stdin=piped)):
            assert got.returncode == 2 and got.stderr.count("error:") == 1, got.stderr
            assert said in got.stderr, got.stderr
    (tmp_path / "in" / "pos").mkdir(parents=True)
    (tmp_path / "in" / "neg").mkdir()
    (tmp_path / "in" / "neg" / "0.txt").write_bytes(b"cold soup")
    (tmp_path / "in" / "pos" / "0.txt.lzma").write_bytes(data + after)
    got = _run_cli("import-folders", "--input", tmp_path / "in", "--output", tmp_path / "out.csv")
    assert got.returncode == 2 and got.stderr.count("error:") == 1, got.stderr
    assert f"{said} (xz -d refuses them too); keep the .lzma data alone (head -c {len(data)} " in got.stderr, got.stderr
    assert got.stderr.rstrip().endswith("and put it in the class folder in its place"), got.stderr


def test_nuls_after_xz_data_end_the_data(tmp_path):
    """xz data was read with lzma's FORMAT_AUTO, which starts an .lzma stream on NULs after it (xz's stream padding):
    read as empty .lzma streams, /dev/zero's without end; 8 MiB ended in "corrupt or truncated xz data". They are
    its stream padding (a multiple of 4 bytes), read as xz -d reads it (the tests below)."""
    p = tmp_path / "in.csv.xz"
    p.write_bytes(lzma.compress(b"1,good food\n2,cold soup\n") + bytes(8 << 20))
    assert read_labeled(str(p)).texts == ["good food", "cold soup"]
    model = _tiny_model(tmp_path / "m")
    with open(p, "rb") as piped:
        got = _run_cli("predict", "--model", model, stdin=piped)
    assert got.returncode == 0 and len(got.stdout.splitlines()) == 2, got.stderr


@pytest.mark.parametrize("padding", [4, 8])
def test_xz_stream_padding_is_read_as_xz_reads_it(tmp_path, padding):
    """xz's stream padding (NULs after a stream, a multiple of 4 bytes: xz -dc reads them, and a stream after them)
    ended in "corrupt or truncated xz data" where it was shorter than a stream header (12 bytes): lzma's FORMAT_XZ
    decompressor, given it, waited for the rest of a header. Padding is skipped, and a stream after it read."""
    one, two = lzma.compress(b"1,good food\n"), lzma.compress(b"2,cold soup\n")
    p = tmp_path / "in.csv.xz"
    p.write_bytes(one + bytes(padding))
    assert read_labeled(str(p)).texts == ["good food"]
    p.write_bytes(one + bytes(padding) + two + bytes(padding))
    assert read_labeled(str(p)).texts == ["good food", "cold soup"]


@pytest.mark.parametrize("after, said", [
    (lzma.compress(b"2,cold soup\n", format=lzma.FORMAT_ALONE), "bytes (5d 00 00 80 00 ff ff ff ...)"),
    (b"garbage\n", "bytes (67 61 72 62 61 67 65 0a)"),
    (bytes(3), "NUL bytes"),  # (padding is a multiple of 4 bytes)
], ids=["lzma", "text", "3 NULs"])
def test_bytes_after_xz_data_are_refused(tmp_path, after, said):
    """Bytes after xz data that are neither another xz stream nor its stream padding were dropped without a word (an
    .lzma stream after it, read before xz was read with FORMAT_XZ, too): the file trained on less than it holds. xz
    -d refuses them; so do the readers, with the command that keeps the xz data, as they do after .lzma data."""
    data = lzma.compress(b"1,good food\n")
    p = tmp_path / "in.csv.xz"
    p.write_bytes(data + bytes(4) + data + after)
    end = 2 * len(data) + 4
    with pytest.raises(FastTextError, match=re.escape(
            f"{p}: its xz data (its first {end} bytes) is followed by {said} that are not xz data (xz -d refuses them "
            f"too); keep the xz data alone (head -c {end} {p} > new.xz) and give that file")):
        read_labeled(str(p))
    model = _tiny_model(tmp_path / "m")
    with open(p, "rb") as piped:
        got = _run_cli("predict", "--model", model, stdin=piped)
    assert got.returncode == 2 and got.stderr.count("error:") == 1, got.stderr
    assert f"is followed by {said} that are not xz data (xz -d refuses them too); pipe in the xz data alone" in \
        got.stderr, got.stderr


_COMPRESSORS = {"gzip": (lambda data: gzip.compress(data, mtime=0), ".gz", "gzip -d ignores them, with a warning"),
                "bzip2": (bz2.compress, ".bz2", "bzip2 -d ignores them, with a warning")}


@pytest.mark.parametrize("kind, after, said", [
    ("gzip", b"more text\n", "bytes (6d 6f 72 65 20 74 65 78 ...)"),
    ("bzip2", b"more text\n", "bytes (6d 6f 72 65 20 74 65 78 ...)"),  # (cat a.bz2 more.txt > b.bz2)
    ("bzip2", b"\x1f\x8bxxxxxxxx", "bytes (1f 8b 78 78 78 78 78 78 ...)"),  # (gzip data: not bzip2's)
], ids=["gzip", "bzip2", "bzip2 then gzip"])
def test_bytes_after_gzip_or_bzip2_data_are_refused(tmp_path, kind, after, said):
    """Bytes after bzip2 data were dropped without a word by Python's BZ2File: training trained on fewer rows than the
    file holds (bzip2 -d warns "trailing garbage after EOF ignored"); after gzip data they were "corrupt or truncated
    gzip data (Not a gzipped file (b'mo'))", which said nothing of the data before them. Both are refused as after xz
    and .lzma data, with the command that keeps the data (two streams: read, as bzip2 -d and gzip -d read them), by
    training's reader and predict's, piped in."""
    compress, extension, tool = _COMPRESSORS[kind]
    data = compress(b"1,good food\n2,cold soup\n")
    p = tmp_path / f"in.csv{extension}"
    p.write_bytes(data + data + after)
    end = 2 * len(data)
    with pytest.raises(FastTextError, match=re.escape(
            f"{p}: its {kind} data (its first {end} bytes) is followed by {said} that are not {kind} data ({tool}); "
            f"keep the {kind} data alone (head -c {end} {p} > new{extension}) and give that file")):
        read_labeled(str(p))
    kept = tmp_path / f"new{extension}"
    kept.write_bytes(p.read_bytes()[:end])  # (the command's file: both streams read)
    assert read_labeled(str(kept)).texts == ["good food", "cold soup"] * 2
    model = _tiny_model(tmp_path / "m")
    with open(p, "rb") as piped:
        got = _run_cli("predict", "--model", model, stdin=piped)
    assert got.returncode == 2 and got.stderr.count("error:") == 1, got.stderr
    assert f"is followed by {said} that are not {kind} data ({tool}); pipe in the {kind} data alone" in got.stderr, \
        got.stderr


@pytest.mark.parametrize("kind, after", [("gzip", b"\x1f"), ("gzip", b"\x1f\x8bxxxxxxxx"), ("bzip2", b"BZ")])
def test_a_streams_start_after_gzip_or_bzip2_data_is_read_as_one(tmp_path, kind, after):
    """After gzip or bzip2 data, bytes that start a stream's magic (or all of it) are a stream, as gzip -d and bzip2
    -d read one: cut short or corrupt, they are said to be so (gzip -d: "unexpected end of file"), not refused as
    bytes that follow the data."""
    compress, extension, _ = _COMPRESSORS[kind]
    p = tmp_path / f"in.csv{extension}"
    p.write_bytes(compress(b"1,good food\n") + after)
    with pytest.raises(FastTextError, match=re.escape(f"{p}:2: corrupt or truncated {kind} data")):
        read_labeled(str(p))


@pytest.mark.parametrize("kind, nuls, read", [
    ("gzip", 3, True), ("gzip", 1 << 16, True),  # (gzip -d and Python's gzip skip NULs after the data)
    ("bzip2", 4, False),  # (bzip2 -d: "trailing garbage after EOF ignored", as after any bytes)
])
def test_nuls_after_gzip_or_bzip2_data_are_read_as_gzip_d_and_bzip2_d_read_them(tmp_path, kind, nuls, read):
    """NULs after gzip data are skipped (and a member after them read), as gzip -d and Python's GzipFile skip them;
    after bzip2 data they are refused, as bzip2 -d calls them trailing garbage (BZ2File dropped them, with any bytes
    after them)."""
    compress, extension, tool = _COMPRESSORS[kind]
    data = compress(b"1,good food\n")
    p = tmp_path / f"in.csv{extension}"
    p.write_bytes(data + bytes(nuls) + (data + bytes(nuls) if read else b""))
    if read:
        assert read_labeled(str(p)).texts == ["good food"] * 2
        return
    with pytest.raises(FastTextError, match=re.escape(f"{p}: its {kind} data (its first {len(data)} bytes) is followed "
                                                      f"by NUL bytes that are not {kind} data ({tool}); keep")):
        read_labeled(str(p))


@pytest.mark.parametrize("kind", ["xz", "gzip"])
def test_more_nuls_after_the_data_than_are_read_are_said_to_be(tmp_path, kind):
    """More than 64 MiB of NULs after xz data were refused as bytes "xz -d refuses too": xz -d reads them on as its
    stream padding (a multiple of 4 bytes, as these are). They are said to be more NULs than this program reads; so
    are they after gzip data (Python's GzipFile read them a byte at a time, /dev/zero's without end)."""
    data = lzma.compress(b"1,good food\n") if kind == "xz" else gzip.compress(b"1,good food\n", mtime=0)
    p = tmp_path / f"in.csv.{'xz' if kind == 'xz' else 'gz'}"
    p.write_bytes(data + bytes((64 << 20) + 4))
    with pytest.raises(FastTextError, match=re.escape(
            f"{p}: its {kind} data (its first {len(data)} bytes) is followed by more than 64 MiB of NUL bytes ({kind} "
            f"-d reads on through NUL bytes after its data, where this program stops at 64 MiB); keep the {kind} data "
            f"alone (head -c {len(data)} {p} > new.{'xz' if kind == 'xz' else 'gz'}) and give that file")):
        read_labeled(str(p))


@pytest.mark.parametrize("cut", [1, 2, 3, 4, 5])
def test_an_xz_file_cut_within_its_magic_is_said_to_be_cut_short(tmp_path, cut):
    """An xz file cut within its 6-byte magic (a download stopped at once) was "not UTF-8 text ... iconv -f CP1252":
    it is xz data cut short, as an .lzma file cut within its header is said to be (FD starts no UTF-8 character)."""
    p = tmp_path / "in.csv.xz"
    p.write_bytes(lzma.compress(b"1,good food\n")[:cut])
    with pytest.raises(FastTextError, match=re.escape(f"{p}:1: corrupt or truncated xz data")):
        read_labeled(str(p))


def test_an_lzma_header_asking_for_more_memory_than_is_free_is_said_to(tmp_path):
    """A tiny .lzma file whose header asks for a dictionary of 3 or 4 GiB, read where that memory is not free (here a 2
    GiB address space), ended in "out of memory (an allocation failed); use a machine with more memory": nothing of
    the file. Its header's dictionary is named, with the command that decompresses it where the memory is."""
    import resource

    real = lzma.compress(b"1,good\n2,bad\n", format=lzma.FORMAT_ALONE)
    model = _tiny_model(tmp_path / "m")
    limit = lambda: resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))  # noqa: E731
    for dictionary, size in ((0xFFFFFFFF, "4.0 GiB"), (3 << 30, "3.0 GiB")):
        p = tmp_path / "big.lzma"
        p.write_bytes(real[:1] + dictionary.to_bytes(4, "little") + real[5:])
        got = _run_cli("predict", "--model", model, "--input", p, preexec_fn=limit)
        assert got.returncode == 2 and got.stderr.count("error:") == 1, got.stderr
        assert (f"error: {p}: its lzma header asks for a dictionary of {size}, more memory than is free: likely not "
                f".lzma data, or made with a huge dictionary; decompress it where that memory is (xz -dc "
                f"--format=lzma {p} > new.txt) and give that file") in got.stderr, got.stderr


def _zip(p, members):
    with zipfile.ZipFile(p, "w") as z:
        for member, data in members.items():
            z.writestr(member, data)


def test_the_conversion_commands_for_an_s3_object_name_its_file(s3_bucket, tmp_path):
    # "tar -xf s3://bucket/train.csv.tar.gz" and "iconv ... s3://..." cannot run: the commands name the file, copied
    # down first
    import boto3

    local = tmp_path / "train.csv.tar.gz"
    _tar(local, "w:gz", "".join(ROWS).encode())
    boto3.client("s3").put_object(Bucket=s3_bucket[len("s3://"):], Key="in/train.csv.tar.gz", Body=local.read_bytes())
    with pytest.raises(FastTextError, match=rf"^{s3_bucket}/in/train\.csv\.tar\.gz: is a tar archive; extract the "
                                            rf"file from it first \(aws s3 cp {s3_bucket}/in/train\.csv\.tar\.gz \. && "
                                            rf"tar -xf train\.csv\.tar\.gz\) and give that file"):
        read_labeled(f"{s3_bucket}/in/train.csv.tar.gz")


@pytest.mark.parametrize("encoding, bom, expected", [
    ("utf-16", b"", r"it is UTF-16 text; convert it to UTF-8 first, e.g. iconv -f UTF-16 -t UTF-8 "),
    ("utf-16-le", b"", r"it is UTF-16 text \(no byte order mark\); .*iconv -f UTF-16LE -t UTF-8 "),
    # (was told "iconv -f UTF-16LE": its first line's leading NUL was stripped as a later line's is)
    ("utf-16-be", b"", r"it is UTF-16 text \(no byte order mark\); .*iconv -f UTF-16BE -t UTF-8 "),
    ("utf-16-be", b"\xfe\xff", r"it is UTF-16 text; .*iconv -f UTF-16 -t UTF-8 "),
])
def test_utf16_file_is_named_with_how_to_convert(tmp_path, encoding, bom, expected):
    # Excel's "Unicode Text" (UTF-16LE with a BOM, tab-separated) was "not a text file (contains NUL bytes; UTF-16 text
    # or a binary file?)": it did not say which, nor how to convert it
    p = tmp_path / "u.csv"
    p.write_bytes(bom + "".join(ROWS).encode(encoding))
    with pytest.raises(FastTextError, match=f"^{p}:1: not a text file this program reads: {expected}.*"
                                            r"pd\.read_csv\(path, encoding='utf-16', sep='\\t', header=None, "
                                            r"dtype=str, keep_default_na=False\)\.to_csv\(new_path, index=False, "
                                            r"header=False\)"):
        read_labeled(str(p))


def test_nul_bytes_named_with_line(tmp_path):
    p = tmp_path / "n.csv"
    p.write_bytes(b'"1","ok"\n"2","b\x00d"\n')
    with pytest.raises(FastTextError, match=r"n\.csv:2: not a text file \(contains NUL"):
        read_labeled(str(p))


@pytest.mark.parametrize("line", [b"ok\x00\n", b"a\x00bc\n", b"no\x00"])
def test_a_stray_nul_in_a_short_line_of_utf8_is_not_called_utf16(tmp_path, line):
    """One NUL byte in a short line of a UTF-8 file (a review "ok" cut by a crashed writer) was "it is UTF-16 text (no
    byte order mark); convert it ... iconv -f UTF-16BE": that command garbles the whole file. UTF-16 puts a NUL beside
    every ASCII character, two or more in any line of two characters; one NUL is a NUL byte, as in a longer line."""
    from fasttext_lib.predict_input import documents

    p = tmp_path / "reviews.txt"
    p.write_bytes(b"a fine review of the phone\n" + line)
    with pytest.raises(FastTextError, match=r"reviews\.txt:2: not a text file \(contains NUL bytes"):
        with documents(str(p), "auto", ("1", "2"), note=print) as texts:  # as predict reads --input
            list(texts)


def test_directory_and_missing_file(tmp_path):
    with pytest.raises(FastTextError, match="expected a file but got a directory"):
        read_labeled(str(tmp_path))
    with pytest.raises(FastTextError, match="no such file"):
        read_labeled(str(tmp_path / "absent.csv"))


def test_gzip_on_s3_with_hash_in_key(tmp_path, s3_bucket):
    import boto3

    bucket = s3_bucket[len("s3://"):]
    boto3.client("s3").put_object(Bucket=bucket, Key="data/exp#1?v=2/train.csv.gz", Body=gzip.compress("".join(ROWS).encode()))
    assert read_labeled(f"{s3_bucket}/data/exp#1?v=2/train.csv.gz").labels == ["1", "2", "1"]


@pytest.mark.parametrize("label", ["very good", "tab\there", "line\nbreak"])
def test_write_fasttext_refuses_a_label_it_cannot_carry(tmp_path, label):
    """A CSV class with a space written as `__label__very good ...` read back as class `very`, text `good ...`."""
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.writers import write_fasttext

    out = tmp_path / "set.train"
    out.write_text("__label__mine my data\n")
    with pytest.raises(FastTextError, match="labels there may not be empty or hold whitespace"):
        write_fasttext(LabeledTexts([label, "bad"], ["nice place", "awful"]), str(out))
    assert out.read_text() == "__label__mine my data\n" and os.listdir(tmp_path) == ["set.train"]


def _read_line_by_line(raw):
    """What lines.DecodedLines gives for ``raw``: the lines (``\\n`` and a CRLF's ``\\r`` dropped), or its error."""
    import io

    from fasttext_lib.lines import DecodedLines

    try:
        lines = [line[:-1] if line.endswith("\n") else line for line in DecodedLines(io.BytesIO(raw), "in.txt", None)]
    except FastTextError as exc:
        return str(exc)
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _read_in_blocks(raw):
    import io

    from fasttext_lib.lines import line_blocks

    given = []
    try:
        blocks = list(line_blocks(io.BytesIO(raw), "in.txt", sink=lambda block: given.append(bytes(block))))
    except FastTextError as exc:
        return str(exc)
    assert b"".join(given) == raw  # the blocks are the input, cut at line ends
    assert [size for size, _ in blocks] == list(map(len, given))
    return [line for _, lines in blocks for line in lines]


def test_line_blocks_read_exactly_as_line_by_line(monkeypatch):
    """predict reads in blocks (lines.line_blocks) what the training readers read line by line (lines.DecodedLines):
    the same lines, and for bad input the same error at the same line, whatever the block boundaries.
    Random inputs built from what matters: line ends, CR, BOM, NUL, multi-byte and invalid UTF-8, lines
    at and over the length bound (50 bytes here, so blocks are 50 bytes and lines cross them)."""
    import random

    from fasttext_lib import lines

    monkeypatch.setattr(lines, "MAX_LINE_BYTES", 50)
    pieces = [b"\n", b"\r\n", b"\r", b"\xef\xbb\xbf", "é".encode(), "€".encode(), "😀".encode(), b"a", b"word ",
              b"\xe9", b"\xff", b"\x00", b"\xe2\x82"]
    outcomes = set()
    for seed in range(300):
        rng = random.Random(seed)
        weights = [8, 3, 1, 1, 3, 3, 2, 20, 20] + ([1, 1, 1, 1] if seed % 3 == 0 else [0, 0, 0, 0])
        raw = b"".join(rng.choices(pieces, weights, k=rng.randrange(0, 400)))
        if seed % 5 == 0:  # a line at the bound, or just over it
            raw += b"x" * (50 + seed % 2) + b"\n" + raw
        if seed % 7 == 0:
            raw = b"\xef\xbb\xbf" + raw
        expected = _read_line_by_line(raw)
        assert _read_in_blocks(raw) == expected, (seed, raw)
        outcomes.add(expected.split(": ", 1)[1][:12] if isinstance(expected, str) else "lines")
    # the inputs reach every outcome: lines, and each error
    assert outcomes == {"lines", "line longer ", "not UTF-8 te", "not a text f"}, outcomes


@pytest.mark.parametrize("raw", [b"", b"\n", b"a", b"a\n\n", b"\xef\xbb\xbf\n", b"\xef\xbb\xbf", b"\xef\xbb\xbf" * 2, b"x" * 50, b"x" * 51, b"x" * 50 + b"\n",
                                 b"x" * 51 + b"\n", b"ok\n" + b"\x00" * 200, b"ok\n" + b"y" * 120, b"\xe9\n\x00"])
def test_line_blocks_edges(monkeypatch, raw):
    from fasttext_lib import lines

    monkeypatch.setattr(lines, "MAX_LINE_BYTES", 50)
    assert _read_in_blocks(raw) == _read_line_by_line(raw)


@pytest.mark.parametrize("seed", range(60))
def test_line_blocks_name_the_line_where_compressed_data_goes_bad(seed):
    """A truncated or damaged gzip/bzip2/xz input: line_blocks names the same line as DecodedLines (the text
    decoded before the bad data is counted), where it named the first line of its 1 MiB block."""
    import bz2
    import gzip
    import io
    import lzma
    import random

    from fasttext_lib.lines import DecodedLines, line_blocks

    rng = random.Random(seed)
    kind, compress = [("gzip", gzip.compress), ("bzip2", bz2.compress), ("xz", lzma.compress)][seed % 3]
    pieces = [b"\n", b"\r\n", "é".encode(), b"word ", b"\xff", b"\x00"]
    weights = [5, 1, 2, 30] + ([1, 1] if seed % 4 == 0 else [0, 0])
    text = b"".join(rng.choices(pieces, weights, k=rng.randrange(1, 60000)))
    data = bytearray(compress(text))
    if seed % 2:
        del data[rng.randrange(len(data) // 2, len(data)):]  # cut
    else:
        data[rng.randrange(20, len(data))] ^= 0xFF  # damaged

    def outcome(read):
        try:
            return read()
        except FastTextError as exc:
            return str(exc)

    opener = {"gzip": lambda f: gzip.GzipFile(fileobj=f), "bzip2": bz2.BZ2File, "xz": lzma.LZMAFile}[kind]

    def by_line():
        lines = (line[:-1] if line.endswith("\n") else line for line in DecodedLines(opener(io.BytesIO(bytes(data))), "in.gz", kind))
        return [line[:-1] if line.endswith("\r") else line for line in lines]

    def in_blocks():
        return [line for _, lines in line_blocks(opener(io.BytesIO(bytes(data))), "in.gz", kind) for line in lines]

    assert outcome(in_blocks) == outcome(by_line)


@pytest.mark.parametrize("kind", ["gzip", "bzip2", "xz", None])
def test_compressed_input_arriving_a_byte_at_a_time_is_recognized(kind):
    """A pipe hands out what its writer wrote so far: peek(6) once gave b"\\x1f", so gzip on stdin written in
    small pieces was read as text ("contains NUL bytes"). The magic is read whole, then given back."""
    import bz2
    import gzip
    import io
    import lzma

    from fasttext_lib.lines import decompressed, line_blocks

    class Trickle(io.RawIOBase):  # one byte per read, like a pipe whose writer flushes byte by byte
        def __init__(self, data):
            self.data = data

        def readable(self):
            return True

        def readinto(self, buffer):
            if not self.data:
                return 0
            buffer[0], self.data = self.data[0], self.data[1:]
            return 1

    text = "café au lait\nsecond line\r\n".encode() * 50
    data = {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress, None: bytes}[kind](text)
    stream, found = decompressed(io.BufferedReader(Trickle(data)), "stdin")
    assert found == kind
    assert [line for _, lines in line_blocks(stream, "stdin", found) for line in lines] == ["café au lait", "second line"] * 50


@pytest.mark.parametrize("text", ["see __label__3 in the docs", "SEE (__LABEL__3)", "__label__"])
def test_a_text_holding_a_label_word_is_refused_not_written_unreadable(tmp_path, text):
    """write_fasttext (notebook 01, prepare) wrote such a review as ``__label__1 see __label__3 ...``: the file
    read back as 'line has 2 labels' (fastText: a silent second class), so training on what it wrote failed."""
    out = tmp_path / "reviews.train"
    out.write_bytes(b"__label__1 my earlier file\n")
    with pytest.raises(FastTextError, match=r"cannot write document 2 \(class '2'\) to the fastText-format file "
                                            r".*reviews\.train: its text holds a word starting with '__label__'") as info:
        write_fasttext(LabeledTexts(["1", "2"], ["fine text", text]), str(out))
    assert "\n" not in str(info.value)
    assert out.read_bytes() == b"__label__1 my earlier file\n" and os.listdir(tmp_path) == ["reviews.train"]
    # a word that only holds the prefix inside it is an ordinary word, written and read back as one
    write_fasttext(LabeledTexts(["1", "2"], ["fine text", "my__label__word x__label__"]), str(out))
    assert read_labeled(str(out)).texts == ["fine text", "my__label__word x__label__"]


def test_splits_written_together_keep_both_old_files_when_one_cannot_be_written(tmp_path):
    """Notebook 01 wrote its splits one write_fasttext at a time: a test split that failed (here a text the format
    cannot hold) left the new train split beside the old test split. write_fasttext_splits writes both in full first."""
    from fasttext_lib.writers import write_fasttext_splits

    (tmp_path / "set.train").write_bytes(b"__label__1 old train\n")
    (tmp_path / "set.test").write_bytes(b"__label__1 old test\n")
    splits = {"train": LabeledTexts(["1", "2"], ["new", "train"]), "test": LabeledTexts(["2"], ["see __label__3"])}
    with pytest.raises(FastTextError, match=r"cannot write document 1 \(class '2'\) to the fastText-format file .*set\.test"):
        write_fasttext_splits(splits, str(tmp_path), "set")
    assert (tmp_path / "set.train").read_bytes() == b"__label__1 old train\n"
    assert (tmp_path / "set.test").read_bytes() == b"__label__1 old test\n"
    assert sorted(os.listdir(tmp_path)) == ["set.test", "set.train"]
    splits["test"] = LabeledTexts(["2"], ["Fine, Really!"])
    written = write_fasttext_splits(splits, str(tmp_path), "set")
    assert written == {"train": str(tmp_path / "set.train"), "test": str(tmp_path / "set.test")}
    assert read_labeled(written["train"]).texts == ["new", "train"]
    assert read_labeled(written["test"]).texts == ["fine , really !"]


@pytest.mark.parametrize("content, first", [
    (b'"1","nice place"\r"2","awful"\r', "a line break inside an unquoted field"),  # Excel's "CSV (Macintosh)"
    (b"1,nice place\r2,awful\r", "a line break inside an unquoted field"),
    (b"__label__1 nice place\r__label__2 awful\r", "line has 2 labels"),
    (b"class,text\r1,nice place\r2,awful\r", "line 1: it holds a line break inside it"),  # was a traceback
])
def test_a_file_whose_lines_end_in_a_lone_carriage_return_is_named_as_such(tmp_path, content, first):
    """The whole file is one line then: the errors said 'line has 2 labels', or passed on the csv module's
    'do you need to open the file in universal-newline mode?', which is advice for Python code, not for a user."""
    p = tmp_path / "mac.csv"
    p.write_bytes(content)
    with pytest.raises(FastTextError) as info:
        read_labeled(str(p))
    message = str(info.value)
    assert message.startswith(f"{p}:1: ") and first in message and "\n" not in message
    assert "lines seem to end in a lone carriage return" in message and "universal-newline" not in message
    p.write_bytes(content.replace(b"\r", b"\r\n"))  # CRLF (Windows) files read as they always did
    assert read_labeled(str(p)).labels == ["1", "2"]


@pytest.mark.parametrize("writer", ["fasttext", "csv", "splits"])
@pytest.mark.parametrize("labels, text, pattern", [
    (["1", "2"], "b\x00a\x00d\x00", r"cannot write document 2 \(class '2'\) to .*: its text holds 3 NUL character\(s\) "
                                    r"\(\\x00, at position 1\).*UTF-16"),
    (["1", "2\x00"], "bad", r"cannot write the label '2\\x00' to .*: it holds a NUL character"),
    (["1", "2"], "bad \udc9f", r"cannot write document 2 \(class '2'\) to .*: it is not valid Unicode text \(character "
                               r"'\\udc9f', a lone surrogate\)"),
])
def test_a_text_that_no_text_file_can_hold_is_refused_not_written(tmp_path, writer, labels, text, pattern):
    """A NUL in a text was written as is: the file read back as 'not a text file (contains NUL bytes)' (every reader
    refuses them), and a lone surrogate stopped the write in a UnicodeEncodeError traceback. Both are one error naming
    the document, and nothing is written over the old file."""
    from fasttext_lib.writers import write_csv, write_fasttext_splits

    data = LabeledTexts(labels, ["fine text", text])
    out = tmp_path / ("set.train" if writer != "csv" else "set.csv")
    out.write_bytes(b"__label__1 my earlier file\n")
    with pytest.raises(FastTextError, match=pattern) as info:
        {"fasttext": lambda: write_fasttext(data, str(out)), "csv": lambda: write_csv(data, str(out)),
         "splits": lambda: write_fasttext_splits({"train": data}, str(tmp_path), "set")}[writer]()
    assert "\n" not in str(info.value) and str(out) in str(info.value)
    assert out.read_bytes() == b"__label__1 my earlier file\n" and os.listdir(tmp_path) == [out.name]
    # the same data cleaned as the line says is written and read back
    clean = LabeledTexts([label.replace("\x00", "") for label in labels],
                         ["fine text", text.replace("\x00", " ").replace("\udc9f", "")])
    write_csv(clean, str(tmp_path / "clean.csv"))
    assert read_labeled(str(tmp_path / "clean.csv")).texts == clean.texts


def test_lines_of_spaces_in_a_csv_are_blank_lines(tmp_path):
    # an editor's trailing lines of spaces were "malformed CSV row: expected "class","text"[,...] but got 1 column(s)"
    # (fastText-format input and a CSV's leading lines already read them as blank)
    p = tmp_path / "t.csv"
    p.write_text("label,text\n" + "".join(ROWS[:2]) + "   \n" + ROWS[2] + "\t\n  \n")
    data = read_labeled(str(p))
    assert data.labels == ["1", "2", "1"] and data.texts == ["bad food", "great food", "slow service"]


def test_a_field_over_the_csv_limit_is_named_as_too_long(tmp_path):
    from fasttext_lib.formats import CSV_FIELD_LIMIT

    p = tmp_path / "long.csv"
    p.write_text('"1","' + "word " * (CSV_FIELD_LIMIT // 5 + 1) + '"\n' + ROWS[1])
    with pytest.raises(FastTextError, match=r"long\.csv:1: malformed CSV record starting at this line: a field longer "
                                            r"than 16 Mi characters \(an unclosed quote\? else split the text"):
        read_labeled(str(p))


def test_an_old_mac_tsv_with_its_columns_named_is_one_error_not_a_traceback(tmp_path):
    # --label-column on a tab-separated file whose lines end in a lone \r: the check for a header of tabs stopped in
    # the csv module's "new-line character seen in unquoted field" traceback
    from fasttext_lib.columns import Columns

    p = tmp_path / "mac.tsv"
    p.write_bytes(b"label\ttext\r1\tnice place\r2\tawful\r")
    with pytest.raises(FastTextError) as info:
        read_labeled(str(p), Columns("label"))
    message = str(info.value)
    assert message.startswith(f"{p}:1: ") and "lines seem to end in a lone carriage return" in message
    p.write_bytes(b"label\ttext\r\n1\tnice place\r\n2\tawful\r\n")  # CRLF (Windows) files read as they are
    assert read_labeled(str(p), Columns("label")).texts == ["nice place", "awful"]


def _tiny_model(where):
    """A one-epoch bundle at ``where``, trained by the CLI on ten short reviews: for the tests of predict's input."""
    train = where.parent / "train.csv"
    train.write_text('"1","fine food"\n"2","cold soup"\n' * 5)
    trained = cli_in_process("train", "--train", train, "--output", where, "--epochs", "1", "--no-progress")
    assert trained.returncode == 0, trained.stderr
    return where


@pytest.mark.parametrize("where", [1, 2])
def test_json_lines_nested_too_deeply_are_one_error_naming_the_line(tmp_path, where):
    # json's recursive decoder gives up a few thousand levels deep: training and predict stopped in a RecursionError
    # traceback
    deep = '{"label": 2, "text": ' + "[" * 100000 + "]" * 100000 + "}"
    p = tmp_path / "deep.jsonl"
    p.write_text("".join(line + "\n" for line in (['{"label": 1, "text": "fine"}'] * (where - 1) + [deep])))
    with pytest.raises(FastTextError, match=rf"deep.jsonl:{where}: not a JSON object json can read \(nested too "
                                            r"deeply\)"):
        read_labeled(str(p))
    _tiny_model(tmp_path / "m")
    got = cli_in_process("predict", "--model", tmp_path / "m", "--input", p)
    assert (got.returncode, got.stdout) == (2, "") and got.stderr.count("error:") == 1, got.stderr
    assert f"deep.jsonl:{where}: not a JSON object json can read" in got.stderr and "Traceback" not in got.stderr


def test_predict_of_a_line_of_json_nested_too_deeply_answers_it_not_a_traceback(tmp_path):
    # a first line of "[[[[..." thousands deep: the check for a JSON array stopped predict in a RecursionError traceback
    p = tmp_path / "deep.json"
    p.write_text("[" * 100000 + "]" * 100000 + "\n")
    _tiny_model(tmp_path / "m")
    got = cli_in_process("predict", "--model", tmp_path / "m", "--input", p)
    assert got.returncode == 0 and len(got.stdout.splitlines()) == 1, got.stderr


def test_predict_of_a_csv_whose_first_row_opens_a_quote_it_never_closes_names_the_row_not_no_data(tmp_path):
    # row 2 opens a quote the file never closes, and the rest of the file (over 16 Mi characters) is one field: the
    # look at the first records stopped at that field's error with the header alone, and the line said the file
    # had "no data rows (only a header row: label,text)"
    p = tmp_path / "big.csv"
    with open(p, "w") as f:
        f.write('label,text\n1,"great food, friendly staff\n')
        f.write("".join(f"2,review number {i} of a long export\n" for i in range(500000)))
    _tiny_model(tmp_path / "m")
    got = cli_in_process("predict", "--model", tmp_path / "m", "--input", p)
    assert (got.returncode, got.stdout) == (2, "") and got.stderr.count("\n") == 1, got.stderr
    assert "no data rows" not in got.stderr
    assert "big.csv:2: malformed CSV record starting at this line: a field longer than 16 Mi characters" in got.stderr


def test_a_lone_surrogate_escape_in_json_lines_is_the_replacement_character_not_a_traceback(tmp_path):
    # "\ud83d" without its other half (a tweet cut inside an emoji) is valid JSON but no character: training and
    # predict stopped in a UnicodeEncodeError traceback ("surrogates not allowed")
    p = tmp_path / "tweets.jsonl"
    p.write_text("".join('{"label": %d, "text": "cut \\ud83d here %d", "emoji": "\\ud83d\\ude00"}\n' % (i % 2 + 1, i)
                         for i in range(10)))
    data = read_labeled(str(p), __import__("fasttext_lib.data", fromlist=["Columns"]).Columns("label", ("text", "emoji")))
    assert data.texts[3] == "cut \ufffd here 3 \U0001F600"
    got = cli_in_process("train", "--train", p, "--output", tmp_path / "m", "--epochs", "1", "--no-progress")
    assert got.returncode == 0, got.stderr
    got = cli_in_process("predict", "--model", tmp_path / "m", "--input", p)
    assert got.returncode == 0 and len(got.stdout.splitlines()) == 10, got.stderr


def test_a_tsv_whose_first_document_is_longer_than_128_kib_is_read(tmp_path):
    # the csv module's default field limit (128 KiB) on line 1: its error was taken for a lone \r's, and the TSV
    # refused as an old Mac file
    long_text = " ".join(f"word{i % 977}" for i in range(30000))  # ~200 KB
    p = tmp_path / "docs.tsv"
    p.write_text(f"2\t{long_text}\n1\tcold soup\n2\tnice place\n")
    before = csv.field_size_limit(128 << 10)  # the csv module's default, as in a fresh process (others raise it)
    try:
        data = read_labeled(str(p))
    finally:
        csv.field_size_limit(before)
    assert data.labels == ["2", "1", "2"] and data.texts[0] == long_text


@pytest.mark.parametrize("shape", ["ids beside the class", "a number key among the text keys"])
def test_json_lines_whose_text_keys_hold_ids_are_refused_in_words_of_keys(tmp_path, shape):
    # the check of a table's text columns spoke of JSON Lines as of a CSV: "the header names the class column ...",
    # "column 2 holds only whole numbers", and showed pd.read_csv(path).iloc[...].to_csv(...), none of which the file has
    import json

    p = tmp_path / "labels.jsonl"
    with open(p, "w") as f:
        for i in range(60):
            row = {"stars": 1 + i % 2, "review_id": f"r{i}x{7 * i}"} if shape.startswith("ids") else \
                {"stars": 1 + i % 2, "title": 1000 + 3 * i, "text": f"great food {i}"}
            f.write(json.dumps(row) + "\n")
    got = cli_in_process("train", "--train", p, "--output", tmp_path / "m", "--epochs", "1", "--no-progress")
    assert got.returncode == 2 and got.stderr.count("error:") == 1 and not (tmp_path / "m").exists(), got.stderr
    message = got.stderr.strip()
    for csv_word in ("header", "column", " row", "read_csv", "to_csv"):
        assert csv_word not in message.replace("--text-column", "").replace("text_column", ""), message  # (flag names)
    if shape.startswith("ids"):
        assert "its objects' keys name the class key (stars) beside one other key, 'review_id', which over the " \
               "first 51 objects holds one token per object" in message and "name the key text" in message, message
    else:
        assert "not every key beside the class is text: over the first 51 objects, key 'title' holds only whole " \
               "numbers ('1000', ...)" in message, message
        assert "pd.read_json(path, lines=True)[['stars', 'text']].to_json(new_path, orient='records', lines=True)" \
               in message, message
        # what the message says to do reads the file
        got = cli_in_process("train", "--train", p, "--text-column", "text", "--output", tmp_path / "m", "--epochs",
                             "1", "--no-progress")
        assert got.returncode == 0, got.stderr
    # a CSV of the same is still spoken of in a CSV's words
    rows = [json.loads(line) for line in open(p)]
    (tmp_path / "labels.csv").write_text(",".join(rows[0]) + "\n" + "".join(
        ",".join(str(v) for v in r.values()) + "\n" for r in rows))
    got = cli_in_process("train", "--train", tmp_path / "labels.csv", "--output", tmp_path / "c", "--epochs", "1",
                         "--no-progress")
    assert got.returncode == 2 and ("the header names the class column" in got.stderr
                                    or "column 2 holds only whole numbers" in got.stderr), got.stderr


def test_json_lines_with_an_integer_of_more_digits_than_python_converts_are_read(tmp_path):
    # an id of 5,000 digits (Python converts at most 4,300 to int): the first line was taken for no JSON, so predict
    # answered each line as a review, braces, keys and digits as words, and training refused the line
    huge = "1" * 5000
    p = tmp_path / "ids.jsonl"
    p.write_text(f'{{"label": 2, "text": "nice place", "id": {huge}}}\n' + '{"label": 1, "text": "cold soup", "id": 7}\n' * 9)
    data = read_labeled(str(p))
    assert data.labels[:2] == ["2", "1"] and data.texts[:2] == ["nice place", "cold soup"]
    _tiny_model(tmp_path / "m")
    got = cli_in_process("predict", "--model", tmp_path / "m", "--input", p)
    assert got.returncode == 0 and len(got.stdout.splitlines()) == 10, got.stderr
    assert "id" not in got.stderr or "left out" in got.stderr  # the id key is not read as text


@pytest.mark.parametrize("data, said", [
    (None, r"stdin: is a tar archive; extract the file from it first and pipe that in \(tar -xOf ARCHIVE FILE \|"),
    ("reviews, with a BOM\n".encode("utf-16"), r"stdin:1: .* UTF-16 text; convert it to UTF-8 first, e.g\. pipe it "
                                               r"through iconv -f UTF-16 -t UTF-8"),
    ("caf\xe9 au lait, tr\xe8s bon\n".encode("cp1252"), r"stdin:1: not UTF-8 text .* pipe it through iconv -f CP1252 "
                                                        r"-t UTF-8"),
])
def test_input_piped_in_that_must_be_converted_is_told_a_pipe_not_a_file_named_stdin(tmp_path, data, said):
    # predict's reviews on stdin: the hints named a file "stdin" (tar -xf stdin, iconv ... stdin > new.csv)
    if data is None:
        with tarfile.open(tmp_path / "a.tar", "w") as tar:
            (tmp_path / "reviews.txt").write_text("great food\n")
            tar.add(tmp_path / "reviews.txt", arcname="reviews.txt")
        data = (tmp_path / "a.tar").read_bytes()
    _tiny_model(tmp_path / "m")
    got = cli_in_process("predict", "--model", tmp_path / "m", input=data)
    assert got.returncode == 2 and got.stderr.count("error:") == 1 and "Traceback" not in got.stderr, got.stderr
    assert re.search(said, got.stderr), got.stderr
    assert " stdin " not in got.stderr.replace("stdin:", "") and "stdin >" not in got.stderr


def test_multi_label_lines_say_how_to_train_on_them(tmp_path):
    # fastText's cooking tutorial (several __label__ words a line): the error said only that one label is supported
    lines = ["__label__sauce __label__cheese How much does potato starch affect a cheese sauce recipe?",
             "__label__baking How to make bread rise"]
    p = tmp_path / "cooking.train"
    p.write_text("\n".join(lines * 10) + "\n")
    with pytest.raises(FastTextError, match=r"cooking\.train:1: line has 2 labels; .* write one line per label and "
                                            r"text .* keep each line's first label: perl ") as refused:
        read_labeled(str(p))
    _run_the_first_label_command(refused.value, p, tmp_path / "single.train")  # the command it gives works
    data = read_labeled(str(tmp_path / "single.train"))
    assert data.labels[:2] == ["sauce", "baking"] and data.texts[0] == "How much does potato starch affect a cheese sauce recipe?"


@pytest.mark.parametrize("data, command", [
    (zstd_frame(b"junk"), "zstd -d reviews.zst"),
    ("reviews, with a BOM\n".encode("utf-16"), "iconv -f UTF-16 -t UTF-8 reviews.zst > new.csv"),
])
def test_an_s3_object_to_convert_first_is_told_to_be_copied_down(s3_bucket, data, command):
    # the hints named the object's file name as if it were local ("zstd -d reviews.zst": no such file here)
    import boto3

    uri = f"{s3_bucket}/in/reviews.zst"
    bucket, key = uri[len("s3://"):].split("/", 1)
    boto3.client("s3").put_object(Bucket=bucket, Key=key, Body=data)
    with pytest.raises(FastTextError) as refused:
        read_labeled(uri)
    assert f"aws s3 cp {uri} . && {command}" in str(refused.value), str(refused.value)


BOM = "\ufeff"


@pytest.mark.parametrize("joined", [
    f"label,text\n1,good food\n{BOM}label,text\n2,bad food\n",  # (the second file's header too)
    f"1,good food\n{BOM}2,bad food\n",
    f"__label__1 good food\n{BOM}__label__2 bad food\n",
], ids=["csv with its header", "csv", "fasttext"])
def test_a_byte_order_mark_starting_a_line_of_files_joined_with_cat_changes_nothing(tmp_path, joined):
    # Windows files joined with cat: the second one's BOM starts a line in the middle. Its class was '\ufeff2', a
    # class that printed as 2 (CSV: trained silently as a third class), or its line had "no __label__ prefix"
    with_bom, without = tmp_path / "joined.txt", tmp_path / "plain.txt"
    with_bom.write_text(joined, encoding="utf-8")
    without.write_text(joined.replace(BOM, ""), encoding="utf-8")
    data, expected = read_labeled(str(with_bom)), read_labeled(str(without))
    assert (data.labels, data.texts) == (expected.labels, expected.texts)
    assert set(data.labels) >= {"1", "2"} and BOM not in "".join(data.labels)


def test_predict_reads_a_byte_order_mark_starting_a_line_as_no_part_of_its_label_word(tmp_path):
    # predict of fastText-format lines drops each line's __label__ word; after a BOM it was read as a word of the
    # review, so the line's answer differed from the same line's without it
    model = _tiny_model(tmp_path / "m")
    plain, joined = tmp_path / "plain.txt", tmp_path / "joined.txt"
    plain.write_text("__label__1 fine food\n__label__2 cold soup\n", encoding="utf-8")
    joined.write_text(f"__label__1 fine food\n{BOM}__label__2 cold soup\n", encoding="utf-8")
    expected = cli_in_process("predict", "--model", model, "--input", plain, "--k", "-1")
    got = cli_in_process("predict", "--model", model, "--input", joined, "--k", "-1")
    assert got.returncode == 0 and got.stdout == expected.stdout and expected.returncode == 0, got.stderr


@pytest.mark.parametrize("name, body, where, how", [
    # pandas writes a missing class (NaN) as an empty field; Hugging Face's to_json writes null
    ("train.csv", "label,text\npositive,great food\n,cold soup\nnegative,slow service\n", 3, "df.dropna(subset="),
    ("train.csv", "text,label\ngreat food,positive\ncold soup,\nslow service,negative\n", 3, "df.dropna(subset="),
    ("train.tsv", "label\ttext\npositive\tgreat food\n \tcold soup\nnegative\tslow service\n", 3, "df.dropna(subset="),
    ("train.jsonl", '{"text": "great food", "label": 1}\n{"text": "cold soup", "label": null}\n', 2,
     "df.dropna(subset="),
])
def test_a_record_without_a_class_is_one_line_that_names_it_and_how_to_drop_such_rows(tmp_path, name, body, where,
                                                                                        how):
    """A row whose class is missing (a label not yet given, pandas' NaN written as an empty field, JSON's null) was
    refused as "CSV row has an empty class column" (or "this object's class ('label') is empty") with no way on, where
    the same frame passed to the Python API is told to drop such rows (df.dropna)."""
    path = tmp_path / name
    path.write_text(body)
    with pytest.raises(FastTextError, match=rf"{name}:{where}: (CSV row has an empty class column|this object's "
                                                             r"class \('label'\) is empty)") as info:
        read_labeled(str(path))
    assert how in str(info.value) and "\n" not in str(info.value)


def test_a_tsv_row_wider_than_its_header_names_a_tab_not_a_comma(tmp_path):
    """A tab typed inside a TSV's unquoted text makes its row one field wider than the header: the error asked about
    "a comma in an unquoted text", which a TSV holds without harm, sending the user looking for the wrong thing."""
    path = tmp_path / "train.tsv"
    path.write_text("text\tlabel\ngreat food\tpositive\ncold\tsoup\tnegative\nslow service\tnegative\n")
    with pytest.raises(FastTextError, match=r"train\.tsv:3: malformed CSV row: 3 column\(s\) where the header row has 2 "
                                            r"\(a tab in an unquoted text\? quote the field") as info:
        read_labeled(str(path))
    assert "comma" not in str(info.value)
    path.write_text("text,label\ngreat food,positive\ncold, soup,negative\nslow service,negative\n")
    with pytest.raises(FastTextError, match=r"a comma in an unquoted text\? quote the field"):
        read_labeled(str(path))


def test_json_lines_whose_keys_name_two_class_keys_say_so(tmp_path):
    """{"id": ..., "rating": 5, "label": "positive", "text": ...} was refused as naming "no class key training
    knows", sending the user looking for a name that was there twice; the CSV of the same table says it names 2."""
    path = tmp_path / "reviews.jsonl"
    path.write_text('{"id": 1, "rating": 5, "label": "positive", "text": "great food"}\n'
                    '{"id": 2, "rating": 1, "label": "negative", "text": "cold soup"}\n')
    with pytest.raises(FastTextError, match=r"reviews\.jsonl: its objects' keys \(id,rating,label,text\) name 2 class "
                                            r"keys \(rating, label\): one is the class; say which to read: "
                                            r"--label-column NAME"):
        read_labeled(str(path))


@pytest.mark.parametrize("name, body", [
    ("train.tsv", "text\tlabel\ngreat food\tpositive\ncold soup\nslow service\tnegative\n"),
    ("train.csv", "text,label\ngreat food,positive\ncold soup\nslow service,negative\n"),
])
def test_a_row_narrower_than_its_header_is_not_blamed_on_a_separator_typed_in_a_text(tmp_path, name, body):
    """A row of fewer fields than the header (a field left out, or a text broken over lines unquoted) asked about "a
    tab (a comma) in an unquoted text", which makes a row wider, never narrower."""
    path = tmp_path / name
    path.write_text(body)
    with pytest.raises(FastTextError, match=rf"{name}:3: malformed CSV row: 1 column\(s\) where the header row has 2 "
                                            r"\(a field left out, or a line break in an unquoted text\?") as info:
        read_labeled(str(path))
    assert "a tab" not in str(info.value) and "a comma" not in str(info.value)


def test_predict_names_a_tab_in_a_tsv_of_text_columns_as_training_does(tmp_path):
    """predict reads a TSV whose header names two class columns (id, rating, label, review) for its text columns
    (columns.table_texts), whose error still asked about "a comma in an unquoted text"."""
    from fasttext_lib.predict_input import documents

    path = tmp_path / "to_label.tsv"
    path.write_text("id\trating\tlabel\treview\n1\t5\tpos\tloved it\n2\t3\tneg\tcold\tsoup\n3\t4\tpos\tok\n")
    with pytest.raises(FastTextError, match=r"to_label\.tsv:3: malformed CSV row: 5 column\(s\) where the header row "
                                            r"has 4 \(a tab in an unquoted text\? quote the field") as info:
        with documents(str(path), "auto", {"negative", "positive"}, lambda line: None) as texts:
            list(texts)
    assert "comma" not in str(info.value)


@pytest.mark.parametrize("name, content, drop", [
    ("train.csv", 'sentiment,review\npos,good\nneg,""\n', "pandas: df[df['review'].fillna('').str.strip() != '']"),
    ("train.tsv", "stars\tbody\n1\tgood\n2\t  \n", "pandas: df[df['body'].fillna('').str.strip() != '']"),
    ("train.csv", 'label,title,body\n1,a,good\n2,"",""\n',
     "pandas: df[(df['title'].fillna('') + df['body'].fillna('')).str.strip() != '']"),
    ("train.jsonl", '{"rating": 1, "content": "good"}\n{"rating": 2, "content": null}\n',
     "pandas: df[df['content'].fillna('').str.strip() != '']"),
    ("train.csv", '1,good\n2,""\n', "pandas: df[df['text'].fillna('').str.strip() != '']"),  # (no names)
    ("train.txt", "__label__pos good\n__label__neg\n", "lines of a label alone"),
])
def test_the_note_of_documents_without_words_names_the_files_own_text_column(tmp_path, name, content, drop):
    """The note's way to drop documents without words said df['text'] whatever the file's text column (a header's
    'review', a JSON Lines key 'content'), and offered pandas for fastText-format data, which has no column: it names
    the column (or columns) the text was read from, and for fastText format the lines to drop."""
    path = tmp_path / name
    path.write_text(content)
    notes = []
    read_labeled(str(path), note=notes.append)
    said = [n for n in notes if "no words" in n]
    assert len(said) == 1 and said[0].endswith(f"drop it first ({drop})"), notes
    assert name != "train.txt" or "df[" not in said[0], said


def _run_the_first_label_command(refusal, path, new_path):
    """The command the multi-label refusal gives (``... FILE > NEW_FILE``), run by a shell as it is printed."""
    import shlex
    import subprocess

    command = str(refusal).split("keep each line's first label: ", 1)[1]
    assert command.endswith(" FILE > NEW_FILE"), command
    command = command[:-len("FILE > NEW_FILE")] + f"{shlex.quote(str(path))} > {shlex.quote(str(new_path))}"
    subprocess.run(command, shell=True, check=True, env={**os.environ, "PERL_UNICODE": "SDA", "LC_ALL": "C"})


@pytest.mark.parametrize("separator", ["\u00a0", "\x1c", "\u2003", " \t "])
def test_the_first_label_command_splits_words_where_the_reader_does(tmp_path, separator):
    """Two labels a no-break space apart (text pasted from a web page), an information separator or a wide space,
    and a first label behind Notepad's byte order mark: the reader splits words at every one of them and skips the
    mark, the awk given split at spaces and tabs only, so the lines kept their two labels, and the file was refused
    again after the command was run. (PERL_UNICODE is set in the shell to show that it does not matter: -C0.)"""
    lines = [f"__label__sauce{separator}__label__cheese How much starch?",
             f"Dull knives __label__knives{separator}__label__safety", "__label__baking Bread"]
    p = tmp_path / "cooking.train"
    p.write_bytes(("\ufeff" + "\n".join(lines * 5) + "\n").encode())
    with pytest.raises(FastTextError, match="line has 2 labels") as refused:
        read_labeled(str(p))
    _run_the_first_label_command(refused.value, p, tmp_path / "single.train")
    data = read_labeled(str(tmp_path / "single.train"))
    assert data.labels[:3] == ["sauce", "knives", "baking"]
    assert data.texts[:3] == ["How much starch?", "Dull knives", "Bread"]


def test_the_first_label_command_drops_every_byte_order_mark_the_reader_skips(tmp_path):
    """The reader skips all the byte order marks a line starts with (lines.DecodedLines: text written with
    utf-8-sig after it was read with its mark, or files joined with cat); the command dropped one, so behind two the
    first label was a word to it, the second kept, and the mark left was skipped by the reader: two labels again."""
    p = tmp_path / "cooking.train"
    lines = ["\ufeff\ufeff__label__sauce __label__cheese How much starch?", "__label__baking Bread",
             "\ufeff\ufeff__label__knives __label__safety Dull knives"]
    p.write_bytes(("\n".join(lines) + "\n").encode())
    with pytest.raises(FastTextError, match="line has 2 labels") as refused:
        read_labeled(str(p))
    _run_the_first_label_command(refused.value, p, tmp_path / "single.train")
    data = read_labeled(str(tmp_path / "single.train"))
    assert data.labels == ["sauce", "baking", "knives"]
    assert data.texts == ["How much starch?", "Bread", "Dull knives"]


def test_multi_label_lines_with_labels_after_the_text_get_a_command_that_works_there_too(tmp_path):
    # fastText takes __label__ words anywhere on a line: the sed given (labels at the line's start) left these lines
    # unchanged, and the file was refused again
    lines = ["How much does potato starch affect a cheese sauce recipe? __label__sauce __label__cheese",
             "__label__baking How to make bread rise __label__bread", "Dangers of a dull knife __label__knives"]
    p = tmp_path / "cooking.train"
    p.write_text("\n".join(lines * 10) + "\n")
    with pytest.raises(FastTextError, match=r"cooking\.train:1: line has 2 labels; .* keep each line's first label: "
                                            r"perl ") as refused:
        read_labeled(str(p))
    _run_the_first_label_command(refused.value, p, tmp_path / "single.train")
    data = read_labeled(str(tmp_path / "single.train"))
    assert data.labels[:3] == ["sauce", "baking", "knives"]
    assert data.texts[:3] == ["How much does potato starch affect a cheese sauce recipe?", "How to make bread rise",
                              "Dangers of a dull knife"]
