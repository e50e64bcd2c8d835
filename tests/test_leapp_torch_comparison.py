"""Against real LEAPP 0.7.2 (optional), torch and mixed NumPy/torch nodes (benchmarks/leapp_torch_cases.py).

LEAPP's side pins what docs/leapp-0.7.2-behaviour.md ("Torch and mixed nodes") says it does: which
constructs it records, which it bakes with nothing logged, which it refuses loudly. Our side asserts rule
one for the torch engine: wherever LEAPP's export is wrong or fails, ``profile="leapp"`` shows an error
hazard.
"""

import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("leapp")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.leapp_torch_cases import CASES  # noqa: E402
from benchmarks.leapp_torch_comparison import compare, measure_leapp, tally  # noqa: E402

BY_NAME = {case.name: case for case in CASES}


@pytest.fixture(scope="module")
def leapp_results():
    """Real LEAPP on every case, measured now (no cache): about ten seconds."""
    results, _ = measure_leapp(CASES, None)
    return results


def test_the_comparison_covers_at_least_45_torch_and_mixed_constructs():
    assert len(CASES) >= 45
    assert len(BY_NAME) == len(CASES), "case names must be unique (they key the cache and the table)"
    kinds = {type(v).__module__.split(".")[0] for case in CASES for v in case.inputs.values()}
    assert kinds == {"numpy", "torch"}
    dtypes = {str(getattr(v, "dtype", "")) for case in CASES for v in case.inputs.values()}
    assert {"float32", "torch.float32", "torch.int64", "torch.int32", "torch.bool", "bool"} <= dtypes


@pytest.mark.parametrize("name", [
    "float(t.max()) scaling", "t.item()", "t.tolist()", "int(t.argmax()) as an index", "float(x[0])",
    "x + torch.rand(4)", "x + torch.randn(4)", "x.data * 2 (.data bypass)",
    "BatchNorm policy in training mode (batch 3)"])
def test_leapp_exports_these_wrong_and_logs_nothing(leapp_results, name):
    result = leapp_results[name]
    assert result["verdict"] == "wrong", result["detail"]
    assert result["logged"] == [], result["logged"]
    assert result["stage"] == "run"  # replay validation passed: LEAPP raised nothing


def test_float_of_a_traced_max_is_an_inlined_literal(leapp_results):
    result = leapp_results["float(t.max()) scaling"]
    assert result["targets"] == ["torch.div"] and result["constants"] == 0
    # the trace input's max(|x|) is 1.2: the exported graph divides by that literal for every input
    assert re.search(r"torch\.div\]\(args = \(%x, 1\.2000000476837158\)", result["graph"])


def test_a_random_op_without_traced_argument_is_baked(leapp_results):
    result = leapp_results["x + torch.rand(4)"]
    assert result["constants"] == 1 and result["targets"] == ["torch.add"]


def test_data_dependent_branch_is_logged_at_error_but_exported(leapp_results):
    for name in ("if t.sum() > 0:", "bool(t) via `and`"):
        result = leapp_results[name]
        assert result["verdict"] == "wrong"
        assert result["logged"] and result["logged"][0].startswith("Attempted to use TracedTensor")


@pytest.mark.parametrize("name,stage,detail", [
    ("torch.as_tensor(x, dtype=torch.float64) * 2", "validation", "Float did not match Double"),
    ("torch.tensor(x.tolist()) * 2", "trace", "received non-traced tensors: {'Tensor'}"),
    ("x * np.float32(2.0) (NumPy scalar operand)", "trace", "NotImplementedError: argument of type"),
    ("bool NumPy mask -> torch: ~m & (x > 0)", "compile", "__invert__"),
    ("x + torch.randn_like(x)", "validation", "mismatch"),
    ("Dropout policy left in training mode", "validation", "mismatch"),
])
def test_leapp_refuses_these_loudly(leapp_results, name, stage, detail):
    result = leapp_results[name]
    assert (result["verdict"], result["stage"]) == ("fails", stage), result["detail"]
    assert detail in result["detail"]


