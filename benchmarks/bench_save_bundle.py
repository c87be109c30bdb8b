"""Bundle write time inside real ``train`` runs, for one or more source trees (e.g. main and a branch).

Each run is the CLI's ``train`` in a fresh process (so ``save_bundle`` is that process's first save, with
its first-touch allocations, as a user's run has) with ``bundle.save_bundle`` wrapped in a timer; the
trees take turns, so a change in the machine's load hits them alike. Prints per run the save time, the
process's wall time and peak RSS, then the medians, and checks that every tree wrote the same bytes
(training is seeded, so the data files but metrics.json, which holds timings, must be identical).

Default workload: issue 12's short texts (34k tweets-sized documents, bigrams, 10 epochs, sgd lr 0.5,
batch 256; the corpus from ``bench_e2e.py``).

Usage: python benchmarks/bench_save_bundle.py --trees /work/main /work/wt/savefast --runs 6
"""
import argparse
import glob
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

CHILD = """
import os, sys, time
sys.path.insert(0, os.getcwd())
from fasttext_lib import bundle, cli
real = bundle.save_bundle
def timed(*a, **k):
    t = time.perf_counter()
    try:
        return real(*a, **k)
    finally:
        print(f"SAVE_SECONDS {time.perf_counter() - t:.4f}", file=sys.stderr)
bundle.save_bundle = timed
sys.exit(cli.main(sys.argv[1:]))
"""


def data_digest(bundle_dir):
    """sha256 of each data file (by its logical stem); config.json and metrics.json (it records each
    epoch's seconds) aside."""
    out = {}
    for path in sorted(glob.glob(os.path.join(bundle_dir, "*-*"))):
        if os.path.basename(path).startswith("metrics-"):
            continue
        with open(path, "rb") as f:
            out[re.sub(r"-[0-9a-f]{16}", "", os.path.basename(path))] = hashlib.sha256(f.read()).hexdigest()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trees", nargs="+", required=True, help="source trees (each holds fasttext_lib/)")
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--train", default=os.path.join(tempfile.gettempdir(), "fasttext_lib_bench_e2e", "short-34000", "train.csv"))
    ap.add_argument("--args", default="--epochs 10 --ngrams 2 --no-progress --optimizer sgd --lr 0.5 --batch-size 256")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="bench_save_bundle-")
    script = os.path.join(work, "child.py")
    with open(script, "w") as f:
        f.write(CHILD)
    results = {tree: [] for tree in args.trees}
    digests = {}
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    for run in range(args.runs):
        for tree in args.trees if run % 2 == 0 else args.trees[::-1]:
            out = os.path.join(work, f"bundle-{run}")
            cmd = ["/usr/bin/time", "-f", "TIME %e %M", sys.executable, script, "train", "--train", args.train,
                   "--output", out] + args.args.split()
            done = subprocess.run(cmd, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if done.returncode != 0:
                sys.exit(f"{tree}: train failed:\n{done.stderr[-2000:]}")
            save = float(re.search(r"SAVE_SECONDS (\S+)", done.stderr).group(1))
            wall, rss_kb = re.search(r"TIME (\S+) (\d+)", done.stderr).groups()
            results[tree].append((save, float(wall), int(rss_kb) / 1024))
            digests.setdefault(tree, data_digest(out))
            shutil.rmtree(out)
            print(f"{tree}: save_bundle {save:.3f} s, process {float(wall):.2f} s, peak RSS {int(rss_kb) / 1024:.0f} MB",
                  flush=True)
    for tree, rows in results.items():
        save, wall, rss = (statistics.median(col) for col in zip(*rows))
        print(f"median {tree}: save_bundle {save:.3f} s, process {wall:.2f} s, peak RSS {rss:.0f} MB ({len(rows)} runs)")
    same = len({tuple(sorted(d.items())) for d in digests.values()}) == 1
    print("data files identical across trees:" if same else "DATA FILES DIFFER:", digests[args.trees[0]] if same else digests)
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
