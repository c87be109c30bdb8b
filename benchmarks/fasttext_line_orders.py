"""How much fastText C++'s accuracy depends on the order of the lines in its training file.

fastText reads its training file front to back in every epoch (no shuffle); its ``seed`` only
changes the initialization. So ``bench_real.py``'s fastText column, seeds 1-3 on one file, measures
one line order. This script trains fastText (``thread=1``, its defaults, ``epoch`` and
``wordNgrams`` set, as bench_real.py does) on the file as bench_real.py writes it (order 0) and on
``--orders`` random permutations of its lines (``RandomState(100 + k)``), seeds 1-3 each, and prints
one JSON line per order (test accuracy per seed and the mean). Sets and splits: bench_real.py's.

Usage: python benchmarks/fasttext_line_orders.py movie_snippets --ngrams 1 --epochs 10 --orders 5 [--vader] [--synthetic 20000]
"""
import argparse
import json
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_real  # noqa: E402  (puts the project root on sys.path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("set")
    parser.add_argument("--ngrams", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--orders", type=int, default=5, help="random line orders besides the file's own")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--vader", action="store_true", help="the VADER sets (tweets, movie_snippets), built once")
    parser.add_argument("--synthetic", type=int, default=0, help="the synthetic set with this many training docs")
    parser.add_argument("--real-dir", default=os.path.join(bench_real.ROOT, "..", "shared", "data", "real"))
    parser.add_argument("--cache", default=os.path.join(bench_real.ROOT, "build", "real_cache"))
    args = parser.parse_args(argv)
    import fasttext

    sources = bench_real.shared_sets(os.path.abspath(args.real_dir))
    if args.vader:
        sources.update(bench_real.vader_sets(args.cache))
    if args.synthetic:
        sources.update(bench_real.synthetic_set(args.synthetic, args.cache))
    with tempfile.TemporaryDirectory() as workdir:
        ds = bench_real.Dataset(args.set, *sources[args.set], workdir)
        with open(ds.train_ft, encoding="utf-8") as f:
            lines = f.readlines()
        for order in range(args.orders + 1):
            path = ds.train_ft
            if order:
                path = os.path.join(workdir, f"order{order}.txt")
                with open(path, "w", encoding="utf-8") as f:
                    f.writelines(lines[i] for i in np.random.RandomState(100 + order).permutation(len(lines)))
            accs = []
            for seed in range(1, args.seeds + 1):
                model = fasttext.train_supervised(input=path, epoch=args.epochs, wordNgrams=args.ngrams, dim=100,
                                                  thread=1, seed=seed, verbose=0)
                accs.append(round(float(model.test(ds.test_ft)[1]), 4))
            print(json.dumps({"set": args.set, "ngrams": args.ngrams, "epochs": args.epochs, "order": order,
                              "accuracy": accs, "mean": round(float(np.mean(accs)), 4)}), flush=True)


if __name__ == "__main__":
    main()
