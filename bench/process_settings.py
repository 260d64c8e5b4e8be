"""composer-train's process settings, for benchmarks that compare against it
in Python (runtime/ProcessSettings.cpp)."""
import ctypes


def retain_freed_host_memory():
    """Keeps freed host memory mapped, as composer-train does at start, so
    fresh allocations do not page-fault on every step."""
    libc = ctypes.CDLL("libc.so.6")
    M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3
    libc.mallopt(M_MMAP_THRESHOLD, 32 << 20)
    libc.mallopt(M_TRIM_THRESHOLD, 1 << 30)
    libc.mallopt(M_TOP_PAD, 64 << 20)
