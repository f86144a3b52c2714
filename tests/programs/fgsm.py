# ruff: noqa - written as the tutorial writes it
# PyTorch tutorials' "Adversarial Example Generation" (beginner_source/fgsm_tutorial.py,
# pytorch/tutorials, revision 03cd491): the fast gradient sign method attacks a LeNet
# (Conv2d, Dropout2d, max_pool2d, dropout, log_softmax) loaded from a saved state_dict:
# each test image's gradient (data.requires_grad, nll_loss, backward, data.grad) is signed
# and scaled by epsilon, the image clamped to [0, 1] and classified again, for seven
# epsilons. The tutorial downloads the MNIST test set with torchvision and a pretrained
# data/lenet_mnist_model.pth; here a seeded synthetic set of 28x28 images in [0, 1] (a
# random pattern per class, its pixels of intensity 0.5 to 1) stands in for MNIST, 40 test
# images, and the model file is made first by training the same Net for 40 Adam steps on 256 such
# images and saving its state_dict with torch.save. torch.manual_seed(0) is added, and the
# matplotlib plots of the results are left out.
from __future__ import print_function
import os
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset
import numpy as np

torch.manual_seed(0)

epsilons = [0, .05, .1, .15, .2, .25, .3]
pretrained_model = "data/lenet_mnist_model.pth"
use_cuda=True


# LeNet Model definition
class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


# Synthetic MNIST-like images, and the pretrained model the tutorial downloads.
templates = (torch.rand(10, 1, 28, 28) < 0.3).float()


def synthetic_mnist(size):
    labels = torch.randint(0, 10, (size,))
    images = templates[labels] * (0.5 + 0.5 * torch.rand(size, 1, 28, 28))
    return TensorDataset(images, labels)


if not os.path.exists(pretrained_model):
    os.makedirs("data", exist_ok=True)
    pretraining = Net()
    optimizer = optim.Adam(pretraining.parameters(), lr=0.01)
    for images, labels in DataLoader(synthetic_mnist(256), batch_size=32, shuffle=True):
        for step in range(5):
            optimizer.zero_grad()
            loss = F.nll_loss(pretraining(images), labels)
            loss.backward()
            optimizer.step()
        print("pretraining loss {:.4f}".format(loss.item()))
    torch.save(pretraining.state_dict(), pretrained_model)

# MNIST Test dataset and dataloader declaration
test_loader = torch.utils.data.DataLoader(synthetic_mnist(40), batch_size=1, shuffle=True)

# Define what device we are using
print("CUDA Available: ",torch.cuda.is_available())
device = torch.device("cuda" if (use_cuda and torch.cuda.is_available()) else "cpu")

# Initialize the network
model = Net().to(device)

# Load the pretrained model
model.load_state_dict(torch.load(pretrained_model, map_location='cpu'))

# Set the model in evaluation mode. In this case this is for the Dropout layers
model.eval()


# FGSM attack code
def fgsm_attack(image, epsilon, data_grad):
    # Collect the element-wise sign of the data gradient
    sign_data_grad = data_grad.sign()
    # Create the perturbed image by adjusting each pixel of the input image
    perturbed_image = image + epsilon*sign_data_grad
    # Adding clipping to maintain [0,1] range
    perturbed_image = torch.clamp(perturbed_image, 0, 1)
    # Return the perturbed image
    return perturbed_image


def test( model, device, test_loader, epsilon ):

    # Accuracy counter
    correct = 0
    adv_examples = []

    # Loop over all examples in test set
    for data, target in test_loader:

        # Send the data and label to the device
        data, target = data.to(device), target.to(device)

        # Set requires_grad attribute of tensor. Important for Attack
        data.requires_grad = True

        # Forward pass the data through the model
        output = model(data)
        init_pred = output.max(1, keepdim=True)[1] # get the index of the max log-probability

        # If the initial prediction is wrong, dont bother attacking, just move on
        if init_pred.item() != target.item():
            continue

        # Calculate the loss
        loss = F.nll_loss(output, target)

        # Zero all existing gradients
        model.zero_grad()

        # Calculate gradients of model in backward pass
        loss.backward()

        # Collect datagrad
        data_grad = data.grad.data

        # Call FGSM Attack
        perturbed_data = fgsm_attack(data, epsilon, data_grad)

        # Re-classify the perturbed image
        output = model(perturbed_data)

        # Check for success
        final_pred = output.max(1, keepdim=True)[1] # get the index of the max log-probability
        if final_pred.item() == target.item():
            correct += 1
            # Special case for saving 0 epsilon examples
            if (epsilon == 0) and (len(adv_examples) < 5):
                adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
                adv_examples.append( (init_pred.item(), final_pred.item(), adv_ex) )
        else:
            # Save some adv examples for visualization later
            if len(adv_examples) < 5:
                adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
                adv_examples.append( (init_pred.item(), final_pred.item(), adv_ex) )

    # Calculate final accuracy for this epsilon
    final_acc = correct/float(len(test_loader))
    print("Epsilon: {}\tTest Accuracy = {} / {} = {}".format(epsilon, correct, len(test_loader), final_acc))

    # Return the accuracy and an adversarial example
    return final_acc, adv_examples


accuracies = []
examples = []

# Run test for each epsilon
for eps in epsilons:
    acc, ex = test(model, device, test_loader, eps)
    accuracies.append(acc)
    examples.append(ex)
