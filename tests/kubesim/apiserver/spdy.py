"""SPDY/3.1 framing, the server half (as moby/spdystream runs it in the kubelet): what kubectl
speaks for `port-forward`, tunneled in WebSocket binary messages since 1.30 (subprotocol
`SPDY/3.1+portforward.k8s.io`, client-go's tunneling dialer) or over an upgraded connection.

Frames (draft-mbelshe-httpbis-spdy-00 / SPDY/3 draft, section 2.2): a control frame is
`1|version(15)|type(16)|flags(8)|length(24)|data`, a data frame `0|stream-id(31)|flags(8)|length(24)|data`.
Header blocks are zlib streams (one per direction per session, sync-flushed per block) primed
with the protocol's dictionary (section 2.6.10.1)."""

from __future__ import annotations

import asyncio
import struct
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

VERSION = 3
SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = 1, 2, 3, 4, 6, 7, 8, 9
FLAG_FIN = 0x01
RST_PROTOCOL_ERROR, RST_CANCEL = 1, 5

# the SPDY/3 header dictionary: length-prefixed header names and values, then a run of common text
_WORDS = (  # noqa: SIM905 (the words as the draft lists them)
    "options head post put delete trace accept accept-charset accept-encoding accept-language "
    "accept-ranges age allow authorization cache-control connection content-base content-encoding "
    "content-language content-length content-location content-md5 content-range content-type date "
    "etag expect expires from host if-match if-modified-since if-none-match if-range "
    "if-unmodified-since last-modified location max-forwards pragma proxy-authenticate "
    "proxy-authorization range referer retry-after server te trailer transfer-encoding upgrade "
    "user-agent vary via warning www-authenticate method get status 200_OK version HTTP/1.1 url "
    "public set-cookie keep-alive origin"
).split()
_TAIL = (
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request"
    "401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented"
    "503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 "
    "Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,"
    "application/xml,application/xhtml+xml,text/plain,text/javascript,publicprivatemax-age="
    "gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0."
)
DICTIONARY = (
    b"".join(struct.pack(">I", len(w)) + w.replace("_", " ").encode() for w in _WORDS) + _TAIL.encode()
)


@dataclass
class Frame:
    type: int  # a control frame's type, or 0 for data
    flags: int
    stream_id: int = 0
    headers: dict[str, list[str]] = field(default_factory=dict)
    data: bytes = b""
    value: int = 0  # PING's id, RST_STREAM's and GOAWAY's status

    @property
    def fin(self) -> bool:
        return bool(self.flags & FLAG_FIN)


class ProtocolError(Exception):
    pass


class Session:
    """One SPDY session: `feed` it the bytes that arrive, write frames with the coroutines."""

    def __init__(self, write: Callable[[bytes], Awaitable[None]]) -> None:
        self._write = write
        self._buf = bytearray()
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)
        self._deflate = zlib.compressobj(9, zdict=DICTIONARY)
        self._lock = asyncio.Lock()

    # -- reading ---------------------------------------------------------------------------
    def feed(self, chunk: bytes) -> list[Frame]:
        self._buf += chunk
        frames = []
        while len(self._buf) >= 8:
            length = int.from_bytes(self._buf[5:8], "big")
            if len(self._buf) < 8 + length:
                break
            head, body = bytes(self._buf[:8]), bytes(self._buf[8 : 8 + length])
            del self._buf[: 8 + length]
            frames.append(self._parse(head, body))
        return frames

    def _parse(self, head: bytes, body: bytes) -> Frame:
        flags = head[4]
        if not head[0] & 0x80:
            return Frame(0, flags, int.from_bytes(head[:4], "big") & 0x7FFFFFFF, data=body)
        version, type_ = struct.unpack(">HH", head[:4])
        if version & 0x7FFF != VERSION:
            raise ProtocolError(f"unsupported SPDY version {version & 0x7FFF}")
        if type_ == SYN_STREAM:
            sid = int.from_bytes(body[:4], "big") & 0x7FFFFFFF
            return Frame(type_, flags, sid, headers=self._headers(body[10:]))
        if type_ in (SYN_REPLY, HEADERS):
            sid = int.from_bytes(body[:4], "big") & 0x7FFFFFFF
            return Frame(type_, flags, sid, headers=self._headers(body[4:]))
        if type_ in (RST_STREAM, GOAWAY, WINDOW_UPDATE):
            sid, value = struct.unpack(">II", body[:8])
            return Frame(type_, flags, sid & 0x7FFFFFFF, value=value)
        if type_ == PING:
            return Frame(type_, flags, value=int.from_bytes(body[:4], "big"))
        return Frame(type_, flags, data=body)  # SETTINGS and anything newer: nothing to do

    def _headers(self, block: bytes) -> dict[str, list[str]]:
        raw = self._inflate.decompress(block)
        (count,) = struct.unpack(">I", raw[:4])
        pos, out = 4, {}
        for _ in range(count):
            (n,) = struct.unpack(">I", raw[pos : pos + 4])
            name = raw[pos + 4 : pos + 4 + n].decode()
            pos += 4 + n
            (n,) = struct.unpack(">I", raw[pos : pos + 4])
            out[name] = raw[pos + 4 : pos + 4 + n].decode().split("\0")
            pos += 4 + n
        return out

    # -- writing ---------------------------------------------------------------------------
    async def _send(self, frame: bytes) -> None:
        async with self._lock:
            await self._write(frame)

    def _control(self, type_: int, flags: int, body: bytes) -> bytes:
        return struct.pack(">HHI", 0x8000 | VERSION, type_, (flags << 24) | len(body)) + body

    async def reply(self, stream_id: int, headers: dict[str, str] | None = None) -> None:
        """SYN_REPLY: the stream is accepted (spdystream drops data sent before it)."""
        raw = struct.pack(">I", len(headers or {}))
        for k, v in (headers or {}).items():
            raw += struct.pack(">I", len(k)) + k.encode() + struct.pack(">I", len(v)) + v.encode()
        async with self._lock:
            block = self._deflate.compress(raw) + self._deflate.flush(zlib.Z_SYNC_FLUSH)
            await self._write(self._control(SYN_REPLY, 0, struct.pack(">I", stream_id) + block))

    async def data(self, stream_id: int, data: bytes, *, fin: bool = False) -> None:
        for i in range(0, max(len(data), 1), 0xFFFFFF):
            part = data[i : i + 0xFFFFFF]
            last = i + 0xFFFFFF >= len(data)
            flags = FLAG_FIN if fin and last else 0
            await self._send(struct.pack(">II", stream_id, (flags << 24) | len(part)) + part)

    async def reset(self, stream_id: int, status: int = RST_CANCEL) -> None:
        await self._send(self._control(RST_STREAM, 0, struct.pack(">II", stream_id, status)))

    async def pong(self, ping_id: int) -> None:
        await self._send(self._control(PING, 0, struct.pack(">I", ping_id)))

    async def goaway(self, last_stream: int) -> None:
        await self._send(self._control(GOAWAY, 0, struct.pack(">II", last_stream, 0)))
