"""Generate the notebook series notebooks/01..04 from the cell sources below (nbformat, no outputs).

The notebooks are thin: narrative, a ``parameters`` cell (papermill), calls into fasttext_lib and
plots. No function or class is defined in a cell (tests/test_notebooks.py checks). Rerun after
editing: ``python scripts/make_notebooks.py`` (``--output DIR`` writes them elsewhere).
"""
import argparse
import os

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = os.path.join(ROOT, "notebooks")

# Shared setup: import fasttext_lib (installed, on PYTHONPATH, or found from the cwd of a checkout)
# and resolve output_dir relative to the notebooks/ folder, whatever cwd papermill was given.
SETUP = '''import os
import sys
from pathlib import Path

try:
    import fasttext_lib
except ImportError:  # not installed: look for the checkout from the working directory upwards
    for candidate in [Path.cwd(), *Path.cwd().parents]:
        if (candidate / "fasttext_lib" / "__init__.py").is_file():
            sys.path.insert(0, str(candidate))
            break
    import fasttext_lib

import matplotlib.pyplot as plt
import pandas as pd

ROOT = Path(fasttext_lib.__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks" if (ROOT / "notebooks").is_dir() else Path.cwd()
OUT = (NOTEBOOK_DIR / output_dir).resolve()  # an absolute output_dir is kept as it is
OUT.mkdir(parents=True, exist_ok=True)
SHOWN_OUT = OUT.relative_to(ROOT) if ROOT in OUT.parents else OUT  # printed without machine-specific prefixes
S3_BASE = f"s3://{bucket}/{prefix}"
DATA = f"{S3_BASE}/data"
# The S3 endpoint is the ambient AWS configuration: real S3 on SageMaker, AWS_ENDPOINT_URL locally.
# These notebooks never create buckets: the bucket must exist (the local demo/tests create theirs).'''


def md(text):
    return new_markdown_cell(text.strip("\n"))


def code(text, tags=()):
    cell = new_code_cell(text.strip("\n"))
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def params(text):
    return code(text, tags=["parameters"])


NB01 = [
    md("""
# 01 · Data preparation

Get the reviews, look at them, normalize them the way fastText's `classification-example.sh` does
and write `.train` / `.test` files in fastText format straight to S3, where notebook 02 streams them
from. `dataset="sample"` uses the built-in synthetic corpus (no download, seconds); any Zhang et al.
name (`yelp_review_polarity`, `ag_news`, ...) downloads the real data (`train_docs` caps each split,
`None` for all of it).
"""),
    params('''bucket = "fasttext-demo"
prefix = "fasttext"
dataset = "sample"
output_dir = "../build/demo"
seed = 0
train_docs = 20000
test_docs = 2000'''),
    code(SETUP + '''

from fasttext_lib.data import LabeledTexts, read_labeled, write_fasttext
from fasttext_lib.download import prepare
from fasttext_lib.synthetic import generate_reviews'''),
    md("""
## Get the data

The sample is generated in memory (raw text, Yelp-like noise included) and written below. A real
dataset is downloaded (cached, md5-checked), normalized and written to S3 by `prepare`, then read
back for the summary.
"""),
    code('''if dataset == "sample":
    corpus = generate_reviews(train_docs + test_docs, seed=seed)
    splits = {"train": corpus.head(train_docs),
              "test": LabeledTexts(corpus.labels[train_docs:], corpus.texts[train_docs:])}
    written = {}
else:
    written = prepare(dataset, DATA, cache_dir=str(OUT / "downloads"), limit=train_docs)
    splits = {name: read_labeled(uri) for name, uri in written.items()}
frames = {name: pd.DataFrame({"label": split.labels, "text": split.texts}) for name, split in splits.items()}
frames["train"].head(3).assign(text=lambda f: f.text.str.slice(0, 80))'''),
    md("## Summary: rows, class balance, review length"),
    code('''summary = pd.DataFrame({name: {"rows": len(frame), "classes": frame.label.nunique()} for name, frame in frames.items()}).T
summary'''),
    code('''balance = pd.concat({name: frame.label.value_counts(normalize=True).sort_index().round(3) for name, frame in frames.items()}, axis=1)
balance.index.name = "label"
balance'''),
    code('''lengths = frames["train"].text.str.split().str.len()
lengths.describe().round(1)'''),
    code('''fig, ax = plt.subplots(figsize=(7, 3.5))
ax.hist(lengths, bins=50, color="tab:blue")
ax.set_xlabel("words per review")
ax.set_ylabel("reviews")
ax.set_title(f"{dataset}: review length (train split)")
fig.tight_layout()
fig.savefig(OUT / "01_length_histogram.png", dpi=100)
plt.show()'''),
    md("""
## Normalize and write to S3

`write_fasttext` lower-cases, separates punctuation and drops the `<br />` / literal `\\n` noise
(`fasttext_lib.text.normalize_text`), prefixes each line with `__label__<class>` and uploads the
file as one atomic PUT.
"""),
    code('''if not written:
    written = {name: write_fasttext(split, f"{DATA}/{dataset}.{name}") for name, split in splits.items()}
written'''),
    md("Read a few lines back through smart_open (the same streaming reader training uses) to prove the round trip."),
    code('''from smart_open import open as s3_open

with s3_open(written["train"], "r", encoding="utf-8") as f:
    for _, line in zip(range(3), f):
        print(line[:100].rstrip())
print("lines in train file:", sum(1 for _ in s3_open(written["train"], "r", encoding="utf-8")))'''),
    code('''print("training data:  ", written["train"])
print("test data:      ", written["test"])
print("length histogram:", SHOWN_OUT / "01_length_histogram.png")'''),
]

