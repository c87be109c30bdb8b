"""fastText C++ (thread=1, defaults, dim 100, seed 1) on the yelp-560000-2 corpus (see scale_ours.py): accuracy.

usage: OMP_NUM_THREADS=1 python benchmarks/scale_fasttext.py OUT.jsonl NGRAMSxEPOCHS[xSEED]...   (e.g. 2x10 1x10 2x5x2)
"""
import json, os, sys, time
import fasttext
D = os.path.join(os.environ.get("SCALE_CORPUS", "/tmp/fasttext_lib_bench_e2e/yelp-560000-2"), "")  # another corpus: SCALE_CORPUS=DIR
for spec in sys.argv[2:]:
    ngrams, epochs, seed = (list(map(int, spec.split("x"))) + [1])[:3]
    t = time.time()
    m = fasttext.train_supervised(input=D + "train.txt", epoch=epochs, wordNgrams=ngrams, dim=100, thread=1, seed=seed, verbose=0)
    secs = time.time() - t
    acc = float(m.test(D + "test.txt")[1])
    with open(sys.argv[1], "a") as f:
        f.write(json.dumps({"system": "fastText C++", "ngrams": ngrams, "epochs": epochs, "seed": seed, "accuracy": acc, "seconds": secs}) + "\n")
    print(spec, acc, secs, flush=True)
