"""The differential fuzz test (issue 13): random straight-line programs run in torch and in numgrad (fused and unfused), compared."""
