"""Real LEAPP 0.7.2 versus leapp_notebook on torch and mixed NumPy/torch nodes, side by side.

For every case of ``benchmarks/leapp_torch_cases.py``:

- LEAPP: trace (``leapp.start`` -> cell -> ``leapp.stop``), ``compile_graph(strict=False)`` with its own
  export (``export_with="jit"``), reload through ``leapp.InferenceManager``, run on fresh inputs of each
  input's kind and dtype, compare with the eager cell (value, shape, dtype). Verdict:
  *faithful*; *wrong* (the exported model runs and differs; "silently" when LEAPP logged nothing at
  WARNING or above while tracing); *fails* (loudly: tracing or compiling raised, compile_graph's replay
  validation failed, which LEAPP's default ``strict=True`` turns into an exception, or the model raised).
- leapp_notebook: ``ln.trace_cell`` in both profiles; its error hazards; its graph (``node.graph`` called
  with torch tensors, NumPy inputs converted with ``torch.from_numpy``) against the eager cell on the same
  fresh inputs. A ``TraceError`` (e.g. torch inputs refused) is *refused*, not silent.

Random cases (``case.random``) compare eager cell and model under the same ``torch.manual_seed``, so a
recorded random op agrees and a baked draw does not. Rule one: wherever LEAPP's export is wrong or
fails, ``profile="leapp"`` must show an error hazard (0 silent).

LEAPP's results do not depend on this package, so they are cached in ``$TMPDIR`` (``--no-cache`` reruns
LEAPP, about a minute, e.g. after upgrading leapp or torch).

    python benchmarks/leapp_torch_comparison.py              # table and counts
    python benchmarks/leapp_torch_comparison.py --case item -v

Exit status: 0 when no construct is silent in either profile, 1 otherwise, 2 when leapp is missing.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import re
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import leapp_notebook as ln  # noqa: E402
from benchmarks.leapp_torch_cases import (  # noqa: E402
    CASES,
    TorchCase,
    agrees,
    cell,
    fresh_inputs,
    make_objects,
    namespace,
    run_eager,
    to_numpy,
)

DEFAULT_CACHE = Path(tempfile.gettempdir()) / "leapp_notebook_torch_cache.json"
SEED = 1000  # + the fresh input's index: the torch seed for random cases


def _key(case: TorchCase) -> str:
    import leapp

    digest = hashlib.sha1()
    for name, value in case.inputs.items():
        arr = to_numpy(value)
        digest.update(f"{name}:{type(value).__name__}:{arr.dtype}:{arr.shape}".encode() + arr.tobytes())
    digest.update(repr(sorted(case.fresh.items())).encode() + repr(case.extra).encode() + bytes([case.random]))
    digest.update(f"{getattr(leapp, '__version__', '?')}:{torch.__version__}:{np.__version__}".encode())
    return json.dumps([case.name, cell(case), digest.hexdigest()[:16]])


def _squash(text: str, limit: int = 160) -> str:
    """An exception or log text on one line: its first line, plus the line saying what is wrong when the first
    line is only a header (``Error compiling model node:``)."""
    lines = [line.strip() for line in str(text).strip().splitlines() if line.strip()]
    if not lines:
        return ""
    head = lines[0]
    if head.endswith(":") and len(lines) > 1:
        head = f"{head} {lines[1]}"
    return head[:limit]


def _graph_facts(graph: str) -> dict[str, Any]:
    """What LEAPP's compiled fx graph holds: baked tensor constants, module calls, the recorded targets."""
    targets = re.findall(r"call_(?:function|method|module)\[target=([^\]]+)\]", graph)
    return {"constants": len(re.findall(r"get_attr\[target=_tensor_constant", graph)),
            "call_module": len(re.findall(r"call_module\[", graph)), "targets": targets}


