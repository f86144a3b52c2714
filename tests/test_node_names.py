"""Node class names follow torchgen's rule, and equal PyTorch's grad_fn.name() per op."""

from __future__ import annotations

import pytest

from codegen import verify
from codegen.load import manual_helpers, node_name_prefix, parse_spec

INFOS = verify.load()
WITH_NODE = [i for i in INFOS if i.differentiable and i.samples]


@pytest.mark.parametrize("info", WITH_NODE, ids=lambda i: i.name)
def test_node_name_matches_torch(info) -> None:
    """torch.ops.aten.<base>.<overload> on the op's first sample records the same class. An
    op torch lacks (every sample `no_torch`) has no class of torch's to match: its name
    follows torchgen's rule, the op's CamelCase name, Backward and a counter."""
    compared = [s for s in verify.samples(info) if not s.flags.get("no_torch")]
    if not compared:
        prefix = node_name_prefix(info.schema.base)
        assert info.qualified_name is None and info.node_name.startswith(prefix)
        assert info.node_name.removeprefix(prefix).isdigit(), info.node_name
        return
    outputs, _ = verify.run_torch(info, compared[0])
    grad_fn = next(o.grad_fn for o in outputs if o.grad_fn is not None)
    # A node PyTorch writes by hand has a qualified name (torch::autograd::CopyBackwards).
    assert (info.qualified_name or info.node_name) == grad_fn.name()


@pytest.mark.parametrize("info", WITH_NODE, ids=lambda i: i.name)
def test_runtime_records_the_generated_class(info) -> None:
    sample = verify.samples(info)[0]
    outputs, _, _, _ = verify.run_runtime(info, sample)
    grad_fn = next(o.grad_fn for o in outputs if o.grad_fn is not None)
    assert type(grad_fn).__name__ == info.node_name
    assert grad_fn.name() == (info.qualified_name or info.node_name)


def test_every_node_is_checked() -> None:
    assert len(WITH_NODE) == len([i for i in INFOS if i.differentiable])


@pytest.mark.parametrize(("base", "prefix"), [
    ("add", "AddBackward"),
    ("_softmax", "SoftmaxBackward"),
    ("_log_softmax", "LogSoftmaxBackward"),
    ("native_layer_norm", "NativeLayerNormBackward"),
    ("nll_loss_forward", "NllLossBackward"),
    ("nll_loss2d_forward", "NllLoss2DBackward"),  # str.title() capitalizes after a digit
    ("squeeze_", "SqueezeBackward"),
    ("_to_copy", "ToCopyBackward"),
    ("threshold_backward", "ThresholdBackwardBackward"),
    ("t", "TBackward"),
])
def test_node_name_prefix(base: str, prefix: str) -> None:
    assert node_name_prefix(base) == prefix


def test_torch_agrees_on_tricky_prefixes() -> None:
    import torch

    x = torch.randn(3, 4, requires_grad=True)
    assert torch.ops.aten._softmax(x, 1, False).grad_fn.name() == "SoftmaxBackward0"
    assert torch.ops.aten.native_layer_norm(x, [4], None, None, 1e-5)[0].grad_fn.name() \
        == "NativeLayerNormBackward0"
    target = torch.tensor([0, 1, 2])
    loss = torch.ops.aten.nll_loss_forward(x.log_softmax(1), target, None, 1, -100)[0]
    assert loss.grad_fn.name() == "NllLossBackward0"
    assert x.clone()[None].squeeze_().grad_fn.name() == "SqueezeBackward3"


SQUEEZES = """
- name: squeeze(Tensor(a) self) -> Tensor(a)
  self: grad
- name: squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)
  self: grad
- name: relu(Tensor self) -> Tensor
  self: grad
- name: squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)
  self: grad
- name: squeeze_(Tensor(a!) self) -> Tensor(a!)
  self: grad
- name: squeeze_.dim(Tensor(a!) self, int dim) -> Tensor(a!)
  self: grad
- name: eq.Tensor(Tensor self, Tensor other) -> Tensor
  output_differentiability: [False]
  self: non_differentiable
  other: non_differentiable
- name: eq.Scalar(Tensor self, Scalar other) -> Tensor
  self: grad
- name: eq_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
  output_differentiability: [False]
  self: grad
- name: eq_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
  self: grad
  other: grad
"""


def test_counters_are_per_prefix_in_file_order() -> None:
    """squeeze_ shares SqueezeBackward's counter; an entry without a formula takes no number,
    one with a formula but no differentiable output does (torchgen counts formulas)."""
    infos = parse_spec(SQUEEZES, "inline.yaml", manual_helpers(verify.ROOT / "runtime/manual.py"))
    assert [i.node_name for i in infos] == [
        "SqueezeBackward0", "SqueezeBackward1", "ReluBackward0", "SqueezeBackward2",
        "SqueezeBackward3", "SqueezeBackward4", None, "EqBackward0", None, "EqBackward2",
    ]
