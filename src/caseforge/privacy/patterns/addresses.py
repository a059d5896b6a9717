"""Addresses (class ``address``): where someone lives, works or has a parcel sent, in the way
each language writes one.

- Chinese: a city or county (from the list below) and its district, a road (``…路``, ``…街``,
  ``…大道``, with its ``一段``), its lane and number (``188巷6號``, ``255弄5号``), then the
  building, block, unit, floor and room (``星澜府6幢1502``, ``12樓``, ``2单元601``); a road
  with its number alone too (``文三路478号``), and a floor or block written alone with its
  letter (``B棟7樓``, ``8樓之2``);
- English: a house number, street name and street type (``7 Orchard Close``, ``2250 Mission
  Ct``), with a flat or unit before it, an apartment after it, then the town, the state and
  the ZIP or postcode; a UK postcode alone (``HG2 8PL``);
- Vietnamese: a house number with its slashes, lane and alley (``28 ngõ 112``, ``45/3``), a
  street of two to four capitalised syllables (``Trần Duy Hưng``), then its ward, district or
  town (``P. Bến Thành, Q.1``, ``Cầu Giấy``).

A road's name runs over Han characters that are not words of a sentence (到, 在, 寄, 住 …), so
``寄到文三路478号`` is ``文三路478号``.
"""

from __future__ import annotations

import regex

from caseforge.privacy.patterns.common import (
    HAN_CHARS,
    Match,
    Pattern,
    R,
    Row,
    any_digit,
    window,
)

# cities and counties an address opens with (Taiwan, mainland China): a district after one
_CITIES = (
    "台北", "臺北", "新北", "桃園", "台中", "臺中", "台南", "臺南", "高雄", "基隆", "新竹",
    "苗栗", "彰化", "南投", "雲林", "嘉義", "屏東", "宜蘭", "花蓮", "台東", "臺東", "澎湖",
    "金門", "北京", "上海", "天津", "重庆", "重慶", "广州", "廣州", "深圳", "杭州", "南京",
    "苏州", "蘇州", "成都", "武汉", "西安", "长沙", "郑州", "青岛", "厦门", "宁波", "合肥",
    "福州", "济南", "沈阳", "大连", "哈尔滨", "长春", "昆明", "贵阳", "南宁", "海口", "三亚",
    "珠海", "东莞", "佛山", "无锡", "常州", "南昌", "石家庄", "太原", "兰州", "温州", "绍兴",
    "嘉兴", "金华", "台州", "徐州", "扬州", "烟台", "惠州", "中山", "香港", "澳门",
)  # fmt: skip
# characters a road's name does not hold: the words of the sentence around an address
_NOT_NAME = "到在是寄送往住于於的了和与與及从從去给給把被向至址为為请請我你他她们們就也都"
_HAN_NAME = rf"(?![{_NOT_NAME}])[{HAN_CHARS}0-9一二三四五六七八九十]"
_CITY = "(?:" + "|".join(sorted(_CITIES, key=len, reverse=True)) + r")(?:市|縣|县)?\s?"
_DISTRICT = rf"(?:(?:(?![{_NOT_NAME}])[{HAN_CHARS}]){{1,4}}?(?:區|区|鎮|镇|鄉|乡|新区|新區)\s?)"
_ROAD = rf"{_HAN_NAME}{{1,6}}?(?:大道|大街|路|街)(?:[一二三四五六七八九十]段)?"
_NUMBER = r"(?:\s?[甲乙丙]?\s?[0-9]{1,5}\s?(?:巷|弄|號院|号院|號|号)){1,4}(?:之\s?[0-9]+)?"
_UNIT = (
    rf"(?:\s?(?:{_HAN_NAME}{{2,6}}\s?)?(?:[A-Z]?\s?[0-9]{{0,3}}\s?(?:棟|栋|幢|座|號樓|号楼)\s?)?"
    r"(?:[0-9]{1,2}\s?(?:單元|单元)\s?)?"
    r"(?:[0-9]{1,3}\s?(?:樓|楼|F|層|层)(?:之\s?[0-9]+)?|[A-Z]?[0-9]{3,4}(?:室)?)(?![0-9]))?"
)
_ZH_FULL = (
    rf"(?:{_CITY})?{_DISTRICT}{{0,2}}(?:[{HAN_CHARS}]{{2,3}}[里村]\s?)?{_ROAD}{_NUMBER}{_UNIT}"
)
_ZH_AREA = rf"{_CITY}{_DISTRICT}{{1,2}}\s?(?:{_ROAD})?"
_ZH_FLOOR = r"(?<![0-9A-Za-z])(?:[A-Z]\s?(?:棟|栋|座)\s?[0-9]{1,2}\s?(?:樓|楼)|[0-9]{1,2}\s?(?:樓|楼)之\s?[0-9])"

_STREET_TYPES = (
    "Street|St|Road|Rd|Avenue|Ave|Lane|Ln|Close|Drive|Dr|Way|Boulevard|Blvd|Court|Ct|Place|Pl"
    "|Crescent|Cres|Terrace|Parkway|Pkwy|Highway|Hwy|Square|Sq|Row|Yard|Gardens|Grove|Mews"
)
_UK_POSTCODE = r"[A-Z]{1,2}[0-9][A-Z0-9]? ?[0-9][A-Z]{2}"
_EN = (
    r"(?<![0-9A-Za-z])(?:(?:Flat|Unit|Apt|Apartment|Suite|Room|Ste)\.? ?[A-Z0-9][0-9A-Za-z-]{0,4},?"
    r" (?:[A-Z][a-z]+ ){0,2}(?:[A-Z][a-z]+, )?)?"
    rf"[0-9]{{1,5}}[A-Z]? (?:[A-Z][a-z]+ ){{1,3}}(?:{_STREET_TYPES})\b\.?"
    r"(?: (?:Apt|Unit|Suite|Ste|#)\.? ?[0-9A-Za-z-]{1,5})?"
    r"(?:,? (?:[A-Z][a-z]+)(?: [A-Z][a-z]+){0,2}(?=[,.;\n ]|$))?"
    rf"(?:,? [A-Z]{{2}}(?= [0-9]{{5}}))?(?: [0-9]{{5}}(?:-[0-9]{{4}})?| {_UK_POSTCODE})?{R}"
)
_EN_POSTCODE = rf"(?<![0-9A-Za-z]){_UK_POSTCODE}{R}"

