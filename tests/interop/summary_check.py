# tests/interop/summary_check.py — `make interop`: TensorBoard's event
# reader and TensorFlow read an event file tide wrote (summary_write.lua):
# tags, steps, values, plugins, histograms as TF buckets them, PNG pixels,
# and the TFRecord framing through tf.data.TFRecordDataset.
#   /work/venv-tf/bin/python tests/interop/summary_check.py build/tide
import os
import subprocess
import sys
import tempfile

import numpy as np
import tensorflow as tf
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.backend.event_processing import plugin_event_accumulator
from tensorboard.plugins.histogram import summary_v2 as histogram_v2
from tensorboard.util import tensor_util

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    tide = sys.argv[1] if len(sys.argv) > 1 else "build/tide"
    logdir = tempfile.mkdtemp(prefix="tide_interop_summary_")
    path = subprocess.check_output([tide, os.path.join(HERE, "summary_write.lua"), logdir], text=True).strip()

    # The framing: TF's reader checks every masked CRC-32C.
    records = [r.numpy() for r in tf.data.TFRecordDataset(path)]
    first = tf.compat.v1.Event.FromString(records[0])
    assert first.file_version == "brain.Event:2", first
    assert len(records) == 1 + 20 + 2 + 2 + 1, len(records)

    acc = event_accumulator.EventAccumulator(path, size_guidance={event_accumulator.TENSORS: 0})
    acc.Reload()
    tags = acc.Tags()["tensors"]
    assert sorted(tags) == ["accuracy", "loss", "notes", "pictures", "table", "weights"], tags

    def plugin(tag):
        return acc.SummaryMetadata(tag).plugin_data.plugin_name

    for tag, fn in (("loss", lambda s: 1 / (s + 1)), ("accuracy", lambda s: s / 10)):
        assert plugin(tag) == "scalars"
        events = acc.Tensors(tag)
        assert [e.step for e in events] == list(range(10))
        for e in events:
            got = tensor_util.make_ndarray(e.tensor_proto)
            assert got.dtype == np.float32 and got.shape == ()
            assert got == np.float32(fn(e.step)), (tag, e.step, got)
    assert acc.SummaryMetadata("accuracy").summary_description == "share right"

    assert plugin("weights") == "histograms"
    v = np.array([((i * 37) % 101) / 7.0 - 3.0 for i in range(1000)])
    expect = {
        3: histogram_v2._buckets(tf.constant(v), 30).numpy(),
        4: histogram_v2._buckets(tf.constant(v.astype(np.float32) * np.float32(2)), 10).numpy(),
    }
    events = acc.Tensors("weights")
    assert [e.step for e in events] == [3, 4]
    for e in events:
        got = tensor_util.make_ndarray(e.tensor_proto)
        assert got.dtype == np.float64
        assert np.array_equal(got, expect[e.step]), (e.step, got, expect[e.step])

    assert plugin("notes") == "text" and plugin("table") == "text"
    notes = tensor_util.make_ndarray(acc.Tensors("notes")[0].tensor_proto)
    assert notes.shape == () and notes.item() == b"hello *TensorBoard*", notes
    table = tensor_util.make_ndarray(acc.Tensors("table")[0].tensor_proto)
    assert table.tolist() == [[b"a", b"b"], [b"c", b"d"]], table

    assert plugin("pictures") == "images"
    pic = acc.Tensors("pictures")[0]
    assert pic.step == 7
    strings = tensor_util.make_ndarray(pic.tensor_proto)
    assert strings.shape == (4,) and strings[0] == b"6" and strings[1] == b"8", strings[:2]
    px = np.array([(i * 11) % 256 for i in range(2 * 8 * 6 * 3)], dtype=np.uint8).reshape([2, 8, 6, 3])
    for k in range(2):
        img = tf.image.decode_png(strings[2 + k]).numpy()
        assert np.array_equal(img, px[k]), k

    # What TensorBoard's dashboards load (after its data_compat migration).
    pacc = plugin_event_accumulator.EventAccumulator(logdir)
    pacc.Reload()
    for name, want in (("scalars", {"loss", "accuracy"}), ("histograms", {"weights"}), ("text", {"notes", "table"}),
                       ("images", {"pictures"})):
        got = set(pacc.PluginTagToContent(name))
        assert got == want, (name, got)

    subprocess.call(["rm", "-rf", logdir])
    print("summary interop: ok (TFRecordDataset framing; EventAccumulator scalars, histograms, text, images)")


if __name__ == "__main__":
    main()
