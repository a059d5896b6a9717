"""Small curated pools of fictional names that surrogates are drawn from.

Faker covers people, but its company names parody real brands (``zh_TW``) or read unnaturally
(``vi_VN``), so organisations, projects and features come from these hand-written pools. Every
stem here was made up for caseforge; none is meant to name a real company or product. A name is
built as *stem + the original's own suffix or prefix* (``宏達科技`` → ``青嶼科技``,
``Công ty TNHH An Phát`` → ``Công ty TNHH Sao Mai``), so the shape of the original survives.

Pools are keyed by script family: ``"zh_TW"`` (Traditional), ``"zh_CN"`` (Simplified),
``"vi_VN"`` (Vietnamese) and ``"en_US"`` (Latin script). Entries are written as ``|``-separated
strings to keep the data compact.
"""

from __future__ import annotations

from typing import Final


def _items(text: str) -> tuple[str, ...]:
    """Split a ``|``-separated list, trimming blanks and line breaks."""
    return tuple(item.strip() for item in text.split("|") if item.strip())


def split_words(text: str) -> tuple[str, ...]:
    """Split a white-space separated list of single words."""
    return tuple(text.split())


# --- organisations -------------------------------------------------------------------------

ORG_STEMS: Final[dict[str, tuple[str, ...]]] = {
    "zh_TW": _items(
        "青嶼|禾豐|曜川|澄海|晴岳|嵐橋|朗星|舟嶺|葵原|栩光|沐岩|璞森|霽風|硯田|芊穗|"
        "翊帆|崧野|灣光|湛藍|雲杉|桐溪|翠陌|映禾|鷺港|玖川|望舒|恆溪|拾光|潮見|序嵐"
    ),
    "zh_CN": _items(
        "青屿|禾丰|曜川|澄海|晴岳|岚桥|朗星|舟岭|葵原|栩光|沐岩|璞森|霁风|砚田|芊穗|"
        "翊帆|崧野|湾光|湛蓝|云杉|桐溪|翠陌|映禾|鹭港|玖川|望舒|恒溪|拾光|潮见|序岚"
    ),
    "vi_VN": _items(
        "Sao Mai|Hải Âu|Bình Minh|Thiên Phúc|Lam Sơn|Ngọc Lan|Trường Giang|Phú Khang|"
        "Minh Triết|An Nhiên|Hòa Phong|Tân Lộc|Việt Hưng|Đông Dương|Gia Bảo|Kim Ngân|"
        "Thuận Phát|Phương Nam|Hồng Hà|Trúc Xanh"
    ),
    "en_US": _items(
        "Bluefinch|Harborline|Northpeak|Lumenfield|Quarrystone|Tidewell|Cobaltridge|Fernbrook|"
        "Silverkite|Ambermoor|Driftwood|Larkspur|Pinecrest|Stonegate|Wrenfield|Copperleaf|"
        "Mistvale|Ravensel|Saltmarsh|Brightwater|Oakhollow|Kestrel Bay|Granite Row|Juniper Hill"
    ),
}

# Suffixes and prefixes recognised on an original and kept on its surrogate (longest first).
ORG_SUFFIXES_CJK: Final[tuple[str, ...]] = _items(
    "股份有限公司|有限責任公司|有限责任公司|有限公司|工作室|科技|公司|集團|集团|銀行|银行|"
    "企業|企业|實業|实业|資訊|资讯|數位|数码|電子|电子|國際|国际|物流|餐飲|餐饮|醫院|医院|"
    "商行|電商|电商|文創|文创|建設|建设|生技|保險|保险|證券|证券|網路|网络"
)
ORG_PREFIXES_VI: Final[tuple[str, ...]] = _items(
    "Công ty Cổ phần|Công ty TNHH|Công ty CP|Công ty|Tập đoàn|Ngân hàng|Cửa hàng|Chuỗi|Nhà hàng"
)
ORG_SUFFIXES_EN: Final[tuple[str, ...]] = _items(
    "Pte. Ltd.|Co., Ltd.|Corporation|Technologies|Holdings|Systems|Software|Partners|Limited|"
    "Group|Labs|Corp.|Corp|Inc.|Inc|Ltd.|Ltd|LLC|GmbH|Co.|Co|Bank|Studio|Retail|Logistics|"
    "Foods|Trading|Traders|Media|Pharma|Motors|Energy|Health|Insurance|Capital|Consulting|"
    "Solutions|Networks|Games|Cloud|Payments|Supply|Apparel|Airlines|Hotels|Markets"
)

