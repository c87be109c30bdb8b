"""The readers give what they gave before they were made faster: every document, its class, its text and its line, every
note and every error, on hostile CSV and TSV files (quoted fields with line breaks, headers repeated in other capitals,
pandas' index column, semicolons, blank lines, rows of empty fields, BOMs, Excel's ``sep=`` line), read for training
(``iter_examples``, ``read_labeled``, ``read_counted``) and for predict (``examples_of_lines(predicting=True)``).

tests/data/reading_unchanged.json holds the outputs of commit 9fe21d8, before the repeated-header filter went into
the reading loop and read_labeled / read_counted shared their loop over the files. A change to how files are read
changes that file on purpose: regenerate it with ``python tests/test_reading_unchanged.py`` and review its diff.
"""
import json
import os

import pytest

from fasttext_lib import native_features as nf
from fasttext_lib.data import examples_of_lines, iter_examples, read_counted, read_labeled
from fasttext_lib.errors import FastTextError

HERE = os.path.dirname(os.path.abspath(__file__))

GOLDEN = os.path.join(HERE, "data", "reading_unchanged.json")

_ROWS = ['positive,great food', 'negative,"cold soup, slow ""service"""', 'positive,"two\nlines"',
         'negative,a literal\\nbreak', 'positive,  spaced  ']
_BODY = "\n".join(_ROWS) + "\n"
# past the look-ahead (columns.HEADER_LOOKAHEAD records), where the reading loop itself meets the repeats
_LONG = _BODY * 11
_LONG_LAST = "".join(f"{text},{label}\n" for label, text in (r.split(",", 1) for r in _ROWS if '"' not in r)) * 19
_LONG_TSV = "".join(f"{label}\t{text}\n" for label, text in (r.split(",", 1) for r in _ROWS if '"' not in r)) * 19

