"""The speedup methods written directly in PyTorch, by module surgery on an
eager model, as METHODS.md states them: the references the passes' output
is compared with."""
import math
import types

import torch
import torch.nn as nn
import torch.nn.functional as F


class Blur(nn.Module):
    """BlurPool's binomial blur at padding 1; the identity (subsampled by the
    stride) when the input is smaller than the filter."""

    def __init__(self, stride):
        super().__init__()
        taps = torch.tensor([1.0, 2.0, 1.0])
        self.register_buffer("filter", (taps[:, None] * taps[None, :] / 16)[None, None])
        self.stride = tuple(stride)

    def forward(self, x):
        if min(x.shape[-2:]) < 3:
            return x[..., ::self.stride[0], ::self.stride[1]]
        channels = x.shape[1]
        return F.conv2d(x, self.filter.expand(channels, 1, 3, 3), None,
                        self.stride, 1, 1, channels)


def _pair(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value, value)


def blurpool(model, replace_convs=True, replace_maxpools=True, blur_first=True,
             min_channels=16):
    """Returns the number of sites changed."""
    sites = 0
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if (replace_convs and isinstance(child, nn.Conv2d)
                    and max(child.stride) > 1
                    and child.in_channels >= min_channels):
                if blur_first:
                    new = nn.Sequential(Blur((1, 1)), child)
                else:
                    stride = child.stride
                    child.stride = (1, 1)
                    new = nn.Sequential(child, Blur(stride))
                setattr(module, name, new)
                sites += 1
            elif replace_maxpools and isinstance(child, nn.MaxPool2d):
                stride = _pair(child.stride if child.stride is not None
                               else child.kernel_size)
                pool = nn.MaxPool2d(child.kernel_size, 1, child.padding,
                                    child.dilation, ceil_mode=child.ceil_mode)
                setattr(module, name, nn.Sequential(pool, Blur(stride)))
                sites += 1
    return sites


def _ghost_forward(ghost_batch_size):
    def forward(self, x):
        # As nn.BatchNorm's forward: num_batches_tracked counts calls.
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
        if not self.training:
            return F.batch_norm(x, self.running_mean, self.running_var,
                                self.weight, self.bias, False, self.momentum,
                                self.eps)
        # Composer's ghost batches: torch.chunk into ceil(B / G) pieces.
        num_chunks = math.ceil(x.shape[0] / ghost_batch_size)
        chunks = x.chunk(num_chunks, 0)
        momentum = self.momentum / num_chunks
        return torch.cat([
            F.batch_norm(chunk, self.running_mean, self.running_var,
                         self.weight, self.bias, True, momentum, self.eps)
            for chunk in chunks])
    return forward


def ghost_batchnorm(model, ghost_batch_size=32):
    """Every BatchNorm normalizes training batches in ceil(B /
    ghost_batch_size) chunks (torch.chunk, as Composer), running statistics
    updated per chunk with momentum / that number; eval is plain BN."""
    sites = 0
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.forward = types.MethodType(_ghost_forward(ghost_batch_size),
                                              module)
            sites += 1
    return sites


def layers_in_order(model, example=None):
    """Modules owning parameters in the order Composer freezes them: the
    order a forward on `example` first calls them, ties (modules the forward
    does not call) broken by definition order (state_dict order)."""
    owners = []
    for name, _ in model.named_parameters():
        owner = name.rpartition(".")[0]
        if owner not in owners:
            owners.append(owner)
    if example is None:
        return owners
    called = []
    hooks = [module.register_forward_pre_hook(
                 lambda module, args, name=name: called.append(name))
             for name, module in model.named_modules()
             if name in owners]
    training = model.training
    try:
        with torch.no_grad():
            model.eval()(example)
    finally:
        model.train(training)
        for hook in hooks:
            hook.remove()
    first_calls = list(dict.fromkeys(called))
    return first_calls + [owner for owner in owners if owner not in first_calls]


def freeze_layers(model, num_layers=0, example=None):
    """requires_grad=False on the parameters of the first num_layers layers
    (never the last), in layers_in_order's order."""
    layers = layers_in_order(model, example)
    frozen = set(layers[:min(num_layers, len(layers) - 1)])
    sites = 0
    for name, param in model.named_parameters():
        if name.rpartition(".")[0] in frozen:
            param.requires_grad_(False)
            sites += 1
    return sites


