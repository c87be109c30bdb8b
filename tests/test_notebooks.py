"""The notebooks are the source people edit: static checks of what is committed.

The series is *executed* once per ``make test``, by nbval (``make nbval``), which re-runs the
committed notebooks against a local S3 server and compares every output. These tests check what
nbval cannot: that the committed files are clean, lintable, Python 3.8 code that papermill can
re-parameterize, and that the training parameters are TrainConfig's own settings.
"""
import ast
import hashlib
import json
import os
import re
import subprocess
import sys
from dataclasses import fields

import nbformat
import pytest

from conftest import ROOT

NOTEBOOKS = os.path.join(ROOT, "notebooks")
SERIES = ["01_data_prep.ipynb", "02_train_gpu.ipynb", "03_cpu_vs_gpu.ipynb", "04_inference.ipynb"]
# Parameters every notebook shares, so one `-p bucket X -p prefix Y` reaches the whole series.
SHARED = ("bucket", "prefix", "dataset", "output_dir")


def read(name):
    return nbformat.read(os.path.join(NOTEBOOKS, name), as_version=4)


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def as_script(nb):
    """The notebook's code as one module, the way a linter or vermin sees a jupytext script."""
    return "\n\n".join(c.source for c in code_cells(nb)) + "\n"


@pytest.mark.parametrize("name", SERIES)
def test_thin_parameterized_and_executed(name):
    nb = read(name)
    code = code_cells(nb)
    assert "parameters" in code[0].metadata.get("tags", []), f"{name}: the first code cell must be tagged parameters"
    for cell in code:
        tree = ast.parse(cell.source)  # valid Python: no magics
        defined = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
        assert not defined, f"{name}: defines {defined}; put it in fasttext_lib"
    # committed executed (make notebooks), so nbval has outputs to compare against
    assert all(c.execution_count for c in code), f"{name}: committed without outputs; run make notebooks"


@pytest.mark.parametrize("name", SERIES)
def test_no_run_metadata_or_machine_paths(name):
    nb = read(name)
    assert "papermill" not in nb.metadata, f"{name}: papermill metadata committed; run scripts/clean_notebooks.py"
    for cell in nb.cells:
        assert not set(cell.metadata) & {"papermill", "execution"}, f"{name}: per-cell run metadata committed"
    sources = json.dumps([c.source for c in nb.cells] + [nb.metadata])
    for prefix in ("/work/", "/home/", "/root/", "/tmp/", "/Users/"):
        assert prefix not in sources, f"{name}: a machine-specific path ({prefix}...) is committed"


@pytest.mark.parametrize("name", SERIES)
def test_code_lints_and_runs_on_python_38(name, tmp_path):
    script = tmp_path / (name.replace(".ipynb", ".py"))
    script.write_text(as_script(read(name)))
    bindir = os.path.dirname(sys.executable)
    # display() is an IPython builtin in notebooks
    flakes = subprocess.run([sys.executable, "-m", "pyflakes", str(script)], capture_output=True, text=True,
                            env={**os.environ, "PYFLAKES_BUILTINS": "display"})
    assert flakes.returncode == 0, flakes.stdout + flakes.stderr
    vermin = subprocess.run([os.path.join(bindir, "vermin"), "--no-tips", "--violations", "-t=3.8-",
                             "--eval-annotations", str(script)], capture_output=True, text=True)
    assert vermin.returncode == 0, vermin.stdout + vermin.stderr


def test_series_shares_its_location_parameters():
    import papermill

    found = {name: papermill.inspect_notebook(os.path.join(NOTEBOOKS, name)) for name in SERIES}
    for key in SHARED:
        defaults = {name: params[key]["default"] for name, params in found.items()}
        assert len(set(defaults.values())) == 1, f"{key} differs across the series: {defaults}"


def test_training_parameters_are_train_config_settings():
    """Notebook 02's settings are TrainConfig fields with TrainConfig's defaults (one source)."""
    import papermill

    from fasttext_lib.config import TrainConfig

    params = papermill.inspect_notebook(os.path.join(NOTEBOOKS, SERIES[1]))
    config_fields = {f.name: f for f in fields(TrainConfig)}
    shared = set(params) & set(config_fields)
    assert {"epochs", "lr", "optimizer", "ngrams", "ctx", "seed"} <= shared
    defaults = TrainConfig()
    # (buckets too: 02 had 200k, a point below the default's accuracy at Yelp scale, and below what RESULTS.md measured)
    for name in shared - {"epochs", "ngrams", "progress"}:  # the demo's own run size
        assert ast.literal_eval(params[name]["default"]) == getattr(defaults, name), name


def test_papermill_reruns_with_parameters(tmp_path):
    """`papermill 02 out.ipynb -p optimizer sgd -p epochs 25` injects them after the parameters cell."""
    out = tmp_path / "02.ipynb"
    subprocess.run([sys.executable, "-m", "papermill", "--prepare-only", os.path.join(NOTEBOOKS, SERIES[1]), str(out),
                    "-p", "optimizer", "sgd", "-p", "epochs", "25"], check=True, capture_output=True, text=True)
    nb = nbformat.read(str(out), as_version=4)
    code = code_cells(nb)
    assert "injected-parameters" in code[1].metadata.get("tags", [])
    injected = {}
    exec(code[1].source, {}, injected)  # noqa: S102 - papermill's own literal assignments
    assert injected == {"optimizer": "sgd", "epochs": 25}


