"""End to end, side by side with fastText C++: CSV in -> bundle out, serving, bundles, scaling.

Every measured run is its own child process; wall-clock covers the whole process (interpreter start,
imports, reading, featurization, training, writing the model) and peak RSS is the child's own
high-water mark (``ru_maxrss`` of that process, measured through GNU time so that it is not
inflated by this process's own peak: the same number as its ``VmHWM``).

* **fasttext_lib**: ``python -m fasttext_lib train --train train.csv --output DIR`` with the
  library's default settings (plus ``--ngrams``, ``--epochs``), reading the raw Zhang CSV.
* **fastText C++**: ``fasttext.train_supervised(input=train.txt, epoch=E, wordNgrams=N, thread=2)``
  then ``save_model``, on the same documents already normalized into fastText's format (made
  beforehand, untimed: fastText's own pipeline normalizes with a shell script). Its other settings
  are its defaults (lr 0.1, dim 100, bucket 2M). With 2 threads it is not deterministic; compare
  accuracy at ``thread=1`` with benchmarks/bench_fasttext.py.
* Accuracy is measured afterwards on the test split, outside the timed process.

Sections (each optional): ``yelp`` (5 and 10 epochs x uni/bigrams), ``short`` (34k tweet-sized
documents, ~15 tokens, bigrams, 10 epochs, ``--short-args``), ``tiny`` (the built-in 2.9k-sentence
sample, bigrams, 10 epochs, full and compact bundles), ``serving`` (one review p50/p99, 5,000
reviews in one call, the SageMaker handler's input_fn -> predict_fn -> output_fn overhead, vs
fastText's ``predict``), ``bundles`` (size, save, load and upload to a local S3 server for the full,
compact float32, float16, int8 and int4 bundles, with the largest prediction difference and test accuracy), ``scaling``
(20k, 100k, 560k, 2M documents: docs/s and peak RSS, table and PNG).

Run on a quiet machine; prints a markdown report (also written to ``--md``), raw numbers to ``--json``:

    OMP_NUM_THREADS=2 PYTHONPATH=. python benchmarks/bench_e2e.py --md /tmp/e2e.md --json /tmp/e2e.json \\
        --plot docs/scaling.png
    PYTHONPATH=. python benchmarks/bench_e2e.py --quick          # a smoke test of every section (minutes)
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
PY = sys.executable


def run_child(argv, env=None):
    """Run ``argv``; returns (seconds, peak RSS MB, stdout). Raises with its stderr if it fails."""
    full_env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    full_env.update(env or {})
    # Linux hands a forked child its parent's RSS high-water mark at exec (exec_mmap), so a child of
    # this process (which holds a generated corpus) would report at least our peak. A tiny launcher
    # in between (GNU time, which waits for the real command with wait4) keeps each number its own.
    launcher = ["/usr/bin/time", "-f", "PEAK_RSS_KB %M"] if os.path.exists("/usr/bin/time") else []
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(launcher + list(argv), stdout=out, stderr=err, env=full_env, cwd=ROOT)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
        if child.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[:4])} ... failed ({child.returncode}): {stderr[-2000:]}")
    peaks = [int(line.split()[1]) for line in stderr.splitlines() if line.startswith("PEAK_RSS_KB ")]
    return seconds, (peaks[-1] if peaks else usage.ru_maxrss) / 1024, stdout


# ---- data ----

def write_corpus(directory, train_docs, test_docs, seed, max_tokens=None, **shape):
    """train.csv / test.csv (Zhang CSV: what we read) and train.txt / test.txt (normalized fastText
    format: what fastText C++ reads), from the synthetic Yelp-shaped generator (``shape``: its other
    parameters, e.g. ``num_classes``, ``median_length``; benchmarks/write_corpus.py)."""
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.writers import write_csv, write_fasttext
    from fasttext_lib.synthetic import generate_reviews
    from fasttext_lib.text import normalize_text

    os.makedirs(directory, exist_ok=True)
    if os.path.exists(os.path.join(directory, "test.txt")):
        return directory
    data = generate_reviews(train_docs + test_docs, seed=seed, **shape)
    texts = data.texts if max_tokens is None else [" ".join(t.split()[:max_tokens]) for t in data.texts]
    for name, part in (("train", slice(0, train_docs)), ("test", slice(train_docs, None))):
        split = LabeledTexts(data.labels[part], texts[part])
        write_csv(split, os.path.join(directory, f"{name}.csv"))
        write_fasttext(LabeledTexts(split.labels, [normalize_text(t) for t in split.texts]),
                       os.path.join(directory, f"{name}.txt"))
    return directory


def sample_corpus(directory):
    """The built-in sample (real sentences) in both formats."""
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.writers import write_fasttext
    from fasttext_lib.sample import load_sample, sample_path
    from fasttext_lib.text import normalize_text

    os.makedirs(directory, exist_ok=True)
    for split in ("train", "test"):
        shutil.copy(sample_path(split), os.path.join(directory, f"{split}.csv"))
        data = load_sample(split)
        write_fasttext(LabeledTexts(data.labels, [normalize_text(t) for t in data.texts]),
                       os.path.join(directory, f"{split}.txt"))
    return directory


# ---- the two systems ----

def ours(corpus, out, epochs, ngrams, extra=()):
    argv = [PY, "-m", "fasttext_lib", "train", "--train", os.path.join(corpus, "train.csv"), "--output", out,
            "--epochs", str(epochs), "--ngrams", str(ngrams), "--no-progress", "--overwrite", *extra]  # --work is reused
    seconds, rss, _ = run_child(argv)
    _, _, stdout = run_child([PY, "-m", "fasttext_lib", "evaluate", "--model", out, "--data",
                              os.path.join(corpus, "test.csv")])
    return {"seconds": seconds, "rss_mb": rss, "accuracy": json.loads(stdout.strip().splitlines()[-1])["accuracy"],
            "bundle_mb": dir_mb(out)}


FASTTEXT_TRAIN = """
import sys, fasttext
model = fasttext.train_supervised(input=sys.argv[1], epoch=int(sys.argv[3]), wordNgrams=int(sys.argv[4]),
                                  thread=int(sys.argv[5]), verbose=0)
