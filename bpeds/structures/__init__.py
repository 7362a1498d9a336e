"""Data structures for BPE training; each importable on its own."""
