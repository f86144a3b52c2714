"""F.multi_head_attention_forward and the mask helpers torch.nn's attention modules share:
project the query, key and value, split them into heads, attend (with bmm and softmax when
the weights are wanted, scaled_dot_product_attention otherwise), join the heads and project
out, in the steps torch.nn.functional takes, so the graph and the numbers are torch's.

Made of composite and spec ops only (no torch.nn.functional import), so that
runtime/nn/functional.py can re-export it without an import cycle.
"""

from __future__ import annotations

import math
from typing import Any

from generated import ops
from runtime import composite, dtypes, factories
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller

__all__ = ["multi_head_attention_forward"]


# -- masks --------------------------------------------------------------------------------------

def _canonical_mask(mask: Tensor | None, mask_name: str, other_type: Any, other_name: str,
                    target_type: Any, check_other: bool = True) -> Tensor | None:
    """A bool mask as an additive float one (-inf where True); a float mask as it is."""
    if mask is None:
        return None
    is_float = mask.dtype.is_floating_point
    if mask.dtype is not dtypes.bool_ and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warn_at_caller(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                       "Use same type for both instead.")
    if is_float:
        return mask
    return factories.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))


def _none_or_dtype(input: Any) -> Any:
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _mha_shape_check(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Any,
                     attn_mask: Any, num_heads: int) -> bool:
    """Whether the call is batched (3-D query) or not (2-D); torch's errors for other ranks."""
    if query.dim() not in (2, 3):
        raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.dim()}-D query tensor")
    batched = query.dim() == 3
    kind, rank = ("batched (3-D)", 3) if batched else ("unbatched (2-D)", 2)
    if key.dim() != rank or value.dim() != rank:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {rank}-D but "
                             f"found {key.dim()}-D and {value.dim()}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != rank - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{rank - 1}-D but found {key_padding_mask.dim()}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or "
                                 f"3-D but found {attn_mask.dim()}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                 f"{attn_mask.shape}")
    return batched


