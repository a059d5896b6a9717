"""Small facts about network addresses, shared by the web app and the Ray executor."""

from __future__ import annotations

import ipaddress
import re

# A DNS name: dot-separated labels of letters, digits, hyphens (and underscores, which
# some local names carry), none empty, none starting or ending with a hyphen.
_LABEL = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?"
_NAME = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*$")
_PORT = re.compile(r"^:[0-9]{1,5}$")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an IP, IPv6 without brackets) is this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_address(host: str) -> bool:
    """Whether ``host`` is an IP address (IPv6 without brackets), not a name."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def host_name(value: str) -> str | None:
    """``value`` as a host name or IP address in one spelling (a name in lower case, an
    address as ``ipaddress`` writes it, IPv6 without brackets); None when it is neither
    (a port, a path, a trailing dot, a space...)."""
    text = value
    bracketed = text.startswith("[") and text.endswith("]")
    if bracketed:
        text = text[1:-1]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        if bracketed:
            return None
        lower = text.lower()
        return lower if _NAME.match(lower) else None
    if bracketed and address.version != 6:
        return None
    return str(address)


def host_of_header(header: str) -> str | None:
    """The host an HTTP ``Host`` header names (``name``, ``name:port``, ``[v6]:port``), as
    :func:`host_name` spells it; None for a header of any other shape."""
    if header.startswith("["):
        end = header.find("]") + 1
        if end == 0:
            return None
        host, rest = header[:end], header[end:]
    else:
        host, colon, port = header.partition(":")
        rest = colon + port
    if rest and not (_PORT.match(rest) and 0 < int(rest[1:]) < 65536):
        return None
    return host_name(host)
