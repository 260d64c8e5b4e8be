"""Checks a model written by composer-gyro-dropout against GyroDropout
written by module surgery (reference.py) on the same weights and masks, in
a fresh process, over many training steps, beyond check_method.py's one.

Run as: check_gyro_dropout.py gyro_dropout:p=P,sigma=S,tau=T,period=N MODEL_NAME MODE ORIGINAL.pt CANDIDATE.pt INPUT.pt
(the options the pass ran with). Checks:
- the masks: sigma x F of 0 and 1, zeros within 4 sigma of p;
- eval: the candidate is the original model, bitwise;
- train: with the same seed per step, outputs and buffers equal the
  reference's over STEPS steps with batches of 32 (tau divides it:
  Composer's repeat_interleave), 40 (it does not) and 2 (below tau);
- period: every site re-draws its active masks exactly at the steps whose
  counter is a multiple of the period buffer, which is then changed, as
  composer-train sets it;
- statistics: the fraction of zeroed features over the steps is within 4
  sigma of p.
Prints one line per check; exits 1 on the first failure.
"""
import math
import sys

import torch

import models
import reference
from check_method import close, fail, parse_method

STEPS = 60
# The period buffer from this step on, as composer-train would set it.
NEW_PERIOD_STEP, NEW_PERIOD = 40, 3
BATCHES = (32, 40, 2)


def main():
    method, name, mode, original_path, candidate_path, input_path = sys.argv[1:7]
    _, options = parse_method(method)
    p, sigma, tau = options["p"], options["sigma"], options["tau"]
    period = options["period"]
    original = torch.jit.load(original_path)
    candidate = torch.jit.load(candidate_path)
    state = candidate.state_dict()
    ref, _ = models.build(name)
    ref.load_state_dict(original.state_dict())
    sites = reference.gyro_dropout(ref, p=p, traced=int(mode == "trace"),
                                   candidate_state=state)
    print(f"reference: {sites} sites")
    prefixes = sorted(k[:-len("preselect_masks")] for k in state
                      if k.endswith(".preselect_masks"))

    masks = [state[prefix + "preselect_masks"] for prefix in prefixes]
    if any(m.shape[0] != sigma or not ((m == 0) | (m == 1)).all()
           for m in masks):
        fail(f"masks are not {sigma} x F of 0 and 1")
    if any(state[prefix + "selected_indices"].shape != (tau,)
           for prefix in prefixes):
        fail(f"selected_indices are not {tau} indices")
    entries = sum(m.numel() for m in masks)
    zeros = sum(int((m == 0).sum()) for m in masks) / entries
    if abs(zeros - p) > 4 * math.sqrt(p * (1 - p) / entries):
        fail(f"{zeros:.4f} of the mask entries are 0, p is {p}")
    print(f"masks: {len(masks)} of {sigma} x F, zeros within 4 sigma of p")
    if int(state["_composer_gyro_dropout.period"]) != period:
        fail(f"period buffer {int(state['_composer_gyro_dropout.period'])}")

    example = torch.load(input_path)
    with torch.no_grad():
        original.eval()
        candidate.eval()
        ref.eval()
        expected = original(example)
        if not torch.equal(expected, candidate(example)):
            fail("eval output differs from the original's")
        close("eval", ref(example), candidate(example))
        print("eval: the original model's outputs, bitwise")

        candidate.train()
        ref.train()
        buffers = dict(candidate.named_buffers())
        ref_buffers = dict(ref.named_buffers())
        dropped = applied = 0
        changes = 0
        for step in range(STEPS):
            if step == NEW_PERIOD_STEP:
                for holder in (buffers, ref_buffers):
                    holder["_composer_gyro_dropout.period"].fill_(NEW_PERIOD)
            batch = BATCHES[step % len(BATCHES)]
            x = torch.randint(0, 101, (batch, example.shape[1]))
            before = {prefix: buffers[prefix + "selected_indices"].clone()
                      for prefix in prefixes}
            torch.manual_seed(step)
            expected = ref(x)
            torch.manual_seed(step)
            actual = candidate(x)
            close(f"train step {step}", expected, actual)
            if step == 0 and torch.allclose(actual, original(x)):
                fail("train output equals the original's: nothing dropped")
            for key, value in ref_buffers.items():
                if not torch.equal(value, buffers[key]):
                    fail(f"buffer {key} after train step {step}")
            current = period if step < NEW_PERIOD_STEP else NEW_PERIOD
            for prefix in prefixes:
                counter = int(buffers[prefix + "training_step"]) - 1
                selected = buffers[prefix + "selected_indices"]
                changed = not torch.equal(before[prefix], selected)
                if changed != (counter % max(current, 1) == 0):
                    fail(f"{prefix}: active masks {'' if changed else 'un'}"
                         f"changed at step {counter}, period {current}")
                changes += changed
                # The masks this step applied, one row per sample.
                rows = torch.arange(batch) * min(tau, batch) // batch
                used = buffers[prefix + "preselect_masks"][selected[rows]]
                dropped += int((used == 0).sum())
                applied += used.numel()
    print(f"train: matches the reference with the same seed, {STEPS} steps")
    print(f"period: active masks re-drawn exactly every {period} steps, then "
          f"every {NEW_PERIOD} after the buffer changed ({changes} re-draws)")
    # Rows repeat within a step and masks across steps: the pool of mask
    # entries bounds the deviation as well as the draws do.
    fraction = dropped / applied
    sigma_pool = math.sqrt(p * (1 - p) * (1 / entries + 1 / applied))
    if abs(fraction - p) > 4 * sigma_pool:
        fail(f"{fraction:.4f} of the features zeroed, p is {p}")
    print("statistics: fraction of zeroed features within 4 sigma of p")
    print("PASS")


if __name__ == "__main__":
    main()