@pytest.mark.parametrize("name, overrides, message", [
    ("01_data_prep.ipynb", {"dataset": "synthetic", "train_docs": 0}, "train_docs must be a positive integer, got 0"),
    ("01_data_prep.ipynb", {"dataset": "yelp"}, "unknown dataset 'yelp'"),
    ("01_data_prep.ipynb", {"overwrite": "false"}, "overwrite must be True or False, got 'false'"),
    ("02_train_gpu.ipynb", {"epochs": 0}, "epochs must be a positive integer, got 0"),
    ("02_train_gpu.ipynb", {"lr": -0.1}, "lr must be a positive finite number, got -0.1"),
    ("02_train_gpu.ipynb", {"optimizer": "rmsprop"}, "optimizer must be one of sgd, adam, got 'rmsprop'"),
    ("02_train_gpu.ipynb", {"autotune": True, "autotune_duration": 0}, "autotune_duration must be a positive number"),
    ("03_cpu_vs_gpu.ipynb", {"timing_text": "yelp"}, "timing_text must be one of yelp-shaped, dataset, got 'yelp' "
                                                      "(did you mean 'yelp-shaped'?)"),
    ("03_cpu_vs_gpu.ipynb", {"timing_text": "Dataset"}, "timing_text must be one of yelp-shaped, dataset, got "
                                                         "'Dataset' (did you mean 'dataset'?)"),
    ("03_cpu_vs_gpu.ipynb", {"batch_size": 0}, "batch_size must be a positive integer, got 0"),
    ("04_inference.ipynb", {"ctx": "gpu:x"}, "bad ctx 'gpu:x'"),
    ("04_inference.ipynb", {"top_k": 0}, "top_k must be a positive integer, got 0"),
    # text where a number is meant (papermill -r, or -p "5" quoted in YAML): a TypeError, or after the training
    ("02_train_gpu.ipynb", {"lr": "0.1"}, "lr must be a number, got '0.1'"),
    ("02_train_gpu.ipynb", {"autotune": True, "autotune_duration": "60"}, "autotune_duration must be a positive number"),
    ("02_train_gpu.ipynb", {"autotune": True, "autotune_duration": float("inf")}, "autotune_duration must be a positive"),
    # a device that is not there: found by train() only after the data was read from S3
    ("02_train_gpu.ipynb", {"ctx": "gpu:99"}, "ctx 'gpu:99'"),
    ("04_inference.ipynb", {"ctx": "gpu:99"}, "ctx 'gpu:99'"),  # was found only by the load cell
    # papermill -y "ctx: []": no device at all, an IndexError traceback in train() after the data was read
    ("02_train_gpu.ipynb", {"ctx": []}, "ctx names no device, got .*: use auto, cpu, "),
    ("04_inference.ipynb", {"ctx": ()}, "ctx names no device, got ()"),
    # papermill -p train_accuracy no / -p autotune false pass text, which was true (autotune, a billed job ran)
    ("02_train_gpu.ipynb", {"train_accuracy": "no"}, "train_accuracy must be True or False, got 'no'"),
    ("02_train_gpu.ipynb", {"autotune": "false"}, "autotune must be True or False, got 'false' (papermill: "),
    ("02_train_gpu.ipynb", {"use_training_job": "False"}, "use_training_job must be True or False, got 'False'"),
    ("02_train_gpu.ipynb", {"tune": 1}, "tune must be True or False, got 1"),
    ("04_inference.ipynb", {"deploy": "false"}, "deploy must be True or False, got 'false'"),
    # papermill -p passes a list as its text: its letters were the query words, or the pairs failed at the end
    ("04_inference.ipynb", {"query_words": "great"}, "query_words must be a list of words or None, got 'great'"),
    ("04_inference.ipynb", {"word_pairs": '[["great", "bad"]]'}, "word_pairs must be a list of (word, word) pairs"),
    ("04_inference.ipynb", {"word_pairs": [("great", "bad", "ok")]}, "word_pairs must be a list of (word, word) pairs"),
    # a bucket that is not there: 01 found it only at its write cell, after the splits were made (sample, synthetic)
    ("01_data_prep.ipynb", {"bucket": "no-such-bucket-01"}, "S3 bucket does not exist: no-such-bucket-01"),
    ("01_data_prep.ipynb", {"bucket": "no-such-bucket-01", "dataset": "synthetic"}, "S3 bucket does not exist"),
    ("01_data_prep.ipynb", {"bucket": "no-such-bucket-01", "dataset": "ag_news"}, "S3 bucket does not exist"),
    # and 02's bundle destination: found only by the save cell, after the training
    ("02_train_gpu.ipynb", {"bucket": "no-such-bucket-02"}, "S3 bucket does not exist: no-such-bucket-02"),
])
def test_nonsense_parameters_stop_the_first_cell_after_them(name, overrides, message, tmp_path, s3_bucket):
    """`papermill -p epochs 0` (or a negative lr, an unknown optimizer or dataset) stops in the cell after the
    parameters, before any data is read, with the parameter named: not after a download or deep in MXNet."""
    code = code_cells(read(name))
    defaults = {}
    exec(code[0].source, {}, defaults)  # noqa: S102 - the committed parameters cell
    defaults["bucket"] = s3_bucket[len("s3://"):]  # an existing bucket of the local S3 server
    exec(code[1].source, {**defaults, "output_dir": str(tmp_path)})  # the defaults pass   noqa: S102
    with pytest.raises(Exception, match=message.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        exec(code[1].source, {**defaults, **overrides, "output_dir": str(tmp_path)})  # noqa: S102


@pytest.mark.parametrize("dataset, hint", [
    ("Sample", " (did you mean 'sample'?)"),
    ("yelp", " (did you mean 'yelp_review_full' or 'yelp_review_polarity'?)"),
    # the name itself in capitals is the one meant: it was told "'ag_news' or 'sogou_news'" (errors.did_you_mean)
    ("AG_NEWS", " (did you mean 'ag_news'?)"), ("Yelp-Review-Full", " (did you mean 'yelp_review_full'?)"),
    ("nosuch", ""), (None, ""), (["sample"], ""), ("my_reviews", " (did you mean 'yelp_review_full'?)"),
])
def test_01_names_every_dataset_it_takes_when_refusing_one(dataset, hint, tmp_path, s3_bucket):
    """`-p dataset Sample` was told "choose one of ag_news, amazon_review_full, ..." (the downloadable sets alone, as if
    sample and synthetic were no choice); a list (-y) was a TypeError traceback from the registry's lookup. A name
    that is no known one misspelt is also told how to name one's own data: `-p dataset my_reviews` without its
    train_file was told only to choose a built-in one (and "did you mean 'yelp_review_full'?")."""
    from fasttext_lib.download import DATASETS
    from fasttext_lib.errors import FastTextError

    local = {"bucket": s3_bucket[len("s3://"):], "output_dir": str(tmp_path), "dataset": dataset}
    listed = ", ".join(["sample", "synthetic"] + sorted(DATASETS))
    with pytest.raises(FastTextError) as raised:
        run_after_papermill("01_data_prep.ipynb", local)
    # (a name that is no known one misspelt may be the user's own, whose file was left out: -p dataset my_reviews)
    own = ", or name your own data so with train_file (papermill: -p train_file reviews.csv)"
    assert str(raised.value) == f"unknown dataset {dataset!r}{hint}; choose one of {listed}" + (
        own if dataset in ("yelp", "nosuch", "my_reviews") else "")


def test_01_takes_train_docs_none_for_all_of_a_downloaded_set(tmp_path, s3_bucket):
    """01's own text (and README) say ``train_docs`` caps each split of a downloaded set, ``None`` for all of it,
    but its check cell refused None ("train_docs must be a positive integer, got None"): Yelp could only be
    prepared 20000 reviews at a time. None passes for a Zhang et al. set; synthetic still needs a number."""
    code = code_cells(read("01_data_prep.ipynb"))
    defaults = {}
    exec(code[0].source, {}, defaults)  # noqa: S102 - the committed parameters cell
    defaults.update(bucket=s3_bucket[len("s3://"):], output_dir=str(tmp_path))
    exec(code[1].source, {**defaults, "dataset": "yelp_review_polarity", "train_docs": None})  # noqa: S102
    with pytest.raises(Exception, match="train_docs must be a positive integer, got None"):
        exec(code[1].source, {**defaults, "dataset": "synthetic", "train_docs": None})  # noqa: S102


def run_after_papermill(name, injected, namespace=None):
    """Cells 1-2 of a notebook as a kernel runs them under papermill: the parameters cell, papermill's
    injected cell (``# Parameters`` + its assignments), then the check cell, with IPython's ``In`` history."""
    code = code_cells(read(name))
    cell = "# Parameters\n" + "".join(f"{k} = {v!r}\n" for k, v in injected.items())
    namespace = dict(namespace or {})
    history = ["", code[0].source, cell, code[1].source]
    for i, source in enumerate(history[1:], start=1):
        namespace["In"] = history[:i + 1]
        exec(source, namespace)  # noqa: S102 - the committed cells and papermill's literal assignments
    return namespace


@pytest.mark.parametrize("name, typo, meant", [("01_data_prep.ipynb", "test_doc", "test_docs"),
                                               ("02_train_gpu.ipynb", "epoch", "epochs"),
                                               ("03_cpu_vs_gpu.ipynb", "bukcets", "buckets"),
                                               ("04_inference.ipynb", "topk", "top_k")])
def test_a_parameter_the_notebook_lacks_stops_its_check_cell(name, typo, meant, tmp_path, s3_bucket):
    """`papermill 02 out.ipynb -p epoch 1` only warned "Passed unknown parameter" and ran the notebook with its
    defaults (5 epochs, minutes of work). Each notebook's check cell now refuses the name in one line, before
    anything is written; the names it has (and a run without papermill) pass."""
    local = {"bucket": s3_bucket[len("s3://"):], "output_dir": str(tmp_path / "out")}
    with pytest.raises(Exception, match=rf"^this notebook has no parameter '{typo}' \(did you mean '{meant}'\?\) "
                                        rf"\(papermill only warned.*; its parameters: bucket, prefix, dataset, "):
        run_after_papermill(name, {**local, typo: 1})
    assert not (tmp_path / "out").exists()  # stopped before the Workspace made the output folder
    run_after_papermill(name, local)  # the names it has pass


@pytest.mark.parametrize("name, given, said", [
    ("02_train_gpu.ipynb", {"autotune_duration": 30}, "autotune_duration is used only with autotune=True"),
    ("02_train_gpu.ipynb", {"training_instance_type": "ml.m5.xlarge"},
     "training_instance_type is used only with use_training_job=True"),
    ("02_train_gpu.ipynb", {"role": "arn:aws:iam::1:role/r"}, "role is used only with use_training_job=True"),
    ("04_inference.ipynb", {"endpoint_instance_type": "ml.m5.large"}, "endpoint_instance_type is used only with "
                                                                      "deploy=True"),
    ("04_inference.ipynb", {"role": "arn:aws:iam::1:role/r"}, "role is used only with deploy=True"),
])
def test_a_parameter_its_switch_leaves_unused_stops_the_check_cell(name, given, said, tmp_path, s3_bucket):
    """`papermill 02 out.ipynb -p autotune_duration 60` (autotune left False) ran in full and said only "autotune is
    False: the model trained above is used" after the training: the search the user asked a minute for never ran.
    A parameter papermill injected that its yes/no switch leaves unused is refused in one line naming the switch;
    given with it, or left at its default, it passes to the later checks."""
    local = {"bucket": s3_bucket[len("s3://"):], "output_dir": str(tmp_path / "out")}
    with pytest.raises(Exception, match=rf"^{re.escape(said)} \(it was given, and the run would not have used "
                                        rf"it\): -p "):
        run_after_papermill(name, {**local, **given})
    assert not (tmp_path / "out").exists()
    run_after_papermill(name, local)  # the defaults alone pass
    if "autotune_duration" in given:
        run_after_papermill(name, {**local, **given, "autotune": True})  # with its switch: used


SEED_UNUSED = ("seed is used only with dataset='synthetic' or your own train_file without a test_file (it was given, "
               "and the run would not have used it): it generates the synthetic corpus and picks the 20% of "
               "train_file held out as the test split (a test_file given is the test split whole); leave seed out")


@pytest.mark.parametrize("name, given, used, said", [
    ("02_train_gpu.ipynb", {"autotune": True, "epochs": 25}, {"autotune": False},
     "epochs is not used with autotune=True (it was given, and the run would not have used it): the search sets the "
     "optimizer, lr, batch size, epochs, emsize and n-grams, starting from the library's setting for the data; leave "
     "epochs out, or -p autotune False"),
    ("02_train_gpu.ipynb", {"autotune": True, "optimizer": "adam"}, {"autotune": False}, "optimizer is not used with "
                                                                                         "autotune=True"),
    ("02_train_gpu.ipynb", {"autotune": True, "lr": 0.5}, {"autotune": False}, "lr is not used with autotune=True"),
    ("02_train_gpu.ipynb", {"autotune": True, "train_accuracy": False}, {"autotune": False},
     "train_accuracy is not used with autotune=True (it was given, and the run would not have used it): its model is "
     "scored on its validation split alone; leave train_accuracy out, or -p autotune False"),
    ("01_data_prep.ipynb", {"train_docs": 500}, {"dataset": "synthetic"},
     "train_docs is used only with dataset='synthetic' or a downloaded dataset (it was given, and the run would not "
     "have used it): dataset='sample' is always the whole built-in sample, written anew on every run; leave "
     "train_docs out"),
    ("01_data_prep.ipynb", {"dataset": "yelp_review_polarity", "test_docs": 500}, {"dataset": "synthetic"},
     "test_docs is used only with dataset='synthetic' (it was given, and the run would not have used it): a "
     "downloaded dataset's splits are each capped by train_docs; leave test_docs out"),
    ("01_data_prep.ipynb", {"dataset": "synthetic", "overwrite": False}, {"dataset": "yelp_review_polarity"},
     "overwrite is used only with a downloaded dataset (it was given, and the run would not have used it): "
     "dataset='synthetic' is written anew on every run; leave overwrite out"),
    ("01_data_prep.ipynb", {"dataset": "mine", "train_file": "reviews.csv", "train_docs": 500}, {"dataset": "synthetic",
                                                                                                 "train_file": None},
     "train_docs is used only with dataset='synthetic' or a downloaded dataset (it was given, and the run would not "
     "have used it): train_file is read whole (the test split is test_file, or a seeded 20% of train_file), and its "
     "splits are written anew on every run; leave train_docs out"),
    ("01_data_prep.ipynb", {"seed": 5}, {"dataset": "synthetic"}, SEED_UNUSED),
    ("01_data_prep.ipynb", {"dataset": "yelp_review_polarity", "seed": 5}, {"dataset": "synthetic"}, SEED_UNUSED),
    ("01_data_prep.ipynb", {"dataset": "mine", "train_file": "reviews.csv", "test_file": "test.csv", "seed": 5},
     {"test_file": None}, SEED_UNUSED),
])
def test_a_parameter_the_other_parameters_leave_unused_stops_the_check_cell(name, given, used, said, tmp_path,
                                                                            s3_bucket):
    """`papermill 02 -p autotune True -p epochs 25` ran the search from its own 10 epochs (and lr, n-grams, optimizer),
    the 25 unused without a word (the command line warns of such flags); `papermill 01 -p train_docs 500` prepared the
    whole sample, `-p overwrite False` with the sample or your own file replaced its splits all the same, and `-p seed
    5` prepared the same sample, download or test_file split as seed 0. Each is refused in one line saying when it is
    used; with the other parameters that use it (the rest the notebook's defaults), it passes that check."""
    from fasttext_lib.notebook_params import check_switched_on, literal_defaults

    local = {"bucket": s3_bucket[len("s3://"):], "output_dir": str(tmp_path / "out")}
    with pytest.raises(Exception, match=f"^{re.escape(said)}"):
        run_after_papermill(name, {**local, **given})
    assert not (tmp_path / "out").exists()
    defaults = literal_defaults(code_cells(read(name))[0].source)
    check_switched_on(list(given), {**defaults, **given, **used}, defaults)  # where they are used: not refused


@pytest.mark.parametrize("name, given", [
    ("01_data_prep.ipynb", {"dataset": "synthetic", "train_docs": 200, "test_docs": 50}),
    ("01_data_prep.ipynb", {"dataset": "my_reviews"}),  # (and its train_file, below: no test_file)
    ("02_train_gpu.ipynb", {}),
    ("03_cpu_vs_gpu.ipynb", {}),
])
def test_a_seed_the_run_uses_passes_the_check_cell(name, given, tmp_path, s3_bucket):
    """01 refuses a seed its data leaves unused (the sample, a download, your own test_file), but not one it uses:
    the synthetic corpus's, or the held-out split of your own train_file. 02's and 03's seed (their training's, with
    the sample too) is always used: the rule is 01's alone."""
    (tmp_path / "reviews.csv").write_text("label,text\npos,good\nneg,bad\npos,great\nneg,awful\n")
    if given.get("dataset") == "my_reviews":
        given = {**given, "train_file": str(tmp_path / "reviews.csv")}
    run_after_papermill(name, {"bucket": s3_bucket[len("s3://"):], "output_dir": str(tmp_path / "out"), **given,
                               "seed": 5})


@pytest.mark.parametrize("name, given", [
    ("02_train_gpu.ipynb", {"autotune": False, "autotune_duration": 120, "use_training_job": False,
                            "training_instance_type": "ml.g4dn.xlarge", "role": None}),
    ("04_inference.ipynb", {"deploy": False, "endpoint_instance_type": "ml.m5.xlarge", "role": None}),
])
def test_a_switched_off_parameter_given_at_its_default_passes(name, given, tmp_path, s3_bucket):
    """`papermill -f params.yaml` with every parameter listed (a sweep's file, the switches off and the others at
    the notebook's defaults, role None) asks for nothing the run leaves unused: it is not refused."""
    run_after_papermill(name, {"bucket": s3_bucket[len("s3://"):], "output_dir": str(tmp_path / "out"), **given})


@pytest.mark.parametrize("name, refused, said", [
    ("01_data_prep.ipynb", {"dataset": "synthetic", "train_docs": 0}, "train_docs must be a positive integer"),
    ("01_data_prep.ipynb", {"bucket": "no-such-bucket-01"}, "S3 bucket does not exist"),
    ("02_train_gpu.ipynb", {"epochs": 0}, "epochs must be a positive integer"),
    ("02_train_gpu.ipynb", {"run_name": "a//b"}, "run_name must be folder names"),
    ("03_cpu_vs_gpu.ipynb", {"batches": 0}, "batches must be a positive integer"),
    ("04_inference.ipynb", {"top_k": 0}, "top_k must be a positive integer"),
])
def test_a_refused_parameter_leaves_no_output_folder(name, refused, said, tmp_path, s3_bucket):
    """The check cell built the Workspace, which made output_dir (and its parents), before the other parameters were
    checked: `-p output_dir results -p epochs 0` refused epochs and left an empty results folder. The folder is made
    when the first file goes in it; the check cell only checks that it can be."""
    out = tmp_path / "new" / "out"
    with pytest.raises(Exception, match=said):
        run_after_papermill(name, {"bucket": s3_bucket[len("s3://"):], "output_dir": str(out), **refused})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", SERIES)
@pytest.mark.parametrize("output_dir", [None, 5, ""])
def test_an_output_dir_that_is_no_folder_path_stops_the_check_cell_in_one_line(name, output_dir, s3_bucket):
    """`papermill -p output_dir None` (papermill makes the text None a None) stopped the check cell in a TypeError
    traceback from pathlib; an empty one put every figure and table in the notebooks' own folder."""
    from fasttext_lib.errors import FastTextError

    with pytest.raises(FastTextError, match=rf"^output_dir must be a folder's path, got {output_dir!r}$"):
        run_after_papermill(name, {"bucket": s3_bucket[len("s3://"):], "output_dir": output_dir})


@pytest.mark.parametrize("output_dir", ["s3://bkt/out", "S3://bkt/out", "s3:/bkt/out", "gs://bkt/out"])
def test_an_s3_output_dir_is_refused_not_made_a_local_folder_named_s3(output_dir, tmp_path, monkeypatch):
    """`-p output_dir s3://bkt/out` made a local folder named s3: (./s3:/bkt/out: pathlib reads the URI as a relative
    path) and put the figures and tables there, silently. output_dir is a local folder: one line says so, and where
    the data and bundles go instead; nothing is created."""
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.workspace import Workspace

    monkeypatch.chdir(tmp_path)
    with pytest.raises(FastTextError, match=rf"^output_dir is a local folder \(for the figures and tables\), got "
                                            rf"{output_dir!r}: the data and bundles go to S3 by bucket and prefix, "
                                            rf"under s3://bkt/p/$"):
        Workspace("bkt", "p", output_dir)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("prefix, base", [("/", "s3://bkt"), ("", "s3://bkt"), (None, "s3://bkt"), ("/runs/a/", "s3://bkt/runs/a")])
def test_a_prefix_of_slashes_alone_is_no_prefix(prefix, base, tmp_path):
    """`-p prefix /` (no prefix, written as a path's root) put the data and the models under s3://bkt//data and
    s3://bkt//models: keys beginning with a slash, in a folder of no name in the S3 console."""
    from fasttext_lib.workspace import Workspace

    ws = Workspace("bkt", prefix, str(tmp_path))
    assert (ws.base, ws.data, ws.models) == (base, f"{base}/data", f"{base}/models")


@pytest.mark.parametrize("run_name, bundle", [("big", "s3://bkt/p/models/big"), ("big/", "s3://bkt/p/models/big"),
                                              ("/exp/1", "s3://bkt/p/models/exp/1"), (2024, "s3://bkt/p/models/2024")])
def test_a_run_name_is_a_folder_under_models(run_name, bundle, tmp_path):
    from fasttext_lib.workspace import Workspace

    assert Workspace("bkt", "p", str(tmp_path)).model(run_name) == bundle


@pytest.mark.parametrize("where", ["s3", "local"])
def test_a_run_name_that_holds_other_runs_bundles_is_refused_naming_them_as_bundles(where, tmp_path, s3_bucket):
    """02 run with ``-p run_name exp/1`` and ``exp/2`` (runs grouped under exp), then with ``exp``: its check cell
    refused models/exp as holding "objects this library did not write (1/, 2/)", the two bundles it had saved. They
    are named as bundles in folders under it, and nothing of theirs is touched; a file of someone else's, or a folder
    that holds no bundle, is still named as one this library did not write."""
    from conftest import make_splits
    from fasttext_lib.bundle import check_output, save_bundle
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.train import train

    models = f"{s3_bucket}/p/models" if where == "s3" else str(tmp_path / "models")
    trained = train(*make_splits(200, 50, seed=0), TrainConfig(epochs=1, ngrams=1, progress=False))
    for run_name in ("exp/1", "exp/2"):
        save_bundle(trained, f"{models}/{run_name}")
    with pytest.raises(FastTextError) as refused:
        check_output(f"{models}/exp")
    assert str(refused.value) == (f"refusing to write to {models}/exp: it holds other bundles or checkpoints, saved in "
                                  f"folders under it (1/, 2/), and a bundle's or checkpoint's folder holds its own "
                                  f"files alone; name a new or empty directory, or one this library wrote")
    if where == "s3":
        import boto3

        boto3.client("s3").put_object(Bucket=s3_bucket[len("s3://"):], Key="p/models/exp/notes.txt", Body=b"mine")
        boto3.client("s3").put_object(Bucket=s3_bucket[len("s3://"):], Key="p/models/exp/sub/a.txt", Body=b"mine")
    else:
        (tmp_path / "models" / "exp" / "notes.txt").write_text("mine")
        (tmp_path / "models" / "exp" / "sub").mkdir()
    kind, sub = ("objects", "sub/") if where == "s3" else ("files", "sub")  # (as each listing names a folder)
    with pytest.raises(FastTextError, match=rf": it holds {kind} this library did not write \(notes.txt, {sub}\), and "
                                            rf"other bundles or checkpoints, saved in folders under it \(1/, 2/\), "):
        check_output(f"{models}/exp")


@pytest.mark.parametrize("run_name", ["", "a//b", "../up", "exp/./1", None, ["x"]])
def test_a_run_name_with_an_empty_or_dot_part_is_refused_in_one_line(run_name, tmp_path):
    """`-p run_name /big` saved 02's bundle as models//big (a folder of no name in the S3 console, beside models/big),
    `-p run_name ../up` as models/../up: S3 keeps such keys as written."""
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.workspace import Workspace

    with pytest.raises(FastTextError, match=r"^run_name must "):
        Workspace("bkt", "p", str(tmp_path)).model(run_name)


@pytest.mark.parametrize("prefix", ["s3://bkt/fasttext", "S3://bkt/x", "a//b", "runs/../x", True])
def test_a_prefix_that_is_no_key_path_is_refused_in_one_line(prefix, tmp_path):
    """`-p prefix s3://my-bucket/fasttext` (the URI where the key path is meant) wrote the data under the keys
    s3://bkt/s3://my-bucket/fasttext/data: each notebook found the others' files there, in a folder named s3:."""
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.workspace import Workspace

    with pytest.raises(FastTextError, match=r"^prefix "):
        Workspace("bkt", prefix, str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_data_or_a_model_not_there_yet_says_which_notebook_makes_it(s3_bucket, tmp_path):
    """02, 03 or 04 run before 01 (or 04 before 02, or with another prefix) said only "no such S3 object
    .../data/sample.train", as if data were lost: the notebooks read what 01 and 02 wrote through the Workspace,
    which names the notebook to run. What is there is found."""
    from fasttext_lib.writers import write_fasttext_splits
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.sample import load_sample
    from fasttext_lib.workspace import Workspace

    ws = Workspace(s3_bucket[len("s3://"):], "hints", str(tmp_path))
    with pytest.raises(FastTextError, match=r"^no prepared train data for dataset 'sample' at s3://.*/hints/data/"
                                            r"sample.train: run notebook 01 with dataset='sample' "):
        ws.prepared("sample", "train")
    with pytest.raises(FastTextError, match=r"^no prepared train data for dataset 'Sample' at .*: unknown dataset "
                                            r"'Sample' \(did you mean 'sample'\?\); choose one of sample, "):
        ws.prepared("Sample", "train")  # (it said: run notebook 01 with dataset='Sample', which 01 refuses)
    with pytest.raises(FastTextError, match=r"^no model bundle at s3://.*/hints/models/demo: run notebook 02 with "
                                            r"run_name='demo' "):
        ws.saved_model("demo")
    written = write_fasttext_splits({"train": load_sample("train"), "test": load_sample("test")}, ws.data, "sample")
    assert ws.prepared("sample", "test") == written["test"]


@pytest.mark.parametrize("where, said", [
    ("a_file", r"a_file exists and is not a directory$"),
    ("a_file/sub", r"cannot create .*a_file/sub: .*a_file is not a directory$"),
    ("/proc/fasttext-out", r"/proc is on the kernel's proc file system"),
])
def test_an_output_dir_that_cannot_be_a_folder_is_one_line(where, said, tmp_path, monkeypatch):
    """`-p output_dir results.csv` (a file there), a folder under a file, or /proc: an OSError traceback
    (FileExistsError, NotADirectoryError) from the Workspace in the check cell."""
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.workspace import Workspace

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_file").write_text("mine\n")
    with pytest.raises(FastTextError, match=rf"^output_dir {where!r} cannot hold the figures and tables: .*{said}"):
        Workspace("bkt", "p", where)
    assert (tmp_path / "a_file").read_text() == "mine\n"


def test_a_read_only_output_dir_is_refused_by_the_check_cell(tmpfs, s3_bucket):
    """An output_dir that exists on a read-only disk passed the check cell; the first figure's savefig failed in an
    OSError traceback, after the work (01: the data made; 02: the training)."""
    from conftest import remount_ro

    from fasttext_lib.errors import FastTextError

    where = tmpfs()
    remount_ro(where)
    with pytest.raises(FastTextError, match=rf"^output_dir '{where}' cannot hold the figures and tables: cannot write "
                                            rf"to {where}: .*mounted read-only"):
        run_after_papermill("02_train_gpu.ipynb", {"bucket": s3_bucket[len("s3://"):], "output_dir": str(where)})


@pytest.mark.parametrize("epoch_docs, picked", [(560000, 1024), (2888, 16)])
def test_03_takes_batch_size_none_as_trainings_pick_for_epoch_docs(epoch_docs, picked, tmp_path, s3_bucket):
    """`make demo ARGS='-p batch_size None'` (02's default: from the data) reaches 03 too, whose check cell passed it
    and whose data cell stopped the demo in a TypeError (batches * None). None is what training picks for epoch_docs
    documents now (1024 at Yelp scale, the committed value)."""
    local = {"bucket": s3_bucket[len("s3://"):], "output_dir": str(tmp_path), "batch_size": None, "batches": 4,
             "epoch_docs": epoch_docs}  # (4 batches: the dense recipe's least, at 16)
    namespace = run_after_papermill("03_cpu_vs_gpu.ipynb", local)
    assert namespace["batch_size"] == picked
    data_cell = next(c.source for c in code_cells(read("03_cpu_vs_gpu.ipynb")) if "generate_reviews(" in c.source)
    exec(data_cell, namespace)  # noqa: S102 - the committed cell: the documents it times
    assert len(namespace["data"]) == 4 * picked


@pytest.mark.parametrize("seed", ["x", -1, 1.5, 2**32])
@pytest.mark.parametrize("dataset", ["synthetic", "my_reviews"])
def test_01_refuses_a_bad_seed_in_its_check_cell(seed, dataset, tmp_path, s3_bucket):
    """`papermill 01 -p dataset synthetic -p seed x` (or -1, 1.5) stopped the cell that makes the corpus in numpy's
    TypeError or ValueError traceback, and with `-p train_file reviews.csv` the cell that holds out its test split did,
    after reading the user's file. 01's check cell refuses it now, in the one line training's own seed check says.
    (With the sample, which uses no seed, any seed given is refused as unused: SEED_UNUSED.)"""
    from fasttext_lib.errors import FastTextError

    (tmp_path / "reviews.csv").write_text("label,text\npos,good\nneg,bad\npos,great\nneg,awful\n")
    local = {"bucket": s3_bucket[len("s3://"):], "output_dir": str(tmp_path / "out"), "dataset": dataset,
             "seed": seed}
    if dataset == "synthetic":  # (the sizes only it uses)
        local.update(train_docs=200, test_docs=50)
    if dataset == "my_reviews":
        local["train_file"] = str(tmp_path / "reviews.csv")
    with pytest.raises(FastTextError, match=rf"^seed must be an integer from 0 to 4294967295, got {seed!r}$"):
        run_after_papermill("01_data_prep.ipynb", local)


@pytest.mark.parametrize("seed", ["x", -1, 1.5])
def test_holding_out_a_test_split_refuses_a_bad_seed_in_one_line(seed, tmp_path):
    """read_own_splits without test_file (01's cell for your own data) was numpy's traceback for a bad seed."""
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.own_data import read_own_splits

    (tmp_path / "reviews.csv").write_text("label,text\npos,good\nneg,bad\npos,great\nneg,awful\n")
    with pytest.raises(FastTextError, match=rf"^seed must be an integer from 0 to 4294967295, got {seed!r}$"):
        read_own_splits(str(tmp_path / "reviews.csv"), seed=seed)


def test_01_reruns_prepare_and_keeps_an_edited_names_file_only_with_overwrite_false(tmp_path, s3_bucket, monkeypatch):
    """prepare kept nothing of what it had written (an edited .classes.txt replaced), and now keeps what differs
    unless told: 01 runs it on every run, so a rerun with the same parameters must pass (the same bytes), one with
    other parameters replaces by default (overwrite=True), and overwrite=False keeps an edited names file."""
    import hashlib
    import io
    import tarfile

    from fasttext_lib import download, storage
    from fasttext_lib.errors import FastTextError

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for split in ("train", "test"):
            body = "".join(f'"{1 + i % 2}","review {i} of the {split} split"\n' for i in range(6)).encode()
            info = tarfile.TarInfo(f"yelp_review_polarity_csv/{split}.csv")
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    mirror = tmp_path / "yelp_review_polarity_csv.tgz"
    mirror.write_bytes(buf.getvalue())
    monkeypatch.setitem(download.DATASETS, "yelp_review_polarity", download.ZhangDataset(
        "yelp_review_polarity", mirror.as_uri(), len(buf.getvalue()), hashlib.md5(buf.getvalue()).hexdigest(), 2))

    def run(**parameters):
        local = {"bucket": s3_bucket[len("s3://"):], "output_dir": str(tmp_path / "out"),
                 "dataset": "yelp_review_polarity", **parameters}
        namespace = run_after_papermill("01_data_prep.ipynb", local)
        exec(code_cells(read("01_data_prep.ipynb"))[2].source, namespace)  # noqa: S102 - the corpus cell: prepare
        return namespace["written"]

    written = run(train_docs=None)
    prepared = {uri: storage.read_bytes(uri) for uri in written.values()}
    assert run(train_docs=None) == written  # the same parameters again: the same bytes, no obstacle
    assert {uri: storage.read_bytes(uri) for uri in written.values()} == prepared
    run(train_docs=2)  # other parameters: replaced (overwrite=True by default)
    assert len(storage.read_bytes(written["train"]).splitlines()) == 2
    bucket, key = storage.split_s3(written["label_names"])
    storage.s3_client().put_object(Bucket=bucket, Key=key, Body=b"1=bad\n2=good\n")
    with pytest.raises(FastTextError, match=rf"^{written['label_names']} already exists; it differs"):
        run(train_docs=2, overwrite=False)
    assert storage.s3_client().get_object(Bucket=bucket, Key=key)["Body"].read() == b"1=bad\n2=good\n"


@pytest.mark.parametrize("query_words, said", [
    ("great", "query_words must be a list of words or None, got 'great' (papermill: -y \"query_words: [great, bad]\")"),
    ('["great", "bad"]', "query_words must be a list of words or None, got '[\"great\", \"bad\"]'"),
    (["great", 5], "query_words must be a list of words or None, got ['great', 5]"),
    ({"great"}, "query_words must be a list of words or None, got {'great'}"),
])
def test_04s_query_words_are_a_list_of_words_or_none(query_words, said):
    """04's check cell held these checks; they are the library's (notebook_params.check_query_words): papermill's -p passes a
    list as its text, whose letters were the query words."""
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.notebook_params import check_query_words

    with pytest.raises(FastTextError) as caught:
        check_query_words(query_words)
    assert str(caught.value).startswith(said)
    for fine in (None, [], ["great"], ("great", "bad")):
        check_query_words(fine)


@pytest.mark.parametrize("word_pairs", ['[["great", "bad"]]', [("great", "bad", "ok")], [("great",)], [["great", 1]],
                                        ["great", "bad"], None, [("great", "bad")] + ["ok"]])
def test_04s_word_pairs_are_a_list_of_word_pairs(word_pairs):
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.notebook_params import check_word_pairs

    with pytest.raises(FastTextError, match=r"^word_pairs must be a list of \(word, word\) pairs, got .* \(papermill: "
                                            r"-y \"word_pairs: \[\[great, excellent\]\]\"\)$"):
        check_word_pairs(word_pairs)
    for fine in ([], [("great", "excellent")], [["great", "bad"], ("a", "b")], (("a", "b"),)):
        check_word_pairs(fine)


def test_a_parameter_name_cut_short_or_in_capitals_is_told_the_one_meant():
    """`-p quer ...` named no parameter where `-p kvstore dis` and `-p dataset yelp` name the choices they begin: one
    rule for all three (errors.did_you_mean)."""
    from fasttext_lib.notebook_params import name_hints

    assert name_hints(["quer", "Top-K", "zzz"], ["bucket", "query_words", "top_k"]) == \
        "'quer' (did you mean 'query_words'?), 'Top-K' (did you mean 'top_k'?), 'zzz'"


def test_without_papermill_nothing_is_checked():
    """Jupyter, nbval and make demo (which passes each notebook only the names it has) inject no cell; papermill's
    --inject-paths adds its own two names, which are no typo."""
    from fasttext_lib.notebook_params import check_parameters

    check_parameters({})  # exec'd cells, no IPython history
    check_parameters({"In": ["", "bucket = 'b'\nepochs = 5", "x = 1", "epoch = 3"]})  # no papermill cell: no check
    check_parameters({"In": ["", "bucket = 'b'", "# Parameters\nbucket = 'c'\nPAPERMILL_INPUT_PATH = 'in.ipynb'\n"
                             "PAPERMILL_OUTPUT_PATH = 'out.ipynb'\n"]})  # papermill --inject-paths: its own names
    with pytest.raises(Exception, match="no parameter 'epoch' .*; its parameters: bucket, epochs$"):
        check_parameters({"In": ["", "bucket = 'b'\nepochs = 5", "# Parameters\nepoch = 3\n", "check"]})


@pytest.mark.parametrize("overrides, message", [
    (["-p", "test_doc", "5"], "this notebook has no parameter 'test_doc' (did you mean 'test_docs'?)"),
    # a check the notebook's own cell makes (it raised ValueError), and one the library makes
    (["-p", "dataset", "synthetic", "-p", "train_docs", "0"], "train_docs must be a positive integer, got 0"),
    (["-p", "bucket", "No-Such-Bucket"], "S3 bucket does not exist: No-Such-Bucket"),
])
def test_papermill_run_with_a_bad_parameter_fails_in_its_check_cell_with_one_error_line(overrides, message, tmp_path,
                                                                                       s3_bucket):
    """The real thing: papermill executes 01 with a misspelled or nonsense parameter and fails in the check cell,
    naming it. The cell's error output was a 20-line traceback through the check cell and the library ending in
    ``FastTextError: ...``; it is the one line ``error: ...`` now, as the CLI prints it."""
    out, executed = tmp_path / "out", tmp_path / "01.ipynb"
    bucket = [] if "bucket" in overrides else ["-p", "bucket", s3_bucket[len("s3://"):]]
    r = subprocess.run([sys.executable, "-m", "papermill", os.path.join(NOTEBOOKS, SERIES[0]), str(executed),
                        "--cwd", NOTEBOOKS, "-k", "python3", *bucket, *overrides, "-p", "output_dir", str(out)],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ROOT})
    assert r.returncode != 0
    assert r.stderr.rstrip().splitlines()[-1].startswith("error: " + message), r.stderr[-2000:]
    errors = [o for c in code_cells(nbformat.read(str(executed), as_version=4)) for o in c.get("outputs", [])
              if o.output_type == "error"]
    assert len(errors) == 1 and len(errors[0].traceback) == 1, errors
    assert errors[0].traceback[0].startswith("error: " + message)
    assert "Traceback" not in r.stderr.split("Exception encountered at")[-1]


def test_a_run_without_autotune_removes_an_earlier_searchs_plot_and_table(tmp_path, s3_bucket, monkeypatch, capsys):
    """After a run with autotune=True, a run without it left autotune.png and autotune_trials.csv in output_dir: a
    trial table of another search beside the new model's history. 02's autotune cell now has them removed (once the
    new model is saved: ws.save_run calls remove_autotune), and only them, when they are this library's (a user's
    files under those names, links and other files stay)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fasttext_lib.workspace import Workspace

    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path / "out"))
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    cell = next(c.source for c in code_cells(read(SERIES[1])) if c.source.startswith("if autotune:"))
    run = ws.out / "sample"  # the run's folder

    _save_a_search(ws, "sample", fig, monkeypatch)  # what a run with autotune=True leaves
    (run / "my_autotune.png").write_bytes((run / "autotune.png").read_bytes())
    exec(cell, {"autotune": False, "ws": ws, "run_name": "sample"})  # noqa: S102 - 02's autotune cell, without autotune
    assert ws.remove_autotune("sample") == ["autotune.png", "autotune_trials.csv"]  # (save_run's call)
    assert sorted(p.name for p in run.iterdir()) == ["history.csv", "history.png", RECORD_OF_HISTORY, "my_autotune.png"]
    assert "removed autotune.png and autotune_trials.csv from " in capsys.readouterr().err

    _save_a_search(ws, "sample", fig, monkeypatch)  # another autotuned run, then one without: removed again
    exec(cell, {"autotune": False, "ws": ws, "run_name": "sample"})  # noqa: S102
    ws.remove_autotune("sample")
    assert sorted(p.name for p in run.iterdir()) == ["history.csv", "history.png", RECORD_OF_HISTORY, "my_autotune.png"]
    assert "removed autotune.png and autotune_trials.csv from " in capsys.readouterr().err

    fig.savefig(run / "autotune.png")  # a figure of the user's own under that name (not marked as ours)
    (run / "autotune_trials.csv").write_text("trial,score\n1,0.5\n")
    exec(cell, {"autotune": False, "ws": ws, "run_name": "sample"})  # noqa: S102
    assert ws.remove_autotune("sample") == []
    assert {"autotune.png", "autotune_trials.csv"} <= {p.name for p in run.iterdir()}
    assert capsys.readouterr().err == ""

    (run / "autotune.png").unlink()
    (run / "autotune_trials.csv").unlink()
    elsewhere = Workspace(s3_bucket[len("s3://"):], "q", str(tmp_path / "elsewhere"))
    _save_a_search(elsewhere, "sample", fig, monkeypatch)
    (run / "autotune.png").symlink_to(elsewhere.out / "sample" / "autotune.png")  # a link: not removed, nor its target
    assert ws.drop_autotune("sample") == [] and ws.remove_autotune("sample") == []
    assert (run / "autotune.png").is_symlink() and (elsewhere.out / "sample" / "autotune.png").exists()
    plt.close(fig)


def test_a_search_and_its_models_history_are_replaced_together(tmp_path, s3_bucket, monkeypatch):
    """A search's plot and table are put in place by the save of its model, with the history and their record: a
    table that fails to write part way leaves the earlier search's plot, table and record and the earlier history all
    as they were (none half-written, no temporary), and the earlier bundle."""
    import contextlib

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from conftest import make_splits
    from fasttext_lib import storage
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.predict import Predictor
    from fasttext_lib.workspace import Workspace

    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path))
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    _save_a_search(ws, "run", fig, monkeypatch, seed=1)
    run = tmp_path / "run"
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    saved = Predictor.load(ws.model("run")).metrics
    assert sorted(before) == ["autotune.png", "autotune_trials.csv", RECORD_OF_AUTOTUNE, "history.csv", "history.png",
                              RECORD_OF_HISTORY]

    real_writes = storage.atomic_writes

    class Cut:
        def __init__(self, f):
            self.f = f

        def write(self, data):
            self.f.write(data[:10])  # (part of it written, then the write fails)
            raise RuntimeError("cut")

    @contextlib.contextmanager
    def table_cut(paths, **kwargs):
        with real_writes(paths, **kwargs) as files:
            yield [Cut(f) if str(path).endswith("autotune_trials.csv") else f for path, f in zip(paths, files)]

    train_data, test_data = make_splits(200, 50, seed=0)
    tuned = ws.autotune(train_data, test_data, TrainConfig(progress=False), "run", duration=600)
    ax.plot([2, 1])
    monkeypatch.setattr(storage, "atomic_writes", table_cut)
    with pytest.raises(RuntimeError, match="cut"):
        ws.save_run(tuned.trained, "run", fig)
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before
    assert Predictor.load(ws.model("run")).metrics == saved  # the earlier search's bundle
    plt.close(fig)


# What 02's autotune search records of the plot and table its save writes in the run's folder (Workspace.save_run),
# as 04 does of its files.
RECORD_OF_AUTOTUNE = "autotune_written.json"
RECORD_OF_HISTORY = "history_written.json"  # notebook 02's record of its history: which bundle it is of


def test_a_run_without_autotune_keeps_the_users_files_that_look_like_a_searchs(tmp_path, s3_bucket, monkeypatch,
                                                                              capsys):
    """remove_autotune took a file for an earlier search's by its content: a trial table of the user's with the
    table's columns (pandas' to_csv), or a PNG marked as the library's (a copy of an earlier plot kept under that
    name), was deleted when 02 saved a model without autotune. Only what the search's record says it wrote goes now,
    and only while unchanged: a table it wrote that the user added to stays, with one line saying why."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from fasttext_lib.autotune import TABLE_COLUMNS
    from fasttext_lib.figures import FIGURE_MARK, png_software
    from fasttext_lib.workspace import Workspace

    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path / "out"))
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    trials = pd.DataFrame([[1, "start", *[0] * (len(TABLE_COLUMNS) - 3), "budget"]], columns=TABLE_COLUMNS)
    cell = next(c.source for c in code_cells(read(SERIES[1])) if c.source.startswith("if autotune:"))
    run = ws.out / "sample"
    run.mkdir()
    trials.to_csv(run / "autotune_trials.csv", index=False)  # the user's own, with the trial table's columns
    fig.savefig(run / "autotune.png", metadata={"Software": FIGURE_MARK})  # and a plot marked as the library's
    mine = {p.name: p.read_bytes() for p in run.iterdir()}
    assert png_software(run / "autotune.png") == FIGURE_MARK
    exec(cell, {"autotune": False, "ws": ws, "run_name": "sample"})  # noqa: S102 - 02's autotune cell, without autotune
    assert ws.drop_autotune("sample") == [] and ws.remove_autotune("sample") == []  # (save_run's call)
    assert {p.name: p.read_bytes() for p in run.iterdir()} == mine
    assert "removed" not in capsys.readouterr().err

    for name in mine:
        (run / name).unlink()
    _save_a_search(ws, "sample", fig, monkeypatch)  # the search's, recorded
    assert sorted(p.name for p in run.iterdir()) == ["autotune.png", "autotune_trials.csv", RECORD_OF_AUTOTUNE,
                                                     "history.csv", "history.png", RECORD_OF_HISTORY]
    with open(run / "autotune_trials.csv", "a") as f:
        f.write("my note\n")
    edited = (run / "autotune_trials.csv").read_bytes()
    capsys.readouterr()
    assert ws.drop_autotune("sample") == ["autotune.png"]
    assert ws.remove_autotune("sample") == ["autotune.png"]
    assert sorted(p.name for p in run.iterdir()) == ["autotune_trials.csv", "history.csv", "history.png",
                                                     RECORD_OF_HISTORY]  # (and the search's record gone with what it named)
    assert (run / "autotune_trials.csv").read_bytes() == edited
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if "kept" in line] == [
        f"kept {ws.show('sample/autotune_trials.csv')}: changed since notebook 02's autotune search wrote it"], err
    assert f"removed autotune.png from {ws.show('sample')}: an earlier autotune run's, not this model's" in err
    plt.close(fig)


