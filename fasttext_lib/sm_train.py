"""The SageMaker training job (run by ``entry_point.py`` as a script in the MXNet 1.9 training container).

The MXNet training toolkit runs ``python fasttext_lib/entry_point.py --epochs 10 --ngrams 2 ...``
with the source_dir as cwd; this module

* reads every file of the ``train`` channel (``SM_CHANNEL_TRAIN``) and of the optional ``test`` channel
  (``SM_CHANNEL_TEST``; ``validation`` is accepted too; a channel of another name, or both, is refused) but the empty
  ones, the hidden ones and Hadoop's, Spark's and Hive's markers (``_SUCCESS``, ...: :func:`is_job_marker`), in any
  format the CLI reads (docs/INPUT.md), one or many files (concatenated in path order); a ``classes.txt`` /
  ``*.classes.txt`` file in the train channel, else in the test channel, is not data but the label names
  (label_names.py; two channels' that differ are refused: :func:`names_of_channels`; the test channel's checked
  against both channels' classes, as the CLI checks those beside ``--validation``), which the ``label_names``
  hyperparameter (``1=negative,2=positive``, a known dataset, an ``s3://`` file, ``none``) overrides;
* starts the word rows from pretrained vectors (``.vec``) when asked: the ``pretrained_vectors``
  hyperparameter (an ``s3://`` URI, read directly; or a file name inside the ``pretrained`` channel),
  or the one file of a ``pretrained`` channel (``fit({"train": ..., "pretrained": "s3://.../wiki.en.vec"})``);
  it is read and checked before the training data;
* maps the hyperparameters onto :class:`~fasttext_lib.config.TrainConfig`, whose fields the parser
  is derived from (``--batch-size`` and ``--batch_size`` both work; integers may come as
  ``10.0``; booleans are values: ``--progress false``; ``none`` or ``""`` is no value: the default, any one); ``ctx``
  defaults to the ``SM_NUM_GPUS`` GPUs or the CPU; an unknown hyperparameter is refused (with the closest
  known name), except the platform's own (``_tuning_objective_metric``, ``sagemaker_*``), which are ignored; a name
  that is empty, blank or only dashes is refused first, alone (the toolkit writes ``-`` as ``--``, ending the options);
* trains on several hosts with MXNet's ``dist_sync`` kvstore when ``SM_HOSTS`` lists more than one
  (the estimator needs ``distribution={"parameter_server": {"enabled": True}}``);
* checkpoints every epoch to ``--checkpoint-dir`` (default ``/opt/ml/checkpoints`` when that
  directory exists, as it does with ``checkpoint_s3_uri`` / managed spot training) and resumes from it;
* logs one line per epoch, ``epoch=3; train_loss=...; val_loss=...; val_accuracy=0.912300; ...``,
  which :data:`METRIC_DEFINITIONS` (and the tuner's objective, :data:`OBJECTIVE_METRIC`) match;
* saves the bundle to ``SM_MODEL_DIR`` (first host only), the files at the top level, so the job's
  ``model.tar.gz`` is a bundle, and writes ``history.csv``, ``metrics.json`` and ``history.png`` to
  ``SM_OUTPUT_DATA_DIR`` (the job's ``output.tar.gz``).

Every user error (an allocation that failed included: the CLI's ``out of memory`` line) ends in one
``error: ...`` line on stderr and exit status 2, and the same line in
``$SM_OUTPUT_DIR/failure``, the job's FailureReason in the console and DescribeTrainingJob; so does
SIGTERM (``StopTrainingJob``, a spot interruption), after cleaning up. The model dir and the
checkpoint dir are checked before the data is read, and so is that each channel holds files.
"""
import contextlib
import json
import logging
import os
import re
import sys
from typing import NamedTuple

from .cli import OnceParser, column_meant, label_names_meant
from .config import CONFIG_FIELDS, NONE_WORDS, TrainConfig, add_config_arguments
from .errors import SETTINGS_AS_HYPERPARAMETERS, FastTextError, settings_said_as
from .stops import failure_reason, job_failure_file

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

log = logging.getLogger("fasttext_lib.sm_train")

# ---------------------------------------------------------------------------------------------
# Metrics: what the training log says per epoch, and the regexes SageMaker reads it with.
# ---------------------------------------------------------------------------------------------
METRIC_PATTERNS = {
    "train:loss": r"train_loss=([0-9.]+);",
    "validation:loss": r"val_loss=([0-9.]+);",
    "validation:accuracy": r"val_accuracy=([0-9.]+);",
}
OBJECTIVE_METRIC = "validation:accuracy"  # HyperparameterTuner objective (maximize)
VAL_ACCURACY_REGEX = METRIC_PATTERNS[OBJECTIVE_METRIC]
METRIC_DEFINITIONS = [{"Name": name, "Regex": regex} for name, regex in METRIC_PATTERNS.items()]

SAGEMAKER_CHECKPOINT_DIR = "/opt/ml/checkpoints"


def format_epoch(row):
    """One log line per epoch; a metric without a value (no test channel) prints ``nan``, which no regex matches."""
    return ("epoch={epoch}; train_loss={train_loss:.6f}; val_loss={val_loss:.6f}; val_accuracy={val_accuracy:.6f}; "
            "seconds={seconds:.3f}; samples_per_s={samples_per_s:.1f};").format(**row)


# ---------------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------------
class _Parser(OnceParser):
    """The job's hyperparameters; one given in both spellings with different values (``batch-size=64`` and
    ``batch_size=128``) is refused (cli.OnceParser), as the CLI refuses an option given twice: the job trained with
    whichever the toolkit passed last. The values are compared as read (``64`` and ``64.0``, ``none`` and ``""``
    are one)."""

    def error(self, message):  # one line, no usage dump
        raise FastTextError(f"bad hyperparameter: {message}")


def _checkpoint_dir(text):
    """A directory or ``s3://`` URI; ``none`` / ``null`` / ``""``: no checkpoints (``""``)."""
    return "" if str(text).strip().lower() in NONE_WORDS else str(text)


# Each hyperparameter's value is read into one form per meaning (cli._Once compares two spellings' values so read),
# or compared as what it means where it is read later (compared_as: label_names, the column names): label-names=none
# with label_names=None (the toolkit's ""), label_names 1=a,2=b with 2=b, 1=a (the toolkit writes a dict's pairs
# sorted), text_column Text with text were refused as two values.

def _column_name(text):
    """``label_column``: a name, stripped as the columns are matched (columns.csv_columns); None: none given."""
    return None if str(text).strip().lower() in NONE_WORDS else str(text).strip()


def _column_names(text):
    """``text_column``: ``NAME`` or ``NAME,NAME``; or a list, as the SDK sends ``hyperparameters={"text_column":
    ["title", "text"]}`` (JSON), which the training toolkit passes on as Python writes a list, ``['title', 'text']``:
    read as the names ``['title'`` and ``'text']``, it stopped the job ("no column of that name"). None: none given.
    The names are stripped and joined by commas, as columns.csv_columns reads them."""
    text = str(text)
    if text.strip().lower() in NONE_WORDS:
        return None
    names = text.split(",")
    if text.strip().startswith("["):
        import ast

        try:
            listed = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError):
            listed = None
        if isinstance(listed, (list, tuple)) and listed and all(isinstance(n, str) for n in listed):
            names = [n for name in listed for n in name.split(",")]
    return ",".join(n.strip() for n in names if n.strip())


