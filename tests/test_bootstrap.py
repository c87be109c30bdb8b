"""`make demo` / `make test`'s own steps: the Python check before the venv, and the local S3 server.

Each runs in a subprocess: the failures found here were a hang (the server) and a traceback from the wrong
interpreter, neither of which a test in this process could survive or see.
"""
import contextlib
import os
import re
import shlex
import signal
import subprocess
import sys
import shutil
import time

import pytest

from conftest import ROOT

SCRIPTS = os.path.join(ROOT, "scripts")
# A hang of the old code must fail the test, not stall the suite: a bound far above the ~2 s a start takes.
HANG = 120


def _run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=HANG,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([SCRIPTS, ROOT])})


def test_the_server_starts_when_the_port_it_was_given_is_taken_before_it_binds():
    """The port was picked free (free_port) and bound afterwards: a process that took it in between left moto's
    server dead in its thread and ``make demo`` (or the suite's s3_server) waiting for it forever."""
    r = _run("import socket, boto3, local_s3\n"
             "taken = socket.socket(); taken.bind(('127.0.0.1', 0)); taken.listen()\n"
             "local_s3.free_port = lambda: taken.getsockname()[1]\n"
             "with local_s3.local_s3('raced') as endpoint:\n"
             "    names = [b['Name'] for b in boto3.client('s3').list_buckets()['Buckets']]\n"
             "    print(endpoint != 'http://127.0.0.1:%d' % taken.getsockname()[1], names)\n")
    assert r.returncode == 0 and r.stdout.split() == ["True", "['raced']"], r.stderr


def test_a_server_that_cannot_bind_ends_the_demo_in_one_error_line():
    """An address the machine does not have (no loopback in a sandbox): the same hang; now one line, exit 2."""
    r = _run("import sys, papermill, local_s3, run_notebooks\n"
             "local_s3.HOST = '192.0.2.1'  # TEST-NET-1: assigned to no machine\n"
             "papermill.execute_notebook = lambda *args, **kwargs: sys.exit('a notebook ran')\n"
             "sys.exit(run_notebooks.main([]))\n")
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith(
        "error: cannot start the local S3 server on 192.0.2.1:"), r.stderr
    assert "Traceback" not in r.stderr, r.stderr


def test_make_names_a_missing_python_in_one_error_line(tmp_path):
    """`make demo PYTHON=python3.10` where there is none said only "make: python3.10: No such file or directory"."""
    venv = tmp_path / "venv"
    r = subprocess.run(["make", "--no-print-directory", "venv", "PYTHON=python3.99", f"VENV={venv}"],
                       capture_output=True, text=True, cwd=ROOT, timeout=HANG)
    assert r.returncode != 0
    assert r.stderr.splitlines()[0] == ("error: there is no python3.99 on PATH: make needs Python 3.10 or 3.11; "
                                        "name one with PYTHON=python3.11 (or python3.10)"), r.stderr
    assert not venv.exists()


@pytest.mark.parametrize("python", ["", " "])
def test_make_refuses_an_empty_python_in_one_error_line(tmp_path, python):
    """`make demo PYTHON=` (a variable left blank in a script) said "there is no  on PATH": a name with nothing in it."""
    venv = tmp_path / "venv"
    r = subprocess.run(["make", "--no-print-directory", "venv", f"PYTHON={python}", f"VENV={venv}"],
                       capture_output=True, text=True, cwd=ROOT, timeout=HANG)
    assert r.returncode != 0
    assert [line for line in r.stderr.splitlines() if not re.match(r"make(\[\d+\])?: \*\*\* ", line)] == [
        "error: PYTHON is empty: make needs Python 3.10 or 3.11; name one with PYTHON=python3.11 (or python3.10)"], \
        r.stderr
    assert not venv.exists()


def test_make_names_a_python_that_is_on_path_but_does_not_run_in_one_error_line(tmp_path):
    """A pyenv shim (python2, or a version .python-version names that is not installed) passes `command -v`, then
    printed its own paragraph and exit 127 from make's first use of it, not make's one error line."""
    shims = tmp_path / "shims"
    shims.mkdir()
    shim = shims / "python2"
    shim.write_text("#!/bin/sh\n"
                    "echo 'pyenv: python2: command not found' >&2\n"
                    "echo >&2\n"
                    "echo 'The python2 command exists in these Python versions:' >&2\n"
                    "exit 127\n")
    shim.chmod(0o755)
    venv = tmp_path / "venv"
    r = subprocess.run(["make", "--no-print-directory", "venv", "PYTHON=python2", f"VENV={venv}"],
                       capture_output=True, text=True, cwd=ROOT, timeout=HANG,
                       env={**os.environ, "PATH": os.pathsep.join([str(shims), os.environ["PATH"]])})
    assert r.returncode != 0
    assert r.stderr.splitlines()[0] == ("error: python2 is on PATH but does not run (exit 127: pyenv: python2: command "
                                        "not found): make needs Python 3.10 or 3.11; name one with "
                                        "PYTHON=python3.11 (or python3.10)"), r.stderr
    # (make's own "make: *** ... Error 2", "make[1]: ***" where the suite runs under `make test`)
    assert [line for line in r.stderr.splitlines() if not re.match(r"make(\[\d+\])?: ", line)] == \
        r.stderr.splitlines()[:1]
    assert not venv.exists()


