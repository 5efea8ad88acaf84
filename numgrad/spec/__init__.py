"""What each op is, declared once for every backend: the op table and the reductions (table.py)."""