def _columns_meant(names):
    """A ``text_column`` value (:func:`_column_names`) as its columns are found, in order (cli.column_meant)."""
    return None if names is None else tuple(column_meant(name) for name in names.split(","))


# The hyperparameters the job reads several values of, and as what (any other takes one string, number or boolean):
# the SDK sends a list or a dict as JSON, and the toolkit passes a list on as Python writes it (``['title', 'text']``:
# _column_names reads it back), a dict as ``key=value`` pairs (label_names' inline form, ``1=negative,2=positive``).
# What a refusal of the columns names them as (columns.Columns.given_as): the job's hyperparameters, not the CLI's flags.
JOB_COLUMN_SETTINGS = ("label_column", "text_column")
JOB_COLUMNS_ADVICE = "the job's hyperparameters label_column=NAME and text_column=NAME"  # (ColumnsToName.advising)
JOB_FORMAT_SETTING = "the hyperparameter format"  # a file a format would read: format='csv' (formats.FormatToGive)
JOB_LEFT_OUT_READ_BY = "the hyperparameter text_column=NAME"  # (columns.LEFT_OUT_READ_BY in the job's log)
JOB_NAMES_SETTING = "label_names"  # how a refusal of the label names says to give them (the CLI's --label-names)
SEVERAL_VALUES = {"text_column": (list, "a list of column names"), "label_names": (dict, "a dict of classes to names")}


def build_parser():
    from .formats import FORMATS

    # No -h / --help: a hyperparameter of that name printed the usage and exited 0, a job "Completed" without a model
    p = _Parser(prog="entry_point.py", description="fastText training job (SageMaker MXNet script mode)",
                allow_abbrev=False, add_help=False)
    add_config_arguments(p, hyperparameters=True, overrides={
        "ctx": {"help": "auto: the SM_NUM_GPUS GPUs, else the CPU"},
        "kvstore": {"help": "auto: dist_sync on several hosts, else the library's choice"},
        "progress": {"default": False, "help": "tqdm bars in the job log"},
    })
    p.add_argument("--format", default="auto", choices=FORMATS,
                   type=lambda text: "auto" if str(text).strip().lower() in NONE_WORDS else text)
    p.add_argument("--label-column", "--label_column", dest="label_column", default=None, type=_column_name,
                   compared_as=column_meant,
                   help="the class column of CSV or TSV channels with a header row, or JSON Lines' class key "
                        "(default: the one named as a class)")
    p.add_argument("--text-column", "--text_column", dest="text_column", default=None, type=_column_names,
                   compared_as=_columns_meant,
                   help="their text column(s), NAME or NAME,NAME (default: those named as text, and prose)")
    p.add_argument("--checkpoint-dir", "--checkpoint_dir", dest="checkpoint_dir", type=_checkpoint_dir, default=None,
                   help=f"local dir or s3:// URI; default {SAGEMAKER_CHECKPOINT_DIR} when it exists; 'none' disables")
    p.add_argument("--label-names", "--label_names", dest="label_names", default=None, compared_as=label_names_meant,
                   help="what the classes mean: 1=negative,2=positive, a known dataset (ag_news, ...), an s3:// "
                        "names file, or none; default: a classes.txt / *.classes.txt file in the train channel, else "
                        "in the test channel")
    return p


def parse_hyperparameters(argv=None):
    """``--key value`` argv -> (Namespace, ignored arguments)."""
    parser = build_parser()
    return parser.parse_known_args(_values_attached(sys.argv[1:] if argv is None else argv, parser))


def _values_attached(argv, parser):
    """``--name value`` as ``--name=value`` where the value starts with a dash: the toolkit gives every hyperparameter
    its value as the next word, and argparse took ``-1=negative,1=positive`` (label_names of classes -1 and 1) or
    ``-1e-3`` for an option, failing the job with "expected one argument"."""
    options = {opt for action in parser._actions for opt in action.option_strings}
    attached, i = [], 0
    while i < len(argv):
        word = str(argv[i])
        if word in options and i + 1 < len(argv) and str(argv[i + 1]).startswith("-"):
            attached.append(f"{word}={argv[i + 1]}")
            i += 2
        else:
            attached.append(argv[i])
            i += 1
    return attached


# What BlazingText's and fastText's own hyperparameters call ours: the names a user brings from them.
_OTHER_NAMES = {"learning_rate": "lr", "vector_dim": "emsize", "dim": "emsize", "word_ngrams": "ngrams",
                "wordngrams": "ngrams", "mini_batch_size": "batch_size", "epoch": "epochs", "mincount": "min_count"}


def known_hyperparameters():
    """The hyperparameter names this job reads (its options, ``--batch-size`` as ``batch_size``)."""
    return {opt[2:].replace("-", "_") for action in build_parser()._actions for opt in action.option_strings
            if opt.startswith("--")}


def check_unknown(ignored):
    """Refuse the hyperparameters among ``ignored`` (what the parser left) that this job does not know
    (:func:`refuse_unknown`)."""
    refuse_unknown(names_given(ignored))


def names_given(ignored):
    """The hyperparameter names in ``ignored``, the words the parser left of the toolkit's ``--name value ...``: each
    name is followed by its value (the parser takes both words of a name it knows, or its one ``--name=value``), so
    every other word is a name, whatever it looks like. A name that is a number was taken for a value (the toolkit's
    ``-5 1`` for ``{"5": 1}``, ``--55 1``), and only logged as ignored. The toolkit writes a name of two or more
    characters as ``--NAME``, one of one character as ``-N`` and the name ``""`` as ``""``: so ``--`` is the name
    ``-`` (which also ended the parser's options: every word after it is left here), ``-----`` the name ``---``."""
    names, i = [], 0
    while i < len(ignored):
        word = str(ignored[i])
        name, attached, _ = _toolkit_name_of(word).partition("=")
        names.append(name)
        i += 1 if attached and word.startswith("-") else 2
    return names


def _toolkit_name_of(word):
    """The name the training toolkit wrote as ``word`` (sagemaker_utils._toolkit_name writes it so)."""
    if word.startswith("--") and word != "--":
        return word[2:]
    return word[1:] if word.startswith("-") else word


def refuse_nameless(names):
    """Refuse hyperparameter ``names`` that are no name: ``""`` was passed as nothing at all, and the toolkit writes
    ``-`` as ``--``, which ended the job's options, every name after it misread."""
    nameless = [name for name in names if not str(name).strip("- \t")]
    if nameless:
        raise FastTextError(f"bad hyperparameter name(s): {', '.join(repr(str(n)) for n in nameless)} "
                            f"(a name must not be empty, blank or only dashes)")


def refuse_unknown(names):
    """Refuse hyperparameter ``names`` this job does not know: a typo (``learning_rate`` for ``lr``) trained a whole
    job with the default, its only trace a log line. Names starting with ``_`` (the tuner's
    ``_tuning_objective_metric``) or ``sagemaker_`` (the SDK's, should a toolkit pass one on) are the
    platform's, and pass. A name that is no name (:func:`refuse_nameless`) is refused first, alone."""
    import difflib

    refuse_nameless(names)
    unknown = [n for n in names if not n.startswith(("_", "sagemaker_"))]
    if not unknown:
        return
    known = sorted(known_hyperparameters())
    hints = []
    for name in unknown:
        close = [_OTHER_NAMES[name.lower()]] if name.lower() in _OTHER_NAMES else \
            difflib.get_close_matches(name.replace("-", "_"), known, n=1, cutoff=0.6)
        hints.append(f"{name} (did you mean {close[0]}?)" if close else name)
    raise FastTextError(f"unknown hyperparameter(s): {', '.join(hints)}; known: {', '.join(known)}")


