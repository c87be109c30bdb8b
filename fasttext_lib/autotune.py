"""Autotune: search lr / epochs / emsize / ngrams / batch size against a validation split, in a time budget.

fastText's ``-autotune-validation`` samples settings at random around the best one so far. On a
small budget with a per-trial cost of seconds, a few well-chosen trials are worth more, so this
search is a deterministic coarse-to-fine one:

1. **start** from a strong setting for the data's size (:func:`starting_config`);
2. **coarse**: every n-gram order (1, 2, 3) at the starting lr, then the lr x4 and /4 around the
   best orders first;
3. **refine**: coordinate search around the best setting so far: lr, epochs, emsize, batch size and
   ngrams each one step up and down (in log space); a better setting becomes the new centre, and a
   round without improvement halves the steps (in log space); the search ends when they are too
   small to matter or the budget is spent.

Every trial is one :func:`~fasttext_lib.train.train` on the training split, scored on the validation
split after its last epoch. Trials that share ``ngrams`` (with the same ``buckets`` / ``min_count``)
featurize the data once. Before a trial starts its seconds are estimated from the trials so far
(a fixed part per n-gram order, plus a rate per unit of :func:`work`); one that would not finish
within the budget is not started (the first trial always runs, so there is always a model).
**Which trial's model is kept** (the *chosen* trial) is decided by a paired test, not by the highest
validation accuracy: on a validation split of a few hundred documents (standard error 1.5-4
points) the best of dozens of trials is largely the luckiest one, and on held-out data it lost to
the plain default (docs/RESULTS.md, section 3b). The start (the library default) is chosen first;
a later trial replaces the chosen one only if it is *significantly* more accurate on the same
validation documents: of the documents on which the two models disagree, it gets ``gained`` right
and ``lost`` wrong, and the one-sided sign test (exact McNemar) must give
``P(X >= gained | X ~ Binomial(gained + lost, 1/2)) < ALPHA / (k - 1)`` for trial k (5% over all the
comparisons together: :func:`adoption_threshold`). A near-tie therefore never displaces the default,
whatever the number of trials; a clear gain does. The search itself still
moves toward the highest validation accuracy (ties: the lower validation loss to 2 decimals, then
less :func:`work`, then the earlier trial), since a setting near a lucky one is as good a place to
look as any, and only a tested gain is kept.

**The final model** is the chosen setting trained again on the training *and* validation data
(``refit=True``, the default; the search reserves time for it within the budget): on sets of a few
thousand documents a quarter more data is worth more than anything the search finds (+0.7 to +1.9
points on the shared sets, docs/RESULTS.md 3b). fastText trains its final model on the training
file only; ``refit=False`` does the same here: the chosen trial's model is kept as it is, and its
validation figures then describe the returned model.

Deterministic for a seed: the trials' results are (seeded CPU training), and the next setting
depends only on them. Wall-clock decides only which trials still fit near the end of the budget,
so two runs agree trial by trial until one of them skips a trial for time (or is stopped by Ctrl-C, which ends the
search with the trials completed); with ``max_trials`` and a budget that does not bind, the whole
search and its model are reproducible.
"""
import functools
import importlib
import math
import sys
import time
from dataclasses import dataclass, replace
from typing import NamedTuple, Optional

from . import storage
from .bundle import SAVE_HINT
from .class_checks import warnings_said_once
from .class_signal import texts_pairs
from .config import TrainConfig
from .data import SAMPLE_DOCS, LabeledTexts, as_read_from_a_file, lines_named, pandas_class_column, sort_labels
from .devices import table_fits
from .errors import FastTextError, check_bool, check_positive_int, is_number, refuse_standard_output, setting_named
from .stops import (carry_on_after_ctrl_c, files_written, keeping_stops, note_stop_line, note_what_a_stop_came_after,
                    note_what_a_stop_could_not_remove, note_what_a_stop_left, stops_held)
from .lean_import import forget_an_interrupted_import
from .pretrained import start_line
from .label_encoding import class_ids
from .text import sampled_fingerprints
from .train import Diverged, TrainedModel, featurize, train
from .writers import compressed, refuse_a_name_not_written

SEARCHED = ("optimizer", "lr", "batch_size", "epochs", "emsize", "ngrams")
# gained / lost: validation documents the trial gets right and the chosen-so-far trial wrong, and the reverse;
# p_value: sign_test(gained, lost); adopted: the trial became the chosen one (the start always does)
TRIAL_COLUMNS = ["trial", "phase", *SEARCHED, "val_accuracy", "val_loss", "gained", "lost", "p_value", "adopted", "seconds", "work"]
# The trial table (AutotuneResult.trials, --autotune-trials, the notebook's autotune_trials.csv): each trial's row and
# what ended the search (ENDED), known only once it has ended (so not in the rows on_trial is given). A column, said
# on the last row only (the others empty), rather than a closing row: the table stays one row per trial with numeric
# columns that read back as numbers. The same word on every row repeated itself down the table notebook 02 shows.
TABLE_COLUMNS = [*TRIAL_COLUMNS, "ended"]
# The scores' columns of a table saved beside a lossy compact bundle (compact.LOSSY: --compact float16 / int8 / int4):
# every trial is scored as the float32 model the search trained, not as the bundle's rounded rows would score.
FLOAT32_SCORES = {"val_accuracy": "val_accuracy_float32", "val_loss": "val_loss_float32"}
ALPHA = 0.05  # a trial replaces the chosen one if the one-sided sign test on gained / lost is below this / (trial - 1)


def adoption_threshold(trial):
    """The p-value trial number ``trial`` (2, 3, ...) must beat to replace the chosen one: ALPHA / (trial - 1).

    Each trial is one more test against the chosen model, and over dozens of them a 5% test lets a lucky
    trial through (RESULTS.md 3b: trial 46 of an amazon_snippets search, p = 0.032, cost 1 point on test).
    Dividing ALPHA by the number of comparisons made so far (Bonferroni) keeps the chance that *any* of
    them adopts a trial that is not better at 5% or below. A clear gain still passes: the first coarse
    trials are tested at 5%, 2.5%, ...; +25 / -5 on the disagreeing documents is p = 0.00016."""
    return ALPHA / max(1, trial - 1)


# Bounds of the search, and each coordinate's first step (a factor, halved in log space per round).
LIMITS = {"lr": (1e-3, 64.0), "epochs": (1, 100), "emsize": (10, 400), "batch_size": (1, 4096), "ngrams": (1, 4)}
FIRST_STEP = {"lr": 2.0, "epochs": 2.0, "emsize": 2.0, "batch_size": 4.0}
MIN_STEP = {"lr": 1.2, "epochs": 1.2, "emsize": 1.4, "batch_size": 2.0}
SAFETY = 1.15  # estimated seconds x this must fit in what is left of the budget
STEP_OVERHEAD_FEATURES = 100_000  # one step's fixed cost in units of (document x n-gram order x dimension)


