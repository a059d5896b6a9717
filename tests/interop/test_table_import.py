"""`caseforge import table`: a table in each format (CSV, JSONL, Parquet, a Hugging Face
dataset saved to disk, the last two written here with pyarrow as `datasets` lays them out),
expectations from columns and from the suite's oracle, and the mistakes a user makes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from caseforge.interop.records import read_records
from tests.interop.helpers import DATA, cli, files_of

yaml = YAML(typ="safe")
ROWS = [json.loads(line) for line in (DATA / "tickets.jsonl").read_text().splitlines()]
OPTIONS = [
    "--map", "input.ticket=body", "--map", "input.customer.id=customer", "--map", "tags=team",
    "--id", "ticket_id", "--expect", "category=exact:label", "--expect",
    "refund_usd=number:amount", "--expect", "reply=must_include:keywords",
]  # fmt: skip


def write_parquet(path: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(ROWS), path)
    return path


def write_saved_dataset(folder: Path) -> Path:
    """What `datasets.Dataset.save_to_disk` writes: the rows as an Arrow IPC stream, with
    dataset_info.json and state.json beside it (written by hand: no `datasets` package)."""
    import pyarrow as pa

    folder.mkdir()
    table = pa.Table.from_pylist(ROWS)
    name = "data-00000-of-00001.arrow"
    with pa.OSFile(str(folder / name), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    (folder / "dataset_info.json").write_text(
        json.dumps({"description": "fictional tickets", "features": {}}), encoding="utf-8"
    )
    (folder / "state.json").write_text(
        json.dumps({"_data_files": [{"filename": name}], "_fingerprint": "f00d", "_split": None}),
        encoding="utf-8",
    )
    return folder


def case(suite: Path, case_id: str) -> dict[str, object]:
    data = yaml.load((suite / "cases" / f"{case_id}.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("kind", ["csv", "jsonl", "parquet", "saved"])
def test_a_table_in_each_format(tmp_path: Path, kind: str) -> None:
    source = {
        "csv": lambda: DATA / "tickets.csv",
        "jsonl": lambda: DATA / "tickets.jsonl",
        "parquet": lambda: write_parquet(tmp_path / "tickets.parquet"),
        "saved": lambda: write_saved_dataset(tmp_path / "tickets"),
    }[kind]()
    suite = tmp_path / "suite"
    done = cli("import", "table", source, "--out", suite, *OPTIONS)
    assert done.exit_code == 0, done.output
    assert "caseforge validate: valid" in done.output
    first = case(suite, "tickets-t-101")
    assert first["input"] == {
        "ticket": "My Vandoria Rail pass was charged twice this month.",
        "customer": {"id": "C1"},
    }
    assert first["tags"] == ["payments"]
    assert first["expect"] == {
        "category": {"mode": "exact", "value": "billing"},
        "refund_usd": {"mode": "number", "value": 12.5},
        "reply": {"mode": "must_include", "values": ["refund", "charged twice"]},
    }
    assert first["provenance"]["imported_from"]["id"] == "T-101"  # type: ignore[index]
    # An empty cell leaves its check out, and the report says so.
    assert "refund_usd" not in case(suite, "tickets-t-102")["expect"]  # type: ignore[operator]
    assert "not held: refund_usd: column 'amount' is empty: no check" in done.output
    assert cli("validate", suite).exit_code == 0


def test_every_row_is_in_the_report(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    done = cli("import", "table", DATA / "tickets.csv", "--out", suite, "--map",
               "input.ticket=body", "--expect", "category=exact:label")  # fmt: skip
    assert done.exit_code == 0, done.output
    written = (suite / "IMPORT.md").read_text(encoding="utf-8")
    for number, line in enumerate((2, 3, 4), start=1):  # no id column: the row's number
        assert f"line {line} -> cases/tickets-{number}.yaml (new)" in done.output
        assert f"line {line} → `cases/tickets-{number}.yaml` (new)" in written
    # The columns nothing maps are named, and kept.
    assert "columns nothing maps (amount, customer, keywords, team, ticket_id)" in written
    kept = case(suite, "tickets-1")["provenance"]["row"]  # type: ignore[index]
    assert kept == {"amount": "12.5", "customer": "C1", "keywords": "refund;charged twice",
                    "team": "payments", "ticket_id": "T-101"}  # fmt: skip


def test_expectations_from_the_suites_oracle(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    (suite / "cases").mkdir(parents=True)
    (suite / "caseforge.yaml").write_text("name: tickets\noracles: oracles.py\n", encoding="utf-8")
    (suite / "oracles.py").write_text(
        "from caseforge.oracle import oracle\n\n\n"
        "FEES = {'C1': 12.5, 'C2': 0.0}\n\n\n"
        "@oracle('refund_due')\n"
        "def refund_due(input):\n"
        "    return FEES[input['customer']]\n",
        encoding="utf-8",
    )
    done = cli("import", "table", DATA / "tickets.jsonl", "--out", suite,
               "--map", "input.ticket=body", "--map", "input.customer=customer",
               "--id", "ticket_id", "--expect", "refund_usd=number:oracle=refund_due")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert case(suite, "tickets-t-102")["expect"] == {
        "refund_usd": {"mode": "number", "value": 0.0, "oracle": "refund_due", "args": {}}
    }
    assert "refund_usd: number <- oracle refund_due" in done.output
    # An oracle that raises on a row: one line naming the row and the oracle's error.
    done = cli("import", "table", DATA / "tickets.jsonl", "--out", suite,
               "--map", "input.ticket=body", "--id", "ticket_id",
               "--expect", "refund_usd=number:oracle=refund_due")  # fmt: skip
    assert done.exit_code == 1 and "oracle 'refund_due' failed: KeyError('customer')" in done.output
    assert "failed: failed" not in done.output and "Traceback" not in done.output
    assert cli("validate", suite).exit_code == 0  # validate computes it again: no drift
    done = cli("import", "table", DATA / "tickets.jsonl", "--out", suite,
               "--map", "input.ticket=body", "--expect", "x=number:oracle=nope")  # fmt: skip
    assert done.exit_code == 2 and "no oracle 'nope'" in done.output


def test_reimport_and_dry_run(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    argv = ["import", "table", DATA / "tickets.csv", "--out", suite, *OPTIONS]
    assert cli(*argv, "--dry-run").exit_code == 0
    assert not suite.exists()
    assert cli(*argv).exit_code == 0
    before = files_of(suite)
    done = cli(*argv)
    assert done.exit_code == 0 and "3 items: 3 unchanged" in done.output
    assert {k: v for k, v in files_of(suite).items() if k != "IMPORT.md"} == {
        k: v for k, v in before.items() if k != "IMPORT.md"
    }


@pytest.mark.parametrize(
    ("argv", "code", "says"),
    [
        (["--map", "input.ticket=nope"], 2, "no column 'nope'"),
        (["--map", "ticket=body"], 2, "the target is input.NAME"),
        (["--map", "tags=team"], 2, "at least one --map input.NAME"),
        (["--map", "input.t=body", "--expect", "category"], 2, "FIELD=MODE:COLUMN"),
        (["--map", "input.t=body", "--expect", "c=number:label"], 1, ":2: column 'label': "),
        (["--map", "input.t=body", "--expect", "c=exact:label", "--expect", "c=exact:team"], 2,
         "expected twice"),
        (["--map", "input.t=body", "--expect", "c=numbr:label"], 2, "no check mode 'numbr'"),
        (["--map", "input.t=body", "--expect", "x=number:oracle=refund"], 2, "existing suite"),
    ],
)  # fmt: skip
def test_mistakes(tmp_path: Path, argv: list[str], code: int, says: str) -> None:
    done = cli("import", "table", DATA / "tickets.csv", "--out", tmp_path / "suite", *argv)
    assert done.exit_code == code, done.output
    assert says in done.output and "Traceback" not in done.output
    if code == 2:  # a usage mistake is said before anything is written
        assert not (tmp_path / "suite").exists()


def test_bad_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\n[1]\n', encoding="utf-8")
    done = cli("import", "table", bad, "--out", tmp_path / "s", "--map", "input.a=a")
    assert done.exit_code == 1 and f"{bad}:2: expected an object" in done.output
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"not parquet at all")
    done = cli("import", "table", broken, "--out", tmp_path / "s", "--map", "input.a=a")
    assert done.exit_code == 1 and "not a Parquet file" in done.output
    folder = tmp_path / "folder"
    folder.mkdir()
    done = cli("import", "table", folder, "--out", tmp_path / "s", "--map", "input.a=a")
    assert done.exit_code == 2 and "no state.json" in done.output
    assert not (tmp_path / "s").exists()


def test_records_know_where_each_row_is() -> None:
    rows = read_records(DATA / "tickets.csv")
    assert [r.where for r in rows] == ["line 2", "line 3", "line 4"]
    assert rows[0].fields["keywords"] == "refund;charged twice"


def test_a_row_without_an_id_is_known_again_by_what_it_holds_not_where(tmp_path: Path) -> None:
    """Inserting a row above others, or reordering them, leaves each case (and what was
    added to it by hand) with its own row; a row whose content changed is a new case, and
    the old one is listed as no longer in the source."""
    table = tmp_path / "faq.csv"
    table.write_text("q,a\nOpen late?,8pm\nGift cards?,yes\n", encoding="utf-8")
    suite = tmp_path / "suite"
    argv = ["import", "table", table, "--out", suite, "--map", "input.q=q",
            "--expect", "reply=must_include:a"]  # fmt: skip
    assert cli(*argv).exit_code == 0

    def by_question() -> dict[str, dict[str, object]]:
        cases = [yaml.load(p.read_text()) for p in sorted((suite / "cases").glob("*.yaml"))]
        return {c["input"]["q"]: c for c in cases}

    first = by_question()
    late = suite / "cases" / f"{first['Open late?']['id']}.yaml"
    late.write_text(late.read_text() + "note: checked by hand\n", encoding="utf-8")
    table.write_text("q,a\nParking?,no\nGift cards?,yes\nOpen late?,9pm\n", encoding="utf-8")
    done = cli(*argv)
    assert done.exit_code == 0, done.output
    after = by_question()
    assert set(after) == {"Open late?", "Gift cards?", "Parking?"}
    for question in ("Open late?", "Gift cards?"):  # the same case, the source's new value
        assert after[question]["id"] == first[question]["id"]
    assert after["Open late?"]["expect"]["reply"]["values"] == ["9pm"]
    assert after["Open late?"]["note"] == "checked by hand"
    assert after["Parking?"]["id"] not in {c["id"] for c in first.values()}
    # A changed question is a new case; the old one stays, listed.
    table.write_text("q,a\nParking?,no\nGift cards?,yes\nOpen until late?,9pm\n", encoding="utf-8")
    done = cli(*argv)
    assert done.exit_code == 0, done.output
    assert {"Open late?", "Open until late?"} <= set(by_question())
    assert first["Open late?"]["id"] in done.output


def test_a_new_suite_gets_the_gate_rule_init_gives_and_an_existing_one_keeps_its_own(
    tmp_path: Path,
) -> None:
    """The CI step the docs give (`caseforge gate`) needs gate rules: an imported suite has
    init's pass-rate rule, and the report says so; an existing suite's caseforge.yaml is
    never touched."""
    from caseforge.case.load import load_config

    table = tmp_path / "faq.csv"
    table.write_text("q,a\nOpen late?,8pm\n", encoding="utf-8")
    suite = tmp_path / "suite"
    argv = ["import", "table", table, "--out", suite, "--map", "input.q=q"]
    done = cli(*argv)
    assert done.exit_code == 0 and "note: gate: a drop in pass rate" in done.output
    rules = load_config(suite).gate.rules
    assert [(r.metric, r.no_significant_drop) for r in rules] == [("pass_rate", True)]
    config = suite / "caseforge.yaml"
    config.write_text(config.read_text().replace("no_significant_drop: true", "min: 0.5"))
    before = config.read_text()
    done = cli(*argv)
    assert done.exit_code == 0 and "note: gate" not in done.output
    assert config.read_text() == before
