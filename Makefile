# Two commands do everything on a fresh clone: `make demo` and `make test`.
# Both bootstrap .venv (once) with the pinned CPU stack from requirements/lock.txt.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
ARGS   ?=

.PHONY: demo test nbval notebooks bench venv clean

venv: $(STAMP)

$(STAMP): pyproject.toml requirements/lock.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip setuptools wheel
	# gluonnlp 0.10 ships only a source archive whose setup.py imports Cython and numpy: build it against ours.
	$(PY) -m pip install -q -c requirements/lock.txt Cython numpy
	$(PY) -m pip install -q -c requirements/lock.txt --no-build-isolation gluonnlp
	$(PY) -m pip install -q -c requirements/lock.txt -e '.[dev,bench]'
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

# Runs notebooks 01-04 with papermill on the built-in sample against a local S3 server.
# ARGS are papermill parameters for every notebook: make demo ARGS='-p optimizer sgd -p epochs 3'
demo: $(STAMP)
	$(PY) scripts/run_notebooks.py $(ARGS)

test: $(STAMP)
	$(PY) -m pytest -q tests
	$(MAKE) --no-print-directory nbval

# Re-executes the committed notebooks and compares their outputs (accuracy and loss included).
nbval: $(STAMP)
	$(PY) scripts/local_s3.py -- $(PY) -m pytest -q --nbval --nbval-current-env \
		--nbval-sanitize-with notebooks/nbval_sanitize.cfg notebooks

# Regenerates the notebooks from scripts/make_notebooks.py and commits-ready outputs (what nbval compares).
notebooks: $(STAMP)
	$(PY) scripts/make_notebooks.py
	$(PY) scripts/run_notebooks.py --in-place

bench: $(STAMP)
	$(PY) benchmarks/bench_fasttext.py $(ARGS)

clean:
	rm -rf build