@dataclass
class AutotuneResult:
    trials: object  # pandas DataFrame, one row per trial (TABLE_COLUMNS: its "ended" on the last row, "" above it)
    best_config: TrainConfig
    trained: TrainedModel  # the final model: best_config trained on training + validation data (refit, the
    #                        default), else the chosen trial's own model (training data only)
    seconds: float  # wall-clock of the whole search (which includes the final model)
    interrupted: bool = False  # a KeyboardInterrupt (Ctrl-C) stopped the search; the trials completed were kept

    @property
    def best_trial(self):
        return self.trials.loc[self.trials.trial == self.trained.autotune["best_trial"]].iloc[0]

    def evaluate(self, data):
        """``{"accuracy", "loss", "n"}`` of the chosen model on other labeled data (e.g. the test split), checked and
        scored as the bundle saved from it would be (predict.Predictor.evaluate): scored here as given, no documents
        gave NaN and numpy's warnings, a DataFrame, int classes or a missing text (NaN) a traceback."""
        from .predict import Predictor

        model = self.trained
        return Predictor(model.model, model.featurizer, model.labels, model.config, ctx=model.ctx[0],
                         label_names=model.label_names).evaluate(data)


def _features_key(config):
    """What a trial's featurization depends on: trials with the same key share one (``features[key]``)."""
    return config.ngrams, config.buckets if config.ngrams > 1 else 0, config.min_count


def split_validation(data, fraction=0.2, seed=0):
    """``(train, validation)``: a seeded random ``fraction`` of ``data`` held out for the search."""
    import numpy as np

    order = np.random.RandomState(seed).permutation(len(data))
    cut = len(data) - int(round(fraction * len(data)))
    return data.subset(order[:cut]), data.subset(order[cut:])


def starting_config(train_data, base=None, rare_class=None):
    """The first setting tried: the library's own defaults for this data (``schedule.default_schedule``:
    SGD, batch ~n/256, lr from the lr x steps budget) at 10 epochs, dim 100 and bigrams, so the
    search starts from what ``train --ngrams 2`` would give (``train`` without flags: unigrams) and
    can only improve on it (as judged on the validation split). ``base`` gives every other field. ``buckets`` is lowered (never
    raised) to the power of two above twice the training split's token count, which bounds its
    distinct n-grams: a 3k-sentence set then gets a 131k-row table instead of 2M rows, which
    allocates and initializes in a fraction of the time. ``rare_class``: :func:`rare_class_of_texts` of
    ``train_data``, already measured (a function giving it; None: measured here).
    """
    from .schedule import default_schedule, mean_tokens

    base = base or TrainConfig()
    tokens = sum(len(text.split()) for text in train_data.texts)
    buckets = min(base.buckets, 2 ** math.ceil(math.log2(max(2 * tokens, 1024))))
    rule = default_schedule(len(train_data), mean_tokens(train_data.texts[:SAMPLE_DOCS]), len(set(train_data.labels)),
                            ngrams=2, epochs=10, rare_class=(rare_class or rare_class_of_texts)(train_data))
    return replace(base, optimizer=rule["optimizer"], lr=rule["lr"], batch_size=rule["batch_size"], epochs=10,
                   emsize=100, ngrams=2, buckets=buckets)


def rare_class_of_texts(train_data):
    """class_signal.rare_class_signal of LabeledTexts ``train_data`` (every word of its texts, as train reads them:
    train.rare_class_of): what lowers the start's lr, and what the final settings line says of it."""
    from .class_signal import rare_class_signal

    return rare_class_signal(train_data.labels, texts_pairs(train_data))


def work(config, n_train):
    """A deterministic measure of a setting's training cost: steps x (fixed step cost + documents x
    n-gram order x dimension). Used to estimate seconds and to break ties toward cheaper models."""
    steps = config.epochs * math.ceil(n_train / config.batch_size)
    return steps * (1 + min(config.batch_size, n_train) * config.ngrams * config.emsize / STEP_OVERHEAD_FEATURES)


def settings(config):
    return {name: getattr(config, name) for name in SEARCHED}


def check_duration(duration, name="autotune duration"):
    """``duration`` must be a positive, finite number of seconds (a one-line error naming ``name`` otherwise).

    Notebook 02 checks its ``autotune_duration`` parameter with it before training: a string (papermill
    ``-r autotune_duration 60``) was a TypeError, and only after the first training had run."""
    if not is_number(duration) or not 0 < duration < math.inf or not math.isfinite(_as_float(duration)):
        raise FastTextError(f"{name} must be a positive number of seconds, got {duration!r}")


def _as_float(number):
    """``number`` as a float, inf for an int too large for one (``10**400``, which the budget's float arithmetic
    could not take: an OverflowError after the first trial)."""
    try:
        return float(number)
    except OverflowError:
        return math.inf


def check_one_host(kvstore, refused="autotune"):
    """A ``dist_*`` kvstore cannot run a search: every trial is a training of its own, which joins the parameter-server
    cluster again, and MXNet joins one once per process (the second trial waited for it until the cluster timeout,
    the search lost); and each host's clock would decide its own trials. One line, before anything is read."""
    if str(kvstore).startswith("dist"):
        raise FastTextError(f"{refused} cannot search with {setting_named('kvstore', kvstore)}: each trial would join "
                            f"the cluster again, which MXNet does once per process (the 2nd trial waits for it until "
                            f"the cluster timeout); search on one host ({setting_named('kvstore', 'auto')}), then train "
                            f"the chosen setting on the cluster")


def _check_search_settings(start, max_trials, emsize_fixed):
    """Refuse, in one line and before anything is read or trained, what would make a trial invalid or the search
    fail: ``max_trials`` 0 or less (a traceback once no trial had run), a string or a fraction; a ``start`` that leaves
    lr or batch_size to the data (the search steps from its values: a TypeError / ValueError traceback), or whose
    searched settings lie outside the ranges the search keeps to (:data:`LIMITS`: lr 1000 trained a diverging first
    trial, the one that always runs). ``emsize_fixed``: pretrained vectors set it (not searched)."""
    if max_trials is not None:
        check_positive_int(max_trials, "max_trials")
    if start is None:
        return
    if not isinstance(start, TrainConfig):
        raise FastTextError(f"autotune's start must be a TrainConfig, got {start!r}")
    for name in ("lr", "batch_size"):
        if getattr(start, name) is None:
            raise FastTextError(f"autotune's start leaves {name} to the data, but the search steps from the start's "
                                f"values: give it, or leave start out (the library's setting for the data is the start)")
    for name, (low, high) in LIMITS.items():
        value = getattr(start, name)
        if not (name == "emsize" and emsize_fixed) and not low <= value <= high:
            raise FastTextError(f"autotune's start has {name} {value:g}, outside the range the search tries "
                                f"({low:g} to {high:g}); give a start within it")


