"""glassgrad demo: train a tiny model with autograd, then answer seed 003's question on it.

Run with `make demo`.
"""
import glassgrad as torch

torch.manual_seed(0)

# -- 1. a tiny model: fit y = 3x - 1 with a weight and a bias, plain SGD --------------------
x = torch.linspace(-1, 1, 32).unsqueeze(1)
y_true = 3 * x - 1 + 0.1 * torch.randn(32, 1)
w = torch.zeros(1, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
for step in range(201):
    loss = ((x @ w + b - y_true) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
    w.grad.zero_()
    b.grad.zero_()
    if step % 50 == 0:
        print(f"step {step:3d}  loss {loss.item():.4f}")
print("learned w, b:", w.detach(), b.detach())
print("the loss's graph:", loss.grad_fn, "->", [f[0] for f in loss.grad_fn.next_functions])

# -- 2. seed 003: what does y.backward(v) compute? ----------------------------------------------
print("\nseed 003: y = x @ M; y.backward(v) puts v^T J into x.grad (one row of J per unit v)")
x = torch.FloatTensor([[2, 1]]).requires_grad_()
M = torch.FloatTensor([[1, 2], [3, 4]])
y = torch.mm(x, M)
print("y =", y)
for v in ([[1, 0]], [[0, 1]], [[1, 1]]):
    x.grad = None
    y.backward(torch.FloatTensor(v), retain_graph=True)
    print(f"v = {v}  ->  x.grad = {x.grad}")
print("[1, 1] gives the sum of the two rows: backward is linear in v.")

# -- 3. seeds 001/002: a small classifier with nn, optim and a DataLoader -------------------------
import glassgrad.nn as nn  # noqa: E402
import glassgrad.nn.functional as F  # noqa: E402
from glassgrad.utils.data import DataLoader, TensorDataset  # noqa: E402

print("\nseeds 001/002: nn.Module, a loss, optimizer.step() -- the usual training loop")
torch.manual_seed(0)
X = torch.randn(256, 2)
labels = ((X[:, 0] * X[:, 1]) > 0).long()            # XOR-like quadrants
model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 2))
opt = torch.optim.Adam(model.parameters(), lr=0.02)
loader = DataLoader(TensorDataset(X, labels), batch_size=32, shuffle=True)
for epoch in range(15):
    for xb, yb in loader:
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    if epoch % 5 == 4:
        acc = (model(X).argmax(1) == labels).float().mean()
        print(f"epoch {epoch + 1:2d}  loss {loss.item():.4f}  accuracy {acc.item():.3f}")
print(model)

print("\nseed 001: two losses on one output -- separate backward() calls accumulate the summed loss's gradient")
out = model(X[:4])
loss1 = F.mse_loss(out, torch.zeros(4, 2))
loss2 = F.nll_loss(F.log_softmax(out, 1), labels[:4])
model.zero_grad()
loss1.backward(retain_graph=True)
loss2.backward(retain_graph=True)   # the summed loss below reuses the graph
separate = model[0].weight.grad.clone()
model.zero_grad()
(loss1 + loss2).backward()
print("max |separate - summed| =", (separate - model[0].weight.grad).abs().max().item())
