"""Filesystems: the profile table (data: the only place that names a filesystem) and the
drivers that can run each one here (kernel, FUSE, guest kernels), found by probing.
"""
