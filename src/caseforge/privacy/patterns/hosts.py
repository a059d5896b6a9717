"""Addresses on the network: e-mails, URLs and host names with a TLD, internal host names
without one (``pay-db-01``, ``k8s-prod-node3``), and IPv4 and IPv6 addresses.

Checks after matching: a bare mention of a public host (``github.com``, ``socket.io``) or of a
reserved domain is not one; a dashed name without a TLD is a host when a part of it says
"machine" (``db``, ``node``, ``prod``), when it has three parts or more and ends in a short
number, or when a context word is near it; an IP outside the private ranges needs a port or a
context word (``server``, ``ping``), and next to a version word (``version``, ``build``) with
no address word it is a version number.
"""

from __future__ import annotations

import ipaddress
import re

from caseforge.privacy.patterns.common import (
    After,
    L,
    Match,
    Pattern,
    Row,
    contains,
    has_context,
    has_word,
    split_words,
)
from caseforge.privacy.policy import is_reserved_domain

_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_URL_CHARS = r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]"
_URL_END = r"[A-Za-z0-9\-_~/#=&%+]"
_TLD = r"(?:com|net|org|io|tw|cn|vn|dev|app|cloud|ai|internal|local|corp|lan|intra|co|biz|info|me|xyz|site|online|tech)"
_HOST_WORDS = (
    r"(?<![A-Za-z])(?:(?i:host|hostname|server|máy chủ|may chu|node|machine|vm|instance|box|ssh|db|database|"
    r"redis|jenkins|runner|worker)|伺服器|服务器|主機|主机|機器|机器|節點|节点|服務|服务)"
)

TABLE: tuple[Row, ...] = (
    # e-mails, URLs, hosts
    (
        "email",
        "email",
        r"(?<=(?<![A-Za-z0-9._%+\-])(?P<s>[A-Za-z0-9._%+\-]+))@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
        r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![A-Za-z0-9-])",
        0.95,
        contains("@"),
    ),
    (
        "url",
        "url_scheme",
        rf"{L}(?:https?|ftp|ssh|git|s3|wss?)://{_URL_CHARS}*{_URL_END}",
        0.9,
        contains("://"),
    ),
    (
        "url",
        "url_www",
        rf"(?<![A-Za-z0-9.@/])www\.[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?:/{_URL_CHARS}*{_URL_END})?",
        0.85,
        contains("www."),
    ),
    (
        "url",
        "host",
        r"(?<=(?<![A-Za-z0-9.@/_-])(?P<s>(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]*[a-z0-9])?))"
        rf"\.{_TLD}(?:\.(?:tw|cn|vn|hk|sg))?(?:/{_URL_CHARS}*{_URL_END})?(?![A-Za-z0-9-]|\.[A-Za-z0-9])",
        0.55,
        contains("."),
    ),
    # internal host names without a TLD (pay-db-01, k8s-prod-node3)
    (
        "hostname",
        "host_dashed",
        r"(?<![A-Za-z0-9._/@:-])[a-z][a-z0-9]{0,20}(?:-[a-z0-9]{1,20}){1,5}(?<=[0-9])"
        r"(?![A-Za-z0-9_-]|\.[A-Za-z0-9])",
        0.75,
        contains("-"),
    ),
    (
        "hostname",
        "host_after_word",
        rf"{_HOST_WORDS}\s{{0,2}}[:：=]?\s{{0,2}}[`'\"「]?"
        r"(?P<v>[a-z][a-z0-9-]{1,40}[0-9])(?![A-Za-z0-9_-]|\.[A-Za-z0-9])",
        0.7,
        After(
            (
                "host",
                "server",
                "máy chủ",
                "may chu",
                "node",
                "machine",
                "vm",
                "instance",
                "box",
                "ssh",
                "db",
                "redis",
                "jenkins",
                "runner",
                "worker",
                "伺服器",
                "服务器",
                "主機",
                "主机",
                "機器",
                "机器",
                "節點",
                "节点",
                "服務",
                "服务",
            )
        ),
    ),
    # IP addresses
    (
        "ip",
        "ipv4",
        rf"(?<![0-9A-Za-z.]){_OCTET}(?:\.{_OCTET}){{3}}(?:/(?:3[0-2]|[12]?[0-9]))?(?::[0-9]{{2,5}})?"
        r"(?![0-9A-Za-z]|\.[0-9])",
        0.85,
        contains("."),
    ),
    (
        "ip",
        "ipv6",
        r"(?<=(?<![0-9A-Za-z:])(?P<s>[0-9A-Fa-f]{0,4})):(?=[0-9A-Fa-f]{0,4}:)[0-9A-Fa-f:]{1,38}"
        r"(?![0-9A-Za-z:])",
        0.3,
        contains(":"),
    ),
)

