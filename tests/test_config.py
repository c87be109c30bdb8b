"""One source for the settings: the CLI and the SageMaker hyperparameters come from TrainConfig's fields."""
import re
from dataclasses import fields

import pytest

from fasttext_lib import cli, sm_train
from fasttext_lib.config import TrainConfig, config_from_args
from fasttext_lib.errors import FastTextError


def _train_parser():
    sub = next(a for a in cli.build_parser()._actions if a.dest == "command")
    return sub.choices["train"]


def _options(parser):
    return {a.dest: a for a in parser._actions if a.option_strings}


# The training job words these for its container and logs without progress bars by default.
SAGEMAKER_OVERRIDES = ("ctx", "kvstore", "progress")


@pytest.mark.parametrize("parser", [_train_parser(), sm_train.build_parser()], ids=["cli", "hyperparameters"])
def test_every_config_field_is_an_option_with_its_help_and_default(parser):
    options = _options(parser)
    sagemaker = parser.prog == "entry_point.py"
    for f in fields(TrainConfig):
        assert f.name in options, f.name
        if sagemaker and f.name in SAGEMAKER_OVERRIDES:
            continue
        assert options[f.name].help.startswith(f.metadata["help"]), f.name
        assert options[f.name].default == f.default, f.name


def test_a_flag_that_turns_a_setting_off_says_so():
    """``--no-progress``'s help once read "tqdm progress bars on stderr", as if the flag turned them on."""
    progress = _options(_train_parser())["progress"]
    assert progress.option_strings == ["--no-progress"] and progress.default is True
    assert progress.help.endswith("on by default, off with this flag")
    assert cli.build_parser().parse_args(["train", "--train", "t", "--output", "o", "--no-progress"]).progress is False


def test_a_new_field_becomes_an_option_of_both_parsers(monkeypatch):
    """Adding a field to TrainConfig is the only edit a new setting needs."""
    from dataclasses import field, make_dataclass

    from fasttext_lib import config

    extended = make_dataclass("Extended", [("label_smoothing", float, field(default=0.0, metadata={"help": "smooth"}))],
                              bases=(TrainConfig,))
    monkeypatch.setattr(config, "TrainConfig", extended)
    monkeypatch.setattr(config, "CONFIG_FIELDS", tuple(f.name for f in fields(extended)))
    args = cli.build_parser().parse_args(["train", "--train", "t", "--output", "o", "--label-smoothing", "0.1"])
    assert config.config_from_args(args).label_smoothing == 0.1
    hp, _ = sm_train.parse_hyperparameters(["--label_smoothing", "0.2"])
    assert hp.label_smoothing == 0.2


def test_hyperparameters_are_parsed_tolerantly():
    args, _ = sm_train.parse_hyperparameters(["--lr", "1e-3", "--epochs", "10.0", "--progress", "True",
                                              "--batch_size", "64", "--dropout", "0.25"])
    assert (args.lr, args.epochs, args.progress, args.batch_size, args.dropout) == (0.001, 10, True, 64, 0.25)
    for none in ("none", "null", "", "None"):
        assert sm_train.parse_hyperparameters(["--lr", none])[0].lr is None
    with pytest.raises(FastTextError, match="expected an integer, got '10.5'"):
        sm_train.parse_hyperparameters(["--epochs", "10.5"])


def test_cli_options_build_a_validated_config():
    parser = cli.build_parser()
    args = parser.parse_args(["train", "--train", "t", "--output", "o", "--epochs", "3", "--lr", "0.5",
                              "--optimizer", "sgd", "--no-progress", "--ngrams", "2"])
    config = config_from_args(args)
    assert (config.epochs, config.lr, config.optimizer, config.progress, config.ngrams) == (3, 0.5, "sgd", False, 2)
    assert config_from_args(parser.parse_args(["train", "--train", "t", "--output", "o"])) == TrainConfig()
    with pytest.raises(FastTextError, match="optimizer must be one of sgd, adam"):
        config_from_args(parser.parse_args(["train", "--train", "t", "--output", "o", "--optimizer", "rmsprop"]))


@pytest.mark.parametrize("settings", [dict(ngrams=2, emsize=1100), dict(ngrams=2, buckets=10**12), dict(emsize=10**12)])
def test_a_table_larger_than_mxnet_can_allocate_is_refused_before_any_data(settings):
    """2M buckets x emsize 1100 is 2.2e9 values: MXNet 1.9's 32-bit tensor sizes refused it at allocation
    (a traceback, after the data was read); ngrams 1 ignores buckets."""
    with pytest.raises(FastTextError, match="more than the 2,147,483,647 MXNet can hold in one tensor"):
        TrainConfig(**settings)
    TrainConfig(ngrams=1, buckets=10**12)
    TrainConfig(ngrams=2, emsize=1000)  # 2M + 2 rows x 1000 fit


