"""The constructs measured against real LEAPP 0.7.2 (docs/leapp-0.7.2-behaviour.md), as data.

Each case is (name, cell body using input ``x`` and output ``y``, trace input). Used by
``benchmarks/leapp_comparison.py`` and ``tests/test_leapp_comparison.py``.
"""

import numpy as np

X1 = np.array([0.5, -0.3, 1.2, 0.8], np.float32)
X2 = np.array([[0.5, -0.3, 1.2, 0.8], [0.1, 0.9, -0.7, 0.4], [1.5, 0.2, 0.3, -0.2]], np.float32)
XI = np.array([3, 1, 4, 2], np.int32)
X1s = np.array([0.7], np.float32)
M3 = (np.eye(3) * 3 + np.array([[0.1,0.2,0.3],[0.4,0.5,0.6],[0.7,0.8,0.9]])).astype(np.float32)

def fresh_like(x: np.ndarray, rng: np.random.Generator, body: str) -> np.ndarray:
    """A fresh input like ``x``: integers for int inputs, well-conditioned matrices for inversions."""
    if x.dtype.kind == "i":
        return rng.integers(-5, 10, x.shape).astype(x.dtype)
    if "inv" in body:
        return (np.eye(3) * 3 + rng.uniform(-1, 1, (3, 3))).astype(x.dtype)
    return rng.uniform(-1.5, 2.0, x.shape).astype(x.dtype)