def test_make_quotes_at_most_the_start_of_a_long_first_line_a_python_that_does_not_run_printed(tmp_path):
    """A PYTHON that printed megabytes without a line break (a binary, a wrapper dumping its state) put all of it into
    the one error line."""
    shims = tmp_path / "shims"
    shims.mkdir()
    shim = shims / "python9"
    shim.write_text("#!/bin/sh\nhead -c 200000 /dev/zero | tr '\\0' x >&2\nexit 3\n")
    shim.chmod(0o755)
    venv = tmp_path / "venv"
    r = subprocess.run(["make", "--no-print-directory", "venv", "PYTHON=python9", f"VENV={venv}"],
                       capture_output=True, text=True, cwd=ROOT, timeout=HANG,
                       env={**os.environ, "PATH": os.pathsep.join([str(shims), os.environ["PATH"]])})
    assert r.returncode != 0
    line = r.stderr.splitlines()[0]
    assert line.startswith("error: python9 is on PATH but does not run (exit 3: xxx"), line[:200]
    assert line.endswith("...): make needs Python 3.10 or 3.11; name one with PYTHON=python3.11 (or python3.10)")
    assert len(line) < 500
    assert not venv.exists()


def _stand_in_python(made_with):
    """sh text of a Python that runs as this one, except `-m venv ...`, whose arguments it writes to ``made_with``,
    stopping make there: no venv is built."""
    return (f'if [ "$1" = -m ]; then printf "%s\\n" "$@" > "{made_with}"; exit 3; fi\n'
            f'exec "{sys.executable}" "$@"\n')


def test_make_takes_a_python_whose_path_has_spaces(tmp_path):
    """`make demo PYTHON="/opt/my python/bin/python3.11"` was told there is no such Python on PATH: the path was split
    at its space. It is one program now, checked, run and used to make the venv (which this stand-in stops at: no
    venv is built here), even where its first word is a program too (``my``, here)."""
    folder = tmp_path / "my python" / "bin"
    folder.mkdir(parents=True)
    python, made_with = folder / "python3.11", tmp_path / "venv_made_with"
    python.write_text("#!/bin/sh\n" + _stand_in_python(made_with))
    python.chmod(0o755)
    split = tmp_path / "my"
    split.write_text(f"#!/bin/sh\ntouch '{tmp_path}/split'\nexit 5\n")
    split.chmod(0o755)
    venv = tmp_path / "venv"
    r = subprocess.run(["make", "--no-print-directory", "venv", f"PYTHON={python}", f"VENV={venv}"],
                       capture_output=True, text=True, cwd=ROOT, timeout=HANG)
    assert made_with.exists() and made_with.read_text().splitlines() == ["-m", "venv", str(venv)], r.stderr
    assert "error:" not in r.stderr, r.stderr
    assert not (tmp_path / "split").exists()


def test_make_takes_a_python_that_is_a_command_with_arguments(tmp_path):
    """`make PYTHON="pyenv exec python"` worked while make split PYTHON at its spaces, and was refused ("there is no
    pyenv exec python on PATH") once PYTHON was read as one program. Where no program has the whole name, a PYTHON
    with spaces whose first word is a program is that command and its arguments: checked, run and used to make the
    venv (every recipe reads it so)."""
    made_with = tmp_path / "venv_made_with"
    env = _shims(tmp_path, os.environ["PATH"], **{
        "pyenv-like": '[ "$1 $2" = "exec python" ] || { echo "pyenv-like: not exec python: $*" >&2; exit 9; }\n'
                      "shift 2\n" + _stand_in_python(made_with)})
    venv = tmp_path / "venv"
    r = subprocess.run(["make", "--no-print-directory", "venv", "PYTHON=pyenv-like exec python", f"VENV={venv}"],
                       capture_output=True, text=True, cwd=ROOT, timeout=HANG, env=env)
    assert made_with.exists() and made_with.read_text().splitlines() == ["-m", "venv", str(venv)], r.stderr
    assert "error:" not in r.stderr, r.stderr


