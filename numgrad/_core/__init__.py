"""The bottom layer: dtypes, devices, shapes, torch's messages, hooks and per-thread state; imports nothing of numgrad."""