class ContainerEnv:
    """The ``SM_*`` variables the training toolkit sets, checked."""

    def __init__(self, environ=None):
        env = os.environ if environ is None else environ
        # The channels first: a job given its training data as "training" was told "SM_CHANNEL_TRAIN not set ...:
        # this runs inside a SageMaker training container", as if it ran outside one.
        _refuse_pipe_mode(_input_modes(env))
        channels = _channel_names(env)
        _refuse_unread_channels(channels)
        if channels and not env.get("SM_CHANNEL_TRAIN"):
            raise FastTextError(f"no train channel (this job's channels: {', '.join(sorted(channels))}): give the "
                                f"training data as fit({{'train': s3_uri, 'test': s3_uri}})")
        missing = [k for k in ("SM_MODEL_DIR", "SM_OUTPUT_DATA_DIR", "SM_CHANNEL_TRAIN") if not env.get(k)]
        if missing:
            hint = " (no 'train' channel: fit({'train': s3_uri, 'test': s3_uri}))" if "SM_CHANNEL_TRAIN" in missing else ""
            raise FastTextError(f"{', '.join(missing)} not set{hint}: this runs inside a SageMaker training container")
        self.model_dir = env["SM_MODEL_DIR"]
        self.output_data_dir = env["SM_OUTPUT_DATA_DIR"]
        self.train_channel = env["SM_CHANNEL_TRAIN"]
        self.test_channel = env.get("SM_CHANNEL_TEST") or env.get("SM_CHANNEL_VALIDATION") or None
        # (the name the user gave it, which the log and errors say: a validation channel was called the test channel)
        # (a job without either: "test", the name the docs give it, for a checkpoint's refusal that asks for one)
        self.test_channel_name = "validation" if env.get("SM_CHANNEL_VALIDATION") and not env.get("SM_CHANNEL_TEST") \
            else "test"
        self.pretrained_channel = env.get("SM_CHANNEL_PRETRAINED") or None
        try:
            hosts = json.loads(env.get("SM_HOSTS") or '["algo-1"]')
        except ValueError:
            raise FastTextError(f"SM_HOSTS is not a JSON list: {env.get('SM_HOSTS')!r}") from None
        if not isinstance(hosts, list) or not hosts or not all(isinstance(h, str) for h in hosts):
            raise FastTextError(f"SM_HOSTS must be a non-empty JSON list of host names, got {env.get('SM_HOSTS')!r}")
        self.hosts = hosts
        if len(hosts) > 1 and _input_modes(env, "S3DistributionType").get("train", "").lower() == "shardedbys3key":
            # every worker takes its share of the same data (train.py): shards would be read as the whole, each
            # host with its own vocabulary (the workers refuse to train so, but only once each has read its shard)
            raise FastTextError("the train channel is ShardedByS3Key: every host must read the whole training data "
                                "(each trains on its own share of it); use S3DataDistributionType FullyReplicated "
                                "(the default)")
        self.current_host = env.get("SM_CURRENT_HOST") or hosts[0]
        if self.current_host not in hosts:
            raise FastTextError(f"SM_CURRENT_HOST {self.current_host!r} is not in SM_HOSTS {hosts}")
        gpus = env.get("SM_NUM_GPUS")
        try:
            self.num_gpus = None if gpus in (None, "") else int(gpus)
        except ValueError:
            raise FastTextError(f"SM_NUM_GPUS is not an integer: {gpus!r}") from None
        try:
            framework = json.loads(env.get("SM_FRAMEWORK_PARAMS") or "{}")
        except ValueError:
            framework = {}
        # The MXNet toolkit starts the scheduler/servers and sets DMLC_ROLE=worker for this script.
        self.parameter_server = bool(isinstance(framework, dict) and framework.get("sagemaker_parameter_server_enabled")) \
            or bool(env.get("DMLC_ROLE"))

    @property
    def distributed(self):
        return len(self.hosts) > 1

    @property
    def is_first_host(self):
        """The host that saves the bundle: the first in sorted order, which also runs the scheduler."""
        return self.current_host == sorted(self.hosts)[0]


READ_CHANNELS = ("train", "test", "validation", "pretrained")  # the channels this job reads
# Channels SageMaker itself adds, read by others: "code" (the source, with enable_network_isolation=True: the toolkit
# reads it), "model" (an estimator's model_uri=).
SAGEMAKER_CHANNELS = ("code", "model")


def _channel_names(env):
    """The job's channels: the toolkit's ``SM_CHANNELS`` (``["test", "train"]``), else the ``SM_CHANNEL_<NAME>``
    variables it sets one per channel."""
    try:
        names = json.loads(env.get("SM_CHANNELS") or "null")
    except ValueError:
        names = None
    if isinstance(names, list) and all(isinstance(n, str) for n in names):
        return names
    return [key[len("SM_CHANNEL_"):].lower() for key in env if key.startswith("SM_CHANNEL_")]


def _refuse_unread_channels(names):
    """A channel this job does not read (``eval``, ``dev``: the validation data under another name) was left unread
    without a word: the job trained without validation, logged no ``val_accuracy`` (a tuner's trials all failed for
    want of their objective metric). So was a ``validation`` channel beside a ``test`` one. SageMaker matches names
    case-insensitively here as in ``SM_CHANNEL_TRAIN``. The channels SageMaker adds (:data:`SAGEMAKER_CHANNELS`) are
    not the user's to give, and pass."""
    import difflib

    unread = sorted(n for n in names if n.lower() not in READ_CHANNELS + SAGEMAKER_CHANNELS)
    if unread:
        # a name close to one the job reads (training, testing, valid) is that channel misnamed: said so, for the
        # remedy is then another name, not the validation data given as test
        given = {n.lower() for n in names}
        given |= {"test", "validation"} if given & {"test", "validation"} else set()  # (one channel, two names)
        meant = [(difflib.get_close_matches(n.lower(), [c for c in READ_CHANNELS if c not in given], n=1, cutoff=0.6),
                  n) for n in unread]
        meant = [f"{close[0]} for {n}" for close, n in meant if close]
        remedy = f"did you mean {', '.join(meant)}? " if meant else "give the validation data as "
        raise FastTextError(f"the {' and '.join(unread)} channel{'s are' if len(unread) > 1 else ' is'} not read by "
                            f"this job, which reads train, test (or validation) and pretrained: {remedy}"
                            f"fit({{'train': ..., 'test': ...}})")
    if {"test", "validation"} <= {n.lower() for n in names}:
        raise FastTextError("the test and validation channels are both given: give the job's validation data as one of "
                            "them (the job reads one)")


def _input_modes(env, setting="TrainingInputMode"):
    """``{channel: TrainingInputMode}`` from the toolkit's ``SM_INPUT_DATA_CONFIG`` (the job's InputDataConfig,
    ``{"train": {"TrainingInputMode": "Pipe", ...}}``), or the ``input_data_config`` of ``SM_TRAINING_ENV``;
    ``{}`` where neither says (a hint only: the channel directories are what is read). ``setting``: another
    of a channel's settings (``S3DistributionType``)."""
    for name, key in (("SM_INPUT_DATA_CONFIG", None), ("SM_TRAINING_ENV", "input_data_config")):
        try:
            config = json.loads(env.get(name) or "{}")
        except ValueError:
            continue
        if key is not None:
            config = config.get(key) if isinstance(config, dict) else None
        if isinstance(config, dict) and config:
            return {channel: str(c.get(setting, "")) for channel, c in config.items() if isinstance(c, dict)}
    return {}