def channels_last(model):
    """4-D parameters stored channels_last, 4-D inputs converted once at
    entry."""
    model.to(memory_format=torch.channels_last)
    inner = model.forward

    def forward(x):
        if x.dim() == 4:
            x = x.contiguous(memory_format=torch.channels_last)
        return inner(x)

    model.forward = forward
    return sum(p.dim() == 4 for p in model.parameters())


class SqueezeExcite(nn.Module):
    def __init__(self, channels, latent):
        super().__init__()
        self.fc1 = nn.Linear(channels, latent, bias=False)
        self.fc2 = nn.Linear(latent, channels, bias=False)

    def forward(self, x):
        gate = torch.sigmoid(self.fc2(torch.relu(self.fc1(x.mean((2, 3))))))
        return x * gate[:, :, None, None]


def squeeze_excite(model, latent_channels=64, min_channels=128,
                   candidate_state=None):
    """An SE block after each Conv2d with min(in, out) >= min_channels; its
    weights are taken from candidate_state (<conv>.se.fc{1,2}.weight) so
    outputs can be compared."""
    sites = 0
    names = {module: name for name, module in model.named_modules()}
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if not isinstance(child, nn.Conv2d):
                continue
            if min(child.in_channels, child.out_channels) < min_channels:
                continue
            channels = child.out_channels
            latent = (int(latent_channels) if latent_channels >= 1
                      else int(latent_channels * channels))
            se = SqueezeExcite(channels, latent)
            prefix = names[child] + ".se."
            if candidate_state is not None:
                with torch.no_grad():
                    se.fc1.weight.copy_(candidate_state[prefix + "fc1.weight"])
                    se.fc2.weight.copy_(candidate_state[prefix + "fc2.weight"])
            setattr(module, name, nn.Sequential(child, se))
            sites += 1
    return sites


def _standardized(weight):
    """Composer's _standardize_weights: biased variance and mean over every
    dimension but the output channels."""
    var, mean = torch.var_mean(weight, dim=list(range(1, weight.dim())),
                               keepdim=True, unbiased=False)
    return (weight - mean) / torch.sqrt(var + 1e-10)


def _standardized_conv_forward(self, x):
    return self._conv_forward(x, _standardized(self.weight), self.bias)


def weight_standardization(model, n_last_layers_ignore=0, example=None):
    """Every Conv1d/2d/3d convolves with its weight standardized per output
    channel, recomputed each forward, except the last n_last_layers_ignore
    convolutions in the order the forward first calls them (Composer's
    order, from its symbolic trace). A forward override rather than
    Composer's parametrization, which would rename the weights in the
    state_dict."""
    convs = {name for name, module in model.named_modules()
             if isinstance(module, (nn.Conv1d, nn.Conv2d, nn.Conv3d))}
    order = [name for name in layers_in_order(model, example) if name in convs]
    standardized = order[:max(len(order) - n_last_layers_ignore, 0)]
    for name in standardized:
        conv = model.get_submodule(name)
        conv.forward = types.MethodType(_standardized_conv_forward, conv)
    return len(standardized)


def _truncated_svd(matrix, rank):
    """The `rank` leading singular triplets of `matrix` as composer-opt's
    exporter computes them (lib/TorchScript/State.cpp): in float64, U_r from
    the eigenvectors of the smaller Gram matrix, the other side from W and
    S_r (LAPACK's SVD where the r-th singular value is below 1e-6 of the
    largest), each pair's sign fixed so the largest entry of U's column is
    positive. Checked against the Eckart-Young optimum from LAPACK's
    singular values, so the pair is the best rank-r approximation however
    it is computed."""
    w = matrix.detach().double()
    wide = w.shape[0] <= w.shape[1]
    values, vectors = torch.linalg.eigh(w @ w.t() if wide else w.t() @ w)
    s = values.flip(0)[:rank].clamp(min=0).sqrt()
    basis = vectors.flip(1)[:, :rank]
    if s[0] > 0 and s[rank - 1] > 1e-6 * s[0]:
        other = (w.t() @ basis if wide else w @ basis) / s
        u, vh = (basis, other.t()) if wide else (other, basis.t())
    else:
        u, s, vh = torch.linalg.svd(w, full_matrices=False)
        u, s, vh = u[:, :rank], s[:rank], vh[:rank]
    largest = u.gather(0, u.abs().argmax(0, keepdim=True))
    signs = 1 - 2 * (largest < 0).double()
    u, vh = u * signs, vh * signs.t()
    singular = torch.linalg.svdvals(w)
    optimum = singular[rank:].square().sum()
    error = (w - (u * s) @ vh).square().sum()
    scale = singular.square().sum()
    assert (error - optimum).abs() <= 1e-9 * scale, \
        f"rank-{rank} error {error.item()}, optimum {optimum.item()}"
    return u, s, vh


