"""The notebooks' parameters checked in their check cell, each wrong one refused in one line before any work.

papermill passes ``-p`` values as text or numbers (``-p autotune false`` is the text ``'false'``, true in Python) and
only warns about a name the notebook does not have; a kernel keeps no trace of what papermill injected except the
cell's code in IPython's history. :func:`check_parameters` (a name the notebook lacks, or one the run would leave
unused, by its yes/no switch, 02's autotune or 01's data: :func:`check_switched_on`, :func:`left_unused`, which
make demo reads too), :func:`check_flags` (yes/no parameters), :func:`check_tuning` (02's tune
without its training job), :func:`check_dataset` (01's datasets), :func:`prepared_dataset` (02's to 04's), :func:`check_query_words` / :func:`check_word_pairs` (04's word lists), and
:func:`key_path` / :func:`bundle_name` (a prefix, a dataset or a run name as S3 key parts: workspace.py builds its
paths from them).
"""
import ast

from .errors import FastTextError, check_bool, check_word_list, check_word_pair_list, did_you_mean
from .notebook_errors import show_errors_as_lines

# The first line of the cell papermill injects after the parameters cell (tagged injected-parameters).
PAPERMILL_HEADER = "# Parameters"
# Notebook 01's own datasets, beside the downloadable ones (zhang_datasets.DATASETS).
BUILT_IN_DATASETS = ("sample", "synthetic")


def key_path(value, name, empty_ok=False):
    """``value`` as a path of S3 key parts (``a/b``), its outer slashes dropped, or one error naming ``name``: a part
    that is empty, ``.`` or ``..`` (``-p run_name /big`` saved the bundle as models//big, in a folder of no name in the
    S3 console, beside models/big), or an ``s3://`` URI given as the path inside the bucket (its parts were keys
    under s3:/). A number is its text (``-p run_name 2024``: papermill passes the number)."""
    if value is None or value == "":
        if empty_ok:
            return ""
        raise FastTextError(f"{name} must name a folder, got {value!r}")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise FastTextError(f"{name} must be a folder's name (a/b for folders), got {value!r}")
    text = str(value)
    if text.lower().startswith("s3:"):
        raise FastTextError(f"{name} is the path inside the bucket (no s3://bucket/), got {text!r}")
    path = text.strip("/")
    if not path and empty_ok:
        return ""
    if any(part in ("", ".", "..") for part in path.split("/")):
        raise FastTextError(f"{name} must be folder names joined by / (no empty, . or .. part), got {text!r}")
    return path


def bundle_name(run_name, dataset):
    """02's and 04's ``run_name``: as given, else the dataset's name (a run on other data keeps its own bundle), as a
    key path (:func:`key_path`). A dataset that names no data is refused naming ``dataset``: ``-p dataset None`` said
    "run_name must name a folder, got None", a parameter the user had not given (and 04 said so only at its load).
    It is checked with a ``run_name`` given too: both notebooks read the dataset's splits whatever the bundle is called
    (it passed, and 02 was stopped by its data cell, after the libraries had loaded)."""
    prepared = prepared_dataset(dataset)
    if run_name is not None and run_name != "":
        return key_path(run_name, "run_name")
    return prepared


def prepared_dataset(dataset):
    """02's, 03's and 04's ``dataset`` (the data notebook 01 prepared) as a key path (:func:`key_path`), checked in
    their check cell: one that names no data (``-p dataset None``, ``""``) is refused naming ``dataset`` (03 refused
    it only in its data cell, after the libraries had loaded)."""
    if not isinstance(dataset, str) or not dataset.strip("/"):
        raise FastTextError(f"dataset must name the data notebook 01 prepared (such as 'sample'), got {dataset!r}")
    return key_path(dataset, "dataset")


def known_datasets():
    """The datasets notebook 01 makes itself: its own (``sample``, ``synthetic``), then the downloadable ones."""
    from .zhang_datasets import DATASETS

    return list(BUILT_IN_DATASETS) + sorted(DATASETS)


