#!/usr/bin/env bash
# Install what fsarena needs on Debian: apt packages, then a venv in .venv with
# the package (editable) and its dependencies. Idempotent; `--dev` adds the
# test tools. Re-run automatically by ./fsarena when pyproject.toml changes.
set -euo pipefail
here="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
venv="$here/.venv"
extra=""
stamp="$venv/.setup-runtime"
lists=("$here/scripts/apt-packages.txt")
if [ "${1:-}" = "--dev" ]; then
  extra="[dev]"; stamp="$venv/.setup-dev"
  lists+=("$here/scripts/apt-packages-dev.txt")  # test-only packages: the runtime stays lean
fi

missing=()
while read -r pkg; do
  case "$pkg" in ''|'#'*) continue ;; esac
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$pkg")
done < <(cat "${lists[@]}")

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "fsarena setup: missing Debian packages: ${missing[*]}; run as root (sudo) so they can be installed" >&2
    exit 2
  fi
  echo "fsarena setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  # Wait for another apt/dpkg run rather than failing on its lock.
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

if [ ! -x "$venv/bin/python" ]; then
  echo "fsarena setup: creating $venv" >&2
  /usr/bin/python3 -m venv "$venv"
fi
if [ ! -f "$stamp" ] || [ "$here/pyproject.toml" -nt "$stamp" ]; then
  echo "fsarena setup: installing Python packages${extra:+ (with test tools)}" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -e "$here$extra" >&2
  touch "$stamp"
  # A dev install holds everything a runtime install does.
  [ -z "$extra" ] || touch "$venv/.setup-runtime"
fi
# Native helpers (native/*.c) into the venv's bin; make rebuilds only what changed.
make -s -C "$here/native" BINDIR="$venv/bin" >&2
touch "$venv/.setup-native"
