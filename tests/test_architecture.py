"""The library's shape: no import cycle among its modules, and serving that never imports training.

The import graph is read from the source (every ``import``, function-level ones included), so a
lazy import cannot hide a cycle. Serving is also checked by running it: a bundle is loaded and
queried (``Predictor`` and the endpoint's hosting functions) in a process where tqdm and the
training modules cannot be imported, as in the MXNet inference container, which has no tqdm.
"""
import ast
import io
import json
import os
import re
import subprocess
import sys
import tokenize

import pytest

from conftest import ROOT, make_splits

PACKAGE_DIR = os.path.join(ROOT, "fasttext_lib")
SUBPACKAGES = ("storage",)  # fasttext_lib.storage: a package of its own modules, "storage" its __init__
MODULES = sorted([name[:-3] for name in os.listdir(PACKAGE_DIR) if name.endswith(".py")] + list(SUBPACKAGES)
                 + [f"{package}.{name[:-3]}" for package in SUBPACKAGES
                    for name in os.listdir(os.path.join(PACKAGE_DIR, package))
                    if name.endswith(".py") and name != "__init__.py"])
# What serving (predict.py, sm_serve.py, and the modules Predictor is made of) must never import, directly or through
# another module. "bundle" is the bundle's writer: serving reads bundles with bundle_read (and bundle_format, which
# both share).
TRAINING_ONLY = ("train", "step", "optim", "checkpoints", "config", "progress", "sm_train", "cli",
                 "sagemaker_utils", "packaging", "download", "download_fetch", "download_answers", "download_cache",
                 "download_retry", "zhang_datasets", "zhang_splits", "baseline", "synthetic", "bundle")
SERVING = ("predict", "sm_serve", "scoring", "evaluation", "label_encoding", "text_arguments", "trained_on")


def _source_path(module):
    path = os.path.join(PACKAGE_DIR, *module.split("."))
    return os.path.join(path, "__init__.py") if module in SUBPACKAGES else path + ".py"


def _library_module(parts):
    """The library module that dotted ``parts`` (below fasttext_lib) name or are in: ``storage.s3`` for
    ``["storage", "s3", "join"]``, ``__init__`` for ``[]``."""
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in MODULES:
            return ".".join(parts[:n])
    return "__init__"