def is_a_known_name_misspelt(dataset):
    """Whether ``dataset`` is one of :func:`known_datasets` written in other capitals or with ``-`` for ``_``
    (``Sample``, ``AG-NEWS``): a name 01 refuses. Another name may be one of the user's own (own_data.py), however
    close to a known one (``my_reviews``, ``yelp_review_full``)."""
    return isinstance(dataset, str) and dataset.lower().replace("-", "_") in known_datasets()


def check_dataset(dataset):
    """Notebook 01's ``dataset``: ``sample``, ``synthetic`` or a downloadable name; else one error listing them all,
    with the closest (``Sample``: ``sample``; ``yelp``: the two Yelp sets). The download's own check listed the
    downloadable ones alone, as if ``sample`` were not a choice (``-p dataset Sample``). (A name of the user's own,
    with ``train_file``, is own_data.check_own_data's.)"""
    known = known_datasets()
    if isinstance(dataset, str) and dataset in known:
        return
    # a name that is no known one misspelt may be of the user's own data, given without its file (README's
    # -p dataset my_reviews -p train_file reviews.csv): it was told only to choose a built-in one
    own = (", or name your own data so with train_file (papermill: -p train_file reviews.csv)"
           if isinstance(dataset, str) and dataset and not is_a_known_name_misspelt(dataset) else "")
    raise FastTextError(f"unknown dataset {dataset!r}{did_you_mean(dataset, known, 2)}; choose one of "
                        f"{', '.join(known)}{own}")


def check_flags(**flags):
    """A notebook's yes/no parameters, each True or False (one error naming the first that is not).
    papermill's ``-p autotune false`` passes the text ``'false'`` (only ``True`` and ``False`` become
    booleans), which Python takes as true: the autotune search (or a billed training job) ran."""
    for name, value in flags.items():
        check_bool(value, name, f" (papermill: -p {name} True, or -p {name} False)")


def check_tuning(tune, use_training_job):
    """Notebook 02's ``tune`` asks for a tuning job, whose trials are training jobs: it needs ``use_training_job``.
    Alone, 02 trained locally for minutes and said so only in its last cells ("no tuning job started")."""
    if tune and not use_training_job:
        raise FastTextError("tune needs use_training_job=True (a tuner starts training jobs): -p use_training_job True "
                            "too, or -p tune False")


def check_query_words(query_words):
    """Notebook 04's ``query_words``: a list (or tuple) of words, or None (the words with the largest vectors); else one
    error. papermill's ``-p query_words "[great, bad]"`` passes the list's text, whose letters were taken as the words."""
    check_word_list(query_words, "query_words", ' (papermill: -y "query_words: [great, bad]")', none_allowed=True)


def check_word_pairs(word_pairs):
    """Notebook 04's ``word_pairs``: a list (or tuple) of (word, word) pairs, else one error (papermill's ``-p`` passes
    a list as its text, and a pair of three words failed only at the last cell)."""
    check_word_pair_list(word_pairs, "word_pairs", ' (papermill: -y "word_pairs: [[great, excellent]]")')


