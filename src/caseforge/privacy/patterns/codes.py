"""Codes: commit SHAs, branches, internal error codes, ticket keys with PR and issue numbers,
and short project codes.

Checks after matching: a short SHA mixes digits and letters and needs a context word
(``commit``, ``revert``, ``提交``) or to follow, in a list, a SHA that has one; standard status
names (``NOT_FOUND``, ``ECONNREFUSED``, ``HTTP_404``) are not error codes, and an all-letter
``SNAKE_CASE`` word is one only with a reason word in it (``TIMEOUT``) or a context word near
it; standards, units and quarters (``UTF-8``, ``ISO-9001``, ``Q4-2026``) are not ticket keys,
and a ``#123`` is a PR or issue number next to its word (``PR``, ``工單``) or with four digits
or more, never after a rank word (``排名``, ``top``).
"""

from __future__ import annotations

import re

from caseforge.privacy.patterns.common import (
    After,
    At,
    L,
    Match,
    Pattern,
    R,
    Row,
    any_digit,
    contains,
    has_context,
    has_word,
    split_words,
    upper_run,
)

_BRANCH_WORDS = r"(?i:branch|分支|nhánh|nhanh)"
_ERROR_WORDS = (
    r"(?i:error code|error|code|錯誤碼|错误码|錯誤代碼|错误代码|錯誤|错误|mã lỗi|lỗi|ma loi)"
)
_PROJECT_WORDS = (
    r"(?:代號|代号|專案代碼|专案代码|項目代號|项目代号|項目代碼|项目代码|專案代號|計畫代號|计划代号|"
    r"(?i:code\s?name|codename|project\s?code|proj\.?\s?code|mã dự án|ma du an|dự án mã))"
)
_PROJECT_ANCHORS = (
    "代號",
    "代号",
    "專案代",
    "专案代",
    "項目代",
    "项目代",
    "計畫代號",
    "计划代号",
    "code",
    "project",
    "proj",
    "mã dự án",
    "ma du an",
    "dự án mã",
)