@pytest.mark.parametrize("python", ["~/.pyenv/shims/python", "~/bin/pyenv-like exec python"],
                         ids=["program", "command"])
def test_make_takes_a_python_that_begins_with_a_tilde_as_under_home(tmp_path, python):
    """A shell expands ~ only where it is written unquoted at a word's start: zsh (macOS's shell) leaves
    `make PYTHON=~/.pyenv/shims/python` as typed, and so does a PYTHON set in a Makefile or the environment. It
    worked while the recipes ran PYTHON unquoted, and "there is no ~/.pyenv/shims/python" once it was quoted. A
    leading ~/ is HOME's now, as the shell read it, for the check and every run of PYTHON."""
    _assert_make_venv_runs_a_python_under_home(tmp_path, python, home_programs=(".pyenv/shims/python", "bin/pyenv-like"))


@pytest.mark.parametrize("python", ["$(HOME)/py311/bin/python3", "${HOME}/py311/bin/python3",
                                    "$(HOME)/bin/pyenv-like exec python"], ids=["$()", "${}", "command"])
def test_make_takes_a_python_written_with_make_s_own_references_as_make_expands_it(tmp_path, python):
    """`make 'PYTHON=$(HOME)/py311/bin/python3'` (or a PYTHON set so in a Makefile or CI's environment) was make's
    expansion of it while PYTHON was not taken as written, and "there is no $(HOME)/py311/bin/python3" once it was.
    Where no program has the name as written, make's expansion of it is read, for the check and every run of PYTHON."""
    _assert_make_venv_runs_a_python_under_home(tmp_path, python, home_programs=("py311/bin/python3", "bin/pyenv-like"))


def _assert_make_venv_runs_a_python_under_home(tmp_path, python, home_programs):
    """``make venv PYTHON=python`` with HOME at tmp_path/home, where each of ``home_programs`` is a stand-in Python
    (``pyenv-like`` takes two words before its arguments): it ran ``-m venv`` with one of them, and said no error."""
    home, made_with = tmp_path / "home", tmp_path / "venv_made_with"
    for program in (home / name for name in home_programs):
        program.parent.mkdir(parents=True)
        shift = "shift 2\n" if program.name == "pyenv-like" else ""
        program.write_text("#!/bin/sh\n" + shift + _stand_in_python(made_with))
        program.chmod(0o755)
    venv = tmp_path / "venv"
    r = subprocess.run(["make", "--no-print-directory", "venv", f"PYTHON={python}", f"VENV={venv}"],
                       capture_output=True, text=True, cwd=ROOT, timeout=HANG, env={**os.environ, "HOME": str(home)})
    assert made_with.exists() and made_with.read_text().splitlines() == ["-m", "venv", str(venv)], r.stderr
    assert "error:" not in r.stderr, r.stderr


def test_make_names_a_missing_python_written_with_make_s_references_both_ways_in_one_error_line(tmp_path):
    """What is not there is named as written and as make expands it: "there is no $(HOME)/py311/bin/python3" alone did
    not say which folder $(HOME) was."""
    home = tmp_path / "home"
    home.mkdir()
    r = subprocess.run(["make", "--no-print-directory", "venv", "PYTHON=$(HOME)/py311/bin/python3",
                        f"VENV={tmp_path / 'venv'}"], capture_output=True, text=True, cwd=ROOT, timeout=HANG,
                       env={**os.environ, "HOME": str(home)})
    assert r.returncode != 0
    assert [line for line in r.stderr.splitlines() if not re.match(r"make(\[\d+\])?: ", line)] == [
        f'error: there is no program "$(HOME)/py311/bin/python3" as written, nor "{home}/py311/bin/python3" as make '
        "expands it: make needs Python 3.10 or 3.11; name one with PYTHON=python3.11 (or python3.10)"], r.stderr
    assert not (tmp_path / "venv").exists()


def test_make_names_a_python_command_whose_first_word_is_no_program_in_one_error_line(tmp_path):
    venv = tmp_path / "venv"
    r = subprocess.run(["make", "--no-print-directory", "venv", "PYTHON=no-such-pyenv exec python", f"VENV={venv}"],
                       capture_output=True, text=True, cwd=ROOT, timeout=HANG)
    assert r.returncode != 0
    assert r.stderr.splitlines()[0] == (
        'error: there is no program named "no-such-pyenv exec python", nor a program no-such-pyenv to run it as a '
        "command with arguments: make needs Python 3.10 or 3.11; name one with PYTHON=python3.11 (or python3.10)"), \
        r.stderr
    assert not venv.exists()


# Every character the recipes' shell reads: a quote ended theirs, a $ or ` was expanded (a command run), a \ escaped.
SHELL_SYNTAX = "it's \"q\" $HOME $(exit 7) `exit 8` a\\nb"


