"""Notebook 02's n-gram table: ours at 200k buckets (02's old default) and at 2M (the library's, 02's now) against
fastText C++ at its defaults (2M buckets, thread 1), bigrams, in one run (docs/RESULTS.md section 4).

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/buckets_02.py [--real-dir ../shared/data/real]
        [--synthetic build/buckets/yelp300k] [--epochs 5] [--csv build/buckets_02.csv]

``--synthetic DIR``: a corpus ``python -m fasttext_lib synthetic --output DIR`` wrote (train.csv, test.csv).
"""
import argparse
import csv
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from bench_real import Dataset, fasttext_cpp_accuracy, in_child, shared_sets  # noqa: E402

BUCKETS = (200_000, 2_000_000)


def ours(ds, epochs, buckets, seed):
    from fasttext_lib.train import TrainConfig, train

    config = TrainConfig(epochs=epochs, ngrams=2, buckets=buckets, seed=seed, progress=False, ctx="cpu")
    return float(train(ds.train, ds.test, config).history[-1]["val_accuracy"])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--real-dir", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "real"))
    p.add_argument("--synthetic", default=None)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--csv", default=None)
    args = p.parse_args(argv)
    sets = dict(shared_sets(args.real_dir))
    if args.synthetic:
        sets["synthetic"] = (os.path.join(args.synthetic, "train.csv"), os.path.join(args.synthetic, "test.csv"))
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name, (train_csv, test_csv) in sets.items():
            ds = Dataset(name, train_csv, test_csv, work)
            row = {"set": name, "train_docs": ds.num_docs,
                   "fasttext_cpp": fasttext_cpp_accuracy(ds, args.epochs, 2, args.seed)}
            for buckets in BUCKETS:
                row[f"ours_{buckets}"] = in_child(ours, ds, args.epochs, buckets, args.seed)
            rows.append(row)
            print(" | ".join(f"{v:.4f}" if isinstance(v, float) else str(v) for v in row.values()), flush=True)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
