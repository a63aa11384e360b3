#!/usr/bin/env bash
# The one test command (README, .ci/run): builds the extension into ./.venv, installs the
# test extras, then runs every check: rustfmt, clippy, cargo test, ruff, the stub check,
# mypy and pytest (doctests included). Needs only python3 (>= 3.10) and a Rust toolchain.
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

echo "== maturin develop --release (extension + test extras)"
maturin develop --release --locked --extras test

echo "== cargo fmt --check"
cargo fmt --all --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== MSRV (rust-version)"
python tests/check_msrv.py
echo "== cargo test (privtab-core; no Python involved)"
cargo test -p privtab-core --locked

echo "== ruff"
ruff check python tests benches
ruff format --check python tests benches
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
exit "$status"
