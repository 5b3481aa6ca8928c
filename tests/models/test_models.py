"""Whole models, written the ordinary way, trained 20 steps on glassgrad and on torch from the same
weights (same seed: glassgrad's RNG and initialisation order are PyTorch's) and the same data.
The loss at every step must agree to float32 tolerance."""
import math

import numpy as np
import torch

import glassgrad
import zoo   # tests/models/zoo.py: the models and their data

STEPS = 20


def run_both(train, rtol=2e-4, atol=1e-5):
    """train(T) -> per-step losses (floats), or (losses, [arrays]) with more results to compare."""
    ref = train(torch)
    got = train(glassgrad)
    ref, ref_extra = ref if isinstance(ref, tuple) else (ref, [])
    got, got_extra = got if isinstance(got, tuple) else (got, [])
    assert len(ref) == len(got) == STEPS
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)
    assert ref[-1] < ref[0]          # the models really train
    for a, b in zip(got_extra, ref_extra):
        np.testing.assert_allclose(a, b, rtol=10 * rtol, atol=10 * atol)
    return ref, got


# -- a CIFAR-style ResNet with BatchNorm, SGD + momentum + weight decay -----------------------------
def resnet(T):
    F = T.nn.functional
    model = zoo.build_resnet(T)
    opt = T.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    x, y = zoo.resnet_batch(T)
    losses = []
    model.train()
    for _ in range(STEPS):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with T.no_grad():
        eval_out = model(x).numpy()
    return losses, [eval_out, model.bn1.running_mean.numpy(), model.bn1.running_var.numpy(),
                    model.layer2[0].shortcut[1].running_var.numpy(),
                    np.array(model.bn1.num_batches_tracked.item())]


def test_resnet_batchnorm_sgd():
    run_both(resnet, rtol=1e-3, atol=1e-5)


# -- a small GPT: weight tying, causal attention, AdamW with two param groups, cosine schedule ------
def gpt(T):
    model = zoo.build_gpt(T)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = T.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                        lr=3e-3, betas=(0.9, 0.95))
    sched = T.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=STEPS)
    seq = zoo.gpt_batch(T)
    losses = []
    for _ in range(STEPS):
        loss = model(seq[:, :-1], seq[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    return losses


def test_gpt_adamw_cosine():
    run_both(gpt, rtol=2e-4)


# -- an LSTM language model with gradient clipping ---------------------------------------------------
def lstm_lm(T):
    nn = T.nn
    model = zoo.build_lstm_lm(T)
    opt = T.optim.Adam(model.parameters(), lr=1e-2)
    crit = nn.CrossEntropyLoss()
    seq = zoo.lstm_batch(T)
    losses = []
    for _ in range(STEPS):
        logits, _ = model(seq[:, :-1])
        loss = crit(logits.reshape(-1, 20), seq[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        losses.append(loss.item())
    return losses


def test_lstm_lm_clipping():
    run_both(lstm_lm, rtol=2e-4)


# -- a detector-style head: multi-level, multi-term loss with OHEM (seed 000's pattern) -------------
def detector(T):
    F = T.nn.functional
    model = zoo.build_detector(T)
    opt = T.optim.Adam(model.parameters(), lr=5e-3)
    x, targets, radii = zoo.detector_batch(T)
    losses = []
    for _ in range(STEPS):
        total = 0.0
        for (c, r), t, rad in zip(model(x), targets, radii):
            c = c.permute(0, 2, 3, 1).reshape(-1, 2)
            t = t.reshape(-1)
            mask = t > 0
            total = total + zoo.ohem(T, c, t)
            total = total + F.smooth_l1_loss(r.reshape(-1)[mask], rad.reshape(-1)[mask])
        opt.zero_grad()
        total.backward()
        opt.step()
        losses.append(total.item())
    return losses


def test_detector_multi_level_ohem():
    run_both(detector, rtol=2e-4)


# -- dropout in train mode under a fixed seed, data from a shuffling DataLoader ---------------------
def dropout_mlp(T):
    F = T.nn.functional
    model = zoo.build_dropout_mlp(T)
    opt = T.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    ds = T.utils.data.TensorDataset(*zoo.mlp_batch(T, 40))
    loader = T.utils.data.DataLoader(ds, batch_size=8, shuffle=True, drop_last=True)
    losses = []
    model.train()
    while len(losses) < STEPS:
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if len(losses) == STEPS:
                break
    return losses


def test_dropout_train_mode_seeded():
    ref = dropout_mlp(torch)
    got = dropout_mlp(glassgrad)
    np.testing.assert_allclose(got, ref, rtol=2e-4, atol=1e-5)
    assert not math.isnan(got[-1])