@keeping_stops  # a notebook's Stop button stops the search, also when it lands in a finalizer (stops.kept_stops)
@warnings_said_once()
def autotune(train_data, val_data, duration=300.0, base=None, start=None, max_trials=None, on_trial=None, verbose=True,
             pretrained=None, refit=True, val_name="autotune validation data"):
    """Search settings for ``train_data`` scored on ``val_data`` within ``duration`` seconds. ``val_name``: what
    errors call ``val_data`` (the CLI: its file's name).

    ``refit``: train the final model with the chosen setting on the training *and* validation data
    (25% more data with an 80/20 split: +0.7 to +1.9 points on the shared real sets, docs/RESULTS.md
    3b). No trial is started unless the refit would still fit in the budget after it, so the whole
    call normally stays within ``duration``; the refit always runs, though, so a trial that overran
    its estimate (a busy machine) or a first trial that alone takes the budget can push it past
    ``duration`` by the refit's time (fastText retrains its final model after its budget, always).
    ``refit=False`` keeps the chosen trial's model, trained on ``train_data`` only, as fastText's
    autotune does; its validation history then describes the returned model. A refit that diverges falls back
    to that model too, with a warning on stderr (``autotune["refit"]`` is then False, and
    ``autotune["refit_diverged"]`` says why).

    ``base``: a :class:`TrainConfig` for the fields not searched (buckets, min_count, seed, ctx,
    dropout, ``pretrained_vectors``, ...). ``start``: the first setting (default :func:`starting_config`; one given must
    set lr and batch_size, and its searched settings within :data:`LIMITS`). ``max_trials``: a positive integer. ``on_trial``:
    called with each trial's row (a dict). ``verbose``: one line per trial and the table at the end,
    on stderr. Returns an :class:`AutotuneResult`.

    With ``base.pretrained_vectors`` the file is read once, before the search, holding the rows of the words of
    ``train_data`` and ``val_data`` only (``pretrained``: already read), and ``emsize`` is not searched: it is set
    to the vectors' dimension.

    A ``KeyboardInterrupt`` during the search (Ctrl-C, a notebook's interrupt button) stops it, as in fastText:
    one ``note:`` line on stderr, then the final model of the chosen trial so far, as if the search had ended there
    (``interrupted`` in the result and in ``trained.autotune``). One before any trial has completed, one during the
    final model, or a SIGTERM / SIGHUP (:class:`~fasttext_lib.stops.Interrupted`) ends the call, as before. In a
    notebook (stops.note_stop_line) a Stop that ends the call is shown as one line saying where in the search it
    came (``stopped by the user during autotune trial 1 of the search; ...``), not a trial's epoch and step as if
    they were the call's, nor a traceback.
    """
    started = time.time()
    note_stop_line(stop_line("before the autotune search's first trial"))
    forget_an_interrupted_import("mxnet")  # a Stop pressed during this call's import in the kernel before
    importlib.import_module("mxnet")  # within the budget, but not in the first trial's seconds, which predict the others
    importlib.import_module("pandas")  # (the trial table's, after the search: imported before it, as it was)

    check_duration(duration)
    check_bool(refit, "refit")
    _check_search_settings(start, max_trials, emsize_fixed=bool(base and base.pretrained_vectors) or pretrained is not None)
    check_one_host(base.kvstore if base else "auto")
    train_data, val_data = _checked_splits(train_data, val_data, val_name)
    n_all = len(train_data) + len(val_data)
    search, pretrained, show_progress = _new_search(train_data, val_data, base or TrainConfig(), start, pretrained)
    features = {}  # (ngrams, buckets, min_count) -> featurize(...)
    done, interrupted, ended = _Done(), False, "complete"
    try:
        for phase, config in search:
            if max_trials is not None and len(done.rows) >= max_trials:
                ended = "max_trials"
                break
            note_stop_line(stop_line(f"during autotune trial {len(done.rows) + 1} of the search"))
            seconds_left = duration - (time.time() - started)
            if done.rows and not _fits(search, config, features, done, n_all if refit else 0, seconds_left):
                ended = "budget"  # (the clock shaped the search: another run may try other candidates)
                continue  # cannot finish in time: try the next (maybe cheaper) candidate
            trial = _run_trial(len(done.rows) + 1, phase, config, train_data, val_data, features, pretrained, done)
            if trial is None:  # its vocabulary's table does not fit: skipped, as above
                continue
            # Recorded and reported as one step: a Ctrl-C between the two counted the trial (in the table) but
            # skipped its line and its on_trial call (the CLI's JSON line); held, it stops the search just after.
            with stops_held():
                done = done.plus(trial.row, trial.trained, trial.right)  # the trial is complete (chosen or not)
                search.record(config, trial.row, *trial.timing)
                _report(trial.row, done.chosen_row, verbose, on_trial)
            del trial  # only the chosen model is kept in memory
    except KeyboardInterrupt as exc:
        # Ctrl-C (or a notebook's interrupt) stops the search, as in fastText: the chosen setting of the trials
        # completed is trained. With none completed there is nothing to train, and a SIGTERM / SIGHUP (a scheduler's
        # stop, a closed terminal) is a stop: both end the call, as a second interrupt during the final model does.
        if done.chosen is None or not carry_on_after_ctrl_c(exc):
            raise
        interrupted, ended = True, "interrupted"
    rows, chosen, chosen_row = list(done.rows), done.chosen, done.chosen_row
    note_stop_line(stop_line(f"during autotune's final model (trial {chosen_row['trial']}'s setting trained again on "
                            f"the training and validation data), after {_trials(len(rows))} of the search" if refit else
                            f"as the autotune search ended, after {_trials(len(rows))}"))
    trial = done = None  # an abandoned trial's model, and the state's reference to the chosen one (the refit frees it)
    if interrupted:
        print(_interrupted_line(len(rows), chosen_row, refit), file=sys.stderr, flush=True)
    trials = _trial_table(rows, ended)
    refit_diverged = None
    if refit:
        config = chosen.config
        del chosen  # the refit replaces it: never two full models in memory
        chosen, refit_diverged = _refit(config, chosen_row, train_data, val_data, features, pretrained)
    refitted = bool(refit) and refit_diverged is None
    chosen.config = replace(chosen.config, progress=show_progress)
    chosen.autotune = {"duration": float(duration), "seconds": time.time() - started, "best_trial": chosen_row["trial"],
                       "best": {k: chosen_row[k] for k in (*SEARCHED, "val_accuracy", "val_loss")},
                       "refit": refitted, "trained_on": len(train_data) + (len(val_data) if refitted else 0),
                       "interrupted": interrupted, "ended": ended, "trials": [dict(r) for r in rows]}
    if refitted:  # so that evaluate can tell the validation documents, trained on now, from held-out ones (predict.py)
        chosen.autotune["validation_documents"] = sampled_fingerprints(val_data.texts, chosen.featurizer.unicode_form)
    if refit_diverged is not None:  # asked for, and not done: say why in the bundle's metrics too
        chosen.autotune["refit_diverged"] = refit_diverged
    if verbose:
        _say_the_outcome(trials, chosen_row, refitted, refit_diverged, n_all, ended)
    if show_progress:  # the lines a train says as it starts, of the final model (its trials and refit said none)
        print(_final_settings_line(chosen.config, search.start, start is None, len(train_data), search.rare_class),
              file=sys.stderr, flush=True)
        if chosen.pretrained is not None:
            print(start_line(chosen.pretrained, pretrained.source), file=sys.stderr, flush=True)
    return AutotuneResult(trials=trials, best_config=chosen.config, trained=chosen, seconds=time.time() - started,
                          interrupted=interrupted)


