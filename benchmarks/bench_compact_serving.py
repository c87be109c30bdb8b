"""Serving a compact bundle: its stored rows only (the default on the CPU) against the full table built.

Trains the built-in sample with bigrams (the demo's model: a compact bundle, since training changes a
few thousand of its 2M rows), then, in a fresh process per mode and repetition, loads it with
``Predictor.load`` and measures: load seconds, one review's latency (p50 / p99 over 2,000 reviews), batch
throughput (5,000 reviews in one call) and the process's peak RSS. ``dense`` asks for ``predictor.model``
right after loading, which builds the full table (what every load did before). The modes take turns, so
a change in the machine's load hits both alike; both must give the same probabilities.

Usage: OMP_NUM_THREADS=2 PYTHONPATH=. python benchmarks/bench_compact_serving.py [--reps 3]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import hashlib, json, resource, sys, time
import numpy as np
t0 = time.perf_counter()
from fasttext_lib.predict import Predictor
bundle, texts_file, mode = sys.argv[1:4]
p = Predictor.load(bundle)
if mode == "dense":
    p.model  # builds the full table
load = time.perf_counter() - t0
texts = open(texts_file).read().split("\n")
p.predict(texts[:10])
t = time.perf_counter()
probs = p.predict_proba(texts)
batch = len(texts) / (time.perf_counter() - t)
lat = []
for s in texts[:2000]:
    t = time.perf_counter()
    p.predict([s])
    lat.append(time.perf_counter() - t)
print(json.dumps({"load_s": load, "batch_docs_s": batch, "p50_ms": float(np.median(lat)) * 1e3,
                  "p99_ms": float(np.percentile(lat, 99)) * 1e3,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "probs": hashlib.sha256(probs.tobytes()).hexdigest()}))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    with tempfile.TemporaryDirectory() as tmp:
        run = [sys.executable, "-m", "fasttext_lib"]
        subprocess.run(run + ["sample", "--output", f"{tmp}/data"], check=True, env=env, capture_output=True)
        subprocess.run(run + ["train", "--train", f"{tmp}/data/train.csv", "--output", f"{tmp}/model", "--epochs", "5",
                              "--ngrams", "2", "--no-progress"], check=True, env=env, capture_output=True)
        config = json.load(open(f"{tmp}/model/config.json"))
        assert config.get("compact"), "the sample's bigram bundle should be compact"
        import csv

        with open(f"{tmp}/data/test.csv", newline="") as f:
            texts = [row[1] for row in csv.reader(f)]
        with open(f"{tmp}/texts.txt", "w") as f:
            f.write("\n".join((texts * (5000 // len(texts) + 1))[:5000]))
        results = {"stored rows": [], "dense": []}
        for _ in range(args.reps):
            for mode in results:
                out = subprocess.run([sys.executable, "-c", CHILD, f"{tmp}/model", f"{tmp}/texts.txt",
                                      "dense" if mode == "dense" else "lazy"], env=env, capture_output=True, text=True,
                                     check=True)
                results[mode].append(json.loads(out.stdout.strip().splitlines()[-1]))
    digests = {r["probs"] for rows in results.values() for r in rows}
    print(f"sample bigram bundle: {config['compact']['rows_stored']:,} of {config['num_rows']:,} rows stored; "
          f"probabilities identical across modes: {len(digests) == 1}")
    print("| mode | load s | one review p50 / p99 ms | batch docs/s | peak RSS MB |")
    print("|---|---|---|---|---|")
    for mode, rows in results.items():
        med = {k: statistics.median(r[k] for r in rows) for k in ("load_s", "p50_ms", "p99_ms", "batch_docs_s", "rss_mb")}
        print(f"| {mode} | {med['load_s']:.2f} | {med['p50_ms']:.3f} / {med['p99_ms']:.3f} | "
              f"{med['batch_docs_s']:,.0f} | {med['rss_mb']:,.0f} |")
    return 0 if len(digests) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
