"""bench/torch_timing.py — what every bench/*_torch.py peer times with: PyTorch
set to tide's thread count, and bench/peer_timing.py's median timing and
output lines."""
import torch

from peer_timing import emit, measure, threads

torch.set_num_threads(threads())

__all__ = ["emit", "measure"]
