"""Notebook 03's dollars: an epoch time measured here, priced on each SageMaker instance, saying what it rests on.

The time is measured on this machine, not on the instance. Applied as it is to every instance of its kind, it gave
a 2-vCPU ml.t3.medium the same epoch time as a 4-vCPU ml.m5.xlarge (so the t3 always looked ~4.6x cheaper), and a
2-GPU machine listed each GPU instance twice. Each row now says where its time comes from, and the CPU rows say
whether the instance has the CPUs it was measured with.
"""
import pandas as pd

from .config import check_choice
from .errors import FastTextError
from .process_limits import openmp_threads, usable_cpus


def measured_cpus():
    """The CPUs a measurement in this process trains on: OpenMP's threads (``OMP_NUM_THREADS``), at most the CPUs
    this process may run on."""
    cpus = usable_cpus()
    return min(cpus, openmp_threads(cpus))


def epoch_costs(prices, timings, cpus_here=None, epochs=10):
    """One row per instance of ``prices``: its hourly price, the epoch time of its kind measured here, the dollars
    per epoch and per ``epochs``-epoch run, and ``basis``: what that time is.

    ``prices``: indexed by instance, with ``kind`` (``cpu`` / ``gpu``), ``usd_per_hour`` and ``vcpus`` (the
    instance's; missing or empty for a GPU instance). ``timings``: indexed by device (``cpu``, ``gpu:0``, ...), with
    ``kind`` and ``epoch_s_estimate``. ``cpus_here``: the CPUs the measurement ran on (:func:`measured_cpus`).
    A GPU instance takes the first GPU measured (one GPU per instance type listed; a second measured GPU is the same
    kind of device). An instance of a kind not measured here (no GPU on this machine) is left out."""
    cpus_here = measured_cpus() if cpus_here is None else cpus_here
    missing = {"kind", "usd_per_hour", "vcpus"} - set(prices.columns)
    if missing:
        raise FastTextError(f"prices needs the column(s) {', '.join(sorted(missing))} (vcpus: the instance's vCPUs)")
    first_of_kind = timings.reset_index().drop_duplicates("kind").set_index("kind")
    rows = []
    for instance, price in prices.iterrows():
        if price["kind"] not in first_of_kind.index:
            continue
        measured = first_of_kind.loc[price["kind"]]
        rows.append({"instance": instance, "usd_per_hour": price["usd_per_hour"],
                     "epoch_s_estimate": measured["epoch_s_estimate"],
                     "usd_per_epoch": measured["epoch_s_estimate"] / 3600 * price["usd_per_hour"],
                     "basis": _basis(price, measured["device"], cpus_here)})
    table = pd.DataFrame(rows, columns=["instance", "usd_per_hour", "epoch_s_estimate", "usd_per_epoch", "basis"])
    table.insert(4, f"usd_per_{epochs}_epoch_run", epochs * table["usd_per_epoch"])
    return table.set_index("instance")


def _basis(price, device, cpus_here):
    """What an instance's epoch time rests on, in few words (a table cell)."""
    if price["kind"] != "cpu":
        return f"{device} here, same speed assumed"
    vcpus = price["vcpus"]
    if pd.isna(vcpus):
        return f"{cpus_here} CPUs here; vCPUs there not given"
    if int(vcpus) == cpus_here:
        return f"{cpus_here} CPUs here, as many there"
    return f"{cpus_here} CPUs here, {int(vcpus)} vCPUs there: likely {'faster' if int(vcpus) > cpus_here else 'slower'}"


# What notebook 03 times (its parameter timing_text): synthetic reviews of Yelp's length, or the prepared dataset's own
TIMING_TEXTS = ("yelp-shaped", "dataset")


def timing_files(timing_text, **outputs):
    """``{file name: output}`` of notebook 03's ``outputs`` (``timings=`` a table, ``throughput=`` a figure, ...) for
    Workspace.save_dataset_files: ``03_<name>_<timing_text>.csv`` (``.png`` for a figure). Both timings of a dataset
    are kept: named alike, a run on its own text and one on Yelp-shaped text replaced each other's files in its
    folder, and the timings left there no longer said which text the costs beside them rest on."""
    check_choice(timing_text, "timing_text", TIMING_TEXTS)
    return {f"03_{name}_{timing_text}.{'png' if hasattr(output, 'savefig') else 'csv'}": output
            for name, output in outputs.items()}
