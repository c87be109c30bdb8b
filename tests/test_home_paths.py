"""A local path that starts with ``~`` (``~/data/train.csv``, ``vectors='~/wiki.vec'``) names a file in the home
folder, as pandas' readers and a shell read it: passed where the shell did not expand it (quoted on the command line,
a notebook's parameter, a Python argument) it was "no such file: ~/data/train.csv", and a bundle saved to ``~/out``
went into a folder named ``~`` under the current one. Only ``~`` and ``~/`` are expanded: a relative path stays
relative, and ``~name`` is a name in the current folder, whether or not a user ``name`` exists."""
import os
import shlex

import numpy as np
import pytest

from conftest import cli_in_process
from fasttext_lib.synthetic import generate_reviews


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A home folder of its own (``$HOME``, which ``~`` reads), the current folder another: a path read relative to
    it instead of the home finds nothing. The native code stays built where it is."""
    from fasttext_lib.native_build import cache_dir

    monkeypatch.setenv("FASTTEXT_LIB_CACHE", cache_dir())
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(elsewhere)
    return home


def _write_train_csv(path, n=600):
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.writers import write_csv

    data = generate_reviews(n, seed=3)
    write_csv(LabeledTexts(data.labels, data.texts), str(path))
    return data


def _write_vectors(path, words, dim):
    values = np.random.RandomState(1).uniform(-1, 1, (len(words), dim))
    lines = [f"{len(words)} {dim}"] + [w + " " + " ".join(f"{v:.5f}" for v in row) for w, row in zip(words, values)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _words(data):
    return sorted({w for text in data.texts for w in text.lower().split()})[:80]


def test_the_python_readers_read_a_path_under_the_home_folder(home):
    from fasttext_lib.data import read_counted, read_labeled
    from fasttext_lib.own_data import check_own_data, read_own_splits
    from fasttext_lib.vec_files import check_vec_start, read_vec

    (home / "data").mkdir()
    written = _write_train_csv(home / "data" / "train.csv")
    _write_vectors(home / "wiki.vec", _words(written), 8)
    as_read = read_labeled(str(home / "data" / "train.csv"))
    assert read_labeled("~/data/train.csv").texts == as_read.texts and len(as_read) == len(written.texts)
    assert read_counted("~/data/train.csv").labels == as_read.labels
    check_own_data("mine", "~/data/train.csv")
    assert len(read_own_splits("~/data/train.csv")["train"]) > 0
    check_vec_start("~/wiki.vec", dim=8)
    assert len(read_vec("~/wiki.vec", dim=8).words) == 80


def test_an_error_names_the_missing_file_that_was_looked_for(home):
    from fasttext_lib.data import read_labeled
    from fasttext_lib.errors import FastTextError

    with pytest.raises(FastTextError, match="no such file: .*/home/data/missing.csv$"):
        read_labeled("~/data/missing.csv")


def test_a_relative_path_is_not_made_absolute(home):
    """Only ``~`` is expanded: a relative path is read from the current folder, and its error names it as given."""
    from fasttext_lib.data import read_labeled
    from fasttext_lib.errors import FastTextError

    with pytest.raises(FastTextError, match="^no such file: data/missing.csv$"):
        read_labeled("data/missing.csv")


def test_an_s3_uri_with_a_tilde_is_a_key_as_written(s3_bucket):
    from fasttext_lib.storage import expand_home

    assert expand_home(f"{s3_bucket}/~/train.csv") == f"{s3_bucket}/~/train.csv"
    assert expand_home("-") == "-" and expand_home(None) is None


def test_the_python_api_trains_saves_and_loads_under_the_home_folder(home):
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.data import read_labeled
    from fasttext_lib.bundle import save_bundle
    from fasttext_lib.predict import Predictor
    from fasttext_lib.train import train
    from fasttext_lib.vectors import export_vectors

    data = _write_train_csv(home / "train.csv")
    _write_vectors(home / "wiki.vec", _words(data), 8)
    config = TrainConfig(epochs=1, emsize=8, batch_size=64, seed=4, progress=False, ctx="cpu",
                         pretrained_vectors="~/wiki.vec")
    trained = train(read_labeled("~/train.csv"), config=config, checkpoint_dir="~/ckpt")
    save_bundle(trained, "~/model")
    assert (home / "model" / "config.json").is_file() and (home / "ckpt").is_dir()
    import json

    recorded = json.loads((home / "model" / "config.json").read_text())  # (the vectors' file, as read: not ~/wiki.vec)
    assert recorded["pretrained_vectors"]["file"] == recorded["train_config"]["pretrained_vectors"] == str(
        home / "wiki.vec")
    predictor = Predictor.load("~/model")
    export_vectors(predictor, "~/words.vec")
    assert (home / "words.vec").is_file()
    assert not os.path.exists("~"), os.listdir(".")  # nothing written to a folder named ~ here


def test_the_command_line_reads_and_writes_quoted_home_paths(home):
    """``--train '~/train.csv'`` (quoted, so the shell left the ``~``) trains, as ``--train ~/train.csv`` does."""
    data = _write_train_csv(home / "train.csv")
    _write_vectors(home / "wiki.vec", _words(data), 8)
    (home / "reviews.txt").write_text("great food\nterrible service\n", encoding="utf-8")
    trained = cli_in_process("train", "--train", "~/train.csv", "--validation", "~/train.csv", "--output", "~/model",
                             "--checkpoint-dir", "~/ckpt", "--pretrained-vectors", "~/wiki.vec", "--emsize", "8",
                             "--epochs", "1", "--batch-size", "64", "--no-progress", "--ctx", "cpu")
    assert trained.returncode == 0, trained.stderr
    assert (home / "model" / "config.json").is_file() and not os.path.exists("~")
    answered = cli_in_process("predict", "--model", "~/model", "--input", "~/reviews.txt")
    assert answered.returncode == 0 and len(answered.stdout.splitlines()) == 2, answered.stderr
    scored = cli_in_process("evaluate", "--model", "~/model", "--data", "~/train.csv")
    assert scored.returncode == 0, scored.stderr
    exported = cli_in_process("export-vectors", "--model", "~/model", "--output", "~/words.vec")
    assert exported.returncode == 0 and (home / "words.vec").is_file(), exported.stderr


def _train_command(epochs, checkpoints, output, *more):
    return ["train", "--train", "~/train.csv", "--output", output, "--emsize", "8", "--batch-size", "64", "--seed", "4",
            "--no-progress", "--ctx", "cpu", "--checkpoint-dir", checkpoints, *(["--epochs", epochs] if epochs else []),
            *more]


def _suggested(refused):
    assert refused.returncode != 0 and refused.stderr.count("error: ") == 1, refused.stderr
    return refused.stderr.split("rerun with ", 1)[1].split(" to resume it", 1)[0]


def test_the_rerun_a_refused_resume_suggests_names_home_vectors_by_a_path_that_works(home):
    """A first run given ``--pretrained-vectors '~/wiki.vec'``: its checkpoint recorded the path made absolute from
    the current folder (``<cwd>/~/wiki.vec``, no file), so the rerun a refused resume suggested failed when pasted."""
    data = _write_train_csv(home / "train.csv")
    _write_vectors(home / "wiki.vec", _words(data), 8)
    first = cli_in_process(*_train_command("2", "~/ckpt", "~/first", "--pretrained-vectors", "~/wiki.vec"))
    assert first.returncode == 0, first.stderr
    suggested = _suggested(cli_in_process(*_train_command("3", "~/ckpt", "~/refused")))
    pasted = cli_in_process(*_train_command(None, "~/ckpt", "~/resumed", *shlex.split(suggested)))
    assert pasted.returncode == 0, (suggested, pasted.stderr)
    assert "epoch 2 of 2 done" in pasted.stderr, pasted.stderr


def _checkpoint_of_older_code(checkpoints, vectors):
    """The checkpoints in ``checkpoints`` as code before c29d318 wrote them: the vectors' path as it was given."""
    import json

    for marker in checkpoints.glob("epoch-*/checkpoint.json"):
        meta = json.loads(marker.read_text())
        meta["config"]["pretrained_vectors"] = vectors
        marker.write_text(json.dumps(meta))


