"""The runtime's element types as NumPy arrays.

Plans use dtypes NumPy lacks (bf16, the two fp8s). Those tensors cross the
C API as raw bytes; here they are decoded to float32 on the way out and,
for bf16, encoded from float32 on the way in (round to nearest even).
"""
import numpy as np

# The plan format's dtype codes (mptrt.h, mptrt_dtype).
F32, F16, BF16, F8E4M3FN, F8E5M2, I64, I32, I1 = 1, 2, 3, 4, 5, 6, 7, 8

NAMES = {F32: "f32", F16: "f16", BF16: "bf16", F8E4M3FN: "f8E4M3FN",
         F8E5M2: "f8E5M2", I64: "i64", I32: "i32", I1: "i1"}

# The NumPy dtype each code is stored as (its raw bits for bf16 and fp8).
STORAGE = {F32: np.float32, F16: np.float16, BF16: np.uint16,
           F8E4M3FN: np.uint8, F8E5M2: np.uint8, I64: np.int64,
           I32: np.int32, I1: np.uint8}

# The NumPy dtype a value of each code is handed to Python as.
VALUE = {F32: np.float32, F16: np.float16, BF16: np.float32,
         F8E4M3FN: np.float32, F8E5M2: np.float32, I64: np.int64,
         I32: np.int32, I1: np.bool_}


def _fp8_table(exponent_bits, mantissa_bits, finite_only):
    """float32 values of the 256 codes of an fp8 format."""
    bias = (1 << (exponent_bits - 1)) - 1
    table = np.empty(256, dtype=np.float32)
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        exponent = (code >> mantissa_bits) & ((1 << exponent_bits) - 1)
        mantissa = code & ((1 << mantissa_bits) - 1)
        top = (1 << exponent_bits) - 1
        if finite_only and exponent == top and mantissa == (1 << mantissa_bits) - 1:
            value = float("nan")  # E4M3FN: S.1111.111 is NaN, no infinities
        elif not finite_only and exponent == top:
            value = float("inf") if mantissa == 0 else float("nan")
        elif exponent == 0:
            value = mantissa / (1 << mantissa_bits) * 2.0 ** (1 - bias)
        else:
            value = (1 + mantissa / (1 << mantissa_bits)) * 2.0 ** (exponent - bias)
        table[code] = sign * value
    return table


_FP8 = {}


def decode(dtype, data, shape):
    """The array a plan tensor's bytes `data` hold, as a value array."""
    raw = np.frombuffer(data, dtype=STORAGE[dtype]).reshape(shape)
    if dtype == BF16:
        return (raw.astype(np.uint32) << 16).view(np.float32)
    if dtype in (F8E4M3FN, F8E5M2):
        if dtype not in _FP8:
            _FP8[dtype] = (_fp8_table(4, 3, True) if dtype == F8E4M3FN
                           else _fp8_table(5, 2, False))
        return _FP8[dtype][raw]
    if dtype == I1:
        return raw != 0
    return raw.copy()


def encode(dtype, value, shape, name):
    """`value` as a C-contiguous array of a plan tensor's storage type.

    Raises ValueError naming `name` when the shape differs or the value
    cannot be converted."""
    array = np.asarray(value)
    if tuple(array.shape) != tuple(shape):
        raise ValueError("'%s': the plan expects shape %s (%s), got %s"
                         % (name, list(shape), NAMES[dtype], list(array.shape)))
    if dtype == BF16:
        if array.dtype == np.uint16:
            return np.ascontiguousarray(array)  # already bf16 bits
        bits = np.ascontiguousarray(array, dtype=np.float32).view(np.uint32)
        # Round to nearest even; NaNs stay quiet NaNs.
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        nan = np.isnan(array.astype(np.float32))
        return np.where(nan, np.uint16(0x7FC0), rounded).astype(np.uint16)
    if dtype in (F8E4M3FN, F8E5M2):
        if array.dtype != np.uint8:
            raise ValueError("'%s' is %s: give its raw codes as a uint8 array"
                             % (name, NAMES[dtype]))
        return np.ascontiguousarray(array)
    if dtype in (I64, I32) and array.dtype.kind == "f":
        raise ValueError("'%s': the plan expects integers (%s), got %s"
                         % (name, NAMES[dtype], array.dtype))
    if dtype in (I64, I32) and array.dtype.kind in "iu" and array.size:
        # A value the plan's type cannot hold would wrap (2^32 + 3 -> 3).
        info = np.iinfo(STORAGE[dtype])
        low, high = int(array.min()), int(array.max())
        if low < info.min or high > info.max:
            bad = low if low < info.min else high
            raise ValueError("'%s': %d does not fit the plan's %s (%d to %d)"
                             % (name, bad, NAMES[dtype], info.min, info.max))
    return np.ascontiguousarray(array, dtype=STORAGE[dtype])
