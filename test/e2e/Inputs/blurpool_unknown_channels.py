"""BlurPool on max pools whose channel count composer-opt cannot know (a pool
on the input, a cat with it): their 1x1x3x3 filters, expanded when run, must
match module surgery (test/e2e_lib/reference.py).

Run as: blurpool_unknown_channels.py save MODEL.pt
        blurpool_unknown_channels.py check MODEL.pt CANDIDATE.pt [RUNTIME_LIB]
"""
import sys

import torch
import torch.nn as nn

sys.path.insert(0, sys.argv[-1] if sys.argv[-1].endswith("e2e_lib") else ".")
import reference  # noqa: E402


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.pool2 = nn.MaxPool2d(2)

    def forward(self, x):
        x = self.pool(x)
        return self.pool2(torch.cat([self.conv(x), x], 1))


def main():
    torch.manual_seed(0)
    mode, model_path = sys.argv[1:3]
    example = torch.randn(2, 3, 16, 16)
    if mode == "save":
        torch.jit.script(Net()).save(model_path)
        return
    candidate_path = sys.argv[3]
    library = sys.argv[4] if len(sys.argv) > 5 else None
    if library:
        torch.ops.load_library(library)
    original = torch.jit.load(model_path)
    candidate = torch.jit.load(candidate_path)
    ref = Net()
    ref.load_state_dict(original.state_dict())
    print(f"reference: {reference.blurpool(ref)} sites")
    filters = [tuple(b.shape) for k, b in candidate.named_buffers()
               if k.endswith("blurpool.filter")]
    print(f"filters: {sorted(filters)}")
    for train in (False, True):
        ref.train(train)
        candidate.train(train)
        for x in (example, example[..., :8, :8], example[..., :4, :4]):
            x = x.clone().requires_grad_(True)
            expected, actual = ref(x), candidate(x)
            if not torch.allclose(expected, actual, atol=1e-6):
                print(f"FAIL: train={train} input {list(x.shape)}: max abs diff "
                      f"{(expected - actual).abs().max().item()}")
                sys.exit(1)
            (gx_ref,) = torch.autograd.grad(expected.square().sum(), x)
            (gx,) = torch.autograd.grad(actual.square().sum(), x)
            if not torch.allclose(gx_ref, gx, atol=1e-5):
                print(f"FAIL: train={train} input gradient differs")
                sys.exit(1)
    print("outputs and input gradients match the reference")
    print("PASS")


if __name__ == "__main__":
    main()
