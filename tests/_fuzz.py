"""A child process that runs privtab calls under a time and a memory limit.

The fuzz tests (``tests/test_fuzz.py``) hand every call to a :class:`FuzzWorker`, so a
segmentation fault, an abort (a Rust allocation failure under the memory limit), a
hang or a runaway allocation ends the child instead of the test run, and is reported
as what it is. The child is reused for many calls and restarted after a crash.

A call is a :class:`Program`: steps run in order in the child, each calling a public
name of privtab (or a method of an earlier step's result) with arguments in which
:class:`Wrap` (turn an array into a Fortran-ordered, big-endian, read-only, pandas or
polars version of itself), :class:`Build` (construct a privtab object, e.g. a
``BudgetAccountant``, in the child) and :class:`Ref` (an earlier step's result) are
resolved in the child, since the flags they stand for do not survive pickling.

The child reports an :class:`Outcome`: the value's fingerprint, or the exception's
class, its base classes and its message. With ``compare_to`` the child runs a second
program (the same call on plain C-contiguous native arrays) and says whether both
gave the same answer.
"""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

#: Address-space limit of the child (MiB); PRIVTAB_FUZZ_MEMORY_MB overrides it. Python
#: with numpy, pandas, polars, scikit-learn and privtab imported maps about 1.3 GiB.
MEMORY_MB = int(os.environ.get("PRIVTAB_FUZZ_MEMORY_MB", "3072"))
#: Seconds one call may take before it counts as a hang (generous: CI machines are
#: shared); PRIVTAB_FUZZ_TIMEOUT overrides it.
TIMEOUT = float(os.environ.get("PRIVTAB_FUZZ_TIMEOUT", "30"))
#: Seconds the child may take to import numpy, pandas, polars and privtab.
STARTUP_TIMEOUT = 120.0

#: Fitted attributes that legitimately differ between a numpy and a frame input.
_FRAME_ONLY_ATTRIBUTES = frozenset({"feature_names_in_"})


@dataclass(frozen=True)
class Wrap:
    """``value`` turned, in the child, into the array layout or container ``kind``.

    Kinds: ``fortran``, ``bigendian``, ``readonly``, ``strided`` (a non-contiguous
    view), ``pandas``, ``pandas_categorical``, ``polars``, ``list``, ``sparse`` (a
    SciPy CSR array), ``path`` (the bytes written to a fresh file, passed as its path).
    """

    kind: str
    value: Any


@dataclass(frozen=True)
class Build:
    """``privtab.<name>(*args, **kwargs)`` (or ``numpy.random.<name>``), built in the child."""

    name: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Ref:
    """The result of step ``index`` of the same program."""

    index: int


@dataclass(frozen=True)
class Step:
    """Call ``target``, then its ``method`` if given.

    ``target`` is a public name of privtab, ``"module:attribute"`` (the harness's own
    tests call ``os:abort``), or a :class:`Ref`.
    """

    target: Any
    method: str | None = None
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


Program = tuple[Step, ...]


@dataclass
class Outcome:
    """What a program did in the child.

    ``kind`` is ``"ok"``, ``"raised"``, ``"crashed"`` (the child died: ``detail``
    names the signal or exit code and ends with its stderr) or ``"timeout"``.
    """

    kind: str
    exception: str = ""
    bases: tuple[str, ...] = ()
    message: str = ""
    step: int = -1
    same: bool | None = None
    detail: str = ""

    def describe(self) -> str:
        if self.kind == "raised":
            return f"step {self.step} raised {self.exception}: {self.message}"
        return f"{self.kind}: {self.detail}"


# The child ------------------------------------------------------------------------------
def _wrap(kind: str, value: Any, workdir: str) -> Any:
    import numpy as np

    if kind == "list":
        return np.asarray(value).tolist()
    if kind == "path":
        path = Path(tempfile.mkstemp(dir=workdir)[1])
        path.write_bytes(value)
        return str(path)
    if kind in ("pandas", "pandas_categorical", "polars"):
        array = np.asarray(value)
        if kind == "polars":
            import polars as pl

            if array.ndim == 1:
                return pl.Series("y", array)
            return pl.DataFrame({f"c{j}": array[:, j] for j in range(array.shape[1])})
        import pandas as pd

        if array.ndim == 1:
            series = pd.Series(array)
            return series.astype("category") if kind == "pandas_categorical" else series
        frame = pd.DataFrame(array, columns=[f"c{j}" for j in range(array.shape[1])])
        return frame.astype("category") if kind == "pandas_categorical" else frame
    if kind == "sparse":
        import scipy.sparse

        return scipy.sparse.csr_array(np.asarray(value))
    array = np.array(value)
    if kind == "fortran":
        return np.asfortranarray(array)
    if kind == "bigendian":
        return array.astype(array.dtype.newbyteorder(">"))
    if kind == "readonly":
        array.setflags(write=False)
        return array
    if kind == "strided":
        # Every other row of a twice-as-tall array: a view that is not contiguous.
        doubled = np.repeat(array, 2, axis=0)
        return doubled[::2]
    raise ValueError(f"unknown wrap {kind!r}")


