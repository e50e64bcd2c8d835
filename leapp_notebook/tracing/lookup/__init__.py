"""The lookup's builders, by family; the table itself is ``tracing/ops.py``."""
