"""Where the package's native libraries and tools are, and loading the
training runtime into torch."""

import os
from typing import Optional

import torch

from . import _core

_RUNTIME_LIBRARY = "libComposerRuntime.so"
_loaded_runtime: Optional[str] = None


def library_directory() -> str:
    """The directory of the compiler's libraries (the build tree's lib/ or
    the install prefix's lib/); libComposerRuntime is there too."""
    # The loader names a library by the run path it was found through
    # ($ORIGIN/../../..): resolve it before taking its parent.
    return os.path.realpath(_core.library_directory())


def tool_path(name: str) -> str:
    """The path of one of the project's tools (``composer-train``), in the
    bin/ beside library_directory()."""
    path = os.path.join(os.path.dirname(library_directory()), "bin", name)
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(f"{name} is not at {path}: build or install "
                                f"composer-opt with the runtime")
    return path


def load_runtime() -> str:
    """Loads libComposerRuntime into the running torch, as
    ``torch.ops.load_library`` does, so that models optimized with
    ``lower_to="runtime"`` run with its fused ``composer::`` ops. Loading it
    again does nothing. Returns the library's path."""
    global _loaded_runtime
    if _loaded_runtime is None:
        path = os.environ.get("COMPOSER_RUNTIME_LIBRARY") or os.path.join(
            library_directory(), _RUNTIME_LIBRARY)
        if not os.path.exists(path):
            raise FileNotFoundError(
                f"the composer runtime is not at {path}: build or install "
                f"composer-opt with COMPOSER_BUILD_RUNTIME=ON")
        torch.ops.load_library(path)
        _loaded_runtime = path
    return _loaded_runtime
