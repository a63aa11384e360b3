"""Run the fuzz suites longer than CI does and record the counts per public function.

Run on purpose (not in the test suite)::

    python benches/fuzz_report.py [--examples 300] [--rust-cases 20000] [--fixed]

- The Python suite (``tests/test_fuzz.py``): every public function and estimator of
  privtab, each call in a memory- and time-limited child process, with ``--examples``
  hypothesis examples per function and property (CI runs 80). Fresh random examples
  unless ``--fixed`` (then CI's derandomized ones).
- The Rust property targets (``rust/privtab-core/tests/properties.rs``: the mixed-radix
  encoder and decoder, the thresholded histogram sampler, the maximal-set miner and the
  transaction parser) for ``--rust-cases`` cases each (CI runs 1000), in a release
  build; ``--rust-cases 0`` skips them.

Writes ``benches/results/fuzz.md``: per function, the calls with malformed input and
with odd layouts, how many distinct malformations or layouts they covered, and whether
the property held; per Rust target, its calls, answers and refusals.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benches" / "results"
RUST_LINE = re.compile(
    r"fuzz target (?P<name>\S+): (?P<calls>\d+) calls \((?P<cases>\d+) cases\), "
    r"(?P<answered>\d+) answered, (?P<refused>\d+) refused"
)


def run_python(examples: int, fixed: bool) -> tuple[list[dict], dict[str, str], float]:
    """Run tests/test_fuzz.py; return its counts, each test's outcome and the seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        counts, junit = Path(tmp) / "counts.json", Path(tmp) / "junit.xml"
        env = dict(os.environ, PRIVTAB_FUZZ_EXAMPLES=str(examples))
        env["PRIVTAB_FUZZ_COUNTS"] = str(counts)
        env.pop("PRIVTAB_FUZZ_RANDOM", None)
        if not fixed:
            env["PRIVTAB_FUZZ_RANDOM"] = "1"
        command = [
            sys.executable,
            "-m",
            "pytest",
            "tests/test_fuzz.py",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--junitxml={junit}",
        ]
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, env=env, check=False)
        elapsed = time.perf_counter() - start
        rows = json.loads(counts.read_text()) if counts.exists() else []
        outcomes = {}
        for case in ET.parse(junit).getroot().iter("testcase"):
            failed = case.find("failure") is not None or case.find("error") is not None
            outcomes[case.get("name", "")] = "FAILED" if failed else "passed"
    return rows, outcomes, elapsed


def run_rust(cases: int) -> tuple[list[dict], str, float]:
    """Run the Rust property targets in release mode; return their lines and outcome."""
    env = dict(os.environ, PROPTEST_CASES=str(cases), PRIVTAB_FUZZ_RANDOM="1")
    command = [
        "cargo",
        "test",
        "-p",
        "privtab-core",
        "--release",
        "--test",
        "properties",
        "--",
        "--nocapture",
    ]
    start = time.perf_counter()
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - start
    rows = [m.groupdict() for m in RUST_LINE.finditer(done.stderr)]
    return rows, "passed" if done.returncode == 0 else "FAILED", elapsed


def python_table(rows: list[dict], outcomes: dict[str, str]) -> list[str]:
    by_target: dict[str, dict[str, dict]] = defaultdict(dict)
    for row in rows:
        by_target[row["target"]][row["property"]] = row
    lines = [
        "| function | malformed calls | malformations | layout calls | layouts | result |",
        "|---|---:|---:|---:|---:|---|",
    ]
    total = defaultdict(int)
    for name in sorted(by_target, key=str.lower):
        props = by_target[name]
        bad, odd = props.get("malformed", {}), props.get("layouts", {})
        results = {
            outcomes.get(f"test_{test}[{name}]")
            for test in (
                "malformed_input_raises_a_clear_error",
                "odd_layouts_give_the_same_answer",
            )
        } - {None}
        result = "FAILED" if "FAILED" in results else "passed"
        lines.append(
            f"| `{name}` | {bad.get('calls', 0):,} | {bad.get('kinds', 0)} | "
            f"{odd.get('calls', 0):,} | {odd.get('kinds', 0) or '–'} | {result} |"
        )
        total["bad"] += bad.get("calls", 0)
        total["odd"] += odd.get("calls", 0)
    lines.append(f"| **total** | {total['bad']:,} | | {total['odd']:,} | | |")
    return lines


def main(examples: int, rust_cases: int, fixed: bool) -> None:
    rows, outcomes, seconds = run_python(examples, fixed)
    failed = sorted(name for name, result in outcomes.items() if result == "FAILED")
    out = [
        "# Fuzzing: counts per public function",
        "",
        f"`python benches/fuzz_report.py --examples {examples} --rust-cases "
        f"{rust_cases}{' --fixed' if fixed else ''}`; {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}.",
        "",
        "## privtab's Python API (`tests/test_fuzz.py`)",
        "",
        f"{examples} hypothesis examples per function and property "
        f"({'derandomized, as in CI' if fixed else 'fresh random examples'}), each call in "
        "a child process limited in memory (RLIMIT_AS) and time. *Malformed*: the call "
        "must raise a ValueError or TypeError naming the argument (odd-but-valid input may "
        "answer instead); *layouts*: Fortran-ordered, big-endian, read-only, strided, "
        "list, pandas, polars (and sparse, pandas categorical where they apply) input "
        "must give the same answer as the C-contiguous array. The columns count calls "
        "and distinct malformations or layouts tried.",
        "",
        *python_table(rows, outcomes),
        "",
        f"{len(outcomes)} tests, {len(failed)} failed, in {seconds:.0f} s.",
    ]
    if failed:
        out += ["", "Failed: " + ", ".join(f"`{name}`" for name in failed) + "."]
    if rust_cases:
        rust_rows, rust_result, rust_seconds = run_rust(rust_cases)
        out += [
            "",
            "## privtab-core property targets (`rust/privtab-core/tests/properties.rs`)",
            "",
            f"proptest, {rust_cases} cases per target (fresh seed), release build: "
            "arbitrary and malformed input must give `Ok` agreeing with a reference, or "
            "an `Err`, never a panic. Calls include shrinking.",
            "",
            "| target | calls | answered | refused (Err) |",
            "|---|---:|---:|---:|",
            *(
                f"| `{r['name']}` | {int(r['calls']):,} | {int(r['answered']):,} | "
                f"{int(r['refused']):,} |"
                for r in sorted(rust_rows, key=lambda r: r["name"])
            ),
            "",
            f"Result: {rust_result}, in {rust_seconds:.0f} s (build included).",
        ]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "fuzz.md").write_text("\n".join(out) + "\n", encoding="utf-8")
    print("\n".join(out))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--rust-cases", type=int, default=20_000)
    parser.add_argument("--fixed", action="store_true")
    arguments = parser.parse_args()
    main(arguments.examples, arguments.rust_cases, arguments.fixed)
