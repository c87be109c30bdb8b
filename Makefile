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

demo: $(STAMP)
	$(PY) scripts/demo.py $(ARGS)

test: $(STAMP)
	$(PY) -m pytest -q tests

bench: $(STAMP)
	$(PY) benchmarks/bench_fasttext.py $(ARGS)

clean:
	rm -rf build