NB02 = [
    md("""
# 02 · Train (GPU when there is one)

Stream the fastText files from S3, train the classifier with `fasttext_lib.train.train` (the same
loop the CLI uses) and save the bundle back to S3 with the sagemaker SDK. `ctx="auto"` trains on
every visible GPU and falls back to the CPU. Rerun with other settings through papermill:
`papermill 02_train_gpu.ipynb out.ipynb -p optimizer sgd -p epochs 25`.
"""),
    params('''bucket = "fasttext-demo"
prefix = "fasttext"
dataset = "sample"
output_dir = "../build/demo"
seed = 42
optimizer = "adam"
epochs = 5
lr = None  # None: the optimizer's default (adam 0.01, sgd 8.0)
emsize = 100
ngrams = 2
buckets = 200000
batch_size = 1024
ctx = "auto"
run_name = "sample"
use_training_job = False  # True: also run this training as a SageMaker training job (billed, needs a role)
tune = False  # True (with use_training_job): a HyperparameterTuner over lr / emsize / ngrams
role = None  # SageMaker execution role ARN; None: $SAGEMAKER_ROLE, else this notebook instance's role
training_instance_type = "ml.g4dn.xlarge"  # training job instance (ml.m5.xlarge: CPU only)'''),
    code(SETUP + '''

from fasttext_lib.bundle import save_bundle
from fasttext_lib.config import TrainConfig
from fasttext_lib.data import read_labeled
from fasttext_lib.devices import describe_ctx
from fasttext_lib.train import train'''),
    md("## Stream the data from S3"),
    code('''train_uri, test_uri = f"{DATA}/{dataset}.train", f"{DATA}/{dataset}.test"
train_data, test_data = read_labeled(train_uri), read_labeled(test_uri)
print(f"train: {len(train_data)} reviews, test: {len(test_data)} reviews, labels {train_data.label_names()}")'''),
    md("## Train\n\nThe progress bar goes to stderr (timings live there, not in the compared output)."),
    code('''config = TrainConfig(epochs=epochs, lr=lr, optimizer=optimizer, emsize=emsize, ngrams=ngrams, buckets=buckets,
                     batch_size=batch_size, ctx=ctx, seed=seed, progress=True)
trained = train(train_data, test_data, config)'''),
    code('''# NBVAL_IGNORE_OUTPUT
print("trained on:", describe_ctx(trained.ctx))
trained.history_frame()[["seconds", "samples_per_s"]].round(1)'''),
    md("## History\n\nPer-epoch loss and accuracy on the test split (wall-clock columns are in the cell above)."),
    code('''history = trained.history_frame()
history.drop(columns=["seconds", "samples_per_s"]).round(4)'''),
    code('''fig, (ax_acc, ax_loss) = plt.subplots(1, 2, figsize=(10, 3.5))
ax_acc.plot(history.index, history.val_accuracy, marker="o")
ax_acc.set_xlabel("epoch")
ax_acc.set_ylabel("test accuracy")
ax_loss.plot(history.index, history.train_loss, marker="o", label="train")
ax_loss.plot(history.index, history.val_loss, marker="o", label="test")
ax_loss.set_xlabel("epoch")
ax_loss.set_ylabel("cross-entropy")
ax_loss.legend()
fig.suptitle(f"{run_name}: {optimizer}, {ngrams}-grams, emsize {emsize}")
fig.tight_layout()
fig.savefig(OUT / "history.png", dpi=100)
plt.show()
history.to_csv(OUT / "history.csv")'''),
    md("## Save the bundle to S3\n\n`save_bundle` uploads params, vocabulary, metrics and config (last) with the sagemaker SDK's `S3Uploader`."),
    code('''# NBVAL_IGNORE_OUTPUT (the sagemaker SDK logs its config-file lookups, with home paths, to stdout)
bundle_uri = save_bundle(trained, f"{S3_BASE}/models/{run_name}")
print("bundle:", bundle_uri)'''),
    md("""
## The same training as a SageMaker training job (off by default)

With `use_training_job = True` the run above goes to a training job instead of tying up the notebook
instance: `make_estimator` builds a `sagemaker.mxnet.MXNet` estimator (MXNet 1.9.0, py38) whose entry
point, `fasttext_lib/entry_point.py`, maps the hyperparameters onto `TrainConfig`, reads the `train` and
`test` channels and saves the bundle as the job's `model.tar.gz`; `fetch_job_model` turns that back
into a bundle next to the local one. Every S3 location is under `s3://{bucket}/{prefix}/` and SDK
telemetry is off. The job is billed by the second on `training_instance_type`.
"""),
    code('''if use_training_job:
    from fasttext_lib.predict import Predictor
    from fasttext_lib.packaging import fetch_job_model, stage_source_dir
    from fasttext_lib.sagemaker_utils import make_estimator, sagemaker_session

    session = sagemaker_session(default_bucket=bucket)
    hyperparameters = {"epochs": epochs, "lr": lr, "optimizer": optimizer, "emsize": emsize, "ngrams": ngrams,
                       "buckets": buckets, "batch_size": batch_size, "seed": seed}
    estimator = make_estimator(bucket, prefix, hyperparameters=hyperparameters, role=role,
                               instance_type=training_instance_type, source_dir=stage_source_dir(OUT / "sagemaker_code"),
                               session=session)
    estimator.fit({"train": train_uri, "test": test_uri})
    job_bundle_uri = fetch_job_model(estimator.model_data, f"{S3_BASE}/models/{run_name}-job")
    job_metrics = Predictor.load(job_bundle_uri, ctx="cpu").metrics["final"]
    print("training job:", estimator.latest_training_job.name)
    print("job bundle:  ", job_bundle_uri, "| final test accuracy:", round(job_metrics["val_accuracy"], 4))
else:
    print("use_training_job is False: no training job started")'''),
    md("""
### Hyperparameter tuning (off by default)

`tune = True` (with `use_training_job`) starts a `HyperparameterTuner` over the learning rate, `emsize`
and `ngrams` that maximizes `validation:accuracy`, read from the job log with the entry point's
regex (`fasttext_lib.sm_train.VAL_ACCURACY_REGEX`). Each trial is a training job.
"""),
    code('''if use_training_job and tune:
    from fasttext_lib.sagemaker_utils import make_tuner

    tuner = make_tuner(estimator, max_jobs=6, max_parallel_jobs=2)
    tuner.fit({"train": train_uri, "test": test_uri})
    print("best training job:", tuner.best_training_job())
    trials = tuner.analytics().dataframe().sort_values("FinalObjectiveValue", ascending=False)
    display(trials[["TrainingJobName", "lr", "emsize", "ngrams", "FinalObjectiveValue"]])
else:
    print("tune is False: no tuning job started")'''),
    code('''print("history table:", SHOWN_OUT / "history.csv")
print("history plot: ", SHOWN_OUT / "history.png")
print("model bundle: ", bundle_uri)'''),
]

