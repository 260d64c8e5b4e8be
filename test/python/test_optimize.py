"""composer_opt.optimize, the functional API and the catalog, each checked
against what composer-opt does with the same passes."""

import io
import os
import re
import subprocess
import sys

import pytest
import torch

import composer_opt
from composer_opt import functional as F

from conftest import SmallCNN, small_gpt


def tool_optimize(tools, model, pipeline, tmp_path, name="tool"):
    """composer-opt on `model` saved to a file; the loaded result and the
    tool's remarks."""
    source = tmp_path / f"{name}-in.pt"
    output = tmp_path / f"{name}-out.pt"
    torch.jit.save(model, str(source))
    command = [os.path.join(tools, "composer-opt"), str(source), "-o",
               str(output)]
    if pipeline:
        command.append(f"--pass-pipeline=builtin.module({pipeline})")
    run = subprocess.run(command, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return torch.jit.load(str(output)), run.stderr


def assert_same_model(ours, theirs, example):
    """Same code as written, same tensors' names and shapes, and the same
    outputs once the tool's tensors (new ones are initialized at random) are
    loaded."""
    assert written(ours).code == theirs.code
    ours_state, theirs_state = ours.state_dict(), theirs.state_dict()
    assert list(ours_state) == list(theirs_state)
    for key, value in theirs_state.items():
        assert ours_state[key].shape == value.shape, key
    ours.load_state_dict(theirs_state)
    ours.eval()
    theirs.eval()
    with torch.no_grad():
        assert torch.equal(ours(example), theirs(example))


def written(module):
    """`module` as torch.jit.save writes it (saving pools its constants)."""
    buffer = io.BytesIO()
    torch.jit.save(module, buffer)
    buffer.seek(0)
    return torch.jit.load(buffer)


def image_batch():
    torch.manual_seed(1)
    return torch.randn(4, 3, 16, 16)


def token_batch():
    torch.manual_seed(1)
    return torch.randint(0, 64, (2, 16))


CNN_CASES = [
    (F.apply_blurpool, dict(min_channels=8),
     "composer-blurpool{min-channels=8}"),
    (F.apply_squeeze_excite, dict(min_channels=16, latent_channels=8),
     "composer-squeeze-excite{latent-channels=8 min-channels=16}"),
    (F.apply_channels_last, {}, "composer-channels-last"),
    (F.apply_ghost_batchnorm, dict(ghost_batch_size=2),
     "composer-ghost-batchnorm{ghost-batch-size=2}"),
    (F.apply_stochastic_depth, dict(drop_rate=0.1),
     "composer-stochastic-depth{drop-rate=0.1}"),
    (F.apply_factorization, dict(min_channels=16, latent_channels=8,
                                 min_features=16, latent_features=8),
     "composer-factorize{min-channels=16 latent-channels=8 min-features=16 "
     "latent-features=8}"),
    (F.apply_weight_standardization, {}, "composer-weight-standardization"),
    (F.apply_gyro_dropout, dict(sigma=4, tau=2),
     "composer-gyro-dropout{sigma=4 tau=2}"),
    (F.freeze_layers, dict(num_layers=2),
     "composer-freeze-layers{num-layers=2}"),
]

GPT_CASES = [
    (F.apply_gated_linear_units, {}, "composer-glu"),
    (F.apply_alibi, dict(max_sequence_length=16), "composer-alibi"),
]

LOW_PRECISION_CASES = [
    (F.apply_low_precision_layernorm, "gpt",
     "composer-low-precision-norms{dtype=bf16}"),
    (F.apply_low_precision_groupnorm, "cnn",
     "composer-low-precision-norms{dtype=bf16}"),
]


CASES = ([(*case, "cnn") for case in CNN_CASES] +
         [(*case, "gpt") for case in GPT_CASES])


@pytest.mark.parametrize("function,options,pipeline,model", CASES,
                         ids=[c[0].__name__ for c in CASES])
def test_functional_matches_the_tool(function, options, pipeline, model,
                                     tools, tmp_path):
    torch.manual_seed(0)
    scripted = torch.jit.script(SmallCNN() if model == "cnn" else small_gpt())
    ours = function(scripted, **options)
    assert ours.composer_report.passes[-1].changed > 0
    theirs, _ = tool_optimize(tools, scripted, pipeline, tmp_path)
    assert_same_model(ours, theirs,
                      image_batch() if model == "cnn" else token_batch())


@pytest.mark.parametrize("function,model,pipeline", LOW_PRECISION_CASES,
                         ids=[c[0].__name__ for c in LOW_PRECISION_CASES])
def test_functional_low_precision(function, model, pipeline, tools, tmp_path):
    torch.manual_seed(0)
    module = SmallCNN() if model == "cnn" else small_gpt()
    example = image_batch() if model == "cnn" else token_batch()
    mixed = composer_opt.optimize(module, passes=["composer-mixed-precision"])
    ours = function(mixed, precision="amp_bf16")
    assert ours.composer_report.passes[-1].changed > 0
    theirs, _ = tool_optimize(tools, mixed, pipeline, tmp_path)
    assert_same_model(ours, theirs, example)


def test_functional_refuses_eager_arguments(cnn):
    with pytest.raises(ValueError, match="optimizers="):
        F.apply_blurpool(cnn, optimizers=[object()])
    with pytest.raises(ValueError, match="current_duration="):
        F.freeze_layers(cnn, current_duration=0.5)
    with pytest.raises(ValueError, match="act_fn="):
        F.apply_gated_linear_units(small_gpt(), act_fn=torch.relu)


def test_functional_docstrings_carry_compiler_defaults():
    assert "min_channels = 16" in F.apply_blurpool.__doc__
    assert "Returns" in F.apply_blurpool.__doc__


def test_model_forms_agree(cnn, tmp_path):
    """An nn.Module, a ScriptModule, a path and archive bytes give the same
    model."""
    scripted = torch.jit.script(cnn)
    path = tmp_path / "cnn.pt"
    torch.jit.save(scripted, str(path))
    buffer = io.BytesIO()
    torch.jit.save(scripted, buffer)
    results = [composer_opt.optimize(form, pipeline="composer-mild")
               for form in (cnn, scripted, str(path), buffer.getvalue())]
    example = image_batch()
    expected = results[0].eval()(example)
    for result in results[1:]:
        assert result.code == results[0].code
        assert torch.equal(result.eval()(example), expected)


def test_traced_when_scripting_fails():
    class Untyped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 16, 3, stride=2)

        def forward(self, x, *extra):  # TorchScript takes no *args.
            return self.conv(x)

    with pytest.raises(composer_opt.CompilerError, match="example_inputs="):
        composer_opt.optimize(Untyped(), passes=["composer-channels-last"])
    traced = composer_opt.optimize(
        Untyped(), passes=["composer-channels-last"],
        example_inputs=torch.randn(1, 3, 8, 8))
    assert traced.composer_report["composer-channels-last"].changed == 1


