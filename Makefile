# Two commands do everything on a fresh clone: `make demo` and `make test`.
# Both bootstrap .venv (once) with the pinned CPU stack from requirements/lock.txt.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
ARGS   ?=

# How long the first run of PYTHON may take: one that hangs (a wrapper waiting on a lock, a shim asking a question)
# hung make for good. Bounded by coreutils' timeout, else by perl, else by the shell (scripts/check_python_runs.sh).
PYTHON_CHECK_SECONDS ?= 60

# A value as one word of the recipes' shell, whatever it holds: a ", $ or ` in PYTHON broke its recipe lines (a
# syntax error, or a command run). PYTHON is taken as written ($(value ...)): make expanded a $ in it too. Make's
# expansion goes with it, read where no program has the name as written ('PYTHON=$(HOME)/py311/bin/python3'). It is
# one program, spaces and all, or else a command and its arguments ("pyenv exec python"): every recipe that runs
# it goes through scripts/run_python.sh, which reads it as the check does.
shell_word = '$(subst ','\'',$(1))'
PYTHON_WORDS = $(call shell_word,$(value PYTHON)) $(call shell_word,$(PYTHON))
RUN_PYTHON = sh scripts/run_python.sh $(PYTHON_WORDS)

# make splits a target at its spaces: with VENV="my venv" the stamp was the two targets "my" (whose recipe then made
# the two venvs "my" and "venv") and "venv/.installed", and pip-install said "test: unexpected operator". A VENV
# with a space (or none at all: an empty one installed into /bin/python) is refused before anything runs.
empty :=
space := $(empty) $(empty)
comma := ,
# So is one with a character the recipes' shell reads ($(VENV) is unquoted there: "/tmp/it's" stopped on the shell's
# "Unterminated quoted string", a ; or a backtick ran a command) or make reads in a target (: and %). Letters
# (any script), digits, spaces (said above) and . _ - / ~ + @ are let through.
VENV_ODD = $(shell printf '%s' $(call shell_word,$(value VENV)) | LC_ALL=C tr -d 'A-Za-z0-9._/~+@\200-\377 -')
VENV_PROBLEM = $(if $(strip $(VENV)),$(if $(VENV_ODD),VENV=$(value VENV) has a character the recipes' shell or make \
  would read ($(VENV_ODD)): name a folder of letters$(comma) digits and . _ - / ~ + @$(comma) such as VENV=.venv,$(if \
  $(word 2,$(VENV)),VENV=$(VENV) has a space$(comma) and make splits a file name at its spaces: name a folder without \
  one$(comma) such as VENV=$(subst $(space),-,$(strip $(VENV))))),VENV is empty: name the folder for the venv$(comma) \
  such as VENV=.venv)
REFUSE_VENV = $(if $(VENV_PROBLEM),printf '%s\n' $(call shell_word,error: $(VENV_PROBLEM)) >&2; exit 2)
STAMP := $(if $(VENV_PROBLEM),venv-refused,$(VENV)/.installed)

# Where pip's cache cannot be written, install without it. Root with a read-only HOME (a container) is the case:
# pip disables its cache only for a directory it does not own, so it went on and stopped with
# "Read-only file system: '/root/.cache'". The venv's pip says where its cache is (PIP_CACHE_DIR, a cache-dir in
# pip.conf, else HOME's): this is expanded in pip-install's recipe, a make of its own once the venv is there (make
# expands a recipe whole before its first line runs). A pip with its cache turned off names none: no cache either way.
PIP_CACHE_WRITABLE = $(shell dir=$$($(PY) -m pip cache dir 2>/dev/null) && mkdir -p "$$dir" 2>/dev/null && \
                       test -w "$$dir" && echo yes)
PIP_INSTALL = $(PY) -m pip install -q$(if $(PIP_CACHE_WRITABLE),, --no-cache-dir)

.PHONY: demo test nbval notebooks bench venv pip-install clean venv-refused

venv: $(STAMP)

$(STAMP): pyproject.toml requirements/lock.txt
	@$(REFUSE_VENV)
	@# a PYTHON that is not there said only "make: python3.10: No such file or directory"; one that hangs hung make.
	@# (exec: make's SIGTERM goes to its shell alone, and this one hands it on to what it runs)
	@exec sh scripts/check_python_runs.sh $(PYTHON_WORDS) $(call shell_word,$(PYTHON_CHECK_SECONDS))
	@$(RUN_PYTHON) scripts/check_python.py
	$(RUN_PYTHON) -m venv $(VENV)
	@$(MAKE) --no-print-directory pip-install
	touch $(STAMP)

# $(STAMP)'s installs into the venv it has made (not a target of its own to run: alone, before there is a venv, it
# said "make: .venv/bin/python: No such file or directory").
pip-install:
	@$(REFUSE_VENV)
	@test -x $(PY) || { echo "error: make pip-install installs into $(VENV), which is not there: run make venv (make demo and make test run it too)" >&2; exit 2; }
	$(PIP_INSTALL) --upgrade pip setuptools wheel
	# gluonnlp 0.10 ships only a source archive whose setup.py imports Cython and numpy: build it against ours.
	$(PIP_INSTALL) -c requirements/lock.txt Cython numpy
	$(PIP_INSTALL) -c requirements/lock.txt --no-build-isolation gluonnlp
	$(PIP_INSTALL) -c requirements/lock.txt -e '.[dev,bench]'
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null

# Runs notebooks 01-04 with papermill on the built-in sample against a local S3 server.
# ARGS are papermill parameters for every notebook: make demo ARGS='-p optimizer sgd -p epochs 3'
demo: $(STAMP)
	$(PY) scripts/run_notebooks.py $(ARGS)

# The suite runs in 3 worker processes (pytest-xdist), a test file per worker at a time (--dist loadfile) so that a
# module's trained fixtures are built once. CI and the dev machines have 2 cores, but a worker spends much of its
# time waiting (on the processes a test starts, its sleeps and timeouts, a signal's delivery): with 3, the cores stay
# busier. Measured on the same 2-core machine, quiet, 2026-12-01: the suite took 9:57 with 2 workers and 8:50 with
# 3, the same CPU time (~17 minutes). TEST_WORKERS=2 make test runs it as before.
# nbval runs beside them rather than after: it is one process that waits on its kernel, and run
# last it left a core idle for minutes. Its report is printed when the suite ends; either failing fails.
# The library is byte-compiled first: the suite starts ~300 Python processes (CLI runs, jobs), and where
# PYTHONDONTWRITEBYTECODE is set each of them compiled its ~30 modules again (~0.1 s each).
# nbval's command is run here as it is, not as $(MAKE) nbval: make runs a line naming $(MAKE) even under -n, and
# `make -n test` ran the whole suite.
TEST_WORKERS ?= 3
test: $(STAMP)
	@mkdir -p build
	@$(PY) -m compileall -q fasttext_lib > /dev/null
	@$(NBVAL) > build/nbval.log 2>&1 & nbval=$$!; \
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=15 tests; suite=$$?; \
	wait $$nbval; notebooks=$$?; \
	echo "--- nbval (make nbval), run beside the suite:"; cat build/nbval.log; \
	exit $$(( suite || notebooks ))

# Re-executes the committed notebooks and compares their outputs (accuracy and loss included).
# The committed outputs are a seeded CPU run: GPUs are hidden so that a GPU instance reproduces them
# exactly too (papermill or Jupyter runs there train on the GPU as usual).
NBVAL = CUDA_VISIBLE_DEVICES= $(PY) scripts/local_s3.py -- $(PY) -m pytest -q --nbval --nbval-current-env \
        --nbval-sanitize-with notebooks/nbval_sanitize.cfg notebooks
nbval: $(STAMP)
	$(NBVAL)

# The notebooks are the source: edit them (Jupyter or any editor), then re-execute them in place so
# that their committed outputs (what nbval compares) match; run metadata is stripped.
notebooks: $(STAMP)
	CUDA_VISIBLE_DEVICES= $(PY) scripts/run_notebooks.py --in-place

bench: $(STAMP)
	$(PY) benchmarks/bench_fasttext.py $(ARGS)

clean:
	rm -rf build
