#!/usr/bin/env bash
# The wheel a user installs is what gets tested: builds the release wheel (or takes the one in
# --find-links DIR), installs it into a fresh venv whose PATH has no cargo or rustc, and runs
# there `privtab --version`, `privtab demo` and the test suite against the installed package,
# from a copy of tests/ outside the checkout (python/ is never on sys.path).
#
#   bash tests/wheel_check.sh                      # maturin build --release, then check
#   bash tests/wheel_check.sh --find-links dist    # check the wheel already in dist/
#   bash tests/wheel_check.sh -- -m "not slow"     # arguments after -- go to pytest
#   --python PYTHON makes the venv (default python3); WHEEL_CHECK_PYTEST_ARGS holds more
#   pytest arguments, split at whitespace.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

python=python3
find_links=""
pytest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --python) python="$2"; shift 2 ;;
    --find-links) find_links="$(cd "$2" && pwd)"; shift 2 ;;
    --) shift; pytest_args=("$@"); break ;;
    *) echo "wheel_check.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

work="$(mktemp -d "${TMPDIR:-/tmp}/privtab-wheel-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT
start=$SECONDS

if [ -z "$find_links" ]; then
  find_links="$work/dist"
  if [ -x "$root/.venv/bin/maturin" ]; then maturin="$root/.venv/bin/maturin"; else maturin=maturin; fi
  echo "== maturin build --release (into $find_links)"
  # The host's glibc decides the manylinux tag here (the release builds in manylinux2014).
  (cd "$root" && "$maturin" build --release --compatibility pypi --out "$find_links")
fi
shopt -s nullglob
wheels=("$find_links"/privtab-*.whl)
shopt -u nullglob
if [ "${#wheels[@]}" -ne 1 ]; then
  echo "wheel_check.sh: expected one privtab wheel in $find_links, found ${#wheels[@]}" >&2
  exit 1
fi
wheel="${wheels[0]}"
wheel_version="$(basename "$wheel" | cut -d- -f2)"
echo "== wheel $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)"

echo "== fresh venv ($("$python" --version))"
"$python" -m venv "$work/venv"
if [ -d "$work/venv/Scripts" ]; then bin="$work/venv/Scripts"; else bin="$work/venv/bin"; fi

# PATH without the directories that hold a Rust toolchain: nothing below may compile Rust.
clean_path="$bin"
IFS=: read -r -a path_dirs <<< "$PATH"
for dir in "${path_dirs[@]}"; do
  if [ -z "$dir" ] || [ -e "$dir/cargo" ] || [ -e "$dir/rustc" ] || [ -e "$dir/cargo.exe" ] \
    || [ -e "$dir/rustc.exe" ]; then
    continue
  fi
  clean_path="$clean_path:$dir"
done
export PATH="$clean_path"
export VIRTUAL_ENV="$work/venv"
unset PYTHONPATH PYTHONHOME PYO3_PYTHON
if command -v cargo >/dev/null || command -v rustc >/dev/null; then
  echo "wheel_check.sh: cargo or rustc is still on PATH" >&2
  exit 1
fi

echo "== pip install: privtab from $find_links only, then its test extras"
python -m pip install --quiet --disable-pip-version-check --upgrade pip
python -m pip install --quiet --disable-pip-version-check --no-index --find-links "$find_links" \
  --only-binary :all: --no-deps "privtab==$wheel_version"
python -m pip install --quiet --disable-pip-version-check "privtab[test,docs]==$wheel_version"

# A copy of what the tests read from the checkout; ../shared/data is linked where it exists.
mkdir -p "$work/src"
cp -R "$root/tests" "$root/examples" "$root/docs" "$root/README.md" "$root/pyproject.toml" "$work/src/"
rm -rf "$work/src/tests/__pycache__"
if [ -d "$root/../shared" ]; then ln -s "$(cd "$root/../shared" && pwd)" "$work/shared"; fi
cd "$work/src"

echo "== installed package"
python - "$wheel_version" "$root" <<'PY'
import importlib.metadata
import pathlib
import sys

import privtab

wheel_version, checkout = sys.argv[1], pathlib.Path(sys.argv[2]).resolve()
where = pathlib.Path(privtab.__file__).resolve()
print(f"privtab {privtab.__version__} from {where.parent}")
if checkout in where.parents or "site-packages" not in where.parts:
    sys.exit(f"privtab was imported from {where}, not from the venv's site-packages")
if not privtab.__version__ == importlib.metadata.version("privtab") == wheel_version:
    sys.exit(
        f"__version__ {privtab.__version__}, metadata "
        f"{importlib.metadata.version('privtab')}, wheel {wheel_version}"
    )
PY

echo "== privtab --version"
cli_version="$(privtab --version | tr -d '\r')"
echo "$cli_version"
if [ "$cli_version" != "privtab, version $wheel_version" ]; then
  echo "wheel_check.sh: privtab --version printed '$cli_version', the wheel is $wheel_version" >&2
  exit 1
fi

echo "== privtab demo"
privtab demo

echo "== pytest against the installed package (built, installed and run in $((SECONDS - start)) s so far)"
# test_packaging checks the checkout itself (pyproject, sdist, workflow), not the package.
# shellcheck disable=SC2086
python -m pytest tests --rootdir "$work/src" -c "$work/src/pyproject.toml" -p no:cacheprovider \
  --ignore=tests/test_packaging.py -q -x ${WHEEL_CHECK_PYTEST_ARGS:-} ${pytest_args[@]+"${pytest_args[@]}"}