def _final_settings_line(final, start, start_from_data, n_train, rare_class):
    """The ``settings ...`` line a train says of its lr and batch size (train.settings_line), of autotune's final
    setting ``final``: train() says none of a search's trials or refit, which run with progress off and have both set
    (the search steps from the start's values), so there is nothing for it to take from the data. Those still the
    ``start``'s came from the data (``start_from_data``: starting_config's rule, for the ``n_train`` documents of the
    training split at the start's epochs; an lr ``rare_class`` lowered for a skewed class's weak words said so, as
    train says it: the start's :func:`rare_class_of_texts`, measured once) or were given (a ``start`` of the caller's);
    the search chose the others."""
    from .train import settings_line

    kept = [name for name in ("lr", "batch_size") if getattr(final, name) == getattr(start, name)]
    as_set = replace(final, **{name: None for name in kept}) if start_from_data else final
    return settings_line(as_set, replace(final, epochs=start.epochs), n_train, rare_class=rare_class,
                         searched=[name for name in ("lr", "batch_size") if name not in kept])


def _checked_splits(train_data, val_data, val_name):
    """``(train_data, val_data)`` as read from a file (data.as_read_from_a_file: a DataFrame's int classes, its
    NaNs), both non-empty, the validation data's labels as the training classes' ids; refused in one line before any
    trial, and a validation split the search cannot choose by warned about."""
    if val_data is None or len(val_data) == 0:
        raise FastTextError("autotune needs a non-empty validation split")
    if len(train_data) == 0:
        raise FastTextError("training data is empty")
    train_data = as_read_from_a_file(train_data, "train_data")
    val_data = as_read_from_a_file(val_data, "val_data")
    classes = sort_labels(train_data.labels)
    # fail before searching; a validation file labeled by the classes' names (positive) is read as their ids, so
    # that the refit's training data (train + validation) holds one label per class
    val_ids = class_ids(val_data.labels, classes, val_name, train_data.names,
                        lines_named(val_data.first_lines, val_name), pandas_class_column(val_data))
    if val_ids is not val_data.labels:
        val_data = LabeledTexts(val_ids, val_data.texts, dict(val_data.names))
    _warn_of_a_validation_that_cannot_judge(val_data, train_data.names)
    return train_data, val_data


def _new_search(train_data, val_data, base, start, pretrained):
    """``(search, pretrained, progress)``: the :class:`_Search` from ``start`` (None: :func:`starting_config`), its
    trials without progress bars (``progress``: ``base``'s, the final model's); with ``base.pretrained_vectors`` the
    vectors (``pretrained``: already read), whose dimension is every trial's emsize (not searched)."""
    if base.pretrained_vectors:
        from .vec_files import read_vec

        if pretrained is None:  # the rows of any trial's vocabulary (and the refit's) only: a wiki .vec is GBs
            pretrained = read_vec(base.pretrained_vectors, keep=_every_token(train_data, val_data))
        base = replace(base, emsize=pretrained.dim)
    show_progress, base = base.progress, replace(base, progress=False)  # trials run without bars
    # the start's test of the words, measured once: the final settings line says what it did to the lr
    rare_class = rare_class_of_texts(train_data) if start is None else None
    first = replace(start or starting_config(train_data, base, lambda data: rare_class), progress=False)
    if pretrained is not None:
        first = replace(first, emsize=base.emsize, pretrained_vectors=base.pretrained_vectors)
    search = _Search(first, len(train_data), fixed=("emsize",) if pretrained is not None else (), rare_class=rare_class)
    return search, pretrained, show_progress


def _fits(search, config, features, done, refit_docs, seconds_left):
    """Whether a trial of ``config`` and then the refit (``refit_docs``: the training and validation documents; 0:
    no refit) of whichever of it and ``done``'s chosen trial is chosen after it are expected to finish within
    ``seconds_left`` (with :data:`SAFETY`)."""
    needed = search.estimate(config, features)
    if refit_docs:
        needed += max(search.estimate(c, features, refit_docs) for c in (config, done.chosen.config))
    return needed * SAFETY <= seconds_left


class _Trial(NamedTuple):
    """One trial's outcome (:func:`_run_trial`): its table row; its model and whether it got each validation
    document right (None: it diverged); ``timing``: what :meth:`_Search.record` estimates later trials' seconds by
    (featurizing, its epochs, its features' key; none for a trial that diverged)."""

    row: dict
    trained: Optional[TrainedModel] = None
    right: object = None
    timing: tuple = ()


def _run_trial(number, phase, config, train_data, val_data, features, pretrained, done):
    """Trial ``number`` of the search: ``config`` trained on ``train_data`` (featurized once per
    :func:`_features_key` in ``features``) and scored on ``val_data`` by its last epoch, and compared with the
    chosen trial of ``done`` on the same documents. None where its vocabulary's table is more than MXNet can hold (a
    setting to skip); a row of no scores where its training diverged (a failed trial), except the start's, which is
    raised: there would be nothing to compare the other trials with."""
    key = _features_key(config)
    t0 = time.time()
    if key not in features:
        features[key] = featurize(train_data, val_data, config)
    featurize_seconds = time.time() - t0
    if not table_fits(features[key][0].num_rows, config.emsize):
        return None
    try:
        trained = train(train_data, val_data, config, featurized=features[key], pretrained=pretrained)
    except Diverged:
        if done.chosen is None:
            raise
        # a setting of the search (lr up to 64) that diverged: a failed trial, not the end of the search
        return _Trial(_failed_row(number, phase, config, time.time() - t0, len(train_data)))
    right = trained.val_right  # (its last epoch's scoring of the validation split, which gave val_accuracy below)
    seconds = time.time() - t0
    last = trained.history[-1]
    gained, lost, p_value = (0, 0, 1.0) if done.chosen_right is None else compare(right, done.chosen_right)
    row = {"trial": number, "phase": phase, **settings(config), "val_accuracy": last["val_accuracy"],
           "val_loss": last["val_loss"], "gained": gained, "lost": lost, "p_value": p_value,
           "adopted": done.chosen is None or p_value < adoption_threshold(number), "seconds": seconds,
           "work": work(config, len(train_data))}
    epoch_seconds = sum(h["seconds"] for h in trained.history)
    return _Trial(row, trained, right, (featurize_seconds, epoch_seconds, key))