def _top_level_assignments(source):
    """The assignments (``ast.Assign``, ``ast.AnnAssign``) at the top level of a cell's code, in order; none for code
    that does not parse. The one walk of a cell that :func:`assigned_names` and :func:`literal_defaults` read."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [node for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))]


def assigned_names(source):
    """The names a cell's code assigns at its top level, in order (``a = 1``, ``b: int = 2``, ``c, d = ...``);
    none for code that does not parse."""
    names = []
    for node in _top_level_assignments(source):
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
            names.extend(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return list(dict.fromkeys(names))


# A parameter that only a yes/no switch of its notebook puts to use: the switches that do, in the order looked for
# (role is 02's training job's and 04's endpoint's).
USED_ONLY_WITH = {"autotune_duration": ("autotune",), "training_instance_type": ("use_training_job",),
                  "endpoint_instance_type": ("deploy",), "role": ("use_training_job", "deploy")}
# 02's settings that its autotune search sets itself (autotune.starting_config: the library's setting for the data,
# then the search's steps), and train accuracy, which the search's model has none of: with autotune=True a value given
# for them went unused without a word (the command line warns of such flags: cli._say_unused_search_flags).
SET_BY_AUTOTUNE = ("optimizer", "lr", "batch_size", "epochs", "emsize", "ngrams", "train_accuracy")
# 01's parameters that only some kinds of data use (_data_kind): train_docs sizes the synthetic corpus and caps each
# split of a downloaded set; test_docs sizes the synthetic corpus's test split; overwrite=False keeps a downloaded set's
# files; seed generates the synthetic corpus and holds out your own train_file's test split (the sample is fixed, and a
# download is shuffled and sampled with the same fixed seed every run). Given for other data, they went unused without
# a word. (02's and 03's seed is their training's, always used: these rules are 01's alone, which alone has train_file.)
USED_BY_DATA = {"train_docs": (("synthetic", "downloaded"), "dataset='synthetic' or a downloaded dataset"),
                "test_docs": (("synthetic",), "dataset='synthetic'"),
                "overwrite": (("downloaded",), "a downloaded dataset"),
                "seed": (("synthetic", "own"), "dataset='synthetic' or your own train_file without a test_file")}
# Why each kind of data leaves a parameter of USED_BY_DATA it is not listed for unused.
_READ_WHOLE = ("train_file is read whole (the test split is test_file, or a seeded 20% of train_file), and its splits "
               "are written anew on every run")
UNSIZED_DATA = {"own": _READ_WHOLE, "own_tested": _READ_WHOLE,
                "sample": "dataset='sample' is always the whole built-in sample, written anew on every run",
                "synthetic": "dataset='synthetic' is written anew on every run",
                "downloaded": "a downloaded dataset's splits are each capped by train_docs"}
# What a parameter of USED_BY_DATA does, said instead of UNSIZED_DATA's reason (which is about sizes and files).
USED_FOR = {"seed": "it generates the synthetic corpus and picks the 20% of train_file held out as the test split "
                    "(a test_file given is the test split whole)"}


def _data_kind(namespace):
    """What notebook 01 prepares, as :data:`USED_BY_DATA` names it: ``own`` (a ``train_file``, its test split held out
    of it), ``own_tested`` (with its ``test_file``), ``sample``, ``synthetic`` or ``downloaded`` (any other name: a
    misspelt one is check_dataset's to refuse)."""
    if namespace.get("train_file") is not None:
        return "own" if namespace.get("test_file") is None else "own_tested"
    return namespace.get("dataset") if namespace.get("dataset") in BUILT_IN_DATASETS else "downloaded"


def data_leaves_unused(name, namespace):
    """``(when it is used, what to do)`` where notebook 01's data, as ``namespace`` has it, would not use its
    parameter ``name`` (:data:`USED_BY_DATA`); else None, and always for another notebook (no ``train_file``)."""
    if name not in USED_BY_DATA or "train_file" not in namespace:
        return None
    kinds, uses = USED_BY_DATA[name]
    kind = _data_kind(namespace)
    if kind in kinds:
        return None
    return f"used only with {uses}", f"{USED_FOR.get(name, UNSIZED_DATA[kind])}; leave {name} out"


def left_unused(name, namespace):
    """``(when it is used, what to do)`` where the run, its other parameters as ``namespace`` has them, would not use
    the parameter ``name`` (its switch False, set by 02's autotune, or 01's data without it); else None. make demo
    reads it too, to give a value only to the notebooks that use it."""
    switches = [s for s in USED_ONLY_WITH.get(name, ()) if s in namespace]
    if switches and all(namespace[s] is False for s in switches):
        return f"used only with {switches[0]}=True", f"-p {switches[0]} True too, or leave {name} out"
    if name in SET_BY_AUTOTUNE and namespace.get("autotune") is True:
        set_by = ("its model is scored on its validation split alone" if name == "train_accuracy" else
                  "the search sets the optimizer, lr, batch size, epochs, emsize and n-grams, starting from the "
                  "library's setting for the data")
        return "not used with autotune=True", f"{set_by}; leave {name} out, or -p autotune False"
    return data_leaves_unused(name, namespace)


def check_switched_on(injected, namespace, defaults=None):
    """Refuse a parameter papermill injected (``injected``: its names) that the run would not use, as the other
    parameters in ``namespace`` have it: one whose switch is False (``-p autotune_duration 60`` without ``-p autotune
    True`` ran in full and said only after the training that autotune was False), one of 02's settings the autotune
    search sets (:data:`SET_BY_AUTOTUNE`), or one of 01's that its data does not use (:data:`USED_BY_DATA`). A switch
    that is not a bool is left to check_flags, which names it. Not refused: a value of None, or the notebook's own
    default (``defaults``: :func:`literal_defaults` of its parameters cell) — a papermill ``-f params.yaml`` that lists
    every parameter asks for nothing the run leaves unused."""
    defaults = defaults or {}
    for name in injected:
        value = namespace.get(name)
        if value is None or (name in defaults and type(value) is type(defaults[name]) and value == defaults[name]):
            continue
        if isinstance(defaults.get(name), bool) and not isinstance(value, bool):
            continue  # (a yes/no parameter given as text, -p overwrite false: check_flags names it)
        unused = left_unused(name, namespace)
        if unused:
            when, remedy = unused
            raise FastTextError(f"{name} is {when} (it was given, and the run would not have used it): {remedy}")


def literal_defaults(source):
    """``{name: value}`` of a cell's top-level assignments of one name to a literal (``epochs = 5``); none for
    code that does not parse."""
    defaults = {}
    for node in _top_level_assignments(source):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                defaults[node.targets[0].id] = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, RecursionError):  # (not a literal: no default to compare)
                pass
    return defaults


