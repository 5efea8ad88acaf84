"""`python -m numgrad` runs the benchmark."""
from .bench.cpu import main

main()
