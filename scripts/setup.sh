#!/usr/bin/env bash
# Installs everything leapp_notebook's demo and tests need on a fresh machine.
# torch goes first, pinned to the CPU build: a bare torch requirement would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet --disable-pip-version-check torch==2.13.0
python -m pip install --quiet --disable-pip-version-check -e ".[dev,onnx,bench,notebook]"
if ! command -v dot >/dev/null || ! [ -x /usr/bin/chromium ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz chromium >/dev/null
    else
        echo "note: install Graphviz (dot) and Chromium for SVG rendering and the browser tests" >&2
    fi
fi
# The JupyterLab extension ships prebuilt in leapp_notebook/labextension (no node needed): link it where
# JupyterLab looks for extensions. --overwrite replaces an earlier link or copy, so re-running is safe.
if command -v jupyter-builder >/dev/null; then
    jupyter-builder develop --overwrite --log-level=WARN .
else
    jupyter labextension develop --overwrite --log-level=WARN .
fi