class Forking(torch.nn.Module):
    def forward(self, x):
        future = torch.jit.fork(torch.relu, x)  # The importer refuses this.
        return torch.jit.wait(future)


def test_error_has_the_python_location(gpt):
    with pytest.raises(composer_opt.CompilerError) as caught:
        composer_opt.optimize(Forking())
    error = caught.value
    assert "prim::fork" in error.location.message
    assert error.location.file == __file__
    fork_line = next(number for number, line in enumerate(
        open(__file__), start=1) if "torch.jit.fork(" in line)
    assert error.location.line == fork_line
    assert str(error).startswith(f"{__file__}:{fork_line}:")
    with pytest.raises(composer_opt.CompilerError, match="pipeline"):
        composer_opt.optimize(gpt, pipeline="composer-no-such-pass")
    with pytest.raises(ValueError, match="no option 'min_channel'"):
        composer_opt.optimize(gpt, passes=[("composer-blurpool",
                                            {"min_channel": 3})])


def test_corrupt_bytes_are_refused(cnn):
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(cnn), buffer)
    data = bytearray(buffer.getvalue())
    data[len(data) // 2] ^= 0xFF
    with pytest.raises(composer_opt.CompilerError, match="TorchScript"):
        composer_opt.optimize(bytes(data))


def test_site_report_equals_tool_remarks(cnn, tools, tmp_path):
    scripted = torch.jit.script(cnn)
    pipeline = ("composer-blurpool{min-channels=32},composer-squeeze-excite"
                "{min-channels=16},composer-channels-last")
    ours = composer_opt.optimize(scripted, pipeline=pipeline)
    _, remarks = tool_optimize(tools, scripted, pipeline, tmp_path)
    # The tool's remarks also count the lowering that writing runs.
    counts = [count for count in re.findall(
        r"remark: (composer-[a-z-]+): (\d+) (.*?), (\d+) skipped", remarks)
        if not count[0].startswith("composer-lower-to-")]
    assert counts, remarks
    reported = [(run.name, str(r.changed), r.what, str(r.num_skipped))
                for run in ours.composer_report.passes for r in run.reports]
    assert reported == counts
    blurpool = ours.composer_report["composer-blurpool"]
    assert blurpool.skipped > 0
    assert blurpool.reports[0].skipped[0].sites[0].startswith(
        f"{torch.nn.__path__[0]}/modules/conv.py:")


def test_round_trip_is_exact(cnn, tools, tmp_path):
    scripted = torch.jit.script(cnn)
    ours = composer_opt.optimize(scripted)
    theirs, _ = tool_optimize(tools, scripted, "", tmp_path)
    assert written(ours).code == theirs.code
    for reference in (scripted, theirs):
        state, expected = ours.state_dict(), reference.state_dict()
        assert list(state) == list(expected)
        for key in expected:
            assert state[key].dtype == expected[key].dtype
            assert torch.equal(state[key], expected[key]), key


def test_runtime_lowering_runs_after_load_runtime(cnn):
    composer_opt.load_runtime()
    assert composer_opt.load_runtime() == composer_opt.load_runtime()
    scripted = torch.jit.script(cnn).eval()
    fused = composer_opt.optimize(scripted, passes=["composer-blurpool"],
                                  lower_to="runtime")
    plain = composer_opt.optimize(scripted, passes=["composer-blurpool"])
    assert "composer." in fused.code or "ops.composer" in fused.code
    assert "composer" not in plain.code
    example = image_batch()
    with torch.no_grad():
        assert torch.allclose(fused.eval()(example), plain.eval()(example),
                              atol=1e-5)


def test_catalog_describes_passes_and_pipelines():
    catalog = composer_opt.passes()
    blurpool = catalog["composer-blurpool"]
    assert blurpool.kind == "pass" and blurpool.is_method
    assert not blurpool.keeps_accuracy
    assert catalog["composer-channels-last"].keeps_accuracy
    assert blurpool.options["min-channels"].default == 16
    assert blurpool.options["blur-first"].default is True
    dtype = catalog["composer-mixed-precision"].options["dtype"]
    assert dtype.default == "bf16" and dtype.choices == ["bf16", "f16"]
    assert not catalog["composer-refine-types"].is_method
    mild = catalog["composer-mild"]
    assert mild.kind == "pipeline"
    assert "composer-blurpool{" in mild.pipeline


def test_report_costs_returns_the_tools_data(cnn):
    report = composer_opt.report_costs(torch.jit.script(cnn), "4x3x16x16xf32",
                                       warmup_steps=0, timed_steps=1)
    text = repr(report)
    assert "composer-blurpool" in text and "flops" in text


def test_eager_loop_trains_the_optimized_module(cnn):
    model = composer_opt.optimize(cnn, pipeline="composer-mild")
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    torch.manual_seed(2)
    images, labels = torch.randn(32, 3, 16, 16), torch.randint(0, 10, (32,))
    losses = []
    for _ in range(8):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]