def _resolve(value: Any, results: list[Any], workdir: str) -> Any:
    if isinstance(value, Ref):
        return results[value.index]
    if isinstance(value, Wrap):
        return _wrap(value.kind, _resolve(value.value, results, workdir), workdir)
    if isinstance(value, Build):
        import numpy as np

        import privtab

        owner = np.random if value.name in ("default_rng", "SeedSequence") else privtab
        args = [_resolve(v, results, workdir) for v in value.args]
        kwargs = {k: _resolve(v, results, workdir) for k, v in value.kwargs.items()}
        return getattr(owner, value.name)(*args, **kwargs)
    if isinstance(value, list):
        return [_resolve(v, results, workdir) for v in value]
    if isinstance(value, tuple):
        return tuple(_resolve(v, results, workdir) for v in value)
    if isinstance(value, dict):
        return {k: _resolve(v, results, workdir) for k, v in value.items()}
    return value


def _public_name(name: str) -> Any:
    """``privtab.<name>``, or ``<module>.<attribute>`` for ``"module:attribute"``."""
    import importlib

    module, _, attribute = name.rpartition(":")
    return getattr(importlib.import_module(module or "privtab"), attribute)


def _run_program(program: Program, workdir: str) -> tuple[list[Any], int]:
    results: list[Any] = []
    for index, step in enumerate(program):
        target = (
            _resolve(step.target, results, workdir)
            if isinstance(step.target, Ref)
            else _public_name(step.target)
        )
        call = getattr(target, step.method) if step.method else target
        args = [_resolve(v, results, workdir) for v in step.args]
        kwargs = {k: _resolve(v, results, workdir) for k, v in step.kwargs.items()}
        try:
            results.append(call(*args, **kwargs))
        except BaseException as exc:
            exc.step = index  # type: ignore[attr-defined]
            raise
    return results, len(program) - 1


def fingerprint(value: Any, depth: int = 0) -> Any:
    """A picklable structure equal for equal answers.

    Arrays compare by shape and values (integers and booleans as ``int64``, unless
    above its range, floats as ``float64``), so a frame, a sparse matrix and an array
    holding the same numbers are the same answer, as are ``uint8`` and ``int64`` codes.
    """
    import numpy as np

    if depth > 6:
        return repr(type(value))
    module = type(value).__module__.split(".")[0]
    if module in ("pandas", "polars") and hasattr(value, "to_numpy"):
        return fingerprint(value.to_numpy(), depth + 1)
    if hasattr(value, "toarray") and hasattr(value, "nnz"):  # scipy sparse
        return fingerprint(value.toarray(), depth + 1)
    if isinstance(value, np.ndarray | np.generic):
        array = np.asarray(value)
        if array.dtype.kind in "biu":
            fits = not array.size or array.dtype.kind != "u" or int(array.max()) < 2**63
            array = array.astype(np.int64 if fits else np.uint64)
        elif array.dtype.kind == "f":
            array = array.astype(np.float64)
        else:
            return (
                "values",
                array.shape,
                [fingerprint(v, depth + 1) for v in array.ravel().tolist()],
            )
        native = np.ascontiguousarray(array)
        return ("array", native.dtype.str, native.shape, native.tobytes())
    if isinstance(value, dict):
        return {
            k: fingerprint(v, depth + 1) for k, v in sorted(value.items(), key=repr)
        }
    if isinstance(value, list | tuple):
        return ("sequence", [fingerprint(v, depth + 1) for v in value])
    if isinstance(value, float | int | str | bytes | bool | type(None)):
        return value
    attributes = (
        {
            name: fingerprint(item, depth + 1)
            for name, item in sorted(vars(value).items())
            if not name.startswith("_") and name not in _FRAME_ONLY_ATTRIBUTES
        }
        if hasattr(value, "__dict__")
        else {}
    )
    return (type(value).__name__, attributes)


def _same(left: Any, right: Any) -> bool:
    """Whether two fingerprints are equal, NaN equal to NaN."""
    if isinstance(left, float) and isinstance(right, float):
        return left == right or (left != left and right != right)
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(
            _same(left[k], right[k]) for k in left
        )
    if isinstance(left, list | tuple):
        return len(left) == len(right) and all(map(_same, left, right))
    return bool(left == right)