_VI_WORD = r"\p{Lu}\p{Ll}+"
_VI = (
    r"(?<![0-9A-Za-zÀ-ỹ/])(?:(?:[Ss]ố|[Tt]òa|[Ll]ô) [0-9A-Za-zÀ-ỹ-]+,? )?"
    r"[0-9]{1,4}[A-Z]?(?:/[0-9]{1,4}[A-Z]?)*(?: (?:ngõ|ngách|hẻm|kiệt|Ngõ|Hẻm) [0-9]{1,4}(?:/[0-9]+)*)*"
    rf" (?:đường |Đường )?{_VI_WORD}(?: {_VI_WORD}){{1,3}}"
    rf"(?:,? (?:(?:P\.|Phường|phường|Q\.|Quận|quận|Huyện|huyện|TP\.?|Tp\.?|Thành phố|thành phố)"
    rf" ?(?:[0-9]{{1,2}}|{_VI_WORD}(?: {_VI_WORD}){{0,2}})|{_VI_WORD}(?: {_VI_WORD}){{0,2}})){{0,3}}"
    r"(?![0-9A-Za-zÀ-ỹ])"
)

TABLE: tuple[Row, ...] = (
    ("address", "address_zh", _ZH_FULL, 0.75, any_digit),
    ("address", "address_zh_area", _ZH_AREA, 0.7, lambda text: "市" in text or "縣" in text),
    ("address", "address_zh_floor", _ZH_FLOOR, 0.6, any_digit),
    ("address", "address_en", _EN, 0.75, any_digit),
    ("address", "address_uk_postcode", _EN_POSTCODE, 0.6, any_digit),
    ("address", "address_vi", _VI, 0.7, any_digit),
)


def check(
    pattern: Pattern, text: str, start: int, end: int, match: Match | None = None
) -> float | None:
    """Checks after matching an address; the score to keep it with, or ``None``."""
    value = text[start:end]
    if pattern.name == "address_vi" and value.split(" ", 1)[0].isdigit():
        # "3 Nguyễn Văn An" may be a count of people: a street needs a comma part, a lane, a
        # house number of two digits, or a word of place before it (tới, ở, số, địa chỉ …)
        plain = not any(m in value for m in (",", "ngõ", "hẻm", "ngách", "kiệt", "Ngõ", "Hẻm"))
        if plain and int(value.split(" ", 1)[0]) < 10:
            before = window(text, start, end).split("\x00")[0].split()
            if not (before and before[-1] in _VI_PLACE_WORDS):
                return None
    return pattern.score


_VI_PLACE_WORDS = frozenset(
    ("tới", "đến", "ở", "tại", "số", "chỉ", "giao", "gửi", "nhà", "đường", "về", "qua", "address")
)


_AREA_PREFIX = regex.compile(rf"^(?:{_CITY})?{_DISTRICT}{{0,2}}(?:[{HAN_CHARS}]{{2,3}}[里村]\s?)?")
_ROAD_ONLY = regex.compile(_ROAD)
_PART_ZH = regex.compile(rf"{_ROAD}(?:{_NUMBER})?")
_PART_ZH_BUILDING = regex.compile(
    rf"{_HAN_NAME}{{2,6}}?(?:花园|花園|公寓|大厦|大廈|府|苑|園區|园区|广场|廣場|中心)"
)
_PART_EN = regex.compile(
    rf"(?:[0-9]{{1,5}}[A-Z]? )?(?:[A-Z][a-z]+ ){{1,3}}(?:{_STREET_TYPES})\b|{_UK_POSTCODE}"
    r"|(?<=, )[A-Z][a-z]{3,}(?: [A-Z][a-z]+)?(?=,| [A-Z]{1,2}[0-9]| [A-Z]{2} [0-9]|$)"
)
_PART_VI = regex.compile(
    rf"(?:[0-9]{{1,4}}[A-Z]?(?:/[0-9]{{1,4}})* )?{_VI_WORD}(?: {_VI_WORD}){{1,3}}"
)


def address_parts(address: str) -> list[str]:
    """The parts of an address a rewrite may keep alone: its road with or without the number
    (``玉林北路17号``, ``玉林北路``), its building (``蔚蓝公寓``), its street (``7 Orchard
    Close``, ``Orchard Close``), postcode (``HG2 8PL``) and town (``Harrogate``), and a
    Vietnamese street with or without its number (``Trần Duy Hưng``)."""
    parts: set[str] = set()
    local = _AREA_PREFIX.sub("", address)  # 玉林北路 17 号 of 成都市武侯区玉林北路 17 号
    parts.update(m.group() for m in _ROAD_ONLY.finditer(local))
    for rx in (_PART_ZH, _PART_ZH_BUILDING, _PART_EN, _PART_VI):
        for match in rx.finditer(local):
            part = match.group().strip()
            parts.add(part)
            number = regex.match(r"[0-9]+[A-Z]?(?:/[0-9]+)* ", part)
            if number and len(part) - number.end() >= 6:
                parts.add(part[number.end() :])  # the street without its number
    return sorted(p for p in parts if p != address)
