"""AES GCM Stream (AGS1) files, as ``format/gcm-stream-spec.md`` and Java's ``AesGcmOutputStream`` /
``AesGcmInputStream`` define them: how encrypted tables store manifests, manifest lists and
deletion-vector Puffin files.

Layout::

    "AGS1" | int32 LE plaintext block size (1048576) | block_0 | block_1 | ... | block_n-1
    block_i = nonce (12 random bytes) | ciphertext (as long as its plaintext) | GCM tag (16)
    AAD of block i = aad_prefix | int32 LE i

Every block but the last holds exactly 1 MiB of plaintext, the last 1 byte to 1 MiB; an empty
plaintext is one empty block (a 36-byte file), and a plaintext of an exact multiple of 1 MiB
ends on a full block. A stream is read from the length its key metadata records (trusted, as
Java 1.11 does), so a truncated, extended or swapped file, a reordered block and a changed byte
all fail to decrypt: nothing is ever read as plaintext.

``AesGcmOutputFile(output_file, key, aad_prefix)`` and ``AesGcmInputFile(input_file, key,
aad_prefix, length=None)`` have Java's names and arguments.
"""

from __future__ import annotations

import io
import struct
from typing import Any, BinaryIO

from icefloe.errors import DecryptionError, TruncatedFileError, ValidationError
from icefloe.io.encryption import _gcm
from icefloe.io.fileio import InputFile, OutputFile

__all__ = [
    "MAGIC",
    "MIN_STREAM_LENGTH",
    "PLAIN_BLOCK_SIZE",
    "AesGcmInputFile",
    "AesGcmInputStream",
    "AesGcmOutputFile",
    "AesGcmOutputStream",
    "encrypted_length",
    "plaintext_length",
]

MAGIC = b"AGS1"
PLAIN_BLOCK_SIZE = 1 << 20
_OVERHEAD = _gcm.NONCE_LENGTH + _gcm.TAG_LENGTH
CIPHER_BLOCK_SIZE = PLAIN_BLOCK_SIZE + _OVERHEAD
_HEADER = MAGIC + struct.pack("<i", PLAIN_BLOCK_SIZE)
HEADER_LENGTH = len(_HEADER)
#: The length of an empty stream: the header and one empty block (Java's MIN_STREAM_LENGTH).
MIN_STREAM_LENGTH = HEADER_LENGTH + _OVERHEAD
_MAX_BLOCKS = 0x7FFFFFFF  # Java's limit: block indexes are int32


