"""numgrad/backend/cuda"""
