"""``new URL(url).href`` of the WHATWG URL standard, for the file data AI SDK v7 sends the model.

v7's ``convertToModelMessages`` hands file parts over as ``{type: 'url', url:
new URL(part.url)}``; serialised, that is the URL's ``href``: scheme and host
lowercased, default port and dot segments removed, unsafe characters
percent-encoded. An unparsable URL raises ``ValueError`` (the SDK throws
``TypeError: Invalid URL``). IPv6 hosts are kept as written (lowercased).
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import unquote

__all__ = ["href"]

_SPECIAL: Final = {"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21", "file": ""}
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+\-.]*:")
_C0: Final = frozenset(chr(c) for c in range(0x20))
_FRAGMENT: Final = _C0 | frozenset(' "<>`')
_QUERY: Final = _C0 | frozenset(' "#<>')
_SPECIAL_QUERY: Final = _QUERY | frozenset("'")
_PATH: Final = _QUERY | frozenset("?`{}")
_USERINFO: Final = _PATH | frozenset("/:;=@[\\]^|")
_FORBIDDEN_HOST: Final = frozenset("\0\t\n\r #/:<>?@[\\]^|%")
_DOTS: Final = {".", "%2e"}
_DOUBLE_DOTS: Final = {"..", ".%2e", "%2e.", "%2e%2e"}


def _encode(text: str, unsafe: frozenset[str]) -> str:
    out = []
    for char in text:
        if char in unsafe or ord(char) > 0x7E:
            out.append("".join(f"%{b:02X}" for b in char.encode("utf-8", "surrogatepass")))
        else:
            out.append(char)
    return "".join(out)


def _ipv4_number(label: str) -> int | None:
    try:
        if label[:2].lower() == "0x":
            return int(label[2:] or "0", 16)
        if len(label) > 1 and label.startswith("0"):
            return int(label[1:], 8)
        return int(label, 10) if label.isdigit() else None
    except ValueError:
        return None


def _host(raw: str, special: bool) -> str:
    if raw.startswith("["):
        if not raw.endswith("]"):
            raise ValueError("Invalid URL: bad IPv6 host")
        return raw.lower()
    if not special:
        if any(c in _FORBIDDEN_HOST - {"%"} for c in raw):
            raise ValueError("Invalid URL: forbidden host code point")
        return _encode(raw, _C0)
    host = unquote(raw, errors="strict")
    if not host:
        raise ValueError("Invalid URL: empty host")
    if any(ord(c) > 0x7F for c in host):
        try:
            host = host.lower().encode("idna").decode("ascii")
        except UnicodeError as error:
            raise ValueError("Invalid URL: bad host") from error
    host = host.lower()
    if any(c in _FORBIDDEN_HOST for c in host) or any(ord(c) < 0x20 or c == "\x7f" for c in host):
        raise ValueError("Invalid URL: forbidden host code point")
    labels = host.split(".")
    if labels[-1] == "" and len(labels) > 1:
        labels = labels[:-1]
    if _ipv4_number(labels[-1]) is not None or labels[-1][:2] == "0x":
        numbers = [_ipv4_number(label) for label in labels]
        if any(n is None for n in numbers) or len(numbers) > 4:
            raise ValueError("Invalid URL: bad IPv4 host")
        values = [n for n in numbers if n is not None]
        if any(n > 255 for n in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
            raise ValueError("Invalid URL: bad IPv4 host")
        address = values[-1] + sum(n * 256 ** (3 - i) for i, n in enumerate(values[:-1]))
        return ".".join(str((address >> shift) & 255) for shift in (24, 16, 8, 0))
    return host


def _path(raw: str, special: bool) -> str:
    segments = re.split(r"[/\\]" if special else "/", raw)
    out: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        lowered = segment.lower()
        if lowered in _DOUBLE_DOTS:
            if out:
                out.pop()
            if last:
                out.append("")
        elif lowered in _DOTS:
            if last:
                out.append("")
        else:
            out.append(_encode(segment, _PATH))
    return "/" + "/".join(out)


def href(url: str) -> str:
    """The WHATWG ``href`` of an absolute URL; ValueError if it does not parse."""
    text = url.strip("".join(_C0) + " ")
    text = re.sub(r"[\t\n\r]", "", text)
    match = _SCHEME.match(text)
    if match is None:
        raise ValueError(f"Invalid URL: {url!r}")
    scheme = match.group()[:-1].lower()
    rest = text[match.end() :]
    fragment = query = None
    if "#" in rest:
        rest, fragment = rest.split("#", 1)
    if "?" in rest:
        rest, query = rest.split("?", 1)
    special = scheme in _SPECIAL
    if special or rest.startswith("//"):
        result = _hierarchical(scheme, rest, special)
    else:
        result = f"{scheme}:{_encode(rest, _C0)}"
    if query is not None:
        result += "?" + _encode(query, _SPECIAL_QUERY if special else _QUERY)
    if fragment is not None:
        result += "#" + _encode(fragment, _FRAGMENT)
    return result


def _hierarchical(scheme: str, rest: str, special: bool) -> str:
    slashes = re.match(r"[/\\]*" if special else "/*", rest)
    assert slashes is not None
    if scheme == "file":
        after = rest[2:]
        if len(slashes.group()) >= 2:
            end = re.search(r"[/\\]", after)
            host_text = after[: end.start()] if end else after
            path = after[end.start() :] if end else ""
            host = "" if host_text.lower() in ("", "localhost") else _host(host_text, True)
        else:
            host, path = "", rest
        trimmed = path.lstrip("/\\") if path else ""
        return f"file://{host}{_path(trimmed, True)}"
    after = rest[slashes.end() :]
    end = re.search(r"[/\\]" if special else "/", after)
    authority = after[: end.start()] if end else after
    path = after[end.start() :] if end else ""
    userinfo = ""
    if "@" in authority:
        credentials, authority = authority.rsplit("@", 1)
        user, _, password = credentials.partition(":")
        userinfo = _encode(user, _USERINFO) + (
            ":" + _encode(password, _USERINFO) if password else ""
        )
        userinfo += "@" if userinfo else ""
    port = ""
    port_match = re.search(r":([^:\]]*)$", authority)
    if port_match:
        authority, port = authority[: port_match.start()], port_match.group(1)
        if port and (not port.isdigit() or int(port) > 65535):
            raise ValueError("Invalid URL: bad port")
        port = "" if port == "" or str(int(port)) == _SPECIAL.get(scheme) else str(int(port))
    host = _host(authority, special)
    if not special and not path:
        return f"{scheme}://{userinfo}{host}{':' + port if port else ''}"
    path_text = _path(path[1:], special) if path else "/"
    return f"{scheme}://{userinfo}{host}{':' + port if port else ''}{path_text}"
