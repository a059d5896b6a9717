"""A stand-in judge for recording this example's calibration offline. It is NOT an LLM.

`caseforge calibrate` measures how far the suite's LLM judge agrees with the human labels in
``labels/``. It records the judge's HTTP exchanges in ``labels/judge-recordings/`` and replays
them, so the calibration can be re-checked in CI without a model. This example ships such
recordings, but they were made against THIS server: a small OpenAI-compatible endpoint
(``POST /v1/chat/completions``, the chat-completions wire format with ``usage``) that
answers the judge's three kinds of request with fixed keyword rules and no model at all:

- facts (``judge.FACTS_TASK``): for each numbered fact, ``contradicted`` when fact and output
  take opposite sides on one of a few notions (refund, duplicate charge, unpaid invoice,
  money already back, prorating, service continuing), decided by a negation word just before
  the notion's keyword (a keyword in a question or a condition is ignored); otherwise
  ``missing`` when a number of the fact (amount, date, seat count, invoice number) is absent
  from the output; otherwise ``conveyed`` when at least 40 % of the fact's wording (Chinese
  character pairs, English words) occurs in the output, else ``missing``;
- rubric (``judge.RUBRIC_TASK``): ``pass`` when the rubric's wording is covered as above;
- pairwise (the position probe): the output conveying more of the rubric's facts wins; a tie
  goes to the output shown first, so tied pairs show up as position flips.

The rules are deliberately crude, so the numbers printed by ``caseforge calibrate`` on this
example show what a *mediocre* judge looks like, not what gpt-4.1-mini (``judge.model`` in
``caseforge.yaml``) would score. With a real endpoint, ``caseforge calibrate --record``
replaces these recordings with the real judge's answers (it always asks the endpoint and
rewrites the recordings of every case it judges).

Usage (stdlib only, any Python 3.10+)::

    python tools/standin_judge.py --port 8765          # serves on 127.0.0.1:8765
    OPENAI_BASE_URL=http://127.0.0.1:8765/v1 OPENAI_API_KEY=standin \\
        caseforge calibrate examples/support-refund --record
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import unicodedata
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

NAME = "standin-judge/rules-v1"

# -- text helpers ---------------------------------------------------------------------------

CLAUSE_END = set("，。；：！？,.;:!?\n（）()")
NEGATION_CHARS = set("不没未无非别")
NEGATION_WORDS = {"not", "no", "never", "nothing", "without", "isn't", "wasn't", "won't"}
# A keyword in a clause with one of these is a question or a condition, not a claim.
HEDGES = ("是否", "如果", "假如", "吗", "whether", "if ", "to check")
_STOPWORDS = (
    "the and for was are is a an of to in on at by or it its be as from with that this which "
    "what where any one per because before answers answer says who can"
)
EN_STOPWORDS = set(_STOPWORDS.split())
# Characters too common in support replies to say anything when they pair up.
CJK_FILLER = set("的了是在和也就都会要我您你们这那个一有")


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return re.sub(r"(?<=\d),(?=\d{3})", "", text)  # 2,392 -> 2392


def numbers(text: str) -> set[str]:
    return {n.lstrip("0") or "0" for n in re.findall(r"\d+", text)}


def cjk_pairs(text: str) -> set[str]:
    pairs = set()
    for run in re.findall(r"[\u4e00-\u9fff]+", text):
        for i in range(len(run) - 1):
            pair = run[i : i + 2]
            if not (pair[0] in CJK_FILLER and pair[1] in CJK_FILLER):
                pairs.add(pair)
    return pairs


def stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def en_words(text: str) -> set[str]:
    words = re.findall(r"[a-z][a-z'\-]+", text)
    return {stem(w) for w in words if len(w) >= 3 and w not in EN_STOPWORDS}


def coverage(needle: str, haystack: str) -> tuple[float, int]:
    """The share of the needle's character pairs and words found in the haystack."""
    want = cjk_pairs(needle) | en_words(needle)
    if not want:
        return 1.0, 0
    have = cjk_pairs(haystack) | en_words(haystack)
    return len(want & have) / len(want), len(want)


# -- polarity: which side a text takes on a few notions --------------------------------------

