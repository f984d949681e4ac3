"""What diffusers v0.38.0 needs beyond Debian's torch 1.13 (as the golden data
was made, see shared/golden/README.md), installed before diffusers is imported.

None of it changes diffusers' code. Attention becomes plain math, which is
also what ditserve's LibTorch 1.13 attention computes, so both sides time the
same kernels; in bfloat16 and float16 it accumulates in float32, as torch
2.x's attention kernels do.
"""

import importlib.machinery
import math
import sys
import types

import torch
import torch.nn.functional as F


def _scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                  is_causal=False, scale=None, enable_gqa=False):
    del dropout_p, enable_gqa  # inference only, no grouped-query models here
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    # torch 2.x's kernels accumulate bfloat16/float16 attention in float32.
    out_dtype = query.dtype
    query, key, value = query.float(), key.float(), value.float()
    if attn_mask is not None and attn_mask.is_floating_point():
        attn_mask = attn_mask.float()
    scores = query @ key.transpose(-2, -1) * scale
    if is_causal:
        causal = torch.ones(scores.shape[-2:], dtype=torch.bool).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    return (scores.softmax(dim=-1) @ value).to(out_dtype)


class _RMSNorm(torch.nn.Module):
    """torch >= 2.4 semantics: x * rsqrt(mean(x^2) + eps) * weight."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.weight = (torch.nn.Parameter(torch.ones(self.normalized_shape, device=device,
                                                     dtype=dtype))
                       if elementwise_affine else None)

    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        eps = torch.finfo(x.dtype).eps if self.eps is None else self.eps
        # Computed in float32 whatever the input's dtype, as torch 2.x does.
        upcast = x.float()
        x = (upcast * torch.rsqrt(upcast.pow(2).mean(dims, keepdim=True) + eps)).type_as(x)
        return x * self.weight if self.weight is not None else x


def _stub(name, **attributes):
    module = types.ModuleType(name)
    module.__spec__ = importlib.machinery.ModuleSpec(name, None)
    module.__dict__.update(attributes)
    sys.modules[name] = module
    return module


def install():
    F.scaled_dot_product_attention = _scaled_dot_product_attention
    torch.nn.RMSNorm = _RMSNorm
    for device in ("xpu", "mps"):
        if not hasattr(torch, device):
            # Only named in diffusers' device tables: every function a no-op.
            setattr(torch, device, _stub(f"torch.{device}", is_available=lambda: False,
                                         device_count=lambda: 0,
                                         __getattr__=lambda _: lambda *_, **__: None))
    if not hasattr(torch, "compiler"):
        torch.compiler = _stub("torch.compiler", disable=lambda fn=None, **_: fn or (lambda f: f),
                               is_compiling=lambda: False, is_dynamo_compiling=lambda: False)
    torch.distributed._functional_collectives = _stub("torch.distributed._functional_collectives")
    torch.distributed.device_mesh = _stub("torch.distributed.device_mesh", DeviceMesh=object)
    for name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                 *(f"uint{n}" for n in range(1, 8)), "uint16", "uint32", "uint64",
                 *(f"int{n}" for n in range(1, 8))):
        if not hasattr(torch, name):
            setattr(torch, name, object())
