"""The one compiled part: RecordingGraph.flush's loop in C (leapp_notebook/tracing/_flush.c). Optional: where no C
compiler is found the build goes on without it and the same loop runs in Python (tracing/builder.py)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("leapp_notebook.tracing._flush", ["leapp_notebook/tracing/_flush.c"],
                             extra_compile_args=["-O2"], optional=True)])
