# ruff: noqa - written as torchvision's resnet.py writes it (conv3x3 helpers, ...)
# A small ResNet after torchvision's BasicBlock and ResNet (the "Deep Residual Learning"
# CIFAR-10 set-up): 3x3 convolutions with BatchNorm2d, identity shortcuts and a strided 1x1
# downsample, kaiming_normal_ initialisation, AdaptiveAvgPool2d, trained with SGD (momentum,
# weight decay, nesterov) and MultiStepLR, then evaluated. CIFAR-10 is downloaded in the
# original; a seeded synthetic set of 3x32x32 images with 10 classes stands in for it, and
# the network is two stages of one block each, with 8 and 16 channels. torchvision's
# initialisation loop names nn.GroupNorm too, which this network does not use.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def conv3x3(in_planes, out_planes, stride=1):
    """3x3 convolution with padding"""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


def conv1x1(in_planes, out_planes, stride=1):
    """1x1 convolution"""
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x

        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.bn2(out)

        if self.downsample is not None:
            identity = self.downsample(x)

        out += identity
        out = self.relu(out)

        return out


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=10, zero_init_residual=False):
        super().__init__()
        self.inplanes = 8
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 8, layers[0])
        self.layer2 = self._make_layer(block, 16, layers[1], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16 * block.expansion, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, BasicBlock):
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                conv1x1(self.inplanes, planes * block.expansion, stride),
                nn.BatchNorm2d(planes * block.expansion),
            )

        layers = []
        layers.append(block(self.inplanes, planes, stride, downsample))
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes))

        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.maxpool(x)

        x = self.layer1(x)
        x = self.layer2(x)

        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.fc(x)

        return x


torch.manual_seed(0)
model = ResNet(BasicBlock, [1, 1])
print(model.layer2)
print(sum(p.numel() for p in model.parameters() if p.requires_grad), "parameters")

# Stand-in for CIFAR-10: 48 training and 16 test images, classes from a fixed rule so that
# there is something to learn.
images = torch.randn(64, 3, 32, 32)
labels = (images[:, 0, :16, :16].mean(dim=(1, 2)) * 40).long().clamp(-5, 4) + 5
train_loader = DataLoader(TensorDataset(images[:48], labels[:48]), batch_size=16, shuffle=True)
test_loader = DataLoader(TensorDataset(images[48:], labels[48:]), batch_size=16)

criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4,
                            nesterov=True)
scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[1], gamma=0.1)

for epoch in range(2):
    model.train()
    running_loss = 0.0
    for i, (inputs, targets) in enumerate(train_loader):
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
        print(f"epoch {epoch} batch {i} loss {loss.item():.6f}")
    scheduler.step()

    model.eval()
    correct = 0
    total = 0
    test_loss = 0.0
    with torch.no_grad():
        for inputs, targets in test_loader:
            outputs = model(inputs)
            test_loss += F.cross_entropy(outputs, targets, reduction="sum").item()
            _, predicted = outputs.max(1)
            total += targets.size(0)
            correct += predicted.eq(targets).sum().item()
    print(f"epoch {epoch}: train loss {running_loss / len(train_loader):.6f} "
          f"test loss {test_loss / total:.6f} accuracy {100. * correct / total:.2f}% "
          f"lr {scheduler.get_last_lr()[0]:.4f}")

print(model.bn1.running_mean[:4], model.layer2[0].downsample[1].running_var[:4])
print(model.layer1[0].bn2.num_batches_tracked)
