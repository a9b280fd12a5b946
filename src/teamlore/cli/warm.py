"""The client of `teamlore watch` (docs/watch.md): a read command answered by the warm server.

The console entry (`teamlore.cli.entry`) calls `answered` first for the commands in `SERVED`: when
the state dir holds the server's socket, the request (argv, working directory, environment and how
the streams look) goes over it and the reply's bytes are written as the command would have printed
them. On any failure (no socket, refused, a stale socket, a timeout, other code, a server error)
`answered` returns None and the command runs in this process as it always did: output never
differs. Only the standard library's cheapest modules load here (`_socket`, `json`, `zlib`) and
`core.locations`: the import-budget test holds the client to it.

The wire: each message is a 4-byte big-endian length and a JSON object; a reply is followed by the
stdout and stderr bytes its header counts. The server sends one byte (`ACCEPTED`) when it takes the
request, so a busy server (its own sync running) is given up on after `ACCEPT_SECONDS`.
"""

from __future__ import annotations

import json
import os
import sys
import zlib

from teamlore.core.locations import state_dir_location

TYPE_CHECKING = False  # `typing` itself is a few milliseconds of the client's process
if TYPE_CHECKING:
    from typing import Any

# the read commands the server answers (docs/watch.md); nothing else is ever sent
SERVED: frozenset[tuple[str, ...]] = frozenset(
    {
        ("sessions", "search"),
        ("sessions", "list"),
        ("sessions", "show"),
        ("memory", "search"),
        ("status",),
    }
)
SOCKET_NAME = "watch.sock"
PROTOCOL = 1
ACCEPTED = b"+"
CONNECT_SECONDS = 0.5
ACCEPT_SECONDS = 2.0
MAX_MESSAGE = 64 << 20  # a reply larger than this is refused (the command runs here instead)


def served_command(args: list[str]) -> tuple[str, ...] | None:
    """The served command `teamlore ARGS` is (its --help is not: the help lists every command)."""
    if "--help" in args or "-h" in args:
        return None
    for path in SERVED:
        if tuple(args[: len(path)]) == path:
            return path
    return None


def socket_path(environ: dict[str, str] | os._Environ[str]) -> str:
    return os.path.join(state_dir_location(environ), SOCKET_NAME)


def code_fingerprint() -> str:
    """Which teamlore code this is: a checksum of every module's name, size and modification
    time under the package folder. An editable install whose files changed since the server
    started gives another fingerprint, so stale code never answers."""
    import teamlore

    root = os.path.dirname(os.path.abspath(teamlore.__file__))
    listing: list[str] = []
    pending = [root]
    while pending:
        folder = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
                    pending.append(entry.path)
                elif entry.name.endswith(".py"):
                    stat = entry.stat()
                    listing.append(f"{entry.path}\0{stat.st_size}\0{stat.st_mtime_ns}")
    listing.sort()
    data = "\n".join(listing).encode()
    return f"{teamlore.__version__}:{len(listing)}:{zlib.crc32(data):08x}:{zlib.adler32(data):08x}"


def request_for(args: list[str]) -> dict[str, Any]:
    """What the server needs to run `teamlore ARGS` as this process would: the arguments, the
    working directory, the environment and how stdout and stderr look. The size the text
    console would use here reaches the server as COLUMNS and LINES (`console_size`)."""
    environ = dict(os.environ)
    environ["COLUMNS"], environ["LINES"] = (str(n) for n in console_size(environ))
    return {
        "protocol": PROTOCOL,
        "code": code_fingerprint(),
        "argv": args,
        "cwd": os.getcwd(),
        "env": environ,
        "streams": [_stream(sys.stdout, 1), _stream(sys.stderr, 2)],
    }