NB03 = [
    md("""
# 03 · CPU vs GPU

Time the same training batches on the CPU and on each GPU present, and turn the measured speed into
seconds and dollars per epoch of the full Yelp polarity training set. Prices are an editable table:
**check them before use**. Timing cells are excluded from nbval comparison.
"""),
    params('''bucket = "fasttext-demo"
prefix = "fasttext"
dataset = "sample"
output_dir = "../build/demo"
seed = 42
batches = 100  # training batches timed per device
batch_size = 1024
optimizer = "adam"
emsize = 100
ngrams = 2
buckets = 200000
epoch_docs = 560000  # documents per epoch to extrapolate to (Yelp polarity train split)
dense_batches = 200  # batches of 16 for the dense-gradient GluonNLP recipe'''),
    code(SETUP + '''

import mxnet as mx

from fasttext_lib.config import TrainConfig
from fasttext_lib.data import read_labeled
from fasttext_lib.train import train'''),
    md("## Devices"),
    code('''# NBVAL_IGNORE_OUTPUT
num_gpus = mx.context.num_gpus()
devices = ["cpu"] + [f"gpu:{i}" for i in range(num_gpus)]
if num_gpus == 0:
    print("No GPU is present on this machine: only the CPU is measured; GPU rows below are not filled in.")
else:
    print(f"{num_gpus} GPU(s) present: timing", ", ".join(devices))'''),
    md("## Time the same batches on each device\n\nTwo epochs over `batches` batches; the second epoch is reported (the first includes warm-up)."),
    code('''data = read_labeled(f"{DATA}/{dataset}.train", limit=batches * batch_size)
print(f"timing {len(data)} reviews = {-(-len(data) // batch_size)} batches of {batch_size}")'''),
    code('''# NBVAL_IGNORE_OUTPUT
rows = []
for device in devices:
    run = train(data, None, TrainConfig(epochs=2, optimizer=optimizer, emsize=emsize, ngrams=ngrams, buckets=buckets,
                                        batch_size=batch_size, ctx=device, seed=seed, progress=False))
    last = run.history[-1]
    rows.append({"device": device, "kind": "gpu" if device.startswith("gpu") else "cpu",
                 "seconds": last["seconds"], "samples_per_s": last["samples_per_s"]})
timings = pd.DataFrame(rows).set_index("device")
timings["epoch_s_estimate"] = epoch_docs / timings.samples_per_s
timings.round(2)'''),
    code('''# NBVAL_IGNORE_OUTPUT
fig, ax = plt.subplots(figsize=(6, 3))
timings.samples_per_s.plot.bar(ax=ax, color=["tab:blue" if k == "cpu" else "tab:green" for k in timings.kind])
ax.set_ylabel("training samples / s")
ax.set_title("measured training throughput")
fig.tight_layout()
fig.savefig(OUT / "03_throughput.png", dpi=100)
plt.show()'''),
    md("""
## Dollars per epoch

On-demand SageMaker prices, **unverified, edit before use** (region and date matter; see the
SageMaker pricing page). The estimate applies the speed measured *here* to each instance of the same
kind, so it is only as good as the assumption that this machine's CPU/GPU resembles the instance's.
"""),
    code('''prices = pd.DataFrame([
    {"instance": "ml.t3.medium", "kind": "cpu", "hardware": "2 vCPU", "usd_per_hour": 0.05},
    {"instance": "ml.m5.xlarge", "kind": "cpu", "hardware": "4 vCPU", "usd_per_hour": 0.23},
    {"instance": "ml.p3.2xlarge", "kind": "gpu", "hardware": "1x V100", "usd_per_hour": 3.825},
    {"instance": "ml.g4dn.xlarge", "kind": "gpu", "hardware": "1x T4", "usd_per_hour": 0.736},
]).set_index("instance")
prices["as_of"] = "2026-11-22"
prices["source"] = "SageMaker on-demand pricing, us-east-1 (not reachable from here)"
prices["note"] = "unverified, edit before use"
prices'''),
    code('''# NBVAL_IGNORE_OUTPUT
costs = prices.reset_index().merge(timings.reset_index(), on="kind")
costs["usd_per_epoch"] = costs.epoch_s_estimate / 3600 * costs.usd_per_hour
costs["usd_per_10_epoch_run"] = 10 * costs.usd_per_epoch
if num_gpus == 0:
    print("No GPU is present, so no GPU instance is priced from a measurement.")
costs.set_index(["instance", "device"])[["usd_per_hour", "epoch_s_estimate", "usd_per_epoch", "usd_per_10_epoch_run"]].round(4)'''),
    md("""## Why the original laptop run never finished an epoch

GluonNLP's `fasttext_word_ngram.py` recipe embeds padded ids with a **dense** embedding gradient:
every batch of 16 rewrites the whole table through Adam. Here it trains a few hundred batches on the
CPU on the same documents and features, next to `fasttext_lib`'s row-sparse training measured above."""),
    code('''# NBVAL_IGNORE_OUTPUT
from fasttext_lib.baseline import time_dense_recipe
from fasttext_lib.features import Featurizer

featurizer, bags = Featurizer.fit(data.texts, ngrams=ngrams, buckets=buckets, return_bags=True)
binary = [data.label_names().index(label) for label in data.labels]
dense = time_dense_recipe(bags, binary, featurizer.num_rows, emsize=emsize, batches=dense_batches, ctx=mx.cpu())
recipes = pd.DataFrame([
    {"recipe": "GluonNLP fasttext_word_ngram.py (dense gradient, batch 16)", "samples_per_s": dense["docs_per_s"]},
    {"recipe": f"fasttext_lib (row-sparse, batch {batch_size})", "samples_per_s": timings.loc["cpu", "samples_per_s"]},
]).set_index("recipe")
recipes["yelp_epoch_hours"] = epoch_docs / recipes.samples_per_s / 3600
recipes["speedup"] = recipes.samples_per_s / recipes.samples_per_s.iloc[0]
recipes.to_csv(OUT / "03_recipes.csv")
recipes.round(3)'''),
    md("## Reported, not measured here\n\nFor comparison, numbers published with GluonNLP's fastText recipe (dense embedding gradient, batch 16):"),
    code('''reported = pd.DataFrame([{"source": "GluonNLP fasttext_word_ngram.py recipe", "hardware": "V100",
                          "dataset": "yelp_review_polarity", "epochs": 10, "wall_clock": "~17 min",
                          "accuracy": "~94.0%", "status": "reported, not measured here"}])
reported'''),
    code('''print("throughput chart:", SHOWN_OUT / "03_throughput.png")'''),
]