TABLE: tuple[Row, ...] = (
    # commit SHAs
    (
        "commit_sha",
        "sha_full",
        rf"{L}(?:[0-9a-f]{{64}}|[0-9a-f]{{40}}|[0-9A-F]{{40}}){R}",
        0.95,
        At(r"[0-9a-fA-F]{40}"),
    ),
    ("commit_sha", "sha_short", rf"{L}[0-9a-f]{{7,12}}{R}", 0.3, any_digit),
    # branches: a conventional prefix, or a dashed name next to the word branch / 分支 / nhánh
    (
        "branch",
        "branch_prefixed",
        r"(?<![0-9A-Za-z/._-])"
        r"(?:feature|features|feat|fix|bugfix|hotfix|release|releases|chore|refactor|perf|topic|wip)"
        r"/[A-Za-z0-9._/-]*[A-Za-z0-9]",
        0.85,
        contains("/"),
    ),
    (
        "branch",
        "branch_after_word",
        rf"{_BRANCH_WORDS}\s{{0,2}}[:：]?\s{{0,2}}[`'\"「『]?"
        r"(?P<v>(?=[A-Za-z0-9._/-]*[-_/])[A-Za-z0-9][A-Za-z0-9._/-]*[A-Za-z0-9])(?![A-Za-z0-9])",
        0.6,
        After(("branch", "分支", "nhánh", "nhanh")),
    ),
    (
        "branch",
        "branch_before_word",
        r"(?<=(?<![A-Za-z0-9._/-])(?P<v>[A-Za-z0-9][A-Za-z0-9._/-]*[-_/][A-Za-z0-9._/-]*[A-Za-z0-9])"
        r"[`'\"」』]?\s{0,2})(?:分支|(?i:branch))",
        0.6,
        After(("分支", "branch")),
    ),
    # internal error codes (case-sensitive)
    (
        "error_code",
        "err_word",
        rf"(?<={L}(?P<s>(?:[A-Z][A-Z0-9]*[_-])*))ERR(?:OR)?(?:[_-][A-Z0-9]+)+(?![0-9A-Za-z_])",
        0.85,
        contains("ERR"),
    ),
    (
        "error_code",
        "err_digits",
        rf"(?<={L}(?P<s>(?:[A-Z][A-Z0-9]{{1,9}}[_-])?))ERR[0-9]{{2,6}}{R}",
        0.85,
        contains("ERR"),
    ),
    (
        "error_code",
        "e_digits",
        rf"(?<={L}(?P<s>(?:[A-Z][A-Z0-9]{{1,9}}[_-])*))E(?=[_-]?[0-9])[_-]?[0-9]{{3,6}}(?:[_-][A-Z0-9]+)?{R}",
        0.7,
        any_digit,
    ),
    (
        "error_code",
        "prefix_e_digits",
        rf"(?<={L}(?P<s>(?:[A-Z][A-Z0-9]{{1,9}}[_-])+))E(?=[_-]?[0-9])[_-]?[0-9]{{2,6}}{R}",
        0.8,
        any_digit,
    ),
    (
        "error_code",
        "dashed_segments",
        rf"(?<![0-9A-Za-z-])[A-Z][A-Z0-9]{{1,9}}(?:-[A-Z][A-Z0-9]{{1,9}})+-[0-9]{{2,6}}{R}",
        0.8,
        contains("-"),
    ),
    (
        "error_code",
        "snake_digits",
        rf"{L}[A-Z][A-Z0-9]{{1,9}}(?:_[A-Z][A-Z0-9]*)*_[0-9]{{2,6}}(?![0-9A-Za-z_])",
        0.75,
        contains("_"),
    ),
    (
        "error_code",
        "snake_words",
        rf"{L}[A-Z]{{2,}}(?:_[A-Z]{{2,}}){{1,5}}(?![0-9A-Za-z_])",
        0.3,
        contains("_"),
    ),
    (
        "error_code",
        "lower_after_word",
        rf"{_ERROR_WORDS}"
        r"\s{0,2}[:：=]?\s{0,2}[`'\"「]?(?P<v>[a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![0-9A-Za-z_])",
        0.6,
        After(("error", "code", "錯誤", "错误", "mã lỗi", "lỗi", "ma loi")),
    ),
    ("error_code", "hex_code", rf"{L}0x[0-9A-Fa-f]{{4,8}}{R}", 0.6, contains("0x")),
    # ticket / project keys (case-sensitive); PR and issue numbers after their word
    (
        "ticket_key",
        "key",
        r"(?<![0-9A-Za-z-])[A-Z][A-Z0-9]{1,9}(?:-[0-9]{1,6}){1,3}(?![0-9A-Za-z]|[-.][0-9])",
        0.85,
        upper_run,
    ),
    (
        "ticket_key",
        "hash_number",
        r"(?<![0-9A-Za-z&#])#[0-9]{2,6}(?![0-9A-Za-z])",
        0.45,
        contains("#"),
    ),
)

PROJECT_CODES: tuple[Row, ...] = (
    # short project codes, after their word
    (
        "project_code",
        "project_code",
        rf"{_PROJECT_WORDS}\s{{0,2}}[:：=]?\s{{0,2}}[`'\"「『]?(?P<v>[A-Z][A-Z0-9]{{0,7}}(?:-[A-Z0-9]{{1,5}})?)(?![A-Za-z0-9])",
        0.9,
        After(_PROJECT_ANCHORS),
    ),
    (
        "project_code",
        "project_code_before_word",
        rf"(?<=(?<![A-Za-z0-9])(?P<v>[A-Z][A-Z0-9]{{0,7}}(?:-[A-Z0-9]{{1,5}})?)\s{{0,2}}[(（]?\s{{0,2}}){_PROJECT_WORDS}",
        0.9,
        After(_PROJECT_ANCHORS),
    ),
)