@pytest.mark.parametrize("record, mine", [
    ("04_written.json", b'{"files": {}, "my": "settings"}\n'),
    ("04_written.json", b"my notes, not JSON\n"),
    ("04_written.json", b'{"written_by": "notebook 02\'s autotune search (fasttext_lib)", "files": {}}'),
    (RECORD_OF_AUTOTUNE, b'{"written_by": "me", "files": {}}\n'),
    # (its mark, then nested deeper than Python's JSON reader goes: RecursionError out of the save; unread, not ours)
    ("04_written.json", b'{"written_by": "notebook 04 (fasttext_lib)", "said": ' + b"[" * 100_000 + b"]" * 100_000
     + b"}"),
])
def test_a_file_of_the_users_named_as_a_record_is_refused_not_overwritten(record, mine, tmp_path, monkeypatch, capsys):
    """A file of the user's named 04_written.json (valid JSON or not) was written over by 04's next save, as if its
    record: the record is known by its writer's mark now, and a file without it is refused in one line, nothing of
    the save written; a removal finds nothing recorded in it, and leaves it. So is one named as the autotune
    search's, by 02's autotune cell before its search."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from conftest import make_splits
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.workspace import Workspace

    ws = Workspace("bkt", "p", str(tmp_path / "out"))
    run = ws.out / "run"
    run.mkdir()
    (run / record).write_bytes(mine)
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    if record == RECORD_OF_AUTOTUNE:  # (02's autotune cell refuses it before the search)
        _autotune_of_one_trial(monkeypatch)
        train_data, test_data = make_splits(200, 50, seed=0)
        saves = [lambda: ws.autotune(train_data, test_data, TrainConfig(progress=False), "run", duration=600)]
        writer, refused_as = "notebook 02's autotune search", ["the autotune search not run"]
        remove = ws.remove_autotune
    else:
        saves = [lambda: ws.save_predictions(pd.DataFrame({"label": ["1"], "probability": [0.5], "review": ["r"]}),
                                             "run"),
                 lambda: ws.save_confusion_matrix(fig, "run")]
        writer, refused_as = "notebook 04", ["04_predictions.csv not written", "04_confusion_matrix.png not written"]
        remove = ws.remove_inference
    for save, refusal in zip(saves, refused_as):
        with pytest.raises(FastTextError) as refused:
            save()
        assert str(refused.value) == (f"{refusal}: {run / record} is not {writer}'s record of the files it "
                                      f"wrote (a file of yours?): move it away to write there"), refused.value
        assert [p.name for p in run.iterdir()] == [record] and (run / record).read_bytes() == mine
    assert remove("run") == [] and (run / record).read_bytes() == mine
    assert capsys.readouterr().err == ""
    plt.close(fig)


def test_a_folder_named_as_a_record_is_refused_in_one_line(tmp_path):
    """A folder (or a file this process cannot read) named 04_written.json was a bare IsADirectoryError out of the
    save; it is refused as any other file of the user's with the record's name, and stays."""
    import pandas as pd

    from fasttext_lib.errors import FastTextError
    from fasttext_lib.workspace import Workspace

    ws = Workspace("bkt", "p", str(tmp_path / "out"))
    (ws.out / "run" / "04_written.json").mkdir(parents=True)
    with pytest.raises(FastTextError, match=r"^04_predictions\.csv not written: .*04_written\.json is not notebook "
                                            r"04's record"):
        ws.save_predictions(pd.DataFrame({"label": ["1"], "probability": [0.5], "review": ["r"]}), "run")
    assert [p.name for p in (ws.out / "run").iterdir()] == ["04_written.json"]
    assert ws.remove_inference("run") == []


def test_a_record_that_is_a_link_is_not_trusted(tmp_path, capsys):
    """A link named 04_written.json (to another run's record: a copy of that run's files beside it) was read as this
    run's record: 02's removal deleted the copies it named, and 04's next save wrote the record through the link,
    outside the run's folder. A record is a plain file in the folder: a link is a file of the user's, refused and left
    as it is, as is what it points to."""
    import pandas as pd

    from fasttext_lib.errors import FastTextError
    from fasttext_lib.workspace import Workspace

    ws = Workspace("bkt", "p", str(tmp_path / "out"))
    predictions = pd.DataFrame({"label": ["1"], "probability": [0.5], "review": ["r"]})
    ws.save_predictions(predictions, "other")
    other, run = ws.out / "other", ws.out / "run"
    run.mkdir()
    (run / "04_predictions.csv").write_bytes((other / "04_predictions.csv").read_bytes())  # the user's copy
    (run / "04_written.json").symlink_to(other / "04_written.json")
    theirs = {p.name: p.read_bytes() for p in other.iterdir()}

    assert ws.remove_inference("run") == []
    assert sorted(p.name for p in run.iterdir()) == ["04_predictions.csv", "04_written.json"]
    with pytest.raises(FastTextError) as refused:
        ws.save_predictions(predictions, "run")
    assert str(refused.value) == (f"04_predictions.csv not written: {run / '04_written.json'} is not notebook "
                                  f"04's record of the files it wrote (a file of yours?): move it away to write there")
    assert (run / "04_written.json").is_symlink() and {p.name: p.read_bytes() for p in other.iterdir()} == theirs
    assert capsys.readouterr().err == ""


def _autotune_of_one_trial(monkeypatch):
    """02's autotune cell's search cut to one trial (seconds); once cut, left as it is."""
    import fasttext_lib.autotune as autotune_module

    real_autotune = autotune_module.autotune
    if getattr(real_autotune, "one_trial", False):  # (wrapped again, max_trials was given twice)
        return

    def one_trial(*args, **kwargs):
        return real_autotune(*args, max_trials=1, **kwargs)

    one_trial.one_trial = True
    monkeypatch.setattr(autotune_module, "autotune", one_trial)


def _save_a_search(ws, run_name, fig, monkeypatch, seed=0):
    """What notebook 02 run with autotune=True leaves of ``run_name``: its autotune cell's search (ws.autotune, cut to
    one trial, on make_splits' data of ``seed``) and its save cell (ws.save_run of the search's model, ``fig`` its
    history plot), which puts the search's plot, table and their record in the run's folder with the model's history,
    and saves the bundle. Returns the search."""
    from conftest import make_splits
    from fasttext_lib.config import TrainConfig

    _autotune_of_one_trial(monkeypatch)
    train_data, test_data = make_splits(200, 50, seed=seed)
    tuned = ws.autotune(train_data, test_data, TrainConfig(progress=False), run_name, duration=600)
    ws.save_run(tuned.trained, run_name, fig)
    return tuned


def test_02s_autotune_refuses_a_file_of_the_users_named_as_its_record_before_the_search(tmp_path, s3_bucket,
                                                                                        monkeypatch, capsys):
    """The autotune cell checks the run's folder can take its record before the search (minutes), and the save cell
    before it writes anything: a file of the user's named autotune_written.json is one line, and stays as it was."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from conftest import make_splits
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.workspace import Workspace

    _autotune_of_one_trial(monkeypatch)
    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path / "out"))
    train_data, test_data = make_splits(200, 50, seed=0)
    run = ws.out / "run"
    run.mkdir()
    (run / RECORD_OF_AUTOTUNE).write_text("[1, 2]\n")
    refusal = (f"{run / RECORD_OF_AUTOTUNE} is not notebook 02's autotune search's record of the files it wrote (a "
               f"file of yours?): move it away to write there")
    with pytest.raises(FastTextError) as refused:
        ws.autotune(train_data, test_data, TrainConfig(progress=False), "run", duration=600)
    assert str(refused.value) == f"the autotune search not run: {refusal}"
    assert "trial" not in capsys.readouterr().out  # (no search)

    (run / RECORD_OF_AUTOTUNE).unlink()
    tuned = ws.autotune(train_data, test_data, TrainConfig(progress=False), "run", duration=600)
    (run / RECORD_OF_AUTOTUNE).write_text("[1, 2]\n")  # written between the autotune and the save cells
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    with pytest.raises(FastTextError) as refused:
        ws.save_run(tuned.trained, "run", fig)
    assert str(refused.value) == f"nothing saved: {refusal}"
    assert [p.name for p in run.iterdir()] == [RECORD_OF_AUTOTUNE]  # (no history, no search files)
    assert (run / RECORD_OF_AUTOTUNE).read_text() == "[1, 2]\n"
    with pytest.raises(FastTextError, match="no model bundle at"):
        ws.saved_model("run")
    plt.close(fig)


def test_demo_refuses_a_parameter_no_notebook_has(monkeypatch, capsys):
    """`make demo ARGS='-p epoch 3'`: the typo was dropped (each notebook takes the names it has) and the
    demo ran its defaults for minutes; now it stops before anything runs, naming the closest parameter."""
    import papermill

    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import run_notebooks

    monkeypatch.setattr(papermill, "execute_notebook", lambda *args, **kwargs: pytest.fail("a notebook ran"))
    assert run_notebooks.main(["-p", "epoch", "3", "-p", "optimizer", "sgd"]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "error: no notebook of the series has the parameter 'epoch' (did you mean 'epochs'?); they have: ")
    assert "optimizer" in lines[0] and captured.out == ""


def test_demo_refuses_a_yes_no_parameter_given_as_text_before_anything_runs(monkeypatch, capsys):
    """`make demo ARGS='-p autotune false'`: notebook 01 ran in full, then 02's check cell refused the text 'false'
    and the demo ended in a traceback of run_notebooks.py and papermill. Now it stops before any notebook runs, in
    the one line the check cell prints. True and False pass."""
    import papermill

    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import run_notebooks

    monkeypatch.setattr(papermill, "execute_notebook", lambda *args, **kwargs: pytest.fail("a notebook ran"))
    for value, shown in (("false", "'false'"), ("no", "'no'"), ("1", "1")):
        assert run_notebooks.main(["-p", "epochs", "3", "-p", "autotune", value]) == 2
        captured = capsys.readouterr()
        assert captured.err.strip().splitlines() == [f"error: autotune must be True or False, got {shown} "
                                                     f"(papermill: -p autotune True, or -p autotune False)"]
        assert captured.out == ""

    ran = []
    monkeypatch.setattr(papermill, "execute_notebook", lambda source, *args, **kwargs: ran.append(source) or 1 / 0)
    with pytest.raises(ZeroDivisionError):  # past the checks: the first notebook is run
        run_notebooks.main(["-p", "autotune", "False", "-p", "epochs", "1"])
    assert [os.path.basename(s) for s in ran] == ["01_data_prep.ipynb"]


@pytest.mark.parametrize("args, said", [
    (["-p", "epochs", "0"], "error: 02_train_gpu.ipynb: epochs must be a positive integer, got 0"),
    (["-p", "top_k", "0"], "error: 04_inference.ipynb: top_k must be a positive integer, got 0"),
    (["-p", "timing_text", "yelp"], "error: 03_cpu_vs_gpu.ipynb: timing_text must be one of yelp-shaped, dataset, "
                                    "got 'yelp' (did you mean 'yelp-shaped'?)"),
    (["-p", "run_name", "a//b"], "error: 02_train_gpu.ipynb: run_name must be folder names joined by / (no empty, "
                                 ". or .. part), got 'a//b'"),
    (["-p", "autotune_duration", "30"], "error: 02_train_gpu.ipynb: autotune_duration is used only with "
                                        "autotune=True (it was given, and the run would not have used it): -p "
                                        "autotune True too, or leave autotune_duration out"),
])
def test_demo_refuses_a_later_notebooks_bad_parameter_before_any_notebook_runs(monkeypatch, capsys, tmp_path, args,
                                                                               said):
    """`make demo ARGS='-p epochs 0'` ran notebook 01 in full (its splits uploaded, its figure written), and only then
    did 02's check cell refuse the value; `-p top_k 0` ran 01, 02 and 03 (minutes of training) before 04's did. Every
    notebook's check cell now runs first, with the parameters it would get: one line naming the notebook."""
    import papermill

    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import run_notebooks

    monkeypatch.setattr(papermill, "execute_notebook", lambda *args, **kwargs: pytest.fail("a notebook ran"))
    assert run_notebooks.main([*args, "-p", "output_dir", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [said] and captured.out == ""


def _demo_run_parameters(monkeypatch, argv):
    """The parameters make demo (run_notebooks.main ``argv``) runs each notebook with, papermill stubbed: the check
    cells run as they do, and the series is stopped after 04 (no summary of a run that did not happen)."""
    import papermill

    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import run_notebooks

    given = {}

    def execute(source, executed, parameters, **kwargs):
        given[os.path.basename(source)] = parameters
        if source.endswith("04_inference.ipynb"):
            raise ZeroDivisionError

    monkeypatch.setattr(papermill, "execute_notebook", execute)
    with pytest.raises(ZeroDivisionError):  # past the check cells: the notebooks are run
        run_notebooks.main(argv)
    return given


@pytest.mark.parametrize("args, seeded", [
    ([], ["02_train_gpu.ipynb", "03_cpu_vs_gpu.ipynb"]),  # the sample: 01 uses no seed
    (["-p", "dataset", "synthetic"], ["01_data_prep.ipynb", "02_train_gpu.ipynb", "03_cpu_vs_gpu.ipynb"]),
])
def test_demo_gives_a_seed_to_01_only_where_its_data_uses_one(monkeypatch, tmp_path, args, seeded):
    """`make demo ARGS='-p seed 5'` passes the seed to every notebook that has it; 01's check cell refuses one its data
    leaves unused (the sample), which stopped the demo before anything ran, though 02 and 03 train with it. 01 gets
    it only where its data uses it (the synthetic corpus); the check cells pass and the notebooks run."""
    given = _demo_run_parameters(monkeypatch, [*args, "-p", "seed", "5", "-p", "output_dir", str(tmp_path / "out")])
    assert [name for name, parameters in given.items() if parameters.get("seed") == 5] == seeded
    assert len(given) == 4


ROLE_ARN = "arn:aws:iam::111122223333:role/x"


@pytest.mark.parametrize("args, given_role", [
    (["-p", "deploy", "True"], ["04_inference.ipynb"]),  # 02 uses a role only with use_training_job
    (["-p", "use_training_job", "True"], ["02_train_gpu.ipynb"]),  # 04 only with deploy
    (["-p", "use_training_job", "True", "-p", "deploy", "True"], ["02_train_gpu.ipynb", "04_inference.ipynb"]),
])
def test_demo_gives_a_role_only_to_the_notebooks_that_use_it(monkeypatch, tmp_path, args, given_role):
    """`make demo ARGS='-p deploy True -p role arn:...'` (04 deploys its endpoint with that role) was refused before
    anything ran: the role went to every notebook that has it, and 02's check cell refuses one it uses only with
    use_training_job. A value a notebook leaves unused now goes only to the notebooks that use it; the check cells
    pass (04's and 02's looked the role up as given) and the notebooks run (not here: papermill is stubbed)."""
    argv = [*args, "-p", "role", ROLE_ARN, "-p", "output_dir", str(tmp_path / "out")]
    given = _demo_run_parameters(monkeypatch, argv)
    assert [name for name, parameters in given.items() if parameters.get("role") == ROLE_ARN] == given_role
    assert len(given) == 4


@pytest.mark.parametrize("args", [[], ["-p", "deploy", "False"], ["-p", "use_training_job", "False"]])
def test_demo_refuses_a_role_no_notebook_would_use(monkeypatch, capsys, tmp_path, args):
    """`make demo ARGS='-p role arn:...'` with neither deploy nor use_training_job: no notebook would use the role, so
    it is not dropped from them all (the demo would have ignored it without a word) but refused before anything runs,
    in the one line of the first notebook that has it."""
    import papermill

    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import run_notebooks

    monkeypatch.setattr(papermill, "execute_notebook", lambda *args, **kwargs: pytest.fail("a notebook ran"))
    assert run_notebooks.main([*args, "-p", "role", ROLE_ARN, "-p", "output_dir", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        "error: 02_train_gpu.ipynb: role is used only with use_training_job=True (it was given, and the run would not "
        "have used it): -p use_training_job True too, or leave role out"] and captured.out == ""


def test_demo_s_overrides_leave_out_only_a_value_another_notebook_uses():
    """notebook_overrides, without a run: a value is left out of a notebook that would not use it only where another
    notebook of the series would (each as its own switches have it), else kept for the check cell to refuse."""
    import papermill

    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import run_notebooks

    known = {name: papermill.inspect_notebook(os.path.join(ROOT, "notebooks", name)) for name in run_notebooks.SERIES}

    def role_given(**overrides):
        return [name for name in run_notebooks.SERIES
                if "role" in run_notebooks.notebook_overrides(name, {**overrides, "role": ROLE_ARN}, known)]

    assert role_given(deploy=True) == ["04_inference.ipynb"]
    assert role_given(use_training_job=True) == ["02_train_gpu.ipynb"]
    assert role_given(use_training_job=True, deploy=True) == ["02_train_gpu.ipynb", "04_inference.ipynb"]
    assert role_given() == role_given(deploy=False) == ["02_train_gpu.ipynb", "04_inference.ipynb"]  # (refused)
    # 02's autotune sets emsize itself; 03 times its table with it
    emsize = {name: params.get("emsize") for name in run_notebooks.SERIES
              for params in [run_notebooks.notebook_overrides(name, {"autotune": True, "emsize": 50}, known)]}
    assert emsize == {"01_data_prep.ipynb": None, "02_train_gpu.ipynb": None, "03_cpu_vs_gpu.ipynb": 50,
                      "04_inference.ipynb": None}


@pytest.mark.parametrize("bucket", ["s3://fasttext-demo", "a", "My_Bucket", "None"])
def test_demo_refuses_a_bucket_it_cannot_create_before_anything_runs(monkeypatch, capsys, bucket):
    """`make demo ARGS='-p bucket s3://x'` (or a name S3 refuses) ended in botocore's traceback from creating the
    demo bucket on the local S3 server: one line now, before the server starts."""
    import papermill

    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import run_notebooks

    monkeypatch.setattr(papermill, "execute_notebook", lambda *args, **kwargs: pytest.fail("a notebook ran"))
    monkeypatch.setattr(run_notebooks, "local_s3", lambda *args: pytest.fail("the local S3 server was started"))
    assert run_notebooks.main(["-p", "bucket", bucket]) == 2
    captured = capsys.readouterr()
    shown = repr(None if bucket == "None" else bucket)
    assert captured.err.splitlines() == [f"error: bucket must be an S3 bucket name (3 to 63 lowercase letters, digits, "
                                         f"dots and hyphens, no s3://), got {shown}"]


def test_demo_stopped_by_a_cell_is_one_error_line_naming_the_executed_notebook(monkeypatch, capsys):
    """A notebook cell that stopped the demo (a user's error a later cell finds, such as a missing S3 object; a check
    cell's refusal) ended `make demo` in tracebacks of run_notebooks.py and papermill: one `error:` line now, the
    cell's own message (a FastTextError's alone, another exception's with its type) and the executed notebook."""
    import papermill

    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import run_notebooks

    for ename, evalue, said in (("FastTextError", "s3://fasttext-demo/x: no such object", "s3://fasttext-demo/x: "
                                 "no such object"), ("KeyError", "'text'", "KeyError: 'text'")):
        def stop(source, *args, **kwargs):
            raise papermill.PapermillExecutionError(3, 5, "load()", ename, evalue, ["Traceback ..."])

        monkeypatch.setattr(papermill, "execute_notebook", stop)
        assert run_notebooks.main(["-p", "epochs", "1"]) == 2
        captured = capsys.readouterr()
        assert captured.err.splitlines() == [f"error: 01_data_prep.ipynb stopped in cell [5]: {said} (its output: "
                                             f"build/demo/01_data_prep.ipynb)"]
        assert "Traceback" not in captured.out + captured.err


def test_demo_stopped_by_ctrl_c_is_one_error_line_naming_the_notebook(tmp_path):
    """Ctrl-C during `make demo`, while a cell ran: papermill's client interrupts its kernel and shuts it down (the
    kernel is in a session of its own, the terminal's Ctrl-C does not reach it), and the KeyboardInterrupt went on
    out of run_notebooks.py, in a 50-line traceback of it and papermill, after the kernel's own "Exception in message
    handler" traceback (the interrupted cell's answer sent to a socket already closed). One line now, naming the
    notebook and its executed copy, with 130 (the status of a Ctrl-C). A cell that takes a moment to stop, as
    train's does, stands in for 02's training cell (run in place of 01, the first notebook)."""
    import signal
    import time

    started, executed = tmp_path / "started", tmp_path / "executed.ipynb"
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell(
        f"import pathlib, time\npathlib.Path({str(started)!r}).touch()\ntry:\n    time.sleep(600)\n"
        f"except KeyboardInterrupt:\n    time.sleep(1)  # (a stop that takes a moment, as train's)\n    raise"))
    nbformat.write(notebook, str(tmp_path / "long.ipynb"))
    driver = (f"import sys\nsys.path.insert(0, {os.path.join(ROOT, 'scripts')!r})\nimport run_notebooks\n"
              f"real = run_notebooks.execute\n"
              f"run_notebooks.execute = lambda source, out, params, cwd: real({str(tmp_path / 'long.ipynb')!r}, "
              f"{str(executed)!r}, {{}}, cwd)\n"
              f"sys.exit(run_notebooks.main([]))\n")
    demo = subprocess.Popen([sys.executable, "-c", driver], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 300  # (a bound on the wait for the kernel: not a timing assertion)
    while not started.exists() and demo.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert started.exists(), demo.communicate()
    demo.send_signal(signal.SIGINT)
    out, err = demo.communicate(timeout=120)
    assert err.splitlines() == ["error: 01_data_prep.ipynb stopped by the user (its output until then: "
                                "build/demo/01_data_prep.ipynb)"], err
    assert demo.returncode == 130 and "Traceback" not in out
    assert executed.exists()  # (papermill's copy, as far as the cell got)


def test_a_run_on_other_data_keeps_its_own_bundle(tmp_path, s3_bucket):
    """`-p dataset synthetic` saved the synthetic model as models/sample, over the sample's model (run_name
    was "sample" whatever the data), and 04 then evaluated it on the sample's test split (or, after a failed
    02, the old model on the new data). The bundle is now named after the dataset unless run_name is given,
    and 02 saves where 04 loads."""
    def bundle_of(name, **overrides):
        code = code_cells(read(name))
        namespace = {}
        exec(code[0].source, {}, namespace)  # noqa: S102 - the committed parameters cell
        # a bucket of the local S3 server: 02's check cell probes its bundle's destination
        namespace.update(overrides, output_dir=str(tmp_path), bucket=s3_bucket[len("s3://"):])
        exec(code[1].source, namespace)  # noqa: S102
        return namespace["ws"].model(namespace["run_name"])

    for name in (SERIES[1], SERIES[3]):
        assert bundle_of(name).endswith("/models/sample")
        assert bundle_of(name, dataset="synthetic").endswith("/models/synthetic")
        assert bundle_of(name, dataset="synthetic", run_name="big").endswith("/models/big")
    assert bundle_of(SERIES[1], dataset="ag_news") == bundle_of(SERIES[3], dataset="ag_news")


def test_04_reads_query_words_and_pairs_as_the_model_reads_text(tmp_path, capsys):
    """04's nearest-neighbour and cos_similarity tables dropped a word the vocabulary lacks without a word: -y
    "query_words: [Great]" (the model reads text lowercased, so "great" is there) gave an empty table. Words are
    now read as the model reads text, and the ones still missing are named in a line."""
    import pandas as pd

    from fasttext_lib.bundle import save_bundle
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.predict import Predictor
    from fasttext_lib.sample import load_sample
    from fasttext_lib.train import train

    data = load_sample("train").head(300)
    trained = train(data, None, TrainConfig(epochs=1, emsize=8, ngrams=1, ctx="cpu", progress=False))
    predictor = Predictor.load(save_bundle(trained, str(tmp_path / "model")))
    code = code_cells(read(SERIES[3]))
    imports = ast.Module([n for n in ast.parse(code[1].source).body if isinstance(n, (ast.Import, ast.ImportFrom))], [])
    namespace = {"predictor": predictor, "top_k": 2}
    exec(compile(imports, "imports", "exec"), namespace)  # noqa: S102 - the notebook's own imports
    neighbours_cell = next(c.source for c in code if "neighbours(learned" in c.source)
    pairs_cell = next(c.source for c in code if "cos_similarity(embedding, a, b)" in c.source)

    def table(cell, **parameters):
        """Run the cell with these parameters; return what it shows (its last expression), as Jupyter would."""
        namespace.update(parameters)
        body = ast.parse(cell).body
        exec(compile(ast.Module(body[:-1], []), "cell", "exec"), namespace)  # noqa: S102
        return eval(compile(ast.Expression(body[-1].value), "cell", "eval"), namespace)  # noqa: S307

    size = len(predictor.featurizer.vocab)
    shown = table(neighbours_cell, query_words=["Great", "zzzz", "great"])
    assert isinstance(shown, pd.DataFrame) and list(shown.columns) == ["great: nearest", "great: opposite"]
    assert capsys.readouterr().out == f"not in the model's vocabulary of {size} words (query_words): 'zzzz'\n"
    shown = table(pairs_cell, word_pairs=[("Great", "GOOD"), ("great", "zzzz")])
    assert shown[["word 1", "word 2"]].values.tolist() == [["great", "good"]]
    assert f"not in the model's vocabulary of {size} words (word_pairs): ('great', 'zzzz')\n" in capsys.readouterr().out
    # none there (the English defaults on the synthetic corpus): an empty table that says why, the run goes on
    assert table(neighbours_cell, query_words=["zzzz"]).empty
    assert capsys.readouterr().out == (f"not in the model's vocabulary of {size} words (query_words): 'zzzz'; none of "
                                       f"query_words is, so its table is empty\n")
    assert table(neighbours_cell, query_words=[]).empty  # (-y "query_words: []": no word why)
    assert capsys.readouterr().out == "query_words is empty, so its table is empty\n"


@pytest.mark.parametrize("metrics, shown", [
    ({"final": {"val_accuracy": 0.78391}}, "| final held-out accuracy at training: 0.7839"),
    ({"final": {"val_accuracy": 0.75612}, "autotune": {"refit": False}},
     "| final validation (autotune's split of the training data) accuracy at training: 0.7561"),
    # a bundle trained without validation data (train without --validation; a training job without a test channel)
    # or autotune's refit on training and validation data: its cell failed, TypeError: round(None)
    ({"final": {"val_accuracy": None}}, "| no held-out accuracy at training (trained without validation data)"),
    ({"final": {"val_accuracy": None}, "autotune": {"refit": True}},  # (it was said to have had no validation data)
     "| no held-out accuracy at training (the final model was refitted on training + validation data, so it has no "
     "held-out score)"),
])
def test_04_names_the_split_the_bundles_final_accuracy_was_measured_on(metrics, shown, capsys):
    """02 with autotune=True saves the chosen trial, validated on the search's split of the training data; 04 called
    that score "final test accuracy at training" (0.7561 where the test split, scored two cells later, gave 0.7784)."""
    import types

    from fasttext_lib.predict import Predictor

    class Loaded:  # the bundle stubbed: its names and metrics.json, read as a Predictor reads them
        names, held_out_score = ["negative", "positive"], Predictor.held_out_score

    load_cell = next(c.source for c in code_cells(read(SERIES[3])) if "Predictor.load(bundle_uri" in c.source)
    predictor = Loaded()
    predictor.metrics = metrics
    namespace = {"Predictor": types.SimpleNamespace(load=lambda uri, ctx: predictor), "ctx": "cpu", "run_name": "sample",
                 "ws": types.SimpleNamespace(saved_model=lambda name: f"s3://bkt/p/models/{name}")}
    exec(load_cell, namespace)  # noqa: S102 - the committed cell, the bundle stubbed
    assert capsys.readouterr().out == f"labels: ['negative', 'positive'] {shown}\n"


@pytest.mark.parametrize("overrides, said", [
    ({}, r"^no SageMaker execution role: pass role="),  # outside SageMaker, without SAGEMAKER_ROLE
    ({"role": "arn:aws:iam::123456789012:role/R", "training_instance_type": None}, r"^instance_type must be a Sage"),
    # the SDK's ValueError traceback (or a TypeError from the role) in the job's cell, after the local training
    ({"role": "arn:aws:iam::123456789012:role/R", "training_instance_type": "m5.xlarge"},
     r"^instance_type must be a SageMaker instance type such as 'ml.m5.xlarge', got 'm5.xlarge' "
     r"\(did you mean 'ml.m5.xlarge'\?\)$"),
    ({"role": 5}, r"^role must be an IAM role's ARN \(arn:aws:iam::\.\.\.:role/\.\.\.\) or name, got 5$"),
])
def test_02_checks_the_training_job_before_the_local_training(overrides, said, tmp_path, s3_bucket, monkeypatch):
    """`-p use_training_job True` on a machine with no execution role (or no instance type) trained the model in the
    notebook first (02 always does), and only then did the job's cell refuse: minutes of training, then one line.
    The check cell refuses it now, before the data is read; a role given passes."""
    from fasttext_lib.errors import FastTextError

    monkeypatch.delenv("SAGEMAKER_ROLE", raising=False)
    local = {"bucket": s3_bucket[len("s3://"):], "output_dir": str(tmp_path), "use_training_job": True}
    with pytest.raises(FastTextError, match=said):
        run_after_papermill("02_train_gpu.ipynb", {**local, **overrides})
    run_after_papermill("02_train_gpu.ipynb", {**local, "role": "arn:aws:iam::123456789012:role/R"})


@pytest.mark.parametrize("overrides, said", [
    ({}, r"^no SageMaker execution role: pass role="),  # outside SageMaker, without SAGEMAKER_ROLE
    ({"role": ["arn:aws:iam::123456789012:role/R"]}, r"^role must be an IAM role's ARN "),
    ({"role": "arn:aws:iam::123456789012:role/R", "endpoint_instance_type": "m5.xlarge"},
     r"^instance_type must be a SageMaker instance type .*\(did you mean 'ml.m5.xlarge'\?\)$"),
    ({"role": "arn:aws:iam::123456789012:role/R", "endpoint_instance_type": None}, r"^instance_type must be a Sage"),
])
def test_04_checks_the_deployment_before_the_model_is_loaded(overrides, said, tmp_path, s3_bucket, monkeypatch):
    """`-p deploy True` with no execution role, or an endpoint instance type the SDK refuses (m5.xlarge for
    ml.m5.xlarge), ran the whole notebook, packed and uploaded model.tar.gz, and only then failed in the deploy cell,
    the instance type as the SDK's ValueError traceback. The check cell refuses both now; a role given passes."""
    from fasttext_lib.errors import FastTextError

    monkeypatch.delenv("SAGEMAKER_ROLE", raising=False)
    local = {"bucket": s3_bucket[len("s3://"):], "output_dir": str(tmp_path), "deploy": True}
    with pytest.raises(FastTextError, match=said):
        run_after_papermill("04_inference.ipynb", {**local, **overrides})
    run_after_papermill("04_inference.ipynb", {**local, "role": "arn:aws:iam::123456789012:role/R"})
    # without deploy it is not checked as an instance type; None (no type) is not a value the run would leave unused
    run_after_papermill("04_inference.ipynb", {**local, "deploy": False, "endpoint_instance_type": None})


@pytest.mark.parametrize("name, asked", [("02_train_gpu.ipynb", {"use_training_job": True}),
                                         ("04_inference.ipynb", {"deploy": True})])
def test_the_role_lookup_asks_the_configured_endpoint_not_aws(name, asked, tmp_path, s3_bucket, monkeypatch):
    """`-p use_training_job True` (or 04's `-p deploy True`) with no role: the check cell looks the execution role up
    from the caller's identity, and the sagemaker SDK sends that STS call to AWS's regional endpoint whatever
    AWS_ENDPOINT_URL says, so `make demo` and this suite, on the local server with its dummy credentials, called
    AWS (refused here as "Could not connect to https://sts.us-east-1.amazonaws.com/"). Every request now goes where
    the ambient configuration points; the local server's identity is a user, not a role: one line."""
    from botocore.httpsession import URLLib3Session

    from fasttext_lib.errors import FastTextError

    sent, send = [], URLLib3Session.send
    monkeypatch.setattr(URLLib3Session, "send", lambda self, request: sent.append(request.url) or send(self, request))
    monkeypatch.delenv("SAGEMAKER_ROLE", raising=False)
    local = {"bucket": s3_bucket[len("s3://"):], "output_dir": str(tmp_path), **asked}
    with pytest.raises(FastTextError, match=r"^no SageMaker execution role: pass role=.* \(the caller identity "
                                            r"arn:aws:sts::123456789012:user/moto is not a role\)$"):
        run_after_papermill(name, local)
    endpoint = os.environ["AWS_ENDPOINT_URL"]
    assert sent and [url for url in sent if not url.startswith(endpoint)] == []


def test_02_refuses_tune_without_a_training_job_in_its_check_cell(tmp_path, s3_bucket):
    """`-p tune True` alone asks for a tuning job, which starts training jobs: 02 trained locally for minutes and
    said only in its last cells "tune needs use_training_job=True: no tuning job started". Its check cell says so."""
    from fasttext_lib.errors import FastTextError

    local = {"bucket": s3_bucket[len("s3://"):], "output_dir": str(tmp_path), "tune": True}
    with pytest.raises(FastTextError, match=r"^tune needs use_training_job=True \(a tuner starts training jobs\): "
                                            r"-p use_training_job True too, or -p tune False$"):
        run_after_papermill("02_train_gpu.ipynb", local)


@pytest.mark.parametrize("tune, use_training_job, said", [
    (False, False, "tune is False: no tuning job started"),
    (True, False, "tune needs use_training_job=True: no tuning job started"),  # it said "tune is False"
])
def test_02_says_why_no_tuning_job_started(capsys, tune, use_training_job, said):
    cell = next(c.source for c in code_cells(read(SERIES[1])) if "make_tuner" in c.source)
    exec(compile(cell, "cell", "exec"), {"tune": tune, "use_training_job": use_training_job})  # noqa: S102
    assert capsys.readouterr().out == said + "\n"


@pytest.mark.parametrize("batches, batch_size", [(2, 16), (3, 16), (1, 63)])
def test_03_refuses_too_few_documents_for_the_dense_recipe_in_its_check_cell(batches, batch_size, tmp_path, s3_bucket):
    """`papermill 03 -p batches 2 -p batch_size 16` (32 documents) timed every device, then stopped the dense recipe's
    cell in a ValueError traceback ("need more than 48 documents"): it times 3 warm-up batches of 16, then one more. The check cell refuses it now, in one line naming the parameters, before anything is timed."""
    from fasttext_lib.errors import FastTextError

    local = {"bucket": s3_bucket[len("s3://"):], "output_dir": str(tmp_path), "batches": batches,
             "batch_size": batch_size}
    with pytest.raises(FastTextError, match=rf"^batches \* batch_size = {batches * batch_size} documents are too few "
                                            rf"for the dense recipe: it needs at least 64 \(3 warm-up batches of 16"):
        run_after_papermill("03_cpu_vs_gpu.ipynb", local)
    run_after_papermill("03_cpu_vs_gpu.ipynb", {**local, "batches": 4})  # 64 documents: enough


def test_the_dense_recipe_refuses_too_few_documents_in_one_line():
    """Where the documents are fewer than batches * batch_size (timing_text="dataset" on a small prepared set), the
    recipe's own refusal is the one line too, not a ValueError traceback."""
    import numpy as np

    from fasttext_lib.baseline import time_dense_recipe
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.features import Featurizer

    featurizer, bags = Featurizer.fit(["good film"] * 30 + ["bad film"] * 10, ngrams=1, buckets=64, return_bags=True)
    with pytest.raises(FastTextError, match=r"^40 documents are too few for the dense recipe: it needs at least 64 "):
        time_dense_recipe(bags, np.arange(40) % 2, featurizer.num_rows, emsize=4, batches=2)


def cell_with(name, marker):
    """The one code cell of notebook ``name`` whose source holds ``marker``."""
    found = [c.source for c in code_cells(read(name)) if marker in c.source]
    assert len(found) == 1, f"{name}: {len(found)} cells hold {marker!r}"
    return found[0]


@pytest.mark.parametrize("autotune", [True, False])
def test_02_trains_in_its_train_cell_only_without_autotune(autotune, capsys):
    """With autotune=True 02's train cell trained a whole model on the training split (all its epochs, minutes at
    Yelp size), which the autotune cell then replaced with the search's unused. That cell trains only without
    autotune now; with it the model is the search's, and the cell says so."""
    calls = []
    namespace = {"train": lambda *args, **kwargs: calls.append((args, kwargs)) or "the model", "autotune": autotune,
                 "train_data": "the train split", "test_data": "the test split", "config": "config",
                 "train_accuracy": True}
    exec(cell_with(SERIES[1], "score_train=train_accuracy"), namespace)  # noqa: S102 - 02's train cell
    if autotune:
        assert calls == [] and "trained" not in namespace
        assert capsys.readouterr().out == "autotune is True: the model is the search's (the autotune cell below)\n"
    else:  # (as committed: no line of its own)
        assert calls == [(("the train split", "the test split", "config"), {"score_train": True})]
        assert namespace["trained"] == "the model" and capsys.readouterr().out == ""


def notebook_imports(name):
    """The imports of a notebook's check cell (cell 2), as a namespace to run its later cells in."""
    tree = ast.parse(code_cells(read(name))[1].source)
    namespace = {}
    imports = ast.Module([n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))], [])
    exec(compile(imports, "imports", "exec"), namespace)  # noqa: S102 - the notebook's own imports
    return namespace


def _imports_of(source):
    """The import statements of a cell's code, as code."""
    return "\n".join(ast.unparse(n) for n in ast.parse(source).body if isinstance(n, (ast.Import, ast.ImportFrom)))


def test_02s_save_cell_shows_no_sagemaker_config_lines():
    """02's save cell imports the SDK (``sagemaker.s3``), which logs each config file it looks for on stdout:
    ``sagemaker.config INFO - Not applying SDK defaults from location: /root/.config/sagemaker/config.yaml`` (twice) was
    committed as the cell's output, with this machine's home folder in it, which nbval then compared on another
    machine. The library quietened that logger only inside its own functions, after the import had logged."""
    code = _imports_of(code_cells(read(SERIES[1]))[1].source) + "\n" + _imports_of(cell_with(SERIES[1], "S3Downloader"))
    assert "sagemaker.s3" in code
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=NOTEBOOKS,
                       env={**os.environ, "PYTHONPATH": ROOT})
    assert r.returncode == 0, r.stderr[-2000:]
    assert "sagemaker.config" not in r.stdout + r.stderr


