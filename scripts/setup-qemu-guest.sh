#!/usr/bin/env bash
# Optional: what the kvm and qemu guest drivers need (filesystems that neither the
# host kernel nor User-Mode Linux has, e.g. exfat): qemu, a static busybox for the
# guest's initramfs, kmod (depmod), and Debian's current kernel image, unpacked
# (not installed: the host's kernel is untouched) into $FSARENA_QEMU_GUEST_DIR
# (default /var/cache/fsarena/qemu-guest). About 100 MB of packages and 400 MB
# unpacked, so ./fsarena's own setup does not do it; `fsarena check` names this
# script when a filesystem needs it. Idempotent.
set -euo pipefail
dest="${FSARENA_QEMU_GUEST_DIR:-/var/cache/fsarena/qemu-guest}"
if [ "$(id -u)" -ne 0 ]; then
  echo "setup-qemu-guest: run as root (apt-get, depmod)" >&2
  exit 2
fi
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
  qemu-system-x86 busybox-static kmod >&2
pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
[ -n "$pkg" ] || { echo "setup-qemu-guest: no linux-image-amd64 in apt's lists" >&2; exit 2; }
version="${pkg#linux-image-}"
if [ -f "$dest/$version/vmlinuz" ] && [ -f "$dest/$version/lib/modules/$version/modules.dep" ]; then
  echo "setup-qemu-guest: $dest/$version is ready" >&2
  exit 0
fi
tmp=$(mktemp -d /var/tmp/fsarena-kernel.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && chown _apt "$tmp" 2>/dev/null; apt-get download -qq "$pkg") >&2
dpkg-deb -x "$tmp"/*.deb "$tmp/x"
mkdir -p "$dest/$version/lib/modules"
rm -rf "$dest/$version/lib/modules/$version"
mv "$tmp/x/lib/modules/$version" "$dest/$version/lib/modules/"
depmod -b "$dest/$version" "$version"
cp "$tmp/x/boot/vmlinuz-$version" "$dest/$version/vmlinuz.tmp"
mv "$dest/$version/vmlinuz.tmp" "$dest/$version/vmlinuz"  # last: marks the directory complete
echo "setup-qemu-guest: Debian's kernel $version unpacked into $dest/$version" >&2
