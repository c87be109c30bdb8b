"""fasttext_lib vs fastText C++ vs the dense-gradient GluonNLP recipe, on one synthetic corpus.

One run generates Yelp-shaped reviews (``generate_reviews``), writes the train and test splits as
normalized fastText-format files, and then runs every system in its own child process (this
script re-invoked with a hidden ``--worker`` flag), so that each one's peak RSS (``VmHWM`` of that
process) is its own. What each row measures:

* ``fasttext_lib (sgd ...)`` / ``fasttext_lib (adam ...)``: ``train()`` with that optimizer and the
  settings given in ``--optimizers`` (e.g. ``sgd:lr=2,adam:lr=0.003:wd=3e-5``; unset: the library
  defaults), linear decay, batch ``--batch-size``, CPU. *docs/s per epoch* is the
  mean of the history's ``samples_per_s`` (training docs / seconds of the epoch's training loop,
  featurization excluded). *End-to-end* is reading the train/test files + ``train()`` (vocabulary,
  n-gram hashing, every epoch) + encoding and scoring the test split once. *Test accuracy* is the
  final model's on the test split (scored here, not by ``train()``: see ``run_fasttext_lib``).
* ``fastText C++``: ``fasttext.train_supervised`` (lr 0.1, its default; minCount 1, same dim,
  epochs, wordNgrams, bucket, threads). *End-to-end* is the wall-clock of that call, which
  includes reading the file and building the dictionary; *docs/s per epoch* is
  ``train docs * epochs / that time``, so it slightly favours fasttext_lib. Accuracy is
  ``model.test(test_file)[1]`` (precision at 1 = accuracy for single-label data).
* ``dense GluonNLP recipe``: GluonNLP's ``scripts/text_classification/fasttext_word_ngram.py``
  model: ``nn.Embedding`` with a *dense* gradient over padded (16, max_len) ids, masked mean,
  ``Dense(1)``, sigmoid BCE, Adam lr 0.05, batch 16, hybridized. The ids are each document's
  fasttext_lib feature rows (words + hashed n-grams), so the table has the same number of rows
  (the original pads token ids + appended n-gram ids and averages over the padding too).
  Only ``--dense-batches`` batches (or ``--dense-seconds``, whichever ends first) are timed, after
  3 warm-up batches; *docs/s* = docs in the timed batches / their seconds. No accuracy.

Usage: python benchmarks/bench_fasttext.py --train-docs 200000 --test-docs 20000 --epochs 5
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def run_fasttext_lib(spec):
    from fasttext_lib.data import read_labeled
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.label_encoding import encode_labels
    from fasttext_lib.scoring import predict_bags
    from fasttext_lib.train import train

    started = time.time()
    train_data, test_data = read_labeled(spec["train_file"]), read_labeled(spec["test_file"])
    config = TrainConfig(epochs=spec["epochs"], emsize=spec["emsize"], ngrams=spec["ngrams"], buckets=spec["buckets"],
                         batch_size=spec["batch_size"], optimizer=spec["optimizer"], progress=False, ctx="cpu",
                         **spec["settings"])
    # No val_data: scoring the test split once, here, keeps it out of the per-epoch timing.
    trained = train(train_data, None, config)
    y_test = encode_labels(test_data.labels, trained.labels, "test data")
    bags = trained.featurizer.transform(test_data.texts)
    probs = predict_bags(trained.model, trained.featurizer, bags, trained.ctx[0], batch_size=1024)
    return {"docs_per_s": float(trained.history_frame()["samples_per_s"].mean()), "end_to_end_s": time.time() - started,
            "test_accuracy": float((probs.argmax(axis=1) == y_test).mean())}


def run_fasttext_cpp(spec):
    import fasttext

    started = time.time()
    model = fasttext.train_supervised(input=spec["train_file"], dim=spec["emsize"], epoch=spec["epochs"],
                                      wordNgrams=spec["ngrams"], bucket=spec["buckets"], thread=spec["threads"],
                                      lr=0.1, minCount=1, verbose=0)
    seconds = time.time() - started
    return {"docs_per_s": spec["n_train"] * spec["epochs"] / seconds, "end_to_end_s": seconds,
            "test_accuracy": float(model.test(spec["test_file"])[1])}


def run_dense_recipe(spec):
    import numpy as np

    from fasttext_lib.baseline import time_dense_recipe
    from fasttext_lib.data import read_labeled
    from fasttext_lib.features import Featurizer
    from fasttext_lib.label_encoding import encode_labels

    data = read_labeled(spec["train_file"])
    featurizer = Featurizer.fit(data.texts, ngrams=spec["ngrams"], buckets=spec["buckets"])  # vocabulary of all docs
    needed = (spec["dense_batches"] + 3) * 16
    docs = np.random.RandomState(0).permutation(len(data))[:needed]  # encode only the docs that will be used
    bags = featurizer.transform([data.texts[d] for d in docs])
    classes = data.classes()
    labels = encode_labels([data.labels[d] for d in docs], classes, spec["train_file"])
    result = time_dense_recipe(bags, labels, featurizer.num_rows, emsize=spec["emsize"], batches=spec["dense_batches"],
                               max_seconds=spec["dense_seconds"], num_classes=len(classes))  # its outputs as GluonNLP's (2 classes: one)
    return {"docs_per_s": result["docs_per_s"], "timed_batches": result["batches"], "num_rows": featurizer.num_rows}


WORKERS = {"fasttext_lib": run_fasttext_lib, "fastText C++": run_fasttext_cpp, "dense GluonNLP recipe": run_dense_recipe}


def parse_optimizers(text):
    """``sgd:lr=2,adam:lr=0.003:wd=3e-5`` -> [("sgd", {"lr": 2.0}), ("adam", {"lr": 0.003, "wd": 3e-05})]."""
    out = []
    for item in text.split(","):
        name, *settings = item.strip().split(":")
        out.append((name, {k: float(v) for k, v in (kv.split("=") for kv in settings)}))
    return out


def systems(optimizers, dense):
    """(row label, worker, extra spec) in the order they run."""
    out = [(" ".join([f"fasttext_lib ({opt}"] + [f"{k} {v:g}" for k, v in settings.items()]) + ")", "fasttext_lib",
            {"optimizer": opt, "settings": settings}) for opt, settings in parse_optimizers(optimizers)]
    out.append(("fastText C++", "fastText C++", {}))
    if dense:
        out.append(("dense GluonNLP recipe", "dense GluonNLP recipe", {}))
    return out


def peak_rss_mb():
    """This process's peak RSS. Linux's ru_maxrss would include the parent's peak at fork time; VmHWM does not."""
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux, bytes on macOS