def _check_attn_mask(attn_mask: Tensor, target: int, source: int, heads: int) -> Tensor:
    """The attention mask as (1 or N * heads, L, S), after torch's shape checks."""
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (target, source):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should "
                               f"be {(target, source)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if tuple(attn_mask.shape) != (heads, target, source):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                               f"be {(heads, target, source)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


# -- the projections ----------------------------------------------------------------------------

def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor,
                          b: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """q, k, v through one (3E, E) weight: one matmul for self-attention, two when key and
    value are the same tensor, three otherwise (the graph torch records for each case)."""
    embed = q.shape[-1]
    if k is v and q is k:
        packed = composite.linear(q, w, b).unflatten(-1, (3, embed)).unsqueeze(0)
        packed = packed.transpose(0, -2).squeeze(-2).contiguous()
        return packed[0], packed[1], packed[2]
    if k is v:
        w_q, w_kv = w.split([embed, embed * 2])
        b_q, b_kv = (None, None) if b is None else b.split([embed, embed * 2])
        kv = composite.linear(k, w_kv, b_kv).unflatten(-1, (2, embed)).unsqueeze(0)
        kv = kv.transpose(0, -2).squeeze(-2).contiguous()
        return composite.linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return (composite.linear(q, w_q, b_q), composite.linear(k, w_k, b_k),
            composite.linear(v, w_v, b_v))


def _in_projection(q: Tensor, k: Tensor, v: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor,
                   b: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """q, k, v through their own weights (kdim / vdim differ from embed_dim)."""
    e_q, e_k, e_v = q.shape[-1], k.shape[-1], v.shape[-1]
    biases = (None, None, None) if b is None else b.chunk(3)
    for name, weight, shape in (("query", w_q, (e_q, e_q)), ("key", w_k, (e_q, e_k)),
                                ("value", w_v, (e_q, e_v))):
        if tuple(weight.shape) != shape:
            raise AssertionError(f"expecting {name} weights shape of {shape}, but got "
                                 f"{weight.shape}")
    for name, bias in zip(("query", "key", "value"), biases, strict=True):
        if bias is not None and tuple(bias.shape) != (e_q,):
            raise AssertionError(f"expecting {name} bias shape of {(e_q,)}, but got "
                                 f"{bias.shape}")
    return (composite.linear(q, w_q, biases[0]), composite.linear(k, w_k, biases[1]),
            composite.linear(v, w_v, biases[2]))


def _project(query: Tensor, key: Tensor, value: Tensor, in_proj_weight: Any, in_proj_bias: Any,
             separate: bool, weights: tuple) -> tuple[Tensor, Tensor, Tensor]:
    if not separate:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        return _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    for name, weight in zip("qkv", weights, strict=True):
        if weight is None:
            raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is "
                                 "None")
    return _in_projection(query, key, value, *weights, in_proj_bias)


def _pad_last(mask: Tensor | None) -> Tensor | None:
    """A mask with one more (unmasked) source position: the added bias or zero key."""
    return None if mask is None else composite.pad(mask, (0, 1))


def _add_bias_kv(k: Tensor, v: Tensor, bias_k: Any, bias_v: Any, batch: int, masks: list,
                 static: tuple) -> tuple[Tensor, Tensor]:
    if bias_k is not None and bias_v is not None:
        if static[0] is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static[1] is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = ops.cat([k, bias_k.repeat(1, batch, 1)])
        v = ops.cat([v, bias_v.repeat(1, batch, 1)])
        masks[:] = [_pad_last(mask) for mask in masks]
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    return k, v


def _heads(x: Tensor, static: Tensor | None, name: str, batch_heads: int,
           head_dim: int) -> Tensor:
    """(S, N, E) as (N * heads, S, head_dim), or the caller's static key / value."""
    if static is None:
        return x.view(x.shape[0], batch_heads, head_dim).transpose(0, 1)
    if static.shape[0] != batch_heads:
        raise AssertionError(f"expecting static_{name}.size(0) of {batch_heads}, but got "
                             f"{static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting static_{name}.size(2) of {head_dim}, but got "
                             f"{static.shape[2]}")
    return static


def _with_zero_attn(k: Tensor, v: Tensor, masks: list) -> tuple[Tensor, Tensor]:
    """A zero key and value appended to every sequence: a position attention may rest on."""
    shape = (k.shape[0], 1, k.shape[2])
    k = ops.cat([k, factories.zeros(shape, dtype=k.dtype)], 1)
    v = ops.cat([v, factories.zeros(shape, dtype=v.dtype)], 1)
    masks[:] = [_pad_last(mask) for mask in masks]
    return k, v


def _merge_padding(attn_mask: Any, key_padding_mask: Any, batch: int, heads: int,
                   source: int) -> Any:
    if key_padding_mask is None:
        return attn_mask
    for dim, size in enumerate((batch, source)):
        if key_padding_mask.shape[dim] != size:
            raise AssertionError(f"Expected key_padded_mask.shape[{dim}] to be {size}, but got "
                                 f"{key_padding_mask.shape[dim]}")
    padding = key_padding_mask.view(batch, 1, 1, source).expand(-1, heads, -1, -1)
    padding = padding.reshape(batch * heads, 1, source)
    return padding if attn_mask is None else attn_mask + padding


# -- F.multi_head_attention_forward -------------------------------------------------------------

def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
        out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """Attention of `query` (L, N, E) over `key` / `value` (S, N, ·) in num_heads heads:
    project, split the heads, softmax(q kᵀ / √head_dim + masks) v, join, project out. Returns
    the output and, with need_weights, the attention weights (averaged over the heads)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(multi_head_attention_forward, (query, key, value,
                                embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k,
                                bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                training, key_padding_mask, need_weights, attn_mask,
                                use_separate_proj_weight, q_proj_weight, k_proj_weight,
                                v_proj_weight, static_k, static_v, average_attn_weights, is_causal),
                                {})
        if heard is not _modes.PASS:
            return heard
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:  # one sequence: a batch of one, squeezed again at the end
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    target, batch, embed_dim = query.shape
    source = key.shape[0]
    attn_mask, key_padding_mask, is_causal = _prepare_masks(
        attn_mask, key_padding_mask, is_causal, need_weights, query.dtype)
    head_dim = _check_dims(query, key, value, embed_dim_to_check, num_heads,
                           use_separate_proj_weight)
    q, k, v = _project(query, key, value, in_proj_weight, in_proj_bias,
                       use_separate_proj_weight, (q_proj_weight, k_proj_weight, v_proj_weight))
    if attn_mask is not None:
        attn_mask = _check_attn_mask(attn_mask, target, source, batch * num_heads)
    masks = [attn_mask, key_padding_mask]
    k, v = _add_bias_kv(k, v, bias_k, bias_v, batch, masks, (static_k, static_v))
    q = q.view(target, batch * num_heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, "k", batch * num_heads, head_dim)
    v = _heads(v, static_v, "v", batch * num_heads, head_dim)
    if add_zero_attn:
        k, v = _with_zero_attn(k, v, masks)
    source = k.shape[1]
    attn_mask = _merge_padding(masks[0], masks[1], batch, num_heads, source)
    dropout_p = dropout_p if training else 0.0
    shape = (target, batch, num_heads, source)
    if need_weights:
        output, weights = _attention_with_weights(q, k, v, attn_mask, dropout_p, is_causal,
                                                  shape)
        weights = weights.view(batch, num_heads, target, source)
        if average_attn_weights:
            weights = weights.mean(dim=1)
    else:
        output, weights = _attention(q, k, v, attn_mask, dropout_p, is_causal, shape), None
    output = composite.linear(output, out_proj_weight, out_proj_bias)
    output = output.view(target, batch, output.shape[1])
    if not batched:
        output = output.squeeze(1)
        weights = None if weights is None else weights.squeeze(0)
    return output, weights


def _prepare_masks(attn_mask: Any, key_padding_mask: Any, is_causal: bool, need_weights: bool,
                   dtype: Any) -> tuple[Any, Any, bool]:
    """Both masks as additive float masks, and whether the causal hint still holds."""
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        return None, None, True  # the hint alone tells scaled_dot_product_attention
    attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", dtype, False)
    if key_padding_mask is not None:
        is_causal = False  # the merged mask is no longer causal
    return attn_mask, key_padding_mask, is_causal


def _check_dims(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int,
                num_heads: int, separate: bool) -> int:
    embed_dim = query.shape[2]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if separate and key.shape[:2] != value.shape[:2]:
        raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                             f"value's {value.shape[:2]}")
    if not separate and key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    return head_dim


def _attention_with_weights(q: Tensor, k: Tensor, v: Tensor, attn_mask: Any, dropout_p: float,
                            is_causal: bool, shape: tuple) -> tuple[Tensor, Tensor]:
    """softmax(q kᵀ / √E + mask) v with bmm, keeping the weights for the caller."""
    target, batch, heads, _ = shape
    if is_causal and attn_mask is None:
        raise AssertionError("FIXME: is_causal not implemented for need_weights")
    q_scaled = q * math.sqrt(1.0 / float(q.shape[2]))
    if attn_mask is not None:
        weights = ops.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
    else:
        weights = ops.bmm(q_scaled, k.transpose(-2, -1))
    weights = composite.softmax(weights, dim=-1)
    if dropout_p > 0.0:
        weights = composite.dropout(weights, p=dropout_p)
    output = ops.bmm(weights, v).transpose(0, 1).reshape(target * batch, heads * q.shape[2])
    return output, weights


def _attention(q: Tensor, k: Tensor, v: Tensor, attn_mask: Any, dropout_p: float,
               is_causal: bool, shape: tuple) -> Tensor:
    """The same attention through scaled_dot_product_attention, without the weights."""
    target, batch, heads, source = shape
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(batch, heads, -1, source)
    head_dim = q.shape[2]
    q = q.view(batch, heads, target, head_dim)
    k = k.view(batch, heads, source, head_dim)
    v = v.view(batch, heads, source, head_dim)
    output = composite.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    return output.permute(2, 0, 1, 3).reshape(batch * target, heads * head_dim)