def _svd_factors(weight, rank):
    """The best rank-r pair for weight W (out, fan_in) = U S V^T
    (_truncated_svd): sqrt(S_r) V_r^T shaped (r, W's other dims) and
    U_r sqrt(S_r) shaped (out, r, 1...)."""
    out = weight.shape[0]
    u, s, vh = _truncated_svd(weight.reshape(out, -1), rank)
    root = s.sqrt()
    first = (root[:, None] * vh).reshape(rank, *weight.shape[1:])
    second = (u * root).reshape(out, rank, *[1] * (weight.dim() - 2))
    return first.to(weight.dtype), second.to(weight.dtype)


class _Factorized(nn.Module):
    """Factorize's pair under the names composer-factorize gives: factor0
    (in -> r, no bias), factor1 (r -> out) with the original bias, both from
    the SVD of the original weight, which is kept, frozen and unused."""

    def __init__(self, layer, rank, first, second):
        super().__init__()
        self.weight = nn.Parameter(layer.weight.detach().clone(),
                                   requires_grad=False)
        self.bias = layer.bias
        self.factor0, self.factor1 = first, second
        with torch.no_grad():
            pair = _svd_factors(layer.weight, rank)
            self.factor0.weight.copy_(pair[0])
            self.factor1.weight.copy_(pair[1])

    def forward(self, x):
        if isinstance(self.factor1, nn.Conv2d):
            return F.conv2d(self.factor0(x), self.factor1.weight, self.bias)
        return F.linear(self.factor0(x), self.factor1.weight, self.bias)


def factorize(model, factorize_convs=1, factorize_linears=1, min_channels=256,
              latent_channels=0.25, min_features=256, latent_features=128,
              force=0):
    """Composer's Factorize: Conv2d (groups 1) and Linear layers with
    min(in, out) >= min_* become a rank-r pair where it cuts MACs (or
    always, with force); r as Composer's latent size (an integer if >= 1,
    else a fraction of min(in, out), at least 1), capped at the weight's
    rank min(out, fan_in). Initialized from the SVD of the weight."""
    def rank_for(latent, minimum, in_size, out_size, fan_in):
        if min(in_size, out_size) < minimum:
            return None
        rank = (int(latent) if latent >= 1
                else max(1, int(latent * min(in_size, out_size))))
        rank = min(rank, out_size, fan_in)
        if not force and rank * (fan_in + out_size) >= fan_in * out_size:
            return None
        return rank

    sites = 0
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if (factorize_convs and isinstance(child, nn.Conv2d)
                    and child.groups == 1):
                fan_in = child.weight[0].numel()
                rank = rank_for(latent_channels, min_channels, child.in_channels,
                                child.out_channels, fan_in)
                if rank is None:
                    continue
                pair = _Factorized(
                    child, rank,
                    nn.Conv2d(child.in_channels, rank, child.kernel_size,
                              child.stride, child.padding, child.dilation,
                              bias=False),
                    nn.Conv2d(rank, child.out_channels, 1, bias=False))
            elif factorize_linears and isinstance(child, nn.Linear):
                rank = rank_for(latent_features, min_features, child.in_features,
                                child.out_features, child.in_features)
                if rank is None:
                    continue
                pair = _Factorized(
                    child, rank, nn.Linear(child.in_features, rank, bias=False),
                    nn.Linear(rank, child.out_features, bias=False))
            else:
                continue
            setattr(module, name, pair)
            sites += 1
    return sites