model.save_model(sys.argv[2])
"""
FASTTEXT_TEST = """
import sys, fasttext
n, precision, _ = fasttext.load_model(sys.argv[1]).test(sys.argv[2])
print(precision)
"""


def fasttext_cpp(corpus, out, epochs, ngrams, threads=2):
    seconds, rss, _ = run_child([PY, "-c", FASTTEXT_TRAIN, os.path.join(corpus, "train.txt"), out, str(epochs),
                                 str(ngrams), str(threads)])
    _, _, stdout = run_child([PY, "-c", FASTTEXT_TEST, out, os.path.join(corpus, "test.txt")])
    return {"seconds": seconds, "rss_mb": rss, "accuracy": float(stdout.strip()), "bundle_mb": os.path.getsize(out) / 2**20}


def dir_mb(path):
    return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path)) / 2**20


def compare(rows, name, corpus, work, epochs, ngrams, extra=()):
    a = ours(corpus, os.path.join(work, f"ours-{name}"), epochs, ngrams, extra)
    b = fasttext_cpp(corpus, os.path.join(work, f"ft-{name}.bin"), epochs, ngrams)
    rows.append({"case": name, "epochs": epochs, "ngrams": ngrams, "ours": a, "fasttext": b})
    print(json.dumps(rows[-1]), flush=True)


# ---- serving and bundles (one child each, so that every system's import and memory are its own) ----

SERVING = r"""
import json, sys, time
import numpy as np
bundle, ft_model, test_csv, n_single = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
from fasttext_lib.data import read_labeled
from fasttext_lib.text import normalize_text
texts = read_labeled(test_csv).texts
out = {}
if bundle != "-":
    import gluonnlp, mxnet  # imported before timing the load (a server imports once)
    from fasttext_lib import sm_serve
    start = time.perf_counter(); block = sm_serve.model_fn(bundle); out["load_s"] = time.perf_counter() - start
    predictor = block.predictor
    predictor.predict(texts[:10])
    single = []
    for t in texts[:n_single]:
        s = time.perf_counter(); predictor.predict([t]); single.append(time.perf_counter() - s)
    handler = []
    for t in texts[:n_single]:
        body = json.dumps(t)
        s = time.perf_counter()
        sm_serve.output_fn(sm_serve.predict_fn(sm_serve.input_fn(body, "application/json"), block), "application/json")
        handler.append(time.perf_counter() - s)
    batch = texts[:5000]
    s = time.perf_counter(); predictor.predict(batch); batch_s = time.perf_counter() - s
    out.update(single_p50_ms=1e3 * np.median(single), single_p99_ms=1e3 * np.percentile(single, 99),
               handler_p50_ms=1e3 * np.median(handler), handler_p99_ms=1e3 * np.percentile(handler, 99),
               handler_overhead_p50_ms=1e3 * (np.median(handler) - np.median(single)),
               batch_docs_per_s=len(batch) / batch_s)