def _refuse_pipe_mode(modes, found_as=""):
    """Pipe input mode streams a channel through FIFOs (``/opt/ml/input/data/train_0``, one per epoch) and
    creates no channel directory: the job said "train channel directory does not exist", naming no cause."""
    piped = [channel for channel in READ_CHANNELS if modes.get(channel, "").lower() == "pipe"]
    if piped:
        raise FastTextError(f"the {' and '.join(piped)} channel{'s are' if len(piped) > 1 else ' is'} in Pipe input "
                            f"mode{found_as}, which this job does not read (it reads a channel's files); use File mode (the default) or FastFile: the estimator's input_mode, or "
                            f"TrainingInput(s3_uri, input_mode='FastFile')")


def plan_training(args, env, default_checkpoint_dir=SAGEMAKER_CHECKPOINT_DIR):
    """Hyperparameters + container -> (``TrainConfig`` keyword arguments, extra ``train()`` keyword arguments).

    ``kvstore`` enters the config only when it is not ``auto`` (``dist_sync`` on several hosts) and
    ``checkpoint_dir`` only when one is configured, so a single-host run without checkpoints uses
    the plain ``TrainConfig``/``train()`` interface.
    """
    ctx = args.ctx
    if str(ctx).strip().lower() == "auto" and env.num_gpus is not None:
        ctx = ("gpu:" + ",".join(str(i) for i in range(env.num_gpus))) if env.num_gpus > 0 else "cpu"
    config = {name: getattr(args, name) for name in CONFIG_FIELDS if name != "kvstore"}
    config["ctx"] = ctx
    config["pretrained_vectors"] = pretrained_source(args.pretrained_vectors, env.pretrained_channel)
    kvstore = str(args.kvstore or "auto").strip()
    if env.distributed:
        if not env.parameter_server:
            raise FastTextError(
                f"{len(env.hosts)} hosts but no parameter server: create the estimator with "
                "distribution={'parameter_server': {'enabled': True}} (sagemaker_utils.make_estimator does)")
        if kvstore == "auto":
            kvstore = "dist_sync"
        elif not kvstore.startswith("dist_"):
            raise FastTextError(f"kvstore {kvstore!r} cannot train on {len(env.hosts)} hosts; use dist_sync")
    if kvstore != "auto":
        config["kvstore"] = kvstore
    extra = {}
    checkpoint_dir = args.checkpoint_dir  # "": given as none / null / "": no checkpoints
    if checkpoint_dir is None:  # not given: SageMaker's directory if the job has one
        if default_checkpoint_dir and os.path.isdir(default_checkpoint_dir):
            checkpoint_dir = default_checkpoint_dir
    if checkpoint_dir:
        # Distributed: train() writes checkpoints from worker 0 only, so the one S3 prefix SageMaker
        # syncs every host's directory to holds a single run's checkpoints, and after a restart
        # every host reads the same one (all workers must resume at the same epoch).
        extra["checkpoint_dir"] = checkpoint_dir
    return config, extra


def check_devices(ctx, asked, env):
    """The devices ``ctx`` names, before any data is read: an SM_NUM_GPUS the job's MXNet sees no GPU of (a CPU build
    of MXNet in a custom image on a GPU instance) stopped the job once the training data had been read (minutes at
    Yelp size), as "ctx 'gpu:0,1' asks for a GPU", a ctx the user never gave."""
    from .devices import parse_ctx

    try:
        parse_ctx(ctx)
    except FastTextError:
        if str(asked).strip().lower() != "auto" or not env.num_gpus:
            raise
        import mxnet as mx

        raise FastTextError(f"SM_NUM_GPUS is {env.num_gpus} but this job's MXNet sees {mx.context.num_gpus()} GPU(s) "
                            f"(ctx {ctx}): run the MXNet GPU image (a CUDA build of MXNet) on a GPU instance, or give "
                            f"the hyperparameter ctx=cpu") from None


def pretrained_source(value, channel):
    """The ``.vec`` file a job reads: ``value`` (the ``pretrained_vectors`` hyperparameter) as given when it is
    an ``s3://`` URI or an absolute path, else a file of the ``pretrained`` channel (``channel``: its
    directory): the one named ``value``, or without ``value`` its only file. ``None``: no pretrained vectors."""
    from . import storage

    if channel is None:
        _refuse_what_no_job_reads(value)
        return value
    if value is not None and os.path.isabs(value) and os.path.abspath(value) == os.path.abspath(channel):
        value = None  # (the channel's folder itself: its one file)
    inside = value is not None and os.path.isabs(value) and \
        os.path.abspath(value).startswith(os.path.join(os.path.abspath(channel), ""))
    if inside:
        return value
    if value is not None and (storage.is_s3(value) or os.path.isabs(value)):
        # (the channel, downloaded, gigabytes for wiki.en.vec, was left unread without a word)
        raise FastTextError(f"both the pretrained channel ({channel}) and the pretrained_vectors hyperparameter "
                            f"({value}) name the pretrained vectors: give one (pretrained_vectors may name a file of "
                            f"the channel)")
    if value is None:
        files = list_channel(channel, "pretrained").files
        if len(files) != 1:
            raise FastTextError(f"pretrained channel {channel} holds {len(files)} files; name the .vec file with the "
                                f"pretrained_vectors hyperparameter")
        return files[0]
    path = os.path.join(channel, value)
    if not os.path.isfile(path):
        raise FastTextError(f"pretrained_vectors {value!r} is not a file of the pretrained channel ({channel})")
    return path


_WHAT_A_JOB_READS = ("give them as the pretrained channel (fit({'train': ..., 'pretrained': 's3://bucket/wiki.en.vec'})) "
                     "or as an s3:// URI (pretrained_vectors=s3://bucket/wiki.en.vec)")
_STANDARD_INPUT = ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")


def _refuse_what_no_job_reads(value):
    """Refuse a ``pretrained_vectors`` (no pretrained channel) that is standard input or a local name of no file: a
    pipe, a device, a directory. A job, started by SageMaker, has no standard input of the user's nor anyone to write
    a pipe: its read waited for ever (a FIFO, a pipe kept open) or met "an empty file" (/dev/null), once the data was
    read (the start check skips what can be read once only). (TrainConfig's refusal of ``-`` is the command line's:
    "give pretrained_vectors /dev/stdin", which a job cannot follow.) A missing file is named by the start check."""
    from . import storage

    if value is None or storage.is_s3(value):
        return
    if value in _STANDARD_INPUT:
        raise FastTextError(f"pretrained_vectors {value}: a training job has no standard input to read the vectors "
                            f"from; {_WHAT_A_JOB_READS}")
    kind = storage.local_kind(value)
    if kind not in (None, "a file"):
        raise FastTextError(f"pretrained_vectors {value}: {kind}, not a file: a training job reads the vectors from a "
                            f"file; {_WHAT_A_JOB_READS}")


class ChannelListing(NamedTuple):
    """What a channel holds (:func:`list_channel`), found by one walk of its directory and passed along: the job
    walked it three times at its start (the check that it holds data, its names files, its read)."""
    path: str
    files: list  # the data files, regular, non-hidden, non-empty, in path order
    names_files: list  # classes.txt, *.classes.txt: the label names, not data
    empty: list  # empty files (Spark's, Glue's, EMR's part file per empty partition): no documents, skipped
    marked: list  # Hadoop's, Spark's, Hive's names (relative to the channel, a folder's with a /): never data