def test_an_older_checkpoints_relative_vectors_path_is_suggested_absolute_where_it_names_a_file(home, monkeypatch):
    """Checkpoints written before the vectors' path was recorded absolute hold it as the first run was given it
    (``wiki.vec``): the suggestion named a file only from that run's folder. Rerun from a folder where the path names
    a file, the suggestion names it absolute (its content is compared on resume: another file is refused)."""
    data = _write_train_csv(home / "train.csv")
    proj = home / "proj"
    proj.mkdir()
    _write_vectors(proj / "wiki.vec", _words(data), 8)
    monkeypatch.chdir(proj)
    first = cli_in_process(*_train_command("2", "ckpt", "first", "--pretrained-vectors", "wiki.vec"))
    assert first.returncode == 0, first.stderr
    _checkpoint_of_older_code(proj / "ckpt", "wiki.vec")
    suggested = _suggested(cli_in_process(*_train_command("3", "ckpt", "refused")))
    assert shlex.split(suggested)[-2:] == ["--pretrained-vectors", str(proj / "wiki.vec")], suggested
    monkeypatch.chdir(home)
    pasted = cli_in_process(*_train_command(None, "proj/ckpt", "resumed", *shlex.split(suggested)))
    assert pasted.returncode == 0, (suggested, pasted.stderr)


