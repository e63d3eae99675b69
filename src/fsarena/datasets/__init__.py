"""Datasets: seeded specs, manifests and verification, generators, the real Linux source,
git history, Debian packages, the user's own directory, and server workloads' parameters;
made by themselves (making.py), not through the measurement seam.
"""