def leapp_measure(case: TorchCase) -> dict[str, Any]:
    """Real LEAPP 0.7.2 on ``case``: verdict, where it stopped, what it logged, what its graph holds."""
    from benchmarks.leapp_harness import leapp_outputs_for, run_leapp

    objects = {"torch": torch, "nn": torch.nn, "F": torch.nn.functional, **make_objects()}
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()), \
            np.errstate(all="ignore"):
        res = run_leapp(cell(case), case.inputs, objects=objects)
    out: dict[str, Any] = {
        "verdict": "faithful", "stage": "", "detail": "",
        "logged": [_squash(w, 120) for w in res["warnings"]],
        "log_errors": [_squash(m, 120) for level, m in res["log"] if level in ("ERROR", "CRITICAL")
                       or (level.startswith("Level") and "FATAL" not in m)][:3],
        "graph": res["graphs"].get("node", ""), **_graph_facts(res["graphs"].get("node", "")),
        "fresh": "", "backend": "",
    }
    if res["yaml_path"]:
        text = Path(res["yaml_path"]).read_text()
        found = re.search(r"backend:\s*(\S+)", text)
        out["backend"] = found.group(1) if found else ""
    if res["raised"] or res["compile_raised"] or res["run"] is None:
        out.update(verdict="fails", stage="trace" if res["raised"] else "compile",
                   detail=_squash(res["raised"] or res["compile_raised"] or "no model exported"))
        return out
    invalid = {node: ok for node, ok in (res["validation"] or {}).items() if ok is not True}
    # The model on fresh inputs, whatever the validation said (strict=False kept it).
    fresh_verdict, fresh_detail = "faithful", ""
    for k, fresh in enumerate(fresh_inputs(case)):
        seed = SEED + k if case.random else None
        try:
            want = run_eager(case, fresh, seed)
            if seed is not None:
                torch.manual_seed(seed)
            with contextlib.redirect_stderr(io.StringIO()), torch.no_grad():
                got = leapp_outputs_for(res, fresh)
        except Exception as exc:  # noqa: BLE001 - the exported model failed on the fresh input
            fresh_verdict, fresh_detail = "fails", _squash(f"{type(exc).__name__}: {exc}")
            break
        bad = [name for name in case.outputs if not agrees(got[name], want[name])]
        if bad:
            g, w = to_numpy(got[bad[0]]), want[bad[0]]
            fresh_verdict = "wrong"
            fresh_detail = f"{bad[0]}: LEAPP {g.dtype}{list(g.shape)}, eager {w.dtype}{list(w.shape)} on fresh set {k}"
            break
    out["fresh"] = fresh_verdict
    if invalid:
        why = "; ".join(f"{node}: {'mismatch' if ok is False else _squash(ok)}" for node, ok in invalid.items())
        out.update(verdict="fails", stage="validation", detail=f"replay validation failed ({why})")
    elif fresh_verdict != "faithful":
        out.update(verdict=fresh_verdict, stage="run", detail=fresh_detail)
    return out


def ours(case: TorchCase, profile: str) -> dict[str, Any]:
    """Trace with leapp_notebook; its error hazards and its graph's verdict on fresh inputs."""
    ns = namespace(case, case.inputs, ln.annotate)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            trace = ln.trace_cell(cell(case), ns, profile=profile)
    except ln.TraceError as exc:
        return {"errors": [], "hazards": [], "verdict": "refused", "detail": _squash(exc)}
    except Exception as exc:  # noqa: BLE001 - CellError or a crash: loud, never a silent export
        return {"errors": [], "hazards": [], "verdict": "error", "detail": _squash(f"{type(exc).__name__}: {exc}")}
    hazards = [(h.kind, h.severity, h.line) for h in trace.hazards]
    errors = sorted({h.kind for h in trace.hazards if h.severity == "error"})
    node = trace.nodes["node"]
    order = [spec.name for spec in node.inputs]
    names = [spec.name for spec in node.outputs]
    verdict, detail = "faithful", ""
    for k, fresh in enumerate(fresh_inputs(case)):
        seed = SEED + k if case.random else None
        want = run_eager(case, fresh, seed)
        args = [fresh[n].clone() if isinstance(fresh[n], torch.Tensor)
                else torch.from_numpy(np.ascontiguousarray(fresh[n])) for n in order]
        try:
            if seed is not None:
                torch.manual_seed(seed)
            # torch.fx prints the generated code of a failing GraphModule to stderr: keep the table readable
            with torch.no_grad(), contextlib.redirect_stderr(io.StringIO()):
                got = dict(zip(names, node.graph(*args), strict=True))
        except Exception as exc:  # noqa: BLE001
            verdict, detail = "error", _squash(f"{type(exc).__name__}: {exc}")
            break
        bad = [n for n in case.outputs if not agrees(got[n], want[n])]
        if bad:
            verdict, detail = "wrong", f"{bad[0]} differs on fresh set {k}"
            break
    return {"errors": errors, "hazards": hazards, "verdict": verdict, "detail": detail}


def measure_leapp(cases: list[TorchCase], cache_path: Path | None) -> tuple[dict[str, dict[str, Any]], int]:
    """LEAPP's result per case name (from the cache when it has it); and how many came from the cache."""
    cache: dict[str, Any] = {}
    if cache_path is not None and cache_path.exists():
        try:
            cache = json.loads(cache_path.read_text())
        except ValueError:
            cache = {}
    results, hits = {}, 0
    for case in cases:
        key = _key(case)
        if key in cache:
            hits += 1
        else:
            cache[key] = leapp_measure(case)
        results[case.name] = cache[key]
    if cache_path is not None:
        tmp = cache_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(cache, indent=0, sort_keys=True))
        tmp.replace(cache_path)
    return results, hits


def compare(cases: list[TorchCase], cache_path: Path | None = DEFAULT_CACHE,
            profiles: tuple[str, ...] = ("leapp", "full")) -> list[dict[str, Any]]:
    """One row per case: {"case", "leapp": LEAPP's result, "profile=<p>": ours(case, p) per profile}."""
    theirs, _ = measure_leapp(cases, cache_path)
    return [{"case": case, "leapp": theirs[case.name], **{f"profile={p}": ours(case, p) for p in profiles}}
            for case in cases]


