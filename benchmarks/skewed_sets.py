"""Skewed two-class confirmation sets for docs/RESULTS.md 3, "Skewed classes: a skew term tried".

Built from the shared real sets and the sets ``bench_real.py --vader --extra`` caches (movie_snippets, tweets,
uci_sentences), each split thinned the way ``bench_real.py --imbalanced`` thins class 1, but with other classes and
shares: one class's rows kept with probability ``keep`` (``random.Random(5)``), the other class whole. The result is
a folder of ``<name>_train.csv`` / ``<name>_test.csv`` that ``bench_real.py --real-dir`` reads::

    PYTHONPATH=. python benchmarks/bench_real.py --vader --extra --sets movie_snippets,tweets,uci_sentences --seeds 1
    python benchmarks/skewed_sets.py build/real_cache build/skewed
    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_real.py --real-dir build/skewed --seeds 3 --sets movie_k15c1
"""
import csv
import os
import random
import sys
from collections import Counter

# (source, class thinned ("minor": the rarer one), share of its rows kept)
PLANS = [("movie_snippets", "1", 0.15), ("movie_snippets", "2", 0.15), ("amazon_snippets", "2", 0.15),
         ("nyt_editorials", "2", 0.15), ("tweets", "2", 0.15), ("uci_sentences", "2", 0.15),
         ("movie_snippets", "1", 0.30), ("amazon_snippets", "1", 0.30), ("drug_reviews", "minor", 0.40)]
SHORT = {"movie_snippets": "movie", "amazon_snippets": "amazon", "nyt_editorials": "nyt", "tweets": "tweets",
         "uci_sentences": "uci", "drug_reviews": "drug"}
SHARED = ("amazon_snippets", "nyt_editorials", "drug_reviews")  # in ../shared/data/real; the others in the cache


def main(cache, out, real_dir=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "real")):
    os.makedirs(out, exist_ok=True)
    for source, thinned, keep in PLANS:
        name = f"{SHORT[source]}_k{round(keep * 100)}c{thinned}"
        for split in ("train", "test"):
            with open(os.path.join(real_dir if source in SHARED else cache, f"{source}_{split}.csv"),
                      encoding="utf-8", newline="") as f:
                rows = list(csv.reader(f))
            cls = min(Counter(r[0] for r in rows).items(), key=lambda kv: kv[1])[0] if thinned == "minor" else thinned
            rng = random.Random(5)
            rows = [r for r in rows if r[0] != cls or rng.random() < keep]
            with open(os.path.join(out, f"{name}_{split}.csv"), "w", encoding="utf-8", newline="") as f:
                csv.writer(f, quoting=csv.QUOTE_ALL).writerows(rows)
            shares = {k: round(v / len(rows), 3) for k, v in sorted(Counter(r[0] for r in rows).items())}
            print(name, split, len(rows), shares)


if __name__ == "__main__":
    main(*sys.argv[1:])