def _refit(config, chosen_row, train_data, val_data, features, pretrained):
    """``(the final model, None)``: the chosen setting ``config`` trained again on the training and validation data
    together; or, where that diverges, ``(the chosen trial's model, why)``, said in a ``warning:`` line."""
    both = LabeledTexts(list(train_data.labels) + list(val_data.labels), list(train_data.texts) + list(val_data.texts),
                        # (the lines of its classes: its warnings as the trials', each said once)
                        names=dict(train_data.names), first_lines=dict(train_data.first_lines), files=train_data.files)
    try:
        return train(both, None, config, pretrained=pretrained), None
    except Diverged as exc:
        # The chosen setting did not diverge on the training split, but can on a quarter more data (other
        # batches, other steps): that ended the run in "training diverged" after the whole search, with no
        # bundle. Its trial's model is as good a result: trained again, the same (seeded) as in the search.
        print(f"warning: the final refit on the training and validation data diverged ({exc}); the final model "
              f"is the chosen trial's (trial {chosen_row['trial']}, training data only)", file=sys.stderr, flush=True)
        return train(train_data, val_data, config, featurized=features[_features_key(config)],
                     pretrained=pretrained), str(exc)


def _say_the_outcome(trials, chosen_row, refitted, refit_diverged, n_all, ended):
    """The search's summary on stderr (``verbose``): the trial table, the chosen trial, the final model, what ended
    the search."""
    shown = trials[TRIAL_COLUMNS]  # (what ended the search: its own line below)
    print(shown.to_string(index=False, float_format=lambda v: f"{v:.4g}"), file=sys.stderr)
    print(f"chosen: trial {chosen_row['trial']} " + _describe(chosen_row), file=sys.stderr, flush=True)
    print("final model: " + (f"the chosen setting trained again on the training and validation data ({n_all} documents)"
                             if refitted else "the chosen trial's (training data only)"
                             + (" (its refit diverged)" if refit_diverged else "")), file=sys.stderr, flush=True)
    print(f"search ended: {ended} ({ENDED[ended]})", file=sys.stderr, flush=True)


# The fewest validation documents on which a trial can beat the start: all of them gained, P = 0.5 ** n < ALPHA.
FEWEST_TO_JUDGE = math.floor(math.log2(1 / ALPHA)) + 1


def _warn_of_a_validation_that_cannot_judge(val_data, names):
    """A ``warning:`` line for a validation split the search cannot choose by: fewer documents than
    :data:`FEWEST_TO_JUDGE` (no trial can ever be adopted: the budget goes to trials that cannot be chosen), or one
    class only (each setting is scored by how often it predicts that class: a model biased toward it is adopted,
    and the refit trains on more of it)."""
    if len(val_data) < FEWEST_TO_JUDGE:
        print(f"warning: the autotune validation data holds {len(val_data)} document{'s' * (len(val_data) != 1)}: no "
              f"trial can be shown to be better than the start on so few (the sign test needs {FEWEST_TO_JUDGE} at "
              f"least), so the search keeps the start; hold out more of your data for it (autotune.split_validation)",
              file=sys.stderr, flush=True)
    elif len(set(val_data.labels)) == 1:
        label = val_data.labels[0]
        name = names.get(label)
        print(f"warning: the autotune validation data holds one class only ({label}{f' ({name})' if name else ''}): "
              f"each setting is scored by how often it predicts that class, which favors a model biased toward it "
              f"(and the refit trains on more of it); give it documents of every class (autotune.split_validation)",
              file=sys.stderr, flush=True)


# What ended the search (``trained.autotune["ended"]``), and what that says of a run again with the same seed and data.
ENDED = {"complete": "every candidate was tried: the same seed and data give the same trials and model, whatever the "
                     "budget",
         "budget": "candidates that would not finish in the time left were skipped: another budget, or the same one on "
                   "a busier or quieter machine, can try others and choose another setting",
         "max_trials": "max_trials trials were run",
         "interrupted": "an interrupt stopped it"}


def _every_token(train_data, val_data):
    """Every token of both splits, and ``<unk>``: the words any trial's vocabulary (any min_count) or the refit's
    (training and validation data) can hold, whose pretrained rows are all a search needs."""
    from .features import UNK, count_tokens

    return {UNK, *count_tokens(train_data.texts).words, *count_tokens(val_data.texts).words}


@dataclass(frozen=True)
class _Done:
    """The completed trials: their rows, and the chosen one's row, model and validation answers (right or wrong).
    Replaced whole, in one assignment, as a trial completes: an interrupt lands before it (the trial is abandoned)
    or after it (the trial counts), never between a row and the model it chose."""
    rows: tuple = ()
    chosen: object = None  # TrainedModel
    chosen_row: dict = None
    chosen_right: object = None

    def plus(self, row, trained=None, right=None):
        if row["adopted"]:
            return _Done(self.rows + (row,), trained, row, right)
        return replace(self, rows=self.rows + (row,))


def _report(row, chosen_row, verbose, on_trial):
    if verbose:
        print(_trial_line(row, chosen_row), file=sys.stderr, flush=True)
    if on_trial is not None:
        on_trial(row)


def _interrupted_line(n_trials, chosen_row, refit):
    final = ("training its setting on the training and validation data now (interrupt again to stop without a model)"
             if refit else "its model (training data only) is the final one")  # (no training left to interrupt)
    return (f"note: the autotune search was stopped (interrupted) after {_trials(n_trials)}; the chosen one is trial "
            f"{chosen_row['trial']} ({_describe(chosen_row)}): {final}")


def _trials(n):
    return f"{n} trial{'s' * (n != 1)}"


def stop_line(where):
    """The line a notebook shows for a Stop that ends the call ``where`` (stops.note_stop_line): the search keeps
    nothing of its own, so nothing was saved (notebook 02's cell: workspace.Workspace.autotune)."""
    return f"stopped by the user {where}; nothing was saved; run the cell again to start over"


def _failed_row(trial, phase, config, seconds, n_train):
    """The row of a trial whose training diverged: no accuracy or loss (NaN), never adopted, ranked last."""
    nan = float("nan")
    return {"trial": trial, "phase": phase, **settings(config), "val_accuracy": nan, "val_loss": nan, "gained": 0,
            "lost": 0, "p_value": nan, "adopted": False, "seconds": seconds, "work": work(config, n_train)}


def compare(right, chosen_right):
    """``(gained, lost, p_value)`` of a trial against the chosen one, from whether each got each
    validation document right (boolean arrays): the documents only the trial gets right, those only
    the chosen one gets right, and :func:`sign_test` of the two. The trial is adopted if
    ``p_value < ALPHA``."""
    gained, lost = int((right & ~chosen_right).sum()), int((chosen_right & ~right).sum())
    return gained, lost, sign_test(gained, lost)


def sign_test(gained, lost):
    """One-sided exact sign test (McNemar's test for paired accuracies): the probability of at least
    ``gained`` wins out of ``gained + lost`` disagreements if both models were equally accurate.
    Documents both get right (or both wrong) say nothing about which is better, which is why this
    paired test is far tighter than comparing two accuracies with their own standard errors."""
    n = gained + lost
    return sum(math.comb(n, k) for k in range(gained, n + 1)) / 2 ** n