def list_channel(path, name):
    """A channel's files (:class:`ChannelListing`), refusing one that holds no data file (``name``: the channel's,
    for the line).

    Label names files (``classes.txt``, ``*.classes.txt``) are not data. Empty files hold no documents: a folder
    Spark, Glue or EMR wrote has a zero-byte part file per empty partition. Only empty files: an error. The names
    Hadoop, Spark and Hive write beside the data (files and folders: :func:`is_job_marker`) are markers, metadata and
    temporary files, never data. Other names starting with ``_`` are read: a user's ``_x.csv`` is data (every such
    name was skipped, as Spark's and Hadoop's readers skip them, and a user's file left out of training with a log
    line)."""
    if os.path.isfile(path):
        return ChannelListing(path, [path], [], [], [])
    if not os.path.isdir(path):
        if _is_fifo(f"{path}_0"):  # what Pipe mode creates instead (the environment did not say: checked above)
            _refuse_pipe_mode({name: "Pipe"}, f" ({path}_0 is a pipe)")
        raise FastTextError(f"{name} channel directory does not exist: {path}")
    files, skipped = [], []
    for root, dirs, names in os.walk(path):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        skipped.extend(os.path.relpath(os.path.join(root, d), path) + "/" for d in dirs if is_job_marker(d))
        skipped.extend(os.path.relpath(os.path.join(root, n), path) for n in names if is_job_marker(n))
        dirs[:] = [d for d in dirs if not is_job_marker(d)]
        files.extend(os.path.join(root, n) for n in names if not n.startswith(".") and not is_job_marker(n))
    skipped.sort()
    from .label_names import is_names_file

    names = sorted(f for f in files if is_names_file(f))
    files = [f for f in files if not is_names_file(f)]
    if not files and names:  # (it holds a file the job reads: "no files" sent the user looking for an empty prefix)
        what = "the class names file" + ("s" if len(names) > 1 else "")
        why = f" ({_some(skipped)} skipped: {MARKERS_ARE}, never read as data)" if skipped else ""
        listed = _some([os.path.relpath(f, path) for f in names])
        raise FastTextError(f"{name} channel {path} holds only {what} {listed} and no data file{why}: check the S3 "
                            f"prefix given to fit()")
    if not files and skipped:
        raise FastTextError(f"{name} channel {path} holds no data files: {_some(skipped)} skipped ({MARKERS_ARE}, "
                            f"never read as data): check the S3 prefix given to fit()")
    if not files:
        raise FastTextError(f"{name} channel {path} holds no files (check the S3 prefix given to fit())")
    empty = sorted(f for f in files if os.path.isfile(f) and os.path.getsize(f) == 0)
    if len(empty) == len(files):
        raise FastTextError(f"{name} channel {path} holds only empty files "
                            f"({', '.join(os.path.relpath(f, path) for f in empty[:3])}{', ...' if len(empty) > 3 else ''}): "
                            f"check the S3 prefix given to fit()")
    return ChannelListing(path, sorted(set(files) - set(empty)), names, empty, skipped)


def _listed(channel, name):
    """``channel`` as its :class:`ChannelListing`: as given, or listed when given as its directory."""
    return channel if isinstance(channel, ChannelListing) else list_channel(channel, name)


# The names Hadoop, Spark and Hive write beside the data in an output folder (files or folders), never data: Hadoop's
# _SUCCESS (an S3A committer's is a JSON summary) and its _temporary/ (a failed or running job's partial copies of its
# part files), the S3A magic committer's __magic/ (__magic_job-<id>/ in newer versions), Databricks' commit markers
# _started_<id> / _committed_<id>, Structured Streaming's _spark_metadata/, Delta Lake's _delta_log/, Parquet's summary
# files _metadata / _common_metadata, old MapReduce's _logs/, Hive's _tmp.<file> / _task_tmp.<file> (files being
# written). Hadoop's checksums (.<file>.crc) start with a dot: hidden files, skipped as such. Spark's and Hadoop's
# readers skip every name starting with _, but a SageMaker channel is the user's folder: their _x.csv is data.
_MARKER_NAMES = frozenset({"_SUCCESS", "_temporary", "_spark_metadata", "_delta_log", "_metadata", "_common_metadata",
                           "_logs"})
_MARKER_PREFIXES = ("__magic", "_started_", "_committed_", "_tmp.", "_task_tmp.")
MARKERS_ARE = "Hadoop's, Spark's and Hive's markers, metadata and temporary files"


def is_job_marker(name):
    """Is ``name`` (a file's or folder's, without its path) one Hadoop, Spark or Hive writes beside the data?"""
    return name in _MARKER_NAMES or name.startswith(_MARKER_PREFIXES)


def _some(names, most=10):
    """``names`` for a line: the first ``most``, then ``...``."""
    return ", ".join(names[:most]) + (", ..." if len(names) > most else "")


def _is_fifo(path):
    from . import storage

    return storage.local_kind(path) == "a pipe"


def channel_names(channel, name):
    """The label names a channel holds (``channel``: its directory or its :class:`ChannelListing`): ``(its first
    names file, their mapping, whether they are surely its data's: label_names.named_for)``, None when it holds none.
    All of them, when several, must agree."""
    from .label_names import named_for, read_file

    path, files, names_files = _listed(channel, name)[:3]
    if not names_files:
        return None
    found = [read_file(f) for f in names_files]
    if any(m != found[0] for m in found[1:]):
        raise FastTextError(f"{name} channel holds label names files that disagree: "
                            f"{', '.join(os.path.relpath(f, path) for f in names_files)}")
    return names_files[0], found[0], all(any(named_for(n, f) for f in files) for n in names_files)


class ChannelNames(NamedTuple):
    """The label names the job's channels hold (:func:`names_of_channels`), each ``(names file, its mapping, whether
    it is surely its data's)`` (:func:`channel_names`) or None."""
    train: object = None  # the train channel's: read_channel keeps them for the training data's classes
    test_only: object = None  # the test channel's, the train channel holding none: read_and_train.read_splits's
    #                           beside_validation, checked against both channels' classes (the CLI's --validation's)


def names_of_channels(train_channel, test_channel, test_name="test"):
    """The label names of a job without the ``label_names`` hyperparameter (:class:`ChannelNames`; each channel its
    directory or its :class:`ChannelListing`): the train channel's, else the test channel's, as train --validation
    and notebook 01 take those beside the test data (they were skipped as not data: the bundle said the classes'
    ids). Read before any data (minutes at Yelp size); names in both that name a class differently are refused:
    which is right is the user's to say."""
    from .label_names import refuse_disagreeing

    train = _listed(train_channel, "train")
    test = _listed(test_channel, test_name) if test_channel else None
    in_train = channel_names(train, "train")
    in_test = channel_names(test, test_name) if test else None
    if in_train is None:
        return ChannelNames(test_only=in_test)
    if in_test is not None:
        refuse_disagreeing((f"the train channel's {os.path.relpath(in_train[0], train.path)}", in_train[1]),
                           (f"the {test_name} channel's {os.path.relpath(in_test[0], test.path)}", in_test[1]),
                           " (or give the label_names hyperparameter)")
    return ChannelNames(train=in_train)


