"""Shared fixtures: a real S3 endpoint (moto's server mode on 127.0.0.1) and small datasets.

Clients are pointed at the server through the standard ``AWS_ENDPOINT_URL`` variable, so boto3,
smart_open and the sagemaker SDK all exercise their real HTTP code paths.
"""
import os
import socket
import subprocess
import sys
import uuid

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def s3_server():
    from moto.server import ThreadedMotoServer

    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    env = {
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    yield env
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    server.stop()


@pytest.fixture
def s3_bucket(s3_server):
    import boto3

    name = "test-" + uuid.uuid4().hex[:12]
    boto3.client("s3").create_bucket(Bucket=name)
    return f"s3://{name}"


@pytest.fixture(scope="session")
def sample_dir(tmp_path_factory):
    """The built-in synthetic corpus, small: train.csv / test.csv in Zhang CSV format."""
    from fasttext_lib.data import LabeledTexts, write_csv
    from fasttext_lib.synthetic import generate_reviews

    out = tmp_path_factory.mktemp("sample")
    data = generate_reviews(4400, seed=3)
    write_csv(LabeledTexts(data.labels[:4000], data.texts[:4000]), str(out / "train.csv"))
    write_csv(LabeledTexts(data.labels[4000:], data.texts[4000:]), str(out / "test.csv"))
    return out


def run_cli(*args, env=None, input=None):
    """Run ``python -m fasttext_lib`` in a subprocess, as a user would."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = ROOT + os.pathsep + full_env.get("PYTHONPATH", "")
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, "-m", "fasttext_lib", *map(str, args)], capture_output=True, text=True,
                          env=full_env, input=input, timeout=600)
