"""Our trainer at Yelp scale under several settings, sharing one featurization (docs/RESULTS.md 3, "At scale").

Corpus: /tmp/fasttext_lib_bench_e2e/yelp-560000-2/ (560k train / 38k test), written by
``benchmarks/bench_e2e.py`` (``write_corpus``: ``generate_reviews(598000, seed=2)``).

usage: OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/scale_ours.py OUT.jsonl NGRAMS SETTING...
SETTING = EPOCHS:BATCH[:lr=X][:lrx=X][:omult=X][:pow=X][:shrink=K]; BATCH 'rule' = the default batch size; the lr defaults to
default_schedule's for that batch size (the rule's budget), times lrx; omult = an lr multiplier for the
output layer; pow, shrink = the SGD row scale B / (df**pow + shrink) (1, 0: the mean over the row's documents).
One JSON line per setting: final and per-epoch test accuracy, per-epoch docs/s.
"""
import json, sys, time
sys.path.insert(0, ".")
from fasttext_lib.config import TrainConfig
from fasttext_lib.data import read_labeled
from fasttext_lib.schedule import default_schedule, default_batch_size
from fasttext_lib import optim, batches
from fasttext_lib.train import featurize, train

D = "/tmp/fasttext_lib_bench_e2e/yelp-560000-2/"
out, ngrams = sys.argv[1], int(sys.argv[2])
tr, te = read_labeled(D + "train.csv"), read_labeled(D + "test.csv")
base = TrainConfig(ngrams=ngrams, seed=1, ctx="cpu", progress=False)
t = time.time(); feats = featurize(tr, te, base); print("featurized", time.time() - t, flush=True)
orig_make = optim.make_optimizer
for spec in sys.argv[3:]:
    parts = spec.split(":")
    epochs = int(parts[0])
    batch = default_batch_size(len(tr)) if parts[1] == "rule" else int(parts[1])
    opts = dict(p.split("=") for p in parts[2:])
    lr = float(opts["lr"]) if "lr" in opts else default_schedule(len(tr), 155.0, 2, ngrams, epochs, batch_size=batch)["lr"]
    lr *= float(opts.get("lrx", 1.0))
    omult = float(opts.get("omult", 1.0))
    batches.SGD_ROW_POWER = float(opts.get("pow", 1.0))
    batches.SGD_ROW_SHRINK = float(opts.get("shrink", 0.0))
    def make(config, steps, _m=omult):
        opt = orig_make(config, steps)
        if _m != 1.0:
            opt.set_lr_mult({optim.OUTPUT_KEY: _m})
        return opt
    import fasttext_lib.train as T
    T.make_optimizer = make
    cfg = TrainConfig(epochs=epochs, ngrams=ngrams, seed=1, ctx="cpu", progress=False, lr=lr, batch_size=batch)
    t = time.time()
    m = train(tr, te, cfg, featurized=feats)
    row = {"system": "fasttext_lib", "spec": spec, "ngrams": ngrams, "epochs": epochs, "batch": batch, "lr": lr, "omult": omult, "pow": batches.SGD_ROW_POWER, "shrink": batches.SGD_ROW_SHRINK,
           "accuracy": m.history[-1]["val_accuracy"], "seconds": time.time() - t,
           "per_epoch_acc": [round(h["val_accuracy"], 4) for h in m.history],
           "per_epoch_docs_s": [round(h["samples_per_s"]) for h in m.history]}
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row), flush=True)