def read_channel(channel, fmt="auto", name="train", counted=False, names=None):
    """All documents of a channel (its directory or its :class:`ChannelListing`): its files read together by
    :func:`~fasttext_lib.data.read_labeled`, in order.

    ``names``: the label names found in the channel before any data was read (:func:`names_of_channels`'s ``train``),
    kept for the labels the data has. ``counted=True`` (the training channel): tokenized and
    counted as the files stream (:func:`~fasttext_lib.data.read_counted`), so the texts are never all in memory."""
    from .columns import LEFT_OUT_READ_BY, ColumnsToName
    from .data import read_counted, read_labeled
    from .formats import FormatToGive
    from .label_names import kept_for_data

    path, files, _, empty, marked = _listed(channel, name)
    if marked:
        print(f"{name} channel: skipped {len(marked)} name(s) of {MARKERS_ARE} (not data): {_some(marked)}",
              flush=True)
    if empty:
        print(f"{name} channel: skipped {len(empty)} empty file(s): {_some([os.path.relpath(f, path) for f in empty])}",
              flush=True)

    def note(line):  # how a file was read (pandas' index column left out), in the job's log, in the job's terms
        print(line.replace(f"({LEFT_OUT_READ_BY} reads", f"({JOB_LEFT_OUT_READ_BY} reads"), flush=True)

    # One read of all the files: a class is read alike in each (data.whole_number_classes), as one file's would be.
    try:
        data = read_counted(files, fmt, note=note) if counted else read_labeled(files, fmt, find_names=False, note=note)
    except ColumnsToName as exc:  # (a header that does not tell its columns: advised as the CLI's flags)
        raise exc.advising(JOB_COLUMNS_ADVICE) from None
    except FormatToGive as exc:  # (a file a format given would read: said as the CLI's --format)
        raise exc.given_as(JOB_FORMAT_SETTING) from None
    print(f"{name} channel: {len(data)} documents from {len(files)} file(s)", flush=True)
    if names is not None:  # a classes.txt must fit the data, a.classes.txt beside a.train need only name its classes
        names_file, found, subset = names
        data.names = kept_for_data(found, data.labels, names_file, subset=subset, option=JOB_NAMES_SETTING)
    return data


def save_model(trained, model_dir, on_commit=None):
    """Publish the bundle straight into ``model_dir`` (storage.publish fills a directory in place:
    ``SM_MODEL_DIR`` may be a mount point, so it is never replaced by a rename).

    Files readable by all (the serving container may not run as root); the lock file goes, as
    nothing else publishes here, so the job's ``model.tar.gz`` holds exactly the bundle.
    ``on_commit``: save_bundle's, called the moment the bundle is in place (before the steps after it).
    """
    from . import storage
    from .bundle import save_bundle, stored_names
    from .bundle_format import CONFIG

    try:
        save_bundle(trained, model_dir, on_commit=on_commit)
    finally:  # also after a failed save: what is left there is the previous bundle, whole
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(model_dir, storage.LOCK_NAME))
    config = storage.read_manifest(model_dir, CONFIG)
    for name in stored_names(config):
        os.chmod(os.path.join(model_dir, name), 0o644)
    return model_dir


@contextlib.contextmanager
def _public_file(path, mode="wb", on_written=None):
    """An atomically written file, readable by all (the serving container may not run as root). ``on_written(path)``:
    it is one of the job's files written one after the other (its metrics), and this is called once it is in place
    (storage.one_of_several_files: a stop during its write says it was cleaned up)."""
    from . import storage

    with (storage.atomic_local_file(path, mode) if on_written is None
          else storage.one_of_several_files(path, on_written, mode)) as f:
        yield f
        os.chmod(f.fileno(), 0o644)


def write_metrics(trained, output_dir, extra=None, held_out="test", on_written=lambda name: None):
    """``history.csv``, ``metrics.json`` and ``history.png`` (accuracy and loss per epoch) in ``output_dir``, each on
    its own, ``on_written(name)`` called as each is in place (the job's KeptCheckpoint.also_written: a stop's line
    names those written, and the one whose write it cleaned up).

    The table and the plot are notebook 02's (``TrainedModel.history_frame``, figures.plot_history): ``held_out``
    names the split the held-out columns were scored on, and so the columns (the job's channel: ``test_accuracy`` or
    ``validation_accuracy``, ...; None: the job had none, no such columns, and the plot draws no held-out line). Written by hand, the table said ``nan`` where 02's leaves the
    cell empty, and the plot called a validation channel "test" and ticked a one-epoch run at fractions of an epoch."""
    from .bundle import metrics_summary

    def written(path):
        on_written(os.path.basename(path))

    os.makedirs(output_dir, exist_ok=True)
    with _public_file(os.path.join(output_dir, "history.csv"), "w", written) as f:
        f.write(trained.history_frame(held_out).to_csv())
    metrics = {**metrics_summary(trained), "labels": list(trained.labels), "label_names": dict(trained.label_names),
               **(extra or {})}
    with _public_file(os.path.join(output_dir, "metrics.json"), "w", written) as f:
        json.dump(metrics, f, indent=2)
    names = ["history.csv", "metrics.json"]
    if _plot_history(trained, held_out, os.path.join(output_dir, "history.png"), written):
        names.append("history.png")
    return names


