# ruff: noqa - written as the tutorial writes it (super(Net, self), str.format, ...)
# "Learning PyTorch with Examples": a dynamic graph. Each forward pass draws how many extra
# terms (x^4, x^5) to use, reusing the same parameter e for them.
import math
import random

import torch


class DynamicNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))
        self.e = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        """A polynomial of order 3, 4 or 5, chosen at random on each call: ordinary
        Python control flow builds a different graph each time."""
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, random.randint(4, 6)):
            y = y + self.e * x ** exp
        return y

    def string(self):
        return (f"y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + "
                f"{self.d.item()} x^3 + {self.e.item()} x^4 ? + {self.e.item()} x^5 ?")


random.seed(0)
torch.manual_seed(0)
x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

model = DynamicNet()

# Plain SGD is slow on this problem: momentum helps.
criterion = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
for t in range(1500):  # the tutorial runs 30000 steps
    y_pred = model(x)

    loss = criterion(y_pred, y)
    if t % 150 == 149:
        print(t, loss.item())

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"Result: {model.string()}")
