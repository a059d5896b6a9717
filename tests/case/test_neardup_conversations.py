"""Near-duplicates over conversations: a conversation case is compared by what its user says,
not by its input (which every conversation of a suite tends to share), and `validate` prints
at most one screen of near-duplicate pairs, counting the rest."""

from __future__ import annotations

import json
import random
from pathlib import Path

from typer.testing import CliRunner

from caseforge.case.model import Case
from caseforge.case.validate import NEAR_DUPLICATES_SHOWN, case_text
from caseforge.cli import app

runner = CliRunner()
SCREEN = 24  # lines of a terminal

# Fictional customers, things and places for the conversations.
NAMES = ["Ilse Varga", "Tomas Quill", "Mirela Dantu", "Oskar Pell", "Juno Abara",
         "Rafe Lindqvist", "Sunniva Orr", "Bao Trinh", "Calla Moreau", "Dag Ekholm",
         "Perpetua Sole", "Wim Hasselt"]  # fmt: skip
THINGS = ["walnut desk lamp", "linen duvet cover", "cast-iron skillet", "trail running shoes",
          "espresso grinder", "wool throw blanket", "standing desk frame", "ceramic planter set",
          "noise-cancelling headset", "bamboo cutting board", "leather messenger bag",
          "cordless drill kit"]  # fmt: skip
TOWNS = ["Eastbridge", "Morrow Falls", "Kettleby", "Port Alder", "Wrenfield", "Saltmarsh"]
OPENERS = [
    "Hi, my {thing} arrived with a cracked corner and I would like a replacement.",
    "Hello! I ordered a {thing} two weeks ago and the tracking has not moved since {town}.",
    "Can I change the delivery address of my {thing} order to my office in {town}?",
    "I was charged twice for the {thing}, please look at my last statement.",
    "My gift card balance disappeared after I bought the {thing}; what happened?",
    "Is the {thing} covered by the two-year warranty if the hinge snapped?",
    "I want to return the {thing} because the colour looks nothing like the photos.",
    "Please cancel the {thing} I ordered this morning, I bought it by mistake.",
    "The {thing} was delivered to my neighbour in {town} instead of to me.",
    "Could you split my order so the {thing} ships now and the rest later?",
    "Why does my account say the {thing} is backordered when the site said in stock?",
    "I would like to upgrade my {thing} order to express shipping for the weekend.",
]
FOLLOW_UPS = [
    "My name is {name}, the order was placed from {town}.",
    "Sure, the email on the account belongs to {name}.",
    "It was paid with the card ending in {digits}.",
    "I can send photos of the damage tonight if that helps.",
    "Yes please, refund it to the original payment method.",
    "No, I would rather keep the order and get store credit.",
    "The order number should be on the receipt, it ends in {digits}.",
    "That works for me, thank you for sorting it out so quickly.",
]


def conversation_case(rng: random.Random, number: int) -> dict[str, object]:
    thing, town, name = rng.choice(THINGS), rng.choice(TOWNS), rng.choice(NAMES)
    digits = f"{rng.randrange(1000, 9999)}"
    opener = rng.choice(OPENERS).format(thing=thing, town=town)
    follow = [f.format(name=name, town=town, digits=digits) for f in rng.sample(FOLLOW_UPS, 2)]
    case: dict[str, object] = {
        "id": f"chat-{number:03d}",
        "input": {"channel": "chat", "locale": "en-GB"},  # the same for every case
        "expect": {"replies": {"must_include": [digits]}},
        "tags": ["chat"],
        "split": "test" if number % 3 == 0 else "dev",
    }
    if number % 2:
        case["conversation"] = {"max_turns": 4, "script": [{"say": s} for s in [opener, *follow]]}
    else:
        user = {"callable": "sim_users:customer", "instruction": f"{opener} {' '.join(follow)}",
                "facts": {"name": name, "digits": digits}}  # fmt: skip
        case["conversation"] = {"max_turns": 4, "user": user}
    return case


