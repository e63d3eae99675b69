"""Fsync-heavy: a log writer that syncs every record, rotating its log every 500 records.

Run in the directory it writes (fsarena runs a --command there); writes log.txt and
its rotations log.1 .. log.N. RECORDS (default 6000) records of 200 bytes. With
--rate, it prints the file-system calls it made per second of its loop (the
capture overhead benchmark, bench/capture_overhead.py, reads it).
"""

import os
import sys
import time

RECORDS = int(sys.argv[1]) if len(sys.argv) > 1 else 6000
started = time.monotonic()
ROTATE = 500
record = b"x" * 199 + b"\n"
fd = os.open("log.txt", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
for i in range(1, RECORDS + 1):
    os.write(fd, record)
    os.fsync(fd)
    if i % ROTATE == 0:
        os.close(fd)
        os.rename("log.txt", f"log.{i // ROTATE}")
        fd = os.open("log.txt", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
os.close(fd)
if "--rate" in sys.argv:
    calls = 2 * RECORDS + 3 * (RECORDS // ROTATE) + 2  # write + fsync; close, rename, open
    print(f"calls_per_s {calls / (time.monotonic() - started):.1f}")
