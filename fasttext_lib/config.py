"""Every setting of a training run, in one place: :class:`TrainConfig`.

The command line (``python -m fasttext_lib train``) and the SageMaker training job's hyperparameters
(sm_train.py) are both derived from the fields below, with their help text: a new setting is one
new field here (and, if it changes the run, its use in train.py).
"""
import argparse
import math
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Optional

import numpy as np

from .devices import check_ctx, check_table_size
from .errors import (SETTINGS_AS_FLAGS, SETTINGS_AS_HYPERPARAMETERS, FastTextError, check_bool, check_positive_int,
                     did_you_mean, flag_of, is_number, refuse_standard_input, setting_named, settings_form)
from .schedule import sgd_row_shrink

OPTIMIZERS = ("sgd", "adam")
LR_SCHEDULES = ("linear", "constant")
KVSTORES = ("auto", "local", "device", "dist_sync", "dist_async")
# Both take batch-averaged gradients (SGD with the per-row scale of batches.sgd_row_scale_entries).
# SGD's lr and every batch size left unset come from the data (schedule.default_schedule);
# Adam keeps a fixed default lr.
DEFAULT_LR = {"adam": 0.01}
FROM_DATA = "default: from the data (docs/RESULTS.md)"
MAX_SEED = 2**32 - 1  # numpy seeds are 32-bit unsigned (train.py seeds numpy and MXNet with it)
# More passes than any run takes (fastText's runs take 5-50, autotune searches 1-100): a mistyped number, refused before
# any data is read. 10**20 was taken: SGD's lr from the data spread its budget over every step (~1e-18), and the run
# trained at that lr for ever; each epoch is also a row of the history the bundle keeps (~150 bytes), and a resume
# without s3:ListBucket asks S3 for each epoch's checkpoint. (Each epoch's shuffle is seeded with its number, which
# numpy takes up to MAX_SEED.)
MAX_EPOCHS = 100_000


def _setting(default, help):
    return field(default=default, metadata={"help": help})


def check_seed(seed):
    """A seed numpy takes: a whole number from 0 to :data:`MAX_SEED` (one line naming it, not numpy's error)."""
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
        raise FastTextError(f"{setting_named('seed')} must be an integer from 0 to {MAX_SEED}, got {seed!r}")


def check_choice(value, name, choices):
    """``value`` is one of ``choices``, else one error naming the setting, with the choice meant where one is close:
    ``-p optimizer SGD`` (or ``--optimizer SGD``) was told only "must be one of sgd, adam", where a misspelled
    parameter or dataset is told which one was meant."""
    if value not in choices:
        raise FastTextError(f"{name} must be one of {', '.join(choices)}, got {value!r}{did_you_mean(value, choices)}")


# The least lr: MXNet steps in float32, where 1e-300 is 0 (a run trained at lr 0, to a coin toss's accuracy, silently),
# and a step below ~1e-9 of a weight near 0.01 rounds away. A linear schedule's last steps, lr / (steps + 1), stay
# float32 normals (>= 1.2e-38) at this lr over a billion steps.
MIN_LR = 1e-20