def _plot_history(trained, held_out, path, on_written):
    """``history.png``: figures.plot_history of ``trained``'s history, drawn off screen (the job has no display)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        log.warning("matplotlib is not installed: no history.png")
        return False
    from .figures import plot_history, settings_title

    fig = Figure(figsize=(10, 3.5))
    FigureCanvasAgg(fig)
    plot_history(fig, trained.history_frame(held_out), held_out, settings_title(trained.config))
    with _public_file(path, "wb", on_written) as f:
        fig.savefig(f, format="png", dpi=100)
    return True


def run_training(argv=None, environ=None):
    """The training job: hyperparameters from ``argv``, data and destinations from the ``SM_*`` variables. A line that
    names a setting names the job's hyperparameter (config.setting_said: a pretrained file of another dimension, a
    warning of the checkpoints'), not the command line's flag."""
    with settings_said_as(SETTINGS_AS_HYPERPARAMETERS):
        return _run_training(argv, environ)


def _run_training(argv, environ):
    from . import __version__
    from .columns import csv_columns

    from . import cluster

    args, ignored = parse_hyperparameters(argv)
    refuse_nameless(names_given(ignored))  # before anything reads args: the options after a "-" were not parsed
    env = ContainerEnv(environ)
    cluster.REPORTERS.append(lambda line: write_failure(line, environ))  # a lost host's line: the FailureReason too
    config_kwargs, train_kwargs = plan_training(args, env)
    print(f"fasttext_lib {__version__} from {PACKAGE_DIR}; "
          f"host {env.current_host} of {len(env.hosts)}", flush=True)
    check_unknown(ignored)
    if ignored:
        print(f"ignored arguments: {' '.join(ignored)}", flush=True)
    config = TrainConfig(**config_kwargs)  # validates the values
    fmt = csv_columns(args.format, args.label_column, [args.text_column] if args.text_column else None,
                      given_as=JOB_COLUMN_SETTINGS)
    if env.is_first_host:  # fail fast: an unwritable model or output dir is found before training, not after
        from . import storage
        from .bundle import check_output
        check_output(env.model_dir)
        storage.check_writable(env.output_data_dir)  # history.csv, metrics.json: a traceback once all was trained
    cluster.check_kvstore_environment(config.kvstore)
    check_devices(config.ctx, args.ctx, env)
    search = None  # what the checkpoint dir holds, found before the channels are read: the resume goes on from it
    if train_kwargs.get("checkpoint_dir"):
        from . import storage
        from .bundle import refuse_checkpoints_in_output

        from .checkpoints import refuse_an_older_format, refuse_other_settings

        if env.is_first_host:
            refuse_checkpoints_in_output(train_kwargs["checkpoint_dir"], env.model_dir, "checkpoint_dir", "SM_MODEL_DIR")
        storage.check_writable(train_kwargs["checkpoint_dir"])
        try:  # before the channels are read; in SageMaker's synced dir an incomplete newest is set aside at the resume
            search = refuse_an_older_format(train_kwargs["checkpoint_dir"], config.epochs,
                                            synced=is_synced(train_kwargs["checkpoint_dir"]))
            # (what is known without the data: train() is given this search, and looks no further before reading)
            refuse_other_settings(train_kwargs["checkpoint_dir"], search, config, validated=bool(env.test_channel),
                                  score_train=False, num_workers=cluster.workers_to_come(config.kvstore))
        except FastTextError as exc:
            raise FastTextError(in_job_terms(str(exc), train_kwargs["checkpoint_dir"],
                                             test_name=env.test_channel_name)) from None
    from .checkpoints import KeptCheckpoint

    kept = KeptCheckpoint(train_kwargs.get("checkpoint_dir"), search)  # a stop's line says it, and how a job resumes
    with kept.told_on_a_stop():
        return _train_and_save(args, env, config, fmt, train_kwargs, search, kept)


def _train_and_save(args, env, config, fmt, train_kwargs, search, kept):
    """The job once its settings and checkpoints are checked: the channels listed, the model trained on them (from the
    checkpoint ``search`` found, if any), the bundle and metrics saved. ``kept``: the checkpoint the job's directory
    keeps, as a stop tells it (checkpoints.KeptCheckpoint)."""
    from . import label_names

    explicit_names = label_names.from_option(args.label_names) if args.label_names is not None else None
    channels = _list_channels(env, explicit_names)
    _check_pretrained_start(config)
    trained = _read_and_train(channels, env, config, fmt, explicit_names, train_kwargs, search, kept)
    _say_how_it_trained(trained)
    if env.is_first_host:
        _save_outputs(trained, env, train_kwargs, kept, validated=channels.test is not None)
    else:
        print(f"{env.current_host} is not the first host: the bundle is saved by {sorted(env.hosts)[0]}", flush=True)
    return 0


class _Channels(NamedTuple):
    """The job's data channels as listed before any is read (:func:`_list_channels`)."""
    train: ChannelListing
    test: object  # the test (or validation) channel's ChannelListing, None without one
    names: object  # names_of_channels' ChannelNames (none with the label_names hyperparameter)


def _list_channels(env, explicit_names):
    """The train and test channels listed (each once: the listing is passed along to the names and the read), and the
    names files they hold (``explicit_names``: the label_names hyperparameter's, which wins over them)."""
    # Both channels hold files: an empty (or missing) test channel was found only after the training data (minutes
    # at Yelp size), an empty train channel only after the pretrained vectors (a wiki .vec file: gigabytes) were read
    train = list_channel(env.train_channel, "train")
    test = list_channel(env.test_channel, env.test_channel_name) if env.test_channel else None
    # the names files too, the test channel's with the train channel's (two that disagree fail the job here)
    names = names_of_channels(train, test, env.test_channel_name) if explicit_names is None else ChannelNames()
    return _Channels(train, test, names)


def _check_pretrained_start(config):
    """A wrong pretrained vectors file fails the job before the data is read (train reads it whole later)."""
    if config.pretrained_vectors:
        from .vec_files import check_vec_start

        check_vec_start(config.pretrained_vectors, dim=config.emsize)


def _read_and_train(channels, env, config, fmt, explicit_names, train_kwargs, search, kept):
    """The test channel read, then the train channel (counted: its texts never all in memory), and the model trained
    on them (read_and_train.read_then_train, as the CLI's train), one log line per epoch, in the job's terms. Names
    found in the test channel only name the training data's classes once checked against both channels' (as the CLI
    checks those beside --validation: read_and_train.read_splits's ``beside_validation``)."""
    from .read_and_train import read_then_train

    test_name = env.test_channel_name
    read_test = (lambda: read_channel(channels.test, fmt, test_name)) if channels.test is not None else None
    return read_then_train(
        read_test, lambda: read_channel(channels.train, fmt, "train", names=channels.names.train, counted=True), config,
        kept, explicit_names=explicit_names, names_as=JOB_NAMES_SETTING, say=lambda line: print(line, flush=True),
        beside_validation=channels.names.test_only,
        in_own_terms=lambda line: in_job_terms(line, train_kwargs.get("checkpoint_dir"), test_name=test_name),
        on_epoch_end=lambda row: print(format_epoch(row), flush=True), checkpoint_search=search,
        val_name=f"the {test_name} channel", **train_kwargs)  # (as the CLI names its --validation file)


def _say_how_it_trained(trained):
    """The log's lines of how the model started and trained: the pretrained vectors' rows, the devices and the
    optimizer settings used (lr / batch_size left unset, or "none", came from the data)."""
    from .devices import describe_ctx
    from .pretrained import start_line

    used = trained.config
    # (read by train once the vocabulary was known: the rows of its words only; with progress on, train said this
    # line as training started, as the CLI's train does: said again here, the log had it twice)
    if trained.pretrained and not used.progress:
        print(start_line(trained.pretrained, used.pretrained_vectors), flush=True)  # (the CLI's and autotune's line)
    print(f"trained on {describe_ctx(trained.ctx)}; {used.optimizer} lr={used.lr:g} batch={used.batch_size}", flush=True)


def _save_outputs(trained, env, train_kwargs, kept, validated):
    """The first host's outputs: the bundle in SM_MODEL_DIR (``kept`` told the moment it is in place: a stop from its
    commit on says so), history.csv, metrics.json and history.png in SM_OUTPUT_DATA_DIR (``validated``: the job had
    a test channel, which the plot names)."""
    save_model(trained, env.model_dir, on_commit=kept.bundle_written)
    written = write_metrics(trained, env.output_data_dir,
                            {"train_config": trained.config.to_dict(), "hosts": env.hosts, "train_kwargs": train_kwargs},
                            held_out=env.test_channel_name if validated else None,
                            on_written=lambda name: kept.also_written(name, env.output_data_dir))
    print(f"bundle written to {env.model_dir}; {', '.join(written)} to {env.output_data_dir}", flush=True)


def is_synced(checkpoint_dir, synced_dir=None):
    """Whether ``checkpoint_dir`` is the directory SageMaker syncs with the job's ``checkpoint_s3_uri``
    (``synced_dir``: /opt/ml/checkpoints, plan_training's default), copied from it when a job starts."""
    synced_dir = synced_dir or plan_training.__defaults__[0]
    return bool(synced_dir) and not re.match(r"[a-z0-9]+://", checkpoint_dir) and \
        os.path.abspath(checkpoint_dir) == os.path.abspath(synced_dir)


# A checkpoint refusal's remedy, as the CLI says it (checkpoints.py), -> as a job's user acts on it. Each pattern
# matches the remedy's own words only: "remove it" anywhere (a label, a setting's value, a path before the remedy)
# was rewritten as if it were the checkpoint directory's removal.
_SYNCED_REMEDIES = (
    (r"remove that directory|remove it(?= to resume from an earlier one)",
     "delete that epoch's folder under the job's checkpoint_s3_uri"),
    (r"(?<=--checkpoint-dir or )remove it\b|\bremove it(?= or use another --checkpoint-dir)",
     "delete the job's checkpoint_s3_uri prefix"),
    (r"another --checkpoint-dir", "another checkpoint_s3_uri (or the hyperparameter checkpoint_dir=none)"),
    (r"this --checkpoint-dir", "this checkpoint_s3_uri"),
)
_HYPERPARAMETER_REMEDIES = (
    (r"another --checkpoint-dir", "another checkpoint_dir hyperparameter"),
    (r"this --checkpoint-dir", "this checkpoint_dir hyperparameter"),
    (r"the --validation it was written with", "the {test_name} channel it was written with"),
)


