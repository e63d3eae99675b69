#!/usr/bin/env bash
# The qemu guest (qemu, a static busybox, Debian's kernel unpacked under
# /var/cache/fsarena/qemu-guest): `fsarena setup-guest`, which says each step with
# its size and boots the guest once. `fsarena run` does this itself when a
# filesystem needs a guest kernel and none boots here; ./run-tests does it so
# that every guest test runs. Idempotent.
set -euo pipefail
here="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
exec "$here/fsarena" setup-guest "$@"