def _rank(row):
    """Higher validation accuracy; on a tie, the lower validation loss (to 2 decimals); then less work;
    then the earlier trial. The loss comes first because on a small validation split many settings
    tie at the majority-class accuracy, the cheapest of them a model that has not learned anything. A trial
    that diverged (no accuracy) ranks below every other."""
    if math.isnan(row["val_accuracy"]):
        return (-math.inf, -math.inf, -row["work"], -row["trial"])
    return (row["val_accuracy"], -round(row["val_loss"], 2), -row["work"], -row["trial"])


def _describe(row):
    accuracy = "" if math.isnan(row["val_accuracy"]) else f": val accuracy {row['val_accuracy']:.4f}"
    return (f"{row['optimizer']} lr {row['lr']:.3g} batch {row['batch_size']} epochs {row['epochs']} "
            f"emsize {row['emsize']} ngrams {row['ngrams']}{accuracy}")


def _trial_line(row, chosen_row):
    if math.isnan(row["val_accuracy"]):
        return (f"trial {row['trial']:3d} ({row['phase']}, {row['seconds']:.1f}s) {_describe(row)}: training diverged  "
                f"[chosen: trial {chosen_row['trial']}, {chosen_row['val_accuracy']:.4f}]")
    return (f"trial {row['trial']:3d} ({row['phase']}, {row['seconds']:.1f}s) {_describe(row)}  "
            f"+{row['gained']}/-{row['lost']} p={row['p_value']:.3g}  [chosen: trial {chosen_row['trial']}, {chosen_row['val_accuracy']:.4f}]")


class _Search:
    """The candidates, in order; iterating yields ``(phase, config)``. Knows the results so far."""

    def __init__(self, start, n_train, fixed=(), rare_class=None):
        self.start, self.n_train = start, n_train
        self.rare_class = rare_class  # the start's class_signal.RareClassSignal (None: none, or a start given)
        self.not_searched = set(fixed)  # settings kept at the start's value (emsize with pretrained vectors)
        self.results = {}  # settings key -> row
        self.fixed = {}  # (ngrams, buckets, min_count) -> seconds of a trial besides featurizing and its epochs
        self.rates = {}  # (ngrams, buckets, min_count) -> seconds of the epochs per unit of work, of each trial
        self.featurize_seconds = 0.0  # the longest featurization so far

    def record(self, config, row, featurize_seconds=None, epoch_seconds=None, feature_key=None):
        """A trial's ``row``, and its seconds (none for a trial that diverged: only its result counts)."""
        self.results[_key(config)] = row
        if feature_key is None:
            return
        self.featurize_seconds = max(self.featurize_seconds, featurize_seconds)
        self.fixed[feature_key] = max(row["seconds"] - featurize_seconds - epoch_seconds, 0.0)
        self.rates.setdefault(feature_key, []).append(epoch_seconds / row["work"])

    def estimate(self, config, features, n_docs=None):
        """Seconds the trial would take: featurizing (if its n-gram features are new: 1.5x the longest
        so far), the fixed part (model initialization, scoring) and its work at the larger rate of the
        last two trials of its n-gram order (before there is one: the largest seen). ``n_docs``: the
        refit on more documents than the training split (always featurized anew, in proportion)."""
        key = _features_key(config)
        n_docs = n_docs or self.n_train
        featurizing = 0.0 if key in features and n_docs == self.n_train else 1.5 * self.featurize_seconds * n_docs / self.n_train
        if key in self.rates:
            fixed, rate = self.fixed[key], max(self.rates[key][-2:])
        else:
            fixed, rate = max(self.fixed.values()), max(max(r) for r in self.rates.values())
        return featurizing + fixed + rate * work(config, n_docs)

    def _best(self):
        return max(self.results.values(), key=_rank)

    def _config_of(self, row):
        return replace(self.start, **{k: row[k] for k in SEARCHED})

    def _new(self, config):
        return _key(config) not in self.results

    def __iter__(self):
        yield "start", self.start
        lr0 = self.start.learning_rate
        for n in (1, 2, 3):
            candidate = _candidate(self.start, ngrams=n)
            if candidate is not None and self._new(candidate):
                yield "coarse", candidate
        orders = sorted({row["ngrams"] for row in self.results.values()},
                        key=lambda n: max(_rank(r) for r in self.results.values() if r["ngrams"] == n), reverse=True)
        for n in orders:
            for factor in (4.0, 0.25):
                candidate = _candidate(self.start, ngrams=n, lr=_clip("lr", lr0 * factor))
                if candidate is not None and self._new(candidate):
                    yield "coarse", candidate
        steps = dict(FIRST_STEP)
        while steps:
            centre = self._best()
            improved = False
            for name in ("lr", "epochs", "emsize", "batch_size", "ngrams"):
                for direction in (1, -1):
                    candidate = self._neighbour(self._config_of(centre), name, direction, steps.get(name))
                    if candidate is None or not self._new(candidate):
                        continue
                    yield "refine", candidate
                    if self._best() is not centre:
                        improved = True
                        break
                if improved:
                    break  # restart the round around the new centre, same steps
            if not improved:
                steps = {k: math.sqrt(v) for k, v in steps.items() if math.sqrt(v) >= MIN_STEP[k]}

    def _neighbour(self, config, name, direction, step):
        if name in self.not_searched:
            return None
        if name == "ngrams":
            value = config.ngrams + direction
        elif step is None:
            return None
        else:
            value = getattr(config, name) * step ** direction
            if name != "lr":
                value = int(round(value)) if name != "batch_size" else 2 ** int(round(math.log2(value)))
                if value == getattr(config, name):
                    value += direction
        value = _clip(name, value)
        if name == "batch_size":
            value = min(value, 2 ** math.ceil(math.log2(self.n_train)))
        return None if value == getattr(config, name) else _candidate(config, **{name: value})


def _candidate(config, **changes):
    """``config`` with ``changes``, or None when TrainConfig refuses them: a neighbour whose table MXNet
    cannot hold (emsize 400 with a large --buckets) is a setting to skip, not the end of the search."""
    try:
        return replace(config, **changes)
    except FastTextError:
        return None


def _clip(name, value):
    low, high = LIMITS[name]
    return min(max(value, low), high)


def _key(config):
    return tuple(round(v, 6) if isinstance(v, float) else v for v in (getattr(config, n) for n in SEARCHED))


