"""optimize(), the passes' catalog and the cost report."""

import io
import json
import os
import tempfile
import warnings
import zipfile
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import torch

from . import _core
from ._errors import CompilerError, CompilerWarning, Diagnostic

ModelLike = Union[torch.nn.Module, torch.jit.ScriptModule, str, os.PathLike,
                  bytes]
PassList = Union[Sequence[Union[str, Tuple[str, Mapping[str, Any]]]],
                 Mapping[str, Mapping[str, Any]]]

_LOWER_TO = ("aten", "runtime", "none")


# --- The site report -------------------------------------------------------

@dataclass
class SkippedSites:
    """Sites a pass left unchanged for one reason."""

    reason: str
    sites: List[str]
    """Their locations, as MLIR prints them."""


@dataclass
class SiteCounts:
    """One report of a pass: the numbers of one of composer-opt's remarks
    (``composer-blurpool: 2 sites blurred, 1 skipped``)."""

    what: str
    """What ``changed`` counts: ``"sites blurred"``."""
    changed: int
    skipped: List[SkippedSites]
    in_branches: int
    """Sites inside a branch of one of the model's own ifs."""

    @property
    def num_skipped(self) -> int:
        return sum(len(s.sites) for s in self.skipped)


@dataclass
class PassReport:
    """What one run of a pass reported."""

    name: str
    """The pass's argument: ``"composer-blurpool"``."""
    failed: bool
    reports: List[SiteCounts]

    @property
    def changed(self) -> int:
        """Sites changed, over all its reports."""
        return sum(r.changed for r in self.reports)

    @property
    def skipped(self) -> int:
        """Sites skipped, over all its reports."""
        return sum(r.num_skipped for r in self.reports)


@dataclass
class SiteReport:
    """What every pass of an optimize() call reported, in the order they
    ran, and the compiler's warnings."""

    passes: List[PassReport] = field(default_factory=list)
    warnings: List[Diagnostic] = field(default_factory=list)

    def __getitem__(self, name: str) -> PassReport:
        """The last run of the pass ``name``."""
        for run in reversed(self.passes):
            if run.name == name:
                return run
        raise KeyError(f"no pass {name!r} ran; ran: "
                       f"{', '.join(r.name for r in self.passes) or 'none'}")

    def __str__(self) -> str:
        lines = []
        for run in self.passes:
            for counts in run.reports:
                lines.append(f"{run.name}: {counts.changed} {counts.what}, "
                             f"{counts.num_skipped} skipped")
                lines += [f"  {len(s.sites)} skipped: {s.reason}"
                          for s in counts.skipped]
        return "\n".join(lines)

    @classmethod
    def _from_records(cls, runs: list, diagnostics: list) -> "SiteReport":
        return cls(
            [PassReport(run["pass"], run["failed"], [
                SiteCounts(r["what"], r["changed"],
                           [SkippedSites(s["reason"], list(s["sites"]))
                            for s in r["skipped"]], r["in_branches"])
                for r in run["reports"]]) for run in runs],
            [Diagnostic._from_record(d) for d in diagnostics])


# --- The catalog -----------------------------------------------------------

_PYTHON_TYPES = {"bool": bool, "int64_t": int, "int": int, "unsigned": int,
                 "uint64_t": int, "double": float, "float": float,
                 "std::string": str}


def _parse_value(text: str, kind: type) -> Any:
    if kind is bool:
        return text == "true"
    if kind in (int, float):
        return kind(text)
    return text


@dataclass
class OptionInfo:
    """One option of a pass."""

    name: str
    """As a pipeline spells it: ``"min-channels"``; optimize() and the
    functional API also take it as ``min_channels``."""
    type: type
    """bool, int, float or str (an enumeration's names are str)."""
    is_list: bool
    default: Any
    """The default, typed; None for a list."""
    choices: List[str]
    """The names an enumeration option accepts; empty otherwise."""
    description: str


@dataclass
class PassInfo:
    """A pass or a named pipeline, as the compiler's registry describes it."""

    name: str
    kind: str
    """``"pass"`` or ``"pipeline"``."""
    summary: str
    description: str = ""
    is_method: bool = False
    """A speedup method (as opposed to infrastructure: type refinement,
    lowering)."""
    options: Dict[str, OptionInfo] = field(default_factory=dict)
    pipeline: str = ""
    """For a pipeline, the passes it runs with their options, as a textual
    pipeline that optimize(pipeline=...) takes."""
    keeps_accuracy: bool = False
    """A method that by design leaves what training reaches as it is
    (channels-last, mixed precision, activation checkpointing): the ones
    composer-opt --emit-pipeline chooses from on measured speed."""


_CATALOG: Optional[Dict[str, PassInfo]] = None


def passes() -> Dict[str, PassInfo]:
    """Every composer pass and named pipeline, by name, with its options,
    their defaults and a summary, from the compiler's registry (the same
    data composer-opt --help prints)."""
    return dict(_catalog())


