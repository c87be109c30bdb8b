"""The table's initial values: a pure function of (seed, row), native and numpy bit-identical."""
import os

import mxnet as mx
import numpy as np
import pytest

from fasttext_lib import native_features as nf
from fasttext_lib.init_rows import fill_table, initial_rows
from fasttext_lib.model import FastTextClassifier
from fasttext_lib.table_memory import cpu_view


def test_native_and_numpy_give_the_same_bits(monkeypatch):
    rows = np.array([0, 1, 7, 123456, 1999999, 2**31 + 5, 5, 5])
    for seed in (0, 42, -1, 2**40 + 3):
        for dim in (1, 16, 100, 301):
            native = initial_rows(seed, rows, dim)
            with monkeypatch.context() as m:
                m.setenv(nf.ENV_SWITCH, "0")
                reference = initial_rows(seed, rows, dim)
            assert native.tobytes() == reference.tobytes()
            assert np.abs(native).max() <= np.float32(1 / dim) and native.min() < 0 < native.max()
            np.testing.assert_array_equal(native[-1], native[-2])  # a row is a function of its number


def test_uniform_and_seeded():
    values = initial_rows(7, np.arange(5000), 100)
    assert abs(values.mean()) < 1e-4 and abs(values.std() - 0.01 / np.sqrt(3)) < 1e-4
    assert not np.array_equal(values, initial_rows(8, np.arange(5000), 100))
    assert len(np.unique(values)) > 0.98 * values.size  # 24 random bits per value, as float32 allows


def test_fill_table_equals_rows_one_by_one_and_the_model_owns_that_memory():
    model = FastTextClassifier(70001, 20, 3)
    model.initialize_like_fasttext([mx.cpu()], seed=5)
    table = model.embedding.weight.data()
    expected = initial_rows(5, np.arange(70001), 20)
    np.testing.assert_array_equal(table.asnumpy(), expected)
    assert table.context == mx.cpu() and model.embedding.weight.list_ctx() == [mx.cpu()]
    # no second copy of the table: the parameter holds the very array that was filled
    again = fill_table(5, np.empty((70001, 20), np.float32))
    np.testing.assert_array_equal(cpu_view(table), again)
    assert model.output.weight.data().shape == (3, 20)


def test_save_and_load_parameters_keep_gluons_file_and_errors(tmp_path):
    import pytest

    model = FastTextClassifier(5000, 8, 3)
    model.initialize_like_fasttext([mx.cpu()], seed=1)
    ours, gluons = str(tmp_path / "ours.params"), str(tmp_path / "gluon.params")
    model.save_parameters(ours)
    mx.gluon.HybridBlock.save_parameters(model, gluons)
    assert open(ours, "rb").read() == open(gluons, "rb").read()
    loaded = FastTextClassifier(5000, 8, 3)
    loaded.load_parameters(ours, ctx=mx.cpu())
    for name, param in model._collect_params_with_prefix().items():
        np.testing.assert_array_equal(loaded._collect_params_with_prefix()[name].data().asnumpy(), param.data().asnumpy())
    with pytest.raises(AssertionError):  # Gluon's own check of a shape that does not match
        FastTextClassifier(4999, 8, 3).load_parameters(ours, ctx=mx.cpu())


def _thp_mode():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return f.read().split("[")[1].split("]")[0]  # "always [madvise] never" -> "madvise"
    except (OSError, IndexError):
        return None


def _anon_huge_kb(address):
    """AnonHugePages of the mapping holding ``address`` (/proc/self/smaps)."""
    inside = False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                start, end = (int(x, 16) for x in head.split("-"))
                inside = start <= address < end
            elif inside and head == "AnonHugePages:":
                return int(line.split()[1])
    raise AssertionError("no mapping holds the table")


HUGE_PAGES_CHILD = r"""
import sys
import fasttext_lib  # before mxnet (NumPy >= 1.24: fasttext_lib/__init__.py)
import mxnet as mx
import numpy as np
sys.path.insert(0, "tests")
from test_init_rows import _anon_huge_kb
from fasttext_lib.init_rows import initial_rows
from fasttext_lib.model import FastTextClassifier
from fasttext_lib.table_memory import cpu_view
model = FastTextClassifier(60000, 100, 2)  # 24 MB: several whole 2 MB pages
model.initialize_like_fasttext([mx.cpu()], seed=3, huge_pages=sys.argv[1] == "1")
table = cpu_view(model.embedding.weight.data())
assert (table[:5] == initial_rows(3, np.arange(5), 100)).all()  # the same values either way
# the advice covers the whole 2 MB pages inside the table: a mapping of its own from there
print(_anon_huge_kb(-(-table.ctypes.data // (2 << 20)) * (2 << 20)))
"""


@pytest.mark.parametrize("advised", [True, False])
def test_the_table_is_backed_by_huge_pages_where_linux_offers_them(advised):
    """The training table is scattered-row reads and writes: with 4 KB pages nearly every row is a
    TLB miss (table_memory.advise_huge_pages). MXNet's allocator does not ask for huge pages; the model does,
    before the first write. Under the kernel's default ``madvise`` policy, without that call the
    table gets none. A child process each: MXNet's memory pool hands a freed table's pages (huge or
    not) to the next table of its size."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", HUGE_PAGES_CHILD, "1" if advised else "0"], capture_output=True,
                         text=True, check=True, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    huge_kb = int(out.stdout.split()[-1])
    mode = _thp_mode()
    if mode == "madvise":
        assert (huge_kb >= 4096) == advised, f"THP {mode}, advised {advised}: the table got {huge_kb} kB of huge pages"
    elif mode == "always":
        assert huge_kb >= 4096
    else:  # never, or no THP in this kernel: the advice is harmless and nothing changes
        assert huge_kb == 0


@pytest.mark.parametrize("min_reads, advised", [(0, True), (10**12, False)])
def test_train_asks_for_huge_pages_only_when_the_work_pays_for_them(monkeypatch, min_reads, advised):
    """train.HUGE_PAGES_MIN_READS: faulting huge pages in can cost more than a short run saves with
    them (a VM whose host backs memory lazily), so train() asks for them by the entries it will read."""
    from fasttext_lib import model as model_module
    from fasttext_lib import train as train_module
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.synthetic import generate_reviews

    asked = []
    # (patched where initialize_like_fasttext looks it up: model.py imports it from table_memory.py)
    monkeypatch.setattr(model_module, "advise_huge_pages", lambda view: asked.append(view.shape))
    monkeypatch.setattr(train_module, "HUGE_PAGES_MIN_READS", min_reads)
    data = generate_reviews(200, seed=1)
    cfg = TrainConfig(epochs=2, batch_size=64, ngrams=2, buckets=5000, progress=False, seed=2)
    trained = train_module.train(data, None, cfg)
    table_shape = trained.model.embedding.weight.shape
    assert asked == ([table_shape] if advised else [])
    featurizer_rows = trained.featurizer.num_rows
    assert table_shape == (featurizer_rows, cfg.emsize)


def test_the_work_estimate_counts_entries_times_epochs():
    from fasttext_lib.train import entries_per_epoch

    class Encoded:  # features.Bags: its entries exactly
        nnz = 7

    class Tokens:  # features.TokenBags: tokens x n-gram orders
        lengths = np.array([3, 4])

    assert entries_per_epoch(Encoded(), 2) == 7 and entries_per_epoch(Tokens(), 2) == 14