# Words near a short hex string that make it a commit SHA.
SHA_CONTEXT = (
    "commit",
    "sha",
    "hash",
    "revert",
    "cherry-pick",
    "cherry pick",
    "rebase",
    "git ",
    "head",
    "提交",
    "回滾",
    "回滚",
    "還原",
    "还原",
    "版本",
    "mã commit",
    "commit của",
    "bản commit",
    "change",
    "changeset",
    "patch",
    "diff",
    "merged",
    "pushed",
    "變更",
    "变更",
    "改動",
    "改动",
    "thay đổi",
)
# Words near an all-letter SNAKE_CASE word that make it an error code.
ERROR_CONTEXT = (
    "error",
    "code",
    "fail",
    "return",
    "throw",
    "raise",
    "exception",
    "status",
    "錯誤",
    "错误",
    "回傳",
    "回传",
    "返回",
    "報錯",
    "报错",
    "失敗",
    "失败",
    "異常",
    "异常",
    "代碼",
    "代码",
    "lỗi",
    "mã",
    "trả về",
    "thất bại",
)
_ERROR_REASONS = frozenset(
    split_words(
        "DECLINED DENIED TIMEOUT INVALID EXPIRED FAILED FAILURE LIMIT EXCEEDED "
        "INSUFFICIENT REJECTED ERROR MISSING DUPLICATE LOCKED OVERFLOW MISMATCH UNSUPPORTED"
    )
)
# Standard status names (HTTP, gRPC, POSIX): what a library returns, not an organisation's code.
STANDARD_CODES = frozenset(
    split_words(
        "NOT_FOUND BAD_REQUEST INTERNAL_ERROR INTERNAL_SERVER_ERROR SERVICE_UNAVAILABLE "
        "GATEWAY_TIMEOUT BAD_GATEWAY PERMISSION_DENIED UNAUTHENTICATED ALREADY_EXISTS "
        "INVALID_ARGUMENT DEADLINE_EXCEEDED RESOURCE_EXHAUSTED FAILED_PRECONDITION "
        "OUT_OF_RANGE DATA_LOSS TOO_MANY_REQUESTS REQUEST_TIMEOUT NOT_IMPLEMENTED "
        "METHOD_NOT_ALLOWED PAYLOAD_TOO_LARGE UNPROCESSABLE_ENTITY NO_CONTENT NOT_MODIFIED "
        "CONNECTION_REFUSED CONNECTION_RESET TIMED_OUT NETWORK_ERROR UNKNOWN_ERROR "
        "ERR_CONNECTION_REFUSED ERR_CONNECTION_RESET ERR_CONNECTION_TIMED_OUT ERR_NAME_NOT_RESOLVED "
        "ERR_INTERNET_DISCONNECTED ERR_CERT_AUTHORITY_INVALID ERR_SSL_PROTOCOL_ERROR ERR_TIMED_OUT "
        "ERR_NETWORK ERR_BAD_REQUEST ERR_BAD_RESPONSE ERR_CANCELED ERR_INVALID_URL "
        "ERR_TOO_MANY_REDIRECTS ERR_EMPTY_RESPONSE ERR_ABORTED ERR_FAILED ERR_BLOCKED_BY_CLIENT "
        "ERR_MODULE_NOT_FOUND ERR_REQUIRE_ESM ERR_OSSL_EVP_UNSUPPORTED "
        "UTF_8 ISO_8601 SNAKE_CASE UPPER_CASE CAMEL_CASE READ_ONLY WRITE_ONLY READ_WRITE "
        "TODO FIXME NOTE"
    )
)
_STANDARD_PREFIX = re.compile(r"^(?:HTTP|SQLSTATE|SIG)_?[0-9A-Z]+$")
_POSIX = frozenset(
    split_words(
        "ENOENT EACCES EEXIST ENOTDIR EISDIR EINVAL EPIPE ECONNREFUSED ECONNRESET ETIMEDOUT "
        "EADDRINUSE ENOMEM ENOSPC EPERM EAGAIN EBUSY EHOSTUNREACH ENETUNREACH ECONNABORTED"
    )
)
# Prefixes of ``ABC-123`` that are standards, units or structure, not ticket keys.
TICKET_STOP = frozenset(
    split_words(
        "AC TC UTF SHA ISO COVID GPT TLS SSL HTTP HTTPS IPV RFC AES RSA CVE MP PCI DSS OWASP "
        "WCAG ECMA IEC IEEE ANSI FIPS PEP JSR WIN SQL HDMI USB LTE ISBN GMT UTC CST PST EST JST "
        "ICT SEV PRI STEP CASE PHASE ROUND LEVEL TIER WEEK DAY TOP FY KPI OKR BT P Q H W S "
        "MD5 SHA1 SHA256 BASE64 TOP10 A4 A3 V1 V2 V3 LV LEVEL1 NO GB MB KB TB IP4 IP6 X86 ARM64"
    )
)
_QUARTER = re.compile(r"^(?:Q[1-4]|H[12]|FY[0-9]{0,4}|W[0-9]{1,2}|S[0-9]|P[0-9])$")
_RANK_CONTEXT = ("排名", "排行", "第", "rank", "ranked", "top", "hạng", "xếp hạng", "no.", "place")
_TICKET_CONTEXT = (
    "pr",
    "pull",
    "issue",
    "ticket",
    "bug",
    "工單",
    "工单",
    "單號",
    "单号",
    "票",
    "需求",
    "mr",
    "merge",
    "phiếu",
    "yêu cầu",
    "task",
    "jira",
    "fixes",
    "closes",
    "see",
    "refs",
)


