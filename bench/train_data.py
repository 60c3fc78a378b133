"""bench/train_data.py — Fashion-MNIST for the Python peers of bench/train.lua
(bench/train_torch.py, bench/train_peers.py): Debian's dataset-fashion-mnist
IDX files as numpy arrays (float32 images in [0, 1], int64 labels), and the
peak RSS line every process prints at its end."""
import gzip
import os

import numpy as np

DIR = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")


def read_idx(name):
    """The uint8 array of DIR/name.gz, shaped by its IDX header."""
    path = os.path.join(DIR, name + ".gz")
    if not os.path.exists(path):
        raise SystemExit(f"{path} is missing; install Debian's package dataset-fashion-mnist")
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def images(name, shape):
    """Images as float32 in [0, 1], reshaped to `shape` (-1 for the batch)."""
    x = read_idx(name).astype(np.float32)
    x /= 255
    return x.reshape(shape)


def load(shape):
    """(x_train, y_train, x_test, y_test), the images shaped as `shape`."""
    return (images("train-images-idx3-ubyte", shape), read_idx("train-labels-idx1-ubyte").astype(np.int64),
            images("t10k-images-idx3-ubyte", shape), read_idx("t10k-labels-idx1-ubyte").astype(np.int64))


def peak_rss_mib():
    """The process's peak resident set (VmHWM), in MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0