else:
    import fasttext
    model = fasttext.load_model(ft_model)
    norm = [normalize_text(t) for t in texts]  # fastText expects normalized text; not timed
    model.predict(norm[:10])
    single = []
    for t in norm[:n_single]:
        s = time.perf_counter(); model.predict(t); single.append(time.perf_counter() - s)
    batch = norm[:5000]
    s = time.perf_counter(); model.predict(batch); batch_s = time.perf_counter() - s
    out.update(single_p50_ms=1e3 * np.median(single), single_p99_ms=1e3 * np.percentile(single, 99),
               batch_docs_per_s=len(batch) / batch_s)
print(json.dumps(out))
"""

BUNDLES = r"""
import json, os, sys, time
import numpy as np
src, work, test_csv = sys.argv[1], sys.argv[2], sys.argv[3]
from fasttext_lib.bundle import save_bundle
from fasttext_lib.data import read_labeled
from fasttext_lib.predict import Predictor
from fasttext_lib.train import TrainedModel
from fasttext_lib.config import TrainConfig
test = read_labeled(test_csv)
texts = test.texts
import gluonnlp, mxnet  # imported before any timing
full = Predictor.load(src)
reference = full.predict_proba(texts)
def accuracy(probs):
    return float(np.mean([full.labels[k] == label for k, label in zip(probs.argmax(axis=1), test.labels)]))
trained = TrainedModel(full.model, full.featurizer, full.labels, TrainConfig(**full.config["train_config"]), ["cpu(0)"],
                       history=full.metrics.get("history", []))
out = {}
bucket = "s3://bench-" + str(os.getpid())
import boto3; boto3.client("s3").create_bucket(Bucket=bucket[5:])
for name, compact in (("full", None), ("compact float32", "float32"), ("compact float16", "float16"),
                      ("compact int8", "int8"), ("compact int4", "int4")):
    where = os.path.join(work, name.replace(" ", "-"))
    s = time.perf_counter(); save_bundle(trained, where, compact=compact); save_s = time.perf_counter() - s
    s = time.perf_counter(); loaded = Predictor.load(where); load_s = time.perf_counter() - s
    probs = loaded.predict_proba(texts)
    diff, acc = float(np.abs(probs - reference).max()), accuracy(probs)
    s = time.perf_counter(); save_bundle(trained, bucket + "/" + name.replace(" ", "-"), compact=compact)
    upload_s = time.perf_counter() - s  # save straight to the local S3 server: write, upload, commit
    size = sum(os.path.getsize(os.path.join(where, f)) for f in os.listdir(where)) / 2**20
    out[name] = dict(size_mb=size, save_s=save_s, load_s=load_s, upload_local_s3_s=upload_s, max_prob_diff=diff,
                     accuracy=acc)
    del loaded