def test_make_takes_a_python_whose_path_has_quotes_a_dollar_or_a_backtick(tmp_path):
    """A PYTHON with a ", $ or ` went into the recipes' shell as it was: a syntax error ("Unterminated quoted
    string"), or expanded to another path. It is read as it is written."""
    folder = tmp_path / SHELL_SYNTAX
    folder.mkdir()
    python, made_with = folder / "python3.11", tmp_path / "venv_made_with"
    python.write_text("#!/bin/sh\n" + _stand_in_python(made_with))
    python.chmod(0o755)
    venv = tmp_path / "venv"
    r = subprocess.run(["make", "--no-print-directory", "venv", f"PYTHON={python}", f"VENV={venv}"],
                       capture_output=True, text=True, cwd=ROOT, timeout=HANG)
    assert made_with.exists() and made_with.read_text().splitlines() == ["-m", "venv", str(venv)], r.stderr
    assert "error:" not in r.stderr, r.stderr


def test_make_names_a_missing_python_whose_path_has_quotes_a_dollar_or_a_backtick_as_written(tmp_path):
    """Named as written, and as make expands it (its $H, unset here, and $(exit 7) are make's references to it)."""
    missing = tmp_path / SHELL_SYNTAX / "python3.11"
    r = subprocess.run(["make", "--no-print-directory", "venv", f"PYTHON={missing}", f"VENV={tmp_path / 'venv'}"],
                       capture_output=True, text=True, cwd=ROOT, timeout=HANG,
                       env={name: value for name, value in os.environ.items() if name != "H"})
    as_make_expands_it = str(missing).replace("$HOME", "OME").replace("$(exit 7)", "")
    assert [line for line in r.stderr.splitlines() if not re.match(r"make(\[\d+\])?: ", line)] == [
        f'error: there is no program "{missing}" as written, nor "{as_make_expands_it}" as make expands it: make '
        "needs Python 3.10 or 3.11; name one with PYTHON=python3.11 (or python3.10)"], r.stderr
    assert r.returncode != 0


@pytest.mark.parametrize("goal", ["venv", "demo", "test", "pip-install"])
def test_make_refuses_a_venv_path_with_spaces_up_front_in_one_error_line(tmp_path, goal):
    """make splits targets at spaces: VENV="my venv" made the stamp the two targets "my" and "venv/.installed" ("No
    rule to make target"), and pip-install's `test -x my venv/bin/python` said "too many arguments". It is refused
    before anything else (the Python check included: python3.99 is not there), with a path that would do."""
    venv = tmp_path / "my  venv"
    r = subprocess.run(["make", "--no-print-directory", goal, f"VENV={venv}", "PYTHON=python3.99"],
                       capture_output=True, text=True, cwd=ROOT, timeout=HANG)
    assert r.returncode != 0
    assert [line for line in r.stderr.splitlines() if not re.match(r"make(\[\d+\])?: \*\*\* ", line)] == [
        f"error: VENV={venv} has a space, and make splits a file name at its spaces: name a folder without one, "
        f"such as VENV={tmp_path / 'my-venv'}"], r.stderr
    assert not venv.exists() and not (tmp_path / "my").exists()


def test_make_refuses_an_empty_venv_path_in_one_error_line(tmp_path):
    """VENV= made the stamp /.installed and the venv's python /bin/python: pip-install installed into the system's
    Python, where there is one there. Refused before anything runs (python3.99 is not there: not even the check)."""
    r = subprocess.run(["make", "--no-print-directory", "venv", "VENV=", "PYTHON=python3.99"],
                       capture_output=True, text=True, cwd=ROOT, timeout=HANG)
    assert r.returncode != 0
    assert [line for line in r.stderr.splitlines() if not re.match(r"make(\[\d+\])?: \*\*\* ", line)] == [
        "error: VENV is empty: name the folder for the venv, such as VENV=.venv"], r.stderr


@pytest.mark.parametrize("name", ["it's", 'say"so', "a;b", "a$b", "a`b", "a:b", "a%b", "a#b", "a(b)"])
def test_make_refuses_a_venv_path_the_recipes_shell_or_make_would_read_in_one_error_line(tmp_path, name):
    """The recipes name $(VENV) unquoted, and make reads it as a target: VENV="/tmp/it's" passed the Python check and
    then stopped on "/bin/sh: Syntax error: Unterminated quoted string", no error line of ours (a ; or a backtick
    would have run a command; a : or % broke the stamp's rule). Refused before anything runs."""
    venv = tmp_path / name / "venv"
    r = subprocess.run(["make", "--no-print-directory", "venv", f"VENV={venv}", "PYTHON=python3.99"],
                       capture_output=True, text=True, cwd=ROOT, timeout=HANG)
    assert r.returncode != 0
    lines = [line for line in r.stderr.splitlines() if not re.match(r"make(\[\d+\])?: \*\*\* ", line)]
    assert len(lines) == 1 and lines[0].startswith(f"error: VENV={venv} has a character the recipes' shell or make "
                                                   "would read"), r.stderr
    assert not (tmp_path / name).exists()