def test_imports_in_a_fresh_interpreter():
    code = ("import composer_opt, composer_opt.functional as f; "
            "print(f.apply_blurpool.__name__)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, env=dict(os.environ))
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "apply_blurpool"


def test_input_module_is_left_unchanged(cnn):
    scripted = torch.jit.script(cnn)
    code = scripted.code
    frozen = F.freeze_layers(scripted, num_layers=2)
    converted = F.apply_channels_last(scripted)
    assert not frozen.stem.weight.requires_grad
    assert scripted.stem.weight.requires_grad
    assert converted.down.weight.is_contiguous(
        memory_format=torch.channels_last)
    assert scripted.down.weight.is_contiguous()
    assert scripted.code == code
    # Untouched tensors are shared, as module surgery would keep them.
    assert converted.fc.weight.data_ptr() == scripted.fc.weight.data_ptr()


class TwoAttentions(torch.nn.Module):
    """ALiBi cannot bias the first attention (no heads in the graph), so it
    refuses the model, with a note at that softmax."""

    def __init__(self):
        super().__init__()
        self.pos = torch.nn.Embedding(16, 8)
        self.qkv = torch.nn.Linear(8, 24)

    def forward(self, x):
        b, t = x.size(0), x.size(1)
        x = x + self.pos(torch.arange(t))
        q, k, v = self.qkv(x).split(8, dim=-1)
        unsplit = torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v
        qh = q.view(b, t, 2, 4).transpose(1, 2)
        kh = k.view(b, t, 2, 4).transpose(1, 2)
        vh = v.view(b, t, 2, 4).transpose(1, 2)
        heads = torch.softmax(qh @ kh.transpose(-2, -1), dim=-1) @ vh
        return unsplit + heads.transpose(1, 2).reshape(b, t, 8)


def test_error_keeps_its_notes():
    with pytest.raises(composer_opt.CompilerError) as caught:
        composer_opt.optimize(TwoAttentions(), passes=["composer-alibi"])
    error = caught.value.location
    assert "cannot take ALiBi" in error.message
    assert len(error.notes) == 1
    note = error.notes[0]
    assert note.severity == "note" and "head count is unknown" in note.message
    softmax_line = next(number for number, line in enumerate(
        open(__file__), start=1) if "unsplit = torch.softmax" in line)
    assert (note.file, note.line) == (__file__, softmax_line)
    assert f"{__file__}:{softmax_line}:" in str(caught.value)


class Recurrent(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, 16, batch_first=True)
        self.fc = torch.nn.Linear(16, 4)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y[:, -1])


def test_overloaded_forward_is_explained_and_a_wrapper_works():
    with pytest.raises(composer_opt.CompilerError, match="overloaded"):
        composer_opt.optimize(torch.nn.LSTM(8, 16))
    model = Recurrent().eval()
    x = torch.randn(2, 5, 8)
    assert torch.equal(composer_opt.optimize(model)(x), model(x))
