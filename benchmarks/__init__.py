"""Command-line benchmarks: ``python -m benchmarks.kernels`` times the norm kernels."""
