#!/usr/bin/env python3
"""Writes a small binary ONNX model, y = Add(x, w) with x a float [2, 3]
graph input and w a float [2, 3] initializer in raw_data, damaged as KIND
asks. Encodes the protobuf by hand (standard library only), so the tests
need no onnx Python package.

usage: make-bad-onnx.py KIND OUT.onnx [LOCATION [KEY=VALUE ...]]
KIND: good, raw-data-short (20 of w's 24 bytes), dims-overflow (w is
[2^40, 2^40]), negative-dim (x is [2, -3]), external (w's bytes are external
data in the file LOCATION, with each KEY=VALUE, such as offset=8 or
length=abc, as a further external_data entry, written as given),
nul-name (the input x is named "x\\0y"), long-name (the input x has a name of
2^20 + 1 bytes, more than a plan's string holds)
"""
import struct
import sys


def varint(n):
    n &= (1 << 64) - 1  # negative int64s take ten bytes, as protobuf writes them
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def field_varint(number, value):
    return varint(number << 3) + varint(value)


def field_bytes(number, data):
    if isinstance(data, str):
        data = data.encode()
    return varint(number << 3 | 2) + varint(len(data)) + data


def value_info(name, dims):
    shape = b"".join(field_bytes(1, field_varint(1, d)) for d in dims)
    tensor_type = field_varint(1, 1) + field_bytes(2, shape)  # elem_type FLOAT
    return field_bytes(1, name) + field_bytes(2, field_bytes(1, tensor_type))


def main():
    kind, out = sys.argv[1], sys.argv[2]
    x_name = {"nul-name": "x\0y", "long-name": "x" * ((1 << 20) + 1)}.get(kind, "x")
    x_dims = [2, -3] if kind == "negative-dim" else [2, 3]
    w_dims = [1 << 40, 1 << 40] if kind == "dims-overflow" else [2, 3]
    raw = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
    if kind == "raw-data-short":
        raw = raw[:20]
    initializer = (b"".join(field_varint(1, d) for d in w_dims) + field_varint(2, 1) +
                   field_bytes(8, "w"))
    if kind == "external":
        entries = [("location", sys.argv[3])]
        entries += [tuple(arg.split("=", 1)) for arg in sys.argv[4:]]
        for key, value in entries:  # StringStringEntryProto: key 1, value 2
            initializer += field_bytes(13, field_bytes(1, key) + field_bytes(2, value))
        initializer += field_varint(14, 1)  # data_location: EXTERNAL
    else:
        initializer += field_bytes(9, raw)
    node = (field_bytes(1, x_name) + field_bytes(1, "w") + field_bytes(2, "y") +
            field_bytes(3, "add") + field_bytes(4, "Add"))
    graph = (field_bytes(1, node) + field_bytes(2, "g") + field_bytes(5, initializer) +
             field_bytes(11, value_info(x_name, x_dims)) +
             field_bytes(12, value_info("y", [2, 3])))
    opset = field_bytes(1, "") + field_varint(2, 17)
    model = field_varint(1, 8) + field_bytes(8, opset) + field_bytes(7, graph)
    with open(out, "wb") as f:
        f.write(model)


if __name__ == "__main__":
    main()