def test_a_vocabulary_that_makes_the_table_too_large_is_one_error(tmp_path):
    """The buckets fit, the words on top of them do not: found once the vocabulary is known, before allocating."""
    from conftest import cli_in_process

    data = tmp_path / "t.train"
    data.write_text("".join(f"__label__{i % 2} w{i} x{i}\n" for i in range(200)))
    emsize = 1000
    buckets = 2**31 // emsize - 10  # room for 8 more rows: the 401-word vocabulary does not fit
    r = cli_in_process("train", "--train", data, "--output", tmp_path / "out", "--ngrams", "2", "--buckets", buckets,
                       "--emsize", emsize, "--epochs", "1", "--no-progress", "--ctx", "cpu")
    assert r.returncode == 2 and r.stderr.startswith("error: the embedding table: "), r.stderr
    assert "MXNet can hold in one tensor" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name, value", [("lr", "0.1"), ("wd", "0"), ("dropout", "0.2"), ("lr", True), ("wd", None)])
def test_a_number_setting_given_as_text_is_named_not_a_type_error(name, value):
    """`papermill -r lr 0.1` (or a config read from JSON text) passed the string: `"0.1" > 0` was a TypeError
    traceback that named no setting, and lr=True trained with lr 1.0."""
    with pytest.raises(FastTextError, match=f"^{name} must be a number, got {value!r}$"):
        TrainConfig(**{name: value})


@pytest.mark.parametrize("value", ["no", "false", 0, None])
def test_a_yes_no_setting_given_as_text_is_refused_not_taken_as_true(value):
    """TrainConfig(progress="no") (a JSON config, papermill's text) was true: progress bars were shown. The
    CLI's --no-progress and the hyperparameter parser (`--progress false`) give real booleans."""
    with pytest.raises(FastTextError, match=f"^progress must be True or False, got {value!r}$"):
        TrainConfig(progress=value)
    import numpy as np

    assert TrainConfig(progress=np.bool_(False)).progress is not True
    hyper = sm_train.build_parser().parse_args(["--progress", "false"])
    assert config_from_args(hyper).progress is False


@pytest.mark.parametrize("settings, bound", [
    (dict(lr=1e39), "3.4e+38"),  # above float32's largest, whatever the batch
    (dict(lr=1e38, batch_size=1024, ngrams=2), "8.51e+37"),  # the output layer steps with lr x 4 there (row shrink)
    (dict(lr=1e38, batch_size=1024, ngrams=2, optimizer="sgd"), "8.51e+37"),
])
def test_an_lr_that_mxnet_cannot_step_with_is_refused_up_front(settings, bound):
    """`papermill 02 -p lr 1e39` (or --lr 1e39) trained into MXNet's "Invalid Parameter format for lrs expect tuple of
    <float>" traceback from multi_sgd_update: its steps are float32. The same lr is refused in one line, naming the
    largest it takes; one within it passes (and diverges in one line, as any lr too large does)."""
    with pytest.raises(FastTextError, match=rf"^lr must be a positive number of at most {re.escape(bound)}\b.*, got "):
        TrainConfig(**settings)
    TrainConfig(lr=3e38)
    TrainConfig(lr=8e37, batch_size=1024, ngrams=2)
    TrainConfig(lr=1e38, batch_size=1024, ngrams=2, optimizer="adam")  # adam has no row shrink


@pytest.mark.parametrize("lr", [1e-300, 1e-40, 5e-21])
def test_an_lr_too_small_to_move_a_float32_parameter_is_refused_up_front(lr):
    """`papermill 02 -p lr 1e-300` trained at lr 0 (float32 has no such number; the native route read it as 0, with a
    numpy overflow warning) and ended at a coin toss's accuracy, saying nothing. Steps below 1e-20 cannot change a
    float32 parameter (a weight near 0.01 moves by 1e-9 at the least), and a linear schedule's last steps of 1e-20
    over a billion steps still are float32 normals: refused in one line, naming the least."""
    with pytest.raises(FastTextError, match=r"^lr must be at least 1e-20 \(.*float32.*\), got "):
        TrainConfig(lr=lr)
    TrainConfig(lr=1e-20)
    TrainConfig(lr=1e-6, optimizer="adam")


@pytest.mark.parametrize("name, given, meant", [("optimizer", "SGD", "sgd"), ("optimizer", "Adam", "adam"),
                                                ("optimizer", "adan", "adam"), ("lr_schedule", "Linear", "linear"),
                                                ("kvstore", "dist-sync", "dist_sync")])
