"""Weights in: a load_path that is not one of the engine's checkpoints, read
with torch.load and mapped onto the model by name."""

import os
import sys
import warnings
import zipfile
from typing import Any, Dict, List, Sequence, Tuple

import torch


def is_engine_checkpoint(path: str) -> bool:
    """A checkpoint composer-train or the Trainer wrote: a folder of sharded
    parts, or a TorchScript-format archive (it holds code/ or constants.pkl;
    torch.save writes data.pkl alone)."""
    if os.path.isdir(path):
        return True
    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
    return any("/code/" in name or name.endswith("/constants.pkl")
               for name in names)


def _tensors_only(candidate: Any) -> bool:
    return (isinstance(candidate, dict) and candidate and
            all(isinstance(k, str) and isinstance(v, torch.Tensor)
                for k, v in candidate.items()))


def find_state_dict(loaded: Any, path: str) -> Tuple[Dict[str, Any], str]:
    """The state_dict inside what torch.load gave, and where it was."""
    candidates = [("", loaded)]
    if isinstance(loaded, dict):
        state = loaded.get("state")
        if isinstance(state, dict) and "model" in state:
            candidates.insert(0, ("state.model", state["model"]))
        for key in ("state_dict", "model", "model_state_dict"):
            if key in loaded:
                candidates.insert(1, (key, loaded[key]))
    for where, candidate in candidates:
        if _tensors_only(candidate):
            return candidate, where
    raise ValueError(f"load_path '{path}': no state_dict found (a dict of "
                     f"tensors by name, at the top or under 'state_dict', "
                     f"'model' or Composer's 'state.model')")


# What wrappers put before a module's names: Composer's ComposerClassifier
# ("module."), HuggingFaceModel ("model."), torch.compile ("_orig_mod.").
WRAPPER_PREFIXES = ("model.", "module.", "model.module.", "_orig_mod.")


def _strip_prefix(names: Sequence[str], model_names: set) -> str:
    """The prefix (a wrapper's 'model.' or 'module.') that makes the
    file's names the model's, or ''."""
    if any(name in model_names for name in names):
        return ""
    for prefix in WRAPPER_PREFIXES:
        if any(name.startswith(prefix) and name[len(prefix):] in model_names
               for name in names):
            return prefix
    return ""


def load_state_dict(model: torch.nn.Module, path: str, strict: bool,
                    ignore_keys: Sequence[str]) -> Dict[str, List[str]]:
    """Loads the state_dict saved at `path` into `model` by name. Returns
    the names loaded, missing (the model's, not in the file), unexpected
    (the file's, not in the model) and ignored. Raises ValueError when
    strict and any is missing or unexpected, or a shape differs."""
    import fnmatch
    loaded = torch.load(path, map_location="cpu")
    state, where = find_state_dict(loaded, path)
    own = model.state_dict()
    prefix = _strip_prefix(list(state), set(own))
    renamed = {name[len(prefix):] if prefix and name.startswith(prefix)
               else name: value for name, value in state.items()}
    ignored = sorted(n for n in renamed
                     if any(fnmatch.fnmatchcase(n, p) for p in ignore_keys))
    for name in ignored:
        del renamed[name]
    report = {
        "loaded": sorted(n for n in renamed if n in own),
        "missing": sorted(n for n in own if n not in renamed and not any(
            fnmatch.fnmatchcase(n, p) for p in ignore_keys)),
        "unexpected": sorted(n for n in renamed if n not in own),
        "ignored": ignored,
    }
    shapes = [f"{n}: {tuple(renamed[n].shape)} in the file, "
              f"{tuple(own[n].shape)} in the model"
              for n in report["loaded"] if renamed[n].shape != own[n].shape]
    if shapes:
        raise ValueError(f"load_path '{path}': shapes differ: "
                         + "; ".join(shapes))
    if strict and (report["missing"] or report["unexpected"]):
        raise ValueError(
            f"load_path '{path}': the state_dict does not match the model "
            f"(load_strict_model_weights=True): missing "
            f"{report['missing'][:8]}, unexpected {report['unexpected'][:8]}")
    with torch.no_grad():
        for name in report["loaded"]:
            own[name].copy_(renamed[name])
    found = f"under '{where}'" if where else "at the top"
    if prefix:
        found += f", names prefixed '{prefix}'"
    print(f"composer_opt: load_path '{path}': a state_dict ({found}): "
          f"{len(report['loaded'])} tensors loaded", file=sys.stderr)
    for kind in ("missing", "unexpected", "ignored"):
        if report[kind]:
            warnings.warn(f"load_path '{path}': {len(report[kind])} {kind}: "
                          f"{', '.join(report[kind][:8])}"
                          + (" ..." if len(report[kind]) > 8 else ""))
    return report
