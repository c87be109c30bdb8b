"""``python -m fasttext_lib`` : train, evaluate, predict, and make data.

    train    --train PATH --validation PATH --output DIR_OR_S3 [--overwrite] [--epochs N] [--lr X]
             [--optimizer sgd|adam] [--emsize N] [--ngrams N] [--batch-size N]
             [--ctx auto|cpu|gpu|gpu:N|gpu:0,1] [--seed N] [--checkpoint-dir DIR_OR_S3] ...
             [--autotune-validation PATH [--autotune-duration SECONDS] [--autotune-trials CSV] [--autotune-no-refit]]
             [--label-names FILE|DATASET|1=negative,2=positive|none]
    evaluate --model DIR_OR_S3 --data PATH        -> the confusion matrix and per-class precision / recall / F1,
                                                     then (last stdout line) {"accuracy", "loss", "n",
                                                     "confusion_matrix", "per_class"}
    predict  --model DIR_OR_S3 [--input PATH|-]   -> one {"label", "probability", "class_id"} JSON per line;
             [--k K] [--threshold P]                 with --k / --threshold a JSON list of them per line;
             [--format auto|text|csv]                labeled CSV (a Zhang et al. test file): one per record
    sample   --output DIR_OR_S3 [--overwrite]     (the built-in sample: real English review sentences)
    synthetic --output DIR_OR_S3 [--train-docs N] [--test-docs N] [--classes N] [--seed N] [--overwrite]
                                                  (Yelp-shaped synthetic text, any size)
    prepare  --dataset NAME --output DIR_OR_S3 [--overwrite]   (download a Zhang et al. dataset, write .train/.test
                                                  and the classes' names, .classes.txt; a rerun writing the same bytes
                                                  succeeds, files there that differ are kept unless --overwrite)
    export-vectors --model DIR_OR_S3 --output FILE.vec [--overwrite]   (the learned word vectors, fastText's .vec)
    import-folders --input DIR --output FILE.csv [--skip FOLDER] [--encoding latin-1] [--overwrite]
                                                  (class folders, one document per file, as IMDB's aclImdb/train/pos
                                                  and neg: one label,text CSV that train reads)

``train --pretrained-vectors FILE.vec`` starts the rows of the words it shares with the vocabulary from
its vectors (fastText's ``-pretrainedVectors``); the file's start is checked before the training data, and the
file is read (and checked whole) once the vocabulary is known, keeping only the vocabulary's rows.

Every user error prints one ``error: ...`` line on stderr and exits with status 2.
"""
import argparse
import atexit
import contextlib
import functools
import itertools
import json
import logging
import math
import os
import signal
import sys
import time
from typing import NamedTuple

from .errors import FastTextError, refuse_standard_input
from .stops import note_what_a_stop_came_after, stop_at_once_on_signals, tell_a_late_stop


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