def imports_of(module):
    """(package modules, top-level external packages) that ``module`` imports anywhere in its source."""
    with open(_source_path(module)) as f:
        tree = ast.parse(f.read())
    package = module.split(".")[:-1] if module not in SUBPACKAGES else [module]  # where its relative imports start
    internal, external = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0 and (node.module or "").split(".")[0] != "fasttext_lib":
                external.add(node.module.split(".")[0])
                continue
            if node.level == 0:
                base = (node.module or "").split(".")[1:]
            else:
                base = package[:len(package) - (node.level - 1)] + ((node.module or "").split(".") if node.module else [])
            if node.module and node.level or (node.level == 0 and base):
                internal.add(_library_module(base))
            else:  # from . import x, y / from fasttext_lib import x: modules, or names of __init__
                internal.update(_library_module(base + [a.name]) for a in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "fasttext_lib":
                    internal.add(_library_module(parts[1:]))
                else:
                    external.add(parts[0])
    internal.discard(module)
    return internal, external


GRAPH = {m: imports_of(m)[0] for m in MODULES}


def find_cycle(graph):
    """One import cycle as a list of modules (first == last), or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def closure(graph, roots):
    """Every module reachable from ``roots``, each mapped to the import chain that reaches it."""
    chains, todo = {}, [(root, [root]) for root in roots]
    while todo:
        node, chain = todo.pop(0)
        if node not in chains:
            chains[node] = chain
            todo.extend((nxt, chain + [nxt]) for nxt in sorted(graph.get(node, ())))
    return chains


def test_the_graph_reader_sees_every_kind_of_import():
    # absolute, relative, package-relative and function-level imports all count
    assert {"config", "errors"} <= GRAPH["sm_train"] and "read_and_train" in GRAPH["sm_train"]  # in _train_and_save
    assert "__init__" in GRAPH["bundle"] and "storage" in GRAPH["bundle"]  # from . import __version__, storage
    assert "sm_serve" in GRAPH["entry_point"] and "sm_train" in GRAPH["entry_point"]  # from fasttext_lib.x import
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_cycle_among_the_library_modules():
    cycle = find_cycle(GRAPH)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_serving_modules_import_no_training_code_and_no_tqdm():
    reached = closure(GRAPH, SERVING)
    training = [" -> ".join(chain) for module, chain in sorted(reached.items()) if module in TRAINING_ONLY]
    assert not training, "serving reaches training code: " + "; ".join(training)
    assert not [m for m in reached if "tqdm" in imports_of(m)[1]]


# ---- serving in a process without tqdm and without the training modules ----

BLOCKED_SERVE = r"""
import json, sys

BLOCKED = set(json.loads(sys.argv[2]))


class Blocker:
    # a meta path finder that makes the blocked modules unimportable, like a missing package
    def find_spec(self, name, path=None, target=None):
        if name in BLOCKED or name.split(".")[0] == "tqdm":
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        return None


sys.meta_path.insert(0, Blocker())
try:
    import fasttext_lib.train  # noqa: F401
    raise SystemExit("the blocker does not block")
except ImportError:
    pass

from fasttext_lib import entry_point
from fasttext_lib.predict import Predictor

bundle, texts = sys.argv[1], json.loads(sys.stdin.read())
predictor = Predictor.load(bundle)
model = entry_point.model_fn(bundle)
body = json.dumps({"instances": texts}).encode()
answer = entry_point.output_fn(entry_point.predict_fn(entry_point.input_fn(body, "application/json"), model), "application/json")
loaded = sorted(m for m in sys.modules if m.split(".")[0] == "tqdm" or m in BLOCKED)
print(json.dumps({"predictor": predictor.predict(texts), "endpoint": json.loads(answer[0]), "loaded": loaded}))
"""


@pytest.fixture(scope="module")
def small_bundle(tmp_path_factory):
    from fasttext_lib.bundle import save_bundle
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.train import train

    train_data, val_data = make_splits(400, 50, seed=1)
    trained = train(train_data, val_data, TrainConfig(epochs=1, batch_size=128, emsize=16, ngrams=2, buckets=1000,
                                                      progress=False, ctx="cpu"))
    return save_bundle(trained, str(tmp_path_factory.mktemp("bundle") / "model")), val_data.texts[:20]


def test_a_bundle_is_served_without_tqdm_and_without_the_training_modules(small_bundle):
    from fasttext_lib.predict import Predictor

    bundle, texts = small_bundle
    blocked = [f"fasttext_lib.{m}" for m in TRAINING_ONLY]
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-c", BLOCKED_SERVE, bundle, json.dumps(blocked)], input=json.dumps(texts),
                       env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    expected = Predictor.load(bundle).predict(texts)
    assert result["predictor"] == expected and result["endpoint"] == expected
    assert result["loaded"] == []


def _timestamped_calls(node):
    """``gzip.compress(...)`` calls under ``node`` that stamp the current time into their bytes (no ``mtime=``)."""
    return [call for call in ast.walk(node) if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == "compress" and isinstance(call.func.value, ast.Name) and call.func.value.id == "gzip"
            and not any(keyword.arg == "mtime" for keyword in call.keywords)]


def test_test_parameters_hold_no_timestamped_bytes():
    """A parameter's bytes are its test id: ``gzip.compress`` writes the current second into them, so two xdist
    workers collecting in different seconds saw different tests and ``make test`` failed at collection (twice)."""
    tests_dir = os.path.join(ROOT, "tests")
    found = []
    for name in sorted(os.listdir(tests_dir)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(tests_dir, name)) as f:
            tree = ast.parse(f.read())
        for function in ast.walk(tree):
            if isinstance(function, (ast.FunctionDef, ast.ClassDef)):
                found += [f"{name}:{call.lineno}" for decorator in function.decorator_list
                          for call in _timestamped_calls(decorator)]
    assert not found, f"gzip.compress without mtime=0 in test parameters: {found}"


def _table_rows(doc, heading):
    """The rows (``| `cli.py`, `__main__.py` | ... |``) of the module table under ``heading`` in ``doc`` (a path
    under the repository)."""
    with open(os.path.join(ROOT, doc)) as f:
        text = f.read()
    section = text.split(heading, 1)[1].split("\n#", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| `")]


def _first_column_names(doc, heading):
    """The file names in backticks in the first column of the table under ``heading`` in ``doc``: ``cli.py``,
    ``__main__.py`` of the row ``| `cli.py`, `__main__.py` | ... |``."""
    return {name for row in _table_rows(doc, heading) for name in re.findall(r"`([^`]+)`", row.split("|")[1])}


def _library_files():
    """Every source file and folder of the package, as the docs name them (``storage/`` for the storage package's
    modules, ``sample_data/``)."""
    names = {name for name in os.listdir(PACKAGE_DIR) if name.endswith((".py", ".cc"))}
    return names | {f"{name}/" for name in os.listdir(PACKAGE_DIR)
                    if os.path.isdir(os.path.join(PACKAGE_DIR, name)) and name != "__pycache__"}


# The one table of the library's modules, and README's section that gives their reading order and points to it
MODULE_TABLE = ("docs/ARCHITECTURE.md", "## One line per module")
README_LIBRARY = ("README.md", "## The library (`fasttext_lib/`), in reading order")


def test_every_module_has_its_row_in_the_docs_module_table():
    """A newcomer reads this table to find a file's concern: a module added without its row (cluster.py was in
    ARCHITECTURE.md's table but not README's; __init__.py, which sets process-wide state, in neither) is invisible
    there. Rows naming a file that is gone are caught too."""
    doc = MODULE_TABLE[0]
    listed = _first_column_names(*MODULE_TABLE)
    files = _library_files()
    assert sorted(files - listed) == [], f"modules without a row in {doc}"
    assert sorted(listed - files) == [], f"rows in {doc} naming no file of fasttext_lib/"


def test_the_readme_leaves_the_module_table_to_architecture_and_names_only_library_files():
    """README.md and docs/ARCHITECTURE.md each had a table of the modules, in different words, which drifted apart
    (a module's row in one only, a detail in one only). ARCHITECTURE.md's is the one: README's section gives the
    reading order in a few lines, pointing to it, and every file it names is one of the library's."""
    doc, heading = README_LIBRARY
    assert _table_rows(doc, heading) == [], f"a module table in {doc}: its rows belong in {MODULE_TABLE[0]}'s"
    with open(os.path.join(ROOT, doc)) as f:
        section = f.read().split(heading, 1)[1].split("\n#", 1)[0]
    assert "docs/ARCHITECTURE.md#one-line-per-module" in section
    named = {name for name in re.findall(r"`([^`]+)`", section) if re.fullmatch(r"\w+(\.py|\.cc|/)", name)}
    assert "train.py" in named and sorted(named - _library_files()) == [], f"files {doc} names that fasttext_lib/ lacks"


def _library_words():
    """Every word of the package's Python and C++ sources (names, and the words of its strings and comments)."""
    words = set()
    for folder, _, names in os.walk(PACKAGE_DIR):
        for name in names:
            if name.endswith((".py", ".cc")):
                with open(os.path.join(folder, name)) as f:
                    words.update(re.findall(r"\w+", f.read()))
    return words


def test_the_names_the_docs_module_table_gives_are_in_the_library():
    """A newcomer greps for the function a row names: download_answers.py's row named ``check_range_start``, renamed
    ``check_range`` since, and the grep found nothing. Every Python name in backticks in a row's description
    (``open_from_byte``, ``storage.one_of_several_files``, ``read_vec(keep=)``'s ``read_vec``) is a word of the
    library's sources."""
    doc, heading = MODULE_TABLE
    words = _library_words()
    named = [(row.split("|")[1].strip(), re.fullmatch(r"(?:\w+\.)*(\w+)(?:\(.*\))?", ref))
             for row in _table_rows(doc, heading) for ref in re.findall(r"`([^`]+)`", "|".join(row.split("|")[2:]))]
    gone = [(module, name.group(0)) for module, name in named if name and name.group(1) not in words]
    assert gone == [], f"names in {doc}'s module table that no library source has"


def _names_bound_in(module):
    """Every name ``module``'s source binds anywhere: functions, classes, methods, assigned names and attributes,
    imported names."""
    with open(_source_path(module)) as f:
        tree = ast.parse(f.read())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Store):
            names.add(node.id if isinstance(node, ast.Name) else node.attr)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
    return names


