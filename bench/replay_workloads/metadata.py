"""Metadata-heavy: create, stat, rename and unlink many small files in many directories.

Run in the directory it writes. FILES (default 4000) files of 1 KiB in 40 directories;
each is renamed into a second tree, stat'ed, and half are unlinked again.
"""

import os
import sys

FILES = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
DIRS = 40
body = b"m" * 1024
for d in range(DIRS):
    os.makedirs(f"a/{d}", exist_ok=True)
    os.makedirs(f"b/{d}", exist_ok=True)
for i in range(FILES):
    with open(f"a/{i % DIRS}/f{i}", "wb") as f:
        f.write(body)
for i in range(FILES):
    os.rename(f"a/{i % DIRS}/f{i}", f"b/{i % DIRS}/f{i}")
for i in range(FILES):
    os.stat(f"b/{i % DIRS}/f{i}")
for i in range(0, FILES, 2):
    os.unlink(f"b/{i % DIRS}/f{i}")
