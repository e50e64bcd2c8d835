"""The graph's look as data: one entry per vertex category, shared by the DOT, HTML and text renderers.

Colour is never the only cue: every category also has an icon and a short tag printed in the label,
and severity is a line style (errors solid and heavy, warnings dashed). The model copies the entries
it uses into its ``legend``, so front ends (the JupyterLab extension) draw the same look.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Look:
    """How one vertex category is drawn: fill, border, icon and the tag written in its label."""

    category: str
    label: str
    fill: str
    border: str
    icon: str
    tag: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


LOOKS: dict[str, Look] = {
    look.category: look
    for look in [
        Look("input", "node input", "#dbeafe", "#1d4ed8", "▶", "IN"),
        Look("output", "node output (double border)", "#dcfce7", "#15803d", "◉", "OUT"),
        Look("op", "recorded op: NumPy call → torch op", "#ffffff", "#6b7280", "", ""),
        Look("module", "nn.Module called as one node (weights stay parameters)", "#e0f2fe", "#0369a1", "▣",
             "MODULE"),
        Look("constant", "genuine constant", "#e5e7eb", "#9ca3af", "●", "const"),
        Look("baked", "baked constant: trace-time value frozen", "#fee2e2", "#b91c1c", "✖", "BAKED"),
        Look("mismatch", "graph disagrees with NumPy", "#fee2e2", "#b91c1c", "≠", "MISMATCH"),
        Look("training", "module called in training mode", "#ccfbf1", "#0f766e", "⚙", "TRAINING MODE"),
        Look("random", "random op: a new value every run", "#fce7f3", "#be185d", "⚄", "NONDETERMINISTIC"),
        Look("broken", "broken chain: value left the graph", "#ffedd5", "#c2410c", "✂", "BROKEN CHAIN"),
        Look("branch", "data-dependent branch: the graph holds the path taken", "#fef9c3", "#a16207", "⑂",
             "BRANCH"),
        Look("shape", "shape depends on the input values", "#e0e7ff", "#4338ca", "↔", "DATA-DEPENDENT SHAPE"),
        Look("reversed", "reversed slice", "#f3e8ff", "#7e22ce", "⇄", "REVERSED SLICE"),
        Look("portability", "LEAPP 0.7.2 would bake this", "#fef3c7", "#b45309", "⚠", "LEAPP WOULD BAKE"),
        Look("collapsed", "collapsed group of unmarked ops", "#f3f4f6", "#9ca3af", "▸", "ops"),
    ]
}

# The hazard kinds a category stands for; the first matching category wins (most serious first).
CATEGORY_OF_KIND: dict[str, str] = {
    "untraced-call": "baked",
    "untraced-output": "baked",
    "value-extraction": "broken",
    "semantic-mismatch": "mismatch",
    "broken-chain": "broken",
    "data-dependent-branch": "branch",
    "data-dependent-shape": "shape",
    "reversed-slice": "reversed",
    "numpy-scalar": "portability",
    "training-mode": "training",
    "nondeterministic": "random",
}
PRIORITY = ("baked", "mismatch", "training", "random", "broken", "branch", "shape", "reversed", "portability")

SEVERITY_ICON = {"error": "✖", "warning": "⚠"}
# The model's verdict state -> the icon and colour renderers put before its text.
VERDICT_ICON = {"error": "✖", "warning": "⚠", "ok": "✔"}
VERDICT_COLOUR = {"error": "#dc2626", "warning": "#b45309", "ok": "#15803d"}
PROBE_FAILED = "#dc2626"
PROBE_PASSED = "#15803d"
SELECTED = "#2563eb"
