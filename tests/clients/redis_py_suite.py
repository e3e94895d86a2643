"""redis-py 8.1.0's own probabilistic-data-structure tests (`tests/test_bloom.py` and
`tests/test_asyncio/test_bloom.py`, unchanged, as its sdist ships them) against one running
server, under RESP2 then RESP3.

usage: python redis_py_suite.py HOST:PORT [--allow-skips] [--full-output] [-- PYTEST_ARGS...]

Run it with the venv's Python that `make clients` sets up (CLIENTS_PYTHON): pytest and its
plugins come from there, and so does redis-py itself. The tests come from REDIS_PY_TESTS, by
default target/redis-py-tests/redis-8.1.0 (which `make clients` unpacks). The suite flushes
the database it connects to, so give it a server of its own.

Prints one line per protocol and exits non-zero when a test fails, errs, or is skipped (the
suite passes only whole; --allow-skips relaxes the last), or when nothing ran. Each test that
did not pass is listed with the first line of its error; --full-output adds pytest's own output
(tracebacks) for a run with failures. PYTEST_ARGS go to both runs, e.g. `-- -k cms` or
`-- --legacy-responses=false`.
"""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

TEST_FILES = ["tests/test_bloom.py", "tests/test_asyncio/test_bloom.py"]
PROTOCOLS = ["2", "3"]


def tests_root():
    configured = os.environ.get("REDIS_PY_TESTS")
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[2] / "target/redis-py-tests/redis-8.1.0"


def parse_address(address):
    host, _, port = address.rpartition(":")
    if not port.isdigit():
        sys.exit(f"{address!r} is not HOST:PORT")
    return host or "127.0.0.1", int(port)


def first_line(text):
    text = (text or "").strip()
    return text.splitlines()[0] if text else ""


def outcomes(report):
    """(test id, outcome, message) for each test case of a JUnit report, where outcome is
    passed, failed, error or skipped."""
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        module = case.get("classname", "").replace(".", "/")
        test_id = f"{module}.py::{case.get('name')}" if module else case.get("name", "?")
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = "failed" if child.tag == "failure" else child.tag
                message = first_line(child.get("message")) or first_line(child.text)
                break
        yield test_id, outcome, message


def run(root, host, port, protocol, extra, workdir):
    """Runs both files in one pytest session (its conftest reads the protocol once, at session
    start) and returns its outcomes and its output."""
    report = Path(workdir) / f"resp{protocol}.xml"
    url = f"redis://{host}:{port}"
    command = [
        sys.executable,
        "-m",
        "pytest",
        *TEST_FILES,
        f"--redis-url={url}/0",
        # The bloom tests connect through --redis-mod-url; the version gates
        # (skip_ifmodversion_lt) read MODULE LIST there too.
        f"--redis-mod-url={url}",
        f"--protocol={protocol}",
        f"--junitxml={report}",
        "-p",
        "no:cacheprovider",
        "-q",
        "-rfEs",
        "--tb=short",
        *extra,
    ]
    # No bytecode under the shared test tree: two runs at once (one per server) would race
    # on it, and it would outlive the run.
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    completed = subprocess.run(
        command,
        cwd=root,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    output = completed.stdout + completed.stderr
    if not report.exists():
        return None, output
    return list(outcomes(report)), output


def main(argv):
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1 :]
        argv = argv[: argv.index("--")]
    flags = {"--allow-skips", "--full-output"}
    allow_skips = "--allow-skips" in argv
    full_output = "--full-output" in argv
    positional = [arg for arg in argv if arg not in flags]
    if len(positional) != 1:
        sys.exit(__doc__)
    host, port = parse_address(positional[0])

    root = tests_root()
    missing = [name for name in TEST_FILES + ["tests/conftest.py"] if not (root / name).exists()]
    if missing:
        sys.exit(f"{root} has no {', '.join(missing)}: `make clients` unpacks redis-py's tests")

    ok = True
    totals = {"passed": 0, "failed": 0, "skipped": 0}
    with tempfile.TemporaryDirectory() as workdir:
        for protocol in PROTOCOLS:
            results, output = run(root, host, port, protocol, extra, workdir)
            if results is None:
                print(f"RESP{protocol}: pytest wrote no report\n{output}")
                ok = False
                continue
            counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
            for _, outcome, _ in results:
                counts[outcome] += 1
            failed = counts["failed"] + counts["error"]
            print(
                f"RESP{protocol}: {counts['passed']} passed, {failed} failed, "
                f"{counts['skipped']} skipped"
            )
            for test_id, outcome, message in results:
                if outcome != "passed":
                    print(f"  {outcome.upper()} {test_id}: {message}")
            if failed and full_output:
                print(output)
            totals["passed"] += counts["passed"]
            totals["failed"] += failed
            totals["skipped"] += counts["skipped"]
            if failed or not results or (counts["skipped"] and not allow_skips):
                ok = False
    print(
        f"redis-py-suite: {totals['passed']} passed, {totals['failed']} failed, "
        f"{totals['skipped']} skipped"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