def test_02_streams_its_training_split_as_the_command_line_does(tmp_path, s3_bucket):
    """02's data cell read the training split whole (read_labeled): every text held in the kernel through training
    and after (~0.7 GB of strings at Yelp size, which the command line's streamed read never holds), then tokenized in
    a second pass. A 300k-document Yelp-shaped run from S3 peaked at 0.97 GB against the command line's 0.36 GB on
    the same files. It now reads it as the command line does (data.read_counted): no texts kept, the same model
    trained, the label names found beside it. With autotune, whose search splits the texts, it reads them whole."""
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.data import CountedTexts, LabeledTexts, read_labeled
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.own_data import read_prepared
    from fasttext_lib.sample import load_sample
    from fasttext_lib.train import train
    from fasttext_lib.workspace import Workspace
    from fasttext_lib.writers import write_fasttext_splits

    ws = Workspace(s3_bucket[len("s3://"):], "fasttext", str(tmp_path))

    def numbered(data):  # labelled 1 and 2, named in the classes.txt written beside them (as 01's Yelp splits)
        return LabeledTexts(["1" if label == "negative" else "2" for label in data.labels], data.texts)

    splits = {"train": numbered(load_sample("train").head(300)), "test": numbered(load_sample("test").head(100))}
    write_fasttext_splits(splits, ws.data, "sample", names={"1": "negative", "2": "positive"})
    config = TrainConfig(epochs=2, emsize=8, ngrams=2, buckets=1000, ctx="cpu", progress=False)

    def data_cell(autotune):
        namespace = {**notebook_imports(SERIES[1]), "ws": ws, "dataset": "sample", "autotune": autotune}
        exec(cell_with(SERIES[1], "read_prepared(train_uri"), namespace)  # noqa: S102 - 02's data cell
        return namespace["train_data"], namespace["test_data"]

    streamed, test_data = data_cell(autotune=False)
    assert isinstance(streamed, CountedTexts) and not hasattr(streamed, "texts")  # no texts held
    whole = read_labeled(ws.prepared("sample", "train"))  # 02's read before
    assert streamed.labels == whole.labels and streamed.names == whole.names == {"1": "negative", "2": "positive"}

    def learned(data):  # each epoch's losses and accuracy (not its timings)
        return [{k: v for k, v in row.items() if k not in ("seconds", "samples_per_s")}
                for row in train(data, test_data, config).history]

    assert learned(streamed) == learned(whole)  # the same model
    with pytest.raises(ValueError, match="a streamed read takes the whole split"):  # (no limit: read_labeled's only)
        read_prepared(ws.prepared("sample", "train"), "sample", limit=10, streamed=True)

    # autotune set True after the data cell ran: its search cell says to run that cell again (its split of the streamed
    # data was an AttributeError traceback), before anything is written
    with pytest.raises(FastTextError, match=r"^autotune splits the training texts, which the data cell read with "
                                            r"autotune=False does not keep .*: run the data cell again with "
                                            r"autotune=True, then this one$"):
        ws.autotune(streamed, test_data, config, "sample", duration=5)
    assert not (tmp_path / "sample").exists()
    searched, _ = data_cell(autotune=True)  # autotune's search splits the texts: read whole
    assert isinstance(searched, LabeledTexts) and searched.texts == whole.texts


def test_04_refuses_a_bundle_tested_on_other_data_than_01_prepared_now(tmp_path, s3_bucket):
    """01 run again with other settings (`-p train_docs 1000` for synthetic, a Yelp cap) after 02, then 04 (02 skipped,
    or stopped by a Ctrl-C or a diverged run): 04 evaluated the old model on the new test split, beside the old run's
    "final test accuracy at training", as if they were one run. So was a run_name given to 02 with one dataset and to 04 with another whose classes
    have the same names. 02 records the test split it read in the bundle; 04 refuses a test split that is not it, in
    one line. 01 run again alike (the same documents) passes; a bundle with no record is not checked."""
    from fasttext_lib.bundle import save_bundle
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.writers import write_fasttext_splits
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.sample import load_sample
    from fasttext_lib.train import train
    from fasttext_lib.workspace import Workspace

    ws = Workspace(s3_bucket[len("s3://"):], "fasttext", str(tmp_path))
    splits = {"train": load_sample("train").head(300), "test": load_sample("test").head(100)}
    write_fasttext_splits(splits, ws.data, "sample")  # what 01 writes
    saved = {**notebook_imports(SERIES[1]), "ws": ws, "run_name": "sample", "dataset": "sample", "autotune": False}
    exec(cell_with(SERIES[1], "train_data = read_prepared("), saved)  # noqa: S102 - 02's data cell
    saved["trained"] = train(saved["train_data"], saved["test_data"],
                             TrainConfig(epochs=1, emsize=8, ngrams=1, buckets=1000, ctx="cpu", progress=False))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    saved["fig"] = plt.figure()  # 02's history plot
    exec(cell_with(SERIES[1], "ws.save_run(trained, "), saved)  # noqa: S102 - 02's save cell
    plt.close(saved["fig"])

    def evaluate_in_04(dataset="sample"):
        namespace = {**notebook_imports(SERIES[3]), "ws": ws, "run_name": "sample", "ctx": "cpu", "dataset": dataset}
        exec(cell_with(SERIES[3], "Predictor.load(bundle_uri"), namespace)  # noqa: S102 - 04's load cell
        exec(cell_with(SERIES[3], "predictor.evaluation(test_data)"), namespace)  # noqa: S102 - 04's evaluation
        return namespace["metrics"]

    assert evaluate_in_04()["n"] == 100
    write_fasttext_splits(splits, ws.data, "sample")  # 01 again, alike: the same documents
    assert evaluate_in_04()["n"] == 100

    write_fasttext_splits({"train": load_sample("train").head(200), "test": load_sample("test").head(80)}, ws.data,
                          "sample")  # 01 again with other settings, 02 not
    bundle, test = f"{ws.models}/sample", f"{ws.data}/sample.test"
    with pytest.raises(FastTextError, match=rf"^{test} holds other test documents than when the model at {bundle} was "
                                            rf"trained \(80 documents, 100 then\): notebook 01 wrote it again since; "
                                            rf"run notebook 02 again"):
        evaluate_in_04()

    write_fasttext_splits(splits, ws.data, "other")  # another dataset (the same classes), the bundle given to 04
    with pytest.raises(FastTextError, match=rf"^the model at {bundle} was tested on {test}, not on {ws.data}/other.test "
                                            rf"\(dataset='other'\): "):
        evaluate_in_04(dataset="other")

    save_bundle(saved["trained"], bundle)  # a bundle with no record (the CLI's, an older 02's): not checked
    assert evaluate_in_04()["n"] == 80


@pytest.mark.parametrize("name", [SERIES[1], SERIES[3]])
@pytest.mark.parametrize("dataset", [None, "", "/", ["sample"]])
def test_02_and_04_name_the_dataset_when_it_names_no_data(name, dataset, tmp_path, s3_bucket):
    """`papermill 02 -p dataset None` (or "") stopped the check cell with "run_name must name a folder, got None": a
    parameter the user had not given (run_name defaults to the dataset's name). The line names dataset now, also with
    a run_name given (it passed then, and 02's data cell stopped on it after the libraries had loaded); a run_name
    names the bundle of a dataset that names data."""
    from fasttext_lib.errors import FastTextError

    local = {"bucket": s3_bucket[len("s3://"):], "output_dir": str(tmp_path), "dataset": dataset}
    for run_name in (None, "big"):
        with pytest.raises(FastTextError, match=rf"^dataset must name the data notebook 01 prepared \(such as "
                                                rf"'sample'\), got {re.escape(repr(dataset))}$"):
            run_after_papermill(name, {**local, "run_name": run_name})
    assert run_after_papermill(name, {**local, "dataset": "sample", "run_name": "big"})["run_name"] == "big"


@pytest.mark.parametrize("timing_text", ["yelp-shaped", "dataset"])
@pytest.mark.parametrize("dataset", [None, "", "/", ["sample"], "a//b"])
def test_03_checks_its_dataset_in_its_check_cell(dataset, timing_text, tmp_path, s3_bucket):
    """03's check cell passed `-p dataset None` (or "", or a list): only its data cell refused it, after the other
    parameters were checked and the libraries loaded. It names it now in the check cell's one line, as 02's and 04's
    do; a dataset naming data passes."""
    from fasttext_lib.errors import FastTextError

    local = {"bucket": s3_bucket[len("s3://"):], "output_dir": str(tmp_path), "dataset": dataset,
             "timing_text": timing_text}
    said = ("dataset must be folder names joined by /" if dataset == "a//b" else
            rf"dataset must name the data notebook 01 prepared \(such as 'sample'\), got {re.escape(repr(dataset))}$")
    with pytest.raises(FastTextError, match=rf"^{said}"):
        run_after_papermill(SERIES[2], local)
    run_after_papermill(SERIES[2], {**local, "dataset": "yelp_review_polarity"})


def test_03_prices_each_instance_once_and_says_what_its_epoch_time_rests_on():
    """03 applied the CPU time measured here to every CPU instance (a 2-vCPU ml.t3.medium as fast as a 4-vCPU
    ml.m5.xlarge, so the t3 always looked ~4.6x cheaper) with no word, and listed each GPU instance once per GPU."""
    import pandas as pd

    from fasttext_lib.costs import epoch_costs
    from fasttext_lib.errors import FastTextError

    prices = pd.DataFrame([
        {"instance": "ml.t3.medium", "kind": "cpu", "vcpus": 2, "usd_per_hour": 0.05},
        {"instance": "ml.m5.xlarge", "kind": "cpu", "vcpus": 4, "usd_per_hour": 0.23},
        {"instance": "ml.c5.large", "kind": "cpu", "vcpus": None, "usd_per_hour": 0.1},
        {"instance": "ml.p3.2xlarge", "kind": "gpu", "vcpus": 8, "usd_per_hour": 3.6},
    ]).set_index("instance")
    timings = pd.DataFrame([{"device": "cpu", "kind": "cpu", "epoch_s_estimate": 20.0},
                            {"device": "gpu:0", "kind": "gpu", "epoch_s_estimate": 2.0},
                            {"device": "gpu:1", "kind": "gpu", "epoch_s_estimate": 3.0}]).set_index("device")
    costs = epoch_costs(prices, timings, cpus_here=2)
    assert list(costs.index) == ["ml.t3.medium", "ml.m5.xlarge", "ml.c5.large", "ml.p3.2xlarge"]
    assert costs.loc["ml.p3.2xlarge", "usd_per_epoch"] == pytest.approx(2.0 / 3600 * 3.6)  # gpu:0's time
    assert costs.loc["ml.m5.xlarge", "usd_per_10_epoch_run"] == pytest.approx(10 * 20.0 / 3600 * 0.23)
    assert costs.basis.tolist() == ["2 CPUs here, as many there", "2 CPUs here, 4 vCPUs there: likely faster",
                                    "2 CPUs here; vCPUs there not given", "gpu:0 here, same speed assumed"]
    assert costs.basis.str.len().max() <= 50  # (pandas shows 50 characters of a cell)
    # no GPU measured here: GPU instances are not priced
    assert list(epoch_costs(prices, timings.loc[["cpu"]], cpus_here=8).index) == ["ml.t3.medium", "ml.m5.xlarge",
                                                                                  "ml.c5.large"]
    with pytest.raises(FastTextError, match=r"prices needs the column\(s\) vcpus"):
        epoch_costs(prices.drop(columns="vcpus"), timings, cpus_here=2)


def test_02_puts_its_history_in_place_only_once_the_bundle_is_saved(tmp_path, s3_bucket, monkeypatch):
    """02 wrote history.csv and history.png in its plot cell, before the save cell: a save that failed (a denied
    write, a lost endpoint) left the history of a model never saved beside the run's older bundle, as if of it. The
    save cell's ws.save_run saves the bundle, then puts the history in place: a failed save leaves the older history
    and bundle whole, and nothing else in the folder."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from conftest import make_splits
    from fasttext_lib import bundle
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.predict import Predictor
    from fasttext_lib.train import train
    from fasttext_lib.workspace import Workspace

    code = [c.source for c in code_cells(read(SERIES[1]))]
    assert not any("to_csv(" in source or "savefig(" in source for source in code)  # the history: save_run's alone
    assert any("ws.save_run(trained, run_name, fig," in source for source in code)

    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path / "out"))
    train_data, val_data = make_splits(200, 50, seed=0)
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    uri = ws.save_run(train(train_data, val_data, TrainConfig(epochs=1)), "run", fig)
    run = ws.out / "run"  # the run's folder
    assert sorted(p.name for p in ws.out.iterdir()) == ["run"]
    assert sorted(p.name for p in run.iterdir()) == ["history.csv", "history.png", RECORD_OF_HISTORY]
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    assert before["history.csv"].decode().splitlines()[0].startswith("epoch,") and len(before["history.csv"].splitlines()) == 2

    def denied(*args, **kwargs):
        raise FastTextError(f"cannot write {uri}/config.json: access denied")

    longer = train(train_data, val_data, TrainConfig(epochs=2))
    ax.plot([2, 1])
    monkeypatch.setattr(bundle, "publish_bundle", denied)
    with pytest.raises(FastTextError, match="access denied"):
        ws.save_run(longer, "run", fig)
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before  # no new history, no temporary
    assert [row["epoch"] for row in Predictor.load(uri).metrics["history"]] == [1]  # the older bundle, whole
    monkeypatch.undo()
    assert ws.save_run(longer, "run", fig) == uri
    assert len((run / "history.csv").read_text().splitlines()) == 3
    assert [row["epoch"] for row in Predictor.load(uri).metrics["history"]] == [1, 2]
    plt.close(fig)


def test_02_saved_again_to_its_run_name_says_which_bundle_it_replaced_and_how_to_keep_both(tmp_path, s3_bucket,
                                                                                              capsys):
    """02 run again to the same run_name (the dataset's, unless given) replaced the earlier bundle and said only
    "bundle: ...". ws.save_run now says it replaced one, naming it (when it was saved, its epochs and n-grams, from
    its config.json) and how to keep both; a save where there was none says nothing of the kind."""
    import boto3
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from conftest import make_splits
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.train import train
    from fasttext_lib.workspace import Workspace

    bucket = s3_bucket[len("s3://"):]
    ws = Workspace(bucket, "p", str(tmp_path / "out"))
    train_data, val_data = make_splits(200, 50, seed=0)
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    for run_name in ("run", "other"):  # (another name: its own bundle, nothing replaced)
        uri = ws.save_run(train(train_data, val_data, TrainConfig(epochs=1, ngrams=1, progress=False)), run_name, fig)
        assert "replaced" not in capsys.readouterr().err
    saved = boto3.client("s3").head_object(Bucket=bucket, Key="p/models/other/config.json")["LastModified"]
    assert ws.save_run(train(train_data, val_data, TrainConfig(epochs=2, ngrams=2, progress=False)), "other",
                       fig) == uri
    assert (f"replaced the earlier bundle at {uri} (saved {saved:%Y-%m-%d %H:%M} UTC: 1 epoch, 1-grams); to keep "
            f"both next time, give each run its own name: -p run_name NAME") in capsys.readouterr().err.splitlines()
    plt.close(fig)


def test_02_names_a_bundle_another_run_saved_to_its_run_name_while_it_was_saving(tmp_path, s3_bucket, capsys,
                                                                                   monkeypatch):
    """A papermill sweep run in parallel without -p run_name (each run's is the dataset's): the bundle in place was
    read before the save took the run folder's lock, so a run that saved meanwhile, between that read and this save,
    was replaced without a word, and every run said only "bundle: ...", as if its own were kept. It is read under the
    lock now, just before the save: the run saved meanwhile is named."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from conftest import make_splits
    from fasttext_lib import bundle, storage
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.predict import Predictor
    from fasttext_lib.train import train
    from fasttext_lib.workspace import Workspace

    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path / "out"))
    splits = make_splits(200, 50, seed=0)
    other = train(*splits, TrainConfig(epochs=3, ngrams=1, progress=False))  # the other run's model
    mine = train(*splits, TrainConfig(epochs=1, ngrams=2, progress=False))
    writes = storage.atomic_writes

    def the_other_run_saves_first(*args, **kwargs):  # (as this run's history is written, before the lock is taken)
        bundle.save_bundle(other, ws.model("sample"))
        return writes(*args, **kwargs)

    monkeypatch.setattr(storage, "atomic_writes", the_other_run_saves_first)
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    uri = ws.save_run(mine, "sample", fig)
    plt.close(fig)
    assert [row["epoch"] for row in Predictor.load(uri).metrics["history"]] == [1]  # this run's, as its history
    said = [line for line in capsys.readouterr().err.splitlines() if line.startswith("replaced")]
    assert said and said[0].startswith(f"replaced the earlier bundle at {uri} (saved ") and \
        ": 3 epochs, 1-grams); to keep both next time" in said[0], said


