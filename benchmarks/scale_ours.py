"""Our trainer at Yelp scale under several settings, sharing one featurization (docs/RESULTS.md 3, "At scale").

Corpus: /tmp/fasttext_lib_bench_e2e/yelp-560000-2/ (560k train / 38k test), written by
``benchmarks/bench_e2e.py`` (``write_corpus``: ``generate_reviews(598000, seed=2)``).

usage: OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/scale_ours.py OUT.jsonl NGRAMS SETTING...
SETTING = EPOCHS:BATCH[:lr=X][:lrx=X|nolength][:omult=X][:shrink=K][:seed=S]; BATCH 'rule' = the default batch size; the lr
defaults to default_schedule's for that batch size (the rule's budget), times lrx; omult = an extra lr
multiplier for the output layer; shrink = the SGD row scale's k (B (1 + k) / (df + k), and the output
layer's lr times 1 + k), instead of the library's schedule.row_shrink(BATCH, NGRAMS) (bigrams: 0 up to batch 256, 3 at 1024; unigrams: 0).
One JSON line per setting: final and per-epoch test accuracy, per-epoch docs/s.
(The runs with a power on df, ``pow=``, used commit b7bef6d's version of this script: scale B / df**pow.)
"""
import json, sys, time
sys.path.insert(0, ".")
from fasttext_lib.config import TrainConfig
from fasttext_lib.data import read_labeled
from fasttext_lib.schedule import default_schedule, default_batch_size, length_factor, mean_tokens, row_shrink
from fasttext_lib import optim
import fasttext_lib.train as T
from fasttext_lib.train import featurize, train

import os
D = os.path.join(os.environ.get("SCALE_CORPUS", "/tmp/fasttext_lib_bench_e2e/yelp-560000-2"), "")  # another corpus: SCALE_CORPUS=DIR
out, ngrams = sys.argv[1], int(sys.argv[2])
tr, te = read_labeled(D + "train.csv"), read_labeled(D + "test.csv")
# The rule's inputs as train() measures them (the first 10k documents' mean length, the classes): 1x length
# and class terms on every corpus before the long-document ones (Yelp-shaped: 155 tokens, 2 classes).
length, classes = mean_tokens(tr.texts[:10_000]), len(set(tr.labels))
print("mean tokens", round(length, 1), "classes", classes, flush=True)
base = TrainConfig(ngrams=ngrams, seed=1, ctx="cpu", progress=False)
t = time.time(); feats = featurize(tr, te, base); print("featurized", time.time() - t, flush=True)
orig_make = optim.make_optimizer
for spec in sys.argv[3:]:
    parts = spec.split(":")
    epochs = int(parts[0])
    batch = default_batch_size(len(tr)) if parts[1] == "rule" else int(parts[1])
    opts = dict(p.split("=") for p in parts[2:] if "=" in p)
    lr = float(opts["lr"]) if "lr" in opts else default_schedule(len(tr), length, classes, ngrams, epochs, batch_size=batch)["lr"]
    lr *= float(opts.get("lrx", 1.0))
    if "nolength" in parts:  # the rule without its length term (schedule.length_factor)
        lr /= length_factor(length)
    omult = float(opts.get("omult", 1.0))
    shrink = float(opts["shrink"]) if "shrink" in opts else row_shrink(batch, ngrams)
    T.sgd_row_shrink = optim.sgd_row_shrink = lambda config, _k=shrink: _k
    def make(config, steps, _m=omult):
        opt = orig_make(config, steps)  # the output layer's lr x (1 + shrink)
        if _m != 1.0:
            opt.set_lr_mult({optim.OUTPUT_KEY: _m * opt.lr_mult.get(optim.OUTPUT_KEY, 1.0)})
        return opt
    T.make_optimizer = make
    seed = int(opts.get("seed", 1))  # the training seed (init, order); the featurization is the same
    cfg = TrainConfig(epochs=epochs, ngrams=ngrams, seed=seed, ctx="cpu", progress=False, lr=lr, batch_size=batch)
    t = time.time()
    m = train(tr, te, cfg, featurized=feats)
    row = {"system": "fasttext_lib", "spec": spec, "ngrams": ngrams, "epochs": epochs, "batch": batch, "lr": lr, "omult": omult, "shrink": shrink, "seed": seed,
           "accuracy": m.history[-1]["val_accuracy"], "seconds": time.time() - t,
           "per_epoch_acc": [round(h["val_accuracy"], 4) for h in m.history],
           "per_epoch_docs_s": [round(h["samples_per_s"]) for h in m.history]}
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row), flush=True)
