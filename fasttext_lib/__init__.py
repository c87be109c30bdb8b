"""fasttext_lib: the FastText "bag of tricks" classifier in MXNet Gluon + GluonNLP.

Read it in this order: data (read/normalize/generate) -> features (vocabulary, n-grams, sparse
batches) -> model (the Gluon block) -> train (the one training loop) -> bundle (save/load,
Predictor) -> cli. Heavy imports (mxnet, gluonnlp, sagemaker) happen inside functions, so
``import fasttext_lib`` is cheap.
"""
__version__ = "0.1.0"
