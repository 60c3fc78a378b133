"""tests/interop/onnx_export_check.py DIR — every DIR/<case>.onnx that tide.onnx.export wrote
(tests/interop/onnx_export_write.lua) passes onnx.checker (full check, with shape inference),
and onnxruntime, run on DIR/<case>.inputs, gives the outputs tide gave (DIR/<case>.outputs)."""
import glob
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from safetensors.numpy import load_file


def check(path):
    case = path[:-len(".onnx")]
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    opset = {o.domain: o.version for o in model.opset_import}[""]
    inputs = load_file(case + ".inputs")
    want = load_file(case + ".outputs")
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    assert sorted(names) == sorted(want), (path, names, sorted(want))
    got = sess.run(names, {i.name: inputs[i.name] for i in sess.get_inputs()})
    for name, g in zip(names, got):
        w = want[name]
        assert g.dtype == w.dtype, (path, name, g.dtype, w.dtype)
        assert g.shape == w.shape, (path, name, g.shape, w.shape)
        if np.issubdtype(w.dtype, np.floating):
            err = float(np.max(np.abs(g.astype(np.float64) - w))) if w.size else 0.0
            assert np.allclose(g, w, rtol=1e-4, atol=2e-5), (path, name, err)
        else:
            assert np.array_equal(g, w), (path, name, g, w)
    print(f"  {os.path.basename(path)} (opset {opset}): onnx.checker ok, onnxruntime matches tide")


def main():
    paths = sorted(glob.glob(os.path.join(sys.argv[1], "*.onnx")))
    assert len(paths) >= 6, paths
    for p in paths:
        check(p)


if __name__ == "__main__":
    main()
