"""The official PyTorch MNIST example's structure (pytorch/examples, mnist/main.py) run unchanged on numgrad:
a DataLoader with worker processes, a convnet, Adadelta, StepLR, view_as and torch.accelerator. MNIST itself
is a download, so the data are synthetic digit-like images (each class a noisy stroke pattern).

    python examples/mnist_synthetic.py              # numgrad
    python examples/mnist_synthetic.py --torch      # PyTorch
"""
import argparse
import sys

import numpy as np

if "--torch" in sys.argv:
    import torch
else:
    import numgrad as torch
nn, F = torch.nn, torch.nn.functional
optim = torch.optim
StepLR = torch.optim.lr_scheduler.StepLR
TensorDataset, DataLoader = torch.utils.data.TensorDataset, torch.utils.data.DataLoader


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))
            if args.dry_run:
                break


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()  # sum up batch loss
            pred = output.argmax(dim=1, keepdim=True)  # get the index of the max log-probability
            correct += pred.eq(target.view_as(pred)).sum().item()

    test_loss /= len(test_loader.dataset)

    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(test_loader.dataset),
        100. * correct / len(test_loader.dataset)))
    return correct / len(test_loader.dataset)


def synthetic_digits(n, seed):
    """n 1x28x28 images, normalised as MNIST's (mean 0.1307, std 0.3081): class k is a bright bar whose row
    and slant depend on k, under noise; labels are int64."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n)
    images = rng.random((n, 1, 28, 28)).astype(np.float32) * 0.3
    cols = np.arange(28)
    for i, k in enumerate(labels):
        rows = (4 + 2 * k + (cols * (k % 3 - 1)) // 7) % 28
        images[i, 0, rows, cols] = 1.0
    return torch.tensor((images - 0.1307) / 0.3081), torch.tensor(labels)


def main(argv=None):
    parser = argparse.ArgumentParser(description='MNIST-structured example on synthetic digits')
    parser.add_argument('--torch', action='store_true', help='run on PyTorch instead of numgrad')
    parser.add_argument('--batch-size', type=int, default=64, metavar='N')
    parser.add_argument('--test-batch-size', type=int, default=1000, metavar='N')
    parser.add_argument('--epochs', type=int, default=2, metavar='N')
    parser.add_argument('--train-size', type=int, default=1024, metavar='N')
    parser.add_argument('--lr', type=float, default=1.0, metavar='LR')
    parser.add_argument('--gamma', type=float, default=0.7, metavar='M')
    parser.add_argument('--no-accel', action='store_true')
    parser.add_argument('--dry-run', action='store_true')
    parser.add_argument('--seed', type=int, default=1, metavar='S')
    parser.add_argument('--log-interval', type=int, default=10, metavar='N')
    parser.add_argument('--save-model', action='store_true')
    args = parser.parse_args(argv)

    use_accel = not args.no_accel and torch.accelerator.is_available()
    torch.manual_seed(args.seed)
    if use_accel:
        device = torch.accelerator.current_accelerator()
    else:
        device = torch.device("cpu")

    train_kwargs = {'batch_size': args.batch_size}
    test_kwargs = {'batch_size': args.test_batch_size}
    if use_accel:
        accel_kwargs = {'num_workers': 1, 'persistent_workers': True, 'pin_memory': True, 'shuffle': True}
    else:
        accel_kwargs = {'num_workers': 1, 'shuffle': True}  # workers on the CPU too: the loader's processes
    train_kwargs.update(accel_kwargs)

    dataset1 = TensorDataset(*synthetic_digits(args.train_size, args.seed))
    dataset2 = TensorDataset(*synthetic_digits(args.train_size // 4, args.seed + 1))
    train_loader = DataLoader(dataset1, **train_kwargs)
    test_loader = DataLoader(dataset2, **test_kwargs)

    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)

    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    accuracy = 0.0
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)
        accuracy = test(model, device, test_loader)
        scheduler.step()

    if args.save_model:
        torch.save(model.state_dict(), "mnist_cnn.pt")
    return accuracy


if __name__ == '__main__':
    main()