def _prose(module):
    """``(line, text)`` of each comment and docstring of ``module``."""
    with open(_source_path(module)) as f:
        source = f.read()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                ast.get_docstring(node, clean=False):
            yield node.body[0].lineno, ast.get_docstring(node, clean=False)


# ``module.name`` in prose that is no module's name: a file's (config.json, model.tar.gz, train.csv, the README's
# autotune.exp1.png) and a variable named as a module (Gluon's ``data.copyto(ctx)``, the SDK's ``model.deploy()`` and
# ``model.transformer()``)
NOT_MODULE_NAMES = {"json", "tar", "csv", "txt", "gz", "png", "py", "cc", "autotune.exp1", "data.copyto",
                    "model.deploy", "model.transformer"}


def test_a_module_s_name_in_a_comment_or_docstring_is_that_module_s():
    """``module.name`` in a comment or docstring is where a newcomer looks: unknown_labels.py's docstring sent them to
    ``predict.class_ids``, which is label_encoding.py's. Each names something that module binds."""
    bound = {module: _names_bound_in(module) for module in MODULES}
    wrong = [f"{module}:{line}: {found.group(0)}" for module in MODULES for line, text in _prose(module)
             for found in re.finditer(r"(?<![\w.])(?:fasttext_lib\.)?((?:storage\.)?[a-z_]\w*)\.([A-Za-z_]\w*)", text)
             if found.group(1) in bound and found.group(2) not in bound[found.group(1)]
             and f"{found.group(1)}.{found.group(2)}" not in MODULES
             and not {found.group(2), f"{found.group(1)}.{found.group(2)}"} & NOT_MODULE_NAMES]
    assert wrong == [], "names given as a module's that the module does not have"


