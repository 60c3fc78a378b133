# bench/model_files_gen.py DIR — the models of bench/model_files.c and
# bench/model_files_peers.py (issue 28's speed section): the same Keras 3
# models written as a TF SavedModel (`model.export`) and as an ONNX file.
# Models: an MLP 784-256-128-10, a small CNN on 28x28x1 (conv 32, pool,
# conv 64, pool, dense 10) and keras.applications.MobileNetV2 at 224x224
# (weights=None: random weights, seeded; speed does not depend on them).
# The ONNX file is written here from the Keras layers (opset 17, NCHW inside
# with one Transpose after the NHWC input, as tf2onnx writes it: no
# converter package is needed), and checked against Keras with onnxruntime.
# For each model and batch (1, 8): DIR/<model>_b<batch>_io.safetensors holds
# the input `x` and Keras's output `y`.
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
import numpy as np  # noqa: E402
import keras  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from safetensors.numpy import save_file  # noqa: E402

BATCHES = (1, 8)


def mlp():
    x = keras.Input((784,), name="x")
    h = keras.layers.Dense(256, activation="relu")(x)
    h = keras.layers.Dense(128, activation="relu")(h)
    return keras.Model(x, keras.layers.Dense(10, activation="softmax")(h), name="mlp")


def cnn():
    x = keras.Input((28, 28, 1), name="x")
    h = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    h = keras.layers.MaxPooling2D(2)(h)
    h = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling2D(2)(h)
    h = keras.layers.Flatten()(h)
    return keras.Model(x, keras.layers.Dense(10, activation="softmax")(h), name="cnn")


def mobilenet_v2():
    return keras.applications.MobileNetV2(weights=None)


class Onnx:
    """Keras layers -> ONNX nodes, NCHW between the input and the first Flatten/Dense."""

    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, hint):
        self.n += 1
        return "%s_%d" % (hint, self.n)

    def const(self, hint, arr):
        n = self.name(hint)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), n))
        return n

    def node(self, op, inputs, hint, **attrs):
        out = self.name(hint)
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def activation(self, fn, x):
        name = fn.__name__
        if name == "linear":
            return x
        if name == "relu":
            return self.node("Relu", [x], "relu")
        if name == "softmax":
            return self.node("Softmax", [x], "softmax", axis=-1)
        raise SystemExit("model_files_gen: no ONNX for activation " + name)


def same_pads(size, k, s, d=1):
    """TF's SAME padding of one spatial dim: (begin, end)."""
    out = -(-size // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    return total // 2, total - total // 2


def to_onnx(model):
    g = Onnx()
    names = {}  # keras layer name -> ONNX tensor name
    layout = {}  # layer name -> "nchw" or "flat"
    inp = model.inputs[0]
    nchw = len(inp.shape) == 4
    x_name = "x"
    for layer in model.layers:
        cls = type(layer).__name__
        if cls == "InputLayer":
            names[layer.name] = g.node("Transpose", [x_name], "nchw", perm=[0, 3, 1, 2]) if nchw else x_name
            layout[layer.name] = "nchw" if nchw else "flat"
            continue
        node = layer._inbound_nodes[0]
        ins = [t._keras_history.operation.name for t in node.input_tensors]
        x = names[ins[0]]
        in_shape = node.input_tensors[0].shape
        lay = layout[ins[0]]
        w = [v.numpy() for v in layer.weights]
        if cls in ("Conv2D", "DepthwiseConv2D"):
            kh, kw = layer.kernel_size
            sh, sw = layer.strides
            if layer.padding == "same":
                pt, pb = same_pads(in_shape[1], kh, sh)
                pl, pr = same_pads(in_shape[2], kw, sw)
            else:
                pt = pb = pl = pr = 0
            if cls == "Conv2D":
                kern, group = w[0].transpose(3, 2, 0, 1), 1
            else:
                c, mult = w[0].shape[2], w[0].shape[3]
                kern, group = w[0].transpose(2, 3, 0, 1).reshape(c * mult, 1, kh, kw), c
            args = [x, g.const("w", kern)] + ([g.const("b", w[1])] if layer.use_bias else [])
            y = g.node("Conv", args, "conv", kernel_shape=[kh, kw], strides=[sh, sw], pads=[pt, pl, pb, pr],
                       group=group)
            y = g.activation(layer.activation, y)
        elif cls == "BatchNormalization":
            gamma, beta, mean, var = w
            y = g.node("BatchNormalization", [x, g.const("g", gamma), g.const("b", beta), g.const("m", mean),
                                              g.const("v", var)], "bn", epsilon=float(layer.epsilon))
        elif cls == "ReLU":
            if layer.max_value is not None:
                y = g.node("Clip", [x, g.const("lo", np.float32(0)), g.const("hi", np.float32(layer.max_value))],
                           "relu6")
            else:
                y = g.node("Relu", [x], "relu")
        elif cls == "ZeroPadding2D":
            (t, b), (left, r) = layer.padding
            y = g.node("Pad", [x, g.const("pads", np.array([0, 0, t, left, 0, 0, b, r], np.int64))], "pad")
        elif cls == "MaxPooling2D":
            kh, kw = layer.pool_size
            y = g.node("MaxPool", [x], "pool", kernel_shape=[kh, kw], strides=list(layer.strides))
        elif cls == "Add":
            y = g.node("Add", [names[n] for n in ins], "add")
        elif cls == "GlobalAveragePooling2D":
            y = g.node("ReduceMean", [x], "gap", axes=[2, 3], keepdims=0)
            lay = "flat"
        elif cls == "Flatten":
            if lay == "nchw":  # Keras flattens NHWC
                x = g.node("Transpose", [x], "nhwc", perm=[0, 2, 3, 1])
            y = g.node("Flatten", [x], "flat", axis=1)
            lay = "flat"
        elif cls == "Dense":
            y = g.node("Gemm", [x, g.const("w", w[0]), g.const("b", w[1])], "dense")
            y = g.activation(layer.activation, y)
        elif cls == "Dropout":
            y = x
        else:
            raise SystemExit("model_files_gen: no ONNX for layer " + cls)
        names[layer.name] = y
        layout[layer.name] = lay
    out = names[model.layers[-1].name]
    g.nodes.append(helper.make_node("Identity", [out], ["y"]))
    shape = ["N"] + list(inp.shape[1:])
    graph = helper.make_graph(g.nodes, model.name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", model.outputs[0].shape[-1]])],
                              g.inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    only = os.environ.get("MODEL_FILES_ONLY")
    for name, make in (("mlp", mlp), ("cnn", cnn), ("mobilenet_v2", mobilenet_v2)):
        if only and only != name:
            continue
        keras.utils.set_random_seed(0)
        model = make()
        model.export(os.path.join(d, name + "_tf"), verbose=False)
        proto = to_onnx(model)
        onnx.save(proto, os.path.join(d, name + ".onnx"))
        sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
        rng = np.random.default_rng(1)
        for b in BATCHES:
            x = rng.uniform(0, 1, (b,) + tuple(model.inputs[0].shape[1:])).astype(np.float32)
            y = np.asarray(model(x, training=False))
            got = sess.run(["y"], {"x": x})[0]
            worst = float(np.max(np.abs(got - y)))
            if worst > 1e-4:
                raise SystemExit("model_files_gen: %s: onnxruntime differs from Keras by %g" % (name, worst))
            save_file({"x": x, "y": y}, os.path.join(d, "%s_b%d_io.safetensors" % (name, b)))
        print("# %s: SavedModel and ONNX written (onnxruntime within 1e-4 of Keras)" % name, flush=True)


if __name__ == "__main__":
    main()
