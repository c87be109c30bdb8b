"""The training job run by the real training toolkits, as the MXNet 1.9 training container runs it.

The image sets ``SAGEMAKER_TRAINING_MODULE=sagemaker_mxnet_container.training:main`` and SageMaker starts it
with ``train`` (sagemaker-training's ``cli.train``): the toolkit reads ``/opt/ml`` (here ``SAGEMAKER_BASE_DIR``),
calls the MXNet toolkit's ``main``, which downloads ``sagemaker_submit_directory`` to ``/opt/ml/code``, runs
``pip install -r requirements.txt`` there and then ``python fasttext_lib/entry_point.py --key value ...``, and
writes ``output/success`` or ``output/failure``.

``/opt/ml`` is laid out from the CreateTrainingJob request the real SDK sends (moto): its hyperparameters as the
SDK encodes them, its channels in File mode with their S3 objects downloaded, one host. tests/test_sagemaker.py
emulates the same container (faster, and for every case); this file checks that emulation against the toolkits.
"""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT, held_once_there
from fasttext_lib import sm_train
from fasttext_lib.errors import FastTextError
from fasttext_lib.predict import Predictor
from fasttext_lib.writers import write_fasttext
from test_sagemaker import FAST, NAMES, REVIEWS, ROLE, bundle_names, s3_get, sm, splits  # noqa: F401 (fixtures)

TRAINING_MODULE = "sagemaker_mxnet_container.training:main"  # the MXNet 1.9 training image's SAGEMAKER_TRAINING_MODULE
HOST = "algo-1"


def start_job(sm, splits, job_name, channels=("train", "test"), **hyperparameters):
    """The estimator's fit on a train and a test channel (``channels``: their names): the CreateTrainingJob request
    it sends."""
    from fasttext_lib.sagemaker_utils import make_estimator

    data = f"s3://{sm.bucket}/ft/data"
    write_fasttext(splits[0], f"{data}/sample.train")
    write_fasttext(splits[1], f"{data}/sample.test")
    estimator = make_estimator(sm.bucket, "ft", hyperparameters={**FAST, "optimizer": "adam", **hyperparameters},
                               role=ROLE, session=sm.session)
    estimator.fit(dict(zip(channels, (f"{data}/sample.train", f"{data}/sample.test"))), wait=False, job_name=job_name)
    return sm.request("CreateTrainingJob")


def lay_out_opt_ml(root, job):
    """``/opt/ml`` under ``root`` as SageMaker lays it out for the request ``job`` on one instance."""
    config = root / "input" / "config"
    config.mkdir(parents=True)
    # the request's hyperparameters as they are: every value a JSON-encoded string, as the SDK sent it
    (config / "hyperparameters.json").write_text(json.dumps(job["HyperParameters"]))
    default_mode = job["AlgorithmSpecification"]["TrainingInputMode"]
    input_config = {}
    for channel in job["InputDataConfig"]:
        source = channel["DataSource"]["S3DataSource"]
        input_config[channel["ChannelName"]] = {
            "TrainingInputMode": channel.get("InputMode", default_mode),
            "S3DistributionType": source.get("S3DataDistributionType", "FullyReplicated"),
            "RecordWrapperType": channel.get("RecordWrapperType", "None")}
        folder = root / "input" / "data" / channel["ChannelName"]  # File mode: the objects, downloaded
        folder.mkdir(parents=True)
        (folder / source["S3Uri"].rsplit("/", 1)[1]).write_bytes(s3_get(source["S3Uri"]))
    (config / "inputdataconfig.json").write_text(json.dumps(input_config))
    instance_type = job["ResourceConfig"]["InstanceType"]
    group = {"instance_group_name": "homogeneousCluster", "instance_type": instance_type, "hosts": [HOST]}
    (config / "resourceconfig.json").write_text(json.dumps({
        "current_host": HOST, "current_instance_type": instance_type, "current_group_name": "homogeneousCluster",
        "hosts": [HOST], "instance_groups": [group], "network_interface_name": "eth0"}))
    (root / "model").mkdir()
    (root / "output" / "data").mkdir(parents=True)
    return root


def run_train_command(opt_ml):
    """The container's ``train`` command; the code comes from S3 (moto, through ``AWS_ENDPOINT_URL``)."""
    argv, kwargs = train_command(opt_ml)
    return subprocess.run(argv, **kwargs, capture_output=True, text=True, timeout=600)