# The user-facing documents (README, docs/ but RESULTS.md and GPU.md, each notebook's markdown) give commands and
# names to copy: each is checked against the code it names, so that a renamed flag, parameter or function fails here
# rather than in a reader's terminal.
USER_DOCS = ("README.md", "docs/INPUT.md", "docs/SERVING.md", "docs/TRAINING.md", "docs/ARCHITECTURE.md")
NOTEBOOKS_DIR = os.path.join(ROOT, "notebooks")


def _user_docs():
    """``{name: text}`` of each user-facing document, a notebook's being its markdown cells."""
    texts = {}
    for doc in USER_DOCS:
        with open(os.path.join(ROOT, doc)) as f:
            texts[doc] = f.read()
    for name in sorted(os.listdir(NOTEBOOKS_DIR)):
        if name.endswith(".ipynb"):
            with open(os.path.join(NOTEBOOKS_DIR, name)) as f:
                cells = json.load(f)["cells"]
            texts[f"notebooks/{name}"] = "\n".join("".join(cell["source"]) for cell in cells
                                                   if cell["cell_type"] == "markdown")
    return texts


def _code_given(text):
    """Each piece of code a document gives: a code block's lines (one continued with ``\\`` joined to the next) and
    each inline code span, its line breaks read as spaces."""
    blocks = re.findall(r"```[^\n]*\n(.*?)```", text, re.S)
    lines = [line for block in blocks for line in block.replace("\\\n", " ").splitlines()]
    spans = re.findall(r"`([^`]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    return lines + [" ".join(span.split()) for span in spans]


def _cli_options():
    """``{command: its option strings}`` of ``python -m fasttext_lib``'s parser."""
    import argparse

    from fasttext_lib.cli import build_parser

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {name: {option for action in parser._actions for option in action.option_strings}
            for name, parser in commands.choices.items()}


def _flags_given(code, commands):
    """``(command, flag)`` for each ``--flag`` that follows a command's name in ``code`` (``python -m fasttext_lib
    train ... --epochs 10``, ``predict --input FILE``), up to a comment, a pipe or a redirection."""
    starts = list(re.finditer(rf"(?:^|(?<=[\s(]))({'|'.join(map(re.escape, commands))})(?![\w-])", code))
    for start, end in zip(starts, starts[1:] + [None]):
        words = re.split(r"#|\||;|<|>", code[start.end():end.start() if end else None])[0]
        yield from ((start.group(1), flag) for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", words))


def test_every_flag_the_user_docs_give_a_command_is_one_of_its_options():
    """A reader copies ``python -m fasttext_lib train ... --flag`` from the docs: every flag given after a command's
    name, in a code block or an inline span, is one that command's parser has."""
    options = _cli_options()
    given = [(doc, command, flag) for doc, text in _user_docs().items() for code in _code_given(text)
             for command, flag in _flags_given(code, options)]
    assert len(given) > 50 and ("README.md", "train", "--pretrained-vectors") in given  # (the reader finds them)
    assert sorted({(doc, command, flag) for doc, command, flag in given if flag not in options[command]}) == []


def _notebook_parameters():
    """``{notebook file name: the names of its parameters}`` (its cell tagged ``parameters``)."""
    import papermill

    return {name: set(papermill.inspect_notebook(os.path.join(NOTEBOOKS_DIR, name)))
            for name in sorted(os.listdir(NOTEBOOKS_DIR)) if name.endswith(".ipynb")}


# A parameter the docs name to show that it is refused (``-p epoch 1``: "a name the notebook does not have")
REFUSED_PARAMETERS = {"epoch"}


def test_every_papermill_parameter_the_user_docs_pass_is_one_the_notebook_has():
    """papermill only warns of a ``-p NAME`` the notebook lacks, and the check cell then stops the run: each
    ``papermill NN_name.ipynb ... -p NAME`` the docs give names a parameter of that notebook, and every other ``-p
    NAME`` (``make demo ARGS=...``, a parameter named alone) one of some notebook of the series."""
    parameters = _notebook_parameters()
    every = set().union(*parameters.values()) | REFUSED_PARAMETERS
    passed, named = [], []
    for doc, text in _user_docs().items():
        for code in _code_given(text):
            run = re.search(r"papermill\s+\S*?(\d\d_\w+\.ipynb)(.*)", code)
            if run:
                passed += [(doc, run.group(1), name) for name in re.findall(r"-p\s+(\w+)", run.group(2))]
        named += [(doc, name) for name in re.findall(r"(?<![\w-])-p\s+(\w+)", text)]
    assert len(passed) >= 5 and ("README.md", "01_data_prep.ipynb", "train_file") in passed
    assert sorted({entry for entry in passed if entry[2] not in parameters[entry[1]]}) == []
    assert sorted({entry for entry in named if entry[1] not in every}) == []


def test_a_module_s_name_in_the_user_docs_is_that_module_s():
    """``module.name`` in the docs (``packaging.pack_model``, ``fasttext_lib.text.normalize_text``,
    ``notebook_errors.stop_showing_errors_as_lines()``) names something that module binds, as in the library's own
    comments and docstrings."""
    bound = {module: _names_bound_in(module) for module in MODULES}
    named = [(doc, found.group(1), found.group(2)) for doc, text in _user_docs().items()
             for found in re.finditer(r"(?<![\w./-])(?:fasttext_lib\.)?((?:storage\.)?[a-z_]\w*)\.([A-Za-z_]\w*)", text)
             if found.group(1) in bound]
    assert ("README.md", "packaging", "pack_model") in named
    wrong = {(doc, f"{module}.{name}") for doc, module, name in named
             if name not in bound[module] and f"{module}.{name}" not in MODULES
             and not {name, f"{module}.{name}"} & NOT_MODULE_NAMES}
    assert sorted(wrong) == [], "names the docs give as a module's that the module does not have"


def _anchors(doc):
    """The link targets ``doc`` holds: each heading's, as GitHub makes it (lowercased, punctuation but ``-`` dropped,
    spaces as ``-``; a repeated one numbered ``-1``, ...), and each ``<a id="...">``."""
    with open(os.path.join(ROOT, doc)) as f:
        text = re.sub(r"```.*?```", "", f.read(), flags=re.S)
    anchors, seen = set(re.findall(r'<a id="([^"]+)">', text)), {}
    for heading in re.findall(r"^#{1,6}\s+(.*)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        anchors.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return anchors


def test_every_link_of_the_user_docs_reaches_its_file_and_heading():
    """A heading renamed leaves the links to it pointing nowhere (GitHub opens the page at its top): every relative
    link, ``[...](docs/TRAINING.md#autotune)`` or ``[...](#batch-transform)``, names a file there is and, with a
    ``#``, a heading (or an ``<a id>``) of that file."""
    broken, followed = [], 0
    for doc, text in _user_docs().items():
        for link in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"\w+://", link):
                continue
            path, _, anchor = link.partition("#")
            target = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
            followed += 1
            if not os.path.exists(os.path.join(ROOT, target)):
                broken.append((doc, link))
            elif anchor and target.endswith(".md") and anchor not in _anchors(target):
                broken.append((doc, link))
    assert followed > 30 and broken == [], f"links to no file or heading: {broken}"


def test_every_fasttext_variable_the_user_docs_name_is_one_the_library_reads():
    """``FASTTEXT_DOWNLOAD_ATTEMPTS=N``, ``FASTTEXT_LIB_NATIVE=0``: a variable the docs tell a reader to set is one
    the library (or a script) reads; a misspelled or renamed one is set without effect."""
    read = set()
    for folder in ("fasttext_lib", "scripts"):
        for path, _, names in os.walk(os.path.join(ROOT, folder)):
            for name in names:
                if name.endswith((".py", ".cc", ".sh")):
                    with open(os.path.join(path, name)) as f:
                        read.update(re.findall(r"FASTTEXT_[A-Z0-9_]+", f.read()))
    named = {(doc, name) for doc, text in _user_docs().items() for name in re.findall(r"FASTTEXT_[A-Z0-9_]+", text)}
    assert ("docs/SERVING.md", "FASTTEXT_MAX_REQUEST_BYTES") in named
    assert sorted((doc, name) for doc, name in named if name not in read) == []


def test_the_modules_architecture_calls_long_are_long():
    """ARCHITECTURE.md opens by naming the few modules that are long because the formats they accept are many: it
    still named sm_serve.py after the endpoint's request parsing moved to serve_requests.py (the longest module),
    leaving sm_serve.py its four hooks. Each named is over twice as long as the library's median module."""
    with open(os.path.join(ROOT, "docs", "ARCHITECTURE.md")) as f:
        opening = " ".join(f.read().split("## ", 1)[0].split())
    named = re.findall(r"`(\w+\.py)`", opening.split("the formats they accept are many:", 1)[1].split(")", 1)[0])

    def lines(module):
        with open(_source_path(module)) as f:
            return sum(1 for _ in f)

    lengths = sorted(lines(module) for module in MODULES)
    short = [name for name in named if lines(name[:-3]) <= 2 * lengths[len(lengths) // 2]]
    assert len(named) >= 3 and short == [], f"named as long in ARCHITECTURE.md, but no longer than most: {short}"


def _parenthesis(text):
    """``text`` up to the ``)`` that closes a ``(`` just before it (the parentheses in between nested)."""
    depth = 0
    for at, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return text[:at]
    return text


def test_the_readme_names_every_parameter_a_check_cell_refuses_as_unused():
    """README's "The parameters check" lists what a check cell refuses as a value the run would leave unused, by
    the rule of notebook_params: a parameter its yes/no switch leaves unused (USED_ONLY_WITH), one of 02's settings
    the autotune search sets (SET_BY_AUTOTUNE), one of 01's that its data does not use (USED_BY_DATA). 01's ``seed``
    became one of those last (the sample and a download use none) and was missing from the list."""
    from fasttext_lib.notebook_params import SET_BY_AUTOTUNE, USED_BY_DATA, USED_ONLY_WITH

    with open(os.path.join(ROOT, "README.md")) as f:
        section = " ".join(f.read().split("### The parameters check", 1)[1].split("\n### ", 1)[0].split())
    lists = {"its yes/no switch leaves unused (": USED_ONLY_WITH,
             "that `-p autotune True` sets itself (": SET_BY_AUTOTUNE,
             "one of 01's that its data does not use (": USED_BY_DATA}
    missing = {}
    for opening, parameters in lists.items():
        listed = set(re.findall(r"`(?:-p )?(\w+)[` ]", _parenthesis(section.split(opening, 1)[1])))
        missing.update({name: opening for name in parameters if name not in listed})
    assert missing == {}, "parameters README's list of those refused as unused leaves out"


def test_the_readme_lists_every_yes_no_parameter_of_the_series():
    """README's "Yes/no parameters (...)" says which parameters take only True or False (papermill passes ``-p
    autotune false`` on as text, refused): each parameter of the series whose default is a bool, and no other."""
    import papermill

    with open(os.path.join(ROOT, "README.md")) as f:
        text = " ".join(f.read().split())
    listed = set(re.findall(r"`(\w+)`", _parenthesis(text.split("Yes/no parameters (", 1)[1])))
    flags = {name for notebook in sorted(os.listdir(NOTEBOOKS_DIR)) if notebook.endswith(".ipynb")
             for name, parameter in papermill.inspect_notebook(os.path.join(NOTEBOOKS_DIR, notebook)).items()
             if parameter["default"] in ("True", "False")}
    assert "autotune" in flags and listed == flags
