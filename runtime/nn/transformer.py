"""Multi-head attention and the Transformer: MultiheadAttention with
F.multi_head_attention_forward, the encoder and decoder layers, their stacks and
nn.Transformer, as torch.nn builds them.

Everything is made of existing differentiable ops (linear, bmm, softmax,
scaled_dot_product_attention, layer_norm, dropout), so autograd flows through the pieces.
torch has fused fast paths for eval-mode inference without gradients; gradgen always takes
the path those fall back to, whose numbers agree with them to rounding.
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from generated import ops
from runtime import dtypes, factories, grad_mode
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime.nn import functional as F
from runtime.nn import init
from runtime.nn.activation import GELU, ReLU
from runtime.nn.container import ModuleList
from runtime.nn.dropout import Dropout
from runtime.nn.linear import Linear
from runtime.nn.module import Module
from runtime.nn.normalization import LayerNorm
from runtime.nn.parameter import Parameter

__all__ = [
    "MultiheadAttention", "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
    "TransformerEncoder", "TransformerEncoderLayer", "multi_head_attention_forward",
]


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
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.", stacklevel=3)
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
        packed = F.linear(q, w, b).unflatten(-1, (3, embed)).unsqueeze(0)
        packed = packed.transpose(0, -2).squeeze(-2).contiguous()
        return packed[0], packed[1], packed[2]
    if k is v:
        w_q, w_kv = w.split([embed, embed * 2])
        b_q, b_kv = (None, None) if b is None else b.split([embed, embed * 2])
        kv = F.linear(k, w_kv, b_kv).unflatten(-1, (2, embed)).unsqueeze(0)
        kv = kv.transpose(0, -2).squeeze(-2).contiguous()
        return F.linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)


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
    return (F.linear(q, w_q, biases[0]), F.linear(k, w_k, biases[1]),
            F.linear(v, w_v, biases[2]))


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
    return None if mask is None else F.pad(mask, (0, 1))


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
            embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v,
            add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training, key_padding_mask,
            need_weights, attn_mask, use_separate_proj_weight, q_proj_weight, k_proj_weight,
            v_proj_weight, static_k, static_v, average_attn_weights, is_causal), {})
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
    output = F.linear(output, out_proj_weight, out_proj_bias)
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
    weights = F.softmax(weights, dim=-1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
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
    output = F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    return output.permute(2, 0, 1, 3).reshape(batch * target, heads * head_dim)


# -- MultiheadAttention -------------------------------------------------------------------------

class NonDynamicallyQuantizableLinear(Linear):
    """MultiheadAttention's output projection: a Linear under the name torch gives it."""


class MultiheadAttention(Module):
    """Attention in num_heads parallel heads of embed_dim // num_heads features each, with
    learned input and output projections."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")

        def empty(*shape: int) -> Parameter:
            return Parameter(factories.empty(shape, dtype=dtype))

        if self._qkv_same_embed_dim:
            self.in_proj_weight = empty(3 * embed_dim, embed_dim)
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = empty(embed_dim, embed_dim)
            self.k_proj_weight = empty(embed_dim, self.kdim)
            self.v_proj_weight = empty(embed_dim, self.vdim)
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = empty(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
        if add_bias_kv:
            self.bias_k = empty(1, 1, embed_dim)
            self.bias_v = empty(1, 1, embed_dim)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """Xavier-uniform projections, zero biases, Xavier-normal bias_k / bias_v: torch's
        draws in torch's order (after out_proj's own Linear initialisation)."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        batched = query.dim() == 3
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                           _none_or_dtype(attn_mask), "attn_mask", query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if self.batch_first and batched:  # to (L, N, E), keeping which of q, k, v are one
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        output, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and batched:
            output = output.transpose(1, 0)
        return output, weights

    def merge_masks(self, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                    query: Tensor) -> tuple[Tensor | None, int | None]:
        """One mask of type 0 (attn_mask), 1 (padding) or 2 (both, as (N, heads, L, L))."""
        if attn_mask is None:
            return key_padding_mask, None if key_padding_mask is None else 1
        batch, length, _ = query.shape
        if attn_mask.dim() == 3:
            merged = attn_mask.view(batch, -1, length, length)
        else:
            merged = attn_mask.view(1, 1, length, length).expand(batch, self.num_heads, -1, -1)
        if key_padding_mask is not None:
            padding = key_padding_mask.view(batch, 1, 1, length)
            merged = merged + padding.expand(-1, self.num_heads, -1, -1)
        return merged, 2


# -- the Transformer ----------------------------------------------------------------------------

def _generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
    """-inf above the diagonal, 0 on and below: position i sees positions up to i."""
    full = factories.full((sz, sz), float("-inf"), dtype=dtype)
    return ops.triu(full, 1)


