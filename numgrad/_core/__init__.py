"""The bottom layer: dtypes, devices, shapes, torch's messages, hooks, per-thread state. Imports no numgrad code."""
