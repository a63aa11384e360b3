"""Checks `rust-version` in the root Cargo.toml (the workspace's MSRV).

No other toolchain can be fetched on the project's machines, so the check is in parts:

1. every dependency in Cargo.lock declares a rust-version no newer than ours;
2. every language feature of ``FEATURES`` that the sources use was stable in ours (the
   table lists what was stabilised after 1.85, the first release of edition 2024);
3. standard-library items: clippy's ``incompatible_msrv`` lint reads rust-version and
   rejects any item stabilised later. It is on by default, so ``cargo clippy -D warnings``
   in tests/run.sh enforces it; ``--clippy`` runs it here too;
4. when a toolchain of exactly that version is installed (rustup), the workspace is
   checked with it, which settles the question.

Usage: python tests/check_msrv.py [--clippy]
"""

import json
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# (feature, first stable release, pattern on a line of code without comments, and whether
# the pattern reads the contents of string literals; otherwise they are blanked first)
FEATURES = [
    (
        "let chains (`if let ... && ...`)",
        "1.88",
        r"\b(if|while)\b[^{;]*\blet\b[^{;]*&&|&&\s*let\b",
        False,
    ),
    ("inferred const arguments (`[x; _]`)", "1.89", r";\s*_\s*\]", False),
    (
        "AVX-512 target features",
        "1.89",
        r"target_feature\(enable\s*=\s*\"[^\"]*avx512",
        True,
    ),
    ("128-bit enum representation", "1.89", r"#\[repr\((u|i)128\)\]", False),
]


def version(text):
    return tuple(int(part) for part in text.split("."))[:2]


def main():
    cargo_toml = (ROOT / "Cargo.toml").read_text()
    msrv = re.search(r'^rust-version = "([^"]+)"', cargo_toml, re.M).group(1)
    print(f"== MSRV: rust-version = {msrv}")
    needed = {"edition 2024": "1.85"}
    failures = []

    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--locked"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    used = {node["id"] for node in meta["resolve"]["nodes"]}
    for package in meta["packages"]:
        since = package.get("rust_version")
        if package["id"] not in used or not package["source"] or not since:
            continue
        needed.setdefault(f"dependency {package['name']}", since)
        if version(since) > version(msrv):
            failures.append(
                f"dependency {package['name']} {package['version']} needs {since}"
            )

    for path in sorted((ROOT / "rust").rglob("*.rs")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = re.sub(r'"(\\.|[^"\\])*"', '""', line).split("//")[0]
            with_strings = "" if line.lstrip().startswith("//") else line
            for name, since, pattern, reads_strings in FEATURES:
                if re.search(pattern, with_strings if reads_strings else code):
                    needed.setdefault(name, since)
                    if version(since) > version(msrv):
                        where = path.relative_to(ROOT)
                        failures.append(f"{where}:{number}: {name} needs {since}")

    floor = max(needed.values(), key=version)
    for name, since in sorted(needed.items(), key=lambda kv: version(kv[1]))[-5:]:
        print(f"   {since:>5}  {name}")
    if failures:
        sys.exit("rust-version is too low:\n" + "\n".join(failures))
    if version(floor) < version(msrv):
        print(
            f"   note: nothing above needs more than {floor}; a standard-library item may"
        )
    print(f"   ok: dependencies and language features fit Rust {msrv}")

    if "--clippy" in sys.argv[1:]:
        print(
            f"== clippy::incompatible_msrv (standard-library items newer than {msrv})"
        )
        subprocess.run(
            [
                "cargo",
                "clippy",
                "--workspace",
                "--all-targets",
                "--locked",
                "--",
                "-A",
                "clippy::all",
                "-D",
                "clippy::incompatible_msrv",
            ],
            cwd=ROOT,
            check=True,
        )
    toolchains = ""
    if shutil.which("rustup"):
        toolchains = subprocess.run(
            ["rustup", "toolchain", "list"], capture_output=True, text=True
        ).stdout
    if re.search(rf"^{re.escape(msrv)}[.-]", toolchains, re.M):
        print(f"== cargo +{msrv} check")
        subprocess.run(
            ["cargo", f"+{msrv}", "check", "--workspace", "--all-targets", "--locked"],
            cwd=ROOT,
            check=True,
        )
    else:
        print(f"   (no {msrv} toolchain installed: the exact build is skipped)")


if __name__ == "__main__":
    main()
