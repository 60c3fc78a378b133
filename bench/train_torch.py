"""bench/train_torch.py [mlp|cnn] — the work of bench/train.lua in PyTorch
eager mode, same names and units: one epoch (batch 128, Adam 1e-3, shuffled),
the test accuracy after it, predict's time per image on the 10,000 test
images (batch 128, no_grad) and the peak RSS. Without an argument each model
runs in a process of its own. Run with OMP_WAIT_POLICY=PASSIVE and tide's
thread count (bench/run.sh sets both)."""
import subprocess
import sys
import time

if len(sys.argv) < 2:
    for model in ("mlp", "cnn"):
        subprocess.run([sys.executable, sys.argv[0], model], check=True)
    sys.exit(0)
WHICH = sys.argv[1]
if WHICH not in ("mlp", "cnn"):
    sys.exit(f"train_torch.py: the model is mlp or cnn, got {WHICH!r}")

import torch
from torch import nn

from peer_timing import emit, measure, threads
from train_data import load, peak_rss_mib

torch.set_num_threads(threads())
torch.manual_seed(0)

if WHICH == "mlp":
    x_train, y_train, x_test, y_test = map(torch.from_numpy, load((-1, 784)))
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
else:
    x_train, y_train, x_test, y_test = map(torch.from_numpy, load((-1, 1, 28, 28)))
    model = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64 * 5 * 5, 128), nn.ReLU(), nn.Linear(128, 10))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = nn.CrossEntropyLoss()
BATCH = 128

t0 = time.perf_counter()
model.train()
order = torch.randperm(len(x_train))
for a in range(0, len(x_train), BATCH):
    rows = order[a:a + BATCH]
    x, y = x_train[rows], y_train[rows]
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
epoch = time.perf_counter() - t0


def predict():
    model.eval()
    with torch.no_grad():
        return torch.cat([model(x_test[a:a + BATCH]) for a in range(0, len(x_test), BATCH)])


accuracy = (predict().argmax(1) == y_test).float().mean().item()
per_image = measure(predict, 1, 5) / len(x_test)

name = "train_" + WHICH
emit(name + "_epoch", epoch, "s")
emit(name + "_test_accuracy", accuracy, "acc")
emit(name + "_predict", per_image * 1e6, "us/image")
emit(name + "_peak_rss", peak_rss_mib(), "MiB")
