"""tests/interop/records_check.py — TF 2.21 reads the TFRecords records_write.lua
wrote with tide and checks every value (exits non-zero on any difference)."""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

d = sys.argv[1]
features = {
    "id": tf.io.FixedLenFeature([], tf.int64),
    "big": tf.io.FixedLenFeature([], tf.int64),
    "vec": tf.io.FixedLenFeature([3], tf.float32),
    "name": tf.io.FixedLenFeature([], tf.string),
    "tags": tf.io.VarLenFeature(tf.int64),
    "words": tf.io.VarLenFeature(tf.string),
}
for comp, name in [("", "plain"), ("GZIP", "GZIP"), ("ZLIB", "ZLIB")]:
    ds = tf.data.TFRecordDataset(os.path.join(d, f"examples_{name}.tfrecord"), compression_type=comp)
    recs = [r.numpy() for r in ds]
    assert len(recs) == 20, (name, len(recs))
    out = tf.io.parse_example(tf.constant(recs), features)
    for k in range(20):
        i = k + 1
        assert out["id"][k].numpy() == i * 1000003
        assert out["big"][k].numpy() == 4611686018427387905 + i
        np.testing.assert_array_equal(out["vec"][k].numpy(), np.array([i / 8, -i, i * i], np.float32))
        assert out["name"][k].numpy() == b"name-%d\0bin\xff" % i
    tags = tf.sparse.to_dense(out["tags"]).numpy()
    for k in range(20):
        i = k + 1
        assert list(tags[k][: i % 3]) == [j * i for j in range(1, i % 3 + 1)], (k, tags[k])
    words = tf.sparse.to_dense(out["words"], default_value=b"").numpy()
    for k in range(20):
        i = k + 1
        assert [w for w in words[k] if w] == [b"w%d_%d" % (i, j) for j in range(1, i % 4 + 1)]
    print(f"interop records: TF read tide's {name} TFRecord: 20 Examples, every value")
big = [r.numpy() for r in tf.data.TFRecordDataset(os.path.join(d, "big.tfrecord"), compression_type="GZIP")]
assert big == [b"0123456789" * 300000]
print("interop records: TF read tide's 3 MB GZIP record")
