"""fasttext_lib's autotune vs fastText C++'s ``-autotune-validation``, same budget, on the shared real sets.

For each set in ``--real-dir`` (default ``../shared/data/real/``: amazon_snippets, nyt_editorials,
drug_reviews) and each repetition ``r`` of ``--reps``: the train file is split 80/20 into train /
validation with permutation seed ``--split-seed + r`` (``autotune.split_validation``); both systems
search against that validation split for ``--duration`` seconds, and each one's final model is
scored once on the set's test file. Every repetition draws a new split and new seeds (both
systems' results depend on the split, and fastText's search is random), so the table shows the
mean and the range over the repetitions. Each run is a child process (this script re-invoked with a
hidden ``--worker`` flag), so neither pays for the other's imports or memory.

* **fasttext_lib**: ``autotune(train, val, duration=D, base=TrainConfig(ctx="cpu", seed=--seed + r))``.
  The budget covers the whole call (importing MXNet, featurizing, every trial, and the final model:
  the chosen setting trained again on train + validation, its default), so nothing runs after it. MXNet's CPU operators use OpenMP over the machine's
  cores and a second thread prepares batches: on the 2-core machine this was written on that is 2 threads.
* **fastText C++** (fasttext-wheel 0.9.2): ``train_supervised(input=train, autotuneValidationFile=val,
  autotuneDuration=D, thread=--threads (default 2, as above), seed=r, verbose=3)``; its other settings at
  their defaults. Its search runs for D seconds, then it trains the final model again with the
  best arguments, *outside* the budget (its "Training again with best arguments" step): its wall
  clock is therefore D + that retraining. The trial count is parsed from its progress line.

The two systems' runs alternate (per set and repetition, fastText first on even repetitions, ours
first on odd ones), so on a shared machine both see similar load; a duration-limited search still
gets fewer trials when the machine is busy, for both.

Accuracy = the test split's accuracy (fastText: ``model.test(test)[1]``, precision at 1, which is
accuracy for single-label data). ours: also whether the chosen trial is the start (the library
default for the data) and how many trials there were.

Usage: python benchmarks/bench_autotune.py --duration 60 --reps 3 --out build/bench_autotune
       (writes runs.csv, autotune.md (mean and range per set) there and prints the markdown)
       python benchmarks/bench_autotune.py --real-dir build/real_cache --sets tweets,movie_snippets ...
       (the VADER sets, built by ``benchmarks/bench_real.py --vader``)
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
SETS = ("amazon_snippets", "nyt_editorials", "drug_reviews")


def split_files(real_dir, name, seed, tmp):
    """train/val (80/20 of the train file, fixed permutation) and test, as normalized fastText-format files."""
    from fasttext_lib.autotune import split_validation
    from fasttext_lib.data import read_labeled
    from fasttext_lib.writers import write_fasttext

    train, val = split_validation(read_labeled(os.path.join(real_dir, f"{name}_train.csv")), fraction=0.2, seed=seed)
    paths = {part: write_fasttext(data, os.path.join(tmp, f"{name}.{part}")) for part, data in (("train", train), ("val", val))}
    paths["test"] = write_fasttext(read_labeled(os.path.join(real_dir, f"{name}_test.csv")), os.path.join(tmp, f"{name}.test"))
    return paths


def run_ours(spec):
    started = time.time()
    from fasttext_lib.autotune import autotune
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.data import read_labeled
    from fasttext_lib.predict import Predictor

    train, val, test = (read_labeled(spec[k]) for k in ("train", "val", "test"))
    result = autotune(train, val, duration=spec["duration"], base=TrainConfig(ctx="cpu", seed=spec["seed"]), verbose=True)
    seconds = time.time() - started
    best = result.best_config
    model = result.trained
    accuracy = Predictor(model.model, model.featurizer, model.labels, best).evaluate(test)["accuracy"]
    chosen = int(result.trained.autotune["best_trial"])
    return {"test_accuracy": accuracy, "val_accuracy": float(result.best_trial.val_accuracy), "trials": len(result.trials),
            "chosen_trial": chosen, "refit": bool(result.trained.autotune["refit"]), "best_val_trial": int(result.trials.sort_values("val_accuracy", ascending=False, kind="stable").trial.iloc[0]),
            "seconds": seconds, "setting": f"{best.optimizer} lr {best.lr:.3g} batch {best.batch_size} epochs {best.epochs} "
                                            f"dim {best.emsize} ngrams {best.ngrams} buckets {best.buckets if best.ngrams > 1 else 0}"}


def run_fasttext(spec):
    import fasttext

    started = time.time()
    model = fasttext.train_supervised(input=spec["train"], autotuneValidationFile=spec["val"], autotuneDuration=int(spec["duration"]),
                                      thread=spec["threads"], seed=spec["rep"], verbose=3)
    seconds = time.time() - started
    a = model.f.getArgs()
    return {"test_accuracy": float(model.test(spec["test"])[1]), "val_accuracy": float(model.test(spec["val"])[1]), "trials": None,
            "seconds": seconds, "setting": f"lr {a.lr:.3g} epochs {a.epoch} dim {a.dim} ngrams {a.wordNgrams} bucket {a.bucket} "
                                            f"minn {a.minn} maxn {a.maxn} dsub {a.dsub}"}


def worker(system, spec_json, result_path):
    import resource

    spec = json.loads(spec_json)
    # fastText's search ranges reach 10M buckets x 1000 dims (tens of GB): cap the address space so that
    # such a trial fails here (a row marked failed) instead of waking the OOM killer on a shared machine.
    limit = int(spec["memory_gb"] * 2 ** 30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    result = (run_ours if system == "ours" else run_fasttext)(spec)
    with open(result_path, "w") as f:
        json.dump(result, f)


def run_child(system, spec, tmp):
    result_path = os.path.join(tmp, f"{system}.json")
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", system, json.dumps(spec), result_path],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ROOT})
    if spec.get("log"):  # each run's own output (ours: one line per trial), for reading the searches afterwards
        with open(f"{spec['log']}.{system}.log", "w") as f:
            f.write(proc.stdout + proc.stderr)
    if proc.returncode != 0:  # e.g. killed for memory (fastText's search may pick a 10M-bucket, 500-dim model): a row, not a stop
        print(f"{system} failed on {spec['train']} (exit {proc.returncode}):\n{proc.stderr[-3000:]}", file=sys.stderr)
        return {"test_accuracy": float("nan"), "val_accuracy": float("nan"), "trials": None, "seconds": float("nan"),
                "setting": f"failed (exit {proc.returncode})"}
    with open(result_path) as f:
        result = json.load(f)
    if system == "fasttext":  # its C++ progress line: "Progress: 100.0% Trials:   17 Best score: ..."
        counts = re.findall(r"Trials:\s+(\d+)", proc.stdout + proc.stderr)
        result["trials"] = int(counts[-1]) if counts else None
    return result


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return worker(*sys.argv[2:5])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=300.0, help="seconds of search for each system (fastText: whole seconds)")
    parser.add_argument("--reps", type=int, default=3, help="repetitions per set (each: a new split and new seeds)")
    parser.add_argument("--threads", type=int, default=2, help="fastText's thread count (ours: OpenMP over the cores)")
    parser.add_argument("--seed", type=int, default=42, help="fasttext_lib's training seed (+ the repetition)")
    parser.add_argument("--memory-gb", type=float, default=10.0, help="address-space limit of each run (a run that needs more fails)")
    parser.add_argument("--split-seed", type=int, default=0, help="the 80/20 train/validation permutation (+ the repetition)")
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--real-dir", default=os.path.join(ROOT, "..", "shared", "data", "real"))
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "bench_autotune"))
    args = parser.parse_args()

    import pandas as pd

    rows = []
    os.makedirs(args.out, exist_ok=True)
    systems = (("fasttext", "fastText C++ autotune"), ("ours", "fasttext_lib autotune"))
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.sets.split(","):
            for rep in range(args.reps):
                spec = {**split_files(args.real_dir, name, args.split_seed + rep, tmp), "duration": args.duration,
                        "threads": args.threads, "seed": args.seed + rep, "rep": rep, "memory_gb": args.memory_gb,
                        "log": os.path.join(args.out, f"{name}.{rep}")}
                for system, label in (systems if rep % 2 == 0 else systems[::-1]):
                    result = run_child(system, spec, tmp)
                    rows.append({"set": name, "rep": rep, "system": label, "duration_s": args.duration, **result})
                    print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
                    pd.DataFrame(rows).to_csv(os.path.join(args.out, "runs.csv"), index=False)  # kept as it grows
    runs = pd.DataFrame(rows)
    lines = ["| set | fastText C++ autotune: test mean (min..max) | trials | fasttext_lib autotune: test mean (min..max) | trials | ours kept the start | diff |",
             "|---|---|---|---|---|---|---|"]
    for name in args.sets.split(","):
        cells, means = [], []
        for _, label in systems:
            r = runs[(runs.set == name) & (runs.system == label)]
            means.append(r.test_accuracy.mean())
            cells += [f"{r.test_accuracy.mean():.4f} ({r.test_accuracy.min():.4f}..{r.test_accuracy.max():.4f})",
                      "/".join(str(t) for t in r.trials)]
        ours = runs[(runs.set == name) & (runs.system == systems[1][1])]
        kept = f"{int((ours.chosen_trial == 1).sum())} of {len(ours)}"
        lines.append(f"| {name} | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} | {kept} | {means[1] - means[0]:+.4f} |")
    markdown = "\n".join(lines)
    with open(os.path.join(args.out, "autotune.md"), "w") as f:
        f.write(markdown + "\n")
    print(markdown)


if __name__ == "__main__":
    main()
