"""Compares a model written by composer-opt with a method pipeline against
the method applied by module surgery (reference.py) to the same weights, in
a fresh process.

Run as: check_method.py METHOD[:OPTION=NUMBER,...] MODEL_NAME MODE ORIGINAL.pt CANDIDATE.pt INPUT.pt
MODE is how ORIGINAL.pt was exported (script or trace). Tracing (in eval
mode) fixes BatchNorm and dropout to eval behaviour, so a traced model in
train mode is compared with the reference in eval mode.
Prints one line per check; exits 1 on the first failure.
"""
import inspect
import sys

import torch

import models
import reference

TOLERANCE = 1e-5
# Models that assert their example's input size (ViT's patch grid).
FIXED_INPUT_SIZE = {"vit_b_16"}


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def close(what, expected, actual):
    if expected.shape != actual.shape:
        fail(f"{what}: shape {list(expected.shape)} vs {list(actual.shape)}")
    diff = (expected - actual).abs().max().item()
    scale = max(1.0, expected.abs().max().item())
    if not diff <= TOLERANCE * scale:
        fail(f"{what}: max abs diff {diff}")
    return diff


def parse_method(text):
    """METHOD[:OPTION=NUMBER,...] as (reference name, options)."""
    method, _, option_text = text.partition(":")
    options = dict((key, float(value) if "." in value else int(value))
                   for key, value in
                   (item.split("=") for item in option_text.split(",") if item))
    return method, options


def main():
    method, name, mode, original_path, candidate_path, input_path = sys.argv[1:7]
    example = torch.load(input_path)
    original = torch.jit.load(original_path)
    candidate = torch.jit.load(candidate_path)

    ref, _ = models.build(name)
    ref.load_state_dict(original.state_dict())
    method, options = parse_method(method)
    apply = reference.METHODS[method]
    if "candidate_state" in inspect.signature(apply).parameters:
        options["candidate_state"] = candidate.state_dict()
    if "example" in inspect.signature(apply).parameters:
        options["example"] = example
    sites = apply(ref, **options)
    print(f"reference: {sites} sites")
    if method == "freeze_layers":
        layers = reference.layers_in_order(ref, example)
        recorded = list(candidate._composer_layers)
        if recorded != layers:
            first = next((i for i, (a, b) in enumerate(zip(layers, recorded))
                          if a != b), min(len(layers), len(recorded)))
            fail(f"layer {first}: reference {layers[first:first + 2]}, "
                 f"candidate {recorded[first:first + 2]}")
        print(f"layers: {len(layers)} in the reference's order")

    ref_state, cand_state = ref.state_dict(), candidate.state_dict()
    kept = [k for k in original.state_dict()]
    if any(not torch.equal(original.state_dict()[k], cand_state[k]) for k in kept):
        fail("original state changed")
    added = sorted(set(cand_state) - set(kept))
    print(f"state: {len(kept)} original entries kept, {len(added)} added")
    if method == "squeeze_excite":
        weights = [cand_state[k] for k in added if k.endswith(".weight")]
        bounds_ok = all(w.abs().max() <= 1 / w.shape[1] ** 0.5 and
                        w.std() > 0.4 / w.shape[1] ** 0.5 for w in weights)
        if not bounds_ok:
            fail("new weights are not PyTorch's Linear initialization")
        print(f"init: {len(weights)} new weights uniform in +-1/sqrt(fan_in)")
    if method == "channels_last":
        stored = sum(p.dim() == 4
                     and p.is_contiguous(memory_format=torch.channels_last)
                     for p in candidate.parameters())
        print(f"state: {stored} parameters stored channels_last")

    def outputs(model, x, train):
        model.train(train)
        torch.manual_seed(0)
        out = model(x)
        return out if isinstance(out, torch.Tensor) else out["out"]

    small = example[..., : example.shape[-2] // 2, : example.shape[-1] // 2]
    with torch.no_grad():
        for label, x in (("eval", example), ("eval small input", small)):
            if x is small and name in FIXED_INPUT_SIZE:
                print(f"{label}: skipped, {name} takes one input size")
                continue
            diff = close(label, outputs(ref, x, False), outputs(candidate, x, False))
            print(f"{label}: matches the reference (max abs diff {diff:.2e})")
    if method == "alibi":
        # ALiBi's point: past the original position table and mask, to 4x.
        long = example.repeat(1, 4)
        try:
            original.eval()(long)
            fail(f"the original model runs on {long.shape[1]} tokens")
        except RuntimeError:
            pass
        with torch.no_grad():
            diff = close("eval long input", outputs(ref, long, False),
                         outputs(candidate, long, False))
        print(f"eval long input: {long.shape[1]} tokens (the original fails), "
              f"matches the reference (max abs diff {diff:.2e})")

    out_ref = outputs(ref, example, mode == "script")
    out_cand = outputs(candidate, example, True)
    diff = close("train", out_ref.detach(), out_cand.detach())
    print(f"train: matches the reference (max abs diff {diff:.2e})")
    ref_buffers = dict(ref.named_buffers())
    cand_buffers = dict(candidate.named_buffers())
    for key in (k for k in ref_buffers if k in cand_buffers):
        close(f"buffer {key} after train forward", ref_buffers[key].double(),
              cand_buffers[key].double())
    print("train: buffers match the reference")

    params = dict(candidate.named_parameters())
    out_cand.float().square().mean().backward()
    missing = [n for n, p in params.items() if p.requires_grad and p.grad is None]
    if missing:
        fail(f"no gradient for {missing[:3]}")
    out_ref.float().square().mean().backward()
    ref_params = dict(ref.named_parameters())
    frozen = 0
    for name, param in params.items():
        expected = ref_params[name].grad if name in ref_params else param.grad
        if (expected is None) != (param.grad is None):
            fail(f"gradient of {name}: reference {'no ' if expected is None else ''}"
                 f"gradient, candidate {'no ' if param.grad is None else ''}gradient")
        if expected is None:
            frozen += not param.requires_grad
            continue
        close(f"gradient of {name}", expected, param.grad)
    print(f"backward: gradients match the reference ({frozen} frozen)")
    # Randomly initialized traced models (eval-mode BN) have huge gradients;
    # clip so one step stays finite whatever the model.
    torch.nn.utils.clip_grad_norm_(params.values(), 1.0)
    torch.optim.SGD(params.values(), lr=0.01).step()
    with torch.no_grad():
        after = outputs(candidate, example, False)
    if not torch.isfinite(after).all():
        fail("non-finite output after an SGD step")
    trainable = sum(p.requires_grad for p in params.values())
    print(f"sgd: one step trains the {trainable} trainable parameters")
    print("PASS")


if __name__ == "__main__":
    main()