def _catalog() -> Dict[str, PassInfo]:
    """passes(), built once; not to be changed."""
    global _CATALOG
    if _CATALOG is None:
        catalog = {}
        for record in _core.passes():
            options = {}
            for option in record["options"]:
                kind = _PYTHON_TYPES.get(option["type"], str)
                options[option["name"]] = OptionInfo(
                    option["name"], kind, option["is_list"],
                    None if option["is_list"] else
                    _parse_value(option["default"], kind),
                    list(option["choices"]), option["description"])
            catalog[record["name"]] = PassInfo(
                record["name"], "pass", record["summary"],
                record["description"], record["is_method"], options,
                keeps_accuracy=record["keeps_accuracy"])
        for record in _core.pipelines():
            catalog[record["name"]] = PassInfo(
                record["name"], "pipeline", record["summary"],
                pipeline=record["pipeline"])
        _CATALOG = catalog
    return _CATALOG


# --- optimize() ------------------------------------------------------------

def _option_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(_option_text(v) for v in value)
    return str(value)


def _pass_text(name: str, options: Mapping[str, Any]) -> str:
    info = _catalog().get(name)
    if info is None or info.kind != "pass":
        known = sorted(n for n, p in _catalog().items() if p.kind == "pass")
        raise ValueError(f"unknown pass {name!r}; composer's passes: "
                         f"{', '.join(known)} (other registered passes, "
                         f"MLIR's canonicalize for one, go in pipeline=)")
    parts = []
    for key, value in options.items():
        option = key.replace("_", "-")
        if option not in info.options:
            raise ValueError(
                f"{name} has no option {key!r}; its options: "
                f"{', '.join(info.options) or 'none'}")
        if value is None:
            continue
        parts.append(f"{option}={_option_text(value)}")
    return f"{name}{{{' '.join(parts)}}}" if parts else name


def _passes_text(pass_list: PassList) -> List[str]:
    if isinstance(pass_list, str):
        raise TypeError("passes= takes a list of names or (name, options) "
                        "pairs, or a dict; give pipeline text as pipeline=")
    items = (pass_list.items() if isinstance(pass_list, Mapping)
             else pass_list)
    texts = []
    for item in items:
        if isinstance(item, str):
            texts.append(_pass_text(item, {}))
        else:
            name, options = item
            texts.append(_pass_text(name, options or {}))
    return texts


def _input_specs(input_spec: Any) -> List[str]:
    """'1x3x32x32xf32' texts from a spec, a shape, a tensor, or a list of
    them (one per tensor argument of forward)."""
    dtypes = {torch.float32: "f32", torch.float64: "f64",
              torch.float16: "f16", torch.bfloat16: "bf16",
              torch.int64: "i64", torch.int32: "i32", torch.bool: "i1"}

    def one(spec: Any) -> str:
        if isinstance(spec, str):
            return spec
        if isinstance(spec, torch.Tensor):
            if spec.dtype not in dtypes:
                raise ValueError(f"input_spec: no spec for dtype {spec.dtype}")
            return "x".join([*map(str, spec.shape), dtypes[spec.dtype]])
        if isinstance(spec, torch.Size) or (
                isinstance(spec, tuple) and all(isinstance(d, int)
                                                for d in spec)):
            return "x".join([*map(str, spec), "f32"])
        raise TypeError(f"input_spec: expected a spec like '1x3x32x32xf32', "
                        f"a shape or a tensor, not {type(spec).__name__}")

    if input_spec is None:
        return []
    if isinstance(input_spec, (str, torch.Tensor, torch.Size)) or (
            isinstance(input_spec, tuple) and input_spec
            and all(isinstance(d, int) for d in input_spec)):
        return [one(input_spec)]
    return [one(spec) for spec in input_spec]


def _pipeline_text(pipeline: Optional[str], pass_list: PassList,
                   input_spec: Any) -> str:
    parts = []
    specs = _input_specs(input_spec)
    if specs:
        parts.append(f"composer-refine-types{{input-specs={','.join(specs)}}}")
    if pipeline:
        text = pipeline.strip()
        if text.startswith("builtin.module(") and text.endswith(")"):
            text = text[len("builtin.module("):-1]
        parts.append(text)
    parts += _passes_text(pass_list)
    return f"builtin.module({','.join(parts)})" if parts else ""


def _script(model: torch.nn.Module,
            example_inputs: Any) -> torch.jit.ScriptModule:
    if example_inputs is not None:
        inputs = (example_inputs if isinstance(example_inputs, tuple)
                  else (example_inputs,))
        return torch.jit.trace(model, inputs)
    try:
        return torch.jit.script(model)
    except Exception as error:  # TorchScript raises several types.
        lines = str(error).strip().splitlines()
        first = lines[0] if lines else type(error).__name__
        raise CompilerError(
            f"cannot script {type(model).__name__} with torch.jit.script: "
            f"{first}; pass example_inputs=(...) to trace it with "
            f"torch.jit.trace instead") from error


def _load_bytes(data: bytes) -> torch.jit.ScriptModule:
    # LibTorch reads zip records without checking their CRC, and a corrupt
    # record can abort the process: check them first, as composer-opt does.
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            bad = archive.testzip()
    except zipfile.BadZipFile as error:
        raise CompilerError(f"<bytes>: cannot load TorchScript model: {error} "
                            f"(expected an archive written by "
                            f"torch.jit.save)") from None
    if bad is not None:
        raise CompilerError(f"<bytes>: cannot load TorchScript model: record "
                            f"'{bad}' is corrupt (its CRC-32 does not match)")
    return torch.jit.load(io.BytesIO(data))


