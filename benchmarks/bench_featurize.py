"""Featurization time: the pure-Python path vs native featurization (featurize.cc), same corpus.

Yelp-shaped synthetic reviews (``generate_reviews``, ~130 tokens each). Per path, two timings:

* *fit*: ``Featurizer.fit(train, return_bags=True)``: tokenize, count, build the GluonNLP vocabulary,
  encode every training document to its bag (words + hashed n-grams);
* *transform*: ``Featurizer.transform(test)``: encode the test split with that vocabulary.

The Python path runs with ``FASTTEXT_LIB_NATIVE=0``; the native path is the same Featurizer calls with
native featurization available (its default). Both results are checked to be identical.
The library is built (or found in the cache) before timing.

Usage: python benchmarks/bench_featurize.py --docs 100000 --ngrams 2
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fasttext_lib import native_features as nf  # noqa: E402
from fasttext_lib.features import Featurizer  # noqa: E402
from fasttext_lib.synthetic import generate_reviews  # noqa: E402


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=100_000, help="training documents (the test split is 1/10)")
    ap.add_argument("--ngrams", type=int, default=2)
    ap.add_argument("--buckets", type=int, default=2_000_000)
    ap.add_argument("--min-count", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    data = generate_reviews(args.docs + args.docs // 10, seed=args.seed)
    train, test = data.texts[:args.docs], data.texts[args.docs:]
    tokens = sum(len(t.split()) for t in train)
    ok, why = nf.status()
    if not ok:
        sys.exit(f"error: native featurization unavailable: {why}")
    settings = dict(min_count=args.min_count, ngrams=args.ngrams, buckets=args.buckets)

    (featurizer, native_bags), native_fit_s = timed(Featurizer.fit, train, return_bags=True, **settings)
    native_test, native_transform_s = timed(featurizer.transform, test)
    os.environ[nf.ENV_SWITCH] = "0"
    (featurizer, bags), python_fit_s = timed(Featurizer.fit, train, return_bags=True, **settings)
    python_test, python_transform_s = timed(featurizer.transform, test)
    del os.environ[nf.ENV_SWITCH]

    for native, python in [(native_bags, bags), (native_test, python_test)]:
        for a, b in zip((native.rows, native.weights, native.offsets), (python.rows, python.weights, python.offsets)):
            assert a.tobytes() == b.tobytes(), "native and Python featurization differ"

    print(f"{args.docs} train docs (~{tokens / args.docs:.0f} whitespace tokens each), {len(test)} test docs, "
          f"ngrams={args.ngrams}, buckets={args.buckets}, min_count={args.min_count}; results identical")
    print(f"{'':10} {'python s':>9} {'native s':>9} {'speedup':>8}")
    for name, p, n in [("fit", python_fit_s, native_fit_s), ("transform", python_transform_s, native_transform_s)]:
        print(f"{name:10} {p:9.2f} {n:9.2f} {p / n:7.1f}x")


if __name__ == "__main__":
    main()