def said(result: dict[str, Any]) -> str:
    """How loudly LEAPP told the user: where it raised, or what it logged while tracing."""
    if result["verdict"] == "fails":
        return f"raised at {result['stage']}"
    if result["logged"]:
        return "logged: " + result["logged"][0][:40]
    return "silent"


def tally(rows: list[dict[str, Any]]) -> dict[str, int]:
    """The counts the comparison reports (our side only for the profiles present in ``rows``)."""
    t = {v: sum(1 for r in rows if r["leapp"]["verdict"] == v) for v in ("faithful", "wrong", "fails")}
    t["wrong_silently"] = sum(1 for r in rows if r["leapp"]["verdict"] == "wrong" and not r["leapp"]["logged"])
    bad = [r for r in rows if r["leapp"]["verdict"] != "faithful"]
    if rows and "profile=leapp" in rows[0]:
        lp = [r["profile=leapp"] for r in bad]
        t["leapp_flagged"] = sum(1 for o in lp if o["verdict"] != "refused" and o["errors"])
        t["leapp_silent"] = sum(1 for o in lp if o["verdict"] != "refused" and not o["errors"])
        t["leapp_refused"] = sum(1 for r in rows if r["profile=leapp"]["verdict"] == "refused")
    if rows and "profile=full" in rows[0]:
        full = [r["profile=full"] for r in rows]
        t["full_faithful"] = sum(1 for o in full if o["verdict"] == "faithful")
        t["full_silent"] = sum(1 for o in full if o["verdict"] not in ("faithful", "refused") and not o["errors"])
        t["full_refused"] = sum(1 for o in full if o["verdict"] == "refused")
    return t


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", default=[], help="only cases whose name contains this")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help=f"LEAPP results (default {DEFAULT_CACHE})")
    parser.add_argument("--no-cache", action="store_true", help="run LEAPP on every case again")
    parser.add_argument("--leapp-only", action="store_true", help="only LEAPP's side (no leapp_notebook traces)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print details: LEAPP's graph targets, hazards")
    args = parser.parse_args(argv)
    try:
        import leapp  # noqa: F401
    except ImportError:
        print("leapp is not installed: pip install -e '.[bench]'")
        return 2
    warnings.simplefilter("ignore")
    cases = [c for c in CASES if not args.case or any(s in c.name for s in args.case)]
    if args.no_cache and args.cache.exists():
        args.cache.unlink()
    _, hits = measure_leapp(cases, args.cache)
    rows = compare(cases, args.cache, () if args.leapp_only else ("leapp", "full"))
    width = max(len(c.name) for c in cases)
    if args.leapp_only:
        print(f"{'construct':{width}}  {'LEAPP 0.7.2':11}  {'LEAPP said':30}  consts  detail")
    else:
        print(f"{'construct':{width}}  {'LEAPP 0.7.2':11}  {'LEAPP said':30}  {'profile=leapp errors':34}  "
              "profile=full")
    for row in rows:
        case, t = row["case"], row["leapp"]
        head = f"{case.name:{width}}  {t['verdict']:11}  {said(t)[:30]:30}"
        if args.leapp_only:
            print(f"{head}  {t['constants']:6}  {t['detail'][:100]}")
        else:
            lp, full = row["profile=leapp"], row["profile=full"]
            lp_text = ("refused: " + lp["detail"][:25]) if lp["verdict"] == "refused" else ",".join(lp["errors"]) or "-"
            flag = ""
            if t["verdict"] != "faithful" and lp["verdict"] != "refused" and not lp["errors"]:
                flag = "  <-- LEAPP wrong/fails, no error hazard"
            if full["verdict"] not in ("faithful", "refused") and not full["errors"]:
                flag += f"  <-- full {full['verdict']}, no error hazard"
            print(f"{head}  {lp_text[:34]:34}  {full['verdict']}{flag}")
        if args.verbose:
            print(f"      LEAPP: {t['detail']} | fresh={t['fresh']} consts={t['constants']} targets={t['targets']}")
            if not args.leapp_only:
                for p in ("leapp", "full"):
                    o = row[f"profile={p}"]
                    print(f"      {p}: {o['hazards']} {o['detail']}")
    t = tally(rows)
    print(f"\n{len(rows)} constructs ({hits} LEAPP results from {args.cache}). LEAPP 0.7.2 export: {t['faithful']} "
          f"faithful, {t['wrong']} wrong ({t['wrong_silently']} of them silently), {t['fails']} failing loudly.")
    if args.leapp_only:
        return 0
    print(f"profile=leapp: error hazard on {t['leapp_flagged']} of the {t['wrong'] + t['fails']} LEAPP gets wrong or "
          f"fails on; silent: {t['leapp_silent']}; cases refused by leapp_notebook (TraceError): {t['leapp_refused']}.")
    print(f"profile=full: {t['full_faithful']} of {len(rows)} faithful; silent wrong graphs: {t['full_silent']}; "
          f"refused: {t['full_refused']}.")
    ok = t["leapp_silent"] == 0 and t["full_silent"] == 0 and t["leapp_refused"] == 0 and t["full_refused"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
