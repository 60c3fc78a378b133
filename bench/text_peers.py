"""bench/text_peers.py PEER — bench/text.lua's work in TensorFlow: the same synthetic corpus (the same MINSTD
generator), keras.layers.TextVectorization (int, output_sequence_length 64, the same vocabulary) and keras_hub's
WordPieceTokenizer (uncased, sequence_length 64, the same vocabulary) in a tf.data map (batches of 256,
num_parallel_calls AUTOTUNE, prefetch), sentences/s (medians of 5 epochs) and sentences per CPU-second of the
process, three interleaved rounds.
  tf            as above (keras_hub needs tensorflow-text; its line is left out when it cannot load)
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
import tensorflow as tf  # noqa: E402

T = threads()
tf.config.threading.set_intra_op_parallelism_threads(T)
tf.config.threading.set_inter_op_parallelism_threads(T)
import keras  # noqa: E402

N = int(os.environ.get("TEXT_BENCH_N", "20000"))
sentences, words = text_corpus.make(N)

vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", ".", "!"] + words[:3000]
for s in text_corpus.SYL:
    vocab += [s, "##" + s]
vocab = list(dict.fromkeys(vocab))
tv = keras.layers.TextVectorization(max_tokens=20000, output_sequence_length=64)
tv.set_vocabulary(list(dict.fromkeys(w.lower() for w in words[:3000])))


def rate(layer):
    ds = (tf.data.Dataset.from_tensor_slices(sentences).batch(256)
          .map(layer, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE))

    def epoch():
        for _ in ds:
            pass

    c0 = time.process_time()
    epoch()
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        epoch()
        times.append(time.perf_counter() - t0)
    return N / statistics.median(times), 6 * N / (time.process_time() - c0)


try:
    import keras_hub
    wp = keras_hub.tokenizers.WordPieceTokenizer(vocabulary=vocab, lowercase=True, strip_accents=True,
                                                 sequence_length=64)
except Exception as e:  # noqa: BLE001
    print(f"# keras_hub WordPieceTokenizer unavailable: {e}", file=sys.stderr)
    wp = None
tvr, wpr = [], []
for _ in range(3):
    tvr.append(rate(tv))
    if wp is not None:
        wpr.append(rate(wp))
emit("text_vectorization_int_map", statistics.median(r[0] for r in tvr), "sentences/s")
if wpr:
    emit("wordpiece_uncased_map", statistics.median(r[0] for r in wpr), "sentences/s")
emit("text_vectorization_int_map_cpu", statistics.median(r[1] for r in tvr), "sentences/cpu-s")
if wpr:
    emit("wordpiece_uncased_map_cpu", statistics.median(r[1] for r in wpr), "sentences/cpu-s")
