"""A model whose inputs reach autocast's fp32 ops directly, so that their
dtype is the caller's: composer-mixed-precision must cast a low float input
up there at run time, as autocast does, and leave integer inputs alone.

Run as: caller_dtype.py export OUT.pt
        caller_dtype.py check ORIGINAL.pt CANDIDATE.pt
`check` calls the candidate without autocast and the original under
torch.autocast(bf16) on the same inputs, with x in fp32 and in bf16: every
output has autocast's dtype and is within bf16 rounding of its value.
Prints one line per check; exits 1 on the first failure.
"""
import sys

import torch
import torch.nn.functional as F


class CallerDtype(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x, target):
        # softmax and layer_norm are on autocast's fp32 list; the product
        # follows x, so its dtype is the caller's too.
        h = x * 2
        probs = F.softmax(h, -1)
        normed = F.layer_norm(h, [8])
        logits = self.fc(normed)
        # nll_loss is fp32 too; its integer target passes through.
        loss = F.nll_loss(F.log_softmax(logits, -1), target)
        return probs, loss


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def main():
    if sys.argv[1] == "export":
        torch.jit.script(CallerDtype()).save(sys.argv[2])
        return
    original = torch.jit.load(sys.argv[2]).eval()
    candidate = torch.jit.load(sys.argv[3]).eval()
    graph = candidate.forward.graph.copy()
    torch._C._jit_pass_inline(graph)
    casts = graph.findAllNodes("aten::_autocast_to_full_precision")
    print(f"graph: {len(casts)} casts up of the caller's dtype")
    torch.manual_seed(1)
    x = torch.randn(4, 8)
    target = torch.randint(0, 5, (4,))
    for dtype in (torch.float32, torch.bfloat16):
        with torch.no_grad():
            got = candidate(x.to(dtype), target)
            with torch.autocast("cpu", dtype=torch.bfloat16):
                want = original(x.to(dtype), target)
        for name, g, w in zip(("softmax", "loss"), got, want):
            if g.dtype != w.dtype:
                fail(f"x in {dtype}: {name} is {g.dtype}, autocast gives "
                     f"{w.dtype}")
            if not torch.allclose(g.float(), w.float(), rtol=0.02, atol=0.02):
                fail(f"x in {dtype}: {name} differs from autocast's by "
                     f"{(g.float() - w.float()).abs().max().item():.4f}")
        print(f"x in {dtype}: outputs in autocast's dtypes and values")
    print("PASS")


if __name__ == "__main__":
    main()
