"""numgrad/bench"""
