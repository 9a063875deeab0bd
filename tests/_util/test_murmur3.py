"""Murmur3 x86 32-bit against the reference test vectors and Iceberg's Appendix B vectors."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icefloe._util.murmur3 import hash32


def unsigned(value: int) -> int:
    return value & 0xFFFFFFFF


@pytest.mark.parametrize(
    ("data", "seed", "expected"),
    [
        # Published vectors of the reference MurmurHash3_x86_32 (SMHasher), every tail length.
        (b"", 0, 0x00000000),
        (b"", 1, 0x514E28B7),
        (b"", 0xFFFFFFFF, 0x81F16F39),
        (b"\x00\x00\x00\x00", 0, 0x2362F9DE),
        (b"a", 0x9747B28C, 0x7FA09EA6),
        (b"aa", 0x9747B28C, 0x5D211726),
        (b"aaa", 0x9747B28C, 0x283E0130),
        (b"aaaa", 0x9747B28C, 0x5A97808A),
        (b"abc", 0, 0xB3DD93FA),
        (b"abcd", 0x9747B28C, 0xF0478627),
        (b"Hello, world!", 0x9747B28C, 0x24884CBA),
        (b"The quick brown fox jumps over the lazy dog", 0x9747B28C, 0x2FA826CD),
    ],
)
def test_reference_vectors(data: bytes, seed: int, expected: int) -> None:
    assert unsigned(hash32(data, seed)) == expected


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (struct.pack("<q", 34), 2017239379),
        (b"iceberg", 1210000089),
        (bytes([0, 1, 2, 3]), -188683207),
        (bytes.fromhex("f79c3e09677c4bbda4793f349cb785e7"), 1488055340),
        (bytes.fromhex("058c"), -500754589),  # 14.20 as unscaled 1420
        (struct.pack("<q", 1), 1392991556),  # Appendix B: true hashes as 1
    ],
)
def test_iceberg_vectors_are_signed(data: bytes, expected: int) -> None:
    assert hash32(data) == expected


def test_accepts_bytes_like_inputs() -> None:
    assert hash32(bytearray(b"iceberg")) == hash32(memoryview(b"xiceberg")[1:]) == 1210000089


def test_tail_bytes_are_unsigned() -> None:
    # A high bit in the tail must not sign-extend (the bug Guava's murmur3_32_fixed fixed).
    assert hash32(b"\xff") != hash32(b"\x7f")
    assert unsigned(hash32(b"\xff\xff\xff")) == unsigned(hash32(bytes([255, 255, 255])))


@given(st.binary(max_size=64), st.integers(min_value=0, max_value=2**32 - 1))
def test_result_is_a_signed_32_bit_int(data: bytes, seed: int) -> None:
    result = hash32(data, seed)
    assert -(2**31) <= result < 2**31
    assert hash32(data, seed) == result
