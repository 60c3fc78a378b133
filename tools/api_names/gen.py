# Writes TF 2.21's and Keras 3's public names, one file per module, for tools/api_coverage.lua.
# Run: /work/venv-tf/bin/python tools/api_names/gen.py  (the lists are committed; make test never runs Python)
import os
import types

import tensorflow as tf
import keras

HERE = os.path.dirname(os.path.abspath(__file__))


def public(mod, keep_modules=False):
    names = []
    for n in dir(mod):
        if n.startswith("_"):
            continue
        v = getattr(mod, n)
        # submodules (keras.ops.nn, tf.math.special ...) are namespaces, not names a user calls
        if isinstance(v, types.ModuleType) and not keep_modules:
            continue
        names.append(n)
    return sorted(set(names))


def dataset_methods():
    names = []
    for n in dir(tf.data.Dataset):
        if n.startswith("_"):
            continue
        names.append(n)
    return sorted(set(names))


MODULES = {
    "keras.layers": keras.layers,
    "keras.losses": keras.losses,
    "keras.metrics": keras.metrics,
    "keras.optimizers": keras.optimizers,
    "keras.callbacks": keras.callbacks,
    "keras.activations": keras.activations,
    "keras.initializers": keras.initializers,
    "keras.regularizers": keras.regularizers,
    "keras.ops": keras.ops,
    "keras.utils": keras.utils,
    "tf.math": tf.math,
    "tf.nn": tf.nn,
    "tf.linalg": tf.linalg,
    "tf.signal": tf.signal,
    "tf.image": tf.image,
    "tf.strings": tf.strings,
    "tf.bitwise": tf.bitwise,
    "tf.sparse": tf.sparse,
    "tf": tf,
}


def write(name, names, header):
    with open(os.path.join(HERE, name + ".txt"), "w") as f:
        f.write("# %s\n" % header)
        for n in names:
            f.write(n + "\n")


def main():
    ver = "TF %s, Keras %s" % (tf.__version__, keras.__version__)
    for name, mod in MODULES.items():
        write(name, public(mod), "%s public names (%s), modules left out" % (name, ver))
    write("tf.data.Dataset", dataset_methods(), "tf.data.Dataset public attributes (%s)" % ver)


if __name__ == "__main__":
    main()
