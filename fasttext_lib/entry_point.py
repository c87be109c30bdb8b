"""SageMaker script-mode entry point for the MXNet 1.9 containers: training job and endpoint.

* **Training job**: the MXNet training toolkit runs ``python fasttext_lib/entry_point.py --epochs 10
  ...`` in the staged source_dir (``sagemaker.mxnet.MXNet(entry_point="fasttext_lib/entry_point.py",
  source_dir=packaging.stage_source_dir(...))``); :func:`fasttext_lib.sm_train.main` does the job.
* **Endpoint**: the MXNet inference toolkit imports this file as ``entry_point`` from
  ``/opt/ml/model/code`` (:func:`fasttext_lib.packaging.pack_model`) and finds the hosting
  functions of sm_serve.py here. Importing it loads no training code.

This file is also copied to the top of the code directory (``code/entry_point.py``, and ``code/inference.py``, the
module the toolkit imports where no ``SAGEMAKER_PROGRAM`` names one: packaging.stage_source_dir), so it only fixes
``sys.path`` and delegates.
"""
import os
import sys

# Read by the package's import (fasttext_lib/__init__.py) in the module run as the script: this process is the training
# job, whose stop while it starts is one error line and its FailureReason. Not where the endpoint imports this file.
RUNS_THE_TRAINING_JOB = __name__ == "__main__"

_HERE = os.path.dirname(os.path.abspath(__file__))
# fasttext_lib/entry_point.py in a source_dir, or code/entry_point.py beside code/fasttext_lib/.
_SOURCE_ROOT = _HERE if os.path.isfile(os.path.join(_HERE, "fasttext_lib", "__init__.py")) else os.path.dirname(_HERE)
if __name__ == "__main__":
    # `python fasttext_lib/entry_point.py` puts fasttext_lib/ itself first on sys.path, where its
    # modules (data, text, train, ...) would pose as top-level modules; the source_dir root takes
    # its place, so the staged fasttext_lib is imported even where another copy is installed.
    if sys.path and os.path.abspath(sys.path[0] or os.curdir) == _HERE:
        sys.path[0] = _SOURCE_ROOT
    if _SOURCE_ROOT not in sys.path:
        sys.path.insert(0, _SOURCE_ROOT)

from fasttext_lib.sm_serve import input_fn, model_fn, output_fn, predict_fn  # noqa: E402,F401

if __name__ == "__main__":
    # The training job's own process: MXNet without SciPy (~53 MB less peak memory, lean_import.py), imported by
    # main once its environment is checked (mxnet_env.start_mxnet, as the CLI does).
    from fasttext_lib.sm_train import main

    sys.exit(main(lean_mxnet=True))