def _exp1_and_exp2(s3_bucket, out, *epochs):
    """Notebook 02 run to two prefixes of one bucket, exp1 and exp2, with one output_dir ``out`` (so one run folder
    for a run_name, {out}/sample): their Workspaces, a model trained for each of ``epochs`` (make_splits' data,
    unigrams) and a history figure with its axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from conftest import make_splits
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.train import train
    from fasttext_lib.workspace import Workspace

    bucket, splits = s3_bucket[len("s3://"):], make_splits(200, 50, seed=0)
    models = [train(*splits, TrainConfig(epochs=n, ngrams=1, progress=False)) for n in epochs]
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    return Workspace(bucket, "exp1", out), Workspace(bucket, "exp2", out), models, fig, ax


def test_02_keeps_04s_files_of_another_prefixs_bundle_in_the_run_folder_they_share(tmp_path, s3_bucket, capsys):
    """The run folder is {output_dir}/{run_name}, one for every bucket and prefix: 04 run on prefix exp1's bundle, then
    02 run to prefix exp2 (the same output_dir and run_name, the dataset's), removed 04's files of exp1's bundle, still
    there, saying "04's, of the model replaced". 04 records the bundle each file is of; 02 removes only those of the
    bundle it replaced, and says which it kept. Those of its own bundle still go."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    out = str(tmp_path / "out")
    exp1, exp2, (trained,), fig, ax = _exp1_and_exp2(s3_bucket, out, 1)
    exp1.save_run(trained, "sample", fig)  # 02 on exp1, then 04 on its bundle
    exp1.save_predictions(pd.DataFrame({"label": ["a"]}), "sample")
    exp1.save_confusion_matrix(fig, "sample")
    run = tmp_path / "out" / "sample"
    files = {name: (run / name).read_bytes() for name in ("04_predictions.csv", "04_confusion_matrix.png")}
    capsys.readouterr()
    exp2.save_run(trained, "sample", fig)  # 02 on exp2: exp1's bundle is not replaced
    err = capsys.readouterr().err
    assert {name: (run / name).read_bytes() for name in files} == files
    assert "removed" not in err and f"kept 04_predictions.csv, 04_confusion_matrix.png in {out}/sample: notebook " \
        f"04's, of {exp1.model('sample')}, not of {exp2.model('sample')}" in err.splitlines(), err
    exp1.save_run(trained, "sample", fig)  # 02 on exp1 again: its bundle replaced, and 04's files of it go
    assert not any((run / name).exists() for name in files) and not (run / "04_written.json").exists()
    assert "04_predictions.csv, 04_confusion_matrix.png from " in capsys.readouterr().err
    plt.close(fig)


def test_02_keeps_the_history_of_another_prefixs_bundle_in_the_run_folder_they_share(tmp_path, s3_bucket, capsys,
                                                                                        monkeypatch):
    """The run folder is {output_dir}/{run_name}, one for every bucket and prefix: 02 run to prefix exp2 replaced the
    history.csv and history.png of exp1's bundle (the same output_dir and run_name, the dataset's) without a word. The
    history's record says which bundle it is of; another bundle's is kept as history.exp1.csv and history.exp1.png,
    said in one line, and history.csv is the new run's, as 02's last cell prints it. A save that fails keeps no copy;
    a rerun to the same bundle replaces its own history silently, as before."""
    import matplotlib
    import pandas as pd

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fasttext_lib import bundle
    from fasttext_lib.errors import FastTextError

    out = str(tmp_path / "out")
    exp1, exp2, (one, two), fig, ax = _exp1_and_exp2(s3_bucket, out, 1, 2)
    exp1.save_run(one, "sample", fig)
    run = tmp_path / "out" / "sample"
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    capsys.readouterr()

    def denied(*args, **kwargs):
        raise FastTextError("access denied")
    monkeypatch.setattr(bundle, "publish_bundle", denied)
    with pytest.raises(FastTextError, match="access denied"):
        exp2.save_run(two, "sample", fig)
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before  # (no copy left)
    monkeypatch.undo()
    ax.plot([2, 1])
    exp2.save_run(two, "sample", fig)
    err = capsys.readouterr().err
    assert f"kept history.exp1.csv and history.exp1.png in {out}/sample: history.csv and history.png of " \
        f"{exp1.model('sample')}, replaced by this save of {exp2.model('sample')} (the folder is run_name 'sample''s " \
        f"for every bucket and prefix)" in err.splitlines(), err
    assert (run / "history.exp1.csv").read_bytes() == before["history.csv"]
    assert (run / "history.exp1.png").read_bytes() == before["history.png"] != (run / "history.png").read_bytes()
    assert [len(pd.read_csv(run / name)) for name in ("history.csv", "history.exp1.csv")] == [2, 1]
    exp2.save_run(two, "sample", fig)  # its own bundle again: its history replaced, nothing kept
    assert "kept" not in capsys.readouterr().err
    assert sorted(p.name for p in run.iterdir()) == ["history.csv", "history.exp1.csv", "history.exp1.png",
                                                     "history.png", "history_written.json"]
    plt.close(fig)


def _stopped_once_the_bundle_is_saved(monkeypatch, ws, trained, fig):
    """``ws.save_run(trained, "sample", fig)`` ended by the Stop button once the new history is in place and the bundle
    saved (as the write's stop handling ends: save_run's on_written); the patches undone after."""
    from fasttext_lib import bundle, stops

    real_end, real_save, saved = stops.DefaultStopsHeld.end, bundle.save_bundle, []

    def stopped_as_it_ends(self):
        real_end(self)
        if saved:
            raise KeyboardInterrupt
    monkeypatch.setattr(stops.DefaultStopsHeld, "end", stopped_as_it_ends)
    monkeypatch.setattr(bundle, "save_bundle", lambda *args, **kwargs: saved.append(real_save(*args, **kwargs)))
    with pytest.raises(KeyboardInterrupt):
        ws.save_run(trained, "sample", fig)
    monkeypatch.undo()


def test_02_a_stop_once_the_history_is_replaced_keeps_the_copy_of_another_prefixs_history(tmp_path, s3_bucket,
                                                                                          monkeypatch):
    """A Stop that lands once the new history is in place and the bundle saved (as the write's last steps run: its
    kept older files removed, its locks let go) ended save_run, which removed every copy it had kept aside as if the
    history they copy were back in place: exp1's history, replaced by exp2's, was lost. A copy stays where its file
    was replaced; where the write put it back, it goes, as before."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = str(tmp_path / "out")
    exp1, exp2, (one, two), fig, ax = _exp1_and_exp2(s3_bucket, out, 1, 2)
    exp1.save_run(one, "sample", fig)
    run = tmp_path / "out" / "sample"
    before = (run / "history.csv").read_bytes()
    _stopped_once_the_bundle_is_saved(monkeypatch, exp2, two, fig)
    plt.close(fig)
    assert (run / "history.csv").read_bytes() != before  # (replaced: exp2's)
    assert (run / "history.exp1.csv").read_bytes() == before


def test_02_a_late_stop_says_where_the_other_prefixs_history_was_kept(tmp_path, s3_bucket, capsys, monkeypatch):
    """A Stop once exp2's history is in place and its bundle saved keeps exp1's history as history.exp1.* (above), but
    the "kept ..." line was printed only where the save ended well: the stop's line said nothing of the copy, and
    history.csv (exp2's now) looked like the only history. Said now before the stop goes on."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = str(tmp_path / "out")
    exp1, exp2, (trained,), fig, ax = _exp1_and_exp2(s3_bucket, out, 1)
    exp1.save_run(trained, "sample", fig)
    capsys.readouterr()
    _stopped_once_the_bundle_is_saved(monkeypatch, exp2, trained, fig)
    plt.close(fig)
    err = capsys.readouterr().err
    assert f"kept history.exp1.csv and history.exp1.png in {out}/sample: history.csv and history.png of " \
        f"{exp1.model('sample')}, replaced by this save of {exp2.model('sample')} (the folder is run_name 'sample''s " \
        f"for every bucket and prefix)" in err.splitlines(), err


def test_02_saved_again_to_a_bundle_whose_history_was_kept_aside_removes_its_own_copies_only(tmp_path, s3_bucket,
                                                                                               capsys):
    """exp1, then exp2 (exp1's history kept as history.exp1.*), then exp1 again: history.exp1.* held an older history
    of exp1's bundle than history.csv, and was only said to ("note: ... are an older save's files"), left for good: the
    copies were not recorded. The history's record names them now, each of its bundle: exp1's save removes exactly
    its own copies, as kept; one changed since stays, and so does a file of such a name of no record (made by hand),
    each said in one line; another bundle's copies (exp2's, kept by exp3's save) stay, still recorded."""
    import json

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fasttext_lib.workspace import Workspace

    out = str(tmp_path / "out")
    exp1, exp2, (trained,), fig, ax = _exp1_and_exp2(s3_bucket, out, 1)
    exp3 = Workspace(s3_bucket[len("s3://"):], "exp3", out)
    run = tmp_path / "out" / "sample"
    for ws in (exp1, exp2, exp3):  # exp2 keeps exp1's history aside, exp3 exp2's
        ws.save_run(trained, "sample", fig)
    record = json.loads((run / "history_written.json").read_bytes())["files"]
    assert {name: entry["of"] for name, entry in record.items()} == {
        "history.csv": exp3.model("sample"), "history.png": exp3.model("sample"),
        "history.exp1.csv": exp1.model("sample"), "history.exp1.png": exp1.model("sample"),
        "history.exp2.csv": exp2.model("sample"), "history.exp2.png": exp2.model("sample")}
    (run / "history.exp1.png").write_bytes(b"edited")  # changed since it was kept: the user's now
    (run / "history.exp1-2.csv").write_bytes(b"mine")  # a file of the user's, of a copy's name
    theirs = {name: (run / name).read_bytes() for name in ("history.exp2.csv", "history.exp2.png")}
    capsys.readouterr()
    exp1.save_run(trained, "sample", fig)
    plt.close(fig)
    err = capsys.readouterr().err.splitlines()
    shown, of = f"{out}/sample", exp1.model("sample")
    assert f"removed history.exp1.csv from {shown}: notebook 02's history's files of {of} kept aside when another " \
        f"bucket's or prefix's save replaced them, older than this save's" in err, err
    assert f"kept history.exp1.png in {shown}: notebook 02's history's files of {of} kept aside, changed since" in err
    assert f"note: kept history.exp1-2.csv in {shown}: named as notebook 02's history's files of {of} kept aside, but " \
        f"not recorded as kept (yours?): not removed" in err, err
    assert not (run / "history.exp1.csv").exists() and (run / "history.exp1.png").read_bytes() == b"edited"
    assert (run / "history.exp1-2.csv").read_bytes() == b"mine"
    assert {name: (run / name).read_bytes() for name in theirs} == theirs
    record = json.loads((run / "history_written.json").read_bytes())["files"]
    assert sorted(record) == ["history.csv", "history.exp2.csv", "history.exp2.png", "history.exp3.csv",
                              "history.exp3.png", "history.png"]


def test_02_a_copy_kept_of_a_prefix_with_a_backslash_is_removed_by_its_bundles_next_save(tmp_path, s3_bucket, capsys):
    """A prefix holding a backslash (``a\\b``, S3 takes it) named the copies of its bundle's history kept aside
    ``history.a\\b.csv``, which the record named but no save removed: a copy's name is one in the folder itself, and
    one with a backslash (Windows' separator) is not (written_record.is_kept_name), so the record's entry was dropped
    as it was read. The backslash is named as a slash is now (``history.a-b~HASH.csv``, the hash the bundle's), and
    the bundle's next save removes its copies, as any other prefix's."""
    import json

    import matplotlib.pyplot as plt

    from fasttext_lib.workspace import Workspace, _whose

    out = str(tmp_path / "out")
    _, other, (trained,), fig, _ = _exp1_and_exp2(s3_bucket, out, 1)
    slashed = Workspace(s3_bucket[len("s3://"):], "a\\b", out)
    run = tmp_path / "out" / "sample"
    for ws in (slashed, other):  # the other prefix's save keeps a\b's history aside
        ws.save_run(trained, "sample", fig)
    whose = _whose(slashed.model("sample"), "sample", s3_bucket[len("s3://"):])
    assert re.fullmatch(r"a-b~[0-9a-f]{6}", whose), whose
    assert sorted(p.name for p in run.glob("history.*")) == [
        f"history.{whose}.csv", f"history.{whose}.png", "history.csv", "history.png"]
    capsys.readouterr()
    slashed.save_run(trained, "sample", fig)
    plt.close(fig)
    err = capsys.readouterr().err.splitlines()
    assert f"removed history.{whose}.csv and history.{whose}.png from {out}/sample: notebook 02's history's files of " \
        f"{slashed.model('sample')} kept aside when another bucket's or prefix's save replaced them, older than this " \
        f"save's" in err, err
    assert sorted(p.name for p in run.glob("history.*")) == [  # (exp2's, kept by this save: still there)
        "history.csv", "history.exp2.csv", "history.exp2.png", "history.png"]
    assert sorted(json.loads((run / "history_written.json").read_bytes())["files"]) == [
        "history.csv", "history.exp2.csv", "history.exp2.png", "history.png"]


def test_02_a_copys_name_of_no_record_is_noted_once_whichever_bucket_named_it(tmp_path, s3_bucket, capsys):
    """exp1's save noted a file of a copy's name of no record ("not recorded as kept (yours?)") at every save of exp1's
    bundle, the same line each time; and looked only for names a save in exp1's own bucket gives its copies
    (history.exp1.csv), not another bucket's (history.BUCKET-exp1~HASH.csv, kept_name as _keep_aside names them
    there). Each is said once now (the record notes it); a name that is no copy of exp1's (history.exp1-1.csv: its
    copies are exp1, exp1-2, ...) is not said at all."""
    import json

    import matplotlib.pyplot as plt

    from fasttext_lib.workspace import _whose
    from fasttext_lib.written_record import kept_name

    out = str(tmp_path / "out")
    exp1, exp2, (trained,), fig, ax = _exp1_and_exp2(s3_bucket, out, 1)
    run, bucket = tmp_path / "out" / "sample", s3_bucket[len("s3://"):]
    other_bucket = kept_name("history.csv", _whose(exp1.model("sample"), "sample", "another-bucket"))
    # (as a save in another bucket names exp1's copy)
    assert re.fullmatch(rf"history\.{re.escape(bucket)}-exp1~[0-9a-f]{{6}}\.csv", other_bucket), other_bucket
    for ws in (exp1, exp2):
        ws.save_run(trained, "sample", fig)
    for name in ("history.exp1-2.csv", other_bucket, "history.exp1-1.csv"):
        (run / name).write_bytes(b"mine")
    capsys.readouterr()
    exp1.save_run(trained, "sample", fig)
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note: ")]
    assert notes == [f"note: kept history.exp1-2.csv and {other_bucket} in {out}/sample: named as notebook 02's "
                     f"history's files of {exp1.model('sample')} kept aside, but not recorded as kept (yours?): not "
                     f"removed"], notes
    exp1.save_run(trained, "sample", fig)  # (said already)
    assert not [line for line in capsys.readouterr().err.splitlines() if line.startswith("note: ")]
    assert all((run / name).read_bytes() == b"mine" for name in ("history.exp1-2.csv", other_bucket))
    assert json.loads((run / "history_written.json").read_bytes())["said"] == sorted(
        [other_bucket, "history.exp1-2.csv"])
    (run / "history.exp1-2.csv").unlink()  # gone, then made again: said again
    exp1.save_run(trained, "sample", fig)
    (run / "history.exp1-2.csv").write_bytes(b"mine again")
    capsys.readouterr()
    exp1.save_run(trained, "sample", fig)
    plt.close(fig)
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1 and notes[0].startswith("note: kept history.exp1-2.csv in "), notes


def test_02_the_notes_of_two_bundles_copies_names_of_no_record_are_each_said_once_as_they_save_in_turn(
        tmp_path, s3_bucket, capsys):
    """The record's list of the names said ("not recorded as kept (yours?)") was replaced by each save's own: exp2's
    save forgot that exp1's had said history.exp1-2.csv, and exp1's forgot exp2's, so saves of the two bundles in turn
    said both notes again every time. Each is said once now; only a name gone since is forgotten."""
    import matplotlib.pyplot as plt

    out = str(tmp_path / "out")
    exp1, exp2, (trained,), fig, _ = _exp1_and_exp2(s3_bucket, out, 1)
    run = tmp_path / "out" / "sample"
    for ws in (exp1, exp2):
        ws.save_run(trained, "sample", fig)
    for name in ("history.exp1-2.csv", "history.exp2-2.csv"):
        (run / name).write_bytes(b"mine")
    said = []
    for ws in (exp1, exp2, exp1, exp2):
        capsys.readouterr()
        ws.save_run(trained, "sample", fig)
        said.append([line.split(" in ")[0] for line in capsys.readouterr().err.splitlines() if line.startswith("note: ")])
    plt.close(fig)
    assert said == [["note: kept history.exp1-2.csv"], ["note: kept history.exp2-2.csv"], [], []], said
    assert all((run / name).read_bytes() == b"mine" for name in ("history.exp1-2.csv", "history.exp2-2.csv"))


def test_a_name_said_in_a_hand_edited_record_that_no_file_can_have_is_forgotten(tmp_path):
    """The record's names said before are kept where a file of the name is there still: a name longer than a file's
    can be (a record edited by hand) made that check raise ENAMETOOLONG, at every save of the run (the search's copies,
    removed after it, were never removed). It is forgotten, as a name gone is."""
    import json

    from fasttext_lib.workspace import HISTORY_RECORD

    HISTORY_RECORD._write(tmp_path, {}, said={"history.x.csv"})
    (tmp_path / "history.x.csv").write_bytes(b"mine")
    record = json.loads((tmp_path / HISTORY_RECORD.name).read_text())
    (tmp_path / HISTORY_RECORD.name).write_text(json.dumps({**record, "said": [*record["said"], "y" * 300]}))
    HISTORY_RECORD.note_said(tmp_path, ["history.z.csv"])
    assert HISTORY_RECORD.said(tmp_path) == {"history.x.csv", "history.z.csv"}


def test_a_copy_named_in_a_hand_edited_record_that_no_file_can_have_is_gone(tmp_path):
    """A copy's name in a record edited by hand longer than a file's name can be: remove_copies raised ENAMETOOLONG
    for it at every save of its bundle ("warning: the copies kept aside ... were left"), the copies after it never
    removed. No file has that name: it is gone, out of the record, as a copy removed meanwhile is."""
    from fasttext_lib.written_record import _digest_of
    from fasttext_lib.workspace import HISTORY_RECORD

    of, too_long = "s3://b/exp1/models/sample", f"history.{'x' * 300}.csv"
    (tmp_path / "history.exp1.csv").write_bytes(b"kept")
    HISTORY_RECORD._write(tmp_path, {too_long: {**_digest_of(b"kept"), "of": of},
                                     "history.exp1.csv": {**_digest_of(b"kept"), "of": of}})
    assert HISTORY_RECORD.remove_copies(tmp_path, of) == (["history.exp1.csv"], [])
    assert not (tmp_path / "history.exp1.csv").exists() and not (tmp_path / HISTORY_RECORD.name).exists()


@pytest.mark.parametrize("owner, other", [("runs/a-2", "runs/a"), ("runs/a", "runs-a")],
                         ids=["prefix ending in -NUMBER", "prefix of two folders"])
def test_02_a_copy_of_one_prefix_is_never_taken_for_another_prefixs_named_alike(tmp_path, s3_bucket, capsys, owner,
                                                                               other):
    """The n-th copy of a bundle's history was named history.WHOSE-n.csv, and WHOSE was made of the prefix, its folders
    joined by -: the 2nd copy of runs/a's (history.runs-a-2.csv) was the 1st of runs/a-2's, and runs/a's 1st
    (history.runs-a.csv) the 1st of runs-a's. The ``other`` prefix's save then claimed a copy of ``owner``'s history
    (changed since it was kept: no longer recorded) as its own, "named as ... files of OTHER's bundle ... (yours?)",
    and since that line is said once only (the record notes it), the owner's own save never said it. A prefix ending
    in -NUMBER is kept under a name no other's copy has now (history.runs-a-2_.csv), one of two folders with a hash of
    its bundle after it (history.runs-a~3f0c1e.csv): the other's save leaves the copy unsaid and the owner's names it,
    as its own. Nothing is removed."""
    import matplotlib.pyplot as plt

    from fasttext_lib.workspace import Workspace, _whose
    from fasttext_lib.written_record import kept_name

    out = str(tmp_path / "out")
    _, _, (trained,), fig, _ = _exp1_and_exp2(s3_bucket, out, 1)
    bucket, run = s3_bucket[len("s3://"):], tmp_path / "out" / "sample"
    owners, others = Workspace(bucket, owner, out), Workspace(bucket, other, out)
    copy = kept_name("history.csv", _whose(owners.model("sample"), "sample", bucket))
    for ws in (owners, others):  # the other's save keeps the owner's history aside
        ws.save_run(trained, "sample", fig)
    (run / copy).write_bytes(b"the owner's history, annotated")  # changed since it was kept: the user's now
    owners.save_run(trained, "sample", fig)  # (says it kept the changed copy; it is out of the record since)
    capsys.readouterr()
    others.save_run(trained, "sample", fig)
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note: ")]
    assert notes == [], notes  # (not the other's: its save has nothing to say of it)
    assert (run / copy).read_bytes() == b"the owner's history, annotated"
    owners.save_run(trained, "sample", fig)
    plt.close(fig)
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note: ")]
    assert notes == [f"note: kept {copy} in {out}/sample: named as notebook 02's history's files of "
                     f"{owners.model('sample')} kept aside, but not recorded as kept (yours?): not removed"], notes
    assert (run / copy).read_bytes() == b"the owner's history, annotated"


def test_02_two_buckets_prefixes_of_one_name_never_name_their_copies_alike(tmp_path, s3_bucket, capsys):
    """Each save named the copies it kept as in its own bucket: bucket A's prefix exp1 and bucket B's, saving to one
    output_dir, both kept theirs as history.exp1.csv (B's history.exp1-2.csv where A's was there), and B's exp1 save
    claimed A's copy, changed since it was kept (no longer recorded), as its own in its note ("named as ... files of
    s3://B/exp1/..."). The folder's record holds the bucket its names are of (the first to save there, A): A's
    copies are named as before, B's with its bucket and a hash of its bundle (history.B-exp1~3f0c1e.csv)."""
    import json
    import uuid

    import boto3
    import matplotlib.pyplot as plt

    from fasttext_lib.workspace import Workspace, _whose
    from fasttext_lib.written_record import kept_name

    out = str(tmp_path / "out")
    a_exp1, a_exp2, (trained,), fig, _ = _exp1_and_exp2(s3_bucket, out, 1)
    a, b = s3_bucket[len("s3://"):], "test-" + uuid.uuid4().hex[:12]
    boto3.client("s3").create_bucket(Bucket=b)
    b_exp1, b_exp2 = Workspace(b, "exp1", out), Workspace(b, "exp2", out)
    run = tmp_path / "out" / "sample"
    for ws in (a_exp1, a_exp2, b_exp1, b_exp2):  # each save keeps the history of the one before it aside
        ws.save_run(trained, "sample", fig)
    b_copy = kept_name("history.csv", _whose(b_exp1.model("sample"), "sample", a))
    assert re.fullmatch(rf"history\.{re.escape(b)}-exp1~[0-9a-f]{{6}}\.csv", b_copy), b_copy
    record = json.loads((run / "history_written.json").read_bytes())
    assert {name: entry["of"] for name, entry in record["files"].items() if name.endswith(".csv")} == {
        "history.csv": b_exp2.model("sample"), "history.exp1.csv": a_exp1.model("sample"),
        "history.exp2.csv": a_exp2.model("sample"), b_copy: b_exp1.model("sample")}
    (run / "history.exp1.csv").write_bytes(b"A's exp1 history, annotated")  # changed since it was kept: the user's
    a_exp1.save_run(trained, "sample", fig)  # (says it kept the changed copy; it is out of the record since)
    capsys.readouterr()
    b_exp1.save_run(trained, "sample", fig)
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note: ")]
    assert notes == [], notes  # (not B's exp1's: its save has nothing to say of it)
    a_exp1.save_run(trained, "sample", fig)
    plt.close(fig)
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note: ")]
    assert notes == [f"note: kept history.exp1.csv in {out}/sample: named as notebook 02's history's files of "
                     f"{a_exp1.model('sample')} kept aside, but not recorded as kept (yours?): not removed"], notes
    assert (run / "history.exp1.csv").read_bytes() == b"A's exp1 history, annotated"
    assert json.loads((run / "history_written.json").read_bytes())["bucket"] == a


def test_02_a_folder_an_earlier_version_saved_to_names_no_bucket_plain(tmp_path, s3_bucket, capsys):
    """history_written.json of an earlier version holds no "bucket": its saves named each copy as in their own bucket,
    so a plain history.exp1.csv there may be any bucket's exp1's. The next save's bucket was taken for the folder's
    naming bucket: bucket B, saving first, claimed A's exp1 copy (changed since it was kept: no longer recorded) as
    its own exp1's in its note, and named its own exp1's copy plain beside it (history.exp1-2.csv). The bucket is
    unknown there now: every bundle's copies are named with their bucket, and no plain name is claimed."""
    import json
    import uuid

    import boto3
    import matplotlib.pyplot as plt

    from fasttext_lib.workspace import Workspace
    from fasttext_lib.written_record import kept_name

    out = str(tmp_path / "out")
    a_exp1, a_exp2, (trained,), fig, _ = _exp1_and_exp2(s3_bucket, out, 1)
    b = "test-" + uuid.uuid4().hex[:12]
    boto3.client("s3").create_bucket(Bucket=b)
    b_exp1, b_exp2 = Workspace(b, "exp1", out), Workspace(b, "exp2", out)
    run, record_path = tmp_path / "out" / "sample", tmp_path / "out" / "sample" / "history_written.json"
    a_exp1.save_run(trained, "sample", fig)
    a_exp2.save_run(trained, "sample", fig)  # (keeps A's exp1 history as history.exp1.csv)
    (run / "history.exp1.csv").write_bytes(b"A's exp1 history, annotated")  # changed since it was kept: the user's
    a_exp1.save_run(trained, "sample", fig)  # (says it kept the changed copy; out of the record since)
    record = json.loads(record_path.read_bytes())
    del record["bucket"]  # (as an earlier version wrote it)
    record_path.write_text(json.dumps(record))
    capsys.readouterr()
    b_exp1.save_run(trained, "sample", fig)
    b_exp2.save_run(trained, "sample", fig)
    plt.close(fig)
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note: ")]
    assert notes == [], notes  # (not B's exp1's: nothing tells whose it is)
    b_copies = [name for name, entry in json.loads(record_path.read_bytes())["files"].items()
                if entry["of"] == b_exp1.model("sample") and name.endswith(".csv")]
    assert len(b_copies) == 1, b_copies
    assert re.fullmatch(rf"history\.{re.escape(b)}-exp1~[0-9a-f]{{6}}\.csv", b_copies[0]), b_copies
    assert kept_name("history.csv", "exp1", 2) not in os.listdir(run)
    assert (run / "history.exp1.csv").read_bytes() == b"A's exp1 history, annotated"
    assert "bucket" not in json.loads(record_path.read_bytes())  # (still unknown: the next save names none plain)


def test_a_line_of_files_kept_for_another_bundle_names_only_the_records_own_files(tmp_path, capsys):
    """remove_unchanged's "kept X in ...: ..., of OTHER, not of THIS" listed the copies the record names (kept aside,
    each of its own bundle) with the record's files of OTHER, and said a line for the bundle of another copy too: it
    speaks of the record's files (autotune.png), which are what it would remove; the copies stay, unsaid, recorded."""
    from fasttext_lib.workspace import AUTOTUNE_RECORD
    from fasttext_lib.written_record import _digest_of

    x, y, z = (f"s3://b/{prefix}/models/sample" for prefix in ("exp1", "exp2", "exp3"))
    files = {"autotune.png": x, "autotune.exp1.png": x, "autotune_trials.exp2.csv": y}
    for name in files:
        (tmp_path / name).write_bytes(b"kept")
    AUTOTUNE_RECORD._write(tmp_path, {name: {**_digest_of(b"kept"), "of": of} for name, of in files.items()})
    assert AUTOTUNE_RECORD.remove_unchanged(tmp_path, "out/sample", lambda removed: None, of=z) == []
    assert capsys.readouterr().err.splitlines() == [
        f"kept autotune.png in out/sample: notebook 02's autotune search's, of {x}, not of {z}"]
    assert set(AUTOTUNE_RECORD.read(tmp_path)) == set(files) and all((tmp_path / name).exists() for name in files)


def test_no_two_bundles_named_alike_by_their_folders_and_buckets_are_named_alike_in_their_copies():
    """_whose joined a bundle's bucket (where another than the saving one) and its prefix's folders by -, which a
    prefix holds too: runs/a and runs-a were both runs-a; bucket b's prefix x-y and bucket b-x's prefix y both b-x-y;
    bucket b without a prefix and its prefix b both b; a\\b and a/b both a-b. Each is of one bundle now (a hash of the
    bundle after those of several parts), and the name of a prefix of one folder in the saving bucket is as before."""
    from fasttext_lib.workspace import _whose
    from fasttext_lib.written_record import is_kept_name, kept_name

    def whose(bundle, bucket):
        return _whose(f"s3://{bundle}/models/sample", "sample", bucket)

    hashed = whose("b/runs/a", "b")
    pairs = [("b/runs/a", "b/runs-a", "b"), ("b/x-y", "b-x/y", "c"), ("b/x-y", "b-x/y", None), ("b", "b/b", "b"),
             ("b", "c/b", "c"), ("b/a\\b", "b/a/b", "b"), ("b/runs/a", f"b/{hashed}", "b"), ("b/x/y", "b/x-y", None)]
    for one, other, bucket in pairs:
        whoses = [whose(one, bucket), whose(other, bucket)]
        names = {w: [kept_name("history.csv", w, n) for n in (1, 2, 3)] for w in whoses}
        assert len({name for listed in names.values() for name in listed}) == 6, names
        for w in whoses:
            assert [n for listed in names.values() for n in listed if is_kept_name(n, "history.csv", w)] == names[w]
    assert [whose("b/exp1", "b"), whose("b/my-exp", "b"), whose("b/exp-2", "b")] == ["exp1", "my-exp", "exp-2"]
    assert re.fullmatch(r"runs-a~[0-9a-f]{6}", hashed) and whose(f"b/{hashed}", "b") == f"{hashed}_"


def test_one_definition_of_a_copys_name():
    """kept_name's names, as the records (WrittenRecord.is_copy) and 02's search for one bundle's copies
    (workspace._copies_named) know them: the copies of exp1's are exp1, exp1-2, exp1-3...; the search took
    history.exp1-1.csv and history.exp1-01.csv for exp1's too."""
    from fasttext_lib.workspace import HISTORY_RECORD
    from fasttext_lib.written_record import is_kept_name, kept_name

    names = [kept_name("history.csv", "exp1", n) for n in (1, 2, 10)]
    assert names == ["history.exp1.csv", "history.exp1-2.csv", "history.exp1-10.csv"]
    assert all(is_kept_name(name, "history.csv", "exp1") and HISTORY_RECORD.is_copy(name) for name in names)
    for other in ("history.exp1-1.csv", "history.exp1-01.csv", "history.exp2.csv", "history.exp1.png"):
        assert not is_kept_name(other, "history.csv", "exp1"), other
    for no_copy in ("history.csv", "history..csv", "history.a/b.csv", "history.a\\b.csv", "autotune.exp1.png"):
        assert not HISTORY_RECORD.is_copy(no_copy), no_copy


def test_no_two_bundles_copies_are_named_alike():
    """The n-th copy of one bundle's file and a copy of another's never share a name (history.runs-a-2.csv was runs/a's
    2nd and runs/a-2's 1st), and each name is taken for one bundle's only: names made of prefixes ending in a number,
    of those with an underscore after, and of a shortened prefix's hash (workspace._fitting) that is all digits."""
    from fasttext_lib.written_record import is_kept_name, kept_name

    whoses = ["runs-a", "runs-a-2", "runs-a-2_", "runs-a-2__", "runs-a-2-2", "runs-a-10", "runs-a_", "a-123456789012",
              "2", "-2", "exp1"]
    names = {(whose, n): kept_name("history.csv", whose, n) for whose in whoses for n in range(1, 13)}
    assert len(set(names.values())) == len(names), names
    for (whose, n), name in names.items():
        assert [other for other in whoses if is_kept_name(name, "history.csv", other)] == [whose], name
    assert kept_name("history.csv", "runs-a-2") == "history.runs-a-2_.csv"
    assert kept_name("history.csv", "runs-a-2", 2) == "history.runs-a-2_-2.csv"


def test_copies_named_as_before_are_still_known_where_they_were_of_one_bundle_only(tmp_path):
    """A folder holding copies named before (history.exp1.csv, history.exp1-2.csv, history.b-exp1-3.png: their
    bundles' prefixes end in no number) is searched as before: each is its bundle's, named as it was."""
    from fasttext_lib.workspace import HISTORY_RECORD, _copies_named
    from fasttext_lib.written_record import kept_name

    old = ["history.b-exp1-3.png", "history.exp1-2.csv", "history.exp1.csv"]
    for name in old:
        (tmp_path / name).write_bytes(b"x")
    assert [kept_name("history.csv", "exp1", n) for n in (1, 2)] == old[:0:-1]
    assert _copies_named(tmp_path, HISTORY_RECORD.outputs, {"exp1", "b-exp1"}) == old
    assert _copies_named(tmp_path, HISTORY_RECORD.outputs, {"exp1-2"}) == []  # (exp1's 2nd, not exp1-2's)
    assert all(HISTORY_RECORD.is_copy(name) for name in old)

def test_copies_named_finds_only_the_copies_of_whose(tmp_path):
    """02's search for one bundle's copies of no record: those of the names given (the bundle's, as a save in its own
    bucket and in another names it), not a name that is no copy of theirs."""
    from fasttext_lib.workspace import HISTORY_RECORD, _copies_named

    for name in ("history.exp1.csv", "history.exp1-2.png", "history.exp1-1.csv", "history.exp1-01.csv",
                 "history.exp12.csv", "history.b-exp1.csv"):
        (tmp_path / name).write_bytes(b"x")
    assert _copies_named(tmp_path, HISTORY_RECORD.outputs, {"exp1"}) == ["history.exp1-2.png", "history.exp1.csv"]
    assert _copies_named(tmp_path, HISTORY_RECORD.outputs, {"exp1", "b-exp1"}) == [
        "history.b-exp1.csv", "history.exp1-2.png", "history.exp1.csv"]


def test_02_a_search_saved_again_removes_its_own_autotune_copies_kept_aside(tmp_path, s3_bucket, capsys,
                                                                              monkeypatch):
    """exp1's search, then exp2's (exp1's autotune.png and autotune_trials.csv kept aside as autotune.exp1.*), then
    exp1 again without autotune: its bundle replaced, the copies of its search's files stayed for good. Recorded in
    autotune_written.json now, they go (and exp2's own search's files stay: not of the bundle replaced)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from conftest import make_splits
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.workspace import AUTOTUNE_RECORD

    _autotune_of_one_trial(monkeypatch)
    out = str(tmp_path / "out")
    exp1, exp2, (trained,), fig, ax = _exp1_and_exp2(s3_bucket, out, 1)
    _save_a_search(exp1, "sample", fig, monkeypatch)
    train_data, test_data = make_splits(200, 50, seed=0)
    tuned = exp2.autotune(train_data, test_data, TrainConfig(progress=False), "sample", duration=600)
    exp2.save_run(tuned.trained, "sample", fig)
    run = tmp_path / "out" / "sample"
    copies = ["autotune.exp1.png", "autotune_trials.exp1.csv"]
    assert set(copies) <= set(AUTOTUNE_RECORD.read(run)) and all((run / name).is_file() for name in copies)
    searched = {name: (run / name).read_bytes() for name in ("autotune.png", "autotune_trials.csv")}
    capsys.readouterr()
    exp1.drop_autotune("sample")
    exp1.save_run(trained, "sample", fig)
    plt.close(fig)
    err = capsys.readouterr().err.splitlines()
    assert f"removed {' and '.join(copies)} from {out}/sample: notebook 02's autotune search's files of " \
        f"{exp1.model('sample')} kept aside when another bucket's or prefix's save replaced them, older than this " \
        f"save's" in err, err
    assert not any((run / name).exists() for name in copies)
    assert {name: (run / name).read_bytes() for name in searched} == searched
    assert set(AUTOTUNE_RECORD.read(run)) == set(searched)


@pytest.mark.parametrize("of", ["exp1/models/sample", "gs://b/exp1/models/sample"], ids=["path", "other-scheme"])
def test_02_a_hand_edited_history_record_naming_no_s3_bundle_does_not_fail_the_save(tmp_path, s3_bucket, capsys, of):
    """A history_written.json whose "of" is not an s3:// URI (edited by hand) made split_s3 raise in _keep_aside: every
    save of the run_name failed, "not a valid S3 URI", after the training. The history is kept aside under a name of
    no bundle (history.other~HASH.csv, the hash of what the record names: not prefix other's), said in one line, and
    the save goes on."""
    import json

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fasttext_lib.workspace import _whose

    other = _whose(of, "sample", s3_bucket[len("s3://"):])
    assert re.fullmatch(r"other~[0-9a-f]{6}", other), other
    out = str(tmp_path / "out")
    exp1, exp2, (trained,), fig, ax = _exp1_and_exp2(s3_bucket, out, 1)
    exp1.save_run(trained, "sample", fig)
    run = tmp_path / "out" / "sample"
    record_path = run / "history_written.json"
    text = record_path.read_text()
    assert exp1.model("sample") in text
    record_path.write_text(text.replace(json.dumps(exp1.model("sample")), json.dumps(of)))
    before = (run / "history.csv").read_bytes()
    capsys.readouterr()
    exp2.save_run(trained, "sample", fig)
    plt.close(fig)
    assert (run / f"history.{other}.csv").read_bytes() == before
    assert f"kept history.{other}.csv and history.{other}.png in {out}/sample: history.csv and history.png of {of}, " \
        f"replaced by this save of {exp2.model('sample')} (the folder is run_name 'sample''s for every bucket and " \
        f"prefix)" in capsys.readouterr().err.splitlines()


def _a_named_copy(record, exp1, exp2, run, name, data):
    """``record`` naming the copy ``name`` (bytes: a file's name no UTF-8 decodes) of exp2's bundle, a file of the
    user's holding ``data`` that is not what the record says was kept: it stays, said in one line."""
    (run / os.fsdecode(name)).write_bytes(data)
    entry = {"size": len(data), "sha256": hashlib.sha256(b"other").hexdigest(), "of": exp2}
    return {**record, "files": {**record["files"], os.fsdecode(name): entry}}


def _of(bundle):
    """An edit of a history record: its history.csv and .png of ``bundle(exp1, exp2)``, not of exp1's bundle."""
    def edit(record, exp1, exp2, run):
        return {**record, "files": {name: {**entry, "of": bundle(exp1, exp2)} for name, entry in
                                    record["files"].items()}}
    return edit


@pytest.mark.parametrize("edit", [
    _of(lambda exp1, exp2: exp1.replace("/exp1/", "/\ud800/")),  # JSON's "\ud800": a lone surrogate
    _of(lambda exp1, exp2: exp1.replace("/exp1/", "/exp\x001/")),  # a NUL, which no file's name holds
    _of(lambda exp1, exp2: "s3://a\\b/exp1/models/sample"),  # no bucket's name: a copy's name with a backslash
    _of(lambda exp1, exp2: 12),
    _of(lambda exp1, exp2: ["s3://b/exp1/models/sample"]),
    lambda record, exp1, exp2, run: {**record, "files": {**record["files"], f"history.{'x' * 300}.csv": {
        "size": 1, "sha256": "0" * 64, "of": exp2}}},
    lambda record, exp1, exp2, run: _a_named_copy(record, exp1, exp2, run, b"history.\xff.csv", b"mine"),
    lambda record, exp1, exp2, run: {**record, "files": 3},
    lambda record, exp1, exp2, run: {**record, "files": {"history.csv": [1, 2], "history.png": {"a": {"b": []}}}},
    lambda record, exp1, exp2, run: {**record, "files": {**record["files"], "history.exp2.csv": "x"}},
    lambda record, exp1, exp2, run: {**record, "said": 7},
    lambda record, exp1, exp2, run: {**record, "said": [None, 1, ["history.exp2.csv"], {"a": 1}, "\ud800",
                                                        f"{'y' * 300}", "history.\x00.csv"]},
    lambda record, exp1, exp2, run: {**record, "said": [f"history.{n}.csv" for n in range(100_000)]},
], ids=["of-lone-surrogate", "of-nul", "of-no-bucket", "of-a-number", "of-a-list", "copy-name-too-long",
        "copy-name-not-utf-8", "files-a-number", "entries-not-digests", "entry-a-string", "said-a-number",
        "said-not-names", "said-huge"])
def test_02_a_hand_edited_history_records_content_never_fails_the_save_nor_loses_a_file(tmp_path, s3_bucket, capsys,
                                                                                      edit):
    """A history_written.json edited by hand (its writer's mark kept), its fields of other types or values than it
    writes: a lone surrogate in "of" (JSON's "\\ud800") raised UnicodeEncodeError out of the save, and printed, it
    raised where stderr is strict UTF-8 (capsys is; a Jupyter kernel's too); a NUL in it named the copy kept aside
    with a NUL (ValueError); a bucket no bucket's name is made the copy a name no record can name (never removed); a
    copy's name longer than a file's can be, "warning: ... were left" at every save. Each is read as a record of no
    bundle, or as naming nothing: the save goes on, says nothing raw, removes no file of the user's and keeps the
    history it replaces where the record said it is another bundle's, under a name its record names."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fasttext_lib.workspace import HISTORY_RECORD

    out = str(tmp_path / "out")
    exp1, exp2, (trained,), fig, ax = _exp1_and_exp2(s3_bucket, out, 1)
    exp1.save_run(trained, "sample", fig)
    run = tmp_path / "out" / "sample"
    record = edit(json.loads((run / HISTORY_RECORD.name).read_text()), exp1.model("sample"), exp2.model("sample"),
                  run)
    (run / HISTORY_RECORD.name).write_text(json.dumps(record))
    mine = {p.name: p.read_bytes() for p in run.iterdir() if p.name not in ("history.csv", HISTORY_RECORD.name)}
    before = (run / "history.csv").read_bytes()
    capsys.readouterr()
    for _ in range(2):  # (said once: not at each save)
        exp2.save_run(trained, "sample", fig)
        assert "were left" not in capsys.readouterr().err
    plt.close(fig)
    kept = {p.name for p in run.iterdir() if p.name not in mine and p.read_bytes() == before} - {"history.csv"}
    assert set(HISTORY_RECORD.read(run)) >= kept, kept  # (its bundle's next save removes it)
    assert all((run / name).read_bytes() == data for name, data in mine.items() if name != "history.png")
    entry = record["files"].get("history.csv") if isinstance(record["files"], dict) else None
    if isinstance(entry, dict) and isinstance(entry.get("of"), str):
        assert len(kept) == 1, kept  # (the record says it is another bundle's history)
    assert json.loads((run / HISTORY_RECORD.name).read_text())["written_by"] == HISTORY_RECORD._mark


def test_record_content_is_printed_where_stderr_is_strict_utf_8(tmp_path):
    """The lines that name what a record holds (a bundle kept aside, a search's files of another bundle, a copy's
    name) printed it as it was: a lone surrogate in a record edited by hand (JSON's "\\ud800") raised
    UnicodeEncodeError where stderr is strict UTF-8 (a Jupyter kernel's sends it as UTF-8). Printed escaped now."""
    script = f"""
import os, sys
sys.stderr.reconfigure(errors="strict")  # (PYTHONIOENCODING's :strict leaves stderr backslash-escaping)
from fasttext_lib.written_record import _digest_of
from fasttext_lib.workspace import AUTOTUNE_RECORD, HISTORY_RECORD, Workspace
ws = Workspace("bkt", "p", {str(tmp_path / "out")!r})
run = ws.out / "run"
run.mkdir()
other = "s3://bkt/\\ud800/models/run"
(run / "autotune.png").write_bytes(b"png")
AUTOTUNE_RECORD._write(run, {{"autotune.png": {{**_digest_of(b"png"), "of": other}}}})
ws.remove_autotune("run")
(run / os.fsdecode(b"history.\\xff.csv")).write_bytes(b"mine")
HISTORY_RECORD._write(run, {{os.fsdecode(b"history.\\xff.csv"): {{**_digest_of(b"kept"), "of": ws.model("run")}}}})
ws._remove_older_copies("run")
ws._say_kept([(run / "history.other~abcdef.csv", "history.csv", other)], "run", ws.model("run"))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, errors="replace",
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert done.returncode == 0, done.stderr
    shown = f"{tmp_path / 'out'}/run"
    assert done.stderr.splitlines() == [
        f"kept autotune.png in {shown}: notebook 02's autotune search's, of s3://bkt/\\ud800/models/run, not of "
        f"s3://bkt/p/models/run",
        f"kept history.\\udcff.csv in {shown}: notebook 02's history's files of s3://bkt/p/models/run kept aside, "
        f"changed since",
        f"kept history.other~abcdef.csv in {shown}: history.csv of s3://bkt/\\ud800/models/run, replaced by this save "
        f"of s3://bkt/p/models/run (the folder is run_name 'run''s for every bucket and prefix)"], done.stderr


@pytest.mark.parametrize("part", ["p" * 60, "é" * 60], ids=["ascii", "two-byte"])
def test_02_keeps_the_history_of_a_bundle_under_a_long_prefix_under_a_name_a_file_can_have(tmp_path, s3_bucket,
                                                                                          capsys, part):
    """The history of another prefix's bundle is kept under a name made of that prefix (history.exp1.csv), and an S3
    prefix may be 1,024 bytes, where a file's name has at most 255: a prefix of five 60-letter folders (or 60 é's,
    two bytes each) made the copy's name too long, and 02's save failed, "nothing saved: cannot keep history.csv ...
    File name too long", after the training, however often it was run. The name is shortened now (its start and a
    hash of the whole: two such prefixes keep apart), said in the line as before."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from conftest import make_splits
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.train import train
    from fasttext_lib.workspace import Workspace

    bucket, out = s3_bucket[len("s3://"):], str(tmp_path / "out")
    long_prefix, other = "/".join([part] * 5), "/".join([part] * 4 + [part[:-1] + "q"])
    trained = train(*make_splits(200, 50, seed=0), TrainConfig(epochs=1, ngrams=1, progress=False))
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    run = tmp_path / "out" / "sample"
    Workspace(bucket, long_prefix, out).save_run(trained, "sample", fig)
    before = (run / "history.csv").read_bytes()
    Workspace(bucket, other, out).save_run(trained, "sample", fig)
    Workspace(bucket, "exp2", out).save_run(trained, "sample", fig)
    plt.close(fig)
    kept = sorted(p.name for p in run.iterdir() if p.name.startswith("history.") and p.name != "history.png"
                  and p.name != "history.csv")
    assert len(kept) == 4 and all(len(name.encode("utf-8")) <= 255 for name in kept), kept
    err = capsys.readouterr().err
    assert all(f" {name} " in err for name in kept) and all((run / name).read_bytes() == before for name in kept
                                                           if name.endswith(".csv")), err


def test_02_keeps_the_autotune_files_of_another_prefixs_bundle_in_the_run_folder_they_share(tmp_path, s3_bucket,
                                                                                               capsys, monkeypatch):
    """As the history (above): 02 run to prefix exp2 without autotune removed the search's files of exp1's bundle as
    "an earlier autotune run's, not this model's", and with autotune replaced them without a word. The search's record
    says which bundle they are of: a run without autotune keeps another bundle's, saying so; a search's save keeps
    them aside as autotune.exp1.png and autotune_trials.exp1.csv, saying so."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from conftest import make_splits
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.train import train
    from fasttext_lib.workspace import Workspace

    _autotune_of_one_trial(monkeypatch)
    bucket, out = s3_bucket[len("s3://"):], str(tmp_path / "out")
    exp1, exp2 = Workspace(bucket, "exp1", out), Workspace(bucket, "exp2", out)
    train_data, test_data = make_splits(200, 50, seed=0)
    trained = train(train_data, test_data, TrainConfig(epochs=1, ngrams=1, progress=False))
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    _save_a_search(exp1, "sample", fig, monkeypatch)  # exp1's autotuned run: its search's files, its model and history
    run = tmp_path / "out" / "sample"
    searched = {name: (run / name).read_bytes() for name in ("autotune.png", "autotune_trials.csv")}
    capsys.readouterr()
    exp2.drop_autotune("sample")  # 02 on exp2 without autotune: exp1's search's files are not of the bundle replaced
    exp2.save_run(trained, "sample", fig)
    err = capsys.readouterr().err
    assert {name: (run / name).read_bytes() for name in searched} == searched and "removed" not in err, err
    assert f"kept autotune.png, autotune_trials.csv in {out}/sample: notebook 02's autotune search's, of " \
        f"{exp1.model('sample')}, not of {exp2.model('sample')}" in err.splitlines(), err
    tuned = exp2.autotune(train_data, test_data, TrainConfig(progress=False), "sample", duration=600)
    exp2.save_run(tuned.trained, "sample", fig)  # 02 on exp2 with autotune: exp1's search's files kept aside
    err = capsys.readouterr().err
    assert {name: (run / name.replace(".", ".exp1.")).read_bytes() for name in searched} == searched
    assert f"kept autotune.exp1.png and autotune_trials.exp1.csv in {out}/sample: autotune.png and " \
        f"autotune_trials.csv of {exp1.model('sample')}, replaced by this save of {exp2.model('sample')} (the folder " \
        f"is run_name 'sample''s for every bucket and prefix)" in err.splitlines(), err
    plt.close(fig)


def test_a_bundle_saved_before_is_named_by_its_config_wherever_it_is(tmp_path):
    """bundle.saved_before, which a save that replaces a bundle names it by: a local folder's too (S3's: above), its
    time alone where config.json cannot be read, and none where there is no bundle."""
    import datetime

    from conftest import make_splits
    from fasttext_lib.bundle import save_bundle, saved_before
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.train import train

    dest = tmp_path / "bundle"
    assert saved_before(dest) is None
    save_bundle(train(*make_splits(200, 50, seed=0), TrainConfig(epochs=3, ngrams=2, progress=False)), str(dest))
    when = datetime.datetime.fromtimestamp((dest / "config.json").stat().st_mtime, datetime.timezone.utc)
    assert saved_before(dest) == f"saved {when:%Y-%m-%d %H:%M} UTC: 3 epochs, 2-grams"
    (dest / "config.json").write_text("{not json")
    when = datetime.datetime.fromtimestamp((dest / "config.json").stat().st_mtime, datetime.timezone.utc)
    assert saved_before(dest) == f"saved {when:%Y-%m-%d %H:%M} UTC"


@pytest.mark.parametrize("fails", ["history.csv", "history.png"])
def test_02_a_history_that_cannot_be_put_in_place_leaves_the_older_bundle_and_history(tmp_path, s3_bucket, monkeypatch,
                                                                                        fails):
    """save_run saved the bundle, then renamed the history into place: a rename that failed (a file bind-mounted into
    a container: EBUSY) after the bundle was saved left the new bundle beside the older history (or, the second
    rename failing, half of it), as if of it. Now the history is put in place first and the bundle saved after it:
    a failed rename saves no bundle, and the older bundle and history stay whole, together."""
    import errno

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from conftest import make_splits
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.predict import Predictor
    from fasttext_lib.train import train
    from fasttext_lib.workspace import Workspace

    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path / "out"))
    train_data, val_data = make_splits(200, 50, seed=0)
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    uri = ws.save_run(train(train_data, val_data, TrainConfig(epochs=1)), "run", fig)
    run = ws.out / "run"
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    real_replace = os.replace

    def busy(src, dst, *args, **kwargs):  # the rename that puts `fails` in place (no put-back renames to it)
        if os.path.basename(str(dst)) == fails:
            raise OSError(errno.EBUSY, os.strerror(errno.EBUSY), str(dst))
        return real_replace(src, dst, *args, **kwargs)

    ax.plot([2, 1])
    longer = train(train_data, val_data, TrainConfig(epochs=2))
    monkeypatch.setattr(os, "replace", busy)
    with pytest.raises(FastTextError, match=f"cannot write .*{fails}: Device or resource busy"):
        ws.save_run(longer, "run", fig)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before  # the older history, whole; no temporary
    assert [row["epoch"] for row in Predictor.load(uri).metrics["history"]] == [1]  # and its bundle
    plt.close(fig)


def test_02_a_first_save_that_fails_leaves_no_run_folder(tmp_path, monkeypatch):
    """A run's first save_run that failed (the bundle's save refused) left its history's folder behind, empty
    (``exp/1``: both folders), once the history was put in place before the bundle: the folders the history's
    writes created go with it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from conftest import make_splits
    from fasttext_lib import bundle
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.train import train
    from fasttext_lib.workspace import Workspace

    def denied(*args, **kwargs):
        raise FastTextError("cannot write s3://bkt/p/models/run/config.json: access denied")

    monkeypatch.setattr(bundle, "publish_bundle", denied)
    ws = Workspace("bkt", "p", str(tmp_path / "out"))
    trained = train(*make_splits(200, 50, seed=0), TrainConfig(epochs=1, progress=False))
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    for run_name in ("run", "exp/1"):
        with pytest.raises(FastTextError, match="access denied"):
            ws.save_run(trained, run_name, fig)
    assert list(ws.out.iterdir()) == []
    plt.close(fig)


@pytest.mark.parametrize("bucket", [["fasttext-demo"], {"name": "b"}, True, 1.5])
def test_a_bucket_that_is_no_name_is_refused_in_one_short_line(bucket, tmp_path):
    """`papermill -y "bucket: [my-bucket]"` passed the list on: the check cell's line was boto's "Invalid bucket name
    \"['my-bucket']\": Bucket name must match the regex ..." with two regular expressions in it. A number is a name
    (S3 takes all-digit bucket names, which papermill passes as an int)."""
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.workspace import Workspace

    with pytest.raises(FastTextError, match=rf"^bucket must be an S3 bucket name \(3 to 63 .*\), got {re.escape(repr(bucket))}$"):
        Workspace(bucket, "p", str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()
    assert Workspace(2024, "p", str(tmp_path / "out")).base == "s3://2024/p"


@pytest.mark.parametrize("bucket, valid", [
    ("fasttext-demo", True), ("my.bucket.1", True), ("abc", True), ("a" * 63, True), ("2024", True), ("1-a", True),
    ("My_Old_Bucket", True), ("a" * 255, True),  # an older us-east-1 bucket's (capitals, underscores, 255 characters)
    ("fasttext-demo ", False), (" fasttext-demo", False), ('""', False), ("'fasttext-demo'", False),
    ('"fasttext-demo"', False), ("my bucket", False), ("bucket!", False), ("ab", False), ("", False), ("a" * 256, False),
    ("-bucket", False), ("bucket-", False), ("bucket.", False), ("s3://fasttext-demo", False), ("b/p", False),
    ("caf\u00e9", False), ("bucket\n", False)])
def test_a_bucket_name_s3_cannot_have_is_refused_in_our_line_and_every_other_is_taken(bucket, valid, tmp_path):
    """`-p bucket '""'` or `bucket = "fasttext-demo "` (a space at its end) reached botocore: the check cell's line was
    its "Invalid bucket name ...: Bucket name must match the regex ... or be an ARN matching the regex ...". Refused
    now in one line saying what a bucket name is, before any request; a name S3 can have is taken as it is, also an
    older bucket's (made in us-east-1 before 2018: capitals, underscores, up to 255 characters), which S3 answers for."""
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.workspace import Workspace

    if valid:
        assert Workspace(bucket, "p", str(tmp_path / "out")).base == f"s3://{bucket}/p"
        return
    with pytest.raises(FastTextError) as refused:
        Workspace(bucket, "p", str(tmp_path / "out"))
    assert str(refused.value) == (f"bucket must be an S3 bucket name (3 to 63 lowercase letters, digits, dots and "
                                  f"hyphens, beginning and ending with a letter or digit; no s3://, no /), got {bucket!r}")


def test_an_output_dir_under_home_written_with_a_tilde_is_there(tmp_path, monkeypatch):
    """`output_dir = "~/SageMaker/results"` in the parameters cell (or papermill -y, where no shell expands it) made a
    folder named ~ in the notebooks' folder, while the last cell printed ~/SageMaker/results/history.csv: the user
    looked in their home folder and found nothing."""
    from fasttext_lib.workspace import Workspace

    home, here = tmp_path / "home", tmp_path / "notebooks"
    home.mkdir(), here.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(here)
    ws = Workspace("bkt", "p", "~/SageMaker/results")
    assert ws.out == home / "SageMaker" / "results" and ws.out.is_dir()
    assert ws.show("history.csv") == "~/SageMaker/results/history.csv" and os.listdir(here) == []


def test_demo_reads_the_history_from_an_output_dir_under_home(monkeypatch, capsys, tmp_path):
    """The notebooks' Workspace reads `-p output_dir "~/out"` as the home folder's out; make demo's summary read
    history.csv from notebooks/~/out, and ended in a FileNotFoundError traceback after all four had run."""
    import papermill

    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import run_notebooks

    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "out" / "sample").mkdir(parents=True)  # 02's run folder: run_name None is the dataset's name
    (tmp_path / "out" / "sample" / "history.csv").write_text("epoch,train_loss,val_accuracy\n1,0.5,0.75\n")
    monkeypatch.setattr(papermill, "execute_notebook", lambda *args, **kwargs: None)
    assert run_notebooks.main(["-p", "output_dir", "~/out"]) == 0  # (its check cells, on the local S3 server)
    assert "0.75" in capsys.readouterr().out
    (tmp_path / "out" / "exp" / "1").mkdir(parents=True)  # -p run_name exp/1: that run's folder
    (tmp_path / "out" / "exp" / "1" / "history.csv").write_text("epoch,train_loss,val_accuracy\n1,0.5,0.5\n")
    assert run_notebooks.main(["-p", "output_dir", "~/out", "-p", "run_name", "exp/1"]) == 0
    assert "0.5" in capsys.readouterr().out


def test_demo_names_an_output_dir_outside_the_repository_by_its_own_path(monkeypatch, capsys, tmp_path):
    """`make demo ARGS='-p output_dir /tmp/out'` ended "figures and tables: ../../../tmp/out/": the folder's path from
    the repository, a climb the user has to count back. A folder outside the repository is named by its absolute
    path; build/demo/ (inside it) is still named from the repository."""
    import papermill

    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import run_notebooks

    (tmp_path / "sample").mkdir()
    (tmp_path / "sample" / "history.csv").write_text("epoch,train_loss,val_accuracy\n1,0.5,0.75\n")
    monkeypatch.setattr(papermill, "execute_notebook", lambda *args, **kwargs: None)
    assert run_notebooks.main(["-p", "output_dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"figures and tables: {tmp_path}/ (02's history: {tmp_path / 'sample' / 'history.csv'})" in out
    assert "executed notebooks: build/demo/" in out


def test_demo_names_the_split_its_summary_scores(monkeypatch, capsys, tmp_path):
    """`make demo ARGS='-p autotune True'` printed the history of the search's chosen trial, scored on autotune's 20% of
    the training split, under "accuracy per epoch (val: the test split)": 02 and 04 give that model's test accuracy
    as another number. The summary names the split the history was scored on, and shows the columns history.csv has
    (test_ or validation_ now; val_ in one an older version wrote)."""
    import papermill

    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import run_notebooks

    (tmp_path / "sample").mkdir()
    (tmp_path / "sample" / "history.csv").write_text("epoch,train_loss,test_accuracy,seconds\n1,0.5,0.75,3.5\n")
    monkeypatch.setattr(papermill, "execute_notebook", lambda *args, **kwargs: None)
    assert run_notebooks.main(["-p", "output_dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "accuracy per epoch (held out: the test split):" in out and "test_accuracy" in out and "seconds" not in out
    (tmp_path / "sample" / "history.csv").write_text("epoch,train_loss,validation_accuracy\n1,0.5,0.75\n")
    assert run_notebooks.main(["-p", "output_dir", str(tmp_path), "-p", "autotune", "True"]) == 0
    out = capsys.readouterr().out
    assert "the test split" not in out and "validation_accuracy" in out
    assert "accuracy per epoch (held out: autotune's validation split, 20% of the training split):" in out


def test_04_stopped_by_its_test_split_check_leaves_the_earlier_outputs_whole(tmp_path, s3_bucket):
    """`papermill 02 -p run_name b -p dataset synthetic`, then `papermill 04 -p run_name b` (the sample's test split):
    04 stopped at check_tested_on, in its evaluation cell, but its predictions cell had already replaced
    04_predictions.csv with model b's. Every check that can stop 04 now runs before 04 writes anything: run cell by
    cell until it stops, the folder holds what it held."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fasttext_lib.config import TrainConfig
    from fasttext_lib.writers import write_fasttext_splits
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.sample import load_sample
    from fasttext_lib.train import train

    local = {"bucket": s3_bucket[len("s3://"):], "output_dir": str(tmp_path / "out"), "run_name": "b", "ctx": "cpu"}
    saved = run_after_papermill(SERIES[1], {**local, "dataset": "synthetic"})  # 02's check cell: its ws
    ws = saved["ws"]
    splits = {"train": load_sample("train").head(300), "test": load_sample("test").head(100)}
    write_fasttext_splits(splits, ws.data, "synthetic")  # (documents of 01's, as long as there are some)
    write_fasttext_splits(splits, ws.data, "sample")
    exec(cell_with(SERIES[1], "train_data = read_prepared("), saved)  # noqa: S102 - 02's data cell
    saved["trained"] = train(saved["train_data"], saved["test_data"],
                             TrainConfig(epochs=1, emsize=8, ngrams=1, buckets=1000, ctx="cpu", progress=False))
    saved["fig"] = plt.figure()
    exec(cell_with(SERIES[1], "ws.save_run(trained, "), saved)  # noqa: S102 - 02's save cell, tested on synthetic's
    plt.close(saved["fig"])
    for name in ("04_predictions.csv", "04_confusion_matrix.png", "04_word_vectors.vec"):
        (ws.out / "b" / name).write_text(f"the user's earlier {name}\n")
    before = {p.relative_to(ws.out): p.read_bytes() for p in ws.out.rglob("*") if p.is_file()}

    namespace = run_after_papermill(SERIES[3], local, {"display": print})  # 04 with dataset="sample"
    later = code_cells(read(SERIES[3]))[2:]
    with pytest.raises(FastTextError, match=r"^the model at .*/models/b was tested on .*/data/synthetic.test, not on "):
        for cell in later:
            exec(cell.source, namespace)  # noqa: S102 - 04's cells in order, until one stops
    plt.close("all")
    assert {p.relative_to(ws.out): p.read_bytes() for p in ws.out.rglob("*") if p.is_file()} == before


def test_04_writes_its_files_in_the_runs_folder():
    """04's predictions, confusion matrix and word vectors were in output_dir itself: 04 run for run_name b replaced
    run a's. They are in output_dir/{run_name}/ now, beside 02's history of that run, as 04's last cell prints."""
    code = "\n".join(c.source for c in code_cells(read(SERIES[3])))
    assert "ws.out /" not in code and "run_dir = ws.run_folder(run_name)" in code
    # (inference_files' names in run_folder, recorded as 04's)
    for call in ("ws.save_predictions(predictions, run_name)", "ws.save_confusion_matrix(fig, run_name)",
                 "ws.save_word_vectors(predictor, run_name)"):
        assert call in code
    for name in ("04_predictions.csv", "04_confusion_matrix.png", "04_word_vectors.vec"):
        assert f'ws.show(f"{{run_name}}/{name}")' in code


def test_04_shows_each_classs_precision_recall_and_f1_beside_its_confusion_matrix():
    """`evaluate` on the command line prints each class's precision, recall, F1 and support under its confusion
    matrix; 04, whose evaluation holds them (README: "notebook 04's tables"), showed the confusion matrix alone. Its
    confusion cell shows both now: the matrix, then the per-class table as the cell's value."""
    import numpy as np

    from fasttext_lib.evaluation import Evaluation, per_class_scores

    names, counts = ["negative", "positive"], [[3, 1], [2, 4]]
    metrics = {"confusion_matrix": {"counts": counts},
               "per_class": [dict(label=n, **s) for n, s in zip(names, per_class_scores(counts))]}
    classes = np.array([0] * 4 + [1] * 6)
    evaluation = Evaluation(names, ["a review"] * 10, classes, np.full((10, 2), 0.5), metrics)
    shown = []
    namespace = {"evaluation": evaluation, "display": shown.append}
    cell = ast.parse(cell_with(SERIES[3], "evaluation.confusion_frame()"))
    exec(compile(ast.Module(cell.body[:-1], []), "04", "exec"), namespace)  # noqa: S102 - 04's committed cell
    value = eval(compile(ast.Expression(cell.body[-1].value), "04", "eval"), namespace)  # noqa: S307 - what it shows
    assert len(shown) == 1 and shown[0].equals(evaluation.confusion_frame())
    assert value.equals(evaluation.per_class_frame().round(4))
    assert list(value.columns) == ["precision", "recall", "f1", "support"] and list(value.index) == names


def test_04s_word_pairs_table_keeps_its_columns_when_no_pair_is_in_the_vocabulary(capsys):
    """04 on the synthetic corpus or your own data keeps its English word_pairs: none is in the vocabulary, a line
    says so, and the table shown under it was pandas' "Empty DataFrame / Columns: [] / Index: []", which reads as a
    failure. It is the table's header with no rows now."""
    import types

    import numpy as np

    from fasttext_lib.text import TRAINING_FORM

    embedding = types.SimpleNamespace(idx_to_token=["vai", "rel"], idx_to_vec=np.ones((2, 3)),
                                      token_to_idx={"vai": 0, "rel": 1})
    namespace = {**notebook_imports(SERIES[3]), "token_embedding": lambda learned: embedding,
                 "learned": types.SimpleNamespace(unicode_form=TRAINING_FORM), "word_pairs": [("great", "awful")]}
    cell = ast.parse(cell_with(SERIES[3], "vocabulary_pairs(word_pairs"))
    exec(compile(ast.Module(cell.body[:-1], []), "04", "exec"), namespace)  # noqa: S102 - 04's committed cell
    table = eval(compile(ast.Expression(cell.body[-1].value), "04", "eval"), namespace)  # noqa: S307 - what it shows
    assert "none of word_pairs is, so its table is empty" in capsys.readouterr().out
    assert list(table.columns) == ["word 1", "word 2", "cos_similarity"] and len(table) == 0


def test_04s_committed_neighbours_table_tells_its_neighbours_apart():
    """With two classes every similarity is within a few thousandths of +-1: shown with 2 decimals, 04's table gave
    each neighbour '(1.00)' or '(-1.00)', a tie to a reader, where the ranking rests on the 4th decimal."""
    cell = next(c for c in code_cells(read(SERIES[3])) if "neighbours(learned, word, top_k)" in c.source)
    shown = "".join(output.get("data", {}).get("text/plain", "") for output in cell.outputs)
    similarities = re.findall(r"\((-?\d\.\d+)\)", shown)
    assert len(similarities) >= 10, shown
    assert all(re.fullmatch(r"-?0\.\d{4}", similarity) for similarity in similarities), shown  # (not 1.00: a tie)


def test_02_runs_of_other_names_keep_their_own_history_and_autotune_files(tmp_path, s3_bucket, monkeypatch):
    """02 run with run_name a, then b, in one output_dir: b's history.csv and history.png replaced a's (each bundle's
    metrics.json kept its own), and b without autotune removed a's autotune.png and autotune_trials.csv. Each run's
    files are in output_dir/{run_name}/ now (a name with / is a folder in a folder), as 02's last cell prints them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from conftest import make_splits
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.train import train
    from fasttext_lib.workspace import Workspace

    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path / "out"))
    train_data, val_data = make_splits(200, 50, seed=0)
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    autotune_cell = next(c.source for c in code_cells(read(SERIES[1])) if c.source.startswith("if autotune:"))
    _save_a_search(ws, "a", fig, monkeypatch)  # a, autotuned
    a_files = {p.name: p.read_bytes() for p in (ws.out / "a").iterdir()}
    exec(autotune_cell, {"autotune": False, "ws": ws, "run_name": "exp/b"})  # noqa: S102 - b's, without autotune
    ws.save_run(train(train_data, val_data, TrainConfig(epochs=2, progress=False)), "exp/b", fig)
    assert sorted(str(p.relative_to(ws.out)) for p in ws.out.rglob("*") if p.is_file()) == [
        "a/autotune.png", "a/autotune_trials.csv", f"a/{RECORD_OF_AUTOTUNE}", "a/history.csv", "a/history.png",
        f"a/{RECORD_OF_HISTORY}", "exp/b/history.csv", "exp/b/history.png", f"exp/b/{RECORD_OF_HISTORY}"]
    assert {p.name: p.read_bytes() for p in (ws.out / "a").iterdir()} == a_files  # a's, as its save wrote them
    assert len(pd.read_csv(ws.out / "exp/b" / "history.csv")) == 2
    last_cell = code_cells(read(SERIES[1]))[-1].source
    assert 'ws.show(f"{run_name}/history.csv")' in last_cell and 'ws.show(f"{run_name}/history.png")' in last_cell
    plt.close(fig)
    # a file where the run's folder would be: 02's check cell says so, before the training
    (ws.out / "mine").write_text("the user's\n")
    with pytest.raises(FastTextError, match=r"^run_name 'mine' cannot be a folder of output_dir for its history: .*"
                                            r"mine exists and is not a directory$"):
        run_after_papermill(SERIES[1], {"bucket": s3_bucket[len("s3://"):], "output_dir": str(ws.out),
                                        "run_name": "mine"})
    assert (ws.out / "mine").read_text() == "the user's\n"


def whole_ticks_in_view(axis):
    """The major ticks an axis shows (those inside its view), and whether each is a whole number."""
    axis.axes.figure.canvas.draw()
    low, high = axis.get_view_interval()
    shown = [t for t in axis.get_majorticklocs() if low <= t <= high]
    return shown, all(float(t).is_integer() for t in shown)


@pytest.mark.parametrize("epochs", [1, 2, 5, 25])
def test_02_history_plot_ticks_whole_epochs_also_for_a_one_epoch_run(epochs):
    """`papermill 02 -p epochs 1` (a quick first try) drew its history with epoch ticks 0.945, 0.96, ... 1.05:
    MaxNLocator(integer=True) keeps whole numbers only where at least two are in view. Every run's epoch axis has
    whole-number ticks (a one-epoch run's: 1), and train and test accuracy are both drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = run_02_history_plot_cell(epochs)
    for ax in fig.axes:
        shown, whole = whole_ticks_in_view(ax.xaxis)
        assert whole and shown and (epochs > 1 or shown == [1]), (epochs, shown)
    assert [line.get_label() for line in fig.axes[0].get_lines()] == ["train", "test"]
    plt.close(fig)


def run_02_history_plot_cell(epochs, train_accuracy=True, held_out="test", namespace=None):
    """Notebook 02's history table and plot cells, run on a history of ``epochs`` epochs scored on ``held_out``
    (without train accuracy: an autotuned model's); the plot's figure (``namespace``: the cells' names, filled in)."""
    from fasttext_lib.train import TrainedModel

    code = [c.source for c in code_cells(read(SERIES[1]))]
    namespace = {} if namespace is None else namespace
    imports = [node for node in ast.parse(code[1]).body if isinstance(node, (ast.Import, ast.ImportFrom))]
    exec(compile(ast.Module(body=imports, type_ignores=[]), "imports", "exec"), namespace)  # noqa: S102 - the cell's imports
    rows = [{"epoch": epoch, "train_loss": 0.5, "val_loss": 0.6, "val_accuracy": 0.7, "seconds": 1.0,
             "samples_per_s": 100.0, **({"train_accuracy": 0.8} if train_accuracy else {})}
            for epoch in range(1, epochs + 1)]  # (a history as training records it)

    class Held:
        split = held_out

    class Config:  # (02's own: lr and batch size left to the data)
        optimizer, lr, batch_size, ngrams, emsize = "sgd", None, None, 2, 100

    class Used(Config):  # (the trained model's: as the data set them)
        lr, batch_size = 1.6575, 16

    class Trained:
        held_out_score, config, history = Held(), Used(), rows
        history_frame = TrainedModel.history_frame

    namespace.update(trained=Trained(), config=Config(), run_name="sample")
    exec(cell_with(SERIES[1], "history = trained.history_frame("), namespace)  # noqa: S102 - 02's history table cell
    exec(cell_with(SERIES[1], "saved as history.png"), namespace)  # noqa: S102 - 02's history plot cell
    return namespace["fig"]


@pytest.mark.parametrize("held_out", ["test", "validation"])
def test_02s_history_table_names_the_split_it_holds(held_out):
    """02's History table (and history.csv) called the test split's scores val_loss and val_accuracy: 02 validates on
    the test split (Yelp has no other), so they read as a validation split's. The columns name the split now:
    test_loss and test_accuracy, or validation_ (an autotuned model's, scored on the search's split)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    namespace = {}
    plt.close(run_02_history_plot_cell(3, held_out=held_out, namespace=namespace))
    assert list(namespace["history"].columns) == ["train_loss", f"{held_out}_loss", "train_accuracy",
                                                  f"{held_out}_accuracy", "seconds", "samples_per_s"]
    assert namespace["history"][f"{held_out}_accuracy"].tolist() == [0.7] * 3


def test_02_history_plot_names_the_lr_and_batch_size_the_run_used():
    """The lr and batch size 02 trained with (left to the data by default) were said only on stderr, "settings from the
    data: sgd lr=1.6575 batch=16", so the committed notebook did not show them: the plot's title names them now."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = run_02_history_plot_cell(5)
    assert fig._suptitle.get_text() == "sample: sgd lr=1.6575, batch 16, 2-grams, emsize 100"
    plt.close(fig)


@pytest.mark.parametrize("train_accuracy", [True, False])
def test_02_history_plot_colours_each_split_alike_in_both_panels(train_accuracy):
    """`-p autotune True`: the chosen trial's history has no train accuracy, so the accuracy panel drew its validation
    line in the first colour (blue), while the loss panel beside it drew train in blue and validation in orange. Each
    split keeps one colour in both panels, the held-out split's other than train's."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    held_out = "test" if train_accuracy else "validation"
    fig = run_02_history_plot_cell(epochs=5, train_accuracy=train_accuracy, held_out=held_out)
    colours = [{line.get_label(): line.get_color() for line in ax.get_lines()} for ax in fig.axes]
    assert [sorted(c) for c in colours] == [sorted(["train", held_out] if train_accuracy else [held_out]),
                                            sorted(["train", held_out])]
    accuracy, loss = colours
    assert accuracy[held_out] == loss[held_out] != loss["train"], colours
    assert not train_accuracy or accuracy["train"] == loss["train"], colours
    plt.close(fig)


def test_03_throughput_chart_names_its_devices_upright():
    """03_throughput.png named its bars ("cpu", "gpu:0") in labels turned on their side (pandas' bar chart turns
    them 90 degrees): read level, as the axis titles are."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    timings = pd.DataFrame({"kind": ["cpu", "gpu"], "samples_per_s": [12000.0, 90000.0]},
                           index=pd.Index(["cpu", "gpu:0"], name="device"))
    namespace = {"plt": plt, "timings": timings}
    exec(cell_with(SERIES[2], "timings.samples_per_s.plot.bar"), namespace)  # noqa: S102 - 03's throughput chart cell
    labels = namespace["ax"].get_xticklabels()
    assert [(label.get_text(), label.get_rotation()) for label in labels] == [("cpu", 0), ("gpu:0", 0)]
    plt.close("all")


@pytest.mark.parametrize("trials", [1, 3])
def test_the_autotune_plot_ticks_whole_trials(trials):
    """`-p autotune True -p autotune_duration 1` (one trial) drew autotune.png with trial ticks 0.96, 0.98, ... 1.04,
    three trials with 1.0, 1.25, 1.5, ...: trials are whole numbers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from fasttext_lib.figures import plot_trials

    class Tuned:
        pass

    tuned = Tuned()
    tuned.trials = pd.DataFrame({"trial": range(1, trials + 1), "val_accuracy": [0.7 + 0.01 * i for i in range(trials)]})
    tuned.best_trial = tuned.trials.iloc[-1]
    fig = plt.figure()
    plot_trials(fig, tuned)
    shown, whole = whole_ticks_in_view(fig.axes[0].xaxis)
    assert whole and 1 in shown, shown
    plt.close(fig)


def test_02_without_autotune_keeps_an_earlier_searchs_files_until_its_model_is_saved(tmp_path, s3_bucket, monkeypatch,
                                                                                      capsys):
    """A run without autotune after an autotuned one removed the search's autotune.png and autotune_trials.csv in its
    autotune cell, before the save cell: a save that then failed (a denied write, a lost endpoint, the Stop button
    during a long upload) left the autotuned bundle and its history in place, and its search's files gone. They go
    only once the new model is saved (with its history), as the files of another model's search."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from conftest import make_splits
    from fasttext_lib import bundle
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.train import train
    from fasttext_lib.workspace import Workspace

    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path / "out"))
    trained = train(*make_splits(200, 50, seed=0), TrainConfig(epochs=1, progress=False))
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    _save_a_search(ws, "run", fig, monkeypatch)  # the autotuned run: its search's files with its model and history
    run = ws.out / "run"
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    assert sorted(before) == ["autotune.png", "autotune_trials.csv", RECORD_OF_AUTOTUNE, "history.csv", "history.png",
                           RECORD_OF_HISTORY]

    cell = next(c.source for c in code_cells(read(SERIES[1])) if c.source.startswith("if autotune:"))
    exec(cell, {"autotune": False, "ws": ws, "run_name": "run"})  # noqa: S102 - 02's autotune cell, without autotune

    def denied(*args, **kwargs):
        raise FastTextError("cannot write s3://bkt/p/models/run/config.json: access denied")

    monkeypatch.setattr(bundle, "publish_bundle", denied)
    with pytest.raises(FastTextError, match="access denied"):
        ws.save_run(trained, "run", fig)
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before  # the autotuned model's files, all of them
    monkeypatch.undo()
    capsys.readouterr()
    ws.save_run(trained, "run", fig)
    assert sorted(p.name for p in run.iterdir()) == ["history.csv", "history.png", RECORD_OF_HISTORY]
    assert "removed autotune.png and autotune_trials.csv from " in capsys.readouterr().err
    plt.close(fig)


def test_02_with_autotune_publishes_its_search_with_its_model_only(tmp_path, s3_bucket, monkeypatch, capsys):
    """02's autotune cell wrote the new autotune.png and autotune_trials.csv before the save cell: a save that then
    failed (a denied write, the Stop button during a long upload) put the older bundle and history back, beside the
    new search's plot and table, of a model never saved. The cell shows them and keeps them for the save, which puts
    them in place with the model and its history: on a failed save the earlier search's files stay as they were, and
    a search whose model is not the one saved (a Stop after the search: the cell did not keep it) is never written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from conftest import make_splits
    from fasttext_lib import bundle
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.figures import png_software
    from fasttext_lib.train import train
    from fasttext_lib.workspace import Workspace

    _autotune_of_one_trial(monkeypatch)
    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path / "out"))
    train_data, test_data = make_splits(200, 50, seed=0)
    earlier = train(train_data, test_data, TrainConfig(epochs=1, progress=False))
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    _save_a_search(ws, "run", fig, monkeypatch, seed=1)  # an earlier autotuned run: its search's files, model, history
    run = ws.out / "run"
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    capsys.readouterr()

    tuned = ws.autotune(train_data, test_data, TrainConfig(progress=False), "run", duration=600)
    assert "trial  phase" in capsys.readouterr().out  # the trial table is shown in the cell
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before  # nothing written before the save

    def denied(*args, **kwargs):
        raise FastTextError("cannot write s3://bkt/p/models/run/config.json: access denied")

    real_publish = bundle.publish_bundle
    monkeypatch.setattr(bundle, "publish_bundle", denied)
    with pytest.raises(FastTextError, match="access denied"):
        ws.save_run(tuned.trained, "run", fig)
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before  # the earlier model's files, all of them only
    monkeypatch.setattr(bundle, "publish_bundle", real_publish)
    ws.save_run(tuned.trained, "run", fig)  # the save cell run again
    assert sorted(p.name for p in run.iterdir()) == ["autotune.png", "autotune_trials.csv", RECORD_OF_AUTOTUNE,
                                                     "history.csv", "history.png", RECORD_OF_HISTORY]
    assert (run / "autotune_trials.csv").read_bytes() == tuned.trials.to_csv(index=False).encode()
    assert png_software(run / "autotune.png") == "fasttext_lib" and (run / "autotune.png").read_bytes() != before[
        "autotune.png"]

    tuned = ws.autotune(train_data, test_data, TrainConfig(progress=False), "run", duration=600)
    ws.save_run(earlier, "run", fig)  # not the search's model (a Stop after the search: the cell kept the one before)
    # neither search's files
    assert sorted(p.name for p in run.iterdir()) == ["history.csv", "history.png", RECORD_OF_HISTORY]
    plt.close(fig)


def test_03s_text_says_how_many_batches_the_dense_recipe_trains():
    """03 said the dense recipe "trains a few hundred batches on the CPU": it trains ``dense_batches`` (50) batches of 16.
    The text names the parameter, so a rerun with -p dense_batches 5 reads true too."""
    nb = read("03_cpu_vs_gpu.ipynb")
    defaults = {}
    exec(code_cells(nb)[0].source, {}, defaults)  # noqa: S102 - the committed parameters cell
    text = next(c.source for c in nb.cells if c.cell_type == "markdown" and "dense** embedding gradient" in c.source)
    assert "few hundred" not in text and "`dense_batches` batches of 16" in text, text
    assert defaults["dense_batches"] == 50


def _run_04s_writing_cells(ws, run_name, test_data):
    """04's cells that write its three files (predictions, confusion matrix, word vectors), as committed, on the bundle
    02 saved as ``run_name``."""
    import matplotlib.pyplot as plt

    from fasttext_lib.predict import Predictor

    namespace = notebook_imports(SERIES[3])
    predictor = Predictor.load(ws.saved_model(run_name), ctx="cpu")
    evaluation = predictor.evaluation(test_data)
    namespace.update(ws=ws, run_name=run_name, run_dir=ws.run_folder(run_name), predictor=predictor,
                     test_data=test_data, evaluation=evaluation, top_k=3, display=print)
    for marker in ("predictions = pd.DataFrame(", "confusion = evaluation.confusion_frame()",
                   "image = ax.imshow(confusion", "ws.save_word_vectors("):
        exec(cell_with(SERIES[3], marker), namespace)  # noqa: S102 - 04's committed cells
    plt.close("all")


def _saving_runs(tmp_path, s3_bucket):
    """A Workspace in ``tmp_path/out`` and ``save_again()``: notebook 02 saving a new bundle for run ``run`` (the first
    one saved now, before the test writes anything in the run's folder)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from conftest import make_splits
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.train import train
    from fasttext_lib.workspace import Workspace

    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path / "out"))
    train_data, test_data = make_splits(200, 50, seed=0)
    config = TrainConfig(epochs=1, emsize=8, buckets=1000, progress=False)

    def save_again():
        fig, ax = plt.subplots()
        ax.plot([1, 2])
        ws.save_run(train(train_data, test_data, config), "run", fig)
        plt.close(fig)

    save_again()
    return ws, test_data, save_again


# What 04 records of the files it writes in the run's folder (workspace.Workspace.save_predictions and the others).
RECORD_OF_04 = "04_written.json"


def test_02_saving_a_new_bundle_removes_04s_files_of_the_one_it_replaced(tmp_path, s3_bucket, capsys):
    """02 run again for a run_name (a new bundle) left 04_predictions.csv, 04_confusion_matrix.png and
    04_word_vectors.vec of the earlier bundle in output_dir/{run_name}/, as if of the new one. save_run now removes
    them once the new bundle is saved, as it does an earlier search's autotune files: those three only, and only as
    04 wrote them, by 04's record of what it wrote (removed with them); other files stay, and so does a file of the
    user's under one of their names when 04 wrote none."""
    import matplotlib.pyplot as plt

    ws, test_data, save_again = _saving_runs(tmp_path, s3_bucket)
    run = ws.out / "run"
    _run_04s_writing_cells(ws, "run", test_data)
    written = ["04_confusion_matrix.png", "04_predictions.csv", "04_word_vectors.vec"]
    assert sorted(p.name for p in run.iterdir()) == sorted(written + [RECORD_OF_04, "history.csv", "history.png",
                                                                        RECORD_OF_HISTORY])
    (run / "04_notes.txt").write_text("mine\n")
    capsys.readouterr()

    save_again()  # 02 again: a new bundle
    assert sorted(p.name for p in run.iterdir()) == ["04_notes.txt", "history.csv", "history.png", RECORD_OF_HISTORY]
    assert (f"removed 04_predictions.csv, 04_confusion_matrix.png, 04_word_vectors.vec from {ws.show('run')}: 04's, "
            f"of the model replaced") in capsys.readouterr().err

    fig, ax = plt.subplots()
    fig.savefig(run / "04_confusion_matrix.png")  # the user's own files under those names: not 04's
    plt.close(fig)
    (run / "04_predictions.csv").write_text("review,my_label\nfine,1\n")
    (run / "04_word_vectors.vec").write_text("my vectors, not a .vec header\n")
    save_again()
    assert {"04_confusion_matrix.png", "04_predictions.csv", "04_word_vectors.vec"} <= {p.name for p in run.iterdir()}
    assert "removed" not in capsys.readouterr().err


def test_02_keeps_a_table_and_vectors_of_the_users_that_look_like_04s(tmp_path, s3_bucket, capsys):
    """save_run took a file for 04's by its content alone: a table the user wrote with pandas' to_csv and 04's columns
    (label,probability,review), or any .vec file with its header line, under 04's names, was deleted when 02 saved a
    new bundle. Only the files 04's record says it wrote go now: these were never 04's, and stay as they were."""
    import pandas as pd

    ws, _, save_again = _saving_runs(tmp_path, s3_bucket)
    run = ws.out / "run"
    pd.DataFrame({"label": ["pos"], "probability": [0.9], "review": ["my own"]}).to_csv(run / "04_predictions.csv",
                                                                                      index=False)
    (run / "04_word_vectors.vec").write_text("2 3\ngood 1 2 3\nbad 3 2 1\n")
    mine = {name: (run / name).read_bytes() for name in ("04_predictions.csv", "04_word_vectors.vec")}
    assert mine["04_predictions.csv"].startswith(b"label,probability,review\n")
    capsys.readouterr()

    save_again()
    assert {name: (run / name).read_bytes() for name in mine} == mine
    assert "removed" not in capsys.readouterr().err


def test_02_keeps_a_04_file_the_user_changed_and_says_so(tmp_path, s3_bucket, capsys):
    """A file 04 wrote that the user changed afterwards (a row added to the predictions table) is the user's now: it
    was deleted with 04's other files. It stays, with one line saying why; the files as 04 wrote them go, and so does
    the record. A record naming other files of the folder (hand-edited) removes none of them."""
    ws, test_data, save_again = _saving_runs(tmp_path, s3_bucket)
    run = ws.out / "run"
    _run_04s_writing_cells(ws, "run", test_data)
    with open(run / "04_predictions.csv", "a") as f:
        f.write("my,0.5,own row\n")
    edited = (run / "04_predictions.csv").read_bytes()
    capsys.readouterr()

    save_again()
    assert sorted(p.name for p in run.iterdir()) == ["04_predictions.csv", "history.csv", "history.png",
                                                     RECORD_OF_HISTORY]
    assert (run / "04_predictions.csv").read_bytes() == edited
    err = capsys.readouterr().err
    kept = [line for line in err.splitlines() if "04_predictions.csv" in line and "kept" in line]
    assert kept == [f"kept {ws.show('run/04_predictions.csv')}: changed since notebook 04 wrote it"], err
    assert f"removed 04_confusion_matrix.png, 04_word_vectors.vec from {ws.show('run')}: 04's, of the model " \
           f"replaced" in err

    (run / "notes.txt").write_bytes(b"mine")
    (run / RECORD_OF_04).write_text(json.dumps({"written_by": "notebook 04 (fasttext_lib)", "files": {  # (04's mark)
        name: {"size": 4, "sha256": hashlib.sha256(b"mine").hexdigest()} for name in ("notes.txt", "../run/notes.txt")}}))
    save_again()
    assert sorted(p.name for p in run.iterdir()) == ["04_predictions.csv", "history.csv", "history.png",
                                                     RECORD_OF_HISTORY, "notes.txt"]


def test_04s_predictions_table_is_written_whole_or_not_at_all(tmp_path):
    """04 wrote 04_predictions.csv with a plain to_csv: stopped part way (the Stop button, a full disk), it left a
    truncated table in place of the earlier one. It is written atomically now: the earlier table stays as it was."""
    from fasttext_lib.workspace import Workspace

    class Stopped:
        def __str__(self):
            raise KeyboardInterrupt  # the Stop button, while the table is being written

    class Predictor:
        label_names = {}

        @staticmethod
        def predict(texts):
            return [{"label": Stopped(), "probability": 0.5, "class_id": "1"} for _ in texts]

    ws = Workspace("bkt", "p", str(tmp_path / "out"))
    run = ws.out / "run"
    run.mkdir()
    (run / "04_predictions.csv").write_text("label,probability,review\n1,0.5,earlier\n")
    namespace = notebook_imports(SERIES[3])
    namespace.update(ws=ws, run_name="run", run_dir=ws.run_folder("run"), predictor=Predictor())
    with pytest.raises(KeyboardInterrupt):
        exec(cell_with(SERIES[3], "predictions = pd.DataFrame("), namespace)  # noqa: S102 - 04's predictions cell
    assert [p.name for p in run.iterdir()] == ["04_predictions.csv"]
    assert (run / "04_predictions.csv").read_text() == "label,probability,review\n1,0.5,earlier\n"


def test_the_demo_shows_a_notebooks_output_but_not_its_kernels_log(tmp_path, capfd):
    """ipykernel 7 logs "Kernel is running over TCP without encryption ..." on stderr when it starts: `make demo` printed
    that paragraph once per notebook. The kernel's log is now at CRITICAL; what a cell prints still reaches its
    notebook."""
    import nbformat

    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import run_notebooks

    source, executed = tmp_path / "one.ipynb", tmp_path / "one_out.ipynb"
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell("import sys, warnings; print('out'); print('err', file=sys.stderr)"
                                                    "; warnings.warn('a warning of the cell')"))
    nbformat.write(notebook, str(source))
    run_notebooks.execute(str(source), str(executed), {}, str(tmp_path))
    captured = capfd.readouterr()
    assert "Kernel is running" not in captured.err and "WARNING" not in captured.err, captured.err
    outputs = nbformat.read(str(executed), 4).cells[0].outputs
    shown = "".join(output.get("text", "") for output in outputs)
    assert "out" in shown and "err" in shown and "a warning of the cell" in shown


def test_02s_autotune_cell_shows_the_trial_table_once(tmp_path, s3_bucket, monkeypatch, capsys):
    """02's autotune cell showed the trial table twice: as text on stderr (the search's own lines, the CLI's) and as the
    cell's table. The cell shows it as a table only, with the chosen setting and its test accuracy."""
    from conftest import make_splits
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.workspace import Workspace

    _autotune_of_one_trial(monkeypatch)
    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path / "out"))
    ws.autotune(*make_splits(200, 50, seed=0), TrainConfig(progress=False), "run", duration=600)
    out, err = capsys.readouterr()
    assert out.count("trial  phase") == 1 and "chosen: {" in out and "test accuracy of the tuned model" in out, out
    assert "phase" not in err and "trial   1" not in err and "chosen: trial" not in err, err


def test_03s_price_table_says_where_its_prices_come_from_and_that_none_was_checked():
    """03's prices carried as_of "2026-11-22" beside "(not reachable from here)": read as the date they were checked.
    They were typed in without being looked up: the table says so, with no date, in cells pandas shows whole."""
    import pandas as pd

    namespace = {"pd": pd}
    exec(cell_with(SERIES[2], '"usd_per_hour": 0.05'), namespace)  # noqa: S102 - 03's price cell
    prices = namespace["prices"]
    assert "as_of" not in prices and not prices.astype(str).apply(lambda c: c.str.contains("20[0-9][0-9]-")).any().any()
    assert set(prices.price_source) == {"us-east-1 on-demand, typed in, not looked up"}
    assert set(prices.checked) == {"no: check the pricing page, edit before use"}
    assert prices.select_dtypes("object").apply(lambda c: c.str.len()).max().max() <= 50
    text = next(c.source for c in read(SERIES[2]).cells
                if c.cell_type == "markdown" and "Dollars per epoch" in c.source)
    assert "none of them was checked" in text and "unverified" not in text, text


def test_04s_text_claims_of_cos_similarity_only_what_holds():
    """04 said of the learned vectors' cos_similarity "a neutral word in between": great / the scored 0.92 on one run
    and -0.56 on another. The text says what the cosine of a classifier's vectors shows (the same or the opposite
    class), that it is no general similarity, and that a word of neither class lands anywhere."""
    nb = read(SERIES[3])
    text = next(c.source for c in nb.cells if c.cell_type == "markdown" and "`cos_similarity`" in c.source
                and c.source.startswith("## "))
    assert "in between" not in text and "not a general" in text and "from run to run" in text, text


def _run_01s_histogram_cells(ws, dataset, lengths, splits=None, before_the_write=None):
    """01's histogram cell, its write cell (which saves the histogram) and its last cell, as committed, for ``dataset``
    (``lengths``: its documents' lengths). ``splits`` are written (write_fasttext_splits), else the write cell takes
    the data as written by prepare (a downloaded set's), and writes none; ``before_the_write()``: called as the splits'
    write begins. Returns the figure's PNG bytes."""
    import matplotlib.pyplot as plt

    from fasttext_lib.figures import png_bytes
    from fasttext_lib.own_data import write_own_splits
    from fasttext_lib.writers import write_fasttext_splits

    def write(*args, **kwargs):
        if before_the_write is not None:
            before_the_write()
        return write_fasttext_splits(*args, **kwargs)
    written = {} if splits is not None else {"train": "s3://bkt/p/data/x.train", "test": "s3://bkt/p/data/x.test"}
    namespace = {"plt": plt, "ws": ws, "dataset": dataset, "lengths": lengths, "train_file": None, "splits": splits,
                 "write_fasttext_splits": write, "write_own_splits": write_own_splits, "written": written}
    for cell in (cell_with(SERIES[0], "ax.hist(lengths"), cell_with(SERIES[0], "write_fasttext_splits(splits"),
                 code_cells(read(SERIES[0]))[-1].source):
        exec(cell, namespace)  # noqa: S102 - 01's committed cells
    drawn = png_bytes(namespace["fig"], 100)
    plt.close(namespace["fig"])
    return drawn


def test_01_run_twice_at_once_into_one_prefix_leaves_the_histogram_of_the_data_that_stays(tmp_path, s3_bucket, capsys):
    """Two runs of 01 at once into one prefix (two papermill runs, one output_dir): each wrote the length histogram of
    its own data, and the data of one stayed beside the histogram of the other (run A wrote its histogram, B its
    histogram and its data, then A its data). 01's files are written once its data is, under the lock of that write
    (which the other run waits for), only while that data is still the data at S3: the histogram is of the data that
    stays, whichever run's it is."""
    import threading

    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    from fasttext_lib.data import LabeledTexts, read_labeled
    from fasttext_lib.workspace import Workspace

    bucket, out = s3_bucket[len("s3://"):], str(tmp_path / "out")
    runs = {"a": Workspace(bucket, "p", out), "b": Workspace(bucket, "p", out)}
    data = {run: LabeledTexts(["1", "2"] * n, ["good food here", "bad"] * n) for run, n in (("a", 2), ("b", 3))}
    lengths = {"a": pd.Series([5, 9]), "b": pd.Series([1, 2, 3])}
    drawn, other = {}, threading.Thread(target=lambda: drawn.update(b=_run_01s_histogram_cells(
        runs["b"], "sample", lengths["b"], splits={"train": data["b"], "test": data["b"]})))

    def b_starts():  # B's run, as A's write begins (it waits for A's lock, if there is one, then goes on)
        other.start()
        other.join(timeout=5)
    drawn["a"] = _run_01s_histogram_cells(runs["a"], "sample", lengths["a"], before_the_write=b_starts,
                                          splits={"train": data["a"], "test": data["a"]})
    other.join()
    stays = {len(split): run for run, split in data.items()}[len(read_labeled(runs["a"].prepared("sample", "train")))]
    assert drawn["a"] != drawn["b"]
    assert (tmp_path / "out" / "sample" / "01_length_histogram.png").read_bytes() == drawn[stays], stays


def test_01s_files_of_data_another_run_has_written_since_are_not_written(tmp_path, s3_bucket, capsys):
    """Run A writes its data, run B its data and its histogram, then A saves its histogram (the order the lock of the
    write allows: above): A's is not written, said in one line, and B's stays beside B's data. Saved again by B, or by
    A once it has written its data again, it is written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.figures import png_bytes
    from fasttext_lib.workspace import Workspace
    from fasttext_lib.writers import write_fasttext_splits

    bucket, out = s3_bucket[len("s3://"):], str(tmp_path / "out")
    a, b = Workspace(bucket, "p", out), Workspace(bucket, "p", out)
    figs = {}
    for ws, n in ((a, 2), (b, 3)):
        with ws.writing_data("sample"):
            data = LabeledTexts(["1", "2"] * n, ["good food here", "bad"] * n)
            write_fasttext_splits({"train": data, "test": data}, ws.data, "sample")
        figs[ws], ax = plt.subplots()
        ax.plot(range(n))
    histogram = tmp_path / "out" / "sample" / "01_length_histogram.png"
    shown = b.save_dataset_files("sample", {"01_length_histogram.png": figs[b]})
    assert histogram.read_bytes() == png_bytes(figs[b], 100) and capsys.readouterr().err == ""
    assert a.save_dataset_files("sample", {"01_length_histogram.png": figs[a]}) == [None]  # (none of A's)
    assert histogram.read_bytes() == png_bytes(figs[b], 100)
    assert capsys.readouterr().err == f"not written: {shown[0]}: the data at s3://{bucket}/p/data/sample.* was written " \
        f"again by another run since this run wrote it; that run's files are of the data there\n"
    with a.writing_data("sample"):  # A's data again: its histogram is of it
        write_fasttext_splits({"train": data, "test": data}, a.data, "sample")
    a.save_dataset_files("sample", {"01_length_histogram.png": figs[a]})
    assert histogram.read_bytes() == png_bytes(figs[a], 100)
    plt.close("all")


def test_01s_last_cell_does_not_show_another_runs_histogram_as_its_own(tmp_path, s3_bucket, capsys):
    """Run B writes the data once run A's write cell has (the lock lets it, A's data written): A's write cell said
    "not written: PATH" of its histogram, and its last cell then printed "length histogram: PATH", B's histogram, as
    A's. It says the histogram is not written now; a run whose data stays prints its path (the committed output)."""
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.workspace import Workspace
    from fasttext_lib.writers import write_fasttext_splits

    bucket, out = s3_bucket[len("s3://"):], str(tmp_path / "out")
    a = Workspace(bucket, "p", out)
    data = {run: LabeledTexts(["1", "2"] * n, ["good food here", "bad"] * n) for run, n in (("a", 2), ("b", 3))}

    def b_writes_then_a_saves(dataset, files):  # (B's write between A's and A's save: its lock let go)
        write_fasttext_splits({"train": data["b"], "test": data["b"]}, a.data, dataset)
        return Workspace.save_dataset_files(a, dataset, files)
    a.save_dataset_files = b_writes_then_a_saves
    _run_01s_histogram_cells(a, "sample", pd.Series([5, 9]), splits={"train": data["a"], "test": data["a"]})
    captured = capsys.readouterr()
    histogram = f"{out}/sample/01_length_histogram.png"
    assert f"not written: {histogram}: the data at s3://{bucket}/p/data/sample.* was written again by another run " \
        f"since this run wrote it; that run's files are of the data there\n" == captured.err
    assert captured.out.splitlines()[-1] == "length histogram: not written: another run has written the data since " \
        "(above)", captured.out
    assert not (tmp_path / "out" / "sample" / "01_length_histogram.png").exists()
    del a.save_dataset_files  # (A alone: its histogram written, and its path printed)
    _run_01s_histogram_cells(a, "sample", pd.Series([5, 9]), splits={"train": data["a"], "test": data["a"]})
    assert capsys.readouterr().out.splitlines()[-1] == f"length histogram: {histogram}"


