"""`python -m numgrad.bench` runs the benchmark."""
from .cpu import main

main()
