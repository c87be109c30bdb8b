"""The figures the notebooks make: drawn, shown as a notebook shows a cell's value, and marked as the library's.

The figures :class:`~fasttext_lib.workspace.Workspace` saves carry :data:`FIGURE_MARK` in their PNG "Software" text
(:func:`png_software` reads it back): the program that drew them. It does not decide what is removed (a copy of a
plot carries it too): an earlier run's plot is removed by its record (written_record.py), only while unchanged.
"""
from .notebook_errors import _kernel_shell

# What the figures the library writes say in their PNG "Software" text, so that it knows its own.
FIGURE_MARK = "fasttext_lib"


def png_bytes(fig, dpi=100):
    """``fig`` as PNG bytes marked as the library's (:data:`FIGURE_MARK`): what the files a Workspace saves hold,
    written whole by the caller (storage.atomic_write), not by ``savefig`` to the path (a Stop part way left half an
    image)."""
    import io

    plot = io.BytesIO()
    fig.savefig(plot, format="png", dpi=dpi, metadata={"Software": FIGURE_MARK})
    return plot.getvalue()


def plot_trials(fig, tuned):
    """The autotune search's validation accuracy by trial, the chosen trial starred (``tuned``: an
    :class:`~fasttext_lib.autotune.AutotuneResult`)."""
    ax = fig.subplots()
    ax.plot(tuned.trials.trial, tuned.trials.val_accuracy, marker="o")
    ax.plot(tuned.best_trial.trial, tuned.best_trial.val_accuracy, marker="*", markersize=14, color="tab:red",
            label="chosen")
    ax.set_xlabel("trial")
    whole_number_ticks(ax.xaxis)
    ax.set_ylabel("validation accuracy")
    ax.legend()
    fig.tight_layout()


# One colour per split in both panels of the history: with no train accuracy (an autotuned model's history) the
# accuracy panel's first line, the held-out split's, took the colour cycle's first colour, train's in the loss panel.
SPLIT_COLOURS = {"train": "tab:blue", "held_out": "tab:orange"}


def plot_history(fig, history, held_out, title):
    """Notebook 02's history (and the training job's history.png): accuracy beside cross-entropy per epoch, for train
    (its accuracy only where ``history`` has it; an autotuned model's has none) and the ``held_out`` split (``"test"``,
    or ``"validation"``: an autotuned trial's, the search's split, or a training job's validation channel; None: none
    was scored, a job without a test channel, and no held-out line is drawn), each split in one colour in both panels.
    ``history``: a :meth:`~fasttext_lib.train.TrainedModel.history_frame` of the same ``held_out``."""
    ax_acc, ax_loss = fig.subplots(1, 2)
    if "train_accuracy" in history:
        ax_acc.plot(history.index, history.train_accuracy, marker="o", label="train", color=SPLIT_COLOURS["train"])
    ax_loss.plot(history.index, history.train_loss, marker="o", label="train", color=SPLIT_COLOURS["train"])
    if held_out is not None:
        ax_acc.plot(history.index, history[f"{held_out}_accuracy"], marker="o", label=held_out,
                    color=SPLIT_COLOURS["held_out"])
        ax_loss.plot(history.index, history[f"{held_out}_loss"], marker="o", label=held_out,
                     color=SPLIT_COLOURS["held_out"])
    ax_acc.set_ylabel("accuracy")
    ax_loss.set_ylabel("cross-entropy")
    for ax in (ax_acc, ax_loss):
        ax.set_xlabel("epoch")
        whole_number_ticks(ax.xaxis)  # whole epochs only (a one-epoch run's too)
        if ax.lines:  # (an empty panel's legend is a warning: no accuracy recorded at all)
            ax.legend()
    fig.suptitle(title)
    fig.tight_layout()


def settings_title(config):
    """The settings a history plot's title names, of a trained model's (resolved) ``config``: ``sgd lr=1.6575, batch 16,
    2-grams, emsize 100`` (lr as the stderr line says it). lr and batch size were said only on stderr ("settings from
    the data"), which a committed notebook does not keep: its plot showed a run's optimizer, n-grams and emsize, not
    the two that set its steps."""
    return (f"{config.optimizer} lr={config.lr:g}, batch {config.batch_size}, {config.ngrams}-grams, "
            f"emsize {config.emsize}")


def whole_number_ticks(axis):
    """Ticks at whole numbers only on ``axis`` (epochs, trials), also where one is in view: matplotlib's
    ``MaxNLocator(integer=True)`` keeps to whole numbers only where two are, so a one-epoch run's history (and a
    one-trial search's plot) was ticked 0.945, 0.96, ... 1.05."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))


def show(thing):
    """``thing`` shown as a notebook shows a cell's value (a table as a table, a figure as its image); outside
    IPython, printed (a figure: nothing, it is saved)."""
    if _kernel_shell() is not None:
        from IPython.display import display

        display(thing)
    elif not hasattr(thing, "savefig"):
        print(thing)


def png_software(path):
    """The "Software" text of the PNG file ``path``, or ``None`` (no such text, or no PNG image). Pillow,
    which matplotlib requires, reads the text chunks matplotlib writes before the image data."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            return image.info.get("Software") if image.format == "PNG" else None
    except (OSError, ValueError, Image.DecompressionBombError):  # OSError: no image Pillow knows
        return None
