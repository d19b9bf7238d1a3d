# SPDX-License-Identifier: MIT
"""A truth file (docs/trace-format.md, "Truth files") from a test's own bookkeeping:
which requests each GPU record it caused truly serves. Written with a minimal MessagePack
encoder (ints, str, nil, arrays, maps: all a truth file holds), so the tests need no
msgpack package and never read the trace to make their truth."""
import os
import socket
import struct


def _pack(v, out):
    if v is None:
        out.append(0xc0)
    elif isinstance(v, bool):
        out.append(0xc3 if v else 0xc2)
    elif isinstance(v, int):
        if v < 0:
            raise ValueError("truth files hold no negative ints")
        if v < 0x80:
            out.append(v)
        elif v < 1 << 8:
            out += b"\xcc" + struct.pack(">B", v)
        elif v < 1 << 16:
            out += b"\xcd" + struct.pack(">H", v)
        elif v < 1 << 32:
            out += b"\xce" + struct.pack(">I", v)
        else:
            out += b"\xcf" + struct.pack(">Q", v)
    elif isinstance(v, str):
        b = v.encode()
        if len(b) < 32:
            out.append(0xa0 | len(b))
        else:
            out += b"\xd9" + struct.pack(">B", len(b)) if len(b) < 256 else \
                b"\xda" + struct.pack(">H", len(b))
        out += b
    elif isinstance(v, (list, tuple)):
        out += bytes([0x90 | len(v)]) if len(v) < 16 else b"\xdc" + struct.pack(">H", len(v))
        for x in v:
            _pack(x, out)
    elif isinstance(v, dict):
        out += bytes([0x80 | len(v)]) if len(v) < 16 else b"\xde" + struct.pack(">H", len(v))
        for k, x in v.items():
            _pack(k, out)
            _pack(x, out)
    else:
        raise TypeError(type(v))


REC_TRUTH = 40   # LIN_REC_TRUTH
KERNEL = 22      # LIN_REC_KERNEL


def write(path, labels):
    """labels: iterable of (gpu_kind, key, [request ids]) made by this process."""
    out = bytearray()
    _pack({"format": "lineage-truth", "version": [1, 2], "writer": "lineage-python-tests",
           "host": socket.gethostname(), "pid": os.getpid(), "start_host_ns": 0,
           "host_clock": "CLOCK_MONOTONIC", "host_clock_source": "clock_gettime",
           "tsc_hz": None, "device_clock": "cupti", "ext_kind": 5, "backend": "custom",
           "cupti": None}, out)
    for kind, key, reqs in labels:
        _pack([REC_TRUTH, kind, key, sorted(reqs), None, None], out)
    with open(path, "wb") as f:
        f.write(out)
