"""Backward functions written by hand from the math, in numpy, to check the generated ones."""