class _Once:
    """An option that takes one value (argparse's store, store_const, store_true, store_false) given twice with
    different values is a usage error: argparse kept the last, so ``train --train a --train b`` trained on b without a
    word. The same value twice is no conflict. (Options meant to repeat, ``action="append"``, are not of this kind.)
    ``compared_as`` (an ``add_argument`` keyword): what a value (as ``type`` read it) means where the value is read
    later (``--label-names``: label_names.from_option), so two that mean the same are the same value."""

    def __init__(self, *args, compared_as=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.compared_as = compared_as

    def __call__(self, parser, namespace, values, option_string=None):
        value = self.const if isinstance(self, argparse._StoreConstAction) else values
        typed = " ".join(parser.typed)  # (as the user wrote it: --lr 2, read as 2.0)
        given = (option_string, value, typed, self)
        earlier = parser.given_once.setdefault(self.dest, given)
        if not _same(earlier[1], value, self.compared_as):
            parser.error(_given_twice(earlier, given))
        super().__call__(parser, namespace, values, option_string)


def _same(first, second, compared_as=None):
    """Two values of one option read as the same; NaN as NaN (``--lr nan`` given once was "given twice, as nan and as
    nan", as NaN is unequal to itself; its refusal as a setting is TrainConfig's); or meaning the same (``compared_as``:
    only asked of two that differ, so that a value given once imports nothing more)."""
    if first == second or (first != first and second != second):
        return True
    return compared_as is not None and compared_as(first) == compared_as(second)


def label_names_meant(spec):
    """What a ``--label-names`` value means, as ``compared_as`` (label_names.option_meaning: ``none`` and ``None``,
    ``1=a,2=b`` and ``2=b, 1=a`` are one). (Imported when asked: the parser is built without the library.)"""
    from .label_names import option_meaning

    return option_meaning(spec)


def column_meant(name):
    """A ``--label-column`` value as its column is found in a header (columns.folded_name: ``Text`` and ``text`` are
    one), as ``compared_as``; None (no column named) as None."""
    from .columns import folded_name

    return None if name is None else folded_name(str(name).strip())


def _given_twice(earlier, later):
    """The usage error of one option set twice, differently: by one option string; by two spellings of one option
    (an abbreviation, ``--epoch 2 --epochs 3``: the option named, then each as typed); or by two options that set the
    same destination (``--x`` and ``--no-x``: each named with what it was given)."""
    import shlex

    (first, _, a, action), (second, _, b, other) = earlier, later
    if first == second:
        return f"{first} given twice, as {shlex.quote(a)} and as {shlex.quote(b)}: give it once"
    as_typed = [f"{option} {shlex.quote(typed)}" if typed else option for option, typed in ((first, a), (second, b))]
    if action is other:
        return f"{action.option_strings[-1]} given twice, as {as_typed[0]} and as {as_typed[1]}: give it once"
    return " and ".join(as_typed) + " both given: give one"


_ONCE_ACTIONS = {name: type(f"{cls.__name__}Once", (_Once, cls), {})
                 for name, cls in [("store", argparse._StoreAction), ("store_const", argparse._StoreConstAction),
                                   ("store_true", argparse._StoreTrueAction), ("store_false", argparse._StoreFalseAction)]}


class OnceParser(argparse.ArgumentParser):
    """argparse with a single-valued option given twice with different values refused (:class:`_Once`), by one
    spelling or two (an abbreviation; the training job's ``--batch-size`` and ``--batch_size``: sm_train), each named
    as typed. Subcommand parsers are made of the same class (argparse's default)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name, cls in _ONCE_ACTIONS.items():
            self.register("action", name, cls)
        self.register("action", None, _ONCE_ACTIONS["store"])  # (an add_argument without action=)
        self.given_once, self.typed = {}, []

    def parse_known_args(self, args=None, namespace=None):
        # destination -> (option string, value, as typed, action) of this parse (a subcommand's its own)
        self.given_once = {}
        return super().parse_known_args(args, namespace)

    def _get_option_tuples(self, option_string):
        """argparse's matches of an abbreviated long option (``--epoch`` for ``--epochs``; abbreviations are kept:
        fastText's own ``-epoch`` typed as ``--epoch`` is one users rely on), each naming the option it matched; the
        one match names it as typed, so that :class:`_Once` says ``as --epoch 2 and as --epochs 3`` (it said
        ``--epochs`` for both, as if typed twice). (Each match is ``(action, option string, ...)``.)"""
        matches = super()._get_option_tuples(option_string)
        if len(matches) == 1 and option_string.startswith(self.prefix_chars[0] * 2):
            matches = [(matches[0][0], option_string.partition("=")[0], *matches[0][2:])]
        return matches

    def _get_values(self, action, arg_strings):
        self.typed = arg_strings  # (the strings an option's value is read from, for _Once's message)
        return super()._get_values(action, arg_strings)


class UsageError(SystemExit):
    """A usage error (exit 2), its ``line`` said: main tells a cluster of it (one host's own command line)."""

    def __init__(self, line):
        super().__init__(2)
        self.line = line


class _Parser(OnceParser):
    """:class:`OnceParser` with a usage error as one ``error:`` line (exit 2) instead of a usage dump; ``--help`` as
    usual."""

    def error(self, message):
        from .errors import error_line

        line = error_line(f"{message} (see {self.prog} --help)")
        print(line, file=sys.stderr)
        raise UsageError(line)

    def print_help(self, file=None):
        """The help on stdout, as :func:`say` writes answers: argparse drops a failed write of its help, so
        ``--help > /dev/full`` wrote nothing and exited 0. A full disk is now one error line (exit 2), a closed
        pipe (``--help | head -1``) a quiet exit 141."""
        if file is not None or sys.stdout is None:  # (None: closed at start, >&-: nothing to write to, as before)
            return super().print_help(file)
        from .errors import error_line

        try:
            sys.stdout.write(self.format_help())
            sys.stdout.flush()
        except OSError as exc:
            failed = _stdout_failed(exc)
            if not isinstance(failed, StdoutClosed):
                print(error_line(failed), file=sys.stderr)
            sys.exit(getattr(failed, "exit_status", 2))


def _probability(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a probability between 0 and 1, got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a probability between 0 and 1, got {text}")
    return value


def _top_k(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1 and value != -1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, or -1 for every class; got {text!r}")
    return value


def _path_of(what):
    """An argparse type for a path option: an empty or blank value is a usage error. Taken as the option not given,
    ``--autotune-validation "$VAL"`` with VAL unset trained without any search and exited 0, and ``--validation``,
    ``--checkpoint-dir`` and ``--autotune-trials`` alike dropped what they were given for without a word (as
    ``--pretrained-vectors`` did: config.parse_file_option)."""
    def path(text):
        if not text.strip():
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return text

    return path


FILE, DIRECTORY = _path_of("a file name or s3:// URI"), _path_of("a directory or s3:// prefix")


FORMAT_HELP = ("auto (default): from the first line (__label__X text, a \"class\",\"text\" CSV row, a CSV header "
               "row such as label,text, a tab-separated line, or a JSON object: JSON Lines such as {\"stars\": 5, "
               "\"text\": ...}); fasttext; csv; tsv; jsonl")
PREDICT_CTX_HELP = "where to predict: cpu (default), gpu or gpu:N"


def add_column_arguments(parser):
    """``--label-column`` and ``--text-column``: which columns of a CSV file with a header row to read (a table with
    more than a class and a text, whose names training does not know: columns.Columns)."""
    parser.add_argument("--label-column", metavar="NAME", compared_as=column_meant,
                        help="the class column of a CSV or TSV with a header row, or the class key of JSON Lines "
                             "(default: the one column named as a class: label, sentiment, stars, rating, overall, ...)")
    parser.add_argument("--text-column", metavar="NAME", action="append",
                        help="a text column (or JSON Lines key), as --label-column; repeat it, or NAME,NAME, for "
                             "several (joined in this order). Default: the columns named as text (text, review, title, "
                             "reviewText, ...) and any other that holds prose; the rest (ids, counts, dates) are "
                             "left out, as a line on stderr says")


def chosen_format(args):
    """``args.format``, or the columns ``--label-column`` / ``--text-column`` name (columns.csv_columns)."""
    from .columns import csv_columns

    return csv_columns(args.format, args.label_column, args.text_column)


# formats.FORMATS and compact.CHOICES, written out: importing those modules to build the parser (storage, the column
# readers, the native features) made --help and every usage error a third slower (tests/test_cli.py keeps them equal)
FORMATS = ("auto", "fasttext", "csv", "tsv", "jsonl")
COMPACT_CHOICES = ("auto", "none", "float32", "float16", "int8", "int4")


def build_parser():
    from .config import add_config_arguments

    parser = _Parser(prog="python -m fasttext_lib", description="fastText text classification in MXNet Gluon")
    sub = parser.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train a model and write its bundle")
    t.add_argument("--train", required=True, help="training data, local or s3://: fastText format, CSV (Zhang et al. or with a header), TSV or JSON Lines "
                        "(docs/INPUT.md)")
    t.add_argument("--validation", type=FILE, help="validation data, scored after every epoch")
    t.add_argument("--output", required=True, help="bundle directory or s3:// prefix")
    t.add_argument("--overwrite", action="store_true",
                   help="replace a model bundle already at --output, and an --autotune-trials file already there "
                        "(default: refuse them, before any data is read)")
    t.add_argument("--format", default="auto", choices=FORMATS, help=FORMAT_HELP)
    t.add_argument("--checkpoint-dir", type=DIRECTORY, help="checkpoint every epoch here (directory or s3://) and resume from it")
    t.add_argument("--autotune-validation", metavar="PATH", type=FILE,
                   help="search lr, epochs, emsize, ngrams and batch size (with the optimizer) against this labeled data (their flags are "
                        "ignored; the others apply to every trial, --buckets as an upper bound) and train the chosen "
                        "setting again on --train and this data (see --autotune-no-refit): the start (the library's "
                        "settings for this data with bigrams at 10 epochs) unless a trial is significantly more "
                        "accurate on this data (fastText's -autotune-validation)")
    t.add_argument("--autotune-duration", type=str, metavar="SECONDS",
                   help="time budget of the search, final model included (default: 300); Ctrl-C stops the search "
                        "sooner, and the chosen setting of the trials completed is trained and saved (a 2nd Ctrl-C stops)")
    t.add_argument("--autotune-trials", metavar="CSV", type=FILE,
                   help="write the autotune trial table here (local or s3://; compressed if it ends in .gz, .bz2, .xz "
                        "or .lzma; an existing file is kept unless --overwrite)")
    t.add_argument("--autotune-no-refit", dest="autotune_refit", action="store_false", default=None,
                   help="keep the chosen trial's model, trained on --train only (fastText's way), instead of training the "
                        "chosen setting again on --train and the validation data together (the default, within the budget)")
    t.add_argument("--label-names", metavar="SPEC", compared_as=label_names_meant,
                   help="what the classes mean, stored in the bundle and shown in predictions: a file (local or s3://; "
                        "classes.txt lines, id=name lines or JSON), a known dataset (ag_news, dbpedia, ...), or "
                        "1=negative,2=positive; 'none': raw labels. Default: <stem>.classes.txt or classes.txt "
                        "beside --train, when there is one, else the names of an unpacked Zhang et al. archive's folder "
                        "(yelp_review_polarity_csv/)")
    t.add_argument("--compact", choices=COMPACT_CHOICES, default="auto",
                   help="store only the embedding rows training changed; the rest is rebuilt from the seed. float32: "
                        "exact; float16: half the size; int8 / int4: quantized per row, 1/4 / 1/8 of float32 (lossy: "
                        "see RESULTS.md section 4). auto (default): float32 when at most a quarter of the rows "
                        "changed (small data), else the full table (none)")
    add_column_arguments(t)
    add_config_arguments(t)  # --epochs, --lr, ... : one per TrainConfig field

    e = sub.add_parser("evaluate", help="score a bundle on labeled data")
    e.add_argument("--model", required=True, help="bundle directory or s3:// prefix")
    e.add_argument("--data", required=True, help="labeled data, local or s3://, in any format --train reads, labeled by "
                                                 "class id or by the names predictions show (positive)")
    e.add_argument("--format", default="auto", choices=FORMATS, help=FORMAT_HELP)
    add_column_arguments(e)
    e.add_argument("--ctx", default="cpu", help=PREDICT_CTX_HELP)

    p = sub.add_parser("predict",
                       help="label raw text, one document per line (or each record of a table: CSV, TSV, JSON Lines)")
    p.add_argument("--model", required=True, help="bundle directory or s3:// prefix")
    p.add_argument("--input", default="-", help="text file (local or s3://), or - for stdin (default: -)")
    p.add_argument("--ctx", default="cpu", help=PREDICT_CTX_HELP)
    p.add_argument("--format", default="auto", choices=["auto", "text", "csv"],
                   help="auto (default): labeled CSV, as training reads it (one answer per record, for its text "
                        "columns), when the first record is a CSV header row of column names or a row whose first "
                        "column is one of the model's classes (id or name) or a quoted number (\"2\",\"the text\": a Zhang et al. "
                        "test file) and at least half of the next 50 records are rows of the same kind (unquoted rows without a "
                        "header: 4 at least; one line such as positive,would buy again is a review); JSON Lines: each "
                        "object for its text keys; a TSV with a header row: each record for its text columns; a CSV of one "
                        "column with a quoted review over several lines (pandas' to_csv(header=False)): each record, "
                        "with a note; else text: every line is one review (a __label__ word in it is skipped); csv: "
                        "always CSV (docs/INPUT.md)")
    p.add_argument("--k", type=_top_k, metavar="K",
                   help="the K most probable classes of each document (-1: all), as a JSON list per line, most "
                        "probable first (fastText's predict -k). Without --k / --threshold: one JSON object per line")
    p.add_argument("--threshold", type=_probability, metavar="P",
                   help="only classes with probability >= P, of the K most probable (K is 1 without --k: as "
                        "fastText's predict); a JSON list per line, empty where none reaches P")

    s = sub.add_parser("sample", help="write the built-in sample: real English product-review sentences (Zhang CSV)")
    s.add_argument("--output", required=True, help="directory or s3:// prefix for train.csv and test.csv")
    s.add_argument("--overwrite", action="store_true", help="replace train.csv / test.csv if they exist")

    g = sub.add_parser("synthetic", help="write a synthetic Yelp-shaped corpus of any size, for scale tests (Zhang CSV)")
    g.add_argument("--output", required=True, help="directory or s3:// prefix for train.csv and test.csv")
    g.add_argument("--overwrite", action="store_true", help="replace train.csv / test.csv if they exist")
    g.add_argument("--train-docs", type=_positive_int, default=20000, help="documents in train.csv (default: 20000)")
    g.add_argument("--test-docs", type=_positive_int, default=2000, help="documents in test.csv (default: 2000)")
    g.add_argument("--classes", type=_positive_int, default=2, help="number of classes, 2 to 198, labelled 1..N (default: 2)")
    g.add_argument("--seed", type=int, default=0, help="same seed and sizes, same files; 0 to 2^32-1 (default: 0)")

    r = sub.add_parser("prepare", help="download a Zhang et al. dataset and write normalized .train/.test")
    r.add_argument("--dataset", default="yelp_review_polarity",
                   help="a Zhang et al. dataset: yelp_review_polarity (default), ag_news, dbpedia, ... (an unknown "
                        "name lists them all)")
    r.add_argument("--output", required=True, help="directory or s3:// prefix for <dataset>.train, <dataset>.test and the classes' names, "
                        "<dataset>.classes.txt")
    r.add_argument("--overwrite", action="store_true",
                   help="replace <dataset>.train / .test / .classes.txt already there that differ from what this run "
                        "writes (an edited .classes.txt: by default it is kept, with one error line; files of the "
                        "same bytes are no obstacle: a rerun succeeds)")
    r.add_argument("--cache-dir", default=os.path.join(os.path.expanduser("~"), ".cache", "fasttext_lib"),
                   help="where the downloaded archive is kept (default: ~/.cache/fasttext_lib)")
    r.add_argument("--base-url", default=None, help="mirror to download from instead of the public one: an http(s):// "
                        "or file:// URL, or a local folder holding the .tgz archives")

    v = sub.add_parser("export-vectors", help="write a bundle's word vectors as a fastText .vec text file")
    v.add_argument("--model", required=True, help="bundle directory or s3:// prefix")
    v.add_argument("--output", required=True,
                   help=".vec file (local or s3://; compressed if it ends in .gz, .bz2, .xz or .lzma)")
    v.add_argument("--overwrite", action="store_true", help="replace --output if it exists (default: refuse)")

    f = sub.add_parser("import-folders", help="write a directory of class folders (one document per file: IMDB's "
                                              "aclImdb/train, 20 Newsgroups, BBC News) as one label,text CSV file")
    f.add_argument("--input", required=True, type=_path_of("a local directory"), metavar="DIR",
                   help="the directory of class folders: each folder's name is a class, each file in it a document")
    f.add_argument("--output", required=True, type=FILE, metavar="FILE.csv",
                   help="the CSV file (local or s3://; compressed if it ends in .gz, .bz2, .xz or .lzma)")
    f.add_argument("--skip", action="append", default=[], metavar="FOLDER",
                   help="leave this folder out (repeat it for several); a folder of unlabeled documents, as "
                        "aclImdb's unsup, is refused unless skipped")
    f.add_argument("--encoding", default="utf-8", help="the files' text encoding (default: utf-8; 20 Newsgroups' "
                                                       "files are latin-1)")
    f.add_argument("--overwrite", action="store_true", help="replace --output if it exists (default: refuse)")
    return parser


def _note(line):
    """A note on how an input was read (data.read_labeled's ``note``: pandas' index column left out), on stderr."""
    print(line, file=sys.stderr)


def say(text, flush=False):
    """One line on stdout. A full disk behind ``>`` ends the command with one error line (it was a traceback,
    and another at exit when Python flushed stdout again); a closed pipe (``| head -1``) ends it quietly
    (:class:`StdoutClosed`). Characters stdout's encoding cannot hold (class names such as "très bien" under
    ``PYTHONIOENCODING=ascii`` or ``LC_ALL=C PYTHONUTF8=0``) are shown escaped, ``tr\\xe8s bien``, as Python shows
    them on stderr: evaluate's tables were a UnicodeEncodeError traceback (JSON lines are ASCII already).

    The line and its line break are one write: a signal lands between any two writes (Python's buffered file checks
    for one after each write it flushes), and ``print``'s two left ``predict ... > out.jsonl`` stopped by Ctrl-C or
    SIGTERM with its last answer cut from its line break."""
    if sys.stdout is None:  # started with stdout closed (>&-): nothing to write to, as print() does (main refuses
        return              # predict's and evaluate's answers so before any work)
    try:
        try:
            sys.stdout.write(text + "\n")
        except UnicodeEncodeError:  # raised before anything is written
            sys.stdout.write(_escaped_for(sys.stdout, text) + "\n")
        if flush:
            sys.stdout.flush()
    except OSError as exc:
        raise _stdout_failed(exc) from None


def _say_written(text, files):
    """A writing command's summary line ``text``, said once its ``files`` are in place (its writes' on_written); a stop
    from then on says that it came after them (stops.tell_a_late_stop): one as the command returned (export-vectors'
    model freed, a quarter of a second for a bigram table) said "stopped and cleaned up", beside the summary line and
    the new files in place."""
    say(text, flush=True)
    what = (f"{', '.join(files[:-1])} and {files[-1]} were" if len(files) > 1 else f"{files[0]} was") + " written"
    tell_a_late_stop(lambda exc: note_what_a_stop_came_after(exc, what))


def _escaped_for(stream, text):
    """``text`` with what ``stream``'s encoding cannot hold written as Python escapes (``\\xe8``)."""
    encoding = getattr(stream, "encoding", None) or "ascii"
    return text.encode(encoding, "backslashreplace").decode(encoding)


class StdoutClosed(FastTextError):
    """The reader of stdout's pipe is gone (``| head -1`` has its line): the command stops, cleaning up as
    for any error, but without an error line and with the status of a process SIGPIPE ends (141), as
    ``cat`` and ``grep`` do. Its reader asked for no more: an ``error:`` line there was noise on the
    terminal of every ``predict ... | head``. Where its cleanup could not put back a user's file (set aside, its
    place said in the message: storage.atomic), the line is written all the same (cli.main): silent, the new train
    split stayed beside the old test split, and the old one at a name nothing told of."""

    exit_status = 128 + 13  # SIGPIPE


def _point_at_devnull(stream):
    """``stream``'s descriptor writes to /dev/null from now on (OSError, ValueError: it has none)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, stream.fileno())
    finally:
        os.close(devnull)


def _stdout_failed(exc):
    """The error for a failed write to stdout. What is still buffered there goes to /dev/null from now
    on: the interpreter flushes stdout at exit, and that write would fail (and be reported) again."""
    import errno

    try:
        _point_at_devnull(sys.stdout)
    except (OSError, ValueError):  # no file descriptor (a notebook, a test's capture): nothing to redirect
        pass
    if exc.errno == errno.EPIPE:
        return StdoutClosed("standard output's reader is gone (a closed pipe)")
    return FastTextError(f"cannot write to standard output: {exc.strerror or exc}")


def _json_number(value):
    value = value.item() if hasattr(value, "item") else value  # numpy scalars
    if isinstance(value, float):
        return round(value, 6) if math.isfinite(value) else None
    return value


def _settings_as_flags(command):
    """``command`` (a ``cmd_*``) with every line that names a setting naming its flag (errors.setting_named,
    config.setting_said): ``--min-count must be ...``, ``--ctx gpu:0,1 names 2 devices``, not TrainConfig's or
    Predictor.load's argument; also from autotune's trials, which call train() as the Python API does."""
    @functools.wraps(command)
    def as_flags(args):
        from .errors import SETTINGS_AS_FLAGS, settings_said_as

        with settings_said_as(SETTINGS_AS_FLAGS):
            return command(args)

    return as_flags


@_settings_as_flags
def cmd_train(args):
    from . import storage
    from .checkpoints import KeptCheckpoint

    kept = KeptCheckpoint(args.checkpoint_dir)  # what --checkpoint-dir keeps: a stop's line says it, and to rerun
    # --train and --validation: never one from a write that replaced the other
    with kept.told_on_a_stop(), storage.reading_together():
        return _train(args, kept)  # (told_on_a_stop outermost: a stop as the block ends is told too)


def _train(args, kept):
    """``train``'s steps: every check that needs no data, the data read and trained on (or the settings searched, with
    --autotune-validation), then the bundle saved (by a cluster's first worker only)."""
    checked = _check_before_reading(args, kept)
    trained = _read_and_train(args, checked, kept)
    if trained.rank != 0:  # distributed: every worker holds the same model; the first one saves it
        print(f"worker {trained.rank} of {trained.num_workers} done; worker 0 writes the bundle", file=sys.stderr)
        return 0
    _save(args, trained, kept)
    return 0


class _Checked(NamedTuple):
    """What train's checks before any data is read found (:func:`_check_before_reading`), for the read."""

    config: object  # the TrainConfig of the flags
    explicit_names: object  # --label-names (label_names.from_option), or None
    fmt: object  # chosen_format's: --format, or the columns --label-column / --text-column name
    search: object  # what --checkpoint-dir holds (checkpoints.refuse_an_older_format), or None without one
    beside_validation: object  # the names beside the validation data only (_names_beside_validation), or None


def _check_before_reading(args, kept):
    """Every check of ``train`` that needs no data, in the order a user meets them: the settings, the output, the
    checkpoints (``kept`` learns what --checkpoint-dir holds), the trials' file, the pretrained vectors' start, the input
    files, the names files."""
    from . import storage
    from .bundle import OVERWRITE_HINT, check_output

    config, explicit_names = _checked_settings(args)
    # Fail fast: a destination that cannot be written (or must not be replaced) is found before
    # the data is read and the model trained, not after; and a model already there is kept unless --overwrite.
    check_output(args.output, overwrite=args.overwrite, hint=OVERWRITE_HINT)
    fmt = chosen_format(args)
    search = _look_into_checkpoint_dir(args, config, kept)
    if args.autotune_trials:
        _check_trials_output(args, config)
    if config.pretrained_vectors:  # its start checked before the data (read whole once the vocabulary is known)
        from .vec_files import check_vec_start

        if not storage.is_s3(config.pretrained_vectors):  # (named by its flag, as --train is; the reader's line is not)
            storage.check_local_input(config.pretrained_vectors, "--pretrained-vectors")
        check_vec_start(config.pretrained_vectors, dim=None if args.autotune_validation else config.emsize)
    for flag, uri, _ in _inputs(args):  # (held-out data: a class-folder dataset's test/ suggested)
        if uri:
            _check_input_file(uri, flag, "train" if flag == "--train" else "test")
    validation = args.validation or args.autotune_validation
    beside_validation = _names_beside_validation(  # (before the data: minutes at Yelp size)
        args.train, validation, "--validation" if args.validation else "--autotune-validation", explicit_names)
    return _Checked(config, explicit_names, fmt, search, beside_validation)


def _inputs(args):
    """train's input files: ``(flag, its path or None, what it holds)``."""
    return (("--train", args.train, "the training data"), ("--validation", args.validation, "the validation data"),
            ("--autotune-validation", args.autotune_validation, "the autotune validation data"))


def _checked_settings(args):
    """``(the TrainConfig of the flags, --label-names read or None)``: the inputs are no ``-``, the settings valid and
    consistent with autotune's flags, the cluster's environment and the devices there."""
    from . import label_names
    from .cluster import check_kvstore_environment
    from .config import config_from_args
    from .devices import parse_ctx

    for flag, uri, what in _inputs(args):
        refuse_standard_input(uri, flag, what)
    config = config_from_args(args)  # (its refusals name the flags: --pretrained-vectors -, --epochs 0)
    _check_autotune_flags(args, config.kvstore)  # (a dist_* kvstore: refused with autotune, whatever the environment)
    check_kvstore_environment(config.kvstore)
    parse_ctx(config.ctx)  # the devices it names are there (--ctx gpu on a machine without one), as train() finds them
    return config, (label_names.from_option(args.label_names) if args.label_names is not None else None)


def _look_into_checkpoint_dir(args, config, kept):
    """What --checkpoint-dir holds (None without one), refused there before the data is read: inside --output, not
    writable, of an older format, or written with other settings. ``kept`` learns what it found: what the resume goes on
    from (one search a run)."""
    if not args.checkpoint_dir:
        return None
    from . import storage
    from .bundle import refuse_checkpoints_in_output
    from .checkpoints import refuse_an_older_format, refuse_other_settings
    from .cluster import workers_to_come

    refuse_checkpoints_in_output(args.checkpoint_dir, args.output, "--checkpoint-dir", "--output")
    storage.check_writable(args.checkpoint_dir)
    search = refuse_an_older_format(args.checkpoint_dir, config.epochs)
    kept.found(search)
    # (what is known without the data: train() is given this search, and looks no further before reading)
    refuse_other_settings(args.checkpoint_dir, search, config, validated=bool(args.validation), score_train=False,
                          num_workers=workers_to_come(config.kvstore))
    return search


def _read_and_train(args, checked, kept):
    """The validation data (--validation or --autotune-validation) read, then --train, and the model trained on them
    (read_and_train.read_then_train: one JSON line per epoch on stdout), or with --autotune-validation the settings
    searched (one per trial)."""
    from .data import read_counted, read_labeled
    from .progress import bar
    from .read_and_train import read_splits, read_then_train

    config, fmt, validation = checked.config, checked.fmt, args.validation or args.autotune_validation
    read_validation = (lambda: read_labeled(validation, fmt, find_names=False, note=_note)) if validation else None
    find_names = checked.explicit_names is None
    terms = dict(explicit_names=checked.explicit_names, names_as="--label-names", say=_note,
                 beside_validation=checked.beside_validation)

    def report(row):  # one JSON line per epoch; NaN (no validation split) is null
        say(json.dumps({k: _json_number(v) for k, v in row.items()}), flush=True)

    if args.autotune_validation:  # autotune splits and re-reads the texts
        train_data, val_data = read_splits(
            read_validation, lambda: read_labeled(args.train, fmt, find_names=find_names, note=_note), **terms)
        return _autotune(args, config, train_data, val_data, report)

    def read_training():  # tokenized as it is read: the texts are never all in memory (~0.7 GB at Yelp size)
        return read_counted(args.train, fmt, progress=bar if config.progress else None, find_names=find_names,
                            note=_note)

    return read_then_train(read_validation, read_training, config, kept, on_epoch_end=report,
                           checkpoint_dir=args.checkpoint_dir, checkpoint_search=checked.search,
                           val_name=args.validation or "validation data", **terms)  # (errors name the file)


def _save(args, trained, kept):
    """The bundle written to --output (with --autotune-trials, the trials' table too: both, or both as they were), and
    the lines that say where."""
    from .bundle import BundleKept
    from .devices import describe_ctx

    try:
        where = _save_bundle(args, trained, kept)
    except BundleKept as taken:  # (--output and --autotune-trials were checked before the data was read: came since)
        raise FastTextError(f"{taken.taken or taken.dest} was written by another run while this one trained; this run's "
                            f"model is kept as {taken.kept}{taken.trials}") from None
    print(f"trained on {describe_ctx(trained.ctx)}; bundle written to {where}", file=sys.stderr)
    if args.autotune_validation and args.autotune_trials:
        print(f"autotune trials written to {args.autotune_trials}", file=sys.stderr)
    if args.autotune_validation:
        from .autotune import float32_scores_note

        note = float32_scores_note(args.compact, args.autotune_trials)
        if note:
            print(note, file=sys.stderr)


def _save_bundle(args, trained, kept):
    """The bundle written to --output (with --autotune-trials, the trials' table too: both, or both as they were);
    returns where. Without --overwrite a bundle (or trial table) another run saved there meanwhile is kept, and this
    one goes beside it (bundle.BundleKept)."""
    from . import storage
    from .bundle import OVERWRITE_HINT, save_bundle
    from .compact import COMPACT_FLAG

    # kept.bundle_written the moment the bundle's config.json is in place: a stop from there on (the staging folder
    # removed, the lines below) says so, not to run the command again (--output would refuse it)
    if args.autotune_validation and args.autotune_trials:
        from .autotune import save_bundle_with_trials

        where = save_bundle_with_trials(trained, args.output, args.autotune_trials, compact=args.compact,
                                        overwrite=args.overwrite, hint=OVERWRITE_HINT, trials_hint=TRIALS_HINT,
                                        overwrite_as=storage.OVERWRITE_FLAG, compact_as=COMPACT_FLAG,
                                        on_commit=kept.bundle_written, keep_beside=True)
        kept.also_written("the trial table", args.autotune_trials)  # (a stop in the lines below names it too)
        return where
    return save_bundle(trained, args.output, compact=args.compact, overwrite=args.overwrite, hint=OVERWRITE_HINT,
                       on_commit=kept.bundle_written, compact_as=COMPACT_FLAG, keep_beside=True)


def _names_beside_validation(train, validation, flag, explicit_names):
    """``(names file, its mapping, subset)`` beside the ``validation`` data (given as ``flag``: --validation or
    --autotune-validation) when none is beside ``train``, as notebook 01 takes those beside its test_file (they were
    ignored: the bundle said the classes' ids); None when there are none, or ``explicit_names`` (--label-names) win
    over both. One beside each that name the classes differently are refused, before the data is read. ``subset``:
    whether the file is surely the validation data's (label_names.named_for), as read_and_train.read_splits keeps
    its names for the training data's classes (label_names.kept_for_data)."""
    from . import label_names

    if not validation or explicit_names is not None:
        return None
    names_file, found, beside = label_names.find_beside_either(train, validation, ("--train", flag),
                                                               " (or give --label-names)")
    if names_file is None or beside != validation:
        return None
    return names_file, found, label_names.named_for(names_file, validation)


def _check_autotune_flags(args, kvstore):
    """Before any data is read: the autotune flags come with --autotune-validation, which does not mix
    with --validation / --checkpoint-dir or a dist_* ``kvstore`` (autotune.check_one_host), and
    --autotune-duration is a positive number of seconds."""
    if not args.autotune_validation:
        for flag, value in (("--autotune-duration", args.autotune_duration), ("--autotune-trials", args.autotune_trials),
                            ("--autotune-no-refit", args.autotune_refit)):
            if value is not None:
                raise FastTextError(f"{flag} needs --autotune-validation")
        from . import storage

        if args.validation and storage.same_location(args.validation, args.train):  # (allowed, as autotune's is)
            print("warning: --validation is the --train file: each epoch is scored on the documents it trained on, so "
                  "val_accuracy is the training accuracy and says nothing of unseen data; hold out a split of your "
                  "data for it instead", file=sys.stderr)
        return
    for flag, value in (("--validation", args.validation), ("--checkpoint-dir", args.checkpoint_dir)):
        if value:
            raise FastTextError(f"{flag} cannot be combined with --autotune-validation (score the bundle with evaluate)")
    from . import storage
    from .autotune import check_one_host

    check_one_host(kvstore, "--autotune-validation")

    if storage.same_location(args.autotune_validation, args.train):  # (allowed: fastText allows it too)
        print("warning: --autotune-validation is the --train file: each setting is scored on the documents it trained "
              "on, which favors the most overfit, and the refit trains on every document twice; hold out a split of "
              "your data for it instead (autotune.split_validation)", file=sys.stderr)
    text = "300" if args.autotune_duration is None else args.autotune_duration
    try:
        args.autotune_duration = float(text)
    except ValueError:
        args.autotune_duration = float("nan")
    if not 0 < args.autotune_duration < float("inf"):
        raise FastTextError(f"--autotune-duration must be a positive number of seconds, got {text!r}")
    _say_unused_search_flags(args)


def _say_unused_search_flags(args):
    """One warning line naming the options of the settings the search sets (autotune.SEARCHED) that the command line
    gave: ``--lr 0.5 --epochs 3`` with --autotune-validation were ignored without a word (only --help said so), the
    bundle trained with another lr and epochs than the command asked for."""
    from .autotune import SEARCHED
    from .errors import flag_of

    given = _given_options(getattr(args, "argv", None), "train")
    flags = [flag_of(name) for name in ("lr", "batch_size", "epochs", "emsize", "ngrams", "optimizer")
             if name in SEARCHED and name in given]
    if flags:
        named = flags[0] if len(flags) == 1 else ", ".join(flags[:-1]) + " and " + flags[-1]
        # With --pretrained-vectors emsize is not searched (autotune._check_search_settings): their dimension is it
        searched = ("the optimizer, lr, batch size, epochs and n-grams, starting from the library's setting for the data, "
                    "and emsize is the --pretrained-vectors dimension" if args.pretrained_vectors else
                    "the optimizer, lr, batch size, epochs, emsize and n-grams, starting from the library's setting for "
                    "the data")
        print(f"warning: {named} {'is' if len(flags) == 1 else 'are'} not used with --autotune-validation: the search "
              f"sets {searched}; leave {'it' if len(flags) == 1 else 'them'} out, or train without --autotune-validation to use "
              f"{'it' if len(flags) == 1 else 'them'}", file=sys.stderr)


def _given_options(argv, command):
    """The destinations of the options ``argv`` gives ``command`` (as argparse reads them: ``--epoch 3`` is
    --epochs), without those left at their defaults. None: no command line (``_train`` called directly)."""
    if argv is None:
        return set()
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    for action in sub._actions:
        action.default = argparse.SUPPRESS
    return set(vars(parser.parse_args(argv)))


TRIALS_HINT = "pass --overwrite to replace it, or choose another --autotune-trials"


def _check_trials_output(args, config):
    """Before any data is read: the trial table (written after the bundle) must be writable, must replace
    neither an input of this run nor the bundle (it silently overwrote --train when they matched, and an
    unwritable path failed only once the search and the bundle were done), and, without --overwrite, must
    not exist (as a bundle at --output)."""
    from . import label_names, storage
    from .writers import refuse_a_name_not_written

    uri = args.autotune_trials
    refuse_a_name_not_written(uri, "the trial table is written as CSV text", ".csv")
    names_file = args.label_names if args.label_names and (storage.is_s3(args.label_names) or
                                                           os.path.isfile(args.label_names)) else None  # not 'none', 'ag_news'
    inputs = (("--train", args.train), ("--autotune-validation", args.autotune_validation),
              ("--label-names", names_file), ("--pretrained-vectors", config.pretrained_vectors))
    for flag, other in inputs:
        if other and storage.same_location(uri, other):
            raise FastTextError(f"--autotune-trials {uri} is the {flag} file; write the trial table elsewhere")
    # A names file beside the data is an input too (read by this run, or by the next one if it is written now): with
    # --overwrite the table replaced the user's names, and every later training on that data failed to read them.
    for names in label_names.beside(args.train):
        if storage.same_location(uri, names):
            raise FastTextError(f"--autotune-trials {uri} is where the names of the --train file's classes are read "
                                f"from; write the trial table elsewhere")
    # Inside the bundle's directory too: a table there is a file the bundle did not write, so publishing refused
    # the directory (after the whole search), or, over an older bundle, a file no removal of the bundle takes away.
    if storage.within(uri, args.output):
        raise FastTextError(f"--autotune-trials {uri} would replace the bundle --output {args.output} or go inside its "
                            f"directory; write the trial table elsewhere")
    # An existing table is kept unless --overwrite, as a bundle at --output is (it was replaced without a word).
    storage.check_output_file(uri, "trials.csv", "--autotune-trials", overwrite=args.overwrite, hint=TRIALS_HINT)


# Each command's outputs: (option's dest, flag, what it writes, what to give instead of "-").
OUTPUTS = {
    "train": (("output", "--output", "the bundle", "a directory"),
              ("checkpoint_dir", "--checkpoint-dir", "the checkpoints", "a directory"),
              ("autotune_trials", "--autotune-trials", "the autotune trial table", "a file")),
    "sample": (("output", "--output", "train.csv and test.csv", "a directory"),),
    "synthetic": (("output", "--output", "train.csv and test.csv", "a directory"),),
    "prepare": (("output", "--output", "the dataset", "a directory"),
                ("cache_dir", "--cache-dir", "the downloaded archive", "a directory")),
    "export-vectors": (("output", "--output", "the word vectors", "a file"),),
    "import-folders": (("output", "--output", "the CSV file", "a file"),),
}


def refuse_standard_output(args):
    """``-`` for an output, as :func:`refuse_standard_input` for an input: what is written is published whole
    (atomically, in place of an older one) or is a folder of files, never a stream. It trained or generated,
    then wrote into a folder named ``-``; export-vectors and --autotune-trials refused it, in other words."""
    from .errors import refuse_standard_output as refuse

    for dest, flag, what, give in OUTPUTS.get(args.command, ()):
        refuse(getattr(args, dest, None), flag, what, give)


def _check_input_file(uri, flag, split):
    """Before any data is read: the input file ``uri`` that ``flag`` names (--train, --validation,
    --autotune-validation) missing (a typo) or a directory, in one line naming the flag, a class-folder dataset's
    ``split`` folder suggested (aclImdb/: its train/ for --train, its test/, the held-out data, for the others). The
    validation data is read first, then --train: either was found only once the other had been read whole (minutes at
    Yelp size), in the read's line, which does not name the flag."""
    from . import storage
    from .class_folders import refuse_a_directory

    if storage.is_s3(uri):
        if not storage.exists(uri):  # (a HEAD; a refusal is its one line)
            storage.open_read(uri)  # its line for what is missing (not opened: the read opens it, a pair's rewrite
            #                         checked there as reading_together checks it)
        return
    refuse_a_directory(uri, flag, split=split)
    if not os.path.exists(uri):
        raise storage.missing_file(uri, flag)


def _autotune(args, config, train_data, val_data, report):
    """``train --autotune-validation``: one JSON line per trial on stdout, the table on stderr."""
    from .autotune import autotune

    result = autotune(train_data, val_data, args.autotune_duration, base=config, on_trial=report, verbose=True,
                      refit=args.autotune_refit is not False, val_name=args.autotune_validation)
    return result.trained


def _no_room_named(exc, name, index, line_of):
    """``exc`` (features.NoRoomToFeaturize) as one line naming its text, document ``index`` (0-based, among all read)
    of the input ``name``: by the line its record starts at (``line_of(index)``), else, where that is no longer known,
    as ``document N``, the place of its answer (``record N`` misled: a header row is a record too)."""
    line = line_of(index)
    return FastTextError(exc.where(f"{name}:{line}" if line else f"{name}: document {index + 1}"))


@_settings_as_flags
def cmd_evaluate(args):
    from .class_folders import refuse_a_directory
    from .compact import COMPACT_FLAG
    from .features import NoRoomToFeaturize
    from .predict import Predictor
    from .predict_input import refuse_own_output
    from .data import RecentLines, iter_examples

    refuse_standard_input(args.data, "--data", "the evaluation data")
    refuse_own_output(args.data, "--data")
    # (aclImdb/: its test/ suggested, the held-out data, as by predict; iter_examples' refusal suggests train/; the
    # flag named first, as --validation's line names it)
    refuse_a_directory(args.data, "--data", split="test")
    fmt = chosen_format(args)
    predictor = Predictor.load(args.model, ctx=args.ctx, compact_as=COMPACT_FLAG)
    found = {}
    examples = RecentLines(iter_examples(args.data, fmt, note=_note, found=found), found, Predictor.EVALUATED_PER_CHUNK)
    # scored as it is read: the texts of a large file are never all in memory (evaluate_examples says it of an
    # autotune bundle scored on the validation data its refit trained on)
    try:
        metrics = predictor.evaluate_examples(examples, confusion=True, where=args.data, line_of=examples.line_of,
                                              found=found)
    except NoRoomToFeaturize as exc:
        raise _no_room_named(exc, args.data, exc.index, examples.line_of) from None
    say(_confusion_table(metrics["confusion_matrix"]))
    say(_per_class_table(metrics["per_class"]))
    say(json.dumps(metrics))
    return 0


def _per_class_table(rows):
    """Precision, recall, F1 and support of each class as aligned text (``-`` where a ratio is 0/0)."""
    header = ("class", "precision", "recall", "f1", "support")
    cells = [[_cell(r["label"])] + ["-" if r[k] is None else f"{r[k]:.4f}" for k in header[1:4]] + [str(r["support"])]
             for r in rows]
    widths = [max(_columns(h), *(_columns(c[i]) for c in cells)) for i, h in enumerate(header)]
    lines = [[_left(h, widths[0]) if i == 0 else _right(h, widths[i]) for i, h in enumerate(header)]]
    lines += [[_left(c, widths[0]) if i == 0 else _right(c, widths[i]) for i, c in enumerate(row)] for row in cells]
    return "\n".join("  ".join(line).rstrip() for line in lines)


def _cell(name):
    """A class name as a table shows it: a line break or tab in it (any CSV field can be a class) escaped, as in the
    JSON line (``neg\\nbad``); shown as is, it split the class's row across lines."""
    return "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in name)


def _columns(text):
    """The columns a terminal gives ``text``: two for a wide character (好, an emoji), none for a combining mark (the
    accent of ``cafe`` + U+0301), one for the others. Measured by len(), a class named 好 or 差 shifted its row of
    evaluate's tables by a column per character."""
    if text.isascii():
        return len(text)
    import unicodedata

    return sum(0 if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me")
               else 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def _left(text, width):
    """``text`` padded on the right to ``width`` columns (:func:`_columns`), as str.ljust pads ASCII."""
    return text + " " * (width - _columns(text))


def _right(text, width):
    """``text`` padded on the left to ``width`` columns (:func:`_columns`), as str.rjust pads ASCII."""
    return " " * (width - _columns(text)) + text


def _confusion_table(matrix):
    """The confusion matrix as aligned text: rows the true class, columns the predicted one, by name."""
    names, counts = [_cell(name) for name in matrix["labels"]], matrix["counts"]
    corner = "true \\ predicted"
    first = max([len(corner)] + [_columns(n) for n in names])
    widths = [max(_columns(n), max(len(str(row[j])) for row in counts)) for j, n in enumerate(names)]
    lines = [_left(corner, first) + "".join("  " + _right(n, w) for n, w in zip(names, widths))]
    for name, row in zip(names, counts):
        lines.append(_left(name, first) + "".join("  " + str(c).rjust(w) for c, w in zip(row, widths)))
    return "\n".join(lines)


@_settings_as_flags
def cmd_predict(args):
    from .class_folders import predict_then, refuse_a_directory
    from .compact import COMPACT_FLAG
    from .features import NoRoomToFeaturize
    from .predict import Predictor
    from .predict_input import PREDICTED_PER_CHUNK, documents, refuse_own_output

    refuse_own_output(args.input, "--input")
    if args.input != "-":  # (aclImdb/test: its class folders named, and what to run, before the model is loaded)
        refuse_a_directory(args.input, "--input", then=predict_then(args.model), split="test")
    predictor = Predictor.load(args.model, ctx=args.ctx, compact_as=COMPACT_FLAG)
    ranked = args.k is not None or args.threshold is not None
    name = "stdin" if args.input == "-" else args.input
    with documents(args.input, args.format, predictor.class_values, note=_note) as texts:
        done = 0
        while True:
            chunk = list(itertools.islice(texts, PREDICTED_PER_CHUNK))
            if not chunk:
                return 0
            try:
                results = (predictor.predict_top(chunk, k=args.k or 1, threshold=args.threshold or 0.0)
                           if ranked else predictor.predict(chunk))
            except NoRoomToFeaturize as exc:
                raise _no_room_named(exc, name, done + exc.index, texts.line_of) from None
            done += len(chunk)
            for result in results:
                say(json.dumps(result))


def _check_splits_output(output, overwrite):
    """``sample`` / ``synthetic`` write ``train.csv`` and ``test.csv``: names a user's own data often has.
    Without ``--overwrite`` an existing one is refused before anything is generated or written."""
    from . import storage

    # Where they go, before a corpus is generated: an --output that is a file was found at the write, after the
    # generation, as "cannot write FILE/test.csv: File exists"; an empty one (an unset $DIR) wrote into the cwd.
    if not str(output).strip():
        raise FastTextError(f"--output must name a directory or an s3:// prefix, got {str(output)!r}")
    storage.check_writable(output)
    if overwrite:
        for name in ("train.csv", "test.csv"):  # a folder of that name (not replaceable) before a corpus is made
            if not storage.is_s3(output):
                storage.check_replaceable(os.path.abspath(storage.join(output, name)))
        return
    for name in ("train.csv", "test.csv"):  # where S3 cannot say (no s3:ListBucket), the writes themselves refuse
        storage.refuse_existing(storage.join(output, name), "pass --overwrite to replace it, or choose another --output")


def _write_splits(output, train, test, overwrite):
    """Both files are written in full before either replaces what is there: a disk that fills up during
    test.csv left a new train.csv beside the user's old test.csv (and the old train.csv lost)."""
    from . import storage
    from .writers import write_csv_rows

    written = {"train": storage.join(output, "train.csv"), "test": storage.join(output, "test.csv")}
    files = [written["train"], written["test"]]
    # the summary once the files are in place (stdout refusing it puts the old local ones back) and S3 uploaded
    with storage.atomic_writes(files, overwrite=overwrite,
                               on_written=lambda: _say_written(json.dumps(written), files)) as (train_file, test_file):
        write_csv_rows(train, train_file)
        write_csv_rows(test, test_file)
    return 0


def cmd_sample(args):
    from .sample import load_sample

    _check_splits_output(args.output, args.overwrite)
    return _write_splits(args.output, load_sample("train"), load_sample("test"), args.overwrite)


def cmd_synthetic(args):
    from .config import MAX_SEED
    from .data import LabeledTexts
    from .synthetic import MAX_CLASSES as MAX_SYNTHETIC_CLASSES, generate_reviews

    if not 2 <= args.classes <= MAX_SYNTHETIC_CLASSES:  # (the generator's ValueError, or an IndexError, was a traceback)
        raise FastTextError(f"--classes must be from 2 to {MAX_SYNTHETIC_CLASSES}, got {args.classes}")
    if not 0 <= args.seed <= MAX_SEED:
        raise FastTextError(f"--seed must be an integer from 0 to {MAX_SEED}, got {args.seed}")
    _check_splits_output(args.output, args.overwrite)
    data = generate_reviews(args.train_docs + args.test_docs, num_classes=args.classes, seed=args.seed)
    n = args.train_docs
    return _write_splits(args.output, data.head(n), LabeledTexts(data.labels[n:], data.texts[n:]), args.overwrite)


def cmd_export_vectors(args):
    from . import storage
    from .vectors import export_vectors

    # the output is checked first; the summary is written once a local file is in place, the one it replaced kept
    # until then: stdout refusing it (> /dev/full) ends the command with the user's old file where it was; after an
    # S3 upload, which can still be refused (storage.atomic_write's on_written)
    export_vectors(args.model, args.output, overwrite=args.overwrite, overwrite_as=storage.OVERWRITE_FLAG,
                   on_written=lambda count: _say_written(json.dumps({"output": args.output, "words": count}),
                                                         [args.output]))
    return 0


def cmd_prepare(args):
    from . import storage
    from .download import prepare

    # the summary once the files are in place: stdout refusing it (> /dev/full) puts the user's old files back; after
    # S3 uploads, which can still be refused (storage.atomic_writes' on_written)
    prepare(args.dataset, args.output, args.cache_dir, base_url=args.base_url, overwrite=args.overwrite,
            on_written=lambda written: _say_written(json.dumps(written), list(written.values())),
            overwrite_as=storage.OVERWRITE_FLAG)
    return 0


def cmd_import_folders(args):
    from . import storage
    from .class_folders import folders_to_csv

    # the summary once the file is in place (as export-vectors'): stdout refusing it keeps the user's old file
    def summary(counts):
        _say_written(json.dumps({"output": args.output, "documents": sum(counts.values()), "classes": counts}),
                     [args.output])

    folders_to_csv(args.input, args.output, skip=args.skip, encoding=args.encoding, overwrite=args.overwrite,
                   note=_note, on_written=summary, overwrite_as=storage.OVERWRITE_FLAG)
    return 0


COMMANDS = {"train": cmd_train, "evaluate": cmd_evaluate, "predict": cmd_predict, "sample": cmd_sample, "synthetic": cmd_synthetic,
            "prepare": cmd_prepare, "export-vectors": cmd_export_vectors, "import-folders": cmd_import_folders}


def _tell_a_cluster(command, failure, status, shown=None):
    """A ``train`` command's worker of a cluster, which failed before joining it (``failure``: its error line, a bug or
    a stop), tells the others (cluster.tell_the_others: it exits there with ``status``); every other command joins
    none."""
    if command == "train":
        from .cluster import tell_the_others

        tell_the_others(failure, status, shown)


def _command_in(argv):
    """The command ``argv`` names, as argparse reads it (the top level has no option that takes a value), or None."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def _telling_a_cluster(args):
    """While a ``train`` command runs: its cluster's others are told here, after its cleanup and its line, not by
    ``train()`` itself (cluster.caller_tells)."""
    if args.command != "train":
        return contextlib.nullcontext()
    from .cluster import caller_tells

    return caller_tells()


def _say_error(line):
    """The error line on stderr, if stderr is still there: after a hangup its terminal is gone (EIO), and the
    failed write turned the exit status (129, 2) into 1 with a traceback nobody could read either."""
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


# The commands whose answers are their standard output: started with it closed (>&-, Python's sys.stdout is None)
# they printed nothing, exited 0, then failed in a traceback on the flush at the end.
ANSWERING_COMMANDS = {"predict", "evaluate"}

# The commands that run MXNet: a process started for one of them imports it without SciPy.
MXNET_COMMANDS = {"train", "evaluate", "predict", "export-vectors"}


def run():
    """The process entry point (``python -m fasttext_lib``, the ``fasttext-lib`` script): :func:`main`
    with MXNet imported without SciPy (~53 MB less peak memory; see lean_import.py). Calling
    :func:`main` in a notebook leaves the process's imports alone."""
    _fill_closed_descriptors()
    if sys.stderr is None:  # started with stderr closed (2>&-): print(file=None) prints to stdout, so the notes and the
        # error line went among predict's answers (a labeled CSV's note: every answer one line off). Now to /dev/null.
        sys.stderr = open(os.devnull, "w")
    sys.stderr = _NotesStream(sys.stderr)
    # Ctrl-C, SIGTERM, SIGHUP or SIGXCPU while the command starts (argument parsing, MXNet's import: ~0.5 s, more on a
    # busy machine), before main's stop_on_signals is armed, was Python's KeyboardInterrupt traceback or a death by
    # SIGTERM without a line. Nothing has been written then: one error line and the signal's status at once (armed
    # already where the package's import began the command: fasttext_lib/__init__.py); the handlers it replaced are
    # put back where main raises (a bug's traceback).
    early = stop_at_once_on_signals()
    # Registered before main imports MXNet, so run after its exit functions (last in, first run): see _ignore_stops
    atexit.register(_ignore_stops, list(early))
    try:
        status = main(lean_mxnet=True)
    except BaseException:
        for signum, handler in early.items():
            signal.signal(signum, handler)
        raise
    # The command has done its work and said so: a stop while the process exits (MXNet and Python freeing what it
    # read, a quarter of a second for a bigram model) ended it by the signal, status 130 or 143 and no line, after the
    # line that said its bundle was written. Now such a stop ends the exit at once, with the command's own status:
    # stop_at_once_on_signals' handler, back in place, does so once main said it finished (stops.command_finished),
    # and the last exit function ignores the stops (_ignore_stops) where Python no longer runs handlers.
    if status > 128:  # a signal stopped the command, and what it had begun is cleaned up
        _exit_now(status)
    if status:  # an error line is out: nothing more at exit (mxnet_env.quiet_exit_hook)
        from .mxnet_env import quiet_exit_hook

        quiet_exit_hook()
    return status


STDERR_WAIT_SECONDS = 30  # how long a full non-blocking stderr pipe is waited for (_NotesStream)


class _NotesStream:
    """stderr for what a command says besides its answers (notes, progress bars, the error line), whose reader may be
    gone: a full device (``2>/dev/full``), a pipe whose reader exited, a terminal closed (EIO). A failed write there
    raised OSError mid-command: ``predict`` ended before its first answer, ``train`` at its first progress line
    (exit 1, no bundle, and a traceback that could not be shown either). Now the first failure sends stderr to
    /dev/null (descriptor 2 too: MXNet and the native code write there) and the command carries on; its exit status
    is its work's (an error is still 2, the line unseen).

    A reader that is only behind is waited for: a non-blocking pipe (O_NONBLOCK, set by a parent's event loop) refuses
    a write while full (EAGAIN). Through Python's stream that was silenced for good at the first refusal, so the error
    line that came later was never seen, or, with PYTHONUNBUFFERED=1 (common in containers), the text was dropped
    without a word. So the text goes to the descriptor here, waiting up to :data:`STDERR_WAIT_SECONDS` for room."""

    def __init__(self, stream):
        self._stream = stream
        # A wait ran out (or a Ctrl-C cut it short): the reader is there but takes nothing (a suspended parent). Each
        # write waited again, every progress-bar redraw, so a training crawled at 30 s a redraw and a Ctrl-C's error
        # line took a minute. Now the next writes take what fits at once, until the reader takes a write whole.
        self._stalled = False

    def _wait_for_room(self, fd, deadline):
        """Wait until ``fd`` takes a write or ``deadline`` passes; False (and stalled from now on) if it passed."""
        import select

        left = 0 if self._stalled else deadline - time.monotonic()
        if left <= 0:
            self._stalled = True
            return False
        try:
            select.select([], [fd], [], left)
        except BaseException:  # (Ctrl-C: the user stops; the error line is not waited for)
            self._stalled = True
            raise
        return True

    def write(self, text):
        try:
            fd = self._stream.fileno()
        except (OSError, ValueError, AttributeError):  # no descriptor (a notebook's stream, a StringIO)
            fd = None
        try:
            if fd is None:
                return self._stream.write(text)
            self.flush()  # (what was written to the stream itself goes first)
            self._write_all(fd, text.encode(getattr(self._stream, "encoding", None) or "utf-8",
                                            getattr(self._stream, "errors", None) or "backslashreplace"))
        except OSError:
            self._gone()
        return len(text)

    def _write_all(self, fd, data):
        """``data`` to ``fd``, waiting while a non-blocking pipe is full; after :data:`STDERR_WAIT_SECONDS` of a
        reader that takes nothing, the rest is dropped."""
        view, deadline, waited = memoryview(data), time.monotonic() + STDERR_WAIT_SECONDS, False
        while view:
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                if not self._wait_for_room(fd, deadline):
                    return
                waited = True
        if data and not waited:  # (an empty write says nothing of the reader)
            self._stalled = False

    def flush(self):
        deadline = time.monotonic() + STDERR_WAIT_SECONDS
        while True:
            try:
                self._stream.flush()
                return
            except BlockingIOError:  # (Python's buffered stream keeps what it could not write)
                if not self._wait_for_room(self._stream.fileno(), deadline):
                    return
            except OSError:
                self._gone()
                return

    def _gone(self):
        try:
            _point_at_devnull(self._stream)
            self._stream.flush()  # what is still buffered goes to /dev/null (else Python's flush at exit fails again)
        except (OSError, ValueError):  # no descriptor: from now on nothing is written at all
            self._stream = open(os.devnull, "w", encoding="utf-8", errors="replace")

    def __getattr__(self, name):  # isatty, fileno, encoding, ...: the stream's own
        return getattr(self._stream, name)


def _fill_closed_descriptors():
    """Descriptors 0-2 that the process was started without (``>&-``, ``2>&-``, ``<&-``) now read or write /dev/null.
    Left closed, the next file opened took the lowest free number: ``train ... >&-`` could open a bundle or data file
    as descriptor 1, and whatever writes to "stdout" below Python (native code, a compiler run for the native
    operators, a child process that inherits it) would write into that file. (Python's ``sys.stdout`` stays None:
    ``predict``'s answers are still refused in one line, main.)"""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


def _ignore_stops(signals):
    """The process's last exit function: ``signals`` ignored from here to its end. Python then puts the handlers of
    the signals it handles back to the system's default and frees the modules (MXNet's arrays: a quarter of a second
    after a train's "bundle written" line), so a stop there, after run's handlers could no longer run, killed the
    process by the signal (status 130, no line) once the command had done its work and said so."""
    for signum in signals:
        signal.signal(signum, signal.SIG_IGN)


def _exit_now(status):
    """Exit at once, without waiting for threads: an S3 transfer's worker blocked on an endpoint that
    stopped answering held the interrupted process for its read timeout (a minute after Ctrl-C) and
    could still complete an upload that the cleanup had given up. The streams are flushed first."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # (None: the stream was closed when the process started)
            pass
    os._exit(status)


# The options that name a local path or an s3:// URI (and --label-names, whose FILE is one; --base-url, whose local
# folder is one)
PATH_OPTIONS = ("train", "validation", "output", "checkpoint_dir", "autotune_validation", "autotune_trials",
                "pretrained_vectors", "label_names", "model", "data", "input", "cache_dir", "base_url")


def _expand_home_paths(args):
    """``--train '~/train.csv'``, quoted so that the shell left its ``~``, read as the shell would have read it
    unquoted (storage.expand_home): it was "no such file: ~/train.csv", and ``--output '~/model'`` a folder named
    ``~`` here."""
    from .storage import expand_home

    for name in PATH_OPTIONS:
        if isinstance(getattr(args, name, None), str):
            setattr(args, name, expand_home(getattr(args, name)))


def main(argv=None, lean_mxnet=False):
    """Run one command. Exit status: 0 done; 2 a user error (one ``error:`` line on stderr);
    130 on Ctrl-C (SIGINT), 143 on SIGTERM and 129 on SIGHUP, after cleaning up (see stops.stop_on_signals;
    a first Ctrl-C during an autotune search with a trial completed stops only the search: autotune.autotune);
    141 when stdout's reader is gone (``| head -1``: :class:`StdoutClosed`), without an error line unless what the
    command had written could not all be put back as it was (the line says where the user's file is kept)."""
    import traceback

    from .errors import (error_line, exit_after_a_bugs_traceback_if_joined, is_out_of_memory, let_mxnet_finish,
                         out_of_memory_line)
    from .stops import command_finished, stop_left, stop_message, stop_on_signals

    os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
    logging.getLogger("sagemaker.config").setLevel(logging.WARNING)
    try:
        args = build_parser().parse_args(argv)
    except UsageError as exc:  # (a host's own command line, or a value of its own: the other workers wait for it)
        _tell_a_cluster(_command_in(sys.argv[1:] if argv is None else argv), exc.line, 2)
        raise
    args.argv = sys.argv[1:] if argv is None else list(argv)  # (which options were given: _given_options)
    _expand_home_paths(args)
    if lean_mxnet and args.command in MXNET_COMMANDS:
        from .mxnet_env import start_mxnet

        try:  # an environment MXNet cannot run in (OMP_NUM_THREADS=abc aborted it, exit 134): one line
            start_mxnet(args.command)
        except FastTextError as exc:
            line = error_line(exc)
            _say_error(line)
            _tell_a_cluster(args.command, line, 2)  # (from a child process: mxnet_env.cannot_start)
            return 2
    try:
        with stop_on_signals(), _telling_a_cluster(args):
            refuse_standard_output(args)
            if sys.stdout is None and args.command in ANSWERING_COMMANDS:
                raise FastTextError(f"standard output is closed (>&-): {args.command}'s answers would go nowhere; "
                                    f"redirect them to a file (> FILE) or to /dev/null")
            status = COMMANDS[args.command](args)
            try:  # stdout is block-buffered into a pipe or file: its last write happens here
                if sys.stdout is not None:  # (None: closed when the process started, >&-; print wrote nothing)
                    sys.stdout.flush()
            except OSError as exc:
                raise _stdout_failed(exc) from None
            command_finished(status)  # (a stop from here on, as main returns, ends the process with it)
            return status
    except StdoutClosed as exc:
        if stop_left(exc):  # (the user's old file set aside, not put back: said where, on stderr, which is still there)
            _say_error(error_line(exc))
        command_finished(exc.exit_status)
        let_mxnet_finish()
        return exc.exit_status
    except FastTextError as exc:
        line = error_line(exc)
        _say_error(line)
        command_finished(2)  # (a stop while MXNet finishes below: no second error line)
        _tell_a_cluster(args.command, line, 2)
        let_mxnet_finish(2)
        return 2
    except Exception as exc:
        if not is_out_of_memory(exc):  # a bug: its traceback
            exit_after_a_bugs_traceback_if_joined()
            # (before joining: its traceback, then it exits)
            _tell_a_cluster(args.command, exc, 1, shown=traceback.print_exc)
            raise
        line = error_line(out_of_memory_line(exc))
        _say_error(line)
        command_finished(2)
        _tell_a_cluster(args.command, line, 2)
        let_mxnet_finish(2)
        return 2
    except KeyboardInterrupt as exc:
        status = getattr(exc, "exit_status", 130)
        _say_error(error_line(stop_message(exc)))  # (with what it left: files it could not remove, a mixed set)
        command_finished(status)
        _tell_a_cluster(args.command, exc, status)
        let_mxnet_finish(status)
        return status
    finally:
        # A library that installs a rich traceback handler (the sagemaker SDK does, when imported)
        # would print a bug's traceback on stdout: keep Python's own, on stderr.
        sys.excepthook = sys.__excepthook__
