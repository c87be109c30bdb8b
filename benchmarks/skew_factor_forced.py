"""What schedule.skew_factor would give a skewed two-class set without the held-out test of its words.

For docs/RESULTS.md 3, "Skewed classes: a held-out test of the words": for each set, fastText C++ (bench_real's
harness: thread 1, its defaults), the library's defaults (with the test, as committed) and the library with the
defaults' lr times ``clip((share / 0.25)^2, 0.4, 1)`` whatever the test says (the factor forced), seeds 1-3, one CSV
row per run::

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/skew_factor_forced.py build/skewed2 amazon3_neu,nyt3_c3 build/forced.csv
"""
import csv
import os
import sys
import tempfile
from collections import Counter
from dataclasses import replace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import bench_real  # noqa: E402


def ours(ds, epochs, ngrams, seed, factor):
    from fasttext_lib.schedule import mean_tokens
    from fasttext_lib.train import TrainConfig, train

    config = TrainConfig(epochs=epochs, ngrams=ngrams, seed=seed, progress=False, ctx="cpu")
    if factor is not None:  # the rule without the test (rare_class None), times the factor
        rule = config.resolve(len(ds.train), mean_tokens(ds.train.texts), len(set(ds.train.labels)))
        config = replace(config, lr=rule.lr * factor, batch_size=rule.batch_size)
    return float(train(ds.train, ds.test, config).history[-1]["val_accuracy"])


def main(real_dir, names, out):
    workdir = tempfile.mkdtemp()
    with open(out, "a", newline="") as f:
        writer = csv.writer(f)
        for name in names.split(","):
            ds = bench_real.Dataset(name, f"{real_dir}/{name}_train.csv", f"{real_dir}/{name}_test.csv", workdir)
            share = min(Counter(ds.train.labels).values()) / len(ds.train)
            factor = min(1.0, max(0.4, (share / 0.25) ** 2))
            for ngrams in (1, 2):
                for epochs in (5, 10):
                    for seed in (1, 2, 3):
                        row = [bench_real.in_child(bench_real.fasttext_cpp_accuracy, ds, epochs, ngrams, seed),
                               bench_real.in_child(ours, ds, epochs, ngrams, seed, None),
                               bench_real.in_child(ours, ds, epochs, ngrams, seed, factor)]
                        writer.writerow([name, f"{share:.3f}", f"{factor:.2f}", ngrams, epochs, seed] + row)
                        f.flush()


if __name__ == "__main__":
    main(*sys.argv[1:])
