# ruff: noqa - written as the tutorial writes it
# PyTorch tutorials' "Learn the Basics: Optimizing Model Parameters"
# (beginner_source/basics/optimization_tutorial.py, pytorch/tutorials, revision 802d686):
# hyperparameters, CrossEntropyLoss, SGD, and a train_loop and test_loop (model.train() and
# model.eval(), zero_grad after step, no_grad, accuracy) run epoch by epoch on a
# NeuralNetwork of Flatten, Linear and ReLU layers. The tutorial downloads FashionMNIST with
# torchvision; a seeded synthetic set of 28x28 images in [0, 1] (a random pattern per class,
# its pixels of intensity 0.5 to 1; 320 training and 128 test images) stands in for it, and
# it trains 3 epochs instead of 10. The tutorial's prose is left out and
# torch.manual_seed(0) added.
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

# Synthetic images standing in for FashionMNIST (ToTensor's values, in [0, 1]).
templates = (torch.rand(10, 1, 28, 28) < 0.3).float()


def synthetic_fashion_mnist(size):
    labels = torch.randint(0, 10, (size,))
    images = templates[labels] * (0.5 + 0.5 * torch.rand(size, 1, 28, 28))
    return TensorDataset(images, labels)


training_data = synthetic_fashion_mnist(320)

test_data = synthetic_fashion_mnist(128)

train_dataloader = DataLoader(training_data, batch_size=64)
test_dataloader = DataLoader(test_data, batch_size=64)

class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28*28, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 10),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits

model = NeuralNetwork()

learning_rate = 1e-3
batch_size = 64
epochs = 5

# Initialize the loss function
loss_fn = nn.CrossEntropyLoss()

optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)

def train_loop(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    # Set the model to training mode - important for batch normalization and dropout layers
    # Unnecessary in this situation but added for best practices
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        # Compute prediction and loss
        pred = model(X)
        loss = loss_fn(pred, y)

        # Backpropagation
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

        if batch % 100 == 0:
            loss, current = loss.item(), batch * batch_size + len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test_loop(dataloader, model, loss_fn):
    # Set the model to evaluation mode - important for batch normalization and dropout layers
    # Unnecessary in this situation but added for best practices
    model.eval()
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    test_loss, correct = 0, 0

    # Evaluating the model with torch.no_grad() ensures that no gradients are computed during test mode
    # also serves to reduce unnecessary gradient computations and memory usage for tensors with requires_grad=True
    with torch.no_grad():
        for X, y in dataloader:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()

    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")


loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)

epochs = 3
for t in range(epochs):
    print(f"Epoch {t+1}\n-------------------------------")
    train_loop(train_dataloader, model, loss_fn, optimizer)
    test_loop(test_dataloader, model, loss_fn)
print("Done!")
