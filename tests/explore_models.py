"""Models for the explorer's tests: the seed's TinyModel, a small CNN, a deep MLP; and what
the engine itself says of a backward (order, gradients in and out), read with node hooks."""

from __future__ import annotations

import runtime as torch
from runtime.explore import graph
from runtime.node import Node
from runtime.viz import saved_attributes


class TinyModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = torch.nn.Linear(1000, 100)
        self.relu = torch.nn.ReLU()
        self.layer2 = torch.nn.Linear(100, 10)

    def forward(self, x):
        return self.layer2(self.relu(self.layer1(x)))


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, 3)
        self.fc = torch.nn.Linear(4 * 3 * 3, 5)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.nn.functional.relu(self.conv(x)), 2)
        return self.fc(torch.flatten(x, 1))


def tiny_loss():
    torch.manual_seed(0)
    model = TinyModel()
    loss = (torch.randn(16, 10) - model(torch.randn(16, 1000))).pow(2).sum()
    return model, loss


def cnn_loss():
    torch.manual_seed(0)
    model = SmallCNN()
    out = model(torch.randn(2, 1, 8, 8))
    loss = torch.nn.functional.cross_entropy(out, torch.tensor([1, 3]))
    return model, loss


def deep_loss(layers: int):
    torch.manual_seed(0)
    blocks = [torch.nn.Linear(8, 8) for _ in range(layers)]
    x = torch.randn(4, 8)
    for block in blocks:
        x = torch.relu(block(x))
    loss = x.sum()
    params = {f"{i}.{n}": p for i, b in enumerate(blocks) for n, p in b.named_parameters()}
    return params, loss


def engine_view(loss):
    """Run a backward (retain_graph) with a pre-hook and a hook on every node: the engine's
    order, the gradients each node received and produced, and what each saved, before."""
    nodes = [n for n in graph.objects((loss,)).values() if isinstance(n, Node)]
    saved = {n: {k: tuple(v.shape) for k, v in saved_attributes(n)
                 if isinstance(v, torch.Tensor)} for n in nodes}
    order, received, produced, handles = [], {}, {}, []
    for node in nodes:
        def pre(grads, node=node):
            order.append(node)
            received[node] = [None if g is None else g.detach().clone() for g in grads]
        def post(grad_inputs, grad_outputs, node=node):
            produced[node] = [None if g is None else g.detach().clone() for g in grad_inputs]
        handles += [node.register_prehook(pre), node.register_hook(post)]
    loss.backward(retain_graph=True)
    for handle in handles:
        handle.remove()
    return order, received, produced, saved
