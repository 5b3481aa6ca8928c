# Seed 002 (blog "How does loss.backward() work in Pytorch ?"): the post's seven lines verbatim,
# with the pieces the post leaves undefined (Net, input, label, optimiser) filled in the plainest way.
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return torch.sigmoid(self.fc2(torch.relu(self.fc1(x))))


torch.manual_seed(0)
input = torch.randn(5, 4)
label = torch.empty(5, 1).random_(2)

# --- the post's code ---
net = Net()
net.zero_grad()
criterion = nn.BCELoss()
output = net(input)
loss = criterion(output, label)
# --- end (the optimiser is created from net's parameters, as the post explains) ---
optimiser = torch.optim.SGD(net.parameters(), lr=0.1)
loss.backward()
optimiser.step()

print(loss)
print(loss.grad_fn.name())
print(net.fc2.weight.grad)
print(net.fc2.weight)
net.zero_grad()
print(net.fc2.weight.grad)
