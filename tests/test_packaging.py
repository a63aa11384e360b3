"""The checkout's release setup: one version, the license, the build flags, the sdist's
contents and the wheels workflow. These read the checkout, so the wheel check skips them."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

import privtab

if sys.version_info >= (3, 11):
    import tomllib
else:
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "wheels.yml"
WHEEL_TARGETS = {
    "x86_64-unknown-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "x86_64-unknown-linux-musl",
    "aarch64-unknown-linux-musl",
    "aarch64-apple-darwin",
    "x86_64-apple-darwin",
    "x86_64-pc-windows-msvc",
}


def _toml(path: Path) -> dict:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _cargo_version() -> str:
    return _toml(ROOT / "Cargo.toml")["workspace"]["package"]["version"]


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def _steps(job: dict) -> list[dict]:
    return job.get("steps", [])


def _maturin() -> str:
    beside_python = Path(sys.executable).with_name("maturin")
    found = str(beside_python) if beside_python.exists() else shutil.which("maturin")
    if found is None:
        pytest.fail("maturin is not installed (pip install 'maturin>=1.9,<2')")
    return found


def test_version_has_one_source():
    pyproject = _toml(ROOT / "pyproject.toml")["project"]
    assert "version" not in pyproject
    assert "version" in pyproject["dynamic"]
    for crate in ("privtab-core", "privtab-py"):
        manifest = _toml(ROOT / "rust" / crate / "Cargo.toml")
        assert manifest["package"]["version"] == {"workspace": True}, crate
    # Cargo and PEP 440 spell a plain release alike; a pre-release (0.2.0-rc.1 vs
    # 0.2.0rc1) would make __version__ differ from the wheel's version.
    assert re.fullmatch(r"\d+\.\d+\.\d+", _cargo_version())
    assert privtab.__version__ == _cargo_version()


def test_changelog_describes_the_current_version():
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    sections = re.findall(r"^## \[([^\]]+)\]", changelog, flags=re.M)
    released = [name for name in sections if name != "Unreleased"]
    assert released[0] == _cargo_version()


def test_license_file_is_the_declared_mit_license():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "The privtab developers" in text
    project = _toml(ROOT / "pyproject.toml")["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    assert _toml(ROOT / "Cargo.toml")["workspace"]["package"]["license"] == "MIT"


def test_release_build_is_locked_stripped_abi3_and_baseline():
    pyproject = _toml(ROOT / "pyproject.toml")
    maturin = pyproject["tool"]["maturin"]
    assert maturin["locked"] is True
    assert maturin["strip"] is True
    assert maturin["compatibility"] == "manylinux2014"
    assert pyproject["project"]["requires-python"] == ">=3.10"
    pyo3 = _toml(ROOT / "Cargo.toml")["workspace"]["dependencies"]["pyo3"]
    assert "abi3-py310" in pyo3["features"]
    # A wheel must run on every CPU of its architecture: no flag raises the baseline.
    flags = " ".join(maturin.get("rustc-args", []))
    for config in (ROOT / ".cargo" / "config.toml", ROOT / ".cargo" / "config"):
        if config.exists():
            flags += config.read_text(encoding="utf-8")
    assert "target-cpu" not in flags
    assert "target-feature" not in flags


def test_sdist_holds_everything_a_build_needs(tmp_path):
    subprocess.run(
        [_maturin(), "sdist", "--out", str(tmp_path)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    (sdist,) = tmp_path.glob("privtab-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {
        "Cargo.lock",
        "Cargo.toml",
        "LICENSE",
        "README.md",
        "pyproject.toml",
        "PKG-INFO",
        "rust/privtab-core/Cargo.toml",
        "rust/privtab-core/src/lib.rs",
        "rust/privtab-py/Cargo.toml",
        "rust/privtab-py/src/lib.rs",
        "python/privtab/__init__.py",
        "python/privtab/_core.pyi",
        "python/privtab/py.typed",
        "python/privtab/datasets/data/adult.csv.gz",
        "python/privtab/datasets/data/ADULT_LICENSE.txt",
        "python/privtab/report/templates/report.html.j2",
    } <= names
    tracked = subprocess.run(
        ["git", "ls-files", "rust", "python"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    sources = {name for name in tracked if name.endswith((".rs", ".py"))}
    assert sources - names <= {
        name for name in sources if name.startswith("rust/privtab-core/tests/")
    }
    assert not [name for name in names if name.endswith((".so", ".pyd"))]


def test_wheels_workflow_passes_the_github_workflow_schema():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            str(WORKFLOW),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_wheels_workflow_pins_every_action_by_commit():
    uses = [
        step["uses"]
        for job in _workflow()["jobs"].values()
        for step in _steps(job)
        if "uses" in step
    ]
    assert uses
    for action in uses:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", action), action


def test_wheels_workflow_builds_every_platform_and_the_sdist():
    jobs = _workflow()["jobs"]
    built: set[str] = set()
    for job in jobs.values():
        for step in _steps(job):
            if not step.get("uses", "").startswith("PyO3/maturin-action@"):
                continue
            arguments = step["with"]
            if arguments.get("command") == "sdist":
                built.add("sdist")
                continue
            assert {"--release", "--locked"} <= set(arguments["args"].split())
            for platform in job["strategy"]["matrix"]["platform"]:
                built.add(platform["target"])
                if platform["target"].endswith("linux-gnu"):
                    assert platform["manylinux"] == "2014"
                if platform["target"].endswith("linux-musl"):
                    assert platform["manylinux"] == "musllinux_1_2"
    assert built == WHEEL_TARGETS | {"sdist"}


def test_wheels_workflow_tests_each_wheel_on_its_platform_from_dist_only():
    jobs = _workflow()["jobs"]
    tested: dict[str, set[str]] = {}
    for job in jobs.values():
        runs = " ".join(step.get("run", "") for step in _steps(job))
        if "tests/wheel_check.sh --find-links dist" not in runs:
            continue
        matrix = job.get("strategy", {}).get("matrix", {})
        for platform in matrix.get("platform", []):
            tested.setdefault(platform["target"], set()).update(matrix["python"])
    assert set(tested) == WHEEL_TARGETS
    newest = {"3.x", "3"}
    for target, pythons in tested.items():
        assert "3.10" in pythons, target
        assert pythons & newest, target
    script = (ROOT / "tests" / "wheel_check.sh").read_text(encoding="utf-8")
    assert '--no-index --find-links "$find_links"' in script
    assert "--ignore=tests/test_packaging.py" in script


def test_wheels_workflow_checks_before_a_trusted_publish_on_tags():
    jobs = _workflow()["jobs"]
    checks = " ".join(step.get("run", "") for step in _steps(jobs["check"]))
    assert "twine check --strict dist/*" in checks
    assert "abi3audit --strict" in checks
    publish = jobs["publish"]
    assert publish["if"] == "startsWith(github.ref, 'refs/tags/v')"
    assert {"check", "test", "test-musl", "test-sdist"} <= set(publish["needs"])
    assert publish["permissions"] == {"id-token": "write"}
    (upload,) = [
        step
        for step in _steps(publish)
        if step.get("uses", "").startswith("pypa/gh-action-pypi-publish@")
    ]
    assert "password" not in upload.get("with", {})
