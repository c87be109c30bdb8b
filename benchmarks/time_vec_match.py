"""vec_files.VocabularyMatch.spelling's time a word (best of 5) on 200,000 words of each kind a published .vec holds:
lowercase ASCII, Cyrillic (lowercase, and one word in five capitalized), English capitalized. The vocabulary holds
none of them (most words of a large .vec are no vocabulary word). Run it on two trees to compare a change to the
matching rule (every word of a 2M-word .vec passes here once while training reads it).

usage: PYTHONPATH=TREE python benchmarks/time_vec_match.py
"""
import random
import time

from fasttext_lib.vec_files import VocabularyMatch

random.seed(0)
N = 200_000


def words(letters, capitalized=0.0):
    out = []
    for i in range(N):
        word = "".join(random.choice(letters) for _ in range(random.randint(3, 10)))
        out.append(word.capitalize() if random.random() < capitalized else word)
    return out


KINDS = {"ascii": words("abcdefghijklmnopqrstuvwxyz"),
         "cyrillic": words("абвгдеёжзийклмнопрстуфхцчшщъыьэюя"),
         "cyrillic 20% capitalized": words("абвгдеёжзийклмнопрстуфхцчшщъыьэюя", 0.2),
         "ascii capitalized": words("abcdefghijklmnopqrstuvwxyz", 1.0)}
vocabulary = {f"token{i}": i for i in range(50_000)}
for name, kind in KINDS.items():
    best = 1e9
    for _ in range(5):
        match = VocabularyMatch(vocabulary)
        start = time.perf_counter()
        for word in kind:
            match.spelling(word)
        best = min(best, time.perf_counter() - start)
    print(f"{name}: {best / N * 1e6:.2f} us a word", flush=True)