# --- projects ------------------------------------------------------------------------------

PROJECT_STEMS: Final[dict[str, tuple[str, ...]]] = {
    "zh_TW": _items(
        "晨曦|北極星|青鳥|極光|潮汐|琥珀|白鷺|松果|螢火|遠帆|磐石|候鳥|星圖|流螢|雪松|燈塔|"
        "海鷗|穀雨|驚蟄|鯨落"
    ),
    "zh_CN": _items(
        "晨曦|北极星|青鸟|极光|潮汐|琥珀|白鹭|松果|萤火|远帆|磐石|候鸟|星图|流萤|雪松|灯塔|"
        "海鸥|谷雨|惊蛰|鲸落"
    ),
    "vi_VN": _items(
        "Sao Băng|Cánh Diều|Hải Đăng|Mùa Gặt|Bình Minh|Sông Hồng|Trăng Non|Lá Chắn|Thác Bạc|"
        "Đỉnh Núi|Mây Trắng|Hoa Sen|Cầu Vồng|Gió Nam"
    ),
    "en_US": _items(
        "Heron|Juniper|Basalt|Marlin|Tundra|Saffron|Cormorant|Quartz|Bramble|Halcyon|Meridian|"
        "Foxglove|Nimbus|Kestrel|Obsidian|Willow|Cinder|Larch|Puffin|Sequoia"
    ),
}
PROJECT_SUFFIXES_CJK: Final[tuple[str, ...]] = _items(
    "專案計畫|計畫|計劃|计划|專案|专案|項目|项目|方案|工程|行動|行动"
)
PROJECT_PREFIXES_VI: Final[tuple[str, ...]] = _items("Dự án|dự án|Chiến dịch|Kế hoạch")
PROJECT_AFFIXES_EN: Final[tuple[str, ...]] = _items("Project|Operation|Initiative|Program")

# --- unreleased features and products ------------------------------------------------------

FEATURE_STEMS: Final[dict[str, tuple[str, ...]]] = {
    "zh_TW": _items(
        "快選|集點|團購|預約|補貨|比價|試穿|分期|禮卡|到店|秒退|訂閱|揪團|點數|快遞|問答|"
        "換購|續約|推播|排程"
    ),
    "zh_CN": _items(
        "快选|集点|团购|预约|补货|比价|试穿|分期|礼卡|到店|秒退|订阅|拼团|积分|快递|问答|"
        "换购|续约|推送|排程"
    ),
    "vi_VN": _items(
        "Mua Nhanh|Tích Điểm|Đặt Trước|Giỏ Quà|Trả Góp|Đổi Trả Nhanh|Săn Deal|Gói Tháng|"
        "Ví Quà|Nhắc Lịch|Giao Tận Nơi|Hỏi Đáp"
    ),
    "en_US": _items(
        "Smart Bundles|Quick Reorder|Price Watch|Gift Wallet|Split Pay|Pickup Slots|"
        "Loyalty Boost|Instant Returns|Saved Carts|Restock Alerts|Order Notes|Group Deals|"
        "Trial Pass|Auto Renew|Shelf Scan|Wish Lists"
    ),
}
FEATURE_SUFFIXES_CJK: Final[tuple[str, ...]] = _items(
    "模組|模块|功能|系統|系统|服務|服务|平台|中心|助手|機制|机制|頁面|页面|方案|工具"
)
FEATURE_PREFIXES_VI: Final[tuple[str, ...]] = _items("Tính năng|tính năng|Mô-đun|mô-đun")
FEATURE_SUFFIXES_EN: Final[tuple[str, ...]] = _items(
    "Module|Feature|Service|Engine|Hub|Center|Mode|Beta|Plus|Pro"
)

# --- words for branches, error codes, URL paths --------------------------------------------

