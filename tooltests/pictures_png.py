"""Read a PNG with the standard library only (zlib), for checking pictures in tests."""
from __future__ import annotations

import struct
import zlib

_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}  # colour type -> samples per pixel


def read_png(data: bytes):
    """(width, height, rows): rows are lists of pixel tuples (8-bit PNGs only;
    palette images give their index tuples, which is enough to count colours)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat = 8, b""
    header: tuple | None = None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError("no IHDR chunk: not a PNG")
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or interlace:
        raise ValueError(f"only 8-bit, non-interlaced PNGs (got depth {depth}, interlace {interlace})")
    n = _CHANNELS[colour]
    stride = width * n
    raw = zlib.decompress(idat)
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        filter_type, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - n] if x >= n else 0
            b = prev[x]
            c = prev[x - n] if x >= n else 0
            if filter_type == 1:
                line[x] = (line[x] + a) & 255
            elif filter_type == 2:
                line[x] = (line[x] + b) & 255
            elif filter_type == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif filter_type == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pred) & 255
        rows.append([tuple(line[x:x + n]) for x in range(0, stride, n)])
        prev = line
    return width, height, rows


def colours(rows, step: int = 1) -> set:
    """The distinct pixel values (every ``step``-th row and column)."""
    return {px for row in rows[::step] for px in row[::step]}