def console_size(environ: dict[str, str]) -> tuple[int, int]:
    """The width and height rich's console takes in this process (`rich.console.Console.size`):
    the first of stdin, stdout and stderr that is a terminal, else COLUMNS and LINES when they
    are digits, else 80 by 25; a zero (a pseudo-terminal of no size) counts as unknown. The
    server's console reads them from the environment and never its own terminal."""
    width = height = 0
    for fd in (0, 1, 2):
        try:
            width, height = os.get_terminal_size(fd)
        except (AttributeError, ValueError, OSError):
            continue
        break
    columns, lines = environ.get("COLUMNS"), environ.get("LINES")
    if columns is not None and columns.isdigit():
        width = int(columns)
    if lines is not None and lines.isdigit():
        height = int(lines)
    return width or 80, height or 25


def _stream(stream: Any, fd: int) -> dict[str, Any]:
    return {"tty": os.isatty(fd), "encoding": stream.encoding, "errors": stream.errors}


def answered(args: list[str]) -> int | None:
    """Run `teamlore ARGS` on the warm server and print its output: the exit code, or None
    when the server cannot answer (the caller runs the command itself)."""
    if served_command(args) is None or sys.stdout is None or sys.stderr is None:
        return None
    path = socket_path(os.environ)
    if not os.path.exists(path):
        return None
    if os.environ.get("TEAMLORE_FAILPOINT"):  # a test's kill is this process's (core/failpoints)
        return None
    try:
        request = request_for(args)
    except FileNotFoundError:  # the current folder is gone: the command itself says so
        return None
    try:
        header, out, err = _ask(path, request)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    except KeyboardInterrupt:  # as the command's own handling of Ctrl-C (cli/output.py, `run`)
        return 130
    if not header.get("ok") or header.get("code") != request["code"]:
        return None  # failed, or a server of other code answered
    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(out)
        sys.stdout.flush()
    except BrokenPipeError:  # as the in-process path: 0, quietly, when the reader went away
        from teamlore.cli import reader_went_away  # the package, loaded with this module

        return reader_went_away()
    sys.stderr.buffer.write(err)
    sys.stderr.flush()
    return int(header["exit"])


def _ask(path: str, request: dict[str, Any]) -> tuple[dict[str, Any], bytes, bytes]:
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_SECONDS)
        sock.connect(path)
        send_message(sock, request)
        sock.settimeout(accept_seconds(os.environ))
        if _read_exactly(sock, 1) != ACCEPTED:
            raise ValueError("the server refused the request")
        sock.settimeout(None)  # taken: the command runs as long as it runs
        header = read_message(sock)
        out = _read_exactly(sock, int(header.get("stdout", 0)))
        err = _read_exactly(sock, int(header.get("stderr", 0)))
        return header, out, err
    finally:
        sock.close()


def accept_seconds(environ: dict[str, str] | os._Environ[str]) -> float:
    """How long to wait for a busy server to take the request: `ACCEPT_SECONDS`, or
    TEAMLORE_WATCH_ACCEPT_SECONDS when it holds a positive number (docs/watch.md)."""
    try:
        seconds = float(environ.get("TEAMLORE_WATCH_ACCEPT_SECONDS") or ACCEPT_SECONDS)
    except ValueError:
        return ACCEPT_SECONDS
    return seconds if 0 < seconds < float("inf") else ACCEPT_SECONDS


def send_message(sock: Any, message: dict[str, Any]) -> None:
    data = json.dumps(message).encode()
    sock.sendall(len(data).to_bytes(4, "big") + data)


def read_message(sock: Any) -> dict[str, Any]:
    size = int.from_bytes(_read_exactly(sock, 4), "big")
    if size > MAX_MESSAGE:
        raise ValueError("message too large")
    message = json.loads(_read_exactly(sock, size))
    if not isinstance(message, dict):
        raise ValueError("not a message")
    return message


def _read_exactly(sock: Any, size: int) -> bytes:
    if size > MAX_MESSAGE:
        raise ValueError("message too large")
    chunks: list[bytes] = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise ConnectionError("the server closed the connection")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)
