"""Timing and version lookups shared by the peer scripts (run by path, so this directory is on sys.path)."""
import statistics
import time


def median_ms(fn, repeat, warmup=2):
    """Median wall time of fn() in ms over `repeat` runs, after `warmup` untimed runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def tinygrad_version():
    """tinygrad's version; an unzipped wheel on PYTHONPATH (the GPU machine) has no installed metadata."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tinygrad")
    except PackageNotFoundError:
        import tinygrad

        return getattr(tinygrad, "__version__", "?")
