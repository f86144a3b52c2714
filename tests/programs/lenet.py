# ruff: noqa - written as the tutorial writes it (super(Net, self), str.format, ...)
# The "Neural Networks" tutorial: LeNet with Conv2d, max_pool2d and Linear layers, a loss,
# backprop and an SGD update.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):

    def __init__(self):
        super(Net, self).__init__()
        # 1 input image channel, 6 output channels, 5x5 square convolution
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        # an affine operation: y = Wx + b
        self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5*5 from image dimension
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, input):
        # Convolution layer C1: 1 input image channel, 6 output channels, 5x5 kernel,
        # RELU; outputs (N, 6, 28, 28)
        c1 = F.relu(self.conv1(input))
        # Subsampling layer S2: 2x2 grid, purely functional; outputs (N, 6, 14, 14)
        s2 = F.max_pool2d(c1, (2, 2))
        # Convolution layer C3: 6 input channels, 16 output channels, 5x5 kernel, RELU;
        # outputs (N, 16, 10, 10)
        c3 = F.relu(self.conv2(s2))
        # Subsampling layer S4: 2x2 grid; outputs (N, 16, 5, 5)
        s4 = F.max_pool2d(c3, 2)
        # Flatten operation: outputs (N, 400)
        s4 = torch.flatten(s4, 1)
        # Fully connected layers F5 and F6 with RELU, and the Gaussian layer OUTPUT
        f5 = F.relu(self.fc1(s4))
        f6 = F.relu(self.fc2(f5))
        output = self.fc3(f6)
        return output


torch.manual_seed(0)
net = Net()
print(net)

params = list(net.parameters())
print(len(params))
print(params[0].size())  # conv1's .weight

input = torch.randn(1, 1, 32, 32)
out = net(input)
print(out)

net.zero_grad()
out.backward(torch.randn(1, 10))

output = net(input)
target = torch.randn(10)  # a dummy target, for example
target = target.view(1, -1)  # make it the same shape as output
criterion = nn.MSELoss()

loss = criterion(output, target)
print(loss)

print(loss.grad_fn)  # MSELoss
print(loss.grad_fn.next_functions[0][0])  # Linear
print(loss.grad_fn.next_functions[0][0].next_functions[0][0])  # ReLU

net.zero_grad()  # zeroes the gradient buffers of all parameters

print("conv1.bias.grad before backward")
print(net.conv1.bias.grad)

loss.backward()

print("conv1.bias.grad after backward")
print(net.conv1.bias.grad)

learning_rate = 0.01
with torch.no_grad():
    for f in net.parameters():
        f.sub_(f.grad * learning_rate)

import torch.optim as optim  # noqa: E402

# create your optimizer
optimizer = optim.SGD(net.parameters(), lr=0.01)

# in your training loop:
for step in range(3):
    optimizer.zero_grad()  # zero the gradient buffers
    output = net(input)
    loss = criterion(output, target)
    loss.backward()
    optimizer.step()  # Does the update
    print(step, loss.item())
print(net(input))
