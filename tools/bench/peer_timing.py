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


def keep_freed_memory():
    """Makes glibc keep freed memory in the heap for reuse: no mmap for large blocks, no trimming.

    Our runtime reuses freed buffers (a caching allocator); PyTorch and numpy on the CPU free
    through malloc. By default glibc maps each large block afresh (below a threshold that grows
    with the largest block freed so far) and trims the heap, so a timed call pays a page fault for
    every 4 KiB of its outputs and temporaries, and how many depends on what ran earlier in the
    process: F.conv2d 32x32x28x28 took ~3500 faults a call in a process that ran only it, none
    after a 2048 matmul; ((a+b)*c).relu() over 16M floats 49000 faults a call. Returns what glibc
    answered ("kept"), or why not.
    """
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError) as e:  # not glibc
        return "malloc defaults (%s)" % e
    M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4  # glibc's malloc.h
    if mallopt(M_MMAP_MAX, 0) != 1 or mallopt(M_TRIM_THRESHOLD, 2**31 - 1) != 1:
        return "malloc defaults (mallopt refused)"
    return "kept"


def tinygrad_version():
    """tinygrad's version; an unzipped wheel on PYTHONPATH (the GPU machine) has no installed metadata."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tinygrad")
    except PackageNotFoundError:
        import tinygrad

        return getattr(tinygrad, "__version__", "?")