def train_command(opt_ml):
    """``(argv, keyword arguments)`` for subprocess: the container's ``train`` command in the image's WORKDIR."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SM_", "SAGEMAKER_", "DMLC_")) and k != "PYTHONPATH"}  # no checkout on the path
    env.update(SAGEMAKER_BASE_DIR=str(opt_ml), SAGEMAKER_TRAINING_MODULE=TRAINING_MODULE,
               PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1",  # as the image sets them
               # The toolkit waits (up to 15 minutes) until every host name resolves; algo-1 does only in SageMaker's
               # network. This is the toolkit's own switch to skip that wait, and it skips nothing else.
               SM_STUDIO_LOCAL_MODE="true",
               # requirements.txt must already be satisfied by the image (the venv here): pip then reaches no index,
               # and a job in a VPC without internet access starts. Were anything missing, pip fails the job.
               PIP_NO_INDEX="1")
    train = os.path.join(os.path.dirname(sys.executable), "train")  # sagemaker-training's console script
    return [train], dict(cwd="/", env=env)  # the image's WORKDIR


def test_the_job_runs_through_the_training_toolkits(sm, splits, tmp_path):
    job = start_job(sm, splits, "ft-toolkit-1", label_names=NAMES)
    opt_ml = lay_out_opt_ml(tmp_path / "opt_ml", job)
    r = run_train_command(opt_ml)
    log = r.stdout + r.stderr
    assert r.returncode == 0, log
    assert (opt_ml / "output" / "success").exists() and not (opt_ml / "output" / "failure").exists()

    # The toolkit installed requirements.txt (offline: everything was there) and ran the staged entry point.
    assert "Installing dependencies from requirements.txt" in log
    assert re.search(r"Requirement already satisfied: gluonnlp==0\.10\.0", log), log
    code = opt_ml / "code"
    assert (code / "requirements.txt").exists() and (code / "fasttext_lib" / "entry_point.py").exists()
    assert f"from {code / 'fasttext_lib'};" in r.stdout  # the uploaded library, not the checkout's
    pythonpath = re.search(r"^PYTHONPATH=(.*)$", log, re.M).group(1).split(os.pathsep)  # what the toolkit set
    assert pythonpath[0] == str(code) and ROOT not in pythonpath
    assert f"train channel: {len(splits[0])} documents from 1 file(s)" in r.stdout
    assert f"test channel: {len(splits[1])} documents from 1 file(s)" in r.stdout

    # The hyperparameters arrived as the SDK sent them, the platform's own ignored.
    model_dir = opt_ml / "model"
    assert sorted(os.listdir(model_dir)) == sorted(bundle_names(model_dir))
    predictor = Predictor.load(model_dir)
    train_config = predictor.config["train_config"]
    assert {k: train_config[k] for k in FAST} == FAST
    assert (train_config["optimizer"], train_config["progress"], train_config["ctx"]) == ("adam", False, "cpu")
    assert predictor.names == ["negative", "positive"]
    assert predictor.evaluate(splits[1])["accuracy"] >= 0.7  # chance is 0.5
    assert len(predictor.predict(REVIEWS)) == len(REVIEWS)
    assert sorted(os.listdir(opt_ml / "output" / "data")) == ["history.csv", "history.png", "metrics.json"]

    # What SageMaker reads from the job's log with the estimator's metric definitions: one value per epoch.
    assert job["AlgorithmSpecification"]["MetricDefinitions"] == sm_train.METRIC_DEFINITIONS
    history = pd.read_csv(opt_ml / "output" / "data" / "history.csv")
    assert list(history.epoch) == list(range(1, FAST["epochs"] + 1))
    # (history.csv names the held-out columns after the channel, the test channel's here; the log keeps val_)
    columns = {"train:loss": "train_loss", "validation:loss": "test_loss", "validation:accuracy": "test_accuracy"}
    for definition in sm_train.METRIC_DEFINITIONS:
        values = [float(v) for v in re.findall(definition["Regex"], log)]
        assert values == pytest.approx(list(history[columns[definition["Name"]]]), abs=1e-6), definition


def test_a_bad_hyperparameter_fails_the_job_through_the_toolkits_with_its_one_line_reason(sm, splits, tmp_path,
                                                                                         monkeypatch):
    from fasttext_lib import sagemaker_utils

    # make_estimator refuses it before a job exists; a job created otherwise (boto3, the console) still gets it
    with pytest.raises(FastTextError, match="^bad hyperparameter: argument --epochs: expected an integer, got 'three'$"):
        start_job(sm, splits, "ft-toolkit-2", epochs="three")
    monkeypatch.setattr(sagemaker_utils, "check_hyperparameters", lambda hyperparameters: None)
    job = start_job(sm, splits, "ft-toolkit-2", epochs="three")
    opt_ml = lay_out_opt_ml(tmp_path / "opt_ml", job)
    r = run_train_command(opt_ml)
    assert r.returncode != 0, r.stdout + r.stderr
    # The script's line is the FailureReason: the toolkit writes its own (ExecuteUserScriptError, ErrorMessage "")
    # only where there is none yet.
    errors = [line for line in r.stderr.splitlines() if line.startswith("error: ")]
    assert errors == ["error: bad hyperparameter: argument --epochs: expected an integer, got 'three'"], r.stdout + r.stderr
    assert (opt_ml / "output" / "failure").read_text() == errors[0]
    assert "ExecuteUserScriptError" in r.stdout + r.stderr  # the toolkit did see the script fail
    assert os.listdir(opt_ml / "model") == [] and not (opt_ml / "output" / "success").exists()



def test_a_job_given_its_training_data_as_a_training_channel_fails_asking_whether_train_was_meant(sm, splits,
                                                                                                   tmp_path):
    # The toolkit sets SM_CHANNEL_TRAINING and SM_CHANNEL_VALIDATION: the job said "SM_CHANNEL_TRAIN not set ...: this
    # runs inside a SageMaker training container", as if it ran outside one, naming neither channel.
    job = start_job(sm, splits, "ft-toolkit-3", channels=("training", "validation"))
    opt_ml = lay_out_opt_ml(tmp_path / "opt_ml", job)
    r = run_train_command(opt_ml)
    assert r.returncode != 0, r.stdout + r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("error: ")]
    assert errors == ["error: the training channel is not read by this job, which reads train, test (or validation) "
                      "and pretrained: did you mean train for training? fit({'train': ..., 'test': ...})"], r.stderr
    assert (opt_ml / "output" / "failure").read_text() == errors[0]
    assert os.listdir(opt_ml / "model") == [] and not (opt_ml / "output" / "success").exists()


def test_a_spot_interrupted_job_restarted_with_its_checkpoints_ends_as_an_uninterrupted_one(sm, splits, tmp_path):
    """A managed-spot job through the toolkits: the instance is lost (every process of the container killed, as the
    SIGKILL after SageMaker's grace period does) once epoch 1's checkpoint is written; the job restarts on a fresh
    /opt/ml with the checkpoints SageMaker copies back, resumes, and writes the model an uninterrupted job writes."""
    import signal
    import time

    checkpoints = tmp_path / "checkpoints"  # the job's /opt/ml/checkpoints, as SageMaker restores it
    job = start_job(sm, splits, "ft-toolkit-spot", checkpoint_dir=str(checkpoints))
    first = lay_out_opt_ml(tmp_path / "first", job)
    argv, kwargs = train_command(first)
    # The job is held in epoch 2 once epoch 1's checkpoint is whole, until killed: its epochs take a tenth of a second,
    # and a loaded machine's test looked again only once the job had ended. (The toolkit hands its sys.path, and so
    # this folder, to the processes it starts: the hold is the entry point's alone.)
    held = tmp_path / "held"
    held.mkdir()
    (held / "sitecustomize.py").write_text("import sys\nif sys.argv[0].endswith('entry_point.py'):\n" + "".join(
        f"    {line}\n" for line in held_once_there(checkpoints / "epoch-0001" / "checkpoint.json").splitlines()))
    kwargs["env"]["PYTHONPATH"] = str(held)
    proc = subprocess.Popen(argv, **kwargs, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.time() + 300
        while not (checkpoints / "epoch-0001" / "checkpoint.json").exists():
            assert proc.poll() is None and time.time() < deadline, "no checkpoint for epoch 1"
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the container's every process
        proc.wait()
    assert not (first / "output" / "success").exists() and os.listdir(first / "model") == []

    restarted = lay_out_opt_ml(tmp_path / "restarted", job)
    r = run_train_command(restarted)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"resuming from the checkpoint in .*: epoch 1 of 3 done", r.stdout + r.stderr), r.stderr
    never_stopped = dict(job, HyperParameters=dict(job["HyperParameters"], checkpoint_dir=json.dumps("none")))
    whole = lay_out_opt_ml(tmp_path / "whole", never_stopped)
    r = run_train_command(whole)
    assert r.returncode == 0, r.stdout + r.stderr
    resumed, uninterrupted = Predictor.load(restarted / "model").model, Predictor.load(whole / "model").model
    np.testing.assert_array_equal(resumed.embedding_table(), uninterrupted.embedding_table())
    np.testing.assert_array_equal(resumed.output.weight.data().asnumpy(), uninterrupted.output.weight.data().asnumpy())
    assert sorted(os.listdir(checkpoints)) == ["epoch-0003"]


@pytest.mark.parametrize("name", ["epochs", "e", "5", "55", "", "-", "--", "---epochs", " "])
def test_the_job_and_make_estimator_read_a_hyperparameters_name_as_the_toolkit_writes_it(name):
    # make_estimator's check wrote "" as "-" (the toolkit: ""), and the job read "-" (the toolkit's "--") and "--"
    # (its "----") as the name "", which it passed as nothing at all
    from sagemaker_training.mapping import to_cmd_args

    from fasttext_lib.sagemaker_utils import _toolkit_name

    argv = to_cmd_args({name: 1})
    assert argv[0] == _toolkit_name(name)
    assert sm_train.names_given(argv) == [name]