def test_make_refuses_a_python_check_bound_that_is_not_whole_seconds(tmp_path):
    """PYTHON_CHECK_SECONDS=soon was handed to timeout, whose "invalid time interval" was then reported as PYTHON
    not running."""
    r = subprocess.run(["make", "--no-print-directory", "venv", "PYTHON_CHECK_SECONDS=soon",
                        f"VENV={tmp_path / 'venv'}"], capture_output=True, text=True, cwd=ROOT, timeout=HANG)
    assert r.returncode != 0
    assert r.stderr.splitlines()[0] == ("error: PYTHON_CHECK_SECONDS=soon is not a whole number of seconds above 0: "
                                        "leave it out, or give one, such as PYTHON_CHECK_SECONDS=120"), r.stderr
    assert not (tmp_path / "venv").exists()


@pytest.mark.parametrize("seconds", ["99999999999999999999", "4294967296"])
def test_make_refuses_a_python_check_bound_beyond_what_it_can_count_in_one_error_line(tmp_path, seconds):
    """PYTHON_CHECK_SECONDS past the shell's integer range was refused as "not a whole number of seconds above 0"; and
    perl's alarm (the bound without coreutils' timeout) wraps past 4294967295: 4294967296 was no bound at all. Both are
    refused for what they are, before PYTHON is run (this stand-in would reach -m venv)."""
    python, made_with = tmp_path / "python3.11", tmp_path / "venv_made_with"
    python.write_text("#!/bin/sh\n" + _stand_in_python(made_with))
    python.chmod(0o755)
    r = subprocess.run(["make", "--no-print-directory", "venv", f"PYTHON={python}", f"PYTHON_CHECK_SECONDS={seconds}",
                        f"VENV={tmp_path / 'venv'}"], capture_output=True, text=True, cwd=ROOT, timeout=HANG)
    assert r.returncode != 0
    assert [line for line in r.stderr.splitlines() if not re.match(r"make(\[\d+\])?: ", line)] == [
        f"error: PYTHON_CHECK_SECONDS={seconds} is more seconds than the check can count (at most 4294967295): leave "
        "it out, or give fewer, such as PYTHON_CHECK_SECONDS=120"], r.stderr
    assert not made_with.exists()


def test_make_checks_python_where_tmpdir_names_a_folder_that_is_not_there(tmp_path):
    """Python, pip and venv fall back to /tmp where TMPDIR names no folder (tempfile.gettempdir); the check's own
    temporary file did not, and make stopped on mktemp's line ("mktemp: failed to create file via template"), no
    error line of ours, before Python was ever run. The check falls back to /tmp as they do, and make goes on."""
    python, made_with = tmp_path / "python3.11", tmp_path / "venv_made_with"
    python.write_text("#!/bin/sh\n" + _stand_in_python(made_with))
    python.chmod(0o755)
    venv = tmp_path / "venv"
    r = subprocess.run(["make", "--no-print-directory", "venv", f"PYTHON={python}", f"VENV={venv}"],
                       capture_output=True, text=True, cwd=ROOT, timeout=HANG,
                       env={**os.environ, "TMPDIR": str(tmp_path / "no such folder")})
    assert made_with.exists() and made_with.read_text().splitlines() == ["-m", "venv", str(venv)], r.stderr
    assert "mktemp" not in r.stderr and "error:" not in r.stderr, r.stderr


def test_make_pip_install_without_a_venv_says_what_to_run_in_one_error_line(tmp_path):
    """pip-install is a step of making the venv: run alone before there is one, it printed make's
    "make: .venv/bin/python: No such file or directory" and "Error 127"."""
    r = subprocess.run(["make", "--no-print-directory", "pip-install", f"VENV={tmp_path / 'venv'}"],
                       capture_output=True, text=True, cwd=ROOT, timeout=HANG)
    assert r.returncode != 0
    lines = [line for line in r.stderr.splitlines() if not re.match(r"make(\[\d+\])?: \*\*\* ", line)]
    assert lines == [f"error: make pip-install installs into {tmp_path / 'venv'}, which is not there: run make venv "
                     "(make demo and make test run it too)"], r.stderr
    assert not (tmp_path / "venv").exists()


