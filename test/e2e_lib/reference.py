"""The speedup methods written directly in PyTorch, by module surgery on an
eager model, as METHODS.md states them: the references the passes' output
is compared with."""
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
        chunks = x.split(ghost_batch_size, 0)
        momentum = self.momentum / len(chunks)
        return torch.cat([
            F.batch_norm(chunk, self.running_mean, self.running_var,
                         self.weight, self.bias, True, momentum, self.eps)
            for chunk in chunks])
    return forward


def ghost_batchnorm(model, ghost_batch_size=32):
    """Every BatchNorm normalizes training batches in chunks of
    ghost_batch_size, running statistics updated per chunk with momentum /
    chunks; eval is plain BN."""
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


METHODS = {"blurpool": blurpool, "squeeze_excite": squeeze_excite, "ghost_batchnorm": ghost_batchnorm,
           "freeze_layers": freeze_layers, "channels_last": channels_last}
