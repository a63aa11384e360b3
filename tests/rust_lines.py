"""Production lines of the Rust crates and the share of the bindings (issue 11's measure).

A production line is a non-blank line that is not a comment (``//``, ``///``, ``//!`` or a
``/* */`` block) and lies outside an item marked ``#[cfg(test)]`` (an inline ``mod tests {}``,
a ``mod tests;`` file such as ``partition/tests.rs``, or a test-only function). Integration
tests (``rust/*/tests``) are outside ``src`` and not counted.

Usage: python tests/rust_lines.py
"""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
ITEM_MOD = re.compile(r"(pub(\([^)]*\))?\s+)?mod\s+(\w+)\s*;")


def code(line):
    """The line without string contents and trailing comment, for brace counting."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split("//")[0]


def skip_item(lines, start):
    """The index after the item that starts at or after ``lines[start]``."""
    depth, opened, j = 0, False, start
    while j < len(lines):
        text = code(lines[j])
        depth += text.count("{") - text.count("}")
        opened = opened or "{" in text
        j += 1
        if (opened and depth <= 0) or (not opened and text.rstrip().endswith(";")):
            break
    return j


def count_file(path, test_files):
    lines = path.read_text().splitlines()
    n, i, in_comment = 0, 0, False
    while i < len(lines):
        stripped = lines[i].strip()
        if in_comment or stripped.startswith("/*"):
            in_comment = "*/" not in stripped
        elif stripped.startswith("#[cfg(test)]"):
            j = i + 1
            while j < len(lines) and (
                not lines[j].strip() or lines[j].strip().startswith(("#[", "//"))
            ):
                j += 1
            declared = ITEM_MOD.match(lines[j].strip()) if j < len(lines) else None
            if declared:
                folder = (
                    path.parent
                    if path.name in ("lib.rs", "mod.rs")
                    else path.with_suffix("")
                )
                test_files.add(folder / f"{declared.group(3)}.rs")
                i = j + 1
            else:
                i = skip_item(lines, j)
            continue
        elif stripped and not stripped.startswith("//"):
            n += 1
        i += 1
    return n


def count(src):
    test_files, totals = set(), {}
    for path in sorted(src.rglob("*.rs")):
        totals[path] = count_file(path, test_files)
    return sum(n for path, n in totals.items() if path not in test_files)


if __name__ == "__main__":
    core = count(ROOT / "rust" / "privtab-core" / "src")
    bindings = count(ROOT / "rust" / "privtab-py" / "src")
    total = core + bindings
    print(f"privtab-core {core}, privtab-py {bindings}, workspace {total}")
    print(f"bindings {100 * bindings / total:.1f} % of the production Rust lines")
