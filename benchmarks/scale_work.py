"""Per-epoch work of several batch sizes in one process, alternating: CPU seconds (process_time, both
threads) and wall seconds of epoch 2, on the first N documents of yelp-560000-2 (see scale_ours.py).
On a loaded machine the CPU-time ratio is the meaningful one (work); wall is reported too.

usage: OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/scale_work.py OUT.jsonl NGRAMS N BATCHES REPEATS
       (e.g. ... 2 100000 1024,512,256 2)
A batch written B:K trains with the SGD row scale's shrink K instead of schedule.row_shrink(B, NGRAMS)
(e.g. 1024:0,1024: the plain per-row mean against the default at batch 1024).
"""
import json, sys, time
sys.path.insert(0, ".")
import numpy as np
from fasttext_lib.config import TrainConfig
from fasttext_lib.data import LabeledTexts, read_labeled
from fasttext_lib import optim
import fasttext_lib.train as T
from fasttext_lib.schedule import row_shrink
from fasttext_lib.train import featurize, train

D = "/tmp/fasttext_lib_bench_e2e/yelp-560000-2/"
out, ngrams, n, batches, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split(","), int(sys.argv[5])
full = read_labeled(D + "train.csv", limit=n)
tr = LabeledTexts(full.labels[:n], full.texts[:n])
feats = featurize(tr, None, TrainConfig(ngrams=ngrams))
res = {b: [] for b in batches}
for rep in range(reps):
    for b in batches:
        size, _, k = b.partition(":")
        shrink = float(k) if k else row_shrink(int(size), ngrams)
        T.sgd_row_shrink = optim.sgd_row_shrink = lambda config, _k=shrink: _k
        cfg = TrainConfig(epochs=2, ngrams=ngrams, seed=1, ctx="cpu", progress=False, lr=0.5, batch_size=int(size))
        marks = []
        m = train(tr, None, cfg, featurized=feats, on_epoch_end=lambda row: marks.append((time.process_time(), time.time())))
        # epoch 2 only (epoch 1 also pays the first-touch page faults of the table)
        res[b].append((marks[1][0] - marks[0][0], marks[1][1] - marks[0][1], m.history[-1]["seconds"]))
        print(b, res[b][-1], flush=True)
row = {"ngrams": ngrams, "docs": n, "cpu_s": {b: [round(r[0], 2) for r in v] for b, v in res.items()},
       "wall_s": {b: [round(r[1], 2) for r in v] for b, v in res.items()},
       "epoch_s": {b: [round(r[2], 2) for r in v] for b, v in res.items()}}
with open(out, "a") as f:
    f.write(json.dumps(row) + "\n")
print(json.dumps(row))
