"""What is distinctive in an original, found by word frequency and shape, not by recognising a
kind of identifier: names nobody listed in a glossary, and whether a shared run of text says
anything only the original says.

- **Name-like terms.** A Latin-script word written with a capital inside a sentence (or at its
  start, when the text never writes it in lower case) that is not common in English or in
  Vietnamese (``ZIPF_NAME`` on wordfreq's Zipf scale: 3 is once per million words), with the
  capitalised words beside it (``Renee Lindqvist``, ``Smart Reorder Nudge``); two or more
  capitalised Vietnamese syllables inside a sentence (``Hòa Phong``, ``Đỗ Hà My``); a Han
  name: one of the common Chinese family names followed by two characters that no common
  word begins with (``林冠宇``, ``陈柏翰``); and a Han business name: two rare characters
  before the trade it names (``旭馳`` of ``旭馳租車``). ``overlap`` then compares each in
  every fold it has for names: Pinyin and Wade–Giles, homophones, Traditional and Simplified,
  spaced, zero-width, without diacritics, digits for letters.
- **Rare runs.** A run of text shared with the original counts when it holds a word that is
  not common (below ``ZIPF_RARE``), or when it is long (``LONG_RUN`` tokens): "can you confirm
  you've received it" is how anyone writes, not the original's.

Common words never leak, so an honest rewrite in the same language and register passes. What
can still pass: a fact paraphrased in entirely new words, and a short run of ordinary words.

The frequencies are wordfreq's and the Chinese segmentation jieba's (the ``privacy`` extra).
Their authors no longer update them; their data is still the best open frequency data for
these languages, and caseforge pins the versions it was measured with.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any

from caseforge.errors import EnvError
from caseforge.privacy.fold import FULL, TRADE_WORDS_CJK, VI_FAMILY, WIDTH, strip_marks
from caseforge.privacy.patterns.contact import MESSAGING_APPS

ZIPF_NAME = 3.5  # a capitalised word below this is a name, not a word (Medina 3.3, Carlos 3.9)
ZIPF_RARE = 2.5  # a Latin word in a shared run below this is the original's
ZIPF_RARE_HAN = 2.0  # a Chinese word in a shared run below this (阈值 is, 卸货 and 私聊 are not)
ZIPF_HAN_NAME = 3.0  # a business's distinctive part: two characters rare together (旭驰, 云栖)
ZIPF_COMMON = 4.0  # a word this common is not part of a name standing alone (余额 of 余额约)
ZIPF_HAN_RUN_NAME = 2.7  # a family name and two characters, rare together (林冠宇 1.5)
MIN_UNKNOWN = 5  # letters of a lower-case word no dictionary has before it is distinctive
LONG_RUN = 20  # a shared run this long is a copied passage, whatever its words

# The 100 most common Chinese family names (Simplified), which cover most people.
SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何林高罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程"
    "苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛"
    "郝龚邵万钱严覃武戴莫孔向汤温赖庄柯蔡"
)
# Characters that make a grammatical word, never part of a given name.
_FUNCTION = frozenset("的了是在我你他她它们这那说和还有就也都要会把被给跟让吗呢吧啊嗯哦")
_FUNCTION |= frozenset("到去来上下个")

# Names every register writes: the messaging apps and workplace tools a chat mentions.
_REGISTER = frozenset(
    (
        *MESSAGING_APPS,
        *("slack", "teams", "zoom", "jira", "gmail", "outlook", "excel", "notion"),
        # and the calendar's abbreviations, capitalised in every schedule (Fri 14:00, Sept)
        *("mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun", "sept"),
    )
)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_HAN_CLASS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_LATIN_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
_CLITIC = re.compile(r"['’](?:s|d|ve|ll|re|t|m)$", re.IGNORECASE)
_VI_LETTERS = re.compile("[ăâđêôơưĂÂĐÊÔƠƯ\u0300-\u0303\u0309\u0323]")
_SENTENCE_END = frozenset(".!?。！？:：\n>*-•#")


@functools.cache
def _wordfreq() -> tuple[Callable[..., float], dict[str, float]]:
    _jieba()  # wordfreq reads Chinese with jieba: quiet it first
    try:
        import wordfreq
    except ImportError as exc:
        raise EnvError(
            "privacy checks need word frequencies to tell an original's names from common "
            "words: pip install 'caseforge[privacy]'"
        ) from exc
    bare: dict[str, float] = {}
    frequency: Callable[..., float] = wordfreq.zipf_frequency
    for word in wordfreq.iter_wordlist("vi"):  # most common first: keep the first reading
        bare.setdefault(strip_marks(word), frequency(word, "vi"))
    return frequency, bare


@functools.cache
def _jieba() -> Any:
    try:
        import jieba
    except ImportError as exc:
        raise EnvError(
            "privacy checks need jieba to read Chinese words: pip install 'caseforge[privacy]'"
        ) from exc
    jieba.setLogLevel(60)  # its "Building prefix dict" lines are not the user's business
    return jieba


def available() -> bool:
    """Whether the frequency data is installed (the ``privacy`` extra)."""
    try:
        _wordfreq()
        _jieba()
    except EnvError:
        return False
    return True


@functools.lru_cache(maxsize=100_000)
def zipf_latin(word: str) -> float:
    """How common a Latin-script word is, in English or in Vietnamese (also when written
    without its diacritics): the Zipf scale, 0 for a word never seen."""
    frequency, bare = _wordfreq()
    low = word.casefold()
    return max(frequency(low, "en"), frequency(low, "vi"), bare.get(strip_marks(low), 0.0))


@functools.lru_cache(maxsize=100_000)
def zipf_han(word: str) -> float:
    """How common a Chinese word is (Simplified), on the Zipf scale."""
    frequency, _ = _wordfreq()
    return frequency(word, "zh")


# --- name-like terms --------------------------------------------------------------------------


def name_terms(text: str) -> list[tuple[str, str]]:
    """``(class, term)`` for every name-like term of ``text`` (see the module's docstring)."""
    return [*_latin_terms(WIDTH(text)), *_han_terms(FULL(text))]


def compound(word: str) -> bool:
    """Two common English words written as one (rollout, signup, checkin): a word of the
    trade, not a name."""
    halves = range(2, len(word) - 1)
    return any(zipf_latin(word[:i]) >= 4.0 and zipf_latin(word[i:]) >= 4.0 for i in halves)


def _dictionary_compound(word: str) -> bool:
    """Two common words written as one that the dictionary has too (Rollout, Checkout): a
    word of the trade in a title, not a name (Turnbull, Ironside and Coco are names)."""
    if zipf_latin(word) < 3.0:
        return False
    halves = range(3, len(word) - 2)
    return any(zipf_latin(word[:i]) >= 4.5 and zipf_latin(word[i:]) >= 4.5 for i in halves)


def _sentence_start(text: str, start: int) -> bool:
    before = text[:start].rstrip(" \t\"'“‘([")
    return not before or before[-1] in _SENTENCE_END or bool(re.search(r"\d{1,2}:\d{2}$", before))


def _latin_terms(text: str) -> Iterable[tuple[str, str]]:
    # words the text writes in lower case, outside email addresses (which write names so)
    prose = _EMAIL.sub(" ", text)
    lower = {m.group() for m in _LATIN_WORD.finditer(prose) if m.group()[0].islower()}
    for word in lower:  # a word no dictionary has, in a host or a handle: git.qingluan.internal
        unknown = len(word) >= MIN_UNKNOWN and zipf_latin(word) == 0
        if unknown and word not in _REGISTER and not compound(word):
            yield "distinctive", word
    group: list[tuple[str, bool]] = []  # (word, at a sentence start)
    end = -1
    for match in [*_LATIN_WORD.finditer(text), None]:
        word = _CLITIC.sub("", match.group()) if match else ""  # Owner's, RSVP'd: the word
        capital = bool(word) and word[0].isupper() and not (len(word) > 1 and word.isupper())
        if capital and len(word) <= 5 and any(ch.isupper() for ch in word[1:]):
            capital = False  # an abbreviation (DMs, YoY, iOS), not a name
        if capital and match and _label(text, match):
            capital = False
        joined = match is not None and text[end : match.start()] in (" ", "-", " & ")
        if group and not (capital and joined):
            yield from _latin_group(group, lower)
            group = []
        if capital and match:
            group.append((word, _sentence_start(text, match.start())))
            end = match.end()


def _label(text: str, match: re.Match[str]) -> bool:
    """A word of the language before a colon opens a field ("Scribe:", "Attendees:"), not a
    name; a rare one (a speaker, "Kestrel:") is still a name."""
    return text[match.end() : match.end() + 1] in (":", "：") and zipf_latin(match.group()) >= 2.5


def _latin_group(group: list[tuple[str, bool]], lower: set[str]) -> Iterable[tuple[str, str]]:
    words = [w for w, _ in group]
    starts = group[0][1]
    vietnamese = len(words) >= 2 and any(
        _VI_LETTERS.search(unicodedata.normalize("NFD", w)) for w in words
    )
    rare = [
        w
        for i, (w, first) in enumerate(group)
        if len(w) >= 3
        and zipf_latin(w) < ZIPF_NAME
        and w.casefold() not in _REGISTER
        # a word the text also writes in lower case is a word (Smart Proration, and later
        # fix/proration-anchor); one opening a sentence or a line is a name only when no
        # dictionary has it ("Resend it")
        and w.casefold() not in lower
        and not (i == 0 and first and zipf_latin(w) > 0)
        and not _dictionary_compound(w.casefold())
    ]
    if vietnamese and (len(words) >= 3 or not starts):
        family = strip_marks(words[0].casefold()) in VI_FAMILY
        yield ("person" if family else "distinctive"), " ".join(words)
        if len(words) >= 3 and not family:  # Tân Hòa Phong, kept as Hòa Phong
            yield "distinctive", " ".join(words[-2:])
        return
    if not rare:
        return
    if len(words) >= 2:
        yield "distinctive", " ".join(words)
    for word in rare:
        yield "distinctive", word


def _han_terms(folded: str) -> Iterable[tuple[str, str]]:
    trades = sorted({FULL(w) for w in TRADE_WORDS_CJK}, key=len, reverse=True)
    # a name standing alone between spaces, punctuation or line ends: a chat's speaker
    # (刘建国 07:30), an addressee (周敏，你好)
    alone = rf"(?<![{_HAN_CLASS}])[{_HAN_CLASS}]{{2,3}}(?![{_HAN_CLASS}])"
    for match in re.finditer(alone, folded):
        name = match.group()
        if name[0] in SURNAMES and _han_name(name, ZIPF_NAME, common=ZIPF_COMMON):
            yield "person", name
    for run in re.findall(rf"[{_HAN_CLASS}]{{3,}}", folded):
        words = _jieba().lcut(run, HMM=False)
        starts: dict[int, str] = {}  # where each word starts: the word before it
        at, previous = 0, ""
        for word in words:
            starts[at], at, previous = previous, at + len(word), word
        for i, ch in enumerate(run[:-2]):
            name = run[i : i + 3]
            before = starts.get(i)
            # the word before is not a lone character jieba could not join (排 of 排程)
            lone = before is not None and len(before) == 1 and before not in _FUNCTION
            at_words = before is not None and (i + 3 in starts or i + 3 == len(run))
            if ch in SURNAMES and at_words and not lone and _han_name(name, ZIPF_HAN_RUN_NAME):
                yield "person", name
        for trade in trades:
            for m in re.finditer(re.escape(trade), run):
                part = run[max(0, m.start() - 2) : m.start()]
                if len(part) == 2 and not set(part) & _FUNCTION and zipf_han(part) < ZIPF_HAN_NAME:
                    yield "organization", part + trade


def _han_name(name: str, rarer_than: float, common: float = ZIPF_NAME) -> bool:
    """Whether Han characters, the first a family name, are a name: rare together, with no
    grammatical character, and not made of common words (高速费 is 高速 and 费, 余额约 is
    余额 and 约)."""
    if set(name[1:]) & _FUNCTION or zipf_han(name) >= rarer_than:
        return False
    words = _jieba().lcut(name, HMM=False)
    if len(name) == 3 and len(words[0]) == 2 and zipf_han(name[2]) >= 5.0:
        return False  # a word and a character after it: 白班找 is 白班 (day shift) 找 (find)
    return not any(len(w) >= 2 and zipf_han(w) >= common for w in words)


# --- rare runs --------------------------------------------------------------------------------


def rare_word_run(words: tuple[str, ...]) -> bool:
    """Whether a shared run of folded Latin-script words says something uncommon."""
    if len(words) >= LONG_RUN:
        return True
    return any(
        len(w) >= 4
        and w.isalpha()
        and w not in _REGISTER
        and zipf_latin(w) < ZIPF_RARE
        # hasn't, couldn't: the run's words are cut at the apostrophe
        and not (w.endswith("n") and following == "t" and zipf_latin(w + "'t") >= ZIPF_RARE)
        for w, following in zip(words, (*words[1:], ""), strict=True)
    )


def rare_han_run(run: str) -> bool:
    """Whether a shared run of (Simplified, folded) Han characters holds an uncommon word;
    the words at its two ends may be cut, so they do not count."""
    if len(run) >= LONG_RUN:
        return True
    words = _jieba().lcut(run, HMM=False)[1:-1]
    return any(len(w) >= 2 and zipf_han(w) < ZIPF_RARE_HAN for w in words)
