"""Root pytest configuration, shared by tests/ and the nbval run over notebooks/."""


def pytest_collectstart(collector):
    # Progress bars (tqdm) go to stderr and carry timings; nbval compares everything else.
    if collector.fspath and collector.fspath.ext == ".ipynb":
        collector.skip_compare += ("stderr",)