def save_bundle_with_trials(trained, output, trials_uri, compact="auto", overwrite=True, hint=SAVE_HINT,
                            trials_hint=SAVE_HINT, on_commit=None, overwrite_as=storage.OVERWRITE_ARGUMENT,
                            compact_as=None, keep_beside=False):
    """Save ``trained`` (an autotuned model) as a bundle at ``output`` and its trial table at ``trials_uri`` together:
    both saved, or, where either fails, both as they were. Returns where the bundle was written (bundle.save_bundle).

    The table is CSV (compressed as ``trials_uri``'s ending says: writers.compressed). ``hint`` ends the line
    refusing a bundle already at ``output``, ``trials_hint`` the one refusing a table already at ``trials_uri``
    (without ``overwrite``), ``overwrite_as`` the table's other refusals that say how to replace it (an S3 store that
    can neither write conditionally nor say whether it is there), ``compact_as`` a refused ``compact`` (save_bundle's);
    the command line passes its flags' names there. ``keep_beside``: as save_bundle's (the table, claimed first, then
    stays: it holds the trials of the model kept beside the bundle); a table found at ``trials_uri`` (another run's,
    written while this one trained) is kept too, and the model saved beside ``output`` without one (a BundleKept).

    The table is written in full before the bundle is published and put in place after it: written after the bundle,
    a disk too full for it failed the run with the old bundle already replaced; now such a failure leaves both as they
    were. Without ``overwrite`` it is claimed first instead (a link locally, a conditional PUT on S3), and on S3 with
    ``overwrite``, where putting it in place is an upload that can fail, it goes first too (:func:`_save_table_first`);
    a bundle that then fails takes it back.

    ``on_commit``: as save_bundle's, called with where the bundle is the moment it is in place. From then on the
    table stays with it: a stop (or an error) as the save ends kept the new bundle and took its table back, or put the
    earlier one back beside it, or (local, with ``overwrite``) never put it in place."""
    from .bundle import save_bundle  # (looked up at the call: benchmarks/ wrap bundle.save_bundle in a timer)
    from .compact import check_choice

    output, trials_uri = storage.expand_home(output), storage.expand_home(trials_uri)  # (~: the home folder's, as the readers read it)
    refuse_standard_output(output, "output", "the bundle", "a directory")
    refuse_standard_output(trials_uri, "trials_uri", "the autotune trial table", "a file")
    _check_autotuned(trained)
    check_choice(compact)  # (before the table is written: it would be taken back)
    refuse_a_name_not_written(trials_uri, "the trial table is written as CSV text", ".csv")  # (as the CLI's, before)
    table = compressed(_trial_table_csv(trained, compact), trials_uri)
    committed = []

    def commit(where):
        committed.append(where)
        if on_commit is not None:
            on_commit(where)

    if not overwrite:
        # Claimed first, in one step that never replaces a file (a link locally, a conditional PUT on S3): checked
        # and then put in place after the bundle, two runs that both found no table both wrote theirs, the second
        # over the first's, or one failed with its bundle already published. A bundle that then fails takes it back.
        written, claimed = [], False  # (written, on S3: the version the claim created, which a take-back deletes)
        try:
            try:
                with storage.atomic_write(trials_uri, "wb", overwrite=False, written=written,
                                          overwrite_as=overwrite_as,
                                          on_unanswered=functools.partial(_say_an_unanswered_upload, trials_uri)) as f:
                    f.write(table)
            except FastTextError as exc:
                if not isinstance(exc, storage.AlreadyExists) and "already exists" not in str(exc):
                    raise
                if not keep_beside:  # (S3's 409, another run's table in flight, stays "try again")
                    if isinstance(exc, storage.BeingWritten):
                        raise
                    raise FastTextError(f"{trials_uri} already exists; {trials_hint}") from None
            else:
                claimed = True
                return save_bundle(trained, output, compact=compact, overwrite=False, hint=hint, on_commit=commit,
                                   compact_as=compact_as, keep_beside=keep_beside)
        except BaseException as exc:
            # (a stop once the claim is in place but before it returns: known by written on S3; once the bundle is
            # in place, the table is its)
            if (claimed or written) and not committed:
                _take_back_the_table(trials_uri, exc, written, storage.rerun_to_replace(False, overwrite_as))
            elif committed:
                _say_both_written(exc, committed[0], trials_uri)
            raise
        # A table another run wrote there meanwhile (its bundle, at output or on its way there, is the table's): both
        # kept, and this model too, beside that bundle, with no table (its trials are in its metrics.json). Refused, the
        # model was lost, as a bundle found at output lost it (keep_beside).
        return save_bundle(trained, output, compact=compact, overwrite=False, hint=hint, on_commit=on_commit,
                           compact_as=compact_as, keep_beside=True, taken_beside=trials_uri)
    if storage.is_s3(trials_uri):
        readable, previous = _previous_table(trials_uri)
        if readable:
            return _save_table_first(trained, output, compact, hint, trials_uri, table, previous, commit, committed,
                                     compact_as, overwrite_as=overwrite_as)
    after_the_commit = None
    # (the table is put in place after the bundle here: a stop in its S3 upload leaves the bundle beside either table)
    try:
        with storage.atomic_write(trials_uri, "wb", overwrite=True,
                                  on_unanswered=functools.partial(_say_a_table_behind_its_bundle, trials_uri)) as f:
            f.write(table)
            f.flush()  # a full disk fails here, not in the rename after the bundle is published
            try:
                where = save_bundle(trained, output, compact=compact, overwrite=True, hint=hint, on_commit=commit,
                                    compact_as=compact_as)
            except BaseException as exc:
                if not committed:
                    raise
                after_the_commit = exc  # the bundle is in place: its table is put in place (the rename), then goes on
    except KeyboardInterrupt as exc:  # (in the table's upload: the bundle is this run's, whatever became of the table)
        if committed:
            note_what_a_stop_came_after(exc, f"the bundle was written to {committed[0]}")
        raise
    if after_the_commit is not None:
        _say_both_written(after_the_commit, committed[0], trials_uri)  # (the table put in place above)
        raise after_the_commit
    return where


def _say_both_written(exc, bundle, trials_uri):
    """A stop ``exc`` once the bundle is in place at ``bundle`` and its trial table at ``trials_uri``: its line says
    both (stops.files_written). The command line's said the bundle alone, the Python API's "stopped and cleaned up"."""
    if isinstance(exc, KeyboardInterrupt):
        note_what_a_stop_came_after(exc, files_written([("the bundle", bundle), ("the trial table", trials_uri)]))


def _check_autotuned(trained):
    """The model save_bundle_with_trials saves must carry its trials: one trained without autotune failed in a
    TypeError, after nothing was written but with no word of what to do."""
    from .bundle import check_trained_model

    if getattr(trained, "autotune", None) is None:
        check_trained_model(trained, "save_bundle_with_trials")  # (an AutotuneResult, a Predictor: what to pass)
        raise FastTextError("save_bundle_with_trials saves a model autotune chose, with its trial table; this one was "
                            "trained without autotune: save it with save_bundle(trained, ...)")


def _take_back_the_table(uri, cause, written, rerun):
    """Remove the trial table claimed at ``uri`` for a bundle whose save failed (``cause``); on S3 by the version its
    write created (``written``: atomic_write's), which a plain DELETE left behind a delete marker in a bucket that
    keeps versions. A removal that fails too must not hide the cause, nor go unsaid: the table of a bundle never saved
    stays, and refuses the next run without --overwrite (:func:`_say_a_failed_take_back`; ``rerun``: how to replace
    it, in the caller's user's terms)."""
    try:
        storage.remove_file(uri, written)
    except FastTextError as failed:
        _say_a_failed_take_back(cause, uri, failed, rerun)