def _made_venv(tmp_path):
    """A venv as `make venv`'s `python -m venv` leaves it, its python this one (with this pip): `make -n` then plans
    the installs, asking that pip where its cache is, without making a venv."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    python = venv / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    return venv


def test_make_n_test_only_says_what_it_would_run(tmp_path):
    """`make -n test` ran the suite (and wrote build/nbval.log): its recipe line started nbval with $(MAKE), and make
    runs a line naming $(MAKE) even under -n. It prints the commands now, and runs none of them."""
    venv = _made_venv(tmp_path)
    ran = tmp_path / "ran"
    (venv / "bin" / "python").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{ran}"\n')
    (venv / ".installed").touch()  # (after pyproject.toml and the lock: the venv is up to date)
    env = {name: value for name, value in os.environ.items() if name != "TEST_WORKERS"}  # (the Makefile's default)
    r = subprocess.run(["make", "--no-print-directory", "-n", "test", f"VENV={venv}"],
                       capture_output=True, text=True, cwd=ROOT, timeout=HANG, env=env)
    assert r.returncode == 0, r.stderr
    assert not ran.exists(), ran.read_text()
    assert f"{venv}/bin/python -m pytest -q -n 3 --dist loadfile" in r.stdout, r.stdout
    assert "--nbval " in r.stdout, r.stdout


def _pip_installs_planned(tmp_path, home, **pip_env):
    """The pip commands `make venv` would run (a dry run: nothing is installed), with ``home`` as HOME and ``pip_env``
    (PIP_CONFIG_FILE=...) as the only cache settings in the environment."""
    env = {name: value for name, value in os.environ.items()
           if name not in ("PIP_CACHE_DIR", "PIP_NO_CACHE_DIR", "PIP_CONFIG_FILE", "XDG_CACHE_HOME")}
    r = subprocess.run(["make", "--no-print-directory", "-n", "venv", f"VENV={_made_venv(tmp_path)}"],
                       capture_output=True, text=True, cwd=ROOT, timeout=HANG,
                       env={**env, **pip_env, "HOME": str(home)})
    assert r.returncode == 0, r.stderr
    return [line for line in r.stdout.splitlines() if "-m pip install" in line]


def test_make_installs_without_pip_s_cache_where_the_cache_cannot_be_written(tmp_path):
    """Root with a read-only HOME: pip keeps its cache on (it only checks who owns the directory) and then stopped
    with "Read-only file system: '/root/.cache'". A HOME that is a file stands in for it: nothing can be made in it,
    for root too."""
    unwritable = tmp_path / "home"
    unwritable.write_text("")
    installs = _pip_installs_planned(tmp_path, unwritable)
    assert len(installs) == 4 and all("--no-cache-dir" in line for line in installs), installs
    writable = tmp_path / "writable_home"
    writable.mkdir()
    installs = _pip_installs_planned(tmp_path, writable)
    assert len(installs) == 4 and not any("--no-cache-dir" in line for line in installs), installs


def test_make_asks_pip_for_its_cache_where_a_pip_conf_names_one(tmp_path):
    """The cache check looked only at PIP_CACHE_DIR, XDG_CACHE_HOME and HOME: a cache-dir set in pip.conf was not
    consulted, so pip went on with a cache there that could not be written (and stopped, as with a read-only HOME), and
    one it could write went unused where HOME could not be. The venv's pip says where its cache is now."""
    home, blocked = tmp_path / "home", tmp_path / "a_file"
    home.mkdir()
    blocked.write_text("")  # (nothing can be made in it, for root too)
    conf = tmp_path / "pip.conf"
    conf.write_text(f"[global]\ncache-dir = {blocked / 'pip'}\n")
    installs = _pip_installs_planned(tmp_path, home, PIP_CONFIG_FILE=str(conf))
    assert len(installs) == 4 and all("--no-cache-dir" in line for line in installs), installs
    conf.write_text(f"[global]\ncache-dir = {tmp_path / 'cache'}\n")
    installs = _pip_installs_planned(tmp_path, blocked, PIP_CONFIG_FILE=str(conf))
    assert len(installs) == 4 and not any("--no-cache-dir" in line for line in installs), installs
    assert (tmp_path / "cache").is_dir()


# The check is bounded by coreutils' timeout where it is there, else (stock macOS) by perl, else by the shell alone,
# which ends what PYTHON started as a process group where setsid is there, else with what ps -A shows below it.
# A bound: (the programs hidden from PATH, whether its ps refuses -A as busybox's can).
CHECK_BOUNDS = {
    "timeout": ((), False),
    "no timeout (perl)": (("timeout",), False),
    "neither timeout nor perl (sh, setsid)": (("timeout", "perl"), False),
    "sh, setsid, a ps without -A": (("timeout", "perl"), True),
    "sh, no setsid (ps -A)": (("timeout", "perl", "setsid"), False),
}
# (where the shell can end the check alone: not a bound that ends what PYTHON started)
NO_WAY_TO_END_ITS_CHILDREN = (("timeout", "perl", "setsid"), True)