def worker_main(spec_json):
    spec = json.loads(spec_json)
    result = WORKERS[spec["system"]](spec)
    result["peak_rss_mb"] = peak_rss_mb()
    print("RESULT " + json.dumps(result), flush=True)


def run_in_child(spec):
    """Run one system in a fresh interpreter; returns its result dict."""
    print(f"running {spec['label']} (ngrams={spec['ngrams']}) ...", flush=True)
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", json.dumps(spec)],
                          stdout=subprocess.PIPE, text=True, check=True)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    result = json.loads(line[len("RESULT "):])
    print(f"  {result}", flush=True)
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-docs", type=int, default=200_000)
    parser.add_argument("--test-docs", type=int, default=20_000)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--emsize", type=int, default=100)
    parser.add_argument("--ngrams", default="1,2", help="comma-separated wordNgrams values")
    parser.add_argument("--buckets", type=int, default=2_000_000)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--threads", type=int, default=2, help="fastText C++ threads")
    parser.add_argument("--optimizers", default="sgd,adam",
                        help="fasttext_lib runs, comma-separated, each optimizer[:setting=value...], e.g. sgd:lr=2")
    parser.add_argument("--dense-batches", type=int, default=200, help="0: skip the dense recipe")
    parser.add_argument("--dense-seconds", type=float, default=60.0, help="stop timing the dense recipe after this")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json-out")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker_main(args.worker)

    import pandas as pd

    from fasttext_lib.writers import write_fasttext
    from fasttext_lib.synthetic import generate_reviews

    with tempfile.TemporaryDirectory(prefix="bench_fasttext_") as tmp:
        print(f"generating {args.train_docs} + {args.test_docs} reviews ...", flush=True)
        data = generate_reviews(args.train_docs + args.test_docs, seed=args.seed)
        train_file, test_file = os.path.join(tmp, "train.txt"), os.path.join(tmp, "test.txt")
        write_fasttext(data.head(args.train_docs), train_file)
        write_fasttext(type(data)(data.labels[args.train_docs:], data.texts[args.train_docs:]), test_file)
        del data
        rows = []
        for ngrams in [int(n) for n in args.ngrams.split(",")]:
            base = {"ngrams": ngrams, "train_file": train_file, "test_file": test_file, "n_train": args.train_docs,
                    "epochs": args.epochs, "emsize": args.emsize, "buckets": args.buckets, "batch_size": args.batch_size,
                    "threads": args.threads, "dense_batches": args.dense_batches, "dense_seconds": args.dense_seconds}
            results = {label: run_in_child(dict(base, label=label, system=system, **extra))
                       for label, system, extra in systems(args.optimizers, args.dense_batches > 0)}
            reference = results["fastText C++"]["docs_per_s"]
            for system, r in results.items():
                rows.append({"system": system, "ngrams": ngrams, "docs/s per epoch": r["docs_per_s"],
                             "speed vs fastText": r["docs_per_s"] / reference,
                             "end-to-end s": r.get("end_to_end_s"), "test accuracy": r.get("test_accuracy"),
                             "peak RSS MB": r["peak_rss_mb"]})
            dense = results.get("dense GluonNLP recipe")
            if dense:
                print(f"  dense recipe: {dense['timed_batches']} timed batches, {dense['num_rows']} table rows; "
                      f"a 560k-doc epoch would take {560_000 / dense['docs_per_s'] / 3600:.1f} h", flush=True)

    table = pd.DataFrame(rows)
    print(f"\n{args.train_docs} train / {args.test_docs} test docs, {args.epochs} epochs, emsize {args.emsize}, "
          f"buckets {args.buckets}, batch {args.batch_size}, fastText threads {args.threads}, OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS', 'unset')}")
    print(table.to_string(index=False, float_format=lambda v: f"{v:,.3f}" if abs(v) < 10 else f"{v:,.0f}", na_rep="-"))
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"args": {k: v for k, v in vars(args).items() if k != "worker"}, "rows": rows}, f, indent=2)
    return table


if __name__ == "__main__":
    main()
