"""gradgen's code generator: derivatives.yaml -> generated/ (see `python -m codegen --help`)."""