def _path_for(bound, tmp_path):
    """PATH as it is, or without ``bound``'s hidden programs (a folder of links to every other program on it), its ps
    one that refuses -A (as busybox's without its desktop options does) where ``bound`` says so."""
    hidden, ps_without_a = CHECK_BOUNDS.get(bound, bound)
    if not hidden:
        assert shutil.which("timeout"), "this machine has no coreutils timeout to test with"
        return os.environ["PATH"]
    without = tmp_path / "path_without_timeout"
    without.mkdir()
    if ps_without_a:
        (without / "ps").write_text(f'#!/bin/sh\ncase " $* " in *" -A "*) echo "ps: invalid option -- \'A\'" >&2; '
                                    f'exit 1 ;; esac\nexec "{shutil.which("ps")}" "$@"\n')
        (without / "ps").chmod(0o755)
    for folder in os.environ["PATH"].split(os.pathsep):
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            program = os.path.join(folder, name)
            linked = without / name
            if name not in hidden and not os.path.lexists(linked) and os.access(program, os.X_OK) \
                    and not os.path.isdir(program):  # (the first folder's wins, as on PATH)
                linked.symlink_to(program)
    for name in ("timeout", "perl", "setsid"):
        assert bool(shutil.which(name, path=str(without))) == (name not in hidden), name
    return str(without)


def _shims(tmp_path, path, **scripts):
    """The environment with a folder of ``scripts`` (name: sh text) in front of ``path``."""
    shims = tmp_path / "shims"
    shims.mkdir()
    for name, text in scripts.items():
        (shims / name).write_text("#!/bin/sh\n" + text)
        (shims / name).chmod(0o755)
    return {**os.environ, "PATH": os.pathsep.join([str(shims), path])}


def _run_a_hanging_python(tmp_path, bound):
    """make venv with a PYTHON that starts a child and waits for it, bounded by 1 s: (make's run, the pids of what
    the check started that had not yet ended as make did).

    Those are found by a mark in their environment, not by a file the wrapper writes: on a loaded machine the bound's
    1 s could end the wrapper after it started its child and before it wrote the child's pid (the file was missing).
    A run whose check was ended before its child began (the child's first act, a file, not there) is run again: it
    left nothing running whether or not make ends what the check started, and the test passed on nothing."""
    mark = f"FASTTEXT_TEST_CHECK_MARK={tmp_path}"
    child_began = tmp_path / "child-began"
    env = dict(_shims(tmp_path, _path_for(bound, tmp_path), **{
        "hanging-python": f"sh -c ': > \"$0\"; exec sleep 300' {shlex.quote(str(child_began))} &\nwait\n"}),
        FASTTEXT_TEST_CHECK_MARK=str(tmp_path))
    venv = tmp_path / "venv"
    try:
        for _ in range(5):
            r = subprocess.run(["make", "--no-print-directory", "venv", "PYTHON=hanging-python",
                                "PYTHON_CHECK_SECONDS=1", f"VENV={venv}"], capture_output=True, text=True, cwd=ROOT,
                               timeout=HANG, env=env)
            if child_began.exists():
                break
        assert child_began.exists(), "the check's child never began in 5 runs"
        assert r.returncode != 0
        assert [line for line in r.stderr.splitlines() if not re.match(r"make(\[\d+\])?: ", line)] == \
            r.stderr.splitlines()[:1]
        assert not venv.exists()
    except BaseException:  # (a hang, or make's own failure: what the check started is not left to other tests)
        _kill(_marked(mark))
        raise
    return r, _marked(mark)


def _marked(mark):
    """The pids of this user's processes whose environment holds ``mark`` (a zombie's holds nothing: it has ended)."""
    pids = []
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError):
            if entry.isdigit() and mark.encode() in open(f"/proc/{entry}/environ", "rb").read().split(b"\0"):
                pids.append(int(entry))
    return pids


@pytest.mark.parametrize("bound", CHECK_BOUNDS)
def test_make_names_a_python_that_does_not_answer_in_one_error_line(tmp_path, bound):
    """A PYTHON that hangs when run (a wrapper waiting on a lock, a shim asking a question) hung make at its first
    check, for good. The check is bounded now (PYTHON_CHECK_SECONDS, 60 by default; here 1), and says so in one line;
    the wrapper and what it started are ended. Without coreutils' timeout (stock macOS) it still hung for good; and
    where the shell's ps took no -A (busybox's), the wrapper was ended and its child left running."""
    r, started = _run_a_hanging_python(tmp_path, bound)
    assert r.stderr.splitlines()[0] == ("error: hanging-python is on PATH but did not answer in 1 s (`hanging-python "
                                        "-c ''` still ran): make needs Python 3.10 or 3.11; name one with "
                                        "PYTHON=python3.11 (or python3.10)"), r.stderr
    try:
        assert all(_ends(pid) for pid in started), "the child of the check was left running"
    finally:
        _kill(started)