# name -> (file text, format); each is read for training and for predict
CASES = {
    "zhang": ('"2","the food ""rocked""\\nreally"\n\n"1","multi\nline, quoted"\n   \n"2","x"\n"1",""\n', "auto"),
    "zhang-first-row-again": ('"2","great food"\n"1","cold"\n"2","great food"\n"1","slow"\n"2","great food"\n', "auto"),
    "zhang-bom-crlf": ('\ufeff"2","great"\r\n"1","cold"\r\n\r\n"2","fine"\r\n', "auto"),
    "header-repeats-in-capitals": ("label,text\n" + _BODY + "Label,Text\n" + _LONG + "\n\nLABEL , text\n" + _BODY
                                   + "\ufeffLabel,TEXT \n" + _LONG + "label,text\n" + _BODY, "auto"),
    "header-repeats-only-past-the-look-ahead": ("label,text\n" + _LONG + "LABEL,Text\n" + _BODY + " label,TEXT\n"
                                                + _BODY, "auto"),
    "header-repeat-inside-look-ahead": ("label,text\npositive,a\nLABEL,TEXT\nnegative,b\nlabel,text\npositive,c\n"
                                        + _BODY * 3, "auto"),
    "row-starts-as-header": ("label,text\npositive,great food\nnegative,cold soup\nLabel,Text of a review\n"
                             "label,text\npositive,fine\n" + _LONG + "Label,Text of a review\nLABEL,TEXT\nlabel,text,more\nlabel\n",
                             "auto"),
    "class-values-as-long-as-the-header": ("label,text\nLABEL,x\nlabel,y\nAbcde,z\nlabel,text\nlabel,w\n" + _LONG
                                           + "LABEL,y\nlabels,x\nLabel,Text\nlabel ,text\n", "auto"),
    "quoted-header-repeated": ('"label","text"\n"positive","a, b"\n"negative","c"\n"LABEL","TEXT"\n"positive","d"\n'
                               + _LONG + '"Label","Text"\n' + _BODY, "auto"),
    "padded-header-repeated": (" label , text \npositive,a\nnegative,b\n  LABEL,TEXT\t\npositive,c\n" + _LONG
                               + "\ufeff  label  ,  text\n" + _BODY, "auto"),
    "class-last": ("review,sentiment\ngreat food,positive\ncold soup,negative\nReview,Sentiment\nfine,positive\n"
                   "slow,negative\nok,positive\n" + _LONG_LAST + "REVIEW,sentiment\n" + _LONG_LAST + "Review,Sentiment,x\n", "auto"),
    "three-columns": ("label,title,body\npositive,Great,the food\nnegative,Cold,\"the soup, cold\"\n"
                      "LABEL,TITLE,BODY\npositive,Fine,\"ok\nfine\"\nnegative,Slow,slow\n"
                      + "positive,a,b\n" * 60 + "Label,Title,Body\nnegative,c,d\n", "auto"),
    "index-column": (",label,text\n0,positive,great\n1,negative,cold\n2,positive,fine\n,LABEL,Text\n0,negative,slow\n"
                     "1,positive,ok\n2,negative,bad\n3,positive,\"a\nb\"\n"
                     + "".join(f"{i},positive,x{i}\n" for i in range(4, 70)) + ",Label,TEXT\n70,negative,y\n", "auto"),
    "index-column-repeat-in-look-ahead": (",label,text\n0,positive,a\n,label,text\n0,negative,b\n1,positive,c\n"
                                          "2,negative,d\n3,positive,e\n", "auto"),
    "index-column-empty-fields": (",label,text\n0,positive,a\n1,negative,b\n2,positive,c\n3,,\n4,negative,d\n", "auto"),
    "tsv-header-repeats": ("label\ttext\npositive\tgreat food\nnegative\t\"cold\tsoup\"\nLabel\tText\npositive\tfine\n"
                           "negative\tslow\n" + _LONG_TSV + "LABEL\tTEXT\n" + _LONG_TSV, "auto"),
    "excel-sep-bom-crlf": ("\ufeffsep=,\r\nsentiment,review\r\npositive,great\r\nnegative,cold\r\n\ufeffsep=,\r\n"
                           "Sentiment,Review\r\npositive,fine\r\nnegative,slow\r\n" + _LONG.replace("\n", "\r\n")
                           + "\ufeffsep=,\r\n\ufeffSENTIMENT,review\r\npositive,last\r\n", "auto"),
    "empty-lines-and-empty-fields": ("label,text\n\npositive,a\n,\n  \nnegative,b\n,,\n\npositive,c\nnegative,d\n\n"
                                     + _LONG + ",\n\n ,  \nLABEL,TEXT\n,,\npositive,e\n", "auto"),
    "semicolons": ("label;text\npositive;great\nnegative;cold\n", "auto"),
    "semicolons-as-csv": ("label;text\npositive;great\nnegative;cold\n", "csv"),
    "one-text-column": ("review\ngreat food\ncold soup\nreview\nfine\n", "auto"),
    "text-columns-only": ("title,body\nGreat,the food\nCold,the soup\nTITLE,BODY\nFine,ok\nSlow,slow\n" + _LONG
                          + "Title,Body\nlast,one\n", "auto"),
    "width-differs-from-header": ("text,label\ngreat,positive\ncold,negative\nfine,positive,extra\n", "auto"),
    "empty-class": ("label,text\npositive,a\n ,b\n", "auto"),
    "unclosed-quote": ('"2","great\n"1","cold\n', "auto"),
    "header-only": ("label,text\n", "auto"),
    "words-as-classes": ("positive,great\nnegative,cold\npositive,fine\nnegative,slow\npositive,ok\n", "csv"),
}

# read_labeled / read_counted over several of them at once (the classes and class_from over every file)
FILE_SETS = [["zhang", "zhang-bom-crlf"], ["header-repeats-in-capitals", "class-last"],
             ["index-column", "three-columns", "zhang"], ["zhang", "header-only"], ["zhang", "semicolons"]]


def _scrub(text, root):
    return text.replace(str(root), "<dir>")


def _training(path, fmt, root):
    notes, found, examples = [], {}, []
    try:
        for label, text in iter_examples(path, fmt, note=notes.append, found=found):
            examples.append([label, text, found.get("line")])
    except FastTextError as exc:
        examples.append(["error", _scrub(str(exc), root)])
    return {"examples": examples, "notes": [_scrub(n, root) for n in notes], "class_from": found.get("class_from")}


