#!/usr/bin/env bash
# Rebuilds the prebuilt JupyterLab extension (leapp_notebook/labextension/) from labextension/ and writes
# the hash of its sources into the built package.json (leappSourceHash), which
# tests/test_labextension.py checks without Node. Needs Node.js >= 20 and JupyterLab (for jlpm).
# Users never run this: the build is committed. Run it after changing labextension/, then commit both.
set -euo pipefail
cd "$(dirname "$0")/../labextension"
# --immutable: install exactly what yarn.lock pins (after `jlpm add`, the lock is already updated).
jlpm install --immutable >/dev/null
jlpm build:prod