_VERSION_CONTEXT = (
    "version",
    "ver",
    "v.",
    "版本",
    "版",
    "phiên bản",
    "release",
    "build",
    "firmware",
)
# Words that say "address" even next to a version number.
_IP_WORDS = (
    "ip",
    "address",
    "位址",
    "地址",
    "伺服器",
    "服务器",
    "máy chủ",
    "ping",
    "ssh",
    "subnet",
)
_IP_CONTEXT = (
    "ip",
    "server",
    "host",
    "伺服器",
    "服务器",
    "主機",
    "主机",
    "máy chủ",
    "address",
    "位址",
    "地址",
    "connect",
    "ping",
    "ssh",
    "port",
    "gateway",
    "dns",
    "node",
    "節點",
    "节点",
    "proxy",
    "vpn",
    "subnet",
    "cidr",
    "db",
    "database",
    "資料庫",
    "数据库",
)
# Host names that are public and say nothing about a customer (a bare mention of them).
PUBLIC_HOSTS = frozenset(
    split_words(
        "socket.io github.com gitlab.com bitbucket.org google.com stackoverflow.com npmjs.com "
        "pypi.org python.org docs.python.org developer.mozilla.org medium.com youtube.com "
        "wikipedia.org readthedocs.io github.io vercel.app netlify.app heroku.com aws.amazon.com "
        "cloud.google.com azure.com microsoft.com apple.com play.google.com docker.com "
        "kubernetes.io grafana.com prometheus.io redis.io nodejs.org reactjs.org vuejs.org "
        "angular.io jquery.com lodash.com d3js.org chartjs.org tailwindcss.com getbootstrap.com "
        "openai.com anthropic.com huggingface.co sentry.io datadoghq.com slack.com zoom.us "
        "line.me zalo.me wechat.com"
    )
)
# Parts of a host name that say "this is a machine" (pay-db-01, k8s-prod-node3).
_HOST_PARTS = frozenset(
    split_words(
        "db pg mysql postgres mongo redis cache mq kafka rabbit es elastic node worker srv server "
        "host vm gw lb proxy nginx web app api prod stg staging dev uat qa ci cd k8s kube jenkins "
        "runner build bastion jump vpn nas backup replica primary master slave shard etl batch "
        "cron queue ftp sftp smtp mail dns ldap ad sso auth gateway ingress"
    )
)
_HOST_CONTEXT = (
    "host",
    "server",
    "伺服器",
    "服务器",
    "主機",
    "主机",
    "máy chủ",
    "machine",
    "ssh",
    "node",
    "節點",
    "节点",
    "instance",
    "deploy",
    "部署",
)
_HOST_STOP = frozenset(split_words("utf-8 iso-8601 sha-256 sha-1 base-64 x-86 covid-19 e2e"))


def _valid_ipv6(value: str) -> bool:
    if value.count(":") < 2 or not ("::" in value or value.count(":") == 7):
        return False
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


def _private_ip(value: str) -> bool:
    try:
        address = ipaddress.ip_address(value.split("/")[0].split(":")[0])
    except ValueError:
        return False
    return address.is_private or address in ipaddress.ip_network("100.64.0.0/10")


def check(
    pattern: Pattern, text: str, start: int, end: int, match: Match | None = None
) -> float | None:
    """Checks after matching an address; the score to keep it with, or ``None`` to drop it."""
    cls, name, score = pattern.cls, pattern.name, pattern.score
    value = text[start:end]
    if cls == "ip":
        if "." not in value:
            return 0.8 if _valid_ipv6(value) else None
        if (
            not _private_ip(value)
            and has_word(text, start, end, _VERSION_CONTEXT)
            and not has_word(text, start, end, _IP_WORDS)
        ):
            return None
        if _private_ip(value) or has_context(text, start, end, _IP_CONTEXT) or ":" in value:
            return score
        return None
    if cls == "url":
        host = value.split("/")[0].lower()
        if name == "host" and host in PUBLIC_HOSTS and "/" not in value:
            return None
        if name == "host" and re.fullmatch(r"[a-z0-9.-]+", host) and is_reserved_domain(host):
            return None
        return score
    if cls == "hostname":
        if value in _HOST_STOP:
            return None
        if name == "host_dashed":
            pieces = value.split("-")
            parts = {re.sub(r"[0-9]+$", "", part) for part in pieces}
            numbered = len(pieces) >= 3 and pieces[-1].isdigit() and len(pieces[-1]) <= 3
            if not (
                parts & _HOST_PARTS or numbered or has_context(text, start, end, _HOST_CONTEXT)
            ):
                return None
        elif re.fullmatch(r"[0-9a-f]+", value) or len(value) < 4:
            return None  # a hex id or a short token after "db", not a host
        return score
    return score
