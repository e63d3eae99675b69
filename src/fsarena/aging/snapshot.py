"""Snapshots of an aged image: reflink where the host filesystem can, else a sparse copy.

Aging writes several times the image's size; it is done once per filesystem
and seed, and every repetition restores the aged image from its snapshot.
Whether the host filesystem can reflink is probed by trying (cp
--reflink=always), never guessed from its name.
"""

from __future__ import annotations

import subprocess

from fsarena.errors import FsarenaError


def copy_image(source: str, dest: str) -> str:
    """Copy an image file, sparse; returns the method that worked ("reflink" | "sparse copy")."""
    tried = subprocess.run(
        ["cp", "--reflink=always", source, dest], capture_output=True, text=True, check=False
    )
    if tried.returncode == 0:
        return "reflink"
    done = subprocess.run(
        ["cp", "--sparse=always", source, dest], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise FsarenaError(
            f"cannot copy {source} to {dest}: {done.stderr.strip()}; is the work directory full?"
        )
    return "sparse copy"
