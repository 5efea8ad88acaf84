"""numgrad/spec"""