_SHA_LIST = re.compile(
    r"(?<![0-9A-Za-z])([0-9a-f]{7,40})(?:\s*(?:[,、/，;&]|and|和|與|与|và)\s*|\s+)$"
)


def _near_other_sha(text: str, start: int, depth: int = 0) -> bool:
    """A short hex string listed right after a SHA (``commits a1b2c3d, 9be04d2``)."""
    if depth > 20:
        return False
    before = text[max(0, start - 60) : start]
    match = _SHA_LIST.search(before)
    if not match:
        return False
    prev_start = start - len(before) + match.start(1)
    prev_end = prev_start + len(match.group(1))
    return has_context(text, prev_start, prev_end, SHA_CONTEXT) or _near_other_sha(
        text, prev_start, depth + 1
    )


def check(
    pattern: Pattern, text: str, start: int, end: int, match: Match | None = None
) -> float | None:
    """Checks after matching a code; the score to keep the match with, or ``None`` to drop it."""
    cls, name, score = pattern.cls, pattern.name, pattern.score
    value = text[start:end]
    if cls == "commit_sha" and len(value) <= 12:
        if not (re.search(r"[0-9]", value) and re.search(r"[a-f]", value)):
            return None
        if has_context(text, start, end, SHA_CONTEXT) or _near_other_sha(text, start):
            return 0.85
        return None
    if cls == "error_code":
        if value in STANDARD_CODES or value in _POSIX or _STANDARD_PREFIX.match(value):
            return None
        if score < 0.5:
            words = set(value.split("_"))
            if words & _ERROR_REASONS or has_context(text, start, end, ERROR_CONTEXT):
                return 0.65
            return None
        return score
    if cls == "ticket_key":
        if name == "hash_number":
            if has_word(text, start, end, _RANK_CONTEXT):
                return None
            if has_word(text, start, end, _TICKET_CONTEXT) or len(value) >= 5:
                return 0.7
            return None
        prefix = value.split("-", 1)[0]
        if prefix in TICKET_STOP or _QUARTER.match(prefix):
            return None
        return score
    return score