def test_make_says_what_it_could_not_end_where_the_shell_can_end_only_the_python_check(tmp_path):
    """Without timeout, perl and setsid, and with a ps that takes no -A, the shell can end the check and not what it
    started: the error line said nothing of the child it left running. It says so now."""
    r, started = _run_a_hanging_python(tmp_path, NO_WAY_TO_END_ITS_CHILDREN)
    try:
        assert r.stderr.splitlines()[0] == (
            "error: hanging-python is on PATH but did not answer in 1 s (`hanging-python -c ''` still ran; what it "
            "started may still run: make found no timeout, perl, setsid or ps -A to end it): make needs Python 3.10 "
            "or 3.11; name one with PYTHON=python3.11 (or python3.10)"), r.stderr
    finally:
        _kill(started)


def _kill(pids):
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _ends(pid):
    """Whether process ``pid`` ends (or is left a zombie) within HANG seconds: a TERM takes effect a moment after it
    is sent."""
    for _ in range(HANG * 10):
        if not os.path.exists(f"/proc/{pid}") or "Z" in _proc_state(pid):
            return True
        time.sleep(0.1)
    return False


def _ctrl_c(make):
    os.killpg(make.pid, signal.SIGINT)  # (the terminal sends it to its foreground group: make and its shells)


def _sigterm(make):
    os.kill(make.pid, signal.SIGTERM)  # (`kill PID`, a CI job cancelled, a supervisor stopping it: make alone)


@pytest.mark.parametrize("bound", CHECK_BOUNDS)
@pytest.mark.parametrize("stop", [_ctrl_c, _sigterm], ids=["Ctrl-C", "SIGTERM"])
def test_a_stop_ends_make_at_once_while_the_python_check_waits(tmp_path, stop, bound):
    """coreutils' timeout runs PYTHON in a process group of its own, which a Ctrl-C (sent to the terminal's group:
    make and its shell) does not reach: make, waiting for its shell, waited for the bound too (60 s by default) while
    the user's Ctrl-C seemed ignored; unbounded, PYTHON got the Ctrl-C and make ended at once. The check's shell hands
    the stop on to timeout's group now. A SIGTERM, which make passes to its shell alone, ended that shell but left the
    check (and make's output, which it held) running until the bound. Here the bound is far beyond the test's own
    (HANG); the wrapper starts a child of its own, which must end too."""
    started = tmp_path / "started"
    env = _shims(tmp_path, _path_for(bound, tmp_path), **{
        "hanging-python": f"sleep 300 &\necho $$ $! > {started}.tmp && mv {started}.tmp {started}\nwait\n"})
    make = subprocess.Popen(["make", "--no-print-directory", "venv", "PYTHON=hanging-python",
                             f"PYTHON_CHECK_SECONDS={10 * HANG}", f"VENV={tmp_path / 'venv'}"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True,  # (its own group, as a terminal's foreground job is)
                            env=env)
    shim_pids = []
    try:
        for _ in range(HANG * 10):  # (a bound on the wait for the shim to start, not a timing assert)
            if started.exists():
                break
            time.sleep(0.1)
        shim_pids = [int(pid) for pid in started.read_text().split()]
        stop(make)
        _, stderr = make.communicate(timeout=HANG)
        assert make.returncode != 0
        assert all(re.match(r"make(\[\d+\])?: ", line) for line in stderr.splitlines()), stderr  # (make's only)
        for pid in shim_pids:  # (the stop reaches the shim's sleep as make ends: it may take a moment to die)
            assert _ends(pid), "the shim was left running"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(make.pid, signal.SIGKILL)
        for pid in shim_pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(os.getpgid(pid), signal.SIGKILL)  # (the old code left timeout's group running)
        make.wait()


def _proc_state(pid):
    with contextlib.suppress(OSError):
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    return ""


def test_the_python_check_names_the_versions_the_lock_installs_on():
    sys.path.insert(0, SCRIPTS)
    import check_python
    assert check_python.problem((3, 12)).startswith("error: make bootstraps .venv from requirements/lock.txt, "
                                                    "which installs on Python 3.10 to 3.11; ")
    assert check_python.problem((3, 10)) is None and check_python.problem((3, 11)) is None