# notion -> (affirming keywords, denying phrases), "|"-separated. An affirming keyword with a
# negation word just before it, in the same clause, counts as denying; a keyword in a clause
# that asks or supposes (HEDGES) counts for neither side.
NOTIONS: dict[str, tuple[str, str]] = {
    "refund": (
        "退款|退回|退还|退给|全额退|可以退|能退|refund",
        "不退|不会退|不能退|没有可退|无法退|不涉及退款|不需要退款|不提交|不会提交|no refund|"
        "nothing to refund",
    ),
    "duplicate": (
        "重复扣款|重复扣费|扣了两次|扣重|charged twice|double charge|duplicate",
        "没有重复|不是重复|不存在重复|只扣了一次|扣了一次|charged once|no double charge|"
        "not a double charge",
    ),
    "unpaid": (
        "未付|没付|没有付款|还没付|欠费|unpaid|past due|outstanding",
        "已结清|都已支付|没有欠费|没有未付|all paid|fully paid",
    ),
    "money_back": (
        "已退款|已为您退款|已经退回|已经退给|已退回|到账|has been refunded|already refunded",
        "没有退|还没退|钱没有退|目前还没|审批前|待主管审批|仍待|not yet refunded",
    ),
    "prorate": (
        "按天折算|按比例|折算|prorated|pro rata",
        "不按天|不按比例|不折算|按整月|not prorated",
    ),
    "service_on": (
        "可以用到|用到|服务可以|can keep using|until",
        "立即停止|今天停止|服务将在今天停止|stops today|immediately",
    ),
}


def _clause_before(text: str, index: int, width: int = 6) -> str:
    start = index
    while start > 0 and index - start < width and text[start - 1] not in CLAUSE_END:
        start -= 1
    return text[start:index]


def _clause(text: str, index: int) -> str:
    start = end = index
    while start > 0 and text[start - 1] not in CLAUSE_END:
        start -= 1
    while end < len(text) and text[end] not in CLAUSE_END:
        end += 1
    return text[start:end]


def _hedged(text: str, index: int) -> bool:
    clause = _clause(text, index)
    return any(h in clause for h in HEDGES)


def _negated(text: str, index: int) -> bool:
    before = _clause_before(text, index)
    if any(c in NEGATION_CHARS for c in before):
        return True
    words = re.findall(r"[a-z']+", text[max(0, index - 24) : index])
    return any(w in NEGATION_WORDS or w.endswith("n't") for w in words[-3:])


def sides(text: str) -> dict[str, set[str]]:
    """For each notion the text mentions, the sides it takes: '+' affirms, '-' denies."""
    found: dict[str, set[str]] = {}
    for notion, (affirm, deny) in NOTIONS.items():
        taken: set[str] = set()
        denied_spans: list[tuple[int, int]] = []
        for phrase in deny.split("|"):
            for m in re.finditer(re.escape(phrase), text):
                denied_spans.append((m.start(), m.end()))
                if not _hedged(text, m.start()):
                    taken.add("-")
        for phrase in affirm.split("|"):
            for m in re.finditer(re.escape(phrase), text):
                if any(s <= m.start() < e for s, e in denied_spans) or _hedged(text, m.start()):
                    continue
                taken.add("-" if _negated(text, m.start()) else "+")
        if taken:
            found[notion] = taken
    return found


# -- the three kinds of judgement -------------------------------------------------------------

CONVEYED_AT = 0.4


def judge_fact(fact: str, output: str) -> tuple[str, str]:
    f, o = normalize(fact), normalize(output)
    fact_sides, out_sides = sides(f), sides(o)
    for notion, want in fact_sides.items():
        got = out_sides.get(notion)
        if len(want) == 1 and got and len(got) == 1 and got != want:
            return "contradicted", f"the output takes the opposite side on {notion}"
    lacking = sorted(numbers(f) - numbers(o), key=lambda n: (len(n), n))
    if lacking:
        return "missing", f"the output lacks {', '.join(lacking)} from the fact"
    share, size = coverage(f, o)
    if share >= CONVEYED_AT:
        return "conveyed", f"{share:.0%} of the fact's {size} terms found in the output"
    return "missing", f"only {share:.0%} of the fact's {size} terms found in the output"


