"""The notebook series, executed with papermill against the local S3 server (tests/conftest.py).

One module-scoped chain: 01 writes the data to S3, 02 trains (adam, then sgd) and saves bundles,
03 times the devices present, 04 loads the adam bundle. Each notebook runs with a temporary cwd
and output_dir, so nothing depends on where pytest was started. Small sizes keep it quick.
"""
import ast
import os
import uuid

import nbformat
import pandas as pd
import pytest

from conftest import ROOT

NOTEBOOKS = os.path.join(ROOT, "notebooks")
SERIES = ["01_data_prep.ipynb", "02_train_gpu.ipynb", "03_cpu_vs_gpu.ipynb", "04_inference.ipynb"]
EPOCHS = 2


@pytest.fixture(scope="module")
def chain(s3_server, tmp_path_factory):
    """Bucket + prefix shared by the whole series; the kernel finds fasttext_lib via PYTHONPATH."""
    import boto3

    bucket = "nb-" + uuid.uuid4().hex[:12]
    boto3.client("s3").create_bucket(Bucket=bucket)
    saved = os.environ.get("PYTHONPATH")
    # The kernel inherits this environment; a relative PYTHONPATH (".") would break under another cwd.
    os.environ["PYTHONPATH"] = os.pathsep.join([ROOT] + ([saved] if saved else []))
    yield {"bucket": bucket, "prefix": "nbtest", "tmp": tmp_path_factory.mktemp("notebooks")}
    if saved is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = saved


def run_notebook(chain, name, tag, **params):
    import papermill

    workdir = chain["tmp"] / tag
    out_dir = workdir / "out"
    workdir.mkdir()
    parameters = {"bucket": chain["bucket"], "prefix": chain["prefix"], "output_dir": str(out_dir), **params}
    papermill.execute_notebook(os.path.join(NOTEBOOKS, name), str(workdir / name), parameters=parameters,
                               kernel_name="python3", cwd=str(workdir), progress_bar=False)
    return out_dir


def s3_keys(bucket, prefix):
    import boto3

    listing = boto3.client("s3").list_objects_v2(Bucket=bucket, Prefix=prefix)
    return {obj["Key"] for obj in listing.get("Contents", [])}


def test_every_notebook_is_thin_and_parameterized():
    for name in SERIES:
        nb = nbformat.read(os.path.join(NOTEBOOKS, name), as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert any("parameters" in c.metadata.get("tags", []) for c in code), f"{name}: no cell tagged parameters"
        for cell in code:
            ast.parse(cell.source)  # valid Python (no magics)
            for line in cell.source.splitlines():
                assert not line.startswith(("def ", "class ")), f"{name}: defines {line!r}; put it in fasttext_lib"
        # committed executed (make notebooks), so nbval has outputs to compare against
        assert all(c.execution_count for c in code), f"{name}: committed without outputs; run make notebooks"


def test_01_data_prep(chain):
    out = run_notebook(chain, SERIES[0], "01", train_docs=3000, test_docs=500)
    assert (out / "01_length_histogram.png").stat().st_size > 0
    keys = s3_keys(chain["bucket"], chain["prefix"] + "/data/")
    assert keys == {f"{chain['prefix']}/data/sample.train", f"{chain['prefix']}/data/sample.test"}


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_02_train(chain, optimizer):
    out = run_notebook(chain, SERIES[1], f"02-{optimizer}", optimizer=optimizer, epochs=EPOCHS, buckets=20000,
                       batch_size=512, run_name=optimizer)
    history = pd.read_csv(out / "history.csv")
    assert list(history.epoch) == list(range(1, EPOCHS + 1))
    assert history.val_accuracy.notna().all()
    assert (out / "history.png").stat().st_size > 0
    keys = s3_keys(chain["bucket"], f"{chain['prefix']}/models/{optimizer}/")
    assert {k.rsplit("/", 1)[1] for k in keys} == {"config.json", "model.params", "vocab.json", "metrics.json"}


def test_03_cpu_vs_gpu(chain):
    out = run_notebook(chain, SERIES[2], "03", batches=3, batch_size=256, buckets=20000, dense_batches=5)
    assert (out / "03_throughput.png").stat().st_size > 0
    recipes = pd.read_csv(out / "03_recipes.csv", index_col="recipe")
    assert len(recipes) == 2 and (recipes.samples_per_s > 0).all()


def test_04_inference(chain):
    out = run_notebook(chain, SERIES[3], "04", run_name="adam")
    predictions = pd.read_csv(out / "04_predictions.csv", dtype={"label": str})
    assert len(predictions) >= 4
    assert set(predictions.label) <= {"1", "2"}
    assert predictions.probability.between(0, 1).all()
    assert (out / "04_confusion_matrix.png").stat().st_size > 0
