"""tests/interop/keras_files_check.py DIR — Keras 3 loads the .keras and
.weights.h5 files tests/interop/keras_files_write.lua wrote (keras.saving.load_model,
and load_weights into a clone) and predicts what tide predicted, with tide's
optimizer step count; then writes DIR/keras_<name>.keras and .json (its own models
of the same kinds) for tide to load back."""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import keras  # noqa: E402
import numpy as np  # noqa: E402

d = sys.argv[1]
for name in ("mlp", "cnn", "lstm"):
    info = json.load(open(os.path.join(d, name + ".json")))
    x = np.asarray(info["x"], np.float32)
    want = np.asarray(info["y"], np.float32)
    m = keras.saving.load_model(os.path.join(d, name + ".keras"))
    got = m.predict(x, verbose=0)
    assert np.allclose(got, want, atol=1e-5, rtol=1e-5), (name, np.abs(got - want).max())
    if "iterations" in info:
        assert int(m.optimizer.iterations.numpy()) == info["iterations"], name
    clone = keras.models.clone_model(m)
    clone.load_weights(os.path.join(d, name + ".weights.h5"))
    assert np.allclose(clone.predict(x, verbose=0), want, atol=1e-5, rtol=1e-5), name
    # and Keras's own file of the same model, for tide to read back
    keras.utils.set_random_seed(1)
    k = keras.models.clone_model(m)
    if "iterations" in info:
        k.compile(optimizer=m.optimizer.__class__.from_config(m.optimizer.get_config()), loss="mse")
        k.fit(x, np.zeros_like(want), verbose=0)
    k.save(os.path.join(d, "keras_" + name + ".keras"))
    out = {"x": x.tolist(), "y": k.predict(x, verbose=0).tolist()}
    if "iterations" in info:
        out["iterations"] = int(k.optimizer.iterations.numpy())
    json.dump(out, open(os.path.join(d, "keras_" + name + ".json"), "w"))
print("Keras read tide's .keras and .weights.h5 files: ok")