def test_the_dtype_argument_of_as_tensor_is_lost_in_the_graph(leapp_results):
    result = leapp_results["torch.as_tensor(x, dtype=torch.float64) * 2"]
    assert result["targets"] == ["torch.mul"]  # no cast recorded
    assert result["fresh"] == "wrong"          # with strict=False the model returns float32


def test_recorded_random_ops_match_eager_under_the_same_seed(leapp_results):
    # LEAPP records randn_like / dropout(training=True): only its replay validation objects to them
    for name in ("x + torch.randn_like(x)", "F.dropout(x, 0.5, training=True)", "Dropout policy left in training mode"):
        assert leapp_results[name]["fresh"] == "faithful", name


@pytest.mark.parametrize("name", [
    "np norm -> from_numpy -> MLP (no_grad) -> tanh*2 -> .detach().numpy()",
    "np norm -> from_numpy -> MLP -> np.asarray(t) -> np.clip",
    "torch obs -> .numpy() np pre -> from_numpy -> MLP",
    "MLP output requires grad (no no_grad)", "MLP under torch.inference_mode()", "GRUCell(x, h) with two outputs",
    "in-place add_ on the input", "torch.gather(x, 0, i) (int64 index input)", "x.detach().cpu() * 2",
    "np.array(x) (copy) of a torch input", "x.contiguous() * 2"])
def test_leapp_records_these_faithfully(leapp_results, name):
    assert leapp_results[name]["verdict"] == "faithful", leapp_results[name]["detail"]


def test_module_calls_are_flattened_with_weights_as_constants(leapp_results):
    result = leapp_results["np norm -> from_numpy -> MLP (no_grad) -> tanh*2 -> .detach().numpy()"]
    assert result["call_module"] == 0
    assert result["constants"] == 4  # two Linear layers: weight and bias each
    assert result["targets"].count("torch._C._nn.linear") == 2
    # the crossings record nothing: NumPy pre-processing, the policy and post-processing form one chain
    assert result["targets"][:2] == ["torch.sub", "torch.div"]


def test_the_documented_counts_are_the_measured_ones(leapp_results):
    counts = {v: sum(1 for r in leapp_results.values() if r["verdict"] == v) for v in ("faithful", "wrong", "fails")}
    silent = sum(1 for r in leapp_results.values() if r["verdict"] == "wrong" and not r["logged"])
    doc = (ROOT / "docs" / "leapp-0.7.2-behaviour.md").read_text()
    assert (f"**{counts['faithful']} faithful, {counts['wrong']} wrong ({silent} of them with nothing logged), "
            f"{counts['fails']} failing loudly**") in doc
    assert f"the {len(CASES)} cells of" in doc


def test_profile_leapp_flags_every_construct_leapp_gets_wrong():
    rows = compare(CASES, None)
    counts = tally(rows)
    silent = [r["case"].name for r in rows if r["leapp"]["verdict"] != "faithful"
              and r["profile=leapp"]["verdict"] != "refused" and not r["profile=leapp"]["errors"]]
    refused = [(r["case"].name, r["profile=leapp"]["detail"]) for r in rows
               if r["profile=leapp"]["verdict"] == "refused"]
    full_silent = [(r["case"].name, r["profile=full"]["verdict"]) for r in rows
                   if r["profile=full"]["verdict"] not in ("faithful", "refused") and not r["profile=full"]["errors"]]
    assert silent == [], f"LEAPP wrong or failing, profile='leapp' shows no error hazard: {silent}"
    assert refused == [], f"cases leapp_notebook refuses with a TraceError: {refused}"
    assert full_silent == [], f"profile='full' wrong without an error hazard: {full_silent}"
    assert counts["leapp_flagged"] == counts["wrong"] + counts["fails"]