CASES = [
 ("np.interp(x, xp, fp)", "y = x * 0.1 + np.interp(x, [0.0, 1.0], [0.0, 10.0])", X1),
 ("x * np.float32(2.0)", "y = x * np.float32(2.0)", X1),
 ("x / np.linalg.norm(x)", "y = x / np.linalg.norm(x)", X1),
 ("x[0] (1-D) then x * x[0]", "s = x[0]\ny = x * s", X1),
 ("x[0, 0] (2-D) then x * x[0, 0]", "y = x * x[0, 0]", X2),
 ("x[::-1]", "y = x[::-1]", X1),
 ("x[1:3][::-1]", "y = x[1:3][::-1]", X1),
 ("w, a, b, c = x; y = x + (w*a + b - c)", "w, a, b, c = x\ny = x + (w * a + b - c)", X1),
 ("w, a, b, c = x; y = np.stack([c, b, a, w])", "w, a, b, c = x\ny = np.stack([c, b, a, w])", X1),
 ("for v in x: acc = acc + v", "acc = x * 0\nfor v in x:\n    acc = acc + v\ny = acc", X1),
 ("x.item() on (1,)", "y = x * x.item()", X1s),
 ("float(x[0:1])", "y = x * float(x[0:1])", X1),
 ("x.tolist()", "vals = x.tolist()\ny = x * vals[0]", X1),
 ("if x.any(): (else branch differs)", "if x.any():\n    y = x * 2\nelse:\n    y = x - 1", X1),
 ("if x.sum() > 0:", "if x.sum() > 0:\n    y = x * 2\nelse:\n    y = x - 1", X1),
 ("assert np.isfinite(x).all() (a check: its other path raises)", "assert np.isfinite(x).all()\ny = x * 2", X1),
 ("if np.isnan(x).any(): raise (a check)", "if np.isnan(x).any():\n    raise ValueError('NaN')\ny = x * 2", X1),
 ("if np.abs(x).max() > 10: print (a log, its value unused)",
  "if np.abs(x).max() > 10.0:\n    print('large', x.max())\ny = x * 2", X1),
 ("np.asarray(x) then op", "a = np.asarray(x)\ny = a * 2", X1),
 ("np.asarray(x, dtype=np.float64)", "y = np.asarray(x, dtype=np.float64) * 2", X1),
 ("np.array(x)", "y = np.array(x) * 2", X1),
 ("x.view(np.ndarray) then op", "a = x.view(np.ndarray)\ny = a * 2", X1),
 ("x.__array__() then op", "a = x.__array__()\ny = a * 2", X1),
 ("np.array([x[0:1], x[1:2]]) * 2", "y = np.array([x[0:1], x[1:2]]) * 2", X1),
 ("np.array([x[0:1], x[1:2]]) mixed with x", "z = np.array([x[0:1], x[1:2]])\ny = x[0:2] + z.reshape(2)", X1),
 ("v = z[:, :2]; v *= 0.5 (a write through a view)", "z = x * 1\nv = z[:, :2]\nv *= 0.5\ny = z", X2),
 ("np.divide(z[:, :2], 4, out=z[:, :2])", "z = x * 1\nnp.divide(z[:, :2], 4.0, out=z[:, :2])\ny = z", X2),
 ("z[:, :2] *= 0.5 (through the base's subscript)", "z = x * 1\nz[:, :2] *= 0.5\ny = z", X2),
 ("v = z[:, :2]; z[0] += 1; v * 2 (a view read after a write into its base)",
  "z = x * 1\nv = z[:, :2]\nz[0] += 1.0\ny = v * 2", X2),
 ("for r in z: r -= r.mean() (rows written through their views)",
  "z = x * 1\nfor r in z:\n    r -= r.mean()\ny = z", X2),
 ("out=np.zeros(4); out[1:3]=x[1:3]; y=out*2", "out = np.zeros(4)\nout[1:3] = x[1:3]\ny = out * 2", X1),
 ("out=np.zeros(4,f32); out[1:3]=x[1:3]; y=x+out", "out = np.zeros(4, np.float32)\nout[1:3] = x[1:3]\ny = x + out", X1),
 ("x += 1", "x += 1\ny = x * 2", X1),
 ("x[0:2] = 0 (setitem on traced)", "x[0:2] = 0\ny = x * 2", X1),
 ("x.prod()", "y = x.prod()", X1),
 ("x.T (2-D)", "y = x.T", X2),
 ("x.dot(x) (1-D)", "y = x.dot(x)", X1),
 ("np.dot(x, x) (1-D)", "y = np.dot(x, x)", X1),
 ("x.mean() on int32", "y = x.mean()", XI),
 ("np.std(x)", "y = np.std(x)", X1),
 ("np.sum(x, axis=())", "y = np.sum(x, axis=())", X1),
 ("np.max(x, axis=0) (2-D)", "y = np.max(x, axis=0)", X2),
 ("np.transpose(x) (2-D)", "y = np.transpose(x)", X2),
 ("np.split(x, 2)", "a, b = np.split(x, 2)\ny = a * 10 + b", X1),
 ("np.where(x > 0, x, 0)", "y = np.where(x > 0, x, 0)", X1),
 ("np.clip(x, 0, 1)", "y = np.clip(x, 0, 1)", X1),
 ("np.round(x, 2)", "y = np.round(x, 2)", X1),
 ("x.astype(np.int32)", "y = x.astype(np.int32)", X1),
 ("np.concatenate([x, x])", "y = np.concatenate([x, x])", X1),
 ("np.expand_dims(x, 0)", "y = np.expand_dims(x, 0)", X1),
 ("np.pad(x, 1)", "y = np.pad(x, 1)", X1),
 ("x + np.pad(x, 1)[1:5]", "y = x + np.pad(x, 1)[1:5]", X1),
 ("x + np.fft.fft(x).real", "y = x + np.fft.fft(x).real", X1),
 ("x + np.linalg.inv(x) (3,3)", "y = x + np.linalg.inv(x)", M3),
 ("np.cross(x[0:3], x[1:4])", "y = np.cross(x[0:3], x[1:4])", X1),
 ("np.append(x, 1.0)", "y = np.append(x, 1.0)", X1),
 ("x[np.array([2,0], dtype=np.int32)]", "y = x[np.array([2, 0], dtype=np.int32)]", X1),
 ("x[x > 0]", "y = x[x > 0]", X1),
 ("np.add.reduce(x)", "y = np.add.reduce(x)", X1),
 ("np.cumsum(x)", "y = np.cumsum(x)", X1),
 ("scipy.special.expit(x)", "from scipy.special import expit\ny = expit(x)", X1),
 ("x + scipy.special.expit(x)", "from scipy.special import expit\ny = x + expit(x)", X1),
 ("x + scipy.ndimage.uniform_filter1d(x, 3)", "import scipy.ndimage\ny = x + scipy.ndimage.uniform_filter1d(x, 3)", X1),
 ("x + np.float64(1) (f32 x)", "y = x + np.float64(1)", X1),
 ("x + np.array(1.0) (0-d f64 array)", "y = x + np.array(1.0)", X1),
 ("x + 1.0 (python float)", "y = x + 1.0", X1),
 ("x * np.array(2.0, np.float32)", "y = x * np.array(2.0, np.float32)", X1),
]
CASES += [
("x * (x.sum() + 1)", "y = x * (x.sum() + 1)", X1),
 ("x - x.mean()", "y = x - x.mean()", X1),
 ("np.sum(x) * 2 (0-d output)", "y = np.sum(x) * 2", X1),
 ("x.sum() (0-d output)", "y = x.sum()", X1),
 ("x / np.sqrt(np.sum(x * x))", "y = x / np.sqrt(np.sum(x * x))", X1),
 ("x * x.max()", "y = x * x.max()", X1),
 ("np.prod(x)", "y = np.prod(x)", X1),
 ("x * float(np.sum(x[0:1]))", "y = x * float(np.sum(x[0:1]))", X1),
 ("x * int(x.astype(np.int32).sum())", "y = x * int(x.astype(np.int32).sum())", X1),
 ("x * x.dot(x)", "y = x * x.dot(x)", X1),
 ("np.dot(x, x.T) (2-D)", "y = np.dot(x, x.T)", X2),
 ("np.round(x)", "y = np.round(x)", X1),
 ("x.round(2)", "y = x.round(2)", X1),
 ("np.cumsum(x, axis=0)", "y = np.cumsum(x, axis=0)", X1),
 ("x.mean() on float32", "y = x.mean()", X1),
 ("np.mean(x, axis=0) on int32", "y = np.mean(x, axis=0)", XI),
 ("np.float32(2.0) * x", "y = np.float32(2.0) * x", X1),
 ("x * np.float64(2.0) (f32 x)", "y = x * np.float64(2.0)", X1),
 ("x + np.float32(1) (f32 x)", "y = x + np.float32(1)", X1),
 ("np.flip(x)", "y = np.flip(x)", X1),
 ("x[np.arange(3, -1, -1)]", "y = x[np.arange(x.shape[0] - 1, -1, -1)]", X1),
 ("x[0:1, 0:1] (2-D)", "y = x * x[0:1, 0:1]", X2),
 ("x[0] (2-D row)", "y = x * x[0]", X2),
 ("np.std(x, axis=0, keepdims=True) (2-D)", "y = np.std(x, axis=0, keepdims=True)", X2),
 ("x.sum(keepdims=True)", "y = x.sum(keepdims=True)", X1),]


def cell(body: str) -> str:
    """The case body as one LEAPP node with input x and output y."""
    return ('x = annotate.input_tensors("node", {"x": x})\n' + body
            + '\nannotate.output_tensors("node", {"y": y}, export_with="jit")\n')