@pytest.mark.parametrize("answer", ["expired", "500"])
def test_01s_files_are_written_where_s3_cannot_say_what_its_data_is_now(tmp_path, s3_bucket, s3_proxy, capsys,
                                                                         answer):
    """01's histogram is saved only while the data this run wrote is still the data at S3 (HEADs of its objects).
    Where S3 cannot say (credentials expired since the write cell, an S3 that keeps failing), nothing tells two
    writes apart, and the histogram is written: it was not, said to be because another run had written the data."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.figures import png_bytes
    from fasttext_lib.workspace import Workspace
    from fasttext_lib.writers import write_fasttext_splits

    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path / "out"))
    with ws.writing_data("sample"):
        data = LabeledTexts(["1", "2"], ["good food here", "bad"])
        write_fasttext_splits({"train": data, "test": data}, ws.data, "sample")
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    s3_proxy.fail("HEAD", r"/p/data/sample\.", answer)
    ws.save_dataset_files("sample", {"01_length_histogram.png": fig})
    assert (tmp_path / "out" / "sample" / "01_length_histogram.png").read_bytes() == png_bytes(fig, 100)
    assert capsys.readouterr().err == ""
    plt.close(fig)


def test_01s_data_writes_wait_only_for_another_run_of_the_same_dataset(tmp_path, s3_bucket, capsys):
    """The lock of 01's data write (Workspace.writing_data) was the output_dir's own (the dataset folders' parent):
    01 on yelp waited, without a word, for all of 01 on ag_news (its download too). Now another dataset's write goes
    on at once, and one of the same dataset waits, saying so in one line, until the first is done."""
    import threading
    import time

    from fasttext_lib.workspace import Workspace

    bucket, out = s3_bucket[len("s3://"):], str(tmp_path / "out")
    a, b = Workspace(bucket, "p", out), Workspace(bucket, "p", out)
    entered = {name: threading.Event() for name in ("yelp", "sample")}

    def write(dataset):
        with b.writing_data(dataset):
            entered[dataset].set()
    with a.writing_data("sample"):
        other = threading.Thread(target=write, args=("yelp",), daemon=True)
        other.start()
        # (a bound on "for ever", A's lock being held for the block: 30 s, a loaded machine's thread could take)
        assert entered["yelp"].wait(120), "01 on yelp waited for 01 on sample"
        other.join()
        other = threading.Thread(target=write, args=("sample",), daemon=True)
        other.start()
        said, deadline = "", time.monotonic() + 60  # (a guard: a lock never said stays held until the block's end)
        while "waiting" not in said and time.monotonic() < deadline:
            said += capsys.readouterr().err
            other.join(0.05)
        assert said == f"waiting for another run of notebook 01 writing s3://{bucket}/p/data/sample.* to finish\n"
        assert not entered["sample"].is_set()
    other.join()
    assert entered["sample"].is_set() and capsys.readouterr().err == ""


def _run_03s_last_cell(ws, dataset, rows, timing_text="yelp-shaped"):
    """03's last cell, as committed, on tables of ``rows`` rows and a chart: what it saves, and the lines it prints."""
    import matplotlib.pyplot as plt
    import pandas as pd

    from fasttext_lib.costs import timing_files

    tables = {name: pd.DataFrame({"x": range(rows)}, index=pd.Index(range(rows), name=name))
              for name in ("timings", "prices", "costs", "recipes")}
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    exec(code_cells(read(SERIES[2]))[-1].source, {**tables, "fig": fig, "ws": ws, "dataset": dataset,  # noqa: S102
                                                  "timing_text": timing_text, "timing_files": timing_files})
    plt.close(fig)


def test_01_and_03_write_their_files_in_the_datasets_folder(tmp_path, capsys):
    """01's 01_length_histogram.png, and 03's 03_throughput.png and 03_recipes.csv, were written in output_dir itself:
    01 run on synthetic replaced the sample's histogram. They go to output_dir/{dataset}/ now (the folder of 02's and
    04's run of it, by default), 03 saves its timings, prices and costs too, and each last cell lists what it wrote."""
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    from fasttext_lib.figures import png_software
    from fasttext_lib.workspace import Workspace

    ws = Workspace("bkt", "p", str(tmp_path / "out"))
    for dataset, lengths in (("sample", [3, 4, 5]), ("synthetic", [150, 160])):
        _run_01s_histogram_cells(ws, dataset, pd.Series(lengths))
        assert f"length histogram: {tmp_path}/out/{dataset}/01_length_histogram.png\n" in capsys.readouterr().out
    for dataset, rows in (("sample", 1), ("exp/drug", 2)):
        _run_03s_last_cell(ws, dataset, rows)
        names = ["03_timings_yelp-shaped.csv", "03_throughput_yelp-shaped.png", "03_prices_yelp-shaped.csv",
                 "03_costs_yelp-shaped.csv", "03_recipes_yelp-shaped.csv"]
        assert capsys.readouterr().out == "".join(f"written: {tmp_path}/out/{dataset}/{n}\n" for n in names)
    files = sorted(str(p.relative_to(ws.out)) for p in ws.out.rglob("*") if p.is_file())
    in_sample = sorted(["01_length_histogram.png", *names])
    assert files == [*(f"exp/drug/{n}" for n in sorted(names)), *(f"sample/{n}" for n in in_sample),
                     "synthetic/01_length_histogram.png"]
    assert png_software(ws.out / "sample" / "01_length_histogram.png") == "fasttext_lib"
    costs = [pd.read_csv(ws.out / folder / "03_costs_yelp-shaped.csv", index_col=0) for folder in ("sample", "exp/drug")]
    assert [len(table) for table in costs] == [1, 2]


def test_03s_files_of_a_timing_of_the_datasets_text_and_of_yelp_shaped_text_are_both_kept(tmp_path, capsys):
    """03 run with timing_text="dataset" and again with "yelp-shaped" (its default) on one dataset wrote the same
    file names in its folder: the second run replaced the first's timings, chart, costs and recipes. Each name now says
    which text was timed, and both runs' files stay."""
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    from fasttext_lib.costs import TIMING_TEXTS, timing_files
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.workspace import Workspace

    ws = Workspace("bkt", "p", str(tmp_path / "out"))
    _run_03s_last_cell(ws, "sample", 1, timing_text="dataset")
    _run_03s_last_cell(ws, "sample", 2, timing_text="yelp-shaped")
    kinds = ("timings", "throughput", "prices", "costs", "recipes")
    assert sorted(p.name for p in (ws.out / "sample").iterdir()) == sorted(
        f"03_{kind}_{text}.{'png' if kind == 'throughput' else 'csv'}" for kind in kinds for text in TIMING_TEXTS)
    assert [len(pd.read_csv(ws.out / "sample" / f"03_timings_{text}.csv", index_col=0))
            for text in ("dataset", "yelp-shaped")] == [1, 2]
    with pytest.raises(FastTextError, match="^timing_text must be one of yelp-shaped, dataset, got 'Dataset'"):
        timing_files("Dataset", timings=pd.DataFrame())


@pytest.mark.parametrize("name", ["downloads", "downloads/mine", "Downloads"])
def test_no_dataset_or_run_takes_the_folder_of_01s_download_cache(tmp_path, name):
    """01 downloads a Zhang et al. archive into {output_dir}/downloads, and a dataset's figures and tables go to
    {output_dir}/{dataset}/, a run's history to {output_dir}/{run_name}/: a dataset or run named downloads put them in
    the cache (Downloads: the same folder where names are case-blind, macOS's). Each is one line in the check cell."""
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.workspace import Workspace

    ws = Workspace("bkt", "p", str(tmp_path / "out"))
    cache = cell_with(SERIES[0], "prepare(dataset")
    assert "cache_dir=str(ws.download_cache)" in cache and ws.download_cache == tmp_path / "out" / "downloads"
    for folder, parameter, holding in ((ws.dataset_folder, "dataset", "its figures and tables"),
                                       (ws.run_folder, "run_name", "its history")):
        with pytest.raises(FastTextError, match=f"^{parameter} '{name}' cannot be a folder of output_dir for {holding}: "
                                                f"{tmp_path}/out/downloads is notebook 01's download cache; give "
                                                f"another name$"):
            folder(name)
    assert ws.dataset_folder("downloads2") == tmp_path / "out" / "downloads2" and not (tmp_path / "out").exists()


def test_a_datasets_files_are_written_together_or_not_at_all(tmp_path, s3_bucket):
    """03's tables and chart are put in place together: one that cannot be (a folder of that name in the way) leaves
    every earlier one as it was, not new timings beside an earlier run's costs. A file where the dataset's folder would
    be is one line in 01's and 03's check cells, before the work."""
    import pandas as pd

    from fasttext_lib.errors import FastTextError
    from fasttext_lib.workspace import Workspace

    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path / "out"))
    ws.save_dataset_files("sample", {"03_timings.csv": pd.DataFrame({"x": [1]})})
    (ws.out / "sample" / "03_costs.csv").mkdir()
    with pytest.raises(FastTextError, match=r"^cannot write .*/sample/03_costs.csv: it is a directory$"):
        ws.save_dataset_files("sample", {"03_timings.csv": pd.DataFrame({"x": [2]}),
                                         "03_costs.csv": pd.DataFrame({"x": [2]})})
    assert pd.read_csv(ws.out / "sample" / "03_timings.csv", index_col=0).x.tolist() == [1]
    assert sorted(p.name for p in (ws.out / "sample").iterdir()) == ["03_costs.csv", "03_timings.csv"]
    (ws.out / "mine").write_text("the user's\n")
    for name in SERIES[0], SERIES[2]:
        with pytest.raises(FastTextError, match=r"^dataset 'mine' cannot be a folder of output_dir for its figures and "
                                                r"tables: .*mine exists and is not a directory$"):
            run_after_papermill(name, {"bucket": s3_bucket[len("s3://"):], "output_dir": str(ws.out),
                                       "dataset": "mine", **({"train_file": "x.csv"} if name == SERIES[0] else {})})
    assert (ws.out / "mine").read_text() == "the user's\n"