def encrypted_length(plain_length: int) -> int:
    """The stored length of an AGS1 stream of ``plain_length`` plaintext bytes."""
    if plain_length == 0:
        return MIN_STREAM_LENGTH
    blocks = -(-plain_length // PLAIN_BLOCK_SIZE)
    return HEADER_LENGTH + plain_length + blocks * _OVERHEAD


def plaintext_length(stored_length: int) -> int:
    """The plaintext length of an AGS1 stream of ``stored_length`` bytes (Java's
    ``AesGcmInputStream.calculatePlaintextLength``); see :func:`_layout` for validation."""
    return _layout(stored_length, None)[2]


def _layout(stored_length: int, location: str | None) -> tuple[int, int, int]:
    """(block count, stored size of the last block, plaintext length) of a stream.

    Raises:
        TruncatedFileError: no stream has this length.
    """
    if stored_length < MIN_STREAM_LENGTH:
        raise TruncatedFileError(
            f"an AES GCM stream of {stored_length} bytes is shorter than the minimum {MIN_STREAM_LENGTH}",
            location=location,
        )
    full, rest = divmod(stored_length - HEADER_LENGTH, CIPHER_BLOCK_SIZE)
    if rest == 0:
        return full, CIPHER_BLOCK_SIZE, full * PLAIN_BLOCK_SIZE
    if rest < _OVERHEAD:
        raise TruncatedFileError(
            f"an AES GCM stream of {stored_length} bytes ends in a block too short to hold a nonce and tag",
            location=location,
        )
    return full + 1, rest, full * PLAIN_BLOCK_SIZE + rest - _OVERHEAD


def _block_aad(aad_prefix: bytes, index: int) -> bytes:
    return aad_prefix + struct.pack("<i", index)


# ---------------------------------------------------------------------------------------------
# writing


class AesGcmOutputStream(io.RawIOBase):
    """Encrypts what is written into ``target`` block by block; ``close()`` writes the last block
    and closes ``target``. Leaving a ``with`` block by an exception (or dropping the stream
    unclosed) discards ``target`` instead, as icefloe's FileIO streams do.

    ``tell()`` is the plaintext position (Java's ``getPos``); :meth:`stored_length` the bytes
    written to ``target`` (Java's ``storedLength``).
    """

    def __init__(self, target: BinaryIO, key: bytes, aad_prefix: bytes | None, *, location: str = ""):
        super().__init__()
        self._target = target
        self._cipher = _gcm.aes_gcm(key)
        self._prefix = aad_prefix or b""
        self._location = location
        self._buffer = bytearray()
        self._index = 0
        self._position = 0
        self._stored = 0
        self._started = False
        self._finished = False

    def writable(self) -> bool:
        return True

    def _start(self) -> None:
        # Java writes the header with the first write (or at close, for an empty stream).
        if not self._started:
            self._started = True
            self._emit(_HEADER)

    def _emit(self, data: bytes) -> None:
        self._target.write(data)
        self._stored += len(data)

    def _encrypt_block(self, plaintext: bytes | memoryview) -> None:
        if self._index >= _MAX_BLOCKS:
            raise ValidationError(
                f"cannot write {self._location}: an AES GCM stream holds at most 2^31-1 blocks"
            )
        self._emit(_gcm.encrypt(self._cipher, plaintext, _block_aad(self._prefix, self._index)))
        self._index += 1

    def write(self, data: Any) -> int:
        if self._finished:
            raise ValueError(f"write to a closed encrypting stream of {self._location}")
        self._start()
        view = memoryview(data).cast("B")
        size = len(view)
        offset = 0
        if self._buffer:
            take = min(PLAIN_BLOCK_SIZE - len(self._buffer), size)
            self._buffer += view[:take]
            offset = take
            if len(self._buffer) == PLAIN_BLOCK_SIZE:
                self._encrypt_block(bytes(self._buffer))
                self._buffer.clear()
        # Whole blocks straight from the caller's buffer, without copying them first.
        while size - offset >= PLAIN_BLOCK_SIZE:
            self._encrypt_block(view[offset : offset + PLAIN_BLOCK_SIZE])
            offset += PLAIN_BLOCK_SIZE
        if offset < size:
            self._buffer += view[offset:]
        self._position += size
        return size

    def tell(self) -> int:
        return self._position

    def stored_length(self) -> int:
        """The stream's stored length so far (final after ``close()``)."""
        return self._stored

    def close(self) -> None:
        """Encrypt the last block and close (publish) the target."""
        if self.closed:
            return
        try:
            if not self._finished:
                self._finished = True
                self._start()
                # A last, partial block; an empty stream gets one empty block; a plaintext of
                # whole blocks ends on its last full block (as Java).
                if self._buffer or self._index == 0:
                    self._encrypt_block(bytes(self._buffer))
                    self._buffer.clear()
            self._target.close()
        except BaseException:
            self._discard()
            raise
        finally:
            super().close()

    def abort(self) -> None:
        """Discard everything written: nothing is published."""
        if self.closed:
            return
        self._finished = True
        try:
            self._discard()
        finally:
            super().close()

    def _discard(self) -> None:
        discard = getattr(self._target, "abort", None)
        if callable(discard):
            discard()
        else:
            self._target.close()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def __del__(self) -> None:
        # An unclosed stream is incomplete: discard rather than publish it.
        if not self.closed:
            self.abort()


class AesGcmOutputFile(OutputFile):
    """Java's ``AesGcmOutputFile(outputFile, key, aadPrefix)``: a file whose stream encrypts."""

    def __init__(self, output_file: OutputFile, key: bytes, aad_prefix: bytes | None):
        _gcm.check_key(key)
        self.output_file = output_file
        self.location = output_file.location
        self._key = bytes(key)
        self._aad_prefix = None if aad_prefix is None else bytes(aad_prefix)

    def create(self, overwrite: bool = False) -> AesGcmOutputStream:  # type: ignore[override]
        target = self.output_file.create(overwrite=overwrite)
        return AesGcmOutputStream(target, self._key, self._aad_prefix, location=self.location)

    def to_input_file(self) -> InputFile:
        # Java 1.11: the length to trust is only known once written, from the key metadata.
        raise ValidationError(
            f"the length of {self.location} is unknown: open it with AesGcmInputFile and the "
            "length its key metadata records"
        )


# ---------------------------------------------------------------------------------------------
# reading


class AesGcmInputStream(io.RawIOBase):
    """A seekable plaintext view of an AGS1 stream ``source`` whose stored length is
    ``length``. Each block is authenticated before any of its bytes are returned; block 0 is
    authenticated on the first read even when the stream is empty (as Java)."""

    def __init__(
        self, source: BinaryIO, length: int, key: bytes, aad_prefix: bytes | None, *, location: str = ""
    ):
        super().__init__()
        self._blocks, self._last_size, self._size = _layout(length, location)
        self._source = source
        self._cipher = _gcm.aes_gcm(key)
        self._prefix = aad_prefix or b""
        self._location = location
        self._position = 0
        self._block_index = -1
        self._block = b""
        self._header_checked = False

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._size}[whence]
        position = base + offset
        if position < 0:
            raise ValueError(f"negative position {position} in {self._location}")
        self._position = position
        return position

    def _load(self, index: int) -> None:
        if index == self._block_index:
            return
        if not self._header_checked:
            self._source.seek(0)
            _check_header(_read_exactly(self._source, HEADER_LENGTH, self._location), self._location)
            self._header_checked = True
        size = self._last_size if index == self._blocks - 1 else CIPHER_BLOCK_SIZE
        self._source.seek(HEADER_LENGTH + index * CIPHER_BLOCK_SIZE)
        sealed = _read_exactly(self._source, size, self._location)
        self._block = _open_block(self._cipher, sealed, self._prefix, index, self._location)
        self._block_index = index

    def readinto(self, buffer: Any) -> int:
        if self._block_index < 0:
            self._load(0)
        view = memoryview(buffer).cast("B")
        done = 0
        while done < len(view) and self._position < self._size:
            index, offset = divmod(self._position, PLAIN_BLOCK_SIZE)
            self._load(index)
            chunk = self._block[offset : offset + len(view) - done]
            view[done : done + len(chunk)] = chunk
            done += len(chunk)
            self._position += len(chunk)
        return done

    def close(self) -> None:
        if not self.closed:
            try:
                self._source.close()
            finally:
                super().close()