_GLU_ACTIVATIONS = (nn.ReLU, nn.GELU, nn.SiLU, nn.Sigmoid, nn.Tanh,
                    nn.Hardswish, nn.Mish, nn.ELU, nn.SELU, nn.CELU,
                    nn.LeakyReLU, nn.Softplus, nn.ReLU6, nn.Hardtanh,
                    nn.Hardsigmoid)


def _features(layer):
    """(in, out) of an nn.Linear or of GPT-2's Conv1D (weight [in, out])."""
    if isinstance(layer, nn.Linear):
        return layer.in_features, layer.out_features
    return tuple(layer.weight.shape)


def _is_projection(module):
    return isinstance(module, nn.Linear) or type(module).__name__ == "Conv1D"


# Feed-forwards laid out as attributes rather than an nn.Sequential:
# (module holding W1 and the activation, W1, activation, module holding W2,
# W2), as Hugging Face's BERT and GPT-2 name them, relative to one parent.
_NAMED_FEED_FORWARDS = (
    ("intermediate", "dense", "intermediate_act_fn", "output", "dense"),
    ("", "c_fc", "act", "", "c_proj"),
)


def _named_feed_forwards(model):
    """(holder of W1, W1's name, holder of the activation, its name) for each
    feed-forward of _NAMED_FEED_FORWARDS."""
    found = []
    for parent in list(model.modules()):
        for first, w1, act, second, w2 in _NAMED_FEED_FORWARDS:
            holder = getattr(parent, first, None) if first else parent
            other = getattr(parent, second, None) if second else parent
            if not (isinstance(holder, nn.Module)
                    and isinstance(other, nn.Module)):
                continue
            if (_is_projection(getattr(holder, w1, None))
                    and isinstance(getattr(holder, act, None), nn.Module)
                    and _is_projection(getattr(other, w2, None))):
                found.append((holder, w1, act))
    return found


class _GatedLinear(nn.Module):
    """Composer's gated unit in place of a feed-forward's first linear W1,
    under the names composer-glu gives: act(gated_layer(x)) *
    non_gated_layer(x); W1's parameters kept, frozen and unused."""

    def __init__(self, linear, act, gated_layer_bias, non_gated_layer_bias):
        super().__init__()
        self.weight = linear.weight.requires_grad_(False)
        self.bias = (linear.bias.requires_grad_(False)
                     if linear.bias is not None else None)
        self.in_features, self.out_features = _features(linear)
        self.gated_layer = nn.Linear(self.in_features, self.out_features,
                                     bias=bool(gated_layer_bias))
        self.non_gated_layer = nn.Linear(self.in_features, self.out_features,
                                         bias=bool(non_gated_layer_bias))
        self.act = act

    def forward(self, x):
        return self.act(self.gated_layer(x)) * self.non_gated_layer(x)


def _gate(model, names, holder, w1_name, act_name, gated_layer_bias,
          non_gated_layer_bias, candidate_state):
    """Makes holder.<w1_name> a _GatedLinear of holder.<act_name>, which
    becomes an Identity; new parameters from candidate_state."""
    w1 = getattr(holder, w1_name)
    unit = _GatedLinear(w1, getattr(holder, act_name), gated_layer_bias,
                        non_gated_layer_bias)
    if candidate_state is not None:
        prefix = names[w1] + "."
        with torch.no_grad():
            for key, value in unit.named_parameters():
                if not key.startswith(("gated_layer.", "non_gated_layer.")):
                    continue
                new = candidate_state[prefix + key]
                bound = 1 / unit.in_features ** 0.5
                if not (new.abs().max() <= bound
                        and new.std() > 0.4 * bound):
                    raise ValueError(
                        f"{prefix + key} is not nn.Linear's initialization")
                value.copy_(new)
    setattr(holder, w1_name, unit)
    setattr(holder, act_name, nn.Identity())


