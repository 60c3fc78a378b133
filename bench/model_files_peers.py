# bench/model_files_peers.py PEER DIR [MODEL ...] — the peers' side of
# bench/model_files.c on the models bench/model_files_gen.py wrote into DIR:
#   ort: onnxruntime on DIR/<model>.onnx (intra_op_num_threads 1, sequential,
#        graph optimizations on, run_with_iobinding over preallocated buffers);
#   tf:  TensorFlow on DIR/<model>_tf (tf.saved_model.load, the
#        serving_default signature; intra- and inter-op threads 1).
# Each figure is printed under both of tide's names (<model>_tf_* and
# <model>_onnx_*), so bench/compare.lua sets the peer beside tide reading
# either file. `_load`: time to the first prediction (load, bind, the first
# run) in a fresh session, median of 3, ms. `_b1`/`_b8`: median wall time
# of one call, us; for onnxruntime, less the median of a call of a
# one-Identity model bound the same way (its Python call floor, as
# bench/embed_peers.py does: a lower bound of its time from C). `_cpu`: the
# process's CPU time per call (less the floor's CPU time for onnxruntime).
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
import numpy as np  # noqa: E402
from safetensors.numpy import load_file  # noqa: E402

LOADS, RUNS = 3, 7
PEER, DIR = sys.argv[1], sys.argv[2]
MODELS = sys.argv[3:] or ["mlp", "cnn", "mobilenet_v2"]


def emit(model, what, value, unit):
    for fmt in ("tf", "onnx"):
        print("%s_%s_%s: %.2f %s" % (model, fmt, what, value, unit), flush=True)


def io(model, batch):
    f = load_file(os.path.join(DIR, "%s_b%d_io.safetensors" % (model, batch)))
    return np.ascontiguousarray(f["x"]), f["y"]


def check(got, want, what):
    worst = float(np.max(np.abs(np.asarray(got) - want)))
    if worst > 1e-4:
        raise SystemExit("model_files_peers: %s differs from Keras by %g" % (what, worst))


def time_calls(call):
    """Median wall and CPU seconds per call over RUNS rounds of about 0.3 s."""
    call()
    t0 = time.perf_counter()
    call()
    n = int(0.3 / max(time.perf_counter() - t0, 1e-6)) + 1
    wall, cpu = [], []
    for _ in range(RUNS):
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(n):
            call()
        wall.append((time.perf_counter() - w0) / n)
        cpu.append((time.process_time() - c0) / n)
    return statistics.median(wall), statistics.median(cpu)


def time_loads(model, path, load_and_predict):
    """Times LOADS runs of load_and_predict(x, y) -> (handle, prediction) at batch 1 (from the file to the first
    prediction, checked), prints the medians as `load`/`load_cpu` and returns the last handle."""
    x1, y1 = io(model, 1)
    wall, cpu = [], []
    for _ in range(LOADS):
        w0, c0 = time.perf_counter(), time.process_time()
        handle, y = load_and_predict(x1, y1)
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
        check(y, y1, path)
    emit(model, "load", statistics.median(wall) * 1e3, "ms")
    emit(model, "load_cpu", statistics.median(cpu) * 1e3, "ms")
    return handle


def ort_main():
    import onnxruntime as ort
    from onnx import TensorProto, helper

    def session(model):
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])

    def bound(sess, x, out_shape):
        y = np.empty(out_shape, np.float32)
        b = sess.io_binding()
        b.bind_cpu_input("x", x)
        b.bind_output("y", "cpu", 0, np.float32, list(out_shape), y.ctypes.data)
        return b, y

    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "floor",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 10])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])])
    floor_sess = session(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    fb, _ = bound(floor_sess, np.zeros((1, 10), np.float32), (1, 10))
    floor_wall, floor_cpu = time_calls(lambda: floor_sess.run_with_iobinding(fb))
    print("ort_python_call_floor: %.2f us" % (floor_wall * 1e6))
    for model in MODELS:
        path = os.path.join(DIR, model + ".onnx")
        def load_and_predict(x1, y1):
            sess = session(path)
            b, y = bound(sess, x1, y1.shape)
            sess.run_with_iobinding(b)
            return sess, y

        sess = time_loads(model, path, load_and_predict)
        for batch in (1, 8):
            x, want = io(model, batch)
            b, y = bound(sess, x, want.shape)
            sess.run_with_iobinding(b)
            check(y, want, "%s batch %d" % (path, batch))
            w, c = time_calls(lambda: sess.run_with_iobinding(b))
            emit(model, "b%d" % batch, (w - floor_wall) * 1e6, "us")
            emit(model, "b%d_cpu" % batch, (c - floor_cpu) * 1e6, "us")
    print("# onnxruntime %s" % ort.__version__)


def tf_main():
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    for model in MODELS:
        path = os.path.join(DIR, model + "_tf")
        def load_and_predict(x1, y1):
            fn = tf.saved_model.load(path).signatures["serving_default"]
            return fn, next(iter(fn(tf.constant(x1)).values())).numpy()

        fn = time_loads(model, path, load_and_predict)
        for batch in (1, 8):
            x, want = io(model, batch)
            xt = tf.constant(x)
            check(next(iter(fn(xt).values())).numpy(), want, "%s batch %d" % (path, batch))
            w, c = time_calls(lambda: fn(xt))
            emit(model, "b%d" % batch, w * 1e6, "us")
            emit(model, "b%d_cpu" % batch, c * 1e6, "us")
    print("# tensorflow %s" % tf.__version__)


{"ort": ort_main, "tf": tf_main}[PEER]()