def test_an_older_checkpoints_relative_vectors_path_that_names_no_file_here_is_said_to_be_relative(home, monkeypatch):
    """From a folder where it names no file, the suggestion says what the relative path is relative to, which the
    checkpoint does not record; in a Python caller's terms too."""
    from fasttext_lib.checkpoints import in_argument_terms

    data = _write_train_csv(home / "train.csv")
    proj = home / "proj"
    proj.mkdir()
    _write_vectors(proj / "wiki.vec", _words(data), 8)
    monkeypatch.chdir(proj)
    assert cli_in_process(*_train_command("2", "ckpt", "first", "--pretrained-vectors", "wiki.vec")).returncode == 0
    _checkpoint_of_older_code(proj / "ckpt", "wiki.vec")
    monkeypatch.chdir(home)
    refused = cli_in_process(*_train_command("3", "proj/ckpt", "refused"))
    assert _suggested(refused).endswith("--pretrained-vectors wiki.vec"), refused.stderr
    said = ("wiki.vec is relative to the folder the run that wrote this checkpoint was started in, which the "
            "checkpoint does not record")
    assert said in refused.stderr, refused.stderr
    line = refused.stderr.split("error: ", 1)[1].strip()
    assert said in in_argument_terms(line) and "pretrained_vectors='wiki.vec'" in in_argument_terms(line)


def _tiny_archive(folder):
    """A Zhang et al. archive of two classes in ``folder`` (a mirror, read as base_url) and its spec."""
    import hashlib
    import io
    import tarfile

    from fasttext_lib.download import ZhangDataset
    from fasttext_lib.writers import csv_line

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, body in (("classes.txt", "good\nbad\n"), ("train.csv", csv_line("1", "fine food") + csv_line("2", "cold")),
                           ("test.csv", csv_line("2", "slow service"))):
            info = tarfile.TarInfo(f"tiny_csv/{name}")
            info.size = len(body.encode())
            tar.addfile(info, io.BytesIO(body.encode()))
    data = buf.getvalue()
    folder.mkdir()
    (folder / "tiny_csv.tgz").write_bytes(data)
    return ZhangDataset("tiny", "https://example.invalid/tiny_csv.tgz", len(data), hashlib.md5(data).hexdigest(), 2)