def glu(model, gated_layer_bias=0, non_gated_layer_bias=0,
        candidate_state=None):
    """Gated linear units (Composer's BERTGatedFFOutput) in each
    feed-forward nn.Sequential(..., Linear W1, activation, [Dropout], Linear
    W2, ...), and each of Hugging Face's BERT and GPT-2 feed-forwards
    (_NAMED_FEED_FORWARDS, W1 an nn.Linear or a Conv1D): W1 becomes a
    _GatedLinear, the activation an Identity (the dropout stays between the
    gated product and W2, which is unchanged); a linear that is already a
    unit's W2 is not also a W1. The new parameters
    are taken from candidate_state, after checking they are nn.Linear's
    initialization (uniform in +-1/sqrt(in_features))."""
    sites = 0
    names = {module: name for name, module in model.named_modules()}
    for sequential in [m for m in model.modules()
                       if isinstance(m, nn.Sequential)]:
        children = list(sequential.named_children())
        last_w2 = None
        for i, (name, w1) in enumerate(children):
            if not isinstance(w1, nn.Linear) or w1 is last_w2:
                continue
            rest = [module for _, module in children[i + 1:i + 4]]
            if not rest or not isinstance(rest[0], _GLU_ACTIVATIONS):
                continue
            if len(rest) > 1 and isinstance(rest[1], nn.Dropout):
                rest = rest[:1] + rest[2:]
            if len(rest) < 2 or not isinstance(rest[1], nn.Linear):
                continue
            last_w2 = rest[1]
            _gate(model, names, sequential, name, children[i + 1][0],
                  gated_layer_bias, non_gated_layer_bias, candidate_state)
            sites += 1
    for holder, w1, act in _named_feed_forwards(model):
        _gate(model, names, holder, w1, act, gated_layer_bias,
              non_gated_layer_bias, candidate_state)
        sites += 1
    return sites


METHODS = {"blurpool": blurpool, "squeeze_excite": squeeze_excite, "ghost_batchnorm": ghost_batchnorm,
           "freeze_layers": freeze_layers, "channels_last": channels_last,
           "weight_standardization": weight_standardization,
           "factorize": factorize,
           "glu": glu}


def _stochastic_depth_forward(self, x):
    """torchvision's BasicBlock/Bottleneck under stochastic depth, as
    composer-stochastic-depth makes it: block mode draws torch.rand(()) and
    a dropped block returns relu(shortcut) without computing its branch;
    sample mode (DropPath) masks samples of the branch by rand([B, 1, ...]).
    Eval is the expectation. Drops are counted in self.sd_drops."""
    rate = self.sd_rate
    identity = x if self.downsample is None else self.downsample(x)
    if self.sd_method == "block" and self.training:
        if bool(torch.rand(()) < rate):
            self.sd_drops += 1
            return F.relu(identity)
    out = self.relu(self.bn1(self.conv1(x)))
    out = self.bn2(self.conv2(out))
    if hasattr(self, "conv3"):
        out = self.bn3(self.conv3(self.relu(out)))
    if self.sd_method == "block" and not self.training:
        out = out * (1.0 - rate)
    if self.sd_method == "sample" and self.training:
        keep = 1.0 - rate
        shape = (out.shape[0],) + (1,) * (out.dim() - 1)
        mask = (torch.rand(shape, dtype=out.dtype, device=out.device)
                < keep).type_as(out)
        self.sd_drops += int((mask == 0).sum())
        out = out * (mask / max(keep, 1e-12))
    return self.relu(out + identity)


def stochastic_depth(model, drop_rate=0.2, stochastic_method="block",
                     uniform=0):
    """Stochastic depth on torchvision ResNet blocks (BasicBlock,
    Bottleneck), block i of N in forward order at rate (i+1)/N * drop_rate,
    or drop_rate if `uniform`. Returns the number of blocks."""
    from torchvision.models.resnet import BasicBlock, Bottleneck
    blocks = [m for m in model.modules()
              if isinstance(m, (BasicBlock, Bottleneck))]
    for index, block in enumerate(blocks):
        block.sd_rate = (drop_rate if uniform
                         else drop_rate * (index + 1) / len(blocks))
        block.sd_method = stochastic_method
        block.sd_drops = 0
        block.forward = types.MethodType(_stochastic_depth_forward, block)
    return len(blocks)


METHODS["stochastic_depth"] = stochastic_depth
METHODS["stochastic_depth_sample"] = (
    lambda model, **options: stochastic_depth(
        model, stochastic_method="sample", **options))


