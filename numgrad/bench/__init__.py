"""The benchmark against torch: `python -m numgrad.bench` (cpu.py), `--device cuda` (cuda.py), the workloads."""