# Plausible product and engineering nouns used to rebuild branch names, URL paths and codes.
WORDS: Final[tuple[str, ...]] = _items(
    "cart|voucher|invoice|refund|banner|profile|report|badge|course|lesson|order|wallet|"
    "points|catalog|review|quota|session|schedule|upload|avatar|reminder|campaign|inventory|"
    "booking|receipt|coupon|ledger|payout|member|ticket|survey|gallery|listing|bundle|shelf|"
    "parcel|locker|tariff|rebate|credit|pantry|roster|venue|pickup|digest|mailer|tracker|"
    "ranking|widget|tile|layout|queue|batch|import|export|billing|pricing|checkout|account|"
    "label|slot|route|vendor|stock|lane|draft|quote|tax|fee|plan|seat|gift|promo|level|"
    "score|group|media|note|tag|topic|feed|post|page|card|item|unit|zone|fleet|depot"
)

# Words that identify nobody; kept as they are inside branches, error codes and URL paths.
GENERIC_WORDS: Final[frozenset[str]] = frozenset(
    _items(
        # error reasons
        "err|error|errors|timeout|timed|limit|limits|invalid|denied|not|found|failed|fail|"
        "failure|expired|unknown|internal|conflict|forbidden|unauthorized|unavailable|exceeded|"
        "insufficient|rejected|missing|duplicate|locked|overflow|declined|retry|bad|request|"
        "too|many|max|min|null|empty|code|status|"
        # branch verbs and housekeeping
        "fix|add|update|remove|bug|hotfix|refactor|cleanup|support|config|test|tests|docs|new|"
        "old|the|and|for|to|of|in|on|v|wip|temp|tmp|patch|release|main|master|develop|dev|"
        "staging|prod|rc|beta|alpha|"
        # URL structure
        "http|https|www|api|apis|browse|issues|issue|pull|pulls|merge|requests|commit|commits|"
        "blob|tree|src|wiki|doc|projects|project|tickets|view|edit|id|page|pages|display|"
        "spaces|sites|index|html|htm|php|aspx|json|pdf|dashboard|board|boards|sprint|sprints|"
        "jira|confluence|git|gitlab|github|app|apps|admin|console|portal|help|login|auth|sso|"
        "static|cdn|files|file|download|downloads|raw|d|s|q|p|a|b|c|t|u|en|zh|vi|tw|cn|vn|"
        "lang|ref|tab|mail|m|grafana|kibana|sentry|jenkins|ci|builds|build|runs|actions|job|"
        "jobs|logs|log|alerts|alert|settings|users|user|orgs|org|teams|team|search|query|"
        "filter|sort|offset|rest|graphql|web|v1|v2|v3|v4"
    )
)

# Subdomain labels that identify nobody and are kept on surrogate hosts.
GENERIC_HOST_LABELS: Final[frozenset[str]] = frozenset(
    _items(
        "www|api|jira|wiki|git|gitlab|docs|app|portal|admin|mail|dev|staging|test|cdn|static|"
        "status|support|help|console|dashboard|grafana|kibana|sentry|confluence|ci|jenkins|m|"
        "beta|auth|login|id|sso|shop|store|pay|checkout|intranet"
    )
)

# Free-mail domains: a surrogate address on one of these goes to a plain reserved domain.
FREEMAIL_DOMAINS: Final[frozenset[str]] = frozenset(
    _items(
        "gmail.com|yahoo.com|yahoo.com.tw|hotmail.com|outlook.com|live.com|icloud.com|qq.com|"
        "163.com|126.com|sina.com|foxmail.com|msn.com|proton.me|protonmail.com|hinet.net|"
        "msa.hinet.net|yahoo.com.vn"
    )
)

# Local parts of e-mail addresses that name a role, not a person; kept.
ROLE_MAILBOXES: Final[frozenset[str]] = frozenset(
    _items(
        "support|admin|noreply|no-reply|info|billing|sales|help|service|contact|ops|dev|team|"
        "hr|it|cs|finance|security|hello|feedback|alerts|notifications|postmaster|abuse|"
        "webmaster|careers"
    )
)