@dataclass
class TrainConfig:
    """Every knob of a run; plain values so notebooks, argv and SageMaker hyperparameters map 1:1."""

    epochs: int = _setting(10, f"passes over the training data (at most {MAX_EPOCHS})")
    lr: Optional[float] = _setting(None, f"learning rate; sgd: {FROM_DATA}, a budget spread over the run's steps; adam: 0.01")
    optimizer: str = _setting("sgd", "one of " + ", ".join(OPTIMIZERS))
    batch_size: Optional[int] = _setting(None, f"documents per step (split across the devices); {FROM_DATA}, "
                                               "about 256 steps an epoch, 16 to 1024")
    emsize: int = _setting(100, "embedding dimension")
    ngrams: int = _setting(1, "word n-grams up to this length (2: bigrams, as fastText's -wordNgrams)")
    buckets: int = _setting(2_000_000, "hash buckets for the n-grams (fastText's -bucket)")
    min_count: int = _setting(1, "words seen fewer times in training share the <unk> row")
    dropout: float = _setting(0.0, "dropout on the document vectors, in [0, 1)")
    lr_schedule: str = _setting("linear", "linear: decay to zero over the run, as fastText does; or constant")
    wd: float = _setting(0.0, "weight decay (lazy: only the rows a batch touches)")
    # (cpu:N said as what it is: listed beside gpu:N, it read as another device; devices.describe_ctx says it too)
    ctx: str = _setting("auto", "auto, cpu, gpu, gpu:N or a list such as gpu:0,1 (auto: every GPU, else the CPU); "
                                "cpu:N (cpu:1, cpu:0,1) is the same CPU under another id, no other device")
    kvstore: str = _setting("auto", "auto: none for one device, device for several; dist_sync for several hosts")
    seed: int = _setting(42, "seed of the initialization, the shuffles and dropout")
    pretrained_vectors: Optional[str] = _setting(None, "a .vec text file (local or s3://, may be gzipped) whose vectors "
                                                       "start the rows of the words it shares with the vocabulary "
                                                       "(fastText's -pretrainedVectors); its dimension must equal emsize")
    # (the two lines say how the run starts, which the bundle records too: config.json's settings and pretrained
    # record; autotune's trials and refit run without them, as without bars, or each trial would print them again:
    # autotune says both once, of its final model: autotune._final_settings_line, pretrained.start_line)
    progress: bool = _setting(True, "progress bars, and the 'settings from the data' and 'pretrained vectors' lines, "
                                    "on stderr")

    def __post_init__(self):
        named = setting_named  # (each line names a setting as its user gives it: --min-count, or min_count)
        for name in ("epochs", "batch_size", "emsize", "ngrams", "min_count"):
            value = getattr(self, name)
            if value is None and name == "batch_size":
                continue
            check_positive_int(value, named(name))
        if self.epochs > MAX_EPOCHS:
            raise FastTextError(f"{named('epochs')} must be at most {MAX_EPOCHS} (more passes than any run takes), got "
                                f"{self.epochs!r}")
        if self.ngrams > 1 and (not isinstance(self.buckets, (int, np.integer)) or self.buckets <= 0):
            raise FastTextError(f"{named('buckets')} must be a positive integer when {named('ngrams')} > 1, got "
                                f"{self.buckets!r}")
        # The smallest table these settings make (<unk>, one word, the n-gram buckets) must fit, refused
        # before any data is read; the vocabulary's share is checked once it is known (model.py).
        check_table_size(2 + (self.buckets if self.ngrams > 1 else 0), self.emsize,
                         f"{named('emsize')} and {named('buckets')}")
        check_choice(self.optimizer, named("optimizer"), OPTIMIZERS)
        check_choice(self.lr_schedule, named("lr_schedule"), LR_SCHEDULES)
        check_choice(self.kvstore, named("kvstore"), KVSTORES)
        for name in ("lr", "wd", "dropout"):  # a string (papermill -r lr 0.1, a JSON config) compared with 0: TypeError
            value = getattr(self, name)
            if not (value is None and name == "lr") and not is_number(value):
                raise FastTextError(f"{named(name)} must be a number, got {value!r}")
        if self.lr is not None and not (self.lr > 0 and math.isfinite(self.lr)):
            raise FastTextError(f"{named('lr')} must be a positive finite number, got {self.lr!r}")
        self._check_lr_fits_float32()
        if not (self.wd >= 0 and math.isfinite(self.wd)):
            raise FastTextError(f"{named('wd')} must be a non-negative finite number, got {self.wd!r}")
        if not 0 <= self.dropout < 1:
            raise FastTextError(f"{named('dropout')} must be in [0, 1), got {self.dropout!r}")
        check_seed(self.seed)
        if isinstance(self.ctx, str):
            check_ctx(self.ctx)
        # (a flag on the command line, --no-progress, which gives a bool: only a Python caller's value is refused)
        check_bool(self.progress, "progress")  # "no" (a JSON config, papermill's text) was true: bars shown
        if self.pretrained_vectors is not None and (not isinstance(self.pretrained_vectors, str)
                                                    or not self.pretrained_vectors.strip()):
            raise FastTextError(f"{named('pretrained_vectors')} must be a file name or s3:// URI, got "
                                f"{self.pretrained_vectors!r}")
        refuse_standard_input(self.pretrained_vectors, named("pretrained_vectors"), "the vectors", by_name=True)

    def _check_lr_fits_float32(self):
        """MXNet's optimizer steps take the lr as a float32: ``lr=1e39`` (for 1e-3, say) was its "Invalid Parameter
        format for lrs" traceback at the first step, after the data was read. SGD's output layer steps with the lr
        times ``1 + row_shrink`` (optim.make_optimizer), known once the batch size is."""
        if self.lr is None:
            return
        if self.lr < MIN_LR:
            raise FastTextError(f"{setting_named('lr')} must be at least {MIN_LR:g} (smaller steps cannot change a "
                                f"float32 parameter; 1e-300 trained at lr 0), got {self.lr!r}")
        shrink = sgd_row_shrink(self) if self.batch_size else 0.0
        bound = float(np.finfo(np.float32).max) / (1.0 + shrink)
        if self.lr > bound:
            why = (f" with sgd, {setting_named('batch_size', self.batch_size)} and "
                   f"{setting_named('ngrams', self.ngrams)}" if shrink else "")
            raise FastTextError(f"{setting_named('lr')} must be a positive number of at most {bound:.3g}{why} (MXNet "
                                f"steps in float32), got {self.lr!r}")

    @property
    def resolved(self):
        """Whether every setting has a value (:meth:`resolve` has nothing left to fill in)."""
        return self.lr is not None and self.batch_size is not None

    def resolve(self, num_docs, mean_tokens, num_classes, rare_class=None):
        """This config with ``lr`` and ``batch_size`` filled in for the training data; explicit values win.

        SGD without an lr: :func:`~fasttext_lib.schedule.default_schedule`'s, for the batch size
        used (``rare_class``: class_signal.rare_class_signal of the data, or None). Adam without an lr: 0.01.
        Without a batch size: the schedule's. ``train()`` calls this once the data is known and records the result
        (bundle, checkpoints, ``TrainedModel.config``).
        """
        from .schedule import default_schedule

        if self.resolved:
            return self
        rule = default_schedule(num_docs, mean_tokens, num_classes, self.ngrams, self.epochs, batch_size=self.batch_size,
                                rare_class=rare_class)
        lr = self.lr if self.lr is not None else DEFAULT_LR.get(self.optimizer, rule["lr"])
        return replace(self, lr=lr, batch_size=rule["batch_size"])

    @property
    def learning_rate(self):
        if self.lr is None and self.optimizer not in DEFAULT_LR:
            raise ValueError(f"{self.optimizer}'s lr comes from the data: use TrainConfig.resolve first")
        return self.lr if self.lr is not None else DEFAULT_LR[self.optimizer]

    def to_dict(self):
        return asdict(self)

    def same_run(self, other):
        """Whether a checkpoint written under ``other`` (a dict) can be resumed under this config."""
        mine = self.to_dict()
        return all(as_resumed(k, mine[k]) == as_resumed(k, other.get(k)) for k in mine if k not in RUN_ONLY)


