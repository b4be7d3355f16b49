"""A TLS loopback front for a plain test server: a self-signed certificate for 127.0.0.1 made
for the test (``cryptography``, which google-auth already depends on), and a proxy that ends
TLS and pipes the bytes to the server's port.

It lets a client that insists on ``wss://`` (google-genai with an API key) reach a plain ``ws://``
test server through its public options only: the base URL and the TLS context it is given.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path


def self_signed(folder: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A certificate for 127.0.0.1: ``(server context, client context trusting only it)``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "voice-hitl test front")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    (folder / "front.crt").write_bytes(cert_pem)
    (folder / "front.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(folder / "front.crt", folder / "front.key")
    client = ssl.create_default_context(cadata=cert_pem.decode())
    return server, client


@dataclass
class TlsFront:
    """The running front: its port and how many TLS connections it took."""

    port: int
    connections: int = 0
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)


@contextlib.asynccontextmanager
async def tls_front(target_port: int, context: ssl.SSLContext) -> AsyncIterator[TlsFront]:
    """Listen on 127.0.0.1 with TLS and pipe each connection to ``target_port`` in the clear.

    Cancellation: safe; on exit the listener closes and every piping task is cancelled and
    awaited.
    """

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        front._tasks.add(task)
        front.connections += 1
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", target_port)
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        finally:
            writer.close()
            front._tasks.discard(task)

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=context)
    front = TlsFront(server.sockets[0].getsockname()[1])
    try:
        yield front
    finally:
        server.close()
        tasks = list(front._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()
