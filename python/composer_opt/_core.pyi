"""Types of composer_opt's native part. Its records are plain dicts; the
package's Python modules wrap them (SiteReport, PassInfo, Diagnostic)."""

from typing import Any, Dict, List, Tuple

import torch

Record = Dict[str, Any]

default_max_ops: int

def optimize_module(module: torch.jit.ScriptModule, name: str, pipeline: str,
                    lower_to: str, operator_libraries: List[str],
                    max_ops: int) -> Tuple[torch._C.ScriptModule, List[Record],
                                           List[Record]]:
    """Imports `module`, runs `pipeline` (textual, anchored on
    builtin.module; empty for none) and exports the result lowered as
    `lower_to` says: (module, site reports, warnings). Raises
    composer_opt.CompilerError."""

def optimize_file(path: str, pipeline: str, lower_to: str,
                  operator_libraries: List[str],
                  max_ops: int) -> Tuple[torch._C.ScriptModule, List[Record],
                                         List[Record]]:
    """As optimize_module, on the archive or .mlir file at `path`."""

def passes() -> List[Record]:
    """Every composer pass: name, summary, description, is_method,
    keeps_accuracy, options
    (name, type, is_list, default, choices, description)."""

def pipelines() -> List[Record]:
    """Every named pipeline: name, summary, pipeline (its textual form)."""

def report_costs(path: str, input_specs: List[str],
                 operator_libraries: List[str], warmup_steps: int,
                 timed_steps: int, lower_to: str, peak_gflops: str) -> str:
    """composer-opt --report-costs=json on the archive at `path`."""

def library_directory() -> str:
    """The directory of the compiler's libraries."""
