#!/usr/bin/env bash
# Rebuilds the prebuilt JupyterLab extension (leapp_notebook/labextension/) from labextension/ and writes
# the hash of its sources into the built package.json (leappSourceHash), which
# tests/test_labextension_bundle.py checks without Node. Needs Node.js >= 20 and JupyterLab (for jlpm).
# Users never run this: the build is committed. Run it after changing labextension/, then commit both.
#
# The bundler derives module ids from the absolute build path, so the build runs in one fixed folder
# (LEAPP_LABEXTENSION_BUILD_DIR, default below) whatever the checkout's path: every checkout then builds
# the same bytes, and CI can compare its rebuild with the committed one. node_modules stays cached there.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd -P)
work=${LEAPP_LABEXTENSION_BUILD_DIR:-/tmp/leapp-notebook-labextension-build}
mkdir -p "$work/labextension"
# the sources, without the build's own outputs and caches
find "$work/labextension" -mindepth 1 -maxdepth 1 ! -name node_modules ! -name .yarn -exec rm -rf {} +
(cd "$repo/labextension" && find . -mindepth 1 -maxdepth 1 ! -name node_modules ! -name .yarn ! -name lib \
    ! -name tsconfig.tsbuildinfo -exec cp -r {} "$work/labextension/" \;)
rm -rf "$work/leapp_notebook"
mkdir -p "$work/leapp_notebook"
cd "$work/labextension"
# --immutable: install exactly what yarn.lock pins (add dependencies with `jlpm add` in labextension/,
# which updates the lock this copies).
jlpm install --immutable >/dev/null
jlpm build:prod
rm -rf "$repo/leapp_notebook/labextension"
cp -r "$work/leapp_notebook/labextension" "$repo/leapp_notebook/labextension"
echo "built $repo/leapp_notebook/labextension (in $work)"