def optimize(model: ModelLike, pipeline: Optional[str] = None,
             passes: PassList = (), input_spec: Any = None,
             lower_to: str = "aten", *, example_inputs: Any = None,
             operator_libraries: Sequence[str] = (),
             max_ops: Optional[int] = None) -> torch.jit.ScriptModule:
    """Applies compiler passes to a model and returns the new ScriptModule.

    Args:
        model: an ``nn.Module`` (scripted with ``torch.jit.script``, or
            traced with ``example_inputs``), a ``torch.jit.ScriptModule``,
            the path of a TorchScript archive, or its bytes. A module never
            goes through a file.
        pipeline: pipeline text as composer-opt's ``--pass-pipeline`` takes
            it, with or without ``builtin.module(...)``, or a named pipeline
            (``"composer-mild"``).
        passes: passes after ``pipeline``, by name with options: a list of
            names or ``(name, {option: value})`` pairs, or a dict. Options
            are spelled as in pipelines (``min-channels``) or as Python
            names (``min_channels``).
        input_spec: shapes of forward's tensor arguments, for passes that
            need them: ``"8x3x32x32xf32"``, a shape tuple (float32), a
            tensor, or a list of those; runs ``composer-refine-types`` first.
        lower_to: ``"aten"`` (the default: any PyTorch runs the result),
            ``"runtime"`` (fused ``composer::`` ops; call ``load_runtime()``
            first) or ``"none"``.

    Returns:
        A new ``torch.jit.ScriptModule``. Its parameters that no pass
        changed are the input's own tensors, shared, as module surgery keeps
        them. ``result.composer_report`` is the :class:`SiteReport`: per pass,
        the sites changed and skipped with their reasons.

    Raises:
        CompilerError: with the compiler's diagnostics and their locations.
    """
    if lower_to not in _LOWER_TO:
        raise ValueError(f"lower_to={lower_to!r}: expected one of "
                         f"{', '.join(map(repr, _LOWER_TO))}")
    text = _pipeline_text(pipeline, passes, input_spec)
    libraries = [os.fspath(p) for p in operator_libraries]
    limit = _core.default_max_ops if max_ops is None else max_ops
    if isinstance(model, (str, os.PathLike)):
        cpp, runs, diagnostics = _core.optimize_file(
            os.fspath(model), text, lower_to, libraries, limit)
    else:
        if isinstance(model, (bytes, bytearray, memoryview)):
            model = _load_bytes(bytes(model))
        elif not isinstance(model, torch.jit.ScriptModule):
            if not isinstance(model, torch.nn.Module):
                raise TypeError(f"expected an nn.Module, a ScriptModule, a "
                                f"path or archive bytes, not "
                                f"{type(model).__name__}")
            model = _script(model, example_inputs)
        name = f"<{model.original_name}>"
        cpp, runs, diagnostics = _core.optimize_module(
            model, name, text, lower_to, libraries, limit)
    result = torch.jit._recursive.wrap_cpp_module(cpp)
    report = SiteReport._from_records(runs, diagnostics)
    for warning in report.warnings:
        warnings.warn(str(warning), CompilerWarning, stacklevel=2)
    result.composer_report = report
    return result


# --- report_costs() --------------------------------------------------------

def report_costs(model: ModelLike, input_spec: Any, *, warmup_steps: int = 3,
                 timed_steps: int = 5, lower_to: str = "aten",
                 peak_gflops: Optional[float] = None,
                 operator_libraries: Sequence[str] = ()) -> Dict[str, Any]:
    """What each method costs on ``model`` on this machine: composer-opt
    ``--report-costs=json`` as a dict (per variant: sites, parameters added,
    FLOPs, measured step time and its ratio to the model as given).

    ``model`` is a path, or a module (saved to a temporary archive, which
    the report's timing runs load as composer-opt's do). ``input_spec`` as
    for optimize().
    """
    specs = _input_specs(input_spec)
    if not specs:
        raise ValueError("report_costs needs input_spec: the shapes the "
                         "training steps are timed at")
    peak = "" if peak_gflops is None else str(peak_gflops)
    libraries = [os.fspath(p) for p in operator_libraries]
    if isinstance(model, (str, os.PathLike)):
        text = _core.report_costs(os.fspath(model), specs, libraries,
                                  warmup_steps, timed_steps, lower_to, peak)
        return json.loads(text)
    if isinstance(model, (bytes, bytearray, memoryview)):
        model = _load_bytes(bytes(model))
    elif not isinstance(model, torch.jit.ScriptModule):
        model = _script(model, None)
    with tempfile.TemporaryDirectory(prefix="composer-costs-") as folder:
        path = os.path.join(folder, "model.pt")
        torch.jit.save(model, path)
        text = _core.report_costs(path, specs, libraries, warmup_steps,
                                  timed_steps, lower_to, peak)
    return json.loads(text)