class AesGcmInputFile(InputFile):
    """Java's ``AesGcmInputFile(inputFile, key, aadPrefix, length)``: reads an AGS1 stream.

    Args:
        input_file: the stored file.
        key: the file's data key.
        aad_prefix: the file's AAD prefix (None: none).
        length: the stored length from a trusted source (the file's key metadata); None takes
            the storage's (Java 1.9's behaviour).

    ``length()`` is the plaintext length.
    """

    def __init__(
        self, input_file: InputFile, key: bytes, aad_prefix: bytes | None, length: int | None = None
    ):
        _gcm.check_key(key)
        self.input_file = input_file
        self.location = input_file.location
        self._key = bytes(key)
        self._aad_prefix = None if aad_prefix is None else bytes(aad_prefix)
        self._length = length

    def stored_length(self) -> int:
        """The stream's stored (encrypted) length."""
        if self._length is None:
            self._length = self.input_file.length()
        return self._length

    def length(self) -> int:
        return _layout(self.stored_length(), self.location)[2]

    def exists(self) -> bool:
        return self.input_file.exists()

    def open(self) -> BinaryIO:
        stream = AesGcmInputStream(
            self.input_file.open(), self.stored_length(), self._key, self._aad_prefix, location=self.location
        )
        return io.BufferedReader(stream, buffer_size=PLAIN_BLOCK_SIZE)

    def read(self) -> bytes:
        """The whole plaintext, every block authenticated (one read of the stored file)."""
        stored_length = self.stored_length()
        blocks, _, _ = _layout(stored_length, self.location)
        data = self.input_file.read()
        if len(data) != stored_length:
            raise TruncatedFileError(
                f"{self.location} has {len(data)} bytes, but its key metadata records {stored_length}",
                location=self.location,
            )
        _check_header(data[:HEADER_LENGTH], self.location)
        cipher = _gcm.aes_gcm(self._key)
        prefix = self._aad_prefix or b""
        view = memoryview(data)
        parts = []
        for index in range(blocks):
            start = HEADER_LENGTH + index * CIPHER_BLOCK_SIZE
            parts.append(
                _open_block(cipher, view[start : start + CIPHER_BLOCK_SIZE], prefix, index, self.location)
            )
        return b"".join(parts)


def _check_header(header: bytes, location: str) -> None:
    if header[:4] != MAGIC:
        raise DecryptionError(
            f"{location} is not an AES GCM stream: magic does not match AGS1", location=location
        )
    (block_size,) = struct.unpack("<i", header[4:8])
    if block_size != PLAIN_BLOCK_SIZE:
        raise DecryptionError(
            f"{location} is an AES GCM stream of {block_size}-byte blocks; Iceberg's are {PLAIN_BLOCK_SIZE}",
            location=location,
        )


def _open_block(cipher: Any, sealed: bytes | memoryview, prefix: bytes, index: int, location: str) -> bytes:
    try:
        return _gcm.decrypt(cipher, sealed, _block_aad(prefix, index))
    except _gcm.AuthenticationFailed:
        raise DecryptionError(
            f"cannot decrypt block {index} of {location}: GCM tag check failed (a wrong key, or "
            "tampered, reordered or swapped data)",
            location=location,
        ) from None


def _read_exactly(stream: BinaryIO, size: int, location: str) -> bytes:
    parts = []
    remaining = size
    while remaining > 0:
        chunk = stream.read(remaining)
        if not chunk:
            raise TruncatedFileError(
                f"{location} ends {remaining} bytes before the length its key metadata records",
                location=location,
            )
        parts.append(chunk)
        remaining -= len(chunk)
    return b"".join(parts)
