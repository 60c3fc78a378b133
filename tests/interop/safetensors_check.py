"""tests/interop/safetensors_check.py DIR — Python's safetensors reads the files
tests/interop/safetensors_write.lua wrote (names, dtypes, shapes, values and
metadata as tide described them in DIR/*.json), then writes DIR/python.safetensors
and DIR/python.json for tide to read back."""
import json
import math
import os
import sys

import ml_dtypes
import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file

DTYPES = {"float32": "F32", "float64": "F64", "float16": "F16", "bfloat16": "BF16", "int8": "I8", "uint8": "U8",
          "int32": "I32", "int64": "I64", "bool": "BOOL"}
NP = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "BF16": ml_dtypes.bfloat16, "I8": np.int8,
      "U8": np.uint8, "I32": np.int32, "I64": np.int64, "BOOL": np.bool_}


def header(path):
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        return json.loads(f.read(n))


def as_number(v):
    if isinstance(v, str):
        return float(v)
    return v


def check(path, described):
    want = json.load(open(described))
    head = header(path)
    names = sorted(k for k in head if k != "__metadata__")
    assert names == sorted(want), (path, names, sorted(want))
    raw = {}
    # numpy has no bfloat16: the raw bytes through ml_dtypes; the rest through safe_open.
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        data = f.read()[n:]
    with safe_open(path, framework="numpy") as st:
        for name in names:
            info, w = head[name], want[name]
            assert info["dtype"] == DTYPES[w["dtype"]], (name, info["dtype"], w["dtype"])
            assert info["shape"] == w["shape"], (name, info["shape"], w["shape"])
            if info["dtype"] == "BF16":
                b, e = info["data_offsets"]
                arr = np.frombuffer(data[b:e], ml_dtypes.bfloat16).reshape(info["shape"])
            else:
                arr = st.get_tensor(name)
                assert arr.dtype == NP[info["dtype"]], (name, arr.dtype)
            got = [x.item() if hasattr(x, "item") else x for x in arr.reshape(-1).astype(
                np.float64 if info["dtype"] in ("BF16", "F16", "F32", "F64") else arr.dtype)]
            exp = [as_number(x) for x in w["values"]]
            assert len(got) == len(exp), (name, len(got), len(exp))
            for g, x in zip(got, exp):
                same = (math.isnan(x) and math.isnan(g)) if isinstance(x, float) and math.isnan(x) else g == x
                assert same, (path, name, got, exp)
            raw[name] = arr
    return raw


def main():
    d = sys.argv[1]
    check(os.path.join(d, "tide_all.safetensors"), os.path.join(d, "tide_all.json"))
    with safe_open(os.path.join(d, "tide_all.safetensors"), framework="numpy") as st:
        assert st.metadata() == {"writer": "tide", "n": "13"}, st.metadata()
    check(os.path.join(d, "model.safetensors"), os.path.join(d, "model.json"))
    with safe_open(os.path.join(d, "ckpt-1.safetensors"), framework="numpy") as st:
        keys = sorted(st.keys())
        assert keys == ["model/layer-0/bias", "model/layer-0/kernel", "model/layer-1/bias", "model/layer-1/kernel",
                        "save_counter", "step"], keys
        assert st.get_tensor("step").item() == 7
        assert st.metadata()["format"] == "tide.train.Checkpoint"
    # Python writes; tide reads back (safetensors_write.lua check).
    out = {
        "a": np.arange(6, dtype=np.float32).reshape(2, 3) / 4,
        "b": np.array([-1, 2**40], np.int64),
        "c": np.array([True, False]),
        "d": np.array(3.5, np.float64),
        "e": np.zeros((0, 2), np.uint8),
        "f": np.array([0.5, -8], np.float16),
    }
    save_file(out, os.path.join(d, "python.safetensors"), {"writer": "python"})
    names = {"a": "float32", "b": "int64", "c": "bool", "d": "float64", "e": "uint8", "f": "float16"}

    def num(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        return "%.17g" % v

    parts = []
    for k in sorted(out):
        v = out[k]
        shape = "[" + ",".join(str(s) for s in v.shape) + "]"
        values = "[" + ",".join(num(x.item()) for x in v.reshape(-1)) + "]"
        parts.append('"%s":{"dtype":"%s","shape":%s,"values":%s}' % (k, names[k], shape, values))
    with open(os.path.join(d, "python.json"), "w") as f:
        f.write("{" + ",".join(parts) + "}")


if __name__ == "__main__":
    main()
