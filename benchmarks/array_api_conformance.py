"""Run the Array API conformance suite against NumPy and against traced graphs; compare and count.

    python benchmarks/array_api_conformance.py [--max-examples 20] [--profiles full leapp] [-k EXPR] [FILES...]

The suite (data-apis/array-api-tests) is used where it lies, ``../shared/third_party/array-api-tests`` from the
repository root (``--suite`` to point elsewhere); nothing is copied. First NumPy 2 itself is run as the
namespace, then ``benchmarks/array_api_traced.py`` (each function call traced with leapp_notebook from decoy
inputs, the graph's result returned) once per profile. Printed: the tests NumPy passes that the traced run
fails, and per profile the traced calls counted faithful / reported / refused / silent. Exit status 1 when,
in the ``full`` profile, a test NumPy passes fails on the traced graphs or a call is silently wrong.
Needs pytest-json-report and ndindex (the suite's own requirements; the ``dev`` extra installs them).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# ../shared/third_party from the repository root (or from a worktree's parent folders)
SUITE = next((p / "shared" / "third_party" / "array-api-tests" for p in ROOT.parents
              if (p / "shared" / "third_party" / "array-api-tests").is_dir()),
             ROOT.parent / "shared" / "third_party" / "array-api-tests")
TRACED_MODULE = "exec('import benchmarks.array_api_traced as m; xp = m.namespace()')"
KINDS = ("faithful", "reported", "refused", "silent", "signed-zero", "tie-order")


def run_suite(suite: Path, module: str, workdir: Path, tag: str, max_examples: int, files: list[str],
              keyword: str | None, profile: str = "full") -> tuple[dict[str, str], dict]:
    """Run the suite with ``module`` as the namespace; test outcomes by id, and the traced-call summary."""
    junit = workdir / f"{tag}.xml"
    counts = workdir / f"{tag}.json"
    env = dict(os.environ, ARRAY_API_TESTS_MODULE=module, ARRAY_API_TRACE_COUNTS=str(counts),
               LEAPP_NOTEBOOK_PROFILE=profile,
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    targets = [str(suite / "array_api_tests" / f) for f in files] or [str(suite / "array_api_tests")]
    command = [sys.executable, "-m", "pytest", *targets, "-c", str(suite / "pytest.ini"), "--rootdir", str(suite),
               "-p", "no:cacheprovider", "--max-examples", str(max_examples), "--disable-deadline",
               "--derandomize", "-q", f"--junitxml={junit}"]
    if keyword:
        command += ["-k", keyword]
    # The suite runs from a scratch folder: hypothesis writes its database into the working directory.
    subprocess.run(command, cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    outcomes = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        state = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                state = "failed"
            elif child.tag == "skipped":
                state = "skipped"
        outcomes[f"{case.get('classname')}::{case.get('name')}"] = state
    summary = json.loads(counts.read_text()) if counts.exists() else {"counts": {}, "examples": {}}
    return outcomes, summary


def compare(max_examples: int = 20, profiles: tuple[str, ...] = ("full", "leapp"), files: list[str] | None = None,
            keyword: str | None = None, suite: Path = SUITE, verbose: bool = True) -> dict:
    files = files or []
    with tempfile.TemporaryDirectory(prefix="array-api-") as tmp:
        workdir = Path(tmp)
        numpy_outcomes, _ = run_suite(suite, "numpy", workdir, "numpy", max_examples, files, keyword)
        passed = {t for t, s in numpy_outcomes.items() if s == "passed"}
        report = {"numpy_passed": len(passed), "numpy_tests": len(numpy_outcomes), "profiles": {}}
        for profile in profiles:
            outcomes, summary = run_suite(suite, TRACED_MODULE, workdir, f"traced-{profile}", max_examples, files,
                                          keyword, profile)
            lost = sorted(t for t in passed if outcomes.get(t) != "passed")
            counts = {k: summary["counts"].get(k, 0) for k in KINDS}
            report["profiles"][profile] = {"passed": sum(1 for t in passed if outcomes.get(t) == "passed"),
                                           "lost": lost, "counts": counts, "examples": summary["examples"]}
    if verbose:
        print(f"Array API suite, {max_examples} examples per test: NumPy 2 passes {len(passed)} of "
              f"{len(numpy_outcomes)} tests")
        print(f"{'profile':8} {'tests passed':>12} {'lost':>5} {'calls':>7} " + " ".join(f"{k:>9}" for k in KINDS))
        for profile, r in report["profiles"].items():
            total = sum(r["counts"].values())
            print(f"{profile:8} {r['passed']:>12} {len(r['lost']):>5} {total:>7} "
                  + " ".join(f"{r['counts'][k]:>9}" for k in KINDS))
            for test in r["lost"]:
                print(f"  {profile}: NumPy passes, traced fails: {test}")
            for example in r["examples"].get("silent", [])[:20]:
                print(f"  {profile}: silent: {example}")
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="test files of the suite (default: all)")
    parser.add_argument("--max-examples", type=int, default=20)
    parser.add_argument("--profiles", nargs="+", default=["full", "leapp"])
    parser.add_argument("-k", dest="keyword")
    parser.add_argument("--suite", type=Path, default=SUITE)
    parser.add_argument("--json", type=Path, help="write the report here")
    args = parser.parse_args()
    if not (args.suite / "array_api_tests").is_dir():
        print(f"no Array API suite at {args.suite}", file=sys.stderr)
        return 2
    report = compare(args.max_examples, tuple(args.profiles), args.files, args.keyword, args.suite)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    full = report["profiles"].get("full")
    return 1 if full and (full["lost"] or full["counts"]["silent"]) else 0


if __name__ == "__main__":
    raise SystemExit(main())