CONFIG_FIELDS = tuple(f.name for f in fields(TrainConfig))
RUN_ONLY = ("ctx", "progress")  # where a run trains and whether it shows bars: not what it learns
# Settings a resume compares by whether they are given: the vectors' path names the same file otherwise from another
# directory (v.vec, proj/v.vec), and their content is compared in the data fingerprint (checkpoints.data_fingerprint)
GIVEN_OR_NOT = ("pretrained_vectors",)


def as_resumed(name, value):
    """Setting ``name``'s ``value`` as a checkpoint's resume compares it (:data:`GIVEN_OR_NOT`)."""
    return value is not None if name in GIVEN_OR_NOT else value

# ---- argv -> TrainConfig: the same options for the CLI and for SageMaker hyperparameters ----

def setting_said(name, value=None):
    """The setting ``name`` (a TrainConfig field) with ``value`` (None: whatever value), as the user of this run's
    caller sets it (errors.settings_said_as): ``--emsize 300`` / ``--epochs`` (the command line's: cli.cmd_train),
    ``TrainConfig(emsize=300)`` / ``TrainConfig(epochs=...)`` (the Python API, the notebooks; also where no caller
    said: read_vec(uri, dim=...) called on its own told its caller the flag), ``the hyperparameter emsize=300`` /
    ``the hyperparameter epochs`` (the training job)."""
    form = settings_form()
    if form == SETTINGS_AS_FLAGS:
        return setting_named(name, value)
    if form == SETTINGS_AS_HYPERPARAMETERS:
        return f"the hyperparameter {name}{'' if value is None else f'={value}'}"
    return f"TrainConfig({name}={'...' if value is None else repr(value) if isinstance(value, str) else value})"