print(json.dumps(out))
"""


def serving(corpus, bundle, ft_model, n_single):
    test_csv = os.path.join(corpus, "test.csv")
    _, rss_a, a = run_child([PY, "-c", SERVING, bundle, "-", test_csv, str(n_single)])
    _, rss_b, b = run_child([PY, "-c", SERVING, "-", ft_model, test_csv, str(n_single)])
    a, b = json.loads(a.splitlines()[-1]), json.loads(b.splitlines()[-1])
    a["rss_mb"], b["rss_mb"] = rss_a, rss_b
    return {"ours": a, "fasttext": b}


def bundles(corpus, bundle, work):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    from local_s3 import local_s3

    with local_s3():  # a local S3 server (moto) in this process; the child talks to it over HTTP
        _, _, out = run_child([PY, "-c", BUNDLES, bundle, work, os.path.join(corpus, "test.csv")])
    return json.loads(out.splitlines()[-1])


# ---- report ----

def fmt_pair(a, b, key, digits=0):
    return f"{a[key]:,.{digits}f} / {b[key]:,.{digits}f} / **{a[key] / b[key]:.2f}x**"


def report(results):
    lines = []
    if results.get("cases"):
        lines += ["| case | epochs | ngrams | wall s ours / fastText / ratio | peak RSS MB ours / fastText / ratio "
                  "| accuracy ours / fastText | model MB ours / fastText |", "|---|---|---|---|---|---|---|"]
        for r in results["cases"]:
            a, b = r["ours"], r["fasttext"]
            lines.append(f"| {r['case']} | {r['epochs']} | {r['ngrams']} | {fmt_pair(a, b, 'seconds', 1)} | "
                         f"{fmt_pair(a, b, 'rss_mb')} | {a['accuracy']:.4f} / {b['accuracy']:.4f} | "
                         f"{a['bundle_mb']:,.0f} / {b['bundle_mb']:,.0f} |")
    if results.get("serving"):
        a, b = results["serving"]["ours"], results["serving"]["fasttext"]
        lines += ["", "| serving | fasttext_lib | fastText C++ |", "|---|---|---|",
                  f"| one review p50 / p99 ms | {a['single_p50_ms']:.3f} / {a['single_p99_ms']:.3f} | "
                  f"{b['single_p50_ms']:.3f} / {b['single_p99_ms']:.3f} |",
                  f"| 5,000 reviews in one call, docs/s | {a['batch_docs_per_s']:,.0f} | {b['batch_docs_per_s']:,.0f} |",
                  f"| SageMaker handler (input_fn -> predict_fn -> output_fn), one JSON review, p50 / p99 ms | "
                  f"{a['handler_p50_ms']:.3f} / {a['handler_p99_ms']:.3f} (overhead over predict: "
                  f"{a['handler_overhead_p50_ms']:.3f}) | - |",
                  f"| bundle load s | {a['load_s']:.2f} | - |", f"| serving process peak RSS MB | {a['rss_mb']:,.0f} | "
                  f"{b['rss_mb']:,.0f} |"]
    if results.get("bundles"):
        lines += ["", "| bundle | size MB (of full) | save s | load s | upload to local S3 s | max prob. difference "
                  "| test accuracy |", "|---|---|---|---|---|---|---|"]
        full_mb = results["bundles"]["full"]["size_mb"]
        for name, r in results["bundles"].items():
            lines.append(f"| {name} | {r['size_mb']:,.1f} ({r['size_mb'] / full_mb:.3f}) | {r['save_s']:.2f} | "
                         f"{r['load_s']:.2f} | {r['upload_local_s3_s']:.2f} | {r['max_prob_diff']:.2e} | "
                         f"{r.get('accuracy', float('nan')):.4f} |")
    if results.get("scaling"):
        lines += ["", "| training docs | wall s | docs/s (docs x epochs / wall) | peak RSS MB | accuracy |",
                  "|---|---|---|---|---|"]
        for r in results["scaling"]:
            lines.append(f"| {r['docs']:,} | {r['seconds']:.1f} | {r['docs_per_s']:,.0f} | {r['rss_mb']:,.0f} | "
                         f"{r['accuracy']:.4f} |")
    return "\n".join(lines)


def plot(scaling, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    docs = [r["docs"] for r in scaling]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot(docs, [r["docs_per_s"] for r in scaling], "o-")
    left.set(xscale="log", xlabel="training documents", ylabel="docs/s (end to end)", title="speed")
    right.plot(docs, [r["rss_mb"] for r in scaling], "o-")
    right.set(xscale="log", xlabel="training documents", ylabel="peak RSS (MB)", title="memory")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sections", default="yelp,short,tiny,serving,bundles,scaling")
    ap.add_argument("--train-docs", type=int, default=560_000)
    ap.add_argument("--test-docs", type=int, default=38_000)
    ap.add_argument("--epochs", default="5,10")
    ap.add_argument("--ngrams", default="1,2")
    ap.add_argument("--short-args", default="--optimizer sgd --lr 0.5 --batch-size 256",
                    help="fasttext_lib settings of the short-text case (the issue's)")
    ap.add_argument("--scaling", default="20000,100000,560000,2000000")
    ap.add_argument("--scaling-epochs", type=int, default=5)
    ap.add_argument("--serving-reviews", type=int, default=2000, help="single-review requests timed")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "fasttext_lib_bench_e2e"))
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="tiny sizes: checks that every section runs")
    ap.add_argument("--md"), ap.add_argument("--json"), ap.add_argument("--plot")
    args = ap.parse_args()
    if args.quick:
        args.train_docs, args.test_docs, args.epochs, args.scaling, args.serving_reviews = 3000, 500, "1", "2000,4000", 100
    sections = set(args.sections.split(","))
    os.makedirs(args.work, exist_ok=True)
    results = {"cases": [], "command": " ".join(sys.argv)}
    yelp = write_corpus(os.path.join(args.work, f"yelp-{args.train_docs}-{args.seed}"), args.train_docs,
                        args.test_docs, args.seed)
    if "yelp" in sections or "serving" in sections or "bundles" in sections:
        for epochs in [int(e) for e in args.epochs.split(",")]:
            for ngrams in [int(n) for n in args.ngrams.split(",")]:
                if "yelp" in sections or (ngrams == 2 and epochs == int(args.epochs.split(",")[0])):
                    compare(results["cases"], f"yelp-shaped {args.train_docs:,} docs", yelp, args.work, epochs, ngrams)
    if "short" in sections:
        n = 3000 if args.quick else 34_000
        short = write_corpus(os.path.join(args.work, f"short-{n}"), n, n // 10, args.seed, max_tokens=15)
        compare(results["cases"], f"short texts {n:,} docs (~15 tokens)", short, args.work, 10, 2,
                args.short_args.split())
    if "tiny" in sections:
        tiny = sample_corpus(os.path.join(args.work, "sample"))
        compare(results["cases"], "built-in sample (2.9k sentences)", tiny, args.work, 10, 2)
        compare(results["cases"], "built-in sample, --compact none (full table)", tiny, args.work, 10, 2,
                ["--compact", "none"])
    first_bigram = os.path.join(args.work, f"ours-yelp-shaped {args.train_docs:,} docs")
    ft_bigram = os.path.join(args.work, f"ft-yelp-shaped {args.train_docs:,} docs.bin")
    if "serving" in sections:
        results["serving"] = serving(yelp, first_bigram, ft_bigram, args.serving_reviews)
        print(json.dumps(results["serving"]), flush=True)
    if "bundles" in sections:
        results["bundles"] = bundles(yelp, first_bigram, os.path.join(args.work, "bundles"))
        print(json.dumps(results["bundles"]), flush=True)
    if "scaling" in sections:
        results["scaling"] = []
        for docs in [int(d) for d in args.scaling.split(",")]:
            corpus = write_corpus(os.path.join(args.work, f"yelp-{docs}-{args.seed}"), docs, max(500, docs // 20), args.seed)
            r = ours(corpus, os.path.join(args.work, f"scaling-{docs}"), args.scaling_epochs, 2)
            results["scaling"].append(dict(docs=docs, docs_per_s=docs * args.scaling_epochs / r["seconds"], **r))
            shutil.rmtree(os.path.join(args.work, f"scaling-{docs}"))
            print(json.dumps(results["scaling"][-1]), flush=True)
        if args.plot:
            plot(results["scaling"], args.plot)
    text = report(results)
    print(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(f"```\n{results['command']}\n```\n\n{text}\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
