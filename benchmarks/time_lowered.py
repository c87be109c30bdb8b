"""text.lowered's time (best of 21) on 1 MB of text of each kind Python stores: Latin-1 (French), French starting with
a typographic apostrophe (read as ASCII's first), Chinese (below U+10000), English with an emoji (past U+FFFF). Run it
on two trees alternately to compare a change to the text rule (docs/RESULTS.md 4, "The marks text rule's cost").

usage: PYTHONPATH=TREE python benchmarks/time_lowered.py
"""
import time

from fasttext_lib.text import lowered

TEXTS = {"latin": "Le café était très bon, je recommande vivement ce restaurant à tous. ",
         "latin+’": "L’café était très bon, je recommande vivement ce restaurant à tous. ",
         "cjk": "这家餐厅的菜非常好吃，服务也很周到，我会再来的。", "emoji": "great food 😀 loved it "}
for name, piece in TEXTS.items():
    text = (piece * (2**20 // len(piece) + 1))[:2**20]
    best = 1e9
    for _ in range(21):
        start = time.perf_counter()
        lowered(text)
        best = min(best, time.perf_counter() - start)
    print(f"{name} {best * 1000:.2f} ms", end="  ", flush=True)
print()
