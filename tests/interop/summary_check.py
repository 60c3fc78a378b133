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
from tensorboard.compat.proto import config_pb2
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
    check_graphs(tide)
    print("summary interop: ok (TFRecordDataset framing; EventAccumulator scalars, histograms, text, images, graphs)")


def check_graphs(tide):
    """The graphs graph_write.lua writes, as TensorBoard's graph dashboard loads them."""
    logdir = tempfile.mkdtemp(prefix="tide_interop_graph_")
    subprocess.check_call([tide, os.path.join(HERE, "graph_write.lua"), logdir])

    # trace_export: the run's graph (Graph()) ...
    acc = event_accumulator.EventAccumulator(os.path.join(logdir, "trace"), size_guidance={event_accumulator.TENSORS: 0})
    acc.Reload()
    assert acc.Tags()["graph"], acc.Tags()
    graph = acc.Graph()
    ops = {n.name: n.op for n in graph.node}
    inputs = {n.name: list(n.input) for n in graph.node}
    want = {"x": "Placeholder", "dense/kernel": "VarHandleOp", "ReadVariableOp": "ReadVariableOp", "matmul": "matmul",
            "AssignAddVariableOp": "AssignAddVariableOp", "cond": "If", "cond/then/relu": "relu",
            "cond/else/mul": "mul", "mean": "mean", "Identity": "Identity"}
    for name, op in want.items():
        assert ops.get(name) == op, (name, ops.get(name), ops)
    assert inputs["matmul"] == ["x", "ReadVariableOp"], inputs["matmul"]
    for node in graph.node:  # every input names a node
        for i in node.input:
            assert i.lstrip("^").split(":")[0] in ops, (node.name, i)
    shapes = [s.dim for s in graph.node[[n.name for n in graph.node].index("matmul")].attr["_output_shapes"].list.shape]
    assert [[d.size for d in s] for s in shapes] == [[2, 2]], shapes
    # ... and the tagged RunMetadata trace_export writes for the graphs plugin
    assert acc.Tags()["tensors"] == ["step_trace"], acc.Tags()
    [event] = acc.Tensors("step_trace")
    assert event.step == 7
    assert acc.SummaryMetadata("step_trace").plugin_data.plugin_name == "graph_run_metadata_graph"
    meta = config_pb2.RunMetadata.FromString(event.tensor_proto.string_val[0])
    assert [n.name for n in meta.function_graphs[0].pre_optimization_graph.node] == [n.name for n in graph.node]
    pacc = plugin_event_accumulator.EventAccumulator(os.path.join(logdir, "trace"))
    pacc.Reload()
    assert "step_trace" in pacc.PluginTagToContent("graph_run_metadata_graph"), pacc.PluginTagToContent("graph_run_metadata_graph")

    # The TensorBoard callback's write_graph: the train step's graph in the train run.
    acc = event_accumulator.EventAccumulator(os.path.join(logdir, "fit", "train"))
    acc.Reload()
    graph = acc.Graph()
    ops = {n.name: n.op for n in graph.node}
    for name in ("hidden/kernel", "hidden/bias", "out/kernel", "out/bias", "iteration"):
        assert ops.get(name) == "VarHandleOp", (name, ops)
    assert "relu" in ops.values() and "AssignSubVariableOp" in ops.values(), sorted(set(ops.values()))
    subprocess.call(["rm", "-rf", logdir])


if __name__ == "__main__":
    main()