def _execute(request: tuple[Program, Program | None], workdir: str) -> Outcome:
    import warnings

    program, compare_to = request
    with warnings.catch_warnings():
        # A numeric warning (overflow, division by zero, invalid value) means that a
        # NaN or an infinity may have reached the answer silently: make it an error.
        warnings.simplefilter("ignore")
        warnings.simplefilter("error", RuntimeWarning)
        try:
            results, last = _run_program(program, workdir)
        except BaseException as exc:  # PanicException derives from BaseException
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            bases = tuple(c.__name__ for c in type(exc).__mro__)
            return Outcome(
                "raised",
                exception=type(exc).__name__,
                bases=bases,
                message=str(exc)[:2000],
                step=getattr(exc, "step", -1),
            )
        if compare_to is None:
            return Outcome("ok")
        answer = fingerprint(results[last])
        reference, reference_last = _run_program(compare_to, workdir)
        same = _same(answer, fingerprint(reference[reference_last]))
    return Outcome("ok", same=same, detail="" if same else repr(answer)[:1500])


def serve(read_fd: int, write_fd: int) -> None:
    """The child's loop: limit memory, then run requests until the pipe closes."""
    import resource

    limit = MEMORY_MB * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import numpy  # noqa: F401  (imported once, under the limit)

    import privtab  # noqa: F401

    inbox = Connection(read_fd, writable=False)
    outbox = Connection(write_fd, readable=False)
    outbox.send("ready")
    with tempfile.TemporaryDirectory() as workdir:
        while True:
            try:
                request = inbox.recv()
            except EOFError:
                return
            try:
                outcome = _execute(request, workdir)
            except Exception as exc:  # the comparison program itself failed
                outcome = Outcome(
                    "raised", exception=type(exc).__name__, message=str(exc)
                )
            outbox.send(outcome)


# The parent -----------------------------------------------------------------------------
class FuzzWorker:
    """A reusable child process that runs :class:`Program` requests one at a time."""

    def __init__(self, timeout: float = TIMEOUT) -> None:
        self.timeout = timeout
        self.restarts = 0
        self._process: subprocess.Popen | None = None
        # Lives as long as the worker (closed by close()): every child writes to it.
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115

    def _start(self) -> None:
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        env = dict(os.environ)
        # One BLAS thread: each extra thread maps its own buffers under the limit.
        env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        code = (
            "import sys; sys.path.insert(0, sys.argv[1]); import _fuzz; "
            "_fuzz.serve(int(sys.argv[2]), int(sys.argv[3]))"
        )
        self._stderr.seek(0)
        self._stderr.truncate()
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                code,
                str(Path(__file__).parent),
                str(to_child_r),
                str(from_child_w),
            ],
            pass_fds=(to_child_r, from_child_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
            env=env,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._outbox = Connection(to_child_w, readable=False)
        self._inbox = Connection(from_child_r, writable=False)
        # Start-up (imports under load) does not count against a call's time limit.
        if not (self._inbox.poll(STARTUP_TIMEOUT) and self._inbox.recv() == "ready"):
            raise RuntimeError(f"the fuzz worker did not start: {self._stderr_tail()}")

    def _stop(self) -> None:
        if self._process is None:
            return
        for conn in (self._outbox, self._inbox):
            conn.close()
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        self._process = None

    def _stderr_tail(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read()[-1500:].decode(errors="replace")

    def run(self, program: Program, compare_to: Program | None = None) -> Outcome:
        """Run ``program`` in the child (started or restarted as needed)."""
        if self._process is None or self._process.poll() is not None:
            if self._process is not None:
                self._stop()
                self.restarts += 1
            self._start()
        assert self._process is not None
        # Test that the request pickles here, so a bad request is not taken for a crash.
        payload = pickle.dumps((program, compare_to))
        try:
            self._outbox.send_bytes(payload)
            if not self._inbox.poll(self.timeout):
                self._stop()
                self.restarts += 1
                return Outcome("timeout", detail=f"no answer within {self.timeout} s")
            return self._inbox.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError):
            pass  # the child closed its end: it died
        try:
            code = self._process.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            code = 0
        if code == 0:  # closed its pipe yet lived on, or exited cleanly mid-call
            self._stop()
            self.restarts += 1
            return Outcome(
                "crashed",
                detail=f"the child closed its pipe; stderr: {self._stderr_tail()}",
            )
        reason = (
            f"killed by {signal.Signals(-code).name}"
            if code < 0
            else f"exit code {code}"
        )
        detail = f"{reason}; stderr: {self._stderr_tail()}"
        self._stop()
        self.restarts += 1
        return Outcome("crashed", detail=detail)

    def close(self) -> None:
        self._stop()
        self._stderr.close()