def test_a_choice_written_in_other_capitals_or_misspelled_is_refused_with_the_one_meant(name, given, meant):
    """`papermill 02 -p optimizer SGD` (or `train --optimizer SGD`) was told "optimizer must be one of sgd, adam, got
    'SGD'" with no hint, where a misspelled parameter or dataset names the one meant."""
    choices = {"optimizer": "sgd, adam", "lr_schedule": "linear, constant",
               "kvstore": "auto, local, device, dist_sync, dist_async"}[name]
    with pytest.raises(FastTextError) as raised:
        TrainConfig(**{name: given})
    assert str(raised.value) == f"{name} must be one of {choices}, got {given!r} (did you mean {meant!r}?)"
    with pytest.raises(FastTextError) as raised:
        config_from_args(cli.build_parser().parse_args(["train", "--train", "t", "--output", "o", "--optimizer", "SGD"]))
    assert str(raised.value).endswith("got 'SGD' (did you mean 'sgd'?)")
    with pytest.raises(FastTextError) as raised:  # nothing close: no hint
        TrainConfig(optimizer="rmsprop")
    assert str(raised.value) == "optimizer must be one of sgd, adam, got 'rmsprop'"


def test_more_epochs_than_any_run_takes_are_refused_up_front():
    """`--epochs 100000000000000000000` (a TrainConfig's, a hyperparameter's) was taken: the SGD lr from the data
    spread its budget over 10**20 epochs (~1e-18), and the run trained at that lr for ever; a resume without
    s3:ListBucket first asked S3 for each epoch's checkpoint. Refused in one line, from the CLI too."""
    from conftest import cli_in_process

    from fasttext_lib.config import MAX_EPOCHS

    TrainConfig(epochs=MAX_EPOCHS)
    for epochs in (MAX_EPOCHS + 1, 10**20):
        with pytest.raises(FastTextError, match=rf"^epochs must be at most {MAX_EPOCHS} .*, got {epochs}$"):
            TrainConfig(epochs=epochs)
    r = cli_in_process("train", "--train", "t", "--output", "o", "--epochs", "100000000000000000000")
    assert r.returncode == 2 and r.stderr.startswith("error: --epochs must be at most 100000 "), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_choice_cut_short_is_told_the_choices_it_begins():
    """`-p kvstore dis` named no choice, where notebook 01's `-p dataset yelp` names both Yelp sets: one rule for
    both now (errors.did_you_mean)."""
    with pytest.raises(FastTextError) as raised:
        TrainConfig(kvstore="dis")
    assert str(raised.value).endswith("got 'dis' (did you mean 'dist_sync' or 'dist_async'?)")
    with pytest.raises(FastTextError) as raised:
        TrainConfig(lr_schedule="Const")
    assert str(raised.value).endswith("got 'Const' (did you mean 'constant'?)")


TABLE_TOO_LARGE = (r"{emsize} and {buckets}: 2,000,002 rows x emsize 2000 = 4,000,004,000 values, more than the "
                   r"2,147,483,647 MXNet can hold in one tensor; lower {emsize} or {buckets}")


@pytest.mark.parametrize("flags, kwargs, said", [
    (["--epochs", "0"], {"epochs": 0}, "{epochs} must be a positive integer, got 0"),
    (["--min-count", "0"], {"min_count": 0}, "{min_count} must be a positive integer, got 0"),
    (["--lr-schedule", "cosine"], {"lr_schedule": "cosine"},
     "{lr_schedule} must be one of linear, constant, got 'cosine'"),
    (["--ngrams", "2", "--buckets", "0"], {"ngrams": 2, "buckets": 0},
     "{buckets} must be a positive integer when {ngrams} > 1, got 0"),
    (["--emsize", "2000", "--ngrams", "2"], {"emsize": 2000, "ngrams": 2}, TABLE_TOO_LARGE),
    (["--lr", "1e39"], {"lr": 1e39}, r"{lr} must be a positive number of at most 3.4e\+38 \(MXNet steps in float32\), "
                                     r"got 1e\+39"),
    (["--ctx", "tpu"], {"ctx": "tpu"}, "unknown {ctx} 'tpu': use auto, cpu, cpu:N, gpu, gpu:N or gpu:0,1"),
    (["--seed", "-1"], {"seed": -1}, "{seed} must be an integer from 0 to 4294967295, got -1"),
])
def test_a_refused_setting_is_named_as_its_user_gives_it(flags, kwargs, said):
    """The command line was told TrainConfig's names, which it has no flags of: "epochs must be a positive integer",
    "lr_schedule must be one of ...", "emsize and buckets: ...; lower emsize or buckets". It is told its flags
    (--epochs, --lr-schedule, --emsize); a Python caller is still told the arguments (epochs, lr_schedule, emsize)."""
    from conftest import cli_in_process

    names = ("epochs", "min_count", "lr_schedule", "buckets", "ngrams", "emsize", "lr", "ctx", "seed")
    r = cli_in_process("train", "--train", "t", "--output", "o", *flags)
    as_flags = said.format(**{name: "--" + name.replace("_", "-") for name in names})
    assert r.returncode == 2 and re.fullmatch(f"error: {as_flags}\n", r.stderr), r.stderr
    with pytest.raises(FastTextError, match=f"^{said.format(**{name: name for name in names})}$"):
        TrainConfig(**kwargs)