NONE_WORDS = ("", "none", "null")  # how a hyperparameter says "no value" (the SDK sends None as "")


def parse_int(text):
    """``"10"``, ``"10.0"`` or ``"1e3"``: tuners send integers as floats."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not value.is_integer():
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
    return int(value)


def parse_float(text):
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def parse_optional_float(text):
    return None if str(text).strip().lower() in NONE_WORDS else parse_float(text)


def parse_optional_int(text):
    return None if str(text).strip().lower() in NONE_WORDS else parse_int(text)


def parse_optional_str(text):
    return None if str(text).strip().lower() in NONE_WORDS else str(text)


def parse_file_option(text):
    """A file option's value on the command line: ``none`` is none, as everywhere, but an empty or blank name is an
    error (``--pretrained-vectors "$VEC"`` with VEC unset trained without the vectors, and said nothing). A
    hyperparameter's ``""`` stays "no value" (:data:`NONE_WORDS`: the SDK sends None as "")."""
    if not str(text).strip():
        raise argparse.ArgumentTypeError(f"expected a file name or s3:// URI, got {text!r}")
    return parse_optional_str(text)


def parse_bool(text):
    value = str(text).strip().lower()
    if value in ("true", "1", "yes", "on"):
        return True
    if value in ("false", "0", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def _or_default(parse, default):
    """A hyperparameter given no value (``none`` / ``null`` / ``""``: the console, boto3) keeps its default, as an
    optional one (``lr``) is left to the data; ``--ngrams ""`` was refused ("expected an integer, got ''")."""
    return lambda text: default if str(text).strip().lower() in NONE_WORDS else parse(text)


_PARSERS = {int: parse_int, float: parse_float, Optional[float]: parse_optional_float, Optional[int]: parse_optional_int,
            str: str, Optional[str]: parse_optional_str}


def add_config_arguments(parser, hyperparameters=False, overrides=None):
    """One ``--option`` per :class:`TrainConfig` field, with its default and help text.

    ``hyperparameters=False`` (the CLI): ``--batch-size``, and booleans as flags (``--no-progress``).
    ``hyperparameters=True`` (SageMaker): ``--batch-size`` and ``--batch_size``, booleans as values
    (``--progress false``). ``overrides``: field name -> ``{"default": ..., "help": ...}``.
    Values are only converted here; :class:`TrainConfig` validates them, for both.
    """
    overrides = overrides or {}
    for f in fields(TrainConfig):
        default = overrides.get(f.name, {}).get("default", f.default)
        help_text = overrides.get(f.name, {}).get("help", f.metadata["help"])
        dashed = flag_of(f.name)
        names = [dashed] + ([f"--{f.name}"] if hyperparameters and "_" in f.name else [])
        if f.type is bool and not hyperparameters:
            flag = "--no-" + dashed[2:] if default else dashed
            parser.add_argument(flag, dest=f.name, action="store_false" if default else "store_true",
                                default=default, help=help_text + (": on by default, off with this flag" if default
                                                                   else ": off by default, on with this flag"))
            continue
        kind = parse_bool if f.type is bool else _PARSERS[f.type]
        if f.type == Optional[str] and not hyperparameters:
            kind = parse_file_option
        if hyperparameters and default is not None:  # (the optional ones' parsers give None themselves)
            kind = _or_default(kind, default)
        shown = "" if default is None else f" (default: {default})"
        parser.add_argument(*names, dest=f.name, type=kind, default=default, help=help_text + shown)
    return parser


def config_from_args(args, **changes):
    """The :class:`TrainConfig` of parsed options (validated); ``changes`` replace fields."""
    values = {name: getattr(args, name) for name in CONFIG_FIELDS}
    values.update(changes)
    return TrainConfig(**values)
