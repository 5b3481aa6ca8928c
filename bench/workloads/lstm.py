"""LSTM language-model train step (PyTorch's word_language_model example, shrunk): vocabulary 1000,
embedding 128, 2-layer LSTM with 256 hidden units, seq 35, batch 20, truncated BPTT (the hidden state
is carried over and detached), gradient clipping, SGD."""
import torch
import torch.nn as nn
import torch.nn.functional as F

NAME = "lstm"
TITLE = "LSTM LM 2x256 seq35 b20 SGD+clip"
UNIT = "ms"
TARGET = {"time": 1.3}
VOCAB, EMB, HID, LAYERS, SEQ, BATCH = 1000, 128, 256, 2, 35, 20


class RNNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Embedding(VOCAB, EMB)
        self.rnn = nn.LSTM(EMB, HID, LAYERS)
        self.decoder = nn.Linear(HID, VOCAB)

    def forward(self, inp, hidden):
        output, hidden = self.rnn(self.encoder(inp), hidden)
        return self.decoder(output), hidden


def setup(quick):
    torch.manual_seed(0)
    model = RNNModel()
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    data = torch.randint(0, VOCAB, (SEQ + 1, BATCH))
    inp, target = data[:-1], data[1:]
    state = [(torch.zeros(LAYERS, BATCH, HID), torch.zeros(LAYERS, BATCH, HID))]

    def step():
        hidden = tuple(h.detach() for h in state[0])
        model.zero_grad()
        output, hidden = model(inp, hidden)
        loss = F.cross_entropy(output.view(-1, VOCAB), target.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()
        state[0] = hidden
        return loss

    return step, 1
