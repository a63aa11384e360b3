#!/usr/bin/env bash
# The one test command (README, .ci/run): builds the extension into ./.venv, installs the
# test and docs extras, then runs every check: rustfmt, clippy, cargo test, ruff, the stub
# check, mypy, pytest (doctests included, and the documentation site built with warnings
# as errors by tests/test_docs.py) and the wheel check (the release wheel installed into a
# fresh venv without Rust and tested there). Needs only python3 (>= 3.10) and a Rust
# toolchain.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv with $("$python" --version)"
  "$python" -m venv .venv
fi
export VIRTUAL_ENV="$root/.venv"
export PATH="$VIRTUAL_ENV/bin:$PATH"
export PYO3_PYTHON="$VIRTUAL_ENV/bin/python"
python -m pip install --quiet --disable-pip-version-check --upgrade pip "maturin>=1.9,<2"

echo "== maturin develop --release (extension + test and docs extras)"
maturin develop --release --locked --extras test,docs

echo "== cargo fmt --check"
cargo fmt --all --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== MSRV (rust-version)"
python tests/check_msrv.py
echo "== cargo test (privtab-core; no Python involved)"
cargo test -p privtab-core --locked

echo "== ruff"
ruff check python tests benches examples docs
ruff format --check python tests benches examples docs
echo "== stubtest privtab._core"
python -m mypy.stubtest privtab._core --allowlist tests/stubtest_allowlist.txt
echo "== mypy"
python -m mypy python/privtab

echo "== pytest"
set +e
python -m pytest tests python/privtab --doctest-modules "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests (exit code 5); treating it as a failure of the suite layout"
  exit 1
fi
if [ "$status" -ne 0 ]; then
  exit "$status"
fi

# The release wheel, installed without Rust, against the suite minus the slow statistical
# tests (they ran above on the same Rust code; the wheels workflow runs them per platform).
echo "== wheel check (tests/wheel_check.sh)"
bash tests/wheel_check.sh --python "$python" -- -m "not slow"
