"""bench/text_bpe_peers.py PEER — bench/text_bpe.lua's work elsewhere: the same synthetic corpus (the same MINSTD
generator) through keras_hub's BytePairTokenizer (sequence_length 64, the fixture vocabulary and merges) called on
batches of 256 and in a tf.data map (AUTOTUNE), and through HF tokenizers' byte-level BPE (the same files) with
encode_batch; sentences per CPU-second of the process (and per wall second for the map), three interleaved rounds.
  tf            as above (each line left out when its library cannot load)
  jax, tf-xla   nothing
Threads: tide's count (TIDE_NUM_THREADS), set before TensorFlow loads."""
import os
import statistics
import sys
import time

import text_corpus
from peer_timing import emit, threads

MODE = sys.argv[1] if len(sys.argv) > 1 else "tf"
if MODE in ("jax", "tf-xla"):
    sys.exit(0)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
T = threads()
os.environ.setdefault("RAYON_NUM_THREADS", str(T))
import tensorflow as tf  # noqa: E402

tf.config.threading.set_intra_op_parallelism_threads(T)
tf.config.threading.set_inter_op_parallelism_threads(T)

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB = os.path.join(HERE, "..", "tests", "fixtures", "text", "bpe_vocab.json")
MERGES = os.path.join(HERE, "..", "tests", "fixtures", "text", "bpe_merges.txt")
N, BATCH = int(os.environ.get("TEXT_BENCH_N", "20000")), 256
sentences, _ = text_corpus.make(N)
batches = [sentences[i:i + BATCH] for i in range(0, N, BATCH)]


def cpu_rate(fn):
    c0 = time.process_time()
    for b in batches:
        fn(b)
    return N / (time.process_time() - c0)


def map_rate(layer):
    ds = (tf.data.Dataset.from_tensor_slices(sentences).batch(BATCH)
          .map(layer, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE))

    def epoch():
        for _ in ds:
            pass

    c0 = time.process_time()
    epoch()
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        epoch()
        times.append(time.perf_counter() - t0)
    return N / statistics.median(times), 4 * N / (time.process_time() - c0)


peers = {}
try:
    import keras_hub
    kh = keras_hub.tokenizers.BytePairTokenizer(vocabulary=VOCAB, merges=MERGES, sequence_length=64)
    peers["keras_hub"] = kh
except Exception as e:  # noqa: BLE001
    print(f"# keras_hub BytePairTokenizer unavailable: {e}", file=sys.stderr)
try:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    hf = Tokenizer(models.BPE.from_file(VOCAB, MERGES))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.enable_truncation(64)
    hf.enable_padding(length=64)
    peers["hf"] = hf
except Exception as e:  # noqa: BLE001
    print(f"# HF tokenizers unavailable: {e}", file=sys.stderr)

res = {k: [] for k in ("kh_cpu", "kh_map", "kh_map_cpu", "hf_cpu")}
if "keras_hub" in peers:
    cpu_rate(peers["keras_hub"])
for _ in range(3):
    if "keras_hub" in peers:
        res["kh_cpu"].append(cpu_rate(peers["keras_hub"]))
        w, c = map_rate(peers["keras_hub"])
        res["kh_map"].append(w)
        res["kh_map_cpu"].append(c)
    if "hf" in peers:
        res["hf_cpu"].append(cpu_rate(peers["hf"].encode_batch))
if res["kh_cpu"]:
    emit("bpe_batch256_cpu", statistics.median(res["kh_cpu"]), "sentences/cpu-s")
    emit("bpe_map", statistics.median(res["kh_map"]), "sentences/s")
    emit("bpe_map_cpu", statistics.median(res["kh_map_cpu"]), "sentences/cpu-s")
if res["hf_cpu"]:
    emit("bpe_hf_encode_batch256_cpu", statistics.median(res["hf_cpu"]), "sentences/cpu-s")
