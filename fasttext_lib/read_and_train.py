"""From files to a trained model, the way the command line's ``train`` (cli.py) and the SageMaker training job
(sm_train.py) both go once their checks before reading are done: the validation data read first, then the training
data, the label names settled, the model trained (train.train) and its last epoch's checkpoint confirmed as kept. One
function, :func:`read_then_train`, so that the two cannot drift apart (they did the same steps each in its own code).

Each caller passes what is its own: its readers (the CLI's files, read_counted for the training data; the job's
channels, sm_train.read_channel), its terms (the CLI's ``--label-names`` and stderr; the job's ``label_names``
hyperparameter and its log; the job says a refusal of train()'s again in its own terms, sm_train.in_job_terms) and
train()'s arguments (``on_epoch_end``: its line per epoch; ``checkpoint_dir`` and the search its checks made there).
What each checks before reading (the pretrained vectors' start among it: vec_files.check_vec_start, where each
caller's order of checks puts it), and how it saves the bundle, stay the caller's. The CLI's autotune reads with
:func:`read_splits` and searches instead of training. The notebooks call train.train on data they read themselves
(own_data.py: notebook 01's files; data.py: the readers).
"""
from . import label_names


def read_splits(read_validation, read_training, *, explicit_names, names_as, say, beside_validation=None):
    """``(train_data, val_data)``: ``read_validation()`` (None: no validation data, and ``val_data`` is None), then
    ``read_training()``, the training data's label names settled and their line passed to ``say``.

    ``explicit_names``: label_names.from_option of what the caller's user gave as ``names_as`` (``--label-names``,
    ``label_names``), which wins over names found beside the data. ``beside_validation``: ``(names file, its mapping,
    subset)`` found beside the validation data and not beside the training data (the CLI's; the job's test channel's,
    sm_train.ChannelNames): checked against both data's classes, they name the training data's
    (label_names.kept_for_data's ``subset``)."""
    # The validation data first: nothing in the training data changes how it is read, and a file that cannot be read
    # was refused only once the whole training data had been (minutes at Yelp size). Its texts are held through that
    # read (~30 MB for Yelp's 38k test reviews; train() frees them once encoded); the label names are settled from the
    # training data.
    val_data = read_validation() if read_validation is not None else None
    train_data = read_training()
    names_line = _settle_names(train_data, val_data, explicit_names, names_as, beside_validation)
    if names_line:
        say(names_line)
    return train_data, val_data


def _settle_names(train_data, val_data, explicit_names, names_as, beside_validation):
    """label_names.settle of ``train_data``, with the names found beside the validation data only
    (``beside_validation``, see :func:`read_splits`) kept for its classes: the line that says them, or None."""
    names_line = label_names.settle(train_data, explicit_names, names_as)
    if beside_validation is not None:  # names beside the validation data only: they name the training data's classes
        names_file, found, subset = beside_validation
        kept_names = label_names.kept_for_data(found, list(train_data.labels) + list(val_data.labels), names_file,
                                               subset=subset, option=names_as)
        # (checked against both files' classes, kept for the training data's: a validation class training lacks is
        # then said as such by train, not as a name the training data has no class for)
        trained_classes = set(train_data.labels)
        train_data.names = {label: name for label, name in kept_names.items() if label in trained_classes}
        names_line = label_names.settle(train_data, None, names_as)
    return names_line


def read_then_train(read_validation, read_training, config, kept, *, explicit_names, names_as, say,
                    beside_validation=None, in_own_terms=None, **train_kwargs):
    """The :class:`~fasttext_lib.train.TrainedModel` train.train makes of the data :func:`read_splits` reads, with
    ``config``.

    The texts are released once encoded (~0.4 GB at Yelp size), and train() names settings as the command line's
    flags (the job's said as its hyperparameters: errors.settings_said_as around this call). ``train_kwargs``:
    train()'s others (``on_epoch_end``, ``checkpoint_dir``, ``checkpoint_search``, ``val_name``). ``kept``: the
    caller's checkpoints.KeptCheckpoint of ``checkpoint_dir``, whose last epoch's checkpoint is confirmed as kept once
    train() returns (a stop while the caller saves names it). ``in_own_terms``: a refusal of train()'s said again in
    the caller's terms (the job's: sm_train.in_job_terms), raised as one FastTextError of that line."""
    from .errors import FastTextError
    from .train import train

    train_data, val_data = read_splits(read_validation, read_training, explicit_names=explicit_names,
                                       names_as=names_as, say=say, beside_validation=beside_validation)
    try:
        trained = train(train_data, val_data, config, release_texts=True, kept=kept,
                        said_as_flags=True,  # (a checkpoint refused: --checkpoint-dir, which in_job_terms rewords)
                        **train_kwargs)
    except FastTextError as exc:
        if in_own_terms is None:
            raise
        raise FastTextError(in_own_terms(str(exc))) from None
    if train_kwargs.get("checkpoint_dir") and trained.history:  # the last epoch's is kept: the rerun resumes it,
        kept.confirm(trained.history[-1]["epoch"])              # saves the bundle (a stop while saving says so)
    return trained
