"""The seed's np.interp node, traced as LEAPP 0.7.2 would record it, then with profile="full"."""

import numpy as np

import leapp_notebook as ln

CELL = '''\
state = annotate.input_tensors("node", {"state": raw_state})
# np.interp has no torch equivalent, so this line is not recorded.
calibrated = np.interp(state, CALIB_IN, CALIB_OUT)
result = state * 0.1 + calibrated
annotate.output_tensors("node", {"result": result}, export_with="jit")
'''

namespace = {
    "np": np,
    "raw_state": np.array([0.1, 0.4, 0.7, 0.9], np.float32),
    "CALIB_IN": np.array([0.0, 0.5, 1.0]),
    "CALIB_OUT": np.array([0.0, 2.0, 10.0]),
}

for profile in ("leapp", "full"):
    trace = ln.trace_cell(CELL, dict(namespace), profile=profile)
    print(trace)
    for hazard in trace.hazards:
        print(f"  line {hazard.line} [{hazard.severity}] {hazard.kind}: {hazard.message}")
        print(f"    fix: {hazard.fix}")
    print()