def test_the_python_writers_write_under_the_home_folder(home):
    """The Python API's writers took ``~/out.csv`` as a folder named ``~`` here (the readers and save_bundle read it
    as the home folder's): write_csv, write_fasttext, write_fasttext_splits, folders_to_csv, write_vec, prepare and
    download (output, cache_dir and a local mirror), and a names file given to label_names."""
    from fasttext_lib import label_names
    from fasttext_lib.class_folders import folders_to_csv
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.download import download, prepare
    from fasttext_lib.vec_files import read_vec, write_vec
    from fasttext_lib.writers import write_csv, write_fasttext, write_fasttext_splits

    data = LabeledTexts(["pos", "neg"], ["fine food", "cold soup"])
    write_csv(data, "~/out.csv")
    write_fasttext(data, "~/out.txt")
    write_fasttext_splits({"train": data, "test": data}, "~/splits", "mine", names={"pos": "positive"})
    for label, text in (("pos", "fine"), ("neg", "cold")):
        (home / "folders" / label).mkdir(parents=True)
        (home / "folders" / label / "1.txt").write_text(text)
    folders_to_csv("~/folders", "~/folders.csv")
    _write_vectors(home / "wiki.vec", ["fine", "cold"], 4)
    write_vec(read_vec("~/wiki.vec"), "~/copy.vec")
    spec = _tiny_archive(home / "mirror")
    assert download(spec, "~/cache", base_url="~/mirror", progress=False) == str(home / "cache" / "tiny_csv.tgz")
    prepare(spec, "~/prepared", "~/cache2", base_url="~/mirror", progress=False)
    for written in ("out.csv", "out.txt", "splits/mine.train", "splits/mine.classes.txt", "folders.csv", "copy.vec",
                    "cache/tiny_csv.tgz", "prepared/tiny.train", "prepared/tiny.test"):
        assert (home / written).is_file(), written
    (home / "names.txt").write_text("pos=positive\nneg=negative\n")
    assert label_names.from_option("~/names.txt") == {"pos": "positive", "neg": "negative"}
    assert label_names.read_file("~/names.txt") == {"pos": "positive", "neg": "negative"}
    assert not os.path.exists("~"), os.listdir(".")  # nothing written to a folder named ~ here


def test_an_autotuned_bundle_and_its_trial_table_are_written_under_the_home_folder(home):
    from fasttext_lib.autotune import autotune, save_bundle_with_trials
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.data import LabeledTexts

    data = generate_reviews(300, seed=3)
    train_data = LabeledTexts(data.labels[:200], data.texts[:200])
    val_data = LabeledTexts(data.labels[200:], data.texts[200:])
    tuned = autotune(train_data, val_data, duration=120, base=TrainConfig(epochs=1, emsize=8, progress=False, ctx="cpu"),
                     max_trials=2, verbose=False)
    save_bundle_with_trials(tuned.trained, "~/model", "~/trials.csv")
    assert (home / "model" / "config.json").is_file() and (home / "trials.csv").is_file()
    assert not os.path.exists("~"), os.listdir(".")


def test_a_file_whose_name_starts_with_a_tilde_and_names_no_user_is_read_here(home):
    """``~$report.csv`` (Office's lock files), ``~draft.csv``: a ``~`` followed by no user's name is no home folder
    to a shell or to pandas, nor here: the file in the current folder is read, as it was before ``~`` was expanded."""
    from fasttext_lib.data import read_labeled
    from fasttext_lib.storage import expand_home

    name = "~no-such-user-here.csv"
    _write_train_csv(name, n=60)
    assert expand_home(name) == name and len(read_labeled(name)) == 60


def test_a_tilde_and_an_existing_users_name_is_a_name_here_not_that_users_home(home):
    """``--output '~backup'``, quoted so that the shell left it, named a folder ``~backup`` here: it went to
    ``/var/backups`` where the system user ``backup`` exists (os.path.expanduser reads ``~name`` as that user's home).
    root exists on every Linux system: ``~root`` is written and read here, never /root."""
    import pwd

    from fasttext_lib.data import LabeledTexts, read_labeled
    from fasttext_lib.storage import expand_home
    from fasttext_lib.writers import write_csv

    assert pwd.getpwnam("root").pw_dir == "/root"  # (a user of that name exists: its home is what was read before)
    assert expand_home("~root") == "~root" and expand_home("~root/train.csv") == "~root/train.csv"
    data = LabeledTexts(["pos", "neg"], ["fine food", "cold soup"])
    write_csv(data, "~root")  # (before: refused, /root is a folder)
    assert (home.parent / "elsewhere" / "~root").is_file()
    assert read_labeled("~root").texts == data.texts


def test_the_notebooks_output_dir_of_a_tilde_and_a_users_name_is_a_folder_here(home):
    """The notebooks' ``output_dir = "~root"`` was root's home folder (pathlib's expanduser), where the readers and
    writers read the name as a folder here."""
    from fasttext_lib.workspace import Workspace

    assert Workspace("bkt", "p", "~root").out == home.parent / "elsewhere" / "~root"
