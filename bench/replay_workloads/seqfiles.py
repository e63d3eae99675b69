"""Sequential large files: write two files in 1 MiB writes, fsync each, read one back.

Run in the directory it writes. MIB (default 192) MiB per file; the data is
half random, half zeros per block (it compresses to about half).
"""

import os
import sys

MIB = int(sys.argv[1]) if len(sys.argv) > 1 else 192
block = os.urandom(512 << 10) + bytes(512 << 10)
for name in ("big1.dat", "big2.dat"):
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for _ in range(MIB):
        os.write(fd, block)
    os.fsync(fd)
    os.close(fd)
fd = os.open("big1.dat", os.O_RDONLY)
while os.read(fd, 1 << 20):
    pass
os.close(fd)
os.unlink("big2.dat")
