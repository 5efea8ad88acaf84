"""`python -m numgrad` runs the benchmark."""
from .bench import main

main()
