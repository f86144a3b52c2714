"""torch.embedding_bag and torch._embedding_bag_forward_only: the bags of embedding rows as
torch's ATen function computes them, from the spec's _embedding_bag (its node is torch's
EmbeddingBagBackward0). F.embedding_bag and nn.EmbeddingBag call torch.embedding_bag.

torch.embedding_bag returns (bags, offset2bag, bag_size, max_indices), the last three the
bookkeeping torch's CPU kernel keeps for its backward; with a table and sample weights that
need no gradient it runs the forward-only kernel, whose bookkeeping differs a little (its
sum mode's bag_size is shaped as offsets), as torch's."""

from __future__ import annotations

from generated import ops
from runtime import forward_grad, kernels
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime.recording import wrap

__all__ = ["_embedding_bag_forward_only", "embedding_bag"]


def _needs_graph(*tensors: Tensor | None) -> bool:
    """As torch chooses its kernel: by requires_grad alone (under no_grad too)."""
    return any(t is not None and (t.requires_grad or forward_grad.any_tangent(t))
               for t in tensors)


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor,
                  scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(bags, offset2bag, bag_size, max_indices): mode 0 sums, 1 averages, 2 takes the
    maximum of the rows of `weight` each bag names (offsets start the bags of `indices`)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(embedding_bag, (weight, indices, offsets, scale_grad_by_freq,
                                                mode, sparse, per_sample_weights,
                                                include_last_offset, padding_idx), {})
        if heard is not _modes.PASS:
            return heard
    if padding_idx is None:
        padding_idx = -1
    else:
        rows = weight.shape[0] if weight.dim() else 0
        if not -rows <= padding_idx < rows:
            raise RuntimeError("padding_idx must be within the number of embeddings, "
                               f"-{rows} through {rows - 1}, but got {padding_idx}")
        padding_idx %= rows
    arguments = (weight, indices.contiguous(), offsets.contiguous(), scale_grad_by_freq, mode,
                 sparse, per_sample_weights, include_last_offset, padding_idx)
    if _needs_graph(weight, per_sample_weights):
        return ops._embedding_bag(*arguments)
    return _embedding_bag_forward_only(*arguments)


def _embedding_bag_forward_only(weight: Tensor, indices: Tensor, offsets: Tensor,
                                scale_grad_by_freq: bool = False, mode: int = 0,
                                sparse: bool = False, per_sample_weights: Tensor | None = None,
                                include_last_offset: bool = False,
                                padding_idx: int = -1) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """_embedding_bag for a table that needs no gradient: the results carry none."""
    arrays = kernels._embedding_bag_forward_only(
        weight.detach().numpy(), indices.numpy(), offsets.numpy(), scale_grad_by_freq, mode,
        sparse, None if per_sample_weights is None else per_sample_weights.detach().numpy(),
        include_last_offset, padding_idx)
    return tuple(wrap(array) for array in arrays)
