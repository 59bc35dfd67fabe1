"""The arrays of a NumPy file as float32 values, whatever dtype holds them.

`ulpgate suite export` keeps a format's dtype: float16 for f16, and for bf16 (NumPy has
no such type) the 2-byte void that ml_dtypes' bfloat16 saves as. Every value of the three
formats is a float32, so the scripts here compute on float32 arrays; this reads them so.
"""


def as_float32(a):
    """An array of float32, float16, float64 or bfloat16 voids as float32 values (exact)."""
    import numpy as np
    a = np.asarray(a)
    if a.dtype.kind == "V" and a.dtype.itemsize == 2:
        return (np.ascontiguousarray(a).view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return a if a.dtype == np.float32 else a.astype(np.float32)


def load_float32(path):
    """{name: float32 array} of an .npz, or {stem: array} of an .npy."""
    import numpy as np
    data = np.load(path)
    if hasattr(data, "files"):
        return {k: as_float32(data[k]) for k in data.files}
    import os
    return {os.path.splitext(os.path.basename(str(path)))[0]: as_float32(data)}
