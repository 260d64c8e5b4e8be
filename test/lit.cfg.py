# -*- Python -*-
import os
import shutil

import lit.formats
from lit.llvm import llvm_config

config.name = "composer"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs", "e2e_lib", "lib"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.composer_obj_root, "test")

# Debian's Python with torch, with OpenBLAS.
config.substitutions.append(("%python", config.python_with_torch))
config.substitutions.append(("%e2e", os.path.join(config.test_source_root, "e2e_lib")))
config.substitutions.append(("%composer_build", config.composer_obj_root))
config.substitutions.append(("%composer_src", config.composer_src_root))
config.substitutions.append(("%cmake", config.cmake_command))
config.substitutions.append(("%torch_dir", config.torch_dir))
# One thread a test: lit runs a test per core, and two OpenMP pools spinning
# on one core made two e2e checks side by side 6x slower than one thread
# each. `lit --param test_threads=N` gives each test N.
config.environment["OMP_NUM_THREADS"] = lit_config.params.get("test_threads", "1")
config.environment["PYTHONDONTWRITEBYTECODE"] = "1"
# e2e_lib/models.py exports each test model once per run, into a directory
# of this lit process's own: a run never sees another's exports, and runs
# side by side do not share one. Those of finished runs are removed.
model_caches = os.path.join(config.test_exec_root, "model-cache")
os.makedirs(model_caches, exist_ok=True)
for entry in os.listdir(model_caches):
    path = os.path.join(model_caches, entry)
    try:
        os.kill(int(entry), 0)
        continue  # a live run's
    except PermissionError:
        continue  # another user's live run's
    except (ValueError, ProcessLookupError):
        pass
    if os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        os.remove(path)
config.environment["COMPOSER_MODEL_CACHE"] = os.path.join(
    model_caches, str(os.getpid()))

llvm_config.with_system_environment(["HOME", "TMPDIR"])
llvm_config.use_default_substitutions()
tool_dirs = [config.composer_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(
    ["composer-opt", "composer-train", "composer-data"], tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