def in_job_terms(message, checkpoint_dir, synced_dir=None, test_name="test"):
    """A checkpoint refusal said what to do in the CLI's terms ("remove it or use another --checkpoint-dir"): in a
    job whose checkpoints SageMaker copied from its ``checkpoint_s3_uri`` into ``/opt/ml/checkpoints`` (``synced_dir``;
    a spot restart, or a new job given the same prefix), that is a directory of a container gone with the job and a
    flag the job has none of. Said as the S3 prefix and the hyperparameters instead, and --validation as the job's
    channel, named as it was given (``test_name``: test or validation)."""
    if not checkpoint_dir or not re.match(r"(cannot resume from )?checkpoint ", message):
        return message
    from .checkpoints import rerun_settings_said

    synced = is_synced(checkpoint_dir, synced_dir)
    message = rerun_settings_said(message, _as_hyperparameters)
    for pattern, said in (_SYNCED_REMEDIES if synced else ()) + _HYPERPARAMETER_REMEDIES:
        message = re.sub(pattern, said.replace("{test_name}", test_name), message)
    if synced:
        message += f"; SageMaker copies that prefix to {checkpoint_dir} when a job starts"
    return message


def _as_hyperparameters(settings):
    """A refusal's settings to rerun with (checkpoints.rerun_settings' pairs) as the job's hyperparameters: ``the
    hyperparameters epochs=2, seed=42`` (a --seed beside the epochs was said as the CLI's flag)."""
    said = [f"{name}={value}" if value is not None else f"no {name}" for name, value in settings]
    return f"the hyperparameter{'s' if len(said) > 1 else ''} {', '.join(said)}"


def resumed_by_a_job(checkpoint_dir, synced_dir=None):
    """How a job resumes from the checkpoint a stopped one kept in ``checkpoint_dir``, as its stop's line says it after
    the checkpoint's place (stops.stop_message): the CLI's "run the same command again" is no way to restart a job.
    /opt/ml/checkpoints (``synced_dir``) goes with the container: SageMaker copies it to the job's checkpoint_s3_uri,
    which a managed spot training restart, or a new job given it, copies back."""
    if is_synced(checkpoint_dir, synced_dir):
        return (", which SageMaker copies to the job's checkpoint_s3_uri: a job started with that checkpoint_s3_uri "
                "(a managed spot training restart is) resumes from it")
    return ": a job started with the same checkpoint_dir hyperparameter resumes from it"


def write_failure(message, environ=None):
    """Write ``message`` to ``$SM_OUTPUT_DIR/failure``, which SageMaker shows as the job's FailureReason.

    The training toolkit writes its own (``ExecuteUserScriptError ... ErrorMessage ""``) only when
    that file does not exist yet, so the job's first line of explanation is ours. Outside a container
    (no ``SM_OUTPUT_DIR`` and no ``/opt/ml/output``) nothing is written.
    """
    path = job_failure_file(environ)
    if path is None:
        return None
    try:
        with _public_file(path, "w") as f:
            f.write(failure_reason(message))
    except OSError as exc:  # the job still fails with its error line; say why the reason is missing
        log.warning("could not write %s: %s", path, exc)
        return None
    return path


def clear_failure(environ=None):
    """Remove a ``failure`` file an earlier job left in this output dir (a local rerun in the same tree;
    SageMaker gives every job a fresh one): a job that succeeds must not show the last one's reason."""
    path = job_failure_file(environ)
    if path is None:  # (outside a container)
        return
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("could not remove the earlier job's %s: %s", path, exc)


def main(argv=None, environ=None, lean_mxnet=False):
    """The training job. ``lean_mxnet`` (the job's own process, entry_point.py): MXNet is started here, as the CLI
    starts it (mxnet_env.start_mxnet): its environment checked before the import, so that a value it cannot run
    with (``OMP_NUM_THREADS=abc``, ``ulimit -v`` too low) is one error line and the job's FailureReason; it
    aborted inside MXNet's import (exit 134), with no line of ours.

    In the job's own process a signal until ``stop_on_signals`` below is armed (MXNet's start: ~0.5 s) stops it at
    once with one error line, the same line as the FailureReason and the signal's status (143 for SIGTERM), as the
    CLI stops; armed already where the package's import began the job (fasttext_lib/__init__.py). It stays armed
    to the process's end: a signal after the job's own stop has no cleanup left to wait for."""
    import traceback

    from . import cluster
    from .errors import bug_reason, error_line, exit_after_a_bugs_traceback_if_joined, is_out_of_memory, out_of_memory_line
    from .stops import stop_at_once_on_signals, stop_message, stop_on_signals

    if lean_mxnet:
        stop_at_once_on_signals(failure_file=job_failure_file(environ))
    os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
    clear_failure(environ)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("sagemaker.config").setLevel(logging.WARNING)

    try:
        if lean_mxnet:
            from .mxnet_env import start_mxnet

            start_mxnet()
        with stop_on_signals(), cluster.caller_tells():  # StopTrainingJob / spot: SIGTERM -> clean up, one error line
            return run_training(argv, environ)
    except FastTextError as exc:
        return _fail(error_line(exc), environ)
    except KeyboardInterrupt as exc:
        # The CLI's line and status, 128 + the signal's number (143 for SIGTERM, 130 for Ctrl-C), as a stop while
        # the job starts has (stops.stop_at_once_on_signals): re-raised as a user error, it exited 2
        return _fail(error_line(stop_message(exc, resumed_by_a_job)), environ, getattr(exc, "exit_status", 130), exc)
    except Exception as exc:
        if is_out_of_memory(exc):  # the instance type, the data or the settings, not a bug: the CLI's one line
            return _fail(error_line(out_of_memory_line(exc)), environ)
        # a bug: the traceback goes to the log, its reason to the console, as one line (MXNet's message starts with
        # its C++ stack, over lines: that was the FailureReason, the reason last or cut off)
        write_failure(error_line(bug_reason(exc))[len("error: "):], environ)
        exit_after_a_bugs_traceback_if_joined()  # a cluster's worker: not in the kvstore's exit barrier for ever
        cluster.tell_the_others(exc, 1, shown=traceback.print_exc)  # (before joining: its traceback, then it exits)
        raise


def _fail(line, environ, status=2, stop=None):
    """The job's end on a user error (or a ``stop``, a KeyboardInterrupt: ``status``, the signal's): ``line`` on stderr
    and as the FailureReason; exit status ``status``."""
    from . import cluster
    from .errors import let_mxnet_finish

    from .mxnet_env import quiet_exit_hook

    print(line, file=sys.stderr, flush=True)
    write_failure(line, environ)
    cluster.tell_the_others(stop or line, status)  # a host's worker before joining its cluster: it exits there
    let_mxnet_finish(status)  # as the CLI does: not an abort (-6) after the line; a cluster's worker exits here
    quiet_exit_hook()  # (as the CLI does: MXNet's exit hook failing again printed a traceback below the line)
    return status