def name_hints(unknown, known):
    """``'epoch' (did you mean 'epochs'?), 'bukcet' (did you mean 'bucket'?)``: each unknown name with the
    known one it was likely meant to be, where there is one (errors.did_you_mean)."""
    return ", ".join(f"{name!r}{did_you_mean(name, known)}" for name in unknown)


def check_parameters(namespace):
    """Refuse a parameter that papermill injected but the notebook does not have (call it with ``globals()``
    in the cell after the parameters cell).

    ``papermill nb.ipynb out.ipynb -p epoch 1`` (for ``epochs``) only warns "Passed unknown parameter"
    and runs the notebook with its defaults: minutes of work with the wrong settings. A running kernel
    cannot see papermill's metadata, but it keeps the code of every cell it ran, in order (IPython's
    ``In``): papermill's cell, which starts with ``# Parameters``, runs right after the parameters cell.
    The names it assigns must be among those that the cells run before it (the parameters cell) assign.
    Without that cell in the history (Jupyter, nbval, ``make demo``'s known names) there is nothing to check.

    It also makes the kernel show a :class:`FastTextError` as its one ``error: ...`` line
    (:func:`~fasttext_lib.notebook_errors.show_errors_as_lines`), from this cell on.
    """
    show_errors_as_lines()
    history = namespace.get("In")
    if not isinstance(history, list):
        return
    injected = [i for i, source in enumerate(history)
                if isinstance(source, str) and source.lstrip().split("\n", 1)[0].strip() == PAPERMILL_HEADER]
    if not injected:
        return
    at = injected[-1]
    declared = set()
    for source in history[:at]:
        if isinstance(source, str):
            declared.update(assigned_names(source))
    unknown = [name for name in assigned_names(history[at])
               if name not in declared and not name.startswith("PAPERMILL_")]  # --inject-paths' own two
    parameters_cell = history[at - 1] if at > 0 and isinstance(history[at - 1], str) else ""
    if unknown:
        listed = assigned_names(parameters_cell) or sorted(declared)
        raise FastTextError(f"this notebook has no parameter {name_hints(unknown, listed)} (papermill only warned, "
                            f"and the run would have used the defaults); its parameters: {', '.join(listed)}")
    check_switched_on(assigned_names(history[at]), namespace, literal_defaults(parameters_cell))