def rephrased(case: dict[str, object], number: int) -> dict[str, object]:
    """The same conversation, the user's first message a word longer: a near-duplicate."""
    copy = json.loads(json.dumps(case["conversation"]))
    if "script" in copy:
        copy["script"][0]["say"] += " Thanks."
    else:
        copy["user"]["instruction"] += " Thanks."
    return {**case, "id": f"chat-{number:03d}", "conversation": copy}


def write_suite(root: Path, cases: list[dict[str, object]]) -> Path:
    (root / "cases").mkdir(parents=True)
    (root / "caseforge.yaml").write_text("name: chats\nagent: {callable: 'agent:run'}\n")
    with (root / "cases" / "chats.jsonl").open("w", encoding="utf-8") as out:
        for case in cases:
            out.write(json.dumps(case, ensure_ascii=False) + "\n")
    return root


def test_a_300_case_conversation_suite_validates_in_one_screen(tmp_path: Path) -> None:
    rng = random.Random(27)
    cases = []
    while len(cases) < 240:  # distinct conversations (a repeated opener and follow-ups aside)
        made = conversation_case(rng, len(cases))
        texts = [case_text(Case.model_validate(c), None) for c in cases]
        if case_text(Case.model_validate(made), None) not in texts:
            cases.append(made)
    planted = {}
    for base in range(0, 120, 2):  # 60 conversations said again, a word changed
        copy = rephrased(cases[base], len(cases))
        planted[copy["id"]] = cases[base]["id"]
        cases.append(copy)
    assert len(cases) == 300
    suite = write_suite(tmp_path / "chats", cases)

    listed = runner.invoke(app, ["validate", str(suite), "--json"])
    assert listed.exit_code == 0, listed.output
    found = json.loads(listed.stdout)["near_duplicates"]
    pairs = {(p["b"], p["a"]) for p in found}
    assert all(p["similarity"] < 1 for p in found if p["b"] in planted)  # said differently
    # every planted pair is found; pairs between unrelated conversations are few (two cases
    # may draw the same opener and follow-ups), never the 44,850 their shared input would give
    assert set(planted.items()) <= pairs
    assert len(pairs) < 2 * len(planted)

    shown = runner.invoke(app, ["validate", str(suite)])
    assert shown.exit_code == 0
    warnings = [line for line in shown.output.splitlines() if line.startswith("warning: ")]
    near = [line for line in warnings if "near-duplicate" in line]
    assert len(near) == NEAR_DUPLICATES_SHOWN + 1 and len(warnings) <= SCREEN
    assert near[-1] == (
        f"warning: and {len(pairs) - NEAR_DUPLICATES_SHOWN} more near-duplicate pairs; "
        "`validate --json` lists them"
    )
    assert all(": conversation: near-duplicate of chat-" in line for line in near[:-1])
    assert f"valid ({len(pairs)} warning(s))" in shown.output


def test_a_conversation_is_compared_by_what_its_user_says() -> None:
    scripted = Case.model_validate(
        {"id": "a", "input": {"channel": "chat"}, "expect": {"x": {"mode": "exact", "value": 1}},
         "conversation": {"max_turns": 2, "script": [{"say": "Where is my lamp?"},
                                                     {"say": "It is ORD-7."}]}}
    )  # fmt: skip
    simulated = Case.model_validate(
        {"id": "b", "input": {"channel": "chat", "ticket": "T-1"},
         "expect": {"x": {"mode": "exact", "value": 1}},
         "conversation": {"max_turns": 2, "user": {"callable": "u:f", "instruction": "Ask.",
                                                   "facts": {"order": "ORD-7", "n": 3}}}}
    )  # fmt: skip
    assert case_text(scripted, None) == "Where is my lamp?\nIt is ORD-7."
    assert case_text(simulated, None) == "Ask.\nORD-7"
    assert case_text(simulated, ["ticket"]) == "T-1\nAsk.\nORD-7"  # named fields join it
    single = Case.model_validate(
        {"id": "c", "input": {"ticket": "Lamp broke", "meta": {"tags": ["x"]}},
         "expect": {"x": {"mode": "exact", "value": 1}}}
    )  # fmt: skip
    assert case_text(single, None) == "Lamp broke\nx"