def _say_a_failed_take_back(cause, uri, failed, rerun, put_back=False):
    """The take-back of the trial table at ``uri`` after ``cause`` (its removal; ``put_back``: the earlier table's
    return) failed (``failed``). After a :class:`FastTextError` it is a second clause of its one line; after a stop,
    in the stop's line (stops.stop_message: a warning line said it, then the stop's line "stopped and cleaned up"),
    what to do as ``rerun`` says; after a bug, which goes on as it was, a ``warning:`` line."""
    what = "putting the earlier trial table back" if put_back else f"removing the trial table {uri} this run wrote"
    holds = f"{uri} holds this run's trials, of a bundle that was not saved" if put_back else (
        "it holds the trials of a bundle that was not saved")
    if isinstance(cause, FastTextError):
        raise FastTextError(f"{cause}; {what} failed too ({failed}): {holds}") from None
    if not isinstance(cause, KeyboardInterrupt):
        print(f"warning: {what} failed ({failed}): {holds}", file=sys.stderr, flush=True)
    elif put_back:  # (the earlier table is gone: "cleaned up, but", as a set's file not put back is said)
        note_what_a_stop_left(cause, f"{what} failed ({failed}): {holds}")
    else:
        note_what_a_stop_could_not_remove(cause, [(f"the trial table {uri}", getattr(failed, "reason", str(failed)))],
                                          rerun)


def _say_an_unanswered_upload(uri, exc, sent):
    """A stop ``exc`` that came while the trial table's upload to S3 (``uri``), made before the bundle, awaited S3's
    answer (storage.atomic_write's ``on_unanswered``): where S3 had its request (``sent``), S3 may still apply it,
    after any take-back could run, leaving this run's table where the earlier one was (or none), with no bundle saved
    (a claimed one refuses the next run without overwrite). The stop's line says so (stops.note_what_a_stop_left):
    "stopped and cleaned up" said it was not. Not sent, nothing was written: that line is true."""
    if sent:
        note_what_a_stop_left(exc, f"the trial table {uri} may hold this run's trials, for a bundle that was not "
                                   f"saved (its upload was waiting for S3's answer when the stop came)")


def _say_a_table_behind_its_bundle(uri, exc, sent):
    """A stop ``exc`` that came before S3 answered the trial table's upload to ``uri``, made after the bundle was
    published (which save_bundle_with_trials says): the table beside the bundle may still be the earlier run's (or
    none), where S3 had its request (``sent``: it may apply the PUT, or not), and is where it was not (the stop came
    before the request went out). The line said only the bundle's part (the CLI's), or, to the Python API's caller,
    "stopped and cleaned up"."""
    if sent:
        note_what_a_stop_left(exc, f"the trial table {uri} may not hold this bundle's trials: its upload was waiting "
                                   f"for S3's answer when the stop came (S3 may still apply it)")
    else:
        note_what_a_stop_left(exc, f"the trial table {uri} does not hold this bundle's trials: the stop came before "
                                   f"its upload was sent")


def _trial_table(rows, ended):
    """The trial table (:data:`TABLE_COLUMNS`) of the trials' ``rows`` and what ``ended`` the search (on its last
    row)."""
    import pandas as pd

    return pd.DataFrame(rows, columns=TRIAL_COLUMNS).assign(ended=[""] * (len(rows) - 1) + [ended] if rows else [])


def _trial_table_csv(trained, compact="auto"):
    """The trial table of an autotuned model (its ``autotune["trials"]`` and ``["ended"]``) as UTF-8 CSV bytes; for a
    bundle saved as the lossy ``compact`` its scores' columns named as the float32 models' (:data:`FLOAT32_SCORES`).

    Labeled, not scored as the compact model would be: that changes nothing a user can act on (int4 lost 0.00
    points of test accuracy at Yelp size, docs/RESULTS.md section 4), and with the refit (the default) the bundle is
    none of the trials' models anyway; but the table read later, beside an int4 bundle, must not pass its figures off
    as that bundle's. Named so, a reader's ``df.val_accuracy`` fails rather than reads the wrong model's score."""
    from .compact import LOSSY

    table = _trial_table(trained.autotune["trials"], trained.autotune["ended"])
    if compact in LOSSY:
        table = table.rename(columns=FLOAT32_SCORES)
    return table.to_csv(index=False).encode("utf-8")


def float32_scores_note(compact, trials_uri=None):
    """The ``note:`` line of an autotuned bundle saved as the lossy ``compact`` (None otherwise): the trials' scores
    (shown on stderr, and at ``trials_uri`` under :data:`FLOAT32_SCORES`) are the float32 models'."""
    from .compact import LOSSY

    if compact not in LOSSY:
        return None
    where = f" ({trials_uri}: {', '.join(FLOAT32_SCORES.values())})" if trials_uri else ""
    return (f"note: the autotune trials were scored as the float32 models the search trained{where}; the bundle stores "
            f"its embedding rows as {compact} (lossy, docs/RESULTS.md section 4): evaluate scores it as saved")


def _previous_table(uri):
    """``(True, its bytes or None when there is none)`` for the table at the S3 ``uri``; ``(False, None)`` where S3
    refuses to say (no s3:GetObject, or no s3:ListBucket and no table: both answer 403)."""
    try:
        return True, (storage.read_bytes(uri) if storage.exists(uri) else None)
    except FastTextError:
        return False, None


def _save_table_first(trained, output, compact, hint, uri, table, previous, on_commit, committed, compact_as=None,
                      overwrite_as=storage.OVERWRITE_ARGUMENT):
    """``overwrite`` with the table on S3: its upload is the step that can fail (a 500, a reset), and, made after the
    bundle was published, such a failure ended the run in an error with the old bundle already replaced. So the
    table goes first, and a bundle that then fails puts ``previous`` (None: no table) back: in a bucket that keeps
    versions by deleting the version this write created (``previous`` is current again, no version is added), else
    by writing it again (not once the bundle is in place: ``committed``, which ``on_commit`` fills). A take-back that
    fails is said (:func:`_say_a_failed_take_back`; how to replace a table left, as ``overwrite_as`` says)."""
    from .bundle import save_bundle

    written = []  # (the version this write created: a take-back deletes it, leaving none in a bucket keeping versions)
    try:
        with storage.atomic_write(uri, "wb", overwrite=True, written=written,
                                  on_unanswered=functools.partial(_say_an_unanswered_upload, uri)) as f:
            f.write(table)
        return save_bundle(trained, output, compact=compact, overwrite=True, hint=hint, on_commit=on_commit,
                           compact_as=compact_as)
    except BaseException as exc:
        if committed:  # (the table went first: both are in place)
            _say_both_written(exc, committed[0], uri)
        if committed or not written:  # (not written: the upload failed, or a stop cut in before it was answered)
            raise
        try:
            if previous is None:
                storage.remove_file(uri, written)
            else:
                with storage.s3_errors(uri):
                    restored = storage.take_back_version(storage.s3_client(), written[0])
                if not restored:
                    with storage.atomic_write(uri, "wb", overwrite=True) as f:
                        f.write(previous)
        except FastTextError as failed:
            _say_a_failed_take_back(exc, uri, failed, storage.rerun_to_replace(True, overwrite_as),
                                    put_back=previous is not None)
        raise
