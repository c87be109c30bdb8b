"""fasttext_lib: the FastText "bag of tricks" classifier in MXNet Gluon + GluonNLP.

Read it in this order: data (read/normalize/generate) -> features (vocabulary, n-grams) ->
batches (sparse batches, NDArrays) -> model (the Gluon block) -> config -> step, optim ->
train (the one training loop) -> checkpoints -> bundle (save/load) -> predict (Predictor) -> cli;
SageMaker: sm_train, sm_serve behind entry_point. docs/ARCHITECTURE.md shows how they fit.
Heavy imports (mxnet, gluonnlp, sagemaker) happen inside functions, so ``import fasttext_lib`` is cheap.
"""
__version__ = "0.1.0"
