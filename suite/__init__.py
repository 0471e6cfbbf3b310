"""solbench: a portable multi-backend GPU kernel benchmark suite."""

__version__ = "0.1.0"
