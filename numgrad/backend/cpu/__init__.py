"""numgrad/backend/cpu"""
