"""Murmur3 x86 32-bit hashing, as Iceberg's bucket transform requires (spec Appendix B).

The result matches Guava's ``Hashing.murmur3_32_fixed().hashBytes(data).asInt()``: the
unsigned 32-bit hash reinterpreted as a signed Java ``int``.
"""

from __future__ import annotations

import struct

__all__ = ["hash32"]

_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_MASK = 0xFFFFFFFF
# Precompiled unpackers for the block counts of short inputs (keys, bounds) save a format parse.
_UNPACK_BLOCKS = [struct.Struct(f"<{n}I").unpack_from for n in range(17)]


def hash32(data: bytes, seed: int = 0) -> int:
    """Return the Murmur3 x86 32-bit hash of ``data`` as a signed 32-bit int.

    Args:
        data: the bytes to hash (``bytes``, ``bytearray`` or ``memoryview``).
        seed: the hash seed, taken modulo 2**32; Iceberg always uses 0.

    Returns:
        An int in ``[-2**31, 2**31 - 1]``.
    """
    length = len(data)
    h = seed & _MASK
    n_blocks = length >> 2
    if n_blocks:
        # One unpack call for all full blocks is much faster than slicing block by block.
        if n_blocks < len(_UNPACK_BLOCKS):
            blocks = _UNPACK_BLOCKS[n_blocks](data)
        else:
            blocks = struct.unpack_from(f"<{n_blocks}I", data)
        for k in blocks:
            k = (k * _C1) & _MASK
            k = ((k << 15) | (k >> 17)) * _C2 & _MASK
            h ^= k
            h = ((h << 13) | (h >> 19)) & _MASK
            h = (h * 5 + 0xE6546B64) & _MASK
    tail = length & 3
    if tail:
        # Tail bytes are read as unsigned and little-endian; Guava's "fixed" variant does the same.
        k = int.from_bytes(data[length - tail :], "little")
        k = (k * _C1) & _MASK
        k = ((k << 15) | (k >> 17)) * _C2 & _MASK
        h ^= k
    h ^= length
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    return h - 0x100000000 if h & 0x80000000 else h
