"""Where the test suite's time goes: per file, by kind of work, and the
slowest tests, as the markdown of tests/README.md.

    X2_TEST_TIMING=build/timing .venv/bin/python -m pytest -n 2 --dist loadgroup \\
        --junitxml=build/timing/junit.xml
    python tools/test_times.py build/timing [--wall SECONDS]

Test times come from the JUnit file (setup, call and teardown of each test);
kinds from tests/timing_plugin.py (one file per xdist worker). With xdist the
per-file sums add up the time of both workers, so they exceed the wall time.
"""
from __future__ import annotations

import argparse
import json
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

KINDS = ("model building", "conversion", "checking", "CLI subprocesses")


def test_rows(junit: Path) -> list[tuple[str, str, float, str]]:
    """(file, test, seconds, outcome) for every test case."""
    rows = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        module = case.get("classname", "").split(".")
        file = next((m for m in module if m.startswith("test_")), module[-1]) + ".py"
        outcome = ("failed" if case.find("failure") is not None or case.find("error") is not None
                   else "skipped" if case.find("skipped") is not None else "passed")
        rows.append((file, case.get("name", ""), float(case.get("time", 0)), outcome))
    return rows


def tables(directory: Path, wall: float | None) -> str:
    rows = test_rows(directory / "junit.xml")
    total = sum(r[2] for r in rows)
    by_file: dict[str, list] = defaultdict(lambda: [0, 0.0])
    for file, _, seconds, _ in rows:
        by_file[file][0] += 1
        by_file[file][1] += seconds
    outcomes = defaultdict(int)
    for row in rows:
        outcomes[row[3]] += 1
    lines = [f"{len(rows)} tests ({', '.join(f'{n} {k}' for k, n in sorted(outcomes.items()))}); "
             f"test time {total:.0f} s summed over the workers"
             + (f", {wall:.0f} s wall time" if wall else "") + ".", "",
             "| file | tests | seconds | share |", "|---|---:|---:|---:|"]
    for file, (count, seconds) in sorted(by_file.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"| {file} | {count} | {seconds:.1f} | {100 * seconds / total:.1f}% |")
    kinds = [json.loads(p.read_text()) for p in sorted(directory.glob("kinds-*.json"))]
    if any(k["worker"] != "main" for k in kinds):
        kinds = [k for k in kinds if k["worker"] != "main"]   # the xdist controller runs no test
    if kinds:
        session = sum(k["session_s"] for k in kinds)
        lines += ["", "| kind of work | seconds | share of the workers' session time | calls |",
                  "|---|---:|---:|---:|"]
        spent_all = 0.0
        for kind in KINDS:
            spent = sum(k["spent_s"].get(kind, 0.0) for k in kinds)
            calls = sum(k["counts"].get(kind, 0) for k in kinds)
            spent_all += spent
            lines.append(f"| {kind} | {spent:.1f} | {100 * spent / session:.1f}% | {calls} |")
        rest = session - spent_all
        lines.append(f"| everything else (tests' own work, in-process framework runs) | "
                     f"{rest:.1f} | {100 * rest / session:.1f}% | |")
        started = sum(k["counts"].get("framework start-up", 0) for k in kinds)
        lines.append(f"| warm framework workers started (their start-up is inside the "
                     f"conversions and checks above) | | | {started} |")
    lines += ["", "Slowest 15 tests:", "", "| test | seconds |", "|---|---:|"]
    for file, name, seconds, _ in sorted(rows, key=lambda r: -r[2])[:15]:
        lines.append(f"| {file}::{name} | {seconds:.1f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--wall", type=float, help="the run's wall time in seconds")
    args = parser.parse_args(argv)
    print(tables(args.directory, args.wall))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
