"""The output layer's lr against the rule's: docs/RESULTS.md 3, "The weak spot, second pass" (its output-lr rows).

Unigrams (or ``--ngrams``) at 10 epochs (or ``--epochs``), the library defaults otherwise, seeds 1-3, on
``bench_real.py``'s splits of each set: ``train()`` in a child process per run, with ``train.make_optimizer``
wrapped to multiply the output layer's ``lr_mult`` by each factor (1 reproduces ``bench_real.py``'s numbers to the
last digit). fastText C++'s column of that table is ``bench_real.py``'s (thread=1: the same numbers every run).

Usage: OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/output_lr.py amazon_snippets,movie_snippets 0.75,0.5,0.25
"""
import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_real  # noqa: E402


def accuracy_with_output_lr(ds, epochs, ngrams, seed, factor):
    """bench_real.ours_accuracy with the output layer's lr times ``factor``."""
    import fasttext_lib.train as train_module
    from fasttext_lib.optim import OUTPUT_KEY

    make_optimizer = train_module.make_optimizer

    def scaled(config, steps_per_epoch):
        optimizer = make_optimizer(config, steps_per_epoch)
        optimizer.set_lr_mult({OUTPUT_KEY: optimizer.lr_mult.get(OUTPUT_KEY, 1.0) * factor})
        return optimizer

    train_module.make_optimizer = scaled
    return bench_real.ours_accuracy(ds, epochs, ngrams, seed)[0]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sets", help="comma-separated set names (the shared ones, and --vader's)")
    parser.add_argument("factors", help="comma-separated factors of the output layer's lr")
    parser.add_argument("--ngrams", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--real-dir", default=os.path.join(bench_real.ROOT, "..", "shared", "data", "real"))
    parser.add_argument("--cache", default=os.path.join(bench_real.ROOT, "build", "real_cache"))
    args = parser.parse_args(argv)
    sources = bench_real.shared_sets(os.path.abspath(args.real_dir))
    sources.update(bench_real.vader_sets(args.cache))
    with tempfile.TemporaryDirectory() as workdir:
        for name in args.sets.split(","):
            ds = bench_real.Dataset(name, *sources[name], workdir)
            for factor in (float(f) for f in args.factors.split(",")):
                accs = [bench_real.in_child(accuracy_with_output_lr, ds, args.epochs, args.ngrams, seed, factor)
                        for seed in (1, 2, 3)]
                print(f"{name} ngrams={args.ngrams} epochs={args.epochs} output lr x {factor:g}: "
                      f"{np.mean(accs):.4f} (min {min(accs):.4f}) {[round(a, 4) for a in accs]}", flush=True)


if __name__ == "__main__":
    main()