class GyroDropout(nn.Module):
    """Composer's GyroDropoutLayer with composer-gyro-dropout's state: the
    masks drawn at export, the active indices and the step counter as
    buffers, the period shared by the model. Composer's formula,
    repeat_interleave of the active masks, where tau divides the batch;
    otherwise sample s takes active mask floor(s * t / B), t = min(tau, B).
    The mask runs over the last dimension, broadcast over the middle ones."""

    def __init__(self, p, masks, selected, step, holder):
        super().__init__()
        self.p = p
        self.register_buffer("preselect_masks", masks.clone())
        self.register_buffer("selected_indices", selected.clone())
        self.register_buffer("training_step", step.clone())
        # Not a submodule: the model owns the period's holder.
        object.__setattr__(self, "holder", holder)

    def forward(self, x):
        if not self.training:
            return x
        sigma, tau = self.preselect_masks.shape[0], self.selected_indices.numel()
        if self.training_step % max(int(self.holder.period), 1) == 0:
            self.selected_indices.copy_(torch.randint(
                sigma, (tau,), device=self.selected_indices.device))
        self.training_step += 1
        batch = x.shape[0]
        picked = self.preselect_masks[self.selected_indices]
        if batch >= tau and batch % tau == 0:
            mask = torch.repeat_interleave(picked, batch // tau, dim=0)
        else:
            rows = (torch.arange(batch, device=x.device) * min(tau, batch)
                    // batch)
            mask = picked[rows]
        mask = mask.view((batch,) + (1,) * (x.dim() - 2) + (-1,))
        return x * mask * (1 / (1 - self.p))


def gyro_dropout(model, p=0.5, traced=0, candidate_state=None):
    """GyroDropout in place of each nn.Dropout the pass replaced (those with
    masks in candidate_state), given the candidate's masks, indices,
    counters and period. A traced model's other dropouts were fixed in eval
    mode when it was traced: with `traced`, they become identities."""
    holder = nn.Module()
    holder.register_buffer(
        "period", candidate_state["_composer_gyro_dropout.period"].clone())
    sites = 0
    names = {module: name for name, module in model.named_modules()}
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if not isinstance(child, nn.Dropout):
                continue
            prefix = names[child] + "."
            if prefix + "preselect_masks" not in candidate_state:
                if traced:
                    setattr(module, name, nn.Identity())
                continue
            setattr(module, name, GyroDropout(
                p, candidate_state[prefix + "preselect_masks"],
                candidate_state[prefix + "selected_indices"],
                candidate_state[prefix + "training_step"], holder))
            sites += 1
    model.add_module("_composer_gyro_dropout", holder)
    return sites


METHODS["gyro_dropout"] = gyro_dropout


def _alibi_slopes(heads):
    """Press et al.'s head slopes, as Composer's _get_alibi_head_slopes."""
    def power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(heads).is_integer():
        return power_of_2(heads)
    closest = 2 ** math.floor(math.log2(heads))
    return (power_of_2(closest)
            + _alibi_slopes(2 * closest)[0::2][:heads - closest])


def _alibi_attention_forward(self, x):
    """models.CausalSelfAttention with Composer's ALiBi: m_h * j added to the
    scores of key j (Composer's form; under the causal mask the same as
    -m_h |i - j| up to a per-row shift, which the softmax ignores), and the
    causal mask built for the sequence length."""
    b, t, c = x.size()
    # (b, t, c) each, to (b, heads, t, c / heads).
    q, k, v = (part.view(b, t, self.heads, c // self.heads).transpose(1, 2)
               for part in self.qkv(x).split(c, dim=2))
    att = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
    slopes = torch.tensor(_alibi_slopes(self.heads))
    att = att + slopes.view(-1, 1, 1) * torch.arange(t).view(1, 1, t)
    causal = torch.tril(torch.ones(t, t, dtype=torch.bool, device=x.device))
    att = att.masked_fill(~causal, float("-inf"))
    att = self.attn_drop(F.softmax(att, dim=-1))
    y = torch.matmul(att, v).transpose(1, 2).contiguous().view(b, t, c)
    return self.resid_drop(self.proj(y))


def _alibi_gpt_forward(self, idx):
    """models.GPT without its position embedding."""
    return self.head(self.ln_f(self.blocks(self.drop(self.tok(idx)))))


def _alibi_bias(heads, queries, keys):
    """-m_h |i - j| for queries the last Tq of Tk positions, [H, Tq, Tk]."""
    slopes = torch.tensor(_alibi_slopes(heads))
    i = torch.arange(keys - queries, keys, dtype=torch.float32)
    j = torch.arange(keys, dtype=torch.float32)
    return -slopes.view(-1, 1, 1) * (j[None, :] - i[:, None]).abs()


def _alibi_hf_gpt2_attn(self, query, key, value):
    """transformer_layouts.GPT2Attention._attn with ALiBi: the bias added
    before the causal mask, which is built for the sequence length (the
    buffer stays)."""
    scores = torch.matmul(query, key.transpose(-1, -2))
    scores = scores / (value.size(-1) ** 0.5)
    tq, tk = query.size(-2), key.size(-2)
    scores = scores + _alibi_bias(self.num_heads, tq, tk)
    causal = torch.ones(tk, tk, dtype=torch.bool).tril()[tk - tq:tk, :tk]
    scores = torch.where(causal, scores, self.masked_bias.to(scores.dtype))
    probs = self.attn_dropout(F.softmax(scores, dim=-1))
    return torch.matmul(probs, value)


def _alibi_bert_attention_forward(self, hidden_states, attention_mask):
    """transformer_layouts.BertSelfAttention with ALiBi's symmetric bias
    (Composer's BERT form) added to the scores before the padding mask."""
    q = self.transpose_for_scores(self.query(hidden_states))
    k = self.transpose_for_scores(self.key(hidden_states))
    v = self.transpose_for_scores(self.value(hidden_states))
    scores = torch.matmul(q, k.transpose(-1, -2))
    scores = scores / math.sqrt(self.attention_head_size)
    t = hidden_states.size(1)
    scores = scores + attention_mask + _alibi_bias(self.num_attention_heads, t, t)
    probs = self.dropout(F.softmax(scores, dim=-1))
    context = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
    return context.view(context.size(0), context.size(1), self.all_head_size)


def _bert_embeddings_without_positions(self, input_ids):
    # Composer's BERT surgery enlarges the zero token-type buffer to the
    # longest sequence; zeros of the sequence length are the same.
    seq_length = input_ids.size(1)
    token_type_ids = torch.zeros(
        1, seq_length, dtype=torch.long, device=input_ids.device).expand(
            input_ids.size(0), seq_length)
    embeddings = (self.word_embeddings(input_ids)
                  + self.token_type_embeddings(token_type_ids))
    return self.dropout(self.LayerNorm(embeddings))


def _alibi_layouts(model):
    """ALiBi by module surgery on transformer_layouts' HF GPT-2 and BERT:
    the position table frozen and out of the forward, each attention
    biased. None for another model."""
    import transformer_layouts as layouts
    if isinstance(model, layouts.HFGPT2):
        model.wpe.weight.requires_grad_(False)
        model.wpe.forward = lambda positions: torch.zeros(())
        attention, method, forward = (layouts.GPT2Attention, "_attn",
                                      _alibi_hf_gpt2_attn)
    elif isinstance(model, layouts.Bert):
        embeddings = model.embeddings
        embeddings.position_embeddings.weight.requires_grad_(False)
        embeddings.forward = types.MethodType(
            _bert_embeddings_without_positions, embeddings)
        attention, method, forward = (layouts.BertSelfAttention, "forward",
                                      _alibi_bert_attention_forward)
    else:
        return None
    sites = 0
    for module in model.modules():
        if isinstance(module, attention):
            setattr(module, method, types.MethodType(forward, module))
            sites += 1
    return sites


def alibi(model):
    """ALiBi as Composer applies it to GPT-2, on models.GPT: the position
    embedding leaves the forward (its weight stays, frozen) and each
    attention adds its heads' linear biases. Returns the attention count."""
    import models
    sites = _alibi_layouts(model)
    if sites is not None:
        return sites
    model.pos.weight.requires_grad_(False)
    model.forward = types.MethodType(_alibi_gpt_forward, model)
    sites = 0
    for module in model.modules():
        if isinstance(module, models.CausalSelfAttention):
            module.forward = types.MethodType(_alibi_attention_forward, module)
            sites += 1
    return sites


METHODS["alibi"] = alibi
