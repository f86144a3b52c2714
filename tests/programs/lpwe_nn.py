# ruff: noqa - written as the tutorial writes it (super(Net, self), str.format, ...)
# "Learning PyTorch with Examples": the polynomial as an nn.Sequential model with an MSE loss.
import math

import torch

torch.manual_seed(0)

x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

# The features x, x^2, x^3: xx has shape (2000, 3).
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)

# A Linear layer computes the weighted sum; Flatten turns (2000, 1) into (2000,).
model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1)
)

loss_fn = torch.nn.MSELoss(reduction="sum")

learning_rate = 1e-6
for t in range(1000):  # the tutorial runs 2000 steps
    y_pred = model(xx)

    loss = loss_fn(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())

    model.zero_grad()

    loss.backward()

    # Each parameter is a Tensor, updated like any other under no_grad.
    with torch.no_grad():
        for param in model.parameters():
            param -= learning_rate * param.grad

linear_layer = model[0]

print(f"Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + "
      f"{linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3")
