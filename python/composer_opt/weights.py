"""Converts a torch.save'd state_dict or a Composer checkpoint into a
composer-train checkpoint of weights, which composer-train (C++, no
Python pickles) loads with ``load_weights_only: true``.

    python3 -m composer_opt.weights IN.pt OUT.ckpt [--strip-prefix model.]

The state_dict is found at the top of IN, under ``state_dict`` or
``model``, or at Composer's ``state.model``. A prefix that every name has
and a model does not (Composer's ``module.``, ``model.``) is dropped with
``--strip-prefix``; without it, a wrapper's prefix (``model.``,
``module.``, ``_orig_mod.``) is dropped when every name has it.
"""

import argparse
import os
import sys
from typing import Dict, Optional

import torch

from ._weights import WRAPPER_PREFIXES, find_state_dict

_FORMAT = "composer-train-checkpoint"
_VERSION = 1


def convert(source: str, destination: str,
            strip_prefix: Optional[str] = None) -> Dict[str, int]:
    """Writes the state_dict in `source` as a composer-train weights
    checkpoint at `destination` (atomically). Returns {"tensors": N}."""
    state, where = find_state_dict(torch.load(source, map_location="cpu"),
                                   source)
    names = list(state)
    if strip_prefix is None:
        strip_prefix = next((p for p in WRAPPER_PREFIXES
                             if all(n.startswith(p) for n in names)), "")
    elif not all(n.startswith(strip_prefix) for n in names):
        raise ValueError(f"{source}: not every name starts with "
                         f"{strip_prefix!r}")
    model = {n[len(strip_prefix):]: t.detach().contiguous()
             for n, t in state.items()}
    # Plain dicts of tensors, strings and numbers: what LibTorch's
    # unpickler reads.
    checkpoint = {"format": _FORMAT, "version": _VERSION,
                  "weights_only": True, "model": model}
    temporary = destination + ".tmp"
    try:
        torch.save(checkpoint, temporary)
        os.replace(temporary, destination)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
    found = f"under '{where}'" if where else "at the top"
    print(f"{source}: a state_dict {found}, {len(model)} tensors"
          + (f", prefix '{strip_prefix}' dropped" if strip_prefix else "")
          + f": wrote {destination}", file=sys.stderr)
    return {"tensors": len(model)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m composer_opt.weights",
        description=__doc__.split("\n\n")[0])
    parser.add_argument("source")
    parser.add_argument("destination")
    parser.add_argument("--strip-prefix", default=None)
    args = parser.parse_args(argv)
    try:
        convert(args.source, args.destination, args.strip_prefix)
    except (OSError, ValueError, RuntimeError) as error:
        print(f"composer_opt.weights: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
