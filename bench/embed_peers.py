# bench/embed_peers.py DIR — onnxruntime's side of bench/embed_model.c: the
# same 784-256-128-10 MLP (weights from DIR/mlp.safetensors, written by
# bench/embed_model.lua) built as an ONNX model with the `onnx` package
# (Gemm, Relu, Gemm, Relu, Gemm, Softmax), checked against Lua's prediction
# (DIR/mlp_io.safetensors), and run at batch 1 call by call.
# onnxruntime is called from Python (sess.run_with_iobinding over
# preallocated buffers), which adds a fixed cost per call that a C host would
# not pay; it is measured on a model of one Identity node bound the same way
# (`ort_python_call_floor`). `*_python_median`/`*_python_p99` are the raw
# wall times of one call; `*_median`/`*_p99` (the names bench/embed_model.c
# prints, so bench/compare.lua sets them side by side) are those less the
# floor's median: a lower bound of onnxruntime's time in C, so the ratio is
# the strict one for tide. (Its profiler's model_run events were tried: with
# profiling on, a run took 3x longer.) Settings: intra_op_num_threads 1
# (`mlp_b1_1thread`) and onnxruntime's default (`mlp_b1_default_threads`).
# Prints `name: value unit` lines.
import os
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file

ITERS = int(os.environ.get("EMBED_ITERS", "20000"))


def build_model(w):
    inits = [numpy_helper.from_array(w[k].astype(np.float32), k) for k in ("w1", "b1", "w2", "b2", "w3", "b3")]
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h1"]),
        helper.make_node("Relu", ["h1"], ["a1"]),
        helper.make_node("Gemm", ["a1", "w2", "b2"], ["h2"]),
        helper.make_node("Relu", ["h2"], ["a2"]),
        helper.make_node("Gemm", ["a2", "w3", "b3"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["y"], axis=-1),
    ]
    graph = helper.make_graph(nodes, "mlp",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 784])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model.SerializeToString()


def session(model_bytes, threads):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads:
        so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])


def identity_model():
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "floor",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 10])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def call_floor(threads):
    """The median wall time of one run_with_iobinding call of a model that does nothing."""
    sess = session(identity_model(), threads)
    x, y = np.zeros((1, 10), np.float32), np.empty((1, 10), np.float32)
    binding = sess.io_binding()
    binding.bind_cpu_input("x", x)
    binding.bind_output("y", "cpu", 0, np.float32, [1, 10], y.ctypes.data)
    for _ in range(2000):
        sess.run_with_iobinding(binding)
    ts = []
    for _ in range(ITERS):
        t0 = time.perf_counter_ns()
        sess.run_with_iobinding(binding)
        ts.append((time.perf_counter_ns() - t0) / 1e3)
    return quantiles(ts)[0]


def quantiles(ts):
    ts = sorted(ts)
    return ts[len(ts) // 2], ts[int(len(ts) * 0.99)]


def measure(name, model_bytes, threads, x, want, floor):
    sess = session(model_bytes, threads)
    y = np.empty((1, 10), np.float32)
    binding = sess.io_binding()
    binding.bind_cpu_input("x", x)
    binding.bind_output("y", "cpu", 0, np.float32, [1, 10], y.ctypes.data)
    sess.run_with_iobinding(binding)
    if np.max(np.abs(y - want)) > 1e-5:
        raise SystemExit("embed_peers: onnxruntime's output differs from Lua's by %g" % np.max(np.abs(y - want)))
    for _ in range(2000):
        sess.run_with_iobinding(binding)
    ts = []
    for _ in range(ITERS):
        t0 = time.perf_counter_ns()
        sess.run_with_iobinding(binding)
        ts.append((time.perf_counter_ns() - t0) / 1e3)
    med, p99 = quantiles(ts)
    print("%s_python_median: %.2f us" % (name, med))
    print("%s_python_p99: %.2f us" % (name, p99))
    print("%s_median: %.2f us" % (name, med - floor))
    print("%s_p99: %.2f us" % (name, p99 - floor))
    sys.stdout.flush()


def main():
    d = sys.argv[1]
    w = load_file(os.path.join(d, "mlp.safetensors"))
    io = load_file(os.path.join(d, "mlp_io.safetensors"))
    x, want = np.ascontiguousarray(io["x"], np.float32), io["y"]
    model_bytes = build_model(w)
    for name, threads in (("mlp_b1_1thread", 1), ("mlp_b1_default_threads", 0)):
        floor = call_floor(threads)
        print("ort_python_call_floor_%s: %.2f us" % (name[7:], floor))
        measure(name, model_bytes, threads, x, want, floor)
    print("# onnxruntime %s, onnx %s" % (ort.__version__, onnx.__version__))


if __name__ == "__main__":
    main()