def _get_seq_len(src: Tensor, batch_first: bool) -> int:
    if src.dim() == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask: Tensor | None, is_causal: bool | None = None,
                           size: int | None = None) -> bool:
    """is_causal as given, or, when it is None, whether the mask is the causal one."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        size = size if size is not None else mask.shape[-2]
        causal = _generate_square_subsequent_mask(size, dtype=mask.dtype)
        if mask.shape == causal.shape:
            make_causal = bool((mask == causal).all())
        else:
            make_causal = False
    return make_causal


def _get_clones(module: Module, count: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(count)])


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _is_relu_or_gelu(activation: Any) -> int:
    """torch's activation_relu_or_gelu flag: 1 for ReLU, 2 for GELU, 0 for others."""
    if activation is F.relu or isinstance(activation, ReLU):
        return 1
    if activation is F.gelu or isinstance(activation, GELU):
        return 2
    return 0


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with dropout, a residual connection
    and layer norm (after each block, or before it with norm_first)."""

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Tensor], Tensor] = F.relu,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation_relu_or_gelu = _is_relu_or_gelu(activation)
        self.activation = activation

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x: Tensor, attn_mask: Any, key_padding_mask: Any,
                  is_causal: bool = False) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Self-attention over the target, attention over the encoder's memory, then a
    feed-forward block; each with dropout, a residual connection and layer norm."""

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Tensor], Tensor] = F.relu,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias,
                                                 dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation = activation

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                   tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                           memory_is_causal))
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x: Tensor, attn_mask: Any, key_padding_mask: Any,
                  is_causal: bool = False) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x: Tensor, mem: Tensor, attn_mask: Any, key_padding_mask: Any,
                   is_causal: bool = False) -> Tensor:
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


def _why_no_nested_tensor(layer: Any) -> str:
    """Why torch's encoder could not use nested tensors for this layer ('' when it could)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attention = layer.self_attn
    reasons = [
        (layer.norm_first, f"{name}.norm_first was True"),
        (not attention.batch_first, f"{name}.self_attn.batch_first was not True(use "
                                    "batch_first for better inference performance)"),
        (not attention._qkv_same_embed_dim,
         f"{name}.self_attn._qkv_same_embed_dim was not True"),
        (attention.in_proj_bias is None, f"{name}.self_attn was passed bias=False"),
        (not layer.activation_relu_or_gelu, f"{name}.activation_relu_or_gelu was not True"),
        (layer.norm1.eps != layer.norm2.eps, f"{name}.norm1.eps was not equal to "
                                             f"{name}.norm2.eps"),
        (attention.num_heads % 2 == 1, f"{name}.self_attn.num_heads is odd"),
    ]
    return next((reason for failed, reason in reasons if failed), "")


_nested_warned = False


def _warn_nested_prototype() -> None:
    """torch's one-time warning when its encoder first builds a nested tensor."""
    global _nested_warned
    if not _nested_warned:
        _nested_warned = True
        warnings.warn("The PyTorch API of nested tensors is in prototype stage and will change "
                      "in the near future. We recommend specifying layout=torch.jagged when "
                      "constructing a nested tensor, as this layout receives active development,"
                      " has better operator coverage, and works with torch.compile.",
                      stacklevel=4)


class TransformerEncoder(Module):
    """num_layers copies of an encoder layer, applied in turn, then an optional norm."""

    __constants__ = ["norm"]

    def __init__(self, encoder_layer: Module, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        reason = _why_no_nested_tensor(encoder_layer)
        if enable_nested_tensor and reason:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {reason}", stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src: Tensor, mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(mask), "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, False)
        padded = self._nested_padding(src, mask, src_key_padding_mask)
        if padded is not None:  # torch's nested-tensor path: padding left out entirely
            _warn_nested_prototype()
            src_key_padding_mask = factories.zeros_like(src_key_padding_mask).masked_fill_(
                padded, float("-inf"))
        seq_len = _get_seq_len(src, self.layers[0].self_attn.batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, is_causal=is_causal,
                           src_key_padding_mask=src_key_padding_mask)
        if padded is not None:  # (the nested tensor padded back with zeros)
            output = output.masked_fill(padded.unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _nested_padding(self, src: Tensor, mask: Any, padding: Any) -> Tensor | None:
        """Where the padding is, when torch's inference path would pack the batch into a
        nested tensor (eval mode, no gradient needed, batch_first, a left-aligned padding
        mask and no attention mask): that path leaves the padded positions out of every
        layer and returns zeros there. None when torch would not take it."""
        first = self.layers[0]
        if (not self.use_nested_tensor or first.training or src.dim() != 3 or padding is None
                or mask is not None):
            return None
        parameters = [src, *(p for p in first.parameters() if p is not None)]
        if grad_mode.is_grad_enabled() and any(t.requires_grad for t in parameters):
            return None
        padded = (padding != 0).numpy()
        if self.mask_check and not bool((padded[:, 1:] >= padded[:, :-1]).all()):
            return None  # (a kept position after a padded one: not left-aligned)
        # torch packs each row's first (number of kept positions) positions, wherever the
        # padding was (without mask_check it need not have been at the end)
        kept = (~padded).sum(1, keepdims=True)
        return factories.from_numpy(np.arange(padded.shape[1])[None, :] >= kept)


class TransformerDecoder(Module):
    """num_layers copies of a decoder layer, applied in turn, then an optional norm."""

    __constants__ = ["norm"]

    def __init__(self, decoder_layer: Module, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask,
                           tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """An encoder stack and a decoder stack (each with a final LayerNorm), every matrix
    re-drawn Xavier-uniform."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Tensor], Tensor] = F.relu,
                 custom_encoder: Any = None, custom_decoder: Any = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        options = (dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                   norm_first, bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, *options, dtype=dtype)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, *options, dtype=dtype)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        batched = src.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if batched and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None,
                                        dtype: Any = None) -> Tensor:
        """The causal mask: -inf above the diagonal, 0 elsewhere."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)

