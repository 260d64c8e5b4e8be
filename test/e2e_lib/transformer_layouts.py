"""Language models laid out the way their best-known Python implementations
lay them out, at test sizes: what users bring to the graph methods.

- HFGPT2: Hugging Face's GPT-2 (GPT2Model + tied LM head): `Conv1D`
  projections (`addmm` on a flattened view, weight stored [in, out]), heads
  split by `view(list(size()[:-1]) + [heads, head_dim])` and `permute`, a
  uint8 causal buffer sliced as `bias[:, :, k - q:k, :k]` and applied with
  `torch.where` and `masked_bias`, the tanh GELU written out, blocks in an
  `nn.ModuleList`.
- Bert: Hugging Face's BERT encoder with an MLM-style head: `position_ids`
  and `token_type_ids` buffers sliced to the sequence length, an additive
  `(1 - mask) * -10000` attention mask, post-LayerNorm, GELU feed-forwards,
  layers in an `nn.ModuleList`.
- Llama: a LLaMA-style decoder: RMSNorm written out, rotary position
  embeddings, a SwiGLU feed-forward, no learned position embedding, layers
  in an `nn.ModuleList`.

Scriptable as written (`torch.jit.script`) and traceable.
"""
import math
from typing import List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


class Conv1D(nn.Module):
    """GPT-2's linear layer: weight [in, out], y = addmm(b, x2d, W)."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        size_out = list(x.size()[:-1]) + [self.nf]
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class NewGELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(
            math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GPT2Attention(nn.Module):
    def __init__(self, dim, heads, context, dropout):
        super().__init__()
        self.register_buffer("bias", torch.tril(
            torch.ones((context, context), dtype=torch.uint8)).view(
                1, 1, context, context))
        self.register_buffer("masked_bias", torch.tensor(-1e4))
        self.num_heads = heads
        self.head_dim = dim // heads
        self.split_size = dim
        self.c_attn = Conv1D(3 * dim, dim)
        self.c_proj = Conv1D(dim, dim)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)

    def _split_heads(self, tensor, num_heads: int, head_dim: int):
        new_shape = list(tensor.size()[:-1]) + [num_heads, head_dim]
        return tensor.view(new_shape).permute(0, 2, 1, 3)

    def _merge_heads(self, tensor, num_heads: int, head_dim: int):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        new_shape = list(tensor.size()[:-2]) + [num_heads * head_dim]
        return tensor.view(new_shape)

    def _attn(self, query, key, value):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / (value.size(-1) ** 0.5)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length:key_length,
                                :key_length].to(torch.bool)
        attn_weights = torch.where(causal_mask, attn_weights,
                                   self.masked_bias.to(attn_weights.dtype))
        attn_weights = F.softmax(attn_weights, dim=-1)
        attn_weights = self.attn_dropout(attn_weights)
        return torch.matmul(attn_weights, value)

    def forward(self, hidden_states):
        query, key, value = self.c_attn(hidden_states).split(
            self.split_size, dim=2)
        query = self._split_heads(query, self.num_heads, self.head_dim)
        key = self._split_heads(key, self.num_heads, self.head_dim)
        value = self._split_heads(value, self.num_heads, self.head_dim)
        attn_output = self._attn(query, key, value)
        attn_output = self._merge_heads(attn_output, self.num_heads,
                                        self.head_dim)
        return self.resid_dropout(self.c_proj(attn_output))


class GPT2MLP(nn.Module):
    def __init__(self, dim, dropout):
        super().__init__()
        self.c_fc = Conv1D(4 * dim, dim)
        self.c_proj = Conv1D(dim, 4 * dim)
        self.act = NewGELU()
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.act(self.c_fc(x))))


class GPT2Block(nn.Module):
    def __init__(self, dim, heads, context, dropout):
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim)
        self.attn = GPT2Attention(dim, heads, context, dropout)
        self.ln_2 = nn.LayerNorm(dim)
        self.mlp = GPT2MLP(dim, dropout)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = residual + self.attn(self.ln_1(hidden_states))
        residual = hidden_states
        return residual + self.mlp(self.ln_2(hidden_states))


class HFGPT2(nn.Module):
    def __init__(self, vocab=101, dim=32, heads=4, layers=2, context=16,
                 dropout=0.1):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(context, dim)
        self.drop = nn.Dropout(dropout)
        self.h = nn.ModuleList(
            [GPT2Block(dim, heads, context, dropout) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, input_ids):
        input_shape = input_ids.size()
        position_ids = torch.arange(0, input_shape[-1], dtype=torch.long,
                                    device=input_ids.device).unsqueeze(0)
        hidden_states = self.drop(self.wte(input_ids) + self.wpe(position_ids))
        for block in self.h:
            hidden_states = block(hidden_states)
        return self.lm_head(self.ln_f(hidden_states))


class BertEmbeddings(nn.Module):
    def __init__(self, vocab, dim, context, dropout):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, dim)
        self.position_embeddings = nn.Embedding(context, dim)
        self.token_type_embeddings = nn.Embedding(2, dim)
        self.LayerNorm = nn.LayerNorm(dim, eps=1e-12)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("position_ids",
                             torch.arange(context).expand((1, -1)))
        self.register_buffer("token_type_ids", torch.zeros(
            self.position_ids.size(), dtype=torch.long))

    def forward(self, input_ids):
        seq_length = input_ids.size(1)
        position_ids = self.position_ids[:, 0:seq_length]
        token_type_ids = self.token_type_ids[:, :seq_length].expand(
            input_ids.size(0), seq_length)
        embeddings = (self.word_embeddings(input_ids)
                      + self.token_type_embeddings(token_type_ids))
        embeddings = embeddings + self.position_embeddings(position_ids)
        return self.dropout(self.LayerNorm(embeddings))


class BertSelfAttention(nn.Module):
    def __init__(self, dim, heads, dropout):
        super().__init__()
        self.num_attention_heads = heads
        self.attention_head_size = dim // heads
        self.all_head_size = dim
        self.query = nn.Linear(dim, dim)
        self.key = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)
        self.dropout = nn.Dropout(dropout)

    def transpose_for_scores(self, x):
        new_x_shape = list(x.size()[:-1]) + [self.num_attention_heads,
                                             self.attention_head_size]
        return x.view(new_x_shape).permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask):
        query_layer = self.transpose_for_scores(self.query(hidden_states))
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        attention_scores = torch.matmul(query_layer,
                                        key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(
            self.attention_head_size)
        attention_scores = attention_scores + attention_mask
        attention_probs = self.dropout(F.softmax(attention_scores, dim=-1))
        context_layer = torch.matmul(attention_probs, value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        new_shape = list(context_layer.size()[:-2]) + [self.all_head_size]
        return context_layer.view(new_shape)


class BertSelfOutput(nn.Module):
    def __init__(self, dim, dropout):
        super().__init__()
        self.dense = nn.Linear(dim, dim)
        self.LayerNorm = nn.LayerNorm(dim, eps=1e-12)
        self.dropout = nn.Dropout(dropout)

    def forward(self, hidden_states, input_tensor):
        hidden_states = self.dropout(self.dense(hidden_states))
        return self.LayerNorm(hidden_states + input_tensor)


class BertAttention(nn.Module):
    def __init__(self, dim, heads, dropout):
        super().__init__()
        self.self = BertSelfAttention(dim, heads, dropout)
        self.output = BertSelfOutput(dim, dropout)

    def forward(self, hidden_states, attention_mask):
        return self.output(self.self(hidden_states, attention_mask),
                           hidden_states)


class BertIntermediate(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dense = nn.Linear(dim, 4 * dim)
        self.intermediate_act_fn = nn.GELU()

    def forward(self, hidden_states):
        return self.intermediate_act_fn(self.dense(hidden_states))


class BertOutput(nn.Module):
    def __init__(self, dim, dropout):
        super().__init__()
        self.dense = nn.Linear(4 * dim, dim)
        self.LayerNorm = nn.LayerNorm(dim, eps=1e-12)
        self.dropout = nn.Dropout(dropout)

    def forward(self, hidden_states, input_tensor):
        hidden_states = self.dropout(self.dense(hidden_states))
        return self.LayerNorm(hidden_states + input_tensor)


class BertLayer(nn.Module):
    def __init__(self, dim, heads, dropout):
        super().__init__()
        self.attention = BertAttention(dim, heads, dropout)
        self.intermediate = BertIntermediate(dim)
        self.output = BertOutput(dim, dropout)

    def forward(self, hidden_states, attention_mask):
        attention_output = self.attention(hidden_states, attention_mask)
        return self.output(self.intermediate(attention_output),
                           attention_output)


class Bert(nn.Module):
    def __init__(self, vocab=101, dim=32, heads=4, layers=2, context=16,
                 dropout=0.1):
        super().__init__()
        self.embeddings = BertEmbeddings(vocab, dim, context, dropout)
        self.layer = nn.ModuleList(
            [BertLayer(dim, heads, dropout) for _ in range(layers)])
        self.cls = nn.Linear(dim, vocab)

    def forward(self, input_ids, attention_mask: Optional[torch.Tensor] = None):
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        extended = attention_mask[:, None, None, :].to(torch.float32)
        extended = (1.0 - extended) * -10000.0
        hidden_states = self.embeddings(input_ids)
        for layer in self.layer:
            hidden_states = layer(hidden_states, extended)
        return self.cls(hidden_states)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaAttention(nn.Module):
    def __init__(self, dim, heads, context):
        super().__init__()
        self.num_heads = heads
        self.head_dim = dim // heads
        self.q_proj = nn.Linear(dim, dim, bias=False)
        self.k_proj = nn.Linear(dim, dim, bias=False)
        self.v_proj = nn.Linear(dim, dim, bias=False)
        self.o_proj = nn.Linear(dim, dim, bias=False)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2).float()
                                    / self.head_dim))
        freqs = torch.outer(torch.arange(context).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos())
        self.register_buffer("sin_cached", emb.sin())

    def forward(self, x):
        b, t, _ = x.size()
        q = self.q_proj(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        cos = self.cos_cached[:t]
        sin = self.sin_cached[:t]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        probs = F.softmax(scores, dim=-1)
        out = torch.matmul(probs, v).transpose(1, 2).contiguous().view(b, t, -1)
        return self.o_proj(out)


class LlamaMLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, dim, heads, context):
        super().__init__()
        self.input_layernorm = RMSNorm(dim)
        self.self_attn = LlamaAttention(dim, heads, context)
        self.post_attention_layernorm = RMSNorm(dim)
        self.mlp = LlamaMLP(dim, 3 * dim)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class Llama(nn.Module):
    def __init__(self, vocab=101, dim=32, heads=4, layers=2, context=16):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(
            [LlamaDecoderLayer(dim, heads, context) for _ in range(layers)])
        self.norm = RMSNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids):
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))
