# bench/data_torch.py — bench/data.lua's pipeline in torch.utils.data:
# Fashion-MNIST, shuffled, scaled to float32 [0,1] with a channel dim,
# batches of 128, with DataLoader num_workers 0 (as tide's parallel 1) and 2
# (as AUTOTUNE on 2 cores). samples/s over an epoch, median of 3.
import gzip, os, time
import numpy as np
import torch

torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
d = "/usr/share/datasets/fashion-mnist"
with gzip.open(f"{d}/train-images-idx3-ubyte.gz") as f:
    x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)
with gzip.open(f"{d}/train-labels-idx1-ubyte.gz") as f:
    y = np.frombuffer(f.read(), np.uint8, offset=8)
xt, yt = torch.from_numpy(x.copy()), torch.from_numpy(y.astype(np.int64))

class DS(torch.utils.data.Dataset):
    def __len__(self): return len(xt)
    def __getitem__(self, i): return xt[i].float().unsqueeze(-1) / 255, yt[i]

def rate(workers):
    dl = torch.utils.data.DataLoader(DS(), batch_size=128, shuffle=True, num_workers=workers,
                                     persistent_workers=workers > 0, prefetch_factor=2 if workers else None)
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        n = 0
        for a, b in dl: n += a.shape[0]
        times.append(time.perf_counter() - t0)
    times.sort()
    return len(xt) / times[1]

print(f"fmnist_pipeline_parallel1: {rate(0):.4g} samples/s")
print(f"fmnist_pipeline_autotune: {rate(2):.4g} samples/s")