def judge_rubric(rubric: str, output: str) -> tuple[str, str]:
    share, size = coverage(normalize(rubric), normalize(output))
    verdict = "pass" if share >= CONVEYED_AT else "fail"
    return verdict, f"{share:.0%} of the rubric's {size} terms found in the output"


def judge_pair(rubric: str, first: str, second: str) -> tuple[str, str]:
    _, _, listed = rubric.partition("completely:")
    facts = [f.strip() for f in (listed or rubric).split(";") if f.strip()]

    def score(output: str) -> int:
        return sum(judge_fact(fact, output)[0] == "conveyed" for fact in facts)

    a, b = score(first), score(second)
    if b > a:
        return "second", f"the second output conveys {b} of {len(facts)} facts, the first {a}"
    how = "more" if a > b else "as many"
    return "first", f"the first output conveys {how} facts ({a} vs {b} of {len(facts)})"


# -- reading the judge's messages (caseforge/grade/judge.py) ---------------------------------

TAGGED = re.compile(r"<(agent_output_[0-9a-f]{10}(?:_b)?)>\n(.*?)\n</\1>", re.S)


def answer(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON answer to one judge request."""
    user = next((m for m in messages if m.get("role") == "user"), None)
    text = str((user or {}).get("content") or "")
    outputs = [body for _, body in TAGGED.findall(text)]
    if text.startswith("For each numbered fact") and outputs:
        listed = text.split("Facts:\n", 1)[1].split("\n\nThe request the agent answered", 1)[0]
        entries = []
        for line in listed.splitlines():
            m = re.match(r"(\d+)\. (.*)", line)
            if m:
                verdict, reason = judge_fact(m.group(2), outputs[0])
                entries.append({"index": int(m.group(1)), "verdict": verdict, "reason": reason})
        return {"facts": entries}
    if text.startswith("Decide whether the agent's output meets this rubric") and outputs:
        rubric = text.split("\n", 1)[1].split("\nReturn ", 1)[0]
        verdict, reason = judge_rubric(rubric, outputs[0])
        return {"verdict": verdict, "reason": reason}
    if text.startswith("Which output better meets this rubric:") and len(outputs) == 2:
        rubric = text.split(":", 1)[1].split("\nReturn ", 1)[0].strip()
        winner, reason = judge_pair(rubric, outputs[0], outputs[1])
        return {"winner": winner, "reason": reason}
    raise ValueError("not a caseforge judge request (facts, rubric or pairwise)")


def completion(request: dict[str, Any]) -> dict[str, Any]:
    """A chat-completions response; deterministic, so a re-record writes the same files."""
    messages = request.get("messages") or []
    content = json.dumps(answer(messages), ensure_ascii=False)
    body = json.dumps(request, sort_keys=True, ensure_ascii=False)
    prompt_chars = sum(len(str(m.get("content") or "")) for m in messages)
    # Token counts are estimates (no tokenizer here): about 3 characters a token.
    prompt_tokens, completion_tokens = prompt_chars // 3 + 1, len(content) // 3 + 1
    return {
        "id": "chatcmpl-standin-" + hashlib.sha256(body.encode()).hexdigest()[:16],
        "object": "chat.completion",
        "created": 0,
        "model": NAME,
        "system_fingerprint": NAME,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


# -- the HTTP server ---------------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    quiet = True

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        # No Date/Server headers: the recordings stay byte-identical across re-records.
        self.log_request(status)
        self.send_response_only(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        self._send(status, {"error": {"message": message, "type": "invalid_request_error"}})

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send(200, {"object": "list", "data": [{"id": NAME, "object": "model"}]})
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._error(404, f"no route {self.path}")
            return
        try:
            request = json.loads(raw or b"{}")
            self._send(200, completion(request))
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            self._error(400, f"standin judge: {exc}")

    def log_message(self, format: str, *args: Any) -> None:
        if not self.quiet:
            sys.stderr.write("standin-judge: " + format % args + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--verbose", action="store_true", help="log every request")
    args = parser.parse_args(argv)
    Handler.quiet = not args.verbose
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"standin judge (rules, not an LLM) on http://{args.host}:{args.port}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
