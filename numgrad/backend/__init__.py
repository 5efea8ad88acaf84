"""numgrad/backend"""