NB04 = [
    md("""
# 04 · Inference

Load the bundle notebook 02 saved to S3, predict a few reviews, evaluate on the test split and look
inside the embedding table. (With the synthetic sample the vocabulary is pseudo-words, so English
reviews below are mostly out-of-vocabulary and their predictions are near chance: train on
`yelp_review_polarity` for meaningful ones.)
"""),
    params('''bucket = "fasttext-demo"
prefix = "fasttext"
dataset = "sample"
output_dir = "../build/demo"
run_name = "sample"
ctx = "cpu"
top_k = 5
query_words = None  # None: the words with the largest vectors; e.g. ["great", "awful", "pizza"] for Yelp
deploy = False  # True: serve the bundle from a SageMaker endpoint, query it, delete it (billed, needs a role)
role = None  # SageMaker execution role ARN; None: $SAGEMAKER_ROLE, else this notebook instance's role
endpoint_instance_type = "ml.m5.xlarge"'''),
    code(SETUP + '''

import numpy as np

from fasttext_lib.predict import Predictor
from fasttext_lib.data import read_labeled'''),
    md("## Load the bundle"),
    code('''bundle_uri = f"{S3_BASE}/models/{run_name}"
predictor = Predictor.load(bundle_uri, ctx=ctx)
print("labels:", predictor.labels, "| final test accuracy at training:", round(predictor.metrics["final"]["val_accuracy"], 4))'''),
    md("## Predict a few written reviews"),
    code('''reviews = [
    "The pasta was great and the staff were friendly!",
    "Not good. Cold food and a long wait.",
    "Best brunch in town, we will be back.",
    "Rude service, dirty tables, never again.",
]
predictions = pd.DataFrame(predictor.predict(reviews)).assign(review=reviews)
predictions.to_csv(OUT / "04_predictions.csv", index=False)
predictions.round(3)'''),
    md("## Evaluate on the test split"),
    code('''test_data = read_labeled(f"{DATA}/{dataset}.test")
metrics = predictor.evaluate(test_data)
print(f"accuracy {metrics['accuracy']:.4f}, loss {metrics['loss']:.4f} on {metrics['n']} reviews")'''),
    md("Batch prediction throughput (raw text in, probabilities out, normalization included):"),
    code('''# NBVAL_IGNORE_OUTPUT
import time

started = time.time()
probs = predictor.predict_proba(test_data.texts)
seconds = time.time() - started
print(f"{len(test_data)} reviews in {seconds:.2f} s: {len(test_data) / seconds:,.0f} reviews/s")'''),
    code('''results = pd.DataFrame({"true": test_data.labels,
                        "predicted": [predictor.labels[k] for k in probs.argmax(axis=1)],
                        "confidence": probs.max(axis=1),
                        "text": [t[:80] for t in test_data.texts]})
confusion = pd.crosstab(results.true, results.predicted).reindex(index=predictor.labels, columns=predictor.labels, fill_value=0)
confusion'''),
    code('''fig, ax = plt.subplots(figsize=(4, 3.5))
image = ax.imshow(confusion.values, cmap="Blues")
ax.set_xticks(range(len(predictor.labels)), labels=predictor.labels)
ax.set_yticks(range(len(predictor.labels)), labels=predictor.labels)
ax.set_xlabel("predicted")
ax.set_ylabel("true")
for (i, j), count in np.ndenumerate(confusion.values):
    ax.text(j, i, count, ha="center", va="center", color="white" if count > confusion.values.max() / 2 else "black")
fig.colorbar(image, ax=ax)
ax.set_title("confusion matrix (test)")
fig.tight_layout()
fig.savefig(OUT / "04_confusion_matrix.png", dpi=100)
plt.show()'''),
    md("### The most confident mistakes"),
    code('''mistakes = results[results.true != results.predicted].sort_values("confidence", ascending=False)
mistakes.head(top_k).round(3)'''),
    md("""
## Nearest neighbours in the word-vector space (cosine similarity)

With two classes the model has one output weight vector, and every word vector's gradient points
along it: trained vectors end up close to one line, so cosine similarities are near +1 (same
polarity) or -1 (opposite polarity). The table shows both ends; with more classes (ag_news: 4,
dbpedia: 14) the neighbourhoods carry more structure.
"""),
    code('''tokens, vectors = predictor.word_vectors()
unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
index = {token: i for i, token in enumerate(tokens)}
if query_words is None:
    by_norm = np.argsort(-np.linalg.norm(vectors, axis=1), kind="stable")
    query_words = [tokens[i] for i in by_norm if not tokens[i].startswith("<")][:3]
neighbours = {}
for word in [w for w in query_words if w in index]:
    similarity = unit @ unit[index[word]]
    ranked = [i for i in np.argsort(-similarity, kind="stable") if i != index[word]]
    neighbours[f"{word}: nearest"] = [f"{tokens[i]} ({similarity[i]:.2f})" for i in ranked[:top_k]]
    neighbours[f"{word}: opposite"] = [f"{tokens[i]} ({similarity[i]:.2f})" for i in ranked[::-1][:top_k]]
pd.DataFrame(neighbours)'''),
    md("""
## Deploy to a SageMaker endpoint (off by default)

With `deploy = True`: `pack_model` writes the bundle as a `model.tar.gz` (bundle files at the top,
`code/` with `entry_point.py`, `fasttext_lib` and `requirements.txt`), `make_model` wraps it in a
`sagemaker.mxnet.MXNetModel` (MXNet 1.9.0 inference container, py38) and `deploy` starts the
endpoint. It answers JSON (`["review", ...]`, `{"instances": [...]}`), `text/plain` or `text/csv` with
one label and probability per review, the same as the predictor above. The endpoint and its model
are deleted at the end of the cell, whatever happens.
"""),
    code('''if deploy:
    from fasttext_lib.packaging import pack_model
    from fasttext_lib.sagemaker_utils import make_model

    model_data = pack_model(bundle_uri, f"{S3_BASE}/sagemaker/{run_name}/model.tar.gz")
    endpoint = make_model(model_data, bucket, prefix, role=role).deploy(initial_instance_count=1,
                                                                       instance_type=endpoint_instance_type)
    try:
        remote = pd.DataFrame(endpoint.predict(reviews))
        display(remote.assign(local_label=predictions.label, local_probability=predictions.probability,
                              review=reviews).round(3))
    finally:
        endpoint.delete_model()
        endpoint.delete_endpoint()
else:
    print("deploy is False: no endpoint created")'''),
    code('''print("predictions:     ", SHOWN_OUT / "04_predictions.csv")
print("confusion matrix:", SHOWN_OUT / "04_confusion_matrix.png")'''),
]

SERIES = {
    "01_data_prep.ipynb": NB01,
    "02_train_gpu.ipynb": NB02,
    "03_cpu_vs_gpu.ipynb": NB03,
    "04_inference.ipynb": NB04,
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=NOTEBOOKS, help="directory to write the notebooks to (default: notebooks/)")
    out = parser.parse_args(argv).output
    os.makedirs(out, exist_ok=True)
    for name, cells in SERIES.items():
        nb = new_notebook(cells=cells, metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
            "language_info": {"name": "python"},
        })
        for i, cell in enumerate(nb.cells):  # stable ids: regenerating gives the same files
            cell["id"] = f"{name[:2]}-{i:02d}"
        nbformat.validate(nb)
        path = os.path.join(out, name)
        nbformat.write(nb, path)
        print("wrote", os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path)


if __name__ == "__main__":
    main()
