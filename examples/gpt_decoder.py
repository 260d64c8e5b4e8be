"""A small GPT-2-style decoder over bytes, exported as TorchScript for
composer-train's token data (examples/text_tokens.py) and composer-opt.

    /usr/bin/python3 examples/gpt_decoder.py out.pt [--layers 4] [--width 256]
        [--heads 4] [--context 256] [--dropout 0.0] [--seed 0]

GPT-2's layout: token and learned position embeddings, pre-LayerNorm blocks
with causal attention (a fixed-size causal mask buffer) and a GELU MLP, a
final LayerNorm, and an output head tied to the token embedding; GPT-2's
initialization (normal 0.02, residual projections scaled by
1/sqrt(2 * layers)). `composer-opt --composer-alibi` finds the attention
and the position embedding in the scripted graph, removes the embedding and
biases the attention, so the model then runs on any sequence length.
Dropout is off by default: the example trains for minutes, far from
overfitting.
"""
import argparse
import math

import torch
from torch import nn
from torch.nn import functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads, context, dropout):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.attn_drop = nn.Dropout(dropout)
        self.resid_drop = nn.Dropout(dropout)
        mask = torch.tril(torch.ones(context, context, dtype=torch.bool))
        self.register_buffer("mask", mask.view(1, 1, context, context))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
        att = att.masked_fill(~self.mask[:, :, :t, :t], float("-inf"))
        att = self.attn_drop(F.softmax(att, dim=-1))
        y = torch.matmul(att, v).transpose(1, 2).contiguous().view(b, t, c)
        return self.resid_drop(self.proj(y))


class DecoderBlock(nn.Module):
    def __init__(self, dim, heads, context, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, context, dropout)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(),
                                 nn.Linear(4 * dim, dim), nn.Dropout(dropout))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPTDecoder(nn.Module):
    """`gpt2_init=False` keeps PyTorch's default initialization (the
    end-to-end tests' decoder, test/e2e_lib/models.py)."""

    def __init__(self, vocab=256, dim=256, heads=4, layers=4, context=256,
                 dropout=0.0, gpt2_init=True):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(context, dim)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.Sequential(
            *[DecoderBlock(dim, heads, context, dropout) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tok.weight
        if not gpt2_init:
            return
        self.apply(self._init_weights)
        for name, parameter in self.named_parameters():
            if name.endswith(("attn.proj.weight", "mlp.2.weight")):
                nn.init.normal_(parameter, 0.0, 0.02 / math.sqrt(2 * layers))

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, 0.0, 0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, idx):
        t = idx.size(1)
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.drop(self.tok(idx) + self.pos(pos).unsqueeze(0))
        return self.head(self.ln_f(self.blocks(x)))


def export(path, layers=4, width=256, heads=4, context=256, dropout=0.0,
           seed=0):
    torch.manual_seed(seed)
    model = GPTDecoder(256, width, heads, layers, context, dropout)
    torch.jit.script(model).save(path)
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("output")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--context", type=int, default=256)
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    export(args.output, args.layers, args.width, args.heads, args.context,
           args.dropout, args.seed)
