"""fasttext_lib: the FastText "bag of tricks" classifier in MXNet Gluon + GluonNLP.

Read it in this order: data (read/normalize/generate) -> features (vocabulary, n-grams) ->
batches (sparse batches, NDArrays) -> model (the Gluon block) -> config -> step, optim ->
train (the one training loop) -> checkpoints -> bundle (save/load) -> predict (Predictor) -> cli;
SageMaker: sm_train, sm_serve behind entry_point. docs/ARCHITECTURE.md shows how they fit.
Heavy imports (mxnet, gluonnlp, sagemaker) happen inside functions, so ``import fasttext_lib`` is cheap.
"""
__version__ = "0.1.0"

import os as _os

# OpenMP threads that wait for work by sleeping, not spinning, unless the user chose a policy.
# MXNet's and bag_ops.cc's OpenMP regions are short (microseconds on short texts), and GNU OpenMP's
# default is to spin between them. On a machine that is also running anything else, a spinning
# thread holds a core the thread with the work needs, and every region can wait a time slice: 34k
# short texts at OMP_NUM_THREADS=2 took 12-25 s per epoch under a load of 6 on 2 cores, against
# 0.8-2 s with PASSIVE (docs/RESULTS.md, "OpenMP threads that sleep"). libgomp reads the variable
# once, when it is loaded with MXNet; ``import fasttext_lib`` comes first in the command line, the
# SageMaker job and the notebooks (where MXNet is already imported, this changes nothing).
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
