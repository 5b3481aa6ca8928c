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
