"""Surrogates: a natural-looking replacement for each identifier, with the original's shape.

Every choice is seeded by ``HMAC-SHA256(secret, case_key ␟ class ␟ original ␟ attempt)``, so the
same secret and case give the same surrogates on every run, another secret gives others, and
nothing here stores or prints a hash of an original. Within one ``SurrogateMaker`` (one case) the
same original always gets the same surrogate and two originals of a class never share one.

Shapes kept, class by class:

- people: a Faker name in the same script and locale, with as many characters or words;
- organisations, projects, features: a curated fictional stem (``pools``) plus the original's own
  suffix or prefix (``科技``, ``Công ty TNHH``, ``Project``, ``模組``);
- commit SHAs: lowercase hex of the same length; a short SHA and the full SHA it abbreviates get
  surrogates that are prefixes of each other;
- branches: the ``fix/``-style prefix kept, the words replaced by plausible ones;
- error codes and ticket keys: letters, digits and separators in the same places; the same letter
  group (``PAY`` in ``PAY-1234`` and ``ERR_PAY_4012``) maps to the same replacement;
- money: one scale factor per case (0.6–0.9 or 1.1–1.6), re-rendered in the same format and
  currency, rounded like the original but never more than 1 % off, so ratios and order survive;
- dates: one offset per case (a whole number of weeks, 21–399 days, one direction), re-rendered in
  the same format, so intervals and weekdays survive;
- e-mails on ``.test`` (or ``example.com`` for free-mail); URLs on ``example.com``; IPs in the
  documentation ranges; phones with the same length, separators and leading prefix.

No surrogate ever contains a redaction mark (``█ ■ [REDACTED] *** <PERSON>``).
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import hmac
import ipaddress
import itertools
import random
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from caseforge.privacy import pools
from caseforge.privacy.identifiers import CLASSES, MONTHS_EN, NUMBER, TICKET_STOP, Span
from caseforge.privacy.patterns import WEEKDAY_AFTER, WEEKDAY_LEAD, tw_national_id_valid
from caseforge.privacy.policy import (
    DOC_NETS_V4,
    RESERVED_DOMAINS,
    RESERVED_SUFFIXES,
    faker_locale,
    has_redaction,
)
from caseforge.privacy.policy import (
    LOCALES as _LANGUAGE_LOCALES,
)
from caseforge.privacy.values import numbers, parse_number, prepare

if TYPE_CHECKING:
    from faker import Faker

LOCALES: tuple[str, ...] = tuple(_LANGUAGE_LOCALES.values())
_TWO_LEVEL_SLD = frozenset({"com", "co", "org", "net", "gov", "edu", "ac"})
_BRANCH_PREFIX = re.compile(
    r"(?:feature|features|feat|fix|bugfix|hotfix|release|releases|chore|refactor|perf|topic|wip)/"
)
_KEEP_CODE_TOKENS = frozenset({"ERR", "ERROR", "E"})
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_VI_MARKS = re.compile(
    r"[ăâđêôơưĂÂĐÊÔƠƯàáảãạằắẳẵặầấẩẫậèéẻẽẹềếểễệìíỉĩịòóỏõọồốổỗộờớởỡợùúủũụừứửữựỳýỷỹỵ]", re.I
)
_VI_SURNAMES = frozenset(
    pools.split_words(
        "nguyen tran le pham hoang huynh phan vu vo dang bui do ho ngo duong ly dinh trinh mai"
    )
)
_NUMBER_RE = re.compile(NUMBER)
_CN_NUMBER_CHARS = "[〇零一二两兩三四五六七八九十百千萬万億亿壹贰貳叁參肆伍陆陸柒捌玖拾佰仟]"
_FAKERS: dict[str, Faker] = {}


def normalize_locale(locale: str) -> str:
    """``zh-TW`` / ``zh_TW`` / ``vi`` / ``en`` … → one of ``LOCALES``."""
    if locale in LOCALES:
        return locale
    try:
        return faker_locale(locale.replace("_", "-"))
    except (ValueError, KeyError):
        raise ValueError(
            f"unsupported locale {locale!r} (use one of {', '.join(LOCALES)})"
        ) from None


def _faker(locale: str, seed: int) -> Faker:
    """A cached Faker for ``locale``, re-seeded (Faker is imported on first use)."""
    fake = _FAKERS.get(locale)
    if fake is None:
        from faker import Faker

        fake = Faker(locale)
        _FAKERS[locale] = fake
    fake.seed_instance(seed)
    return fake


@dataclass
class SurrogateMap:
    """What ``apply`` replaced in one case: keep it private, never commit it."""

    replacements: dict[str, str]
    money_factor: float
    date_offset_days: int
    classes: dict[str, str] = field(default_factory=dict)


class SurrogateMaker:
    """Makes surrogates for one case, reproducibly from ``secret`` and ``case_key``."""

    def __init__(self, secret: bytes, case_key: str, locale: str = "zh_TW") -> None:
        if not secret:
            raise ValueError("the surrogate secret must not be empty")
        self._secret = bytes(secret)
        self.case_key = case_key
        self.locale = normalize_locale(locale)
        self.money_factor = _money_factor(self._digest("money-factor"))
        self.date_offset_days = _date_offset(self._digest("date-offset"))
        self._cache: dict[tuple[str, str], str] = {}
        self._taken: dict[str, dict[str, str]] = {}
        self._tokens: dict[tuple[str, str], str] = {}
        self._token_taken: dict[str, set[str]] = {}
        self._makers: dict[str, Callable[[str, int], str]] = {
            "person": self._person,
            "organization": self._organization,
            "project": self._project,
            "feature": self._feature,
            "commit_sha": self._sha,
            "branch": self._branch,
            "error_code": self._error_code,
            "ticket_key": self._ticket,
            "money": self._money,
            "date": self._date,
            "email": self._email,
            "phone": self._phone,
            "url": self._url,
            "ip": self._ip,
            "handle": self._person,
            "channel": self._channel,
            "messaging_id": self._messaging_id,
            "national_id": self._national_id,
            "business_id": self._business_id,
            "hostname": self._error_code,  # pay-db-01 → mint-db-07: words and digits swapped
            "project_code": self._project_code,
            "secret": self._secret_value,
            "address": self._address,
            "reference": self._secret_value,  # an order or account number: its shape kept
        }

    # --- public -----------------------------------------------------------------------------

    def surrogate(self, span: Span) -> str:
        """The replacement for ``span.text``: same shape, never equal, the same every time."""
        return self.value(span.cls, span.text)

    def value(self, cls: str, original: str) -> str:
        """The replacement for ``original`` of class ``cls`` (what ``surrogate`` uses)."""
        if cls not in self._makers:
            raise ValueError(f"unknown identifier class {cls!r} (use one of {', '.join(CLASSES)})")
        key = (cls, original)
        found = self._cache.get(key)
        if found is not None:
            return found
        taken = self._taken.setdefault(cls, {})
        deterministic = cls in ("money", "date")
        fallback: str | None = None
        for attempt in range(64):
            candidate = self._makers[cls](original, attempt)
            if not self._acceptable(cls, original, candidate):
                continue
            if deterministic or candidate not in taken:
                break
            fallback = fallback or candidate
        else:  # a pool used up by a very long case: share a surrogate rather than fail
            if fallback is None:  # pragma: no cover - no maker returns the original 64 times
                raise RuntimeError(f"no surrogate found for a {cls} span")
            candidate = fallback
        taken.setdefault(candidate, original)
        self._cache[key] = candidate
        return candidate

    def apply(self, text: str, spans: list[Span]) -> tuple[str, SurrogateMap]:
        """Replace every span (they must not overlap); the new text and the mapping."""
        ordered = sorted(spans, key=lambda s: (s.start, s.end))
        for before, after in itertools.pairwise(ordered):
            if after.start < before.end:
                raise ValueError(f"overlapping spans at {before.start} and {after.start}")
        for span in ordered:
            if text[span.start : span.end] != span.text:
                raise ValueError(f"span at {span.start}:{span.end} does not match the text")
        surrogates = [self.surrogate(span) for span in ordered]  # left to right: stable choices
        out = text
        for span, new in reversed(list(zip(ordered, surrogates, strict=True))):
            out = out[: span.start] + new + out[span.end :]
        mapping = SurrogateMap(
            replacements={s.text: new for s, new in zip(ordered, surrogates, strict=True)},
            money_factor=self.money_factor,
            date_offset_days=self.date_offset_days,
            classes={s.text: s.cls for s in ordered},
        )
        return out, mapping

    # --- seeding ----------------------------------------------------------------------------

    def _digest(self, *parts: str) -> bytes:
        message = "\x1f".join((self.case_key, *parts)).encode("utf-8")
        return hmac.new(self._secret, message, hashlib.sha256).digest()

    def _rng(self, *parts: str | int) -> random.Random:
        return random.Random(int.from_bytes(self._digest(*map(str, parts)), "big"))

    def _acceptable(self, cls: str, original: str, candidate: str) -> bool:
        if not candidate.strip() or candidate == original or has_redaction(candidate):
            return False
        if cls in ("person", "organization", "project", "feature"):
            low, new = original.casefold(), candidate.casefold()
            if low == new or (len(low) >= 2 and low in new):
                return False
        return True

    def _token(self, kind: str, original: str, make: Callable[[random.Random], str]) -> str:
        """A per-case consistent replacement for a sub-token (a word, a letter group, a domain)."""
        key = (kind, original)
        found = self._tokens.get(key)
        if found is not None:
            return found
        taken = self._token_taken.setdefault(kind, set())
        candidate = original
        for attempt in range(64):
            candidate = make(self._rng("token", kind, original, attempt))
            if candidate.casefold() != original.casefold() and candidate not in taken:
                break
        if candidate.casefold() == original.casefold():  # pool used up: scramble instead
            candidate = _shape_scramble(original, self._rng("token", kind, original, "scramble"))
        taken.add(candidate)
        self._tokens[key] = candidate
        return candidate

    def _secret_value(self, original: str, attempt: int) -> str:
        """A password, key, code or reference number: letters, digits and symbols in the
        same places."""
        return _shape_scramble(original, self._rng("secret", original, attempt))

    def _address(self, original: str, attempt: int) -> str:
        """An address of the same shape: its numbers and postcode scrambled, the names of its
        road, street, building and town drawn anew; the words that say what each part is
        (路, 巷, 號, Street, Flat, ngõ, Phường) kept."""
        rng = self._rng("address", original, attempt)
        pool = _ADDRESS_EN if original.isascii() else _ADDRESS_VI
        out = []
        for token in _ADDRESS_TOKEN.findall(original):
            if token.isdigit():  # a number: as many digits, not starting with 0 unless it did
                digits = [str(rng.randrange(10)) for _ in token]
                if token[0] != "0":
                    digits[0] = str(rng.randrange(1, 10))
                number = "".join(digits)
                out.append(number if number != token else str(int(token) + 1))
            elif token.isascii() and token.isalnum() and token.isupper():
                out.append(_shape_scramble(token, rng))  # a postcode's part, a block
            elif len(token) == 1 and "\u4e00" <= token <= "\u9fff":
                out.append(token if token in _ADDRESS_KEEP_HAN else rng.choice(_ADDRESS_HAN))
            elif token[:1].isupper() and token.casefold() not in _ADDRESS_KEEP_WORDS:
                out.append(rng.choice(pool))
            else:
                out.append(token)
        return "".join(out)

    # --- names ------------------------------------------------------------------------------

    def _zh_locale(self) -> str:
        return "zh_CN" if self.locale == "zh_CN" else "zh_TW"

    def _person(self, original: str, attempt: int) -> str:
        rng = self._rng("person", original, attempt)
        seed = rng.getrandbits(64)
        at = "@" if original.startswith("@") else ""
        name = original[len(at) :]
        if _CJK.search(name):
            fake = _faker(self._zh_locale(), seed)
            size = len(re.sub(r"\s", "", name))
            last, given = str(fake.last_name()), str(fake.first_name())
            if size <= 2:
                return at + last + given[0]
            if size == 3 and len(given) < 2:
                given += str(fake.first_name())[0]
            return at + last + (given[:2] if size == 3 else given)
        handle = re.fullmatch(r"([a-z0-9]+)(?:([._-])([a-z0-9]+))?", name)
        if handle:  # a chat handle or user name: alice, yating.lin
            given, family = self._romanized(seed)
            if handle.group(2):
                return at + given + handle.group(2) + family
            return at + given
        words = name.split()
        vietnamese = bool(_VI_MARKS.search(name)) or bool(
            words and _strip_marks(words[0]).lower() in _VI_SURNAMES
        )
        if vietnamese:
            out = self._vi_name(seed, len(words))
            return at + (out if _VI_MARKS.search(name) else _strip_marks(out))
        fake = _faker("en_US", seed)
        parts = [fake.first_name()]
        while len(parts) < len(words) - 1:
            parts.append(fake.first_name())
        if len(words) >= 2:
            parts.append(fake.last_name())
        out = " ".join(parts)
        if name.isupper() and len(name) > 1:
            out = out.upper()
        elif name.islower():
            out = out.lower()
        return at + out

    def _vi_name(self, seed: int, words: int) -> str:
        fake = _faker("vi_VN", seed)
        first = fake.first_name_female() if seed % 2 else fake.first_name_male()
        if words <= 1:
            return str(first)
        last = fake.last_name()
        middles = [fake.middle_name().split()[0] for _ in range(max(0, words - 2))]
        return " ".join([last, *middles, first])

    def _romanized(self, seed: int) -> tuple[str, str]:
        """A lowercase (given, family) pair in the case's locale, ASCII only."""
        if self.locale == "vi_VN":
            fake = _faker("vi_VN", seed)
            given = _strip_marks(fake.first_name_female() if seed % 2 else fake.first_name_male())
            return _ascii_word(given), _ascii_word(_strip_marks(fake.last_name()))
        if self.locale in ("zh_TW", "zh_CN"):
            fake = _faker(self.locale, seed)
            parts = str(fake.romanized_name()).lower().split()
            if self.locale == "zh_TW":  # "LIN YU-MEI": family first
                family, given = parts[0], "".join(parts[1:])
            else:  # "Jing Zhao": family last
                family, given = parts[-1], "".join(parts[:-1])
            return _ascii_word(given), _ascii_word(family)
        fake = _faker("en_US", seed)
        return _ascii_word(fake.first_name().lower()), _ascii_word(fake.last_name().lower())

    def _family(self, original: str) -> str:
        """Which pool family a name belongs to, from its script."""
        if _CJK.search(original):
            return self._zh_locale()
        if _VI_MARKS.search(original):
            return "vi_VN"
        return "en_US"

    def _organization(self, original: str, attempt: int) -> str:
        rng = self._rng("organization", original, attempt)
        family = self._family(original)
        stem = rng.choice(pools.ORG_STEMS[family])
        if family.startswith("zh"):
            return stem + _suffix(original, pools.ORG_SUFFIXES_CJK)
        if family == "vi_VN":
            prefix = _prefix(original, pools.ORG_PREFIXES_VI)
            return f"{prefix} {stem}" if prefix else stem
        suffix = _word_suffix(original, pools.ORG_SUFFIXES_EN)
        return _case_like(original, f"{stem} {suffix}" if suffix else stem)

    def _project(self, original: str, attempt: int) -> str:
        rng = self._rng("project", original, attempt)
        family = self._family(original)
        stem = rng.choice(pools.PROJECT_STEMS[family])
        if family.startswith("zh"):
            return stem + _suffix(original, pools.PROJECT_SUFFIXES_CJK)
        if family == "vi_VN":
            prefix = _prefix(original, pools.PROJECT_PREFIXES_VI)
            return f"{prefix} {stem}" if prefix else stem
        prefix = _prefix(original, pools.PROJECT_AFFIXES_EN)
        suffix = _word_suffix(original, pools.PROJECT_AFFIXES_EN)
        out = f"{prefix} {stem}" if prefix else (f"{stem} {suffix}" if suffix else stem)
        return _case_like(original, out)

    def _feature(self, original: str, attempt: int) -> str:
        rng = self._rng("feature", original, attempt)
        family = self._family(original)
        stem = rng.choice(pools.FEATURE_STEMS[family])
        if family.startswith("zh"):
            return stem + _suffix(original, pools.FEATURE_SUFFIXES_CJK)
        if family == "vi_VN":
            prefix = _prefix(original, pools.FEATURE_PREFIXES_VI)
            return f"{prefix} {stem}" if prefix else stem
        suffix = _word_suffix(original, pools.FEATURE_SUFFIXES_EN)
        if suffix:
            stem = stem.split()[0]
        return _case_like(original, f"{stem} {suffix}" if suffix else stem)

    # --- chat, ids, hosts -------------------------------------------------------------------

    def _channel(self, original: str, attempt: int) -> str:
        """``#payment-alerts`` → ``#garden-notes``; a named group keeps its 群/小組 ending."""
        rng = self._rng("channel", original, attempt)
        if original.startswith("#"):
            words = re.findall(r"[A-Za-z]+|[0-9]+|[^A-Za-z0-9]+", original[1:])
            out = [
                self._word(w) if w.isalpha() else _digits(w, rng) if w.isdigit() else w
                for w in words
            ]
            return "#" + "".join(out)
        if _CJK.search(original):
            ending = _suffix(
                original, ("小組", "小组", "群組", "群组", "群", "組", "组", "團隊", "团队")
            )
            return rng.choice(pools.PROJECT_STEMS[self._zh_locale()]) + (ending or "群")
        return self._project(original, attempt)

    def _messaging_id(self, original: str, attempt: int) -> str:
        if re.fullmatch(r"\+?[0-9][0-9 .-]+", original):
            return self._phone(original, attempt)
        rng = self._rng("messaging_id", original, attempt)
        if original.startswith("wxid_"):
            return "wxid_" + "".join(
                rng.choice("abcdefghjkmnpqrstuvwxyz0123456789") for _ in original[5:]
            )
        return _shape_scramble(original, rng)

    def _national_id(self, original: str, attempt: int) -> str:
        """Same format, a valid checksum, nothing of the original kept."""
        rng = self._rng("national_id", original, attempt)
        if re.fullmatch(r"[A-Z][0-9]{9}", original):
            while True:
                candidate = (
                    rng.choice("ABCDEFGHJKLMNPQRSTUVXYWZIO")
                    + original[1]
                    + "".join(str(rng.randrange(10)) for _ in range(8))
                )
                if tw_national_id_valid(candidate):
                    return candidate
        if re.fullmatch(r"[0-9]{17}[0-9Xx]", original):
            from stdnum.cn import ric

            birth = dt.date(1960, 1, 1) + dt.timedelta(days=rng.randrange(20000))
            body = f"{rng.randrange(110000, 660000):06d}{birth:%Y%m%d}{rng.randrange(1000):03d}"
            return body + str(ric.calc_check_digit(body))
        if re.fullmatch(r"[0-9]{3}-[0-9]{2}-[0-9]{4}", original):
            return f"987-65-432{rng.randrange(10)}"  # the range set aside for advertising
        return _digits(original, rng) if original.isdigit() else _shape_scramble(original, rng)

    def _business_id(self, original: str, attempt: int) -> str:
        rng = self._rng("business_id", original, attempt)
        if re.fullmatch(r"[0-9]{8}", original):
            from stdnum.tw import ubn

            while True:
                candidate = "".join(str(rng.randrange(10)) for _ in range(8))
                if ubn.is_valid(candidate):
                    return candidate
        if re.fullmatch(r"[0-9A-HJ-NPQRTUWXY]{18}", original):
            from stdnum.cn import uscc

            alphabet = "0123456789ABCDEFGHJKLMNPQRTUWXY"
            body = original[:2] + "".join(str(rng.randrange(10)) for _ in range(6))
            body += "".join(rng.choice(alphabet) for _ in range(9))
            return body + str(uscc.calc_check_digit(body))
        match = re.fullmatch(r"([0-9]{10})(-[0-9]{3})?", original)
        if match:
            from stdnum.vn import mst

            body = "0" + "".join(str(rng.randrange(10)) for _ in range(8))
            return body + str(mst.calc_check_digit(body)) + (match.group(2) or "")
        return _shape_scramble(original, rng)

    def _project_code(self, original: str, attempt: int) -> str:
        rng = self._rng("project_code", original, attempt)
        return _shape_scramble(original, rng)

    # --- engineering identifiers ------------------------------------------------------------

    def _sha(self, original: str, attempt: int) -> str:
        """Same-length lowercase hex; each character depends only on the original's prefix."""
        low = original.lower()
        tag = "" if attempt == 0 else f"#{attempt}"
        return "".join(
            "0123456789abcdef"[self._digest("sha", low[: i + 1] + tag)[0] % 16]
            for i in range(len(low))
        )

    def _branch(self, original: str, attempt: int) -> str:
        rng = self._rng("branch", original, attempt)
        match = _BRANCH_PREFIX.match(original)
        prefix = match.group(0) if match else ""
        rest = original[len(prefix) :]
        tokens = re.findall(r"[A-Z][A-Z0-9]{1,9}-[0-9]{1,6}|[A-Za-z]+|[0-9]+|[^A-Za-z0-9]+", rest)
        out: list[str] = []
        changed = False
        for token in tokens:
            new = token
            if re.fullmatch(r"[A-Z][A-Z0-9]{1,9}-[0-9]{1,6}", token):
                new = self.value("ticket_key", token)
            elif token.isalpha() and (token.lower() not in pools.GENERIC_WORDS or attempt > 0):
                new = self._word(token)
            elif token.isdigit():
                new = _digits(token, rng)
            changed = changed or new != token
            out.append(new)
        if not changed:  # only generic words: replace the last one
            for i in range(len(out) - 1, -1, -1):
                if out[i].isalpha():
                    out[i] = self._word(out[i])
                    break
            else:
                out.append("-" + rng.choice(pools.WORDS))
        return prefix + "".join(out)

    def _error_code(self, original: str, attempt: int) -> str:
        rng = self._rng("error_code", original, attempt)
        if original.lower().startswith("0x"):
            hexdigits = "0123456789abcdef" if original[2:].islower() else "0123456789ABCDEF"
            return original[:2] + "".join(rng.choice(hexdigits) for _ in original[2:])
        tokens = re.findall(r"[A-Z]+|[a-z]+|[0-9]+|[^A-Za-z0-9]+", original)
        out: list[str] = []
        for token in tokens:
            if token.isupper() and token.isalpha():
                generic = token in _KEEP_CODE_TOKENS or token.lower() in pools.GENERIC_WORDS
                out.append(token if generic and attempt == 0 else self._upper(token))
            elif token.islower() and token.isalpha():
                generic = token in pools.GENERIC_WORDS
                out.append(token if generic and attempt == 0 else self._word(token))
            elif token.isdigit():
                out.append(_digits(token, rng))
            else:
                out.append(token)
        result = "".join(out)
        if result == original:  # nothing but generic words: replace the last word
            for i in range(len(tokens) - 1, -1, -1):
                if tokens[i].isalpha() and tokens[i] not in _KEEP_CODE_TOKENS:
                    out[i] = (
                        self._upper(tokens[i]) if tokens[i].isupper() else self._word(tokens[i])
                    )
                    break
            result = "".join(out)
        return result

    def _ticket(self, original: str, attempt: int) -> str:
        """``PAY-1234`` → ``TAX-8071``; ``INV-2026-0091`` keeps its year; ``#482`` → ``#917``."""
        rng = self._rng("ticket_key", original, attempt)
        if original.startswith("#"):
            return "#" + _digits(original[1:], rng)
        head, *groups = original.split("-")
        if not groups or not head.isalnum():
            return _shape_scramble(original, rng)
        out = [self._upper(head)]
        for index, group in enumerate(groups):
            year = index == 0 and len(groups) > 1 and re.fullmatch(r"20[0-9]{2}", group)
            out.append(group if year else _digits(group, rng))
        return "-".join(out)

    def _upper(self, token: str) -> str:
        """A consistent replacement for an upper-case letter group (``PAY`` → ``TAX``)."""

        def make(rng: random.Random) -> str:
            if not token.isalpha():
                return _shape_scramble(token, rng)
            same = [w.upper() for w in pools.WORDS if len(w) == len(token) and w.isalpha()]
            same = [w for w in same if w != token and w not in TICKET_STOP]
            if same and rng.random() < 0.85:
                return str(rng.choice(same))
            letters = "ABCDEFGHJKLMNPRSTUVWXYZ"
            return "".join(rng.choice(letters) for _ in token)

        return self._token("upper", token, make)

    def _word(self, token: str) -> str:
        """A consistent plausible word for a word, in the original's letter case."""

        def make(rng: random.Random) -> str:
            near = [w for w in pools.WORDS if abs(len(w) - len(token)) <= 2]
            return str(rng.choice(near or list(pools.WORDS)))

        if not token.isascii() or not token.isalpha():
            return self._token("word", token, make)
        word = self._token("word", token.lower(), make)
        return _case_like(token, word)

    # --- money and dates --------------------------------------------------------------------

    def _money(self, original: str, attempt: int) -> str:
        """Every number in the amount (two in a range) scaled by the case's factor."""
        out, end, scaled = [], 0, False
        for match in _NUMBER_RE.finditer(original):
            number = parse_number(match.group(0))
            if number is None or number.value == 0:
                continue
            out.append(original[end : match.start()] + number.scaled(self.money_factor))
            end, scaled = match.end(), True
        if not scaled:  # Chinese numerals (一百二十八萬元): written in digits, scaled
            value = parse_money(original)
            if value:
                unit = re.sub(f"^.*?{_CN_NUMBER_CHARS}+\\s?", "", original)
                return f"{round(value * self.money_factor):,}{unit}"
            return _shape_scramble(original, self._rng("money", original, attempt))
        return "".join(out) + original[end:]

    def _date(self, original: str, attempt: int) -> str:
        # the offset is whole weeks, so a weekday written before or after the date stays true
        lead = WEEKDAY_LEAD.match(original)
        head = lead.group() if lead else ""
        rest = original[len(head) :]
        tail = next(
            (rest[i:] for i in range(1, len(rest)) if WEEKDAY_AFTER.fullmatch(rest[i:])), ""
        )
        core = rest[: len(rest) - len(tail)]
        written = prepare(core)  # 二〇二六年三月五日 → 2026年3月5日
        roc = re.fullmatch(r"((?:民國|民国)\s?)?([0-9]{2,3})(\s?年.*)", written)
        if roc and int(roc.group(2)) < 200:  # the ROC calendar: 115年 is 2026
            western = f"{int(roc.group(2)) + 1911}{roc.group(3)}"
            shifted = shift_date(western, self.date_offset_days)
            if shifted is not None:
                year = int(shifted[:4]) - 1911
                return head + (roc.group(1) or "") + f"{year}{shifted[4:]}" + tail
        shifted = shift_date(written, self.date_offset_days, dayfirst=self.locale != "en_US")
        if shifted is not None:
            return head + shifted + tail
        return _shape_scramble(original, self._rng("date", original, attempt))

    # --- contacts ---------------------------------------------------------------------------

    def _email(self, original: str, attempt: int) -> str:
        local, _, domain = original.rpartition("@")
        rng = self._rng("email", original, attempt)
        new_domain = self._email_domain(domain)
        if local.lower() in pools.ROLE_MAILBOXES and attempt == 0 and new_domain != domain:
            return f"{local}@{new_domain}"
        given, family = self._romanized(rng.getrandbits(64))
        names = iter([given, family])
        out: list[str] = []
        for token in re.findall(r"[A-Za-z]+|[0-9]+|[^A-Za-z0-9]+", local):
            if token.isalpha():
                name = next(names, None) or rng.choice(pools.WORDS)
                out.append(name[0] if len(token) == 1 else name)
            elif token.isdigit():
                out.append(_digits(token, rng))
            else:
                out.append(token)
        return "".join(out) + "@" + new_domain

    def _email_domain(self, domain: str) -> str:
        low = domain.lower()
        if low in RESERVED_DOMAINS or low.endswith(RESERVED_SUFFIXES):
            return domain
        if low in pools.FREEMAIL_DOMAINS:
            return self._token("freemail", low, lambda rng: str(rng.choice(RESERVED_DOMAINS)))
        return self._domain_stem(_registrable(low)) + ".test"

    def _domain_stem(self, registrable: str) -> str:
        def make(rng: random.Random) -> str:
            stem = rng.choice(pools.ORG_STEMS["en_US"])
            return str(stem).lower().replace(" ", "")

        return self._token("domain", registrable, make)

    def _phone(self, original: str, attempt: int) -> str:
        rng = self._rng("phone", original, attempt)
        digits = [c for c in original if c.isdigit()]
        keep = _phone_prefix(original, digits)
        new = digits[:keep] + [str(rng.randrange(10)) for _ in digits[keep:]]
        national = digits[1:] if original.startswith("+1") else digits
        us_like = (
            len(national) == 10
            and national[0] not in "01"
            and (self.locale == "en_US" or original.startswith(("+1", "(")))
        )
        if us_like:  # NANP: area code, then the 555-01xx range set aside for fiction
            base = len(digits) - 10
            new[base] = str(rng.randrange(2, 10))
            new[base + 3 : base + 8] = list("55501")
        it = iter(new)
        return "".join(next(it) if c.isdigit() else c for c in original)

    def _url(self, original: str, attempt: int) -> str:
        rng = self._rng("url", original, attempt)
        match = re.match(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)?(?P<netloc>[^/?#]*)", original)
        assert match is not None  # the pattern matches every string
        scheme = match.group("scheme") or ""
        netloc = match.group("netloc")
        rest = original[match.end() :]
        net = re.fullmatch(
            r"(?:(?P<user>[^@]*)@)?(?P<host>\[[^\]]*\]|[^:]*)(?P<port>:[0-9]*)?", netloc
        )
        assert net is not None
        user = net.group("user")
        host = net.group("host")
        port = net.group("port") or ""
        new_user = ""
        if user is not None:
            new_user = (user if user.lower() in pools.GENERIC_WORDS else self._word(user)) + "@"
        out = f"{scheme}{new_user}{self._host(host)}{port}{self._scramble_path(rest, rng)}"
        if out == original or attempt > 0:
            new_host = self._host(host, force=True)
            out = f"{scheme}{new_user}{new_host}{port}{self._scramble_path(rest, rng, force=True)}"
        return out

    def _host(self, host: str, force: bool = False) -> str:
        """A host on example.com; one already reserved is kept unless ``force``."""
        bare = host.strip("[]")
        try:
            ipaddress.ip_address(bare)
        except ValueError:
            pass
        else:
            new = self.value("ip", bare)
            return f"[{new}]" if host.startswith("[") else new
        low = host.lower()
        reserved = low.endswith(RESERVED_SUFFIXES) or any(
            low == d or low.endswith("." + d) for d in RESERVED_DOMAINS
        )
        if reserved and not force:
            return host
        if reserved:
            return f"{self._domain_stem(low)}.example.com"
        registrable = _registrable(low)
        subs = low[: -len(registrable)].rstrip(".").split(".") if low != registrable else []
        labels = [s if s in pools.GENERIC_HOST_LABELS else self._word(s) for s in subs if s]
        return ".".join([*labels, self._domain_stem(registrable), "example", "com"])

    def _scramble_path(self, text: str, rng: random.Random, force: bool = False) -> str:
        out: list[str] = []
        for m in _URL_TOKEN.finditer(text):
            kind, token = m.lastgroup, m.group(0)
            if kind == "ticket" and token.split("-")[0] not in TICKET_STOP:
                out.append(self.value("ticket_key", token))
            elif kind == "hex" and re.search(r"[0-9]", token) and re.search(r"[a-fA-F]", token):
                out.append(self.value("commit_sha", token))
            elif kind in ("word", "hex", "ticket") and token.isalpha():
                keep = token.lower() in pools.GENERIC_WORDS and not force
                out.append(token if keep else self._word(token))
            elif kind in ("num", "hex") and token.isdigit():
                out.append(self._token("num", token, functools.partial(_digits, token)))
            elif kind in ("pct", "other"):
                out.append(self._word(token))
            elif kind in ("word", "hex", "ticket"):
                out.append(_shape_scramble(token, rng))
            else:
                out.append(token)
        return "".join(out)

    def _ip(self, original: str, attempt: int) -> str:
        rng = self._rng("ip", original, attempt)
        address, slash, prefix = original.partition("/")
        if ":" in address:
            groups = ":".join(f"{rng.randrange(1, 0xFFFF):x}" for _ in range(2))
            return f"2001:db8::{groups}" + (slash + prefix)
        network = address.rsplit(".", 1)[0]
        base = self._token("ipnet", network, lambda r: str(r.choice(DOC_NETS_V4)))
        return f"{base}.{rng.randrange(1, 255)}" + (slash + prefix)


_URL_TOKEN = re.compile(
    r"(?P<ticket>(?<![A-Za-z0-9])[A-Z][A-Z0-9]{1,9}-[0-9]{1,6}(?![A-Za-z0-9]))"
    r"|(?P<hex>(?<![A-Za-z0-9])[0-9a-fA-F]{7,64}(?![A-Za-z0-9]))"
    r"|(?P<word>[A-Za-z]+)|(?P<num>[0-9]+)|(?P<pct>(?:%[0-9A-Fa-f]{2})+)"
    r"|(?P<other>[^\x00-\x7f]+)|(?P<sep>.)",
    re.S,
)


# --- numbers ---------------------------------------------------------------------------------


def parse_money(text: str) -> float | None:
    """The amount an identifier of class money stands for (``3萬元`` → 30000.0), or ``None``."""
    found = numbers(prepare(text))
    return found[0].value if found else None


# --- dates -----------------------------------------------------------------------------------

_MONTH_INDEX = {name.lower(): i + 1 for i, name in enumerate(MONTHS_EN)}
_MONTH_INDEX.update({name[:3].lower(): i + 1 for i, name in enumerate(MONTHS_EN)})
_MONTH_INDEX["sept"] = 9
_FULL_MONTHS = frozenset(name.lower() for name in MONTHS_EN)

_DATE_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("numeric", re.compile(r"(?P<y>[0-9]{4})(?P<s>[-/.])(?P<m>[0-9]{1,2})(?P=s)(?P<d>[0-9]{1,2})")),
    ("dmy", re.compile(r"(?P<a>[0-9]{1,2})(?P<s>[-/.])(?P<b>[0-9]{1,2})(?P=s)(?P<y>[0-9]{4})")),
    (
        "words",
        re.compile(
            r"(?:(?P<y>[0-9]{4})\s?年\s?)?(?P<m>[0-9]{1,2})\s?月\s?(?P<d>[0-9]{1,2})\s?[日號号]"
        ),
    ),
    ("month", re.compile(r"(?P<y>[0-9]{4})\s?年\s?(?P<m>[0-9]{1,2})\s?月")),
    (
        "words",
        re.compile(
            r"(?i:ngày)\s+(?P<d>[0-9]{1,2})\s+(?i:tháng)\s+(?P<m>[0-9]{1,2})"
            r"(?:(?:(?:\s*,\s*|\s+)(?i:năm)\s+|\s*[,/]\s*)(?P<y>[0-9]{4}))?"
        ),
    ),
    (
        "words",
        re.compile(
            r"(?P<d>[0-9]{1,2})\s+(?i:tháng)\s+(?P<m>[0-9]{1,2})(?:\s*,\s*|\s+)(?i:năm)\s+"
            r"(?P<y>[0-9]{4})"
        ),
    ),
    (
        "month",
        re.compile(r"(?i:tháng)\s+(?P<m>[0-9]{1,2})(?:\s*/\s*|\s+(?i:năm)\s+)(?P<y>[0-9]{4})"),
    ),
    (
        "words",
        re.compile(
            r"(?P<mon>[A-Za-z]+)(?P<dot>\.?)\s+(?P<d>[0-9]{1,2})(?P<ord>st|nd|rd|th)?"
            r"(?:,?\s+(?P<y>[0-9]{4}))?"
        ),
    ),
    (
        "words",
        re.compile(
            r"(?P<d>[0-9]{1,2})(?P<ord>st|nd|rd|th)?\s+(?:of\s+)?(?P<mon>[A-Za-z]+)(?P<dot>\.?)"
            r"(?:,?\s+(?P<y>[0-9]{4}))?"
        ),
    ),
    ("month", re.compile(r"(?P<mon>[A-Za-z]+)\s+(?P<y>[0-9]{4})")),
)


def parse_date(text: str, dayfirst: bool = True) -> dt.date | None:
    """The calendar date a date identifier names (no year: 2024; month only: the 15th)."""
    parsed = _parse_date(text, dayfirst)
    return parsed[0] if parsed else None


def _parse_date(text: str, dayfirst: bool) -> tuple[dt.date, str, re.Match[str], bool] | None:
    """(date, form, match, day-first) for a date written in one of the supported forms."""
    for form, pattern in _DATE_FORMS:
        match = pattern.fullmatch(text)
        if match is None:
            continue
        groups = match.groupdict()
        year = int(groups["y"]) if groups.get("y") else 2024
        first = dayfirst
        if form == "dmy":
            a, b = int(groups["a"]), int(groups["b"])
            first = a > 12 or (b <= 12 and dayfirst)
            day, month = (a, b) if first else (b, a)
        else:
            if groups.get("mon"):
                month_index = _MONTH_INDEX.get(groups["mon"].lower())
                if month_index is None:
                    continue
                month = month_index
            else:
                month = int(groups["m"])
            day = int(groups["d"]) if groups.get("d") else 15
        try:
            return dt.date(year, month, day), form, match, first
        except ValueError:
            continue
    return None


def shift_date(text: str, days: int, dayfirst: bool = True) -> str | None:
    """``text`` moved by ``days`` and written in the same form, or ``None`` if not a date."""
    parsed = _parse_date(text, dayfirst)
    if parsed is None:
        return None
    date, form, match, first = parsed
    new = date + dt.timedelta(days=days)
    groups = match.groupdict()
    names = ("a", "b") if form == "dmy" else ("m", "d")
    numeric = [groups[n] for n in names if groups.get(n)]
    if any(len(n) == 2 and n.startswith("0") for n in numeric):
        pad = True
    elif any(len(n) == 1 for n in numeric):
        pad = False
    else:
        pad = form in ("numeric", "dmy")

    def num(value: int) -> str:
        return f"{value:02d}" if pad else str(value)

    values: dict[str, str] = {"y": f"{new.year:04d}", "m": num(new.month), "d": num(new.day)}
    if form == "dmy":
        values["a"], values["b"] = (
            (num(new.day), num(new.month)) if first else (num(new.month), num(new.day))
        )
    if groups.get("mon"):
        values["mon"] = _month_name(groups["mon"], new.month)
    if groups.get("ord"):
        values["ord"] = _ordinal(new.day)
    out = text
    spans = sorted(
        ((match.start(n), match.end(n), n) for n in values if groups.get(n)), reverse=True
    )
    for start, end, name in spans:
        out = out[:start] + values[name] + out[end:]
    return out


def _month_name(original: str, month: int) -> str:
    full = MONTHS_EN[month - 1]
    if original.lower() in _FULL_MONTHS:
        name = full
    else:
        name = "Sept" if original.lower() == "sept" and month == 9 else full[:3]
    if original.isupper() and len(original) > 1:
        return name.upper()
    if original.islower():
        return name.lower()
    return name


def _ordinal(day: int) -> str:
    if 11 <= day % 100 <= 13:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


# --- small helpers ---------------------------------------------------------------------------


def _money_factor(digest: bytes) -> float:
    """A factor in [0.6, 0.9) ∪ [1.1, 1.6): far enough from 1 that no amount stays the same."""
    x = int.from_bytes(digest[:8], "big") / 2**64 * 0.8
    return round(0.6 + x if x < 0.3 else 1.1 + (x - 0.3), 4)


def _date_offset(digest: bytes) -> int:
    """A whole number of weeks between 21 and 399 days, forward or back."""
    weeks = 3 + int.from_bytes(digest[:4], "big") % 55
    return weeks * 7 * (1 if digest[4] & 1 else -1)


def _digits(token: str, rng: random.Random) -> str:
    """Random digits of the same length; a leading non-zero stays non-zero."""
    if not token:
        return token
    first = str(rng.randrange(1, 10)) if token[0] != "0" else "0"
    return first + "".join(str(rng.randrange(10)) for _ in token[1:])


_ADDRESS_TOKEN = re.compile(r"[0-9]+|[^\W\d_\u4e00-\u9fff]+|[\u4e00-\u9fff]|.", re.DOTALL)
# what says which part of an address a word is: kept, so the surrogate reads as an address
_ADDRESS_KEEP_HAN = frozenset(
    "省市縣县區区鎮镇鄉乡里村路街道巷弄號号樓楼層层室棟栋幢座單单元段之院甲乙丙"
)
_ADDRESS_HAN = "安和平康福明光仁民生新西南北中正德成泰山林田水青"  # one form in both scripts
_ADDRESS_KEEP_WORDS = frozenset(
    str.split(
        "street st road rd avenue ave lane ln close drive dr way boulevard blvd court ct place"
        " pl crescent cres terrace parkway pkwy highway hwy square sq row yard gardens grove"
        " mews flat unit apt apartment suite ste room số tòa lô ngõ ngách hẻm kiệt đường p q"
        " phường quận huyện tp thành phố"
    )
)
_ADDRESS_EN = ("Maple", "Cedar", "Willow", "Linden", "Aspen", "Juniper", "Meadow", "Hazel")
_ADDRESS_VI = ("Hòa", "Bình", "Lạc", "Phúc", "Thịnh", "Quang", "Tân", "Hưng")


def _shape_scramble(text: str, rng: random.Random) -> str:
    """Letters to random letters of the same case, digits to digits, the rest kept."""
    out: list[str] = []
    for ch in text:
        if ch.isdigit() and ch.isascii():
            out.append(str(rng.randrange(10)))
        elif ch.isascii() and ch.isupper():
            out.append(rng.choice("ABCDEFGHJKLMNPRSTUVWXYZ"))
        elif ch.isascii() and ch.islower():
            out.append(rng.choice("abcdefghjkmnprstuvwxyz"))
        else:
            out.append(ch)
    result = "".join(out)
    return result if result != text else result + "x"


def _phone_prefix(original: str, digits: list[str]) -> int:
    """How many leading digits of a phone number to keep (country code, mobile/area prefix)."""
    if original.startswith("+"):
        code = re.match(r"\+([0-9]{1,3})", original)
        size = len(code.group(1)) if code else 1
        return min(size + 1, len(digits) - 4)
    text = "".join(digits)
    if text.startswith("0") or (len(text) == 11 and text.startswith("1")):
        return 2
    return 0


def _registrable(host: str) -> str:
    """The registrable part of a host name (``jira.acme.com.tw`` → ``acme.com.tw``)."""
    labels = host.split(".")
    size = 3 if len(labels) >= 3 and labels[-2] in _TWO_LEVEL_SLD and len(labels[-1]) == 2 else 2
    return ".".join(labels[-size:])


def _suffix(original: str, suffixes: tuple[str, ...]) -> str:
    for suffix in sorted(suffixes, key=len, reverse=True):
        if original.endswith(suffix) and original != suffix:
            return suffix
    return ""


def _prefix(original: str, prefixes: tuple[str, ...]) -> str:
    low = original.casefold()
    for prefix in sorted(prefixes, key=len, reverse=True):
        if low.startswith(prefix.casefold() + " "):
            return original[: len(prefix)]
    return ""


def _word_suffix(original: str, suffixes: tuple[str, ...]) -> str:
    low = original.casefold()
    for suffix in sorted(suffixes, key=len, reverse=True):
        if low.endswith(" " + suffix.casefold()) or low.endswith(", " + suffix.casefold()):
            return original[len(original) - len(suffix) :]
    return ""


def _case_like(original: str, new: str) -> str:
    """``new`` in the letter case of ``original`` (UPPER, lower, or as written)."""
    letters = [c for c in original if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return new.upper()
    if letters and all(c.islower() for c in letters):
        return new.lower()
    if original[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


def _strip_marks(text: str) -> str:
    """Vietnamese without diacritics (``Nguyễn`` → ``Nguyen``, ``Đ`` → ``D``)."""
    text = text.replace("đ", "d").replace("Đ", "D")
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if not unicodedata.combining(c))
    )


def _ascii_word(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower()) or "user"