def _predicting(path, fmt, root):
    notes, found, examples = [], {}, []
    with open(path, encoding="utf-8", newline="") as f:
        lines = f.read().lstrip("\ufeff").splitlines(keepends=True)
    try:
        for label, text in examples_of_lines(lines, "input.csv", "tsv" if "\t" in lines[0] else "csv",
                                             predicting=True, note=notes.append, found=found):
            examples.append([label, text, found.get("line")])
    except FastTextError as exc:
        examples.append(["error", _scrub(str(exc), root)])
    return {"examples": examples, "notes": [_scrub(n, root) for n in notes], "class_from": found.get("class_from")}


def _whole_reads(paths, root):
    out = {}
    reads = [("read_labeled", read_labeled), ("read_counted", read_counted)]
    reads += [(f"read_labeled-limit-{n}", lambda uri, note, n=n: read_labeled(uri, limit=n, note=note)) for n in (1, 6)]
    for name, read in reads:
        notes = []
        try:
            data = read(paths if len(paths) > 1 else paths[0], note=notes.append)
            got = {"labels": data.labels, "class_from": _scrub(json.dumps(data.class_from), root)}
            if name == "read_counted":
                got["sample"] = data.sample
                got["lengths"] = data.counts.lengths.tolist()
            else:
                got["texts"], got["names"] = data.texts, data.names
        except FastTextError as exc:
            got = {"error": _scrub(str(exc), root)}
        out[name] = dict(got, notes=[_scrub(n, root) for n in notes])
    return out


def outputs(root):
    """What every case reads as, files written under ``root``."""
    paths = {}
    for name, (text, _) in CASES.items():
        paths[name] = os.path.join(str(root), f"{name}.csv")
        with open(paths[name], "w", encoding="utf-8", newline="") as f:
            f.write(text)
    got = {}
    for name, (_, fmt) in CASES.items():
        got[name] = {"training": _training(paths[name], fmt, root), "predicting": _predicting(paths[name], fmt, root)}
    for names in FILE_SETS:
        got["+".join(names)] = _whole_reads([paths[n] for n in names], root)
    return got


@pytest.fixture(params=["native", "python"])
def route(request, monkeypatch):
    if request.param == "python":
        monkeypatch.setenv(nf.ENV_SWITCH, "0")
    return request.param


def test_every_hostile_file_reads_as_before(tmp_path, route):
    with open(GOLDEN, encoding="utf-8") as f:
        golden = json.load(f)
    got = json.loads(json.dumps(outputs(tmp_path)))  # (tuples as lists, as the file holds them)
    assert sorted(got) == sorted(golden)
    for case in golden:
        assert got[case] == golden[case], case


def test_the_cases_meet_what_they_are_meant_to():
    """The golden file exercises the paths it is there for: skipped repeats, kept first rows, errors, notes."""
    with open(GOLDEN, encoding="utf-8") as f:
        golden = json.load(f)
    repeats = [c for c in golden if any("repeats the header row" in n for n in golden[c].get("training", {}).get("notes", []))]
    assert {"header-repeats-in-capitals", "index-column", "tsv-header-repeats", "excel-sep-bom-crlf",
            "quoted-header-repeated", "padded-header-repeated", "class-last", "three-columns"} <= set(repeats)
    assert [e[0] for e in golden["zhang-first-row-again"]["training"]["examples"]].count("2") == 3
    assert golden["semicolons"]["training"]["examples"][-1][0] == "error"
    assert any(e[0] is None for e in golden["text-columns-only"]["predicting"]["examples"])


if __name__ == "__main__":  # regenerate the golden file (review its diff: every change is a change of reading)
    import tempfile

    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.dirname(GOLDEN), exist_ok=True)
        with open(GOLDEN, "w", encoding="utf-8") as f:
            json.dump(outputs(root), f, ensure_ascii=False, indent=1, sort_keys=True)
            f.write("\n")
    print(GOLDEN)
