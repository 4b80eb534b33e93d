"""mpt-train's checkpoint format (runtime/tools/mpt-train/Checkpoint.h).

A checkpoint written here resumes with `mpt-train --resume`, and one that
mpt-train wrote loads here. Version 1, little-endian:

    header   b"MPTCKPT\\0", u32 version = 1, u32 tensor count, u64 steps run
    tensor   u32 name length, name (UTF-8), u32 dtype, u32 rank, rank x i64
             dims, u64 byte count, the bytes, u32 CRC-32 of the record from
             its name length to its last data byte
    trailer  b"MPTCKEND", u32 CRC-32 of every byte before it

Files are written to a temporary name in the target's directory, flushed,
fsync'ed and renamed over the target.
"""
import os
import struct
import tempfile
import zlib

MAGIC = b"MPTCKPT\0"
TRAILER = b"MPTCKEND"
VERSION = 1
MAX_RANK = 8


class CheckpointError(Exception):
    """A checkpoint that cannot be read, or does not fit the plan."""


def write(path, steps, tensors):
    """Writes `tensors`, a list of (name, dtype code, shape, bytes), and the
    step count `steps` to `path`, atomically."""
    out = bytearray(MAGIC)
    out += struct.pack("<IIQ", VERSION, len(tensors), steps)
    for name, dtype, shape, data in tensors:
        encoded = name.encode("utf-8")
        record = struct.pack("<I", len(encoded)) + encoded
        record += struct.pack("<II", dtype, len(shape))
        record += struct.pack("<%dq" % len(shape), *shape)
        record += struct.pack("<Q", len(data)) + bytes(data)
        out += record + struct.pack("<I", zlib.crc32(record))
    out += TRAILER
    out += struct.pack("<I", zlib.crc32(out))

    directory = os.path.dirname(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(
        prefix="." + os.path.basename(path) + ".tmp.", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(out)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def read(path):
    """(steps, {name: (dtype code, shape, bytes)}) of the checkpoint at
    `path`; CheckpointError says what is wrong with a bad file."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise CheckpointError("cannot read checkpoint '%s': %s" % (path, e.strerror))

    def bad(what):
        return CheckpointError("checkpoint '%s': %s" % (path, what))

    if len(data) < 24 or data[:8] != MAGIC:
        raise bad("not an MPT checkpoint (bad magic)")
    version, count, steps = struct.unpack_from("<IIQ", data, 8)
    if version != VERSION:
        raise bad("unsupported version %d (this reads version %d)" % (version, VERSION))
    at = 24
    tensors = {}

    def need(n, what):
        if len(data) - at < n:
            raise bad("truncated in %s" % what)

    for index in range(count):
        start = at
        where = "tensor %d" % index
        need(4, where)
        (length,) = struct.unpack_from("<I", data, at)
        at += 4
        need(length, where)
        name = data[at:at + length].decode("utf-8", errors="replace")
        at += length
        where = "tensor '%s'" % name
        need(8, where)
        dtype, rank = struct.unpack_from("<II", data, at)
        at += 8
        if rank > MAX_RANK:
            raise bad("%s has rank %d (at most %d)" % (where, rank, MAX_RANK))
        need(8 * rank + 8, where)
        shape = list(struct.unpack_from("<%dq" % rank, data, at))
        at += 8 * rank
        (size,) = struct.unpack_from("<Q", data, at)
        at += 8
        need(size + 4, where)
        payload = data[at:at + size]
        at += size
        (stored,) = struct.unpack_from("<I", data, at)
        if zlib.crc32(data[start:at]) != stored:
            raise bad("%s is corrupt (CRC mismatch)" % where)
        at += 4
        tensors[name] = (dtype, shape, payload)
    if len(data) - at < 12 or data[at:at + 8] != TRAILER:
        raise bad("truncated or corrupt (no trailer after %d tensors)" % count)
    (stored,) = struct.unpack_from("<I", data, at + 8)
    if zlib.crc32(data[:at + 8]) != stored:
        raise bad("corrupt (file CRC mismatch)")
    if len(data) != at + 12:
        raise bad("corrupt: %d bytes after the trailer" % (len(data) - at - 12))
    return steps, tensors
