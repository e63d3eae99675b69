#!/usr/bin/env bash
# Install what fsarena needs on Debian: apt packages, then a venv in .venv with
# the package (editable) and its dependencies. Idempotent; `--dev` adds the
# test tools. Re-run automatically by ./fsarena when pyproject.toml changes.
#
# One line per step on stderr (what is installed, how many, and why); apt's and
# pip's own output goes to .venv/setup.log, whose path and last lines are printed
# when a step fails. Nothing at all is printed when there is nothing to do.
# FSARENA_SETUP_APT_LISTS (files separated by ':') replaces the package lists:
# for tests of this script.
set -euo pipefail
here="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
venv="$here/.venv"
log="$venv/setup.log"
extra=""
stamp="$venv/.setup-runtime"
lists=("$here/scripts/apt-packages.txt")
if [ "${1:-}" = "--dev" ]; then
  extra="[dev]"; stamp="$venv/.setup-dev"
  lists+=("$here/scripts/apt-packages-dev.txt")  # test-only packages: the runtime stays lean
fi
if [ -n "${FSARENA_SETUP_APT_LISTS:-}" ]; then
  IFS=: read -r -a lists <<<"$FSARENA_SETUP_APT_LISTS"
fi

say() { echo "fsarena setup: $*" >&2; }

# step WHAT COMMAND...: say what is done, run it with its output in the log; on failure,
# say where the log is and quote its end.
step() {
  local what="$1"; shift
  say "$what"
  printf '\n== %s: %s\n$ %s\n' "$(date -u +%FT%TZ)" "$what" "$*" >>"$log"
  if ! "$@" >>"$log" 2>&1; then
    say "FAILED: $what. The full log is $log; it ends:"
    tail -n 5 "$log" | sed 's/^/  | /' >&2
    exit 1
  fi
}

missing=()
while read -r pkg; do
  case "$pkg" in ''|'#'*) continue ;; esac
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$pkg")
done < <(cat "${lists[@]}")

mkdir -p "$venv"
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    say "missing Debian packages: ${missing[*]}; run as root (sudo) so they can be installed"
    exit 2
  fi
  export DEBIAN_FRONTEND=noninteractive
  n="${#missing[@]} Debian package"; [ ${#missing[@]} -eq 1 ] || n+="s"
  # Wait for another apt/dpkg run rather than failing on its lock.
  step "updating apt's package lists ($n to install)" \
    apt-get -o DPkg::Lock::Timeout=600 update -q
  step "installing $n (the filesystems' tools, the tasks' programs${extra:+, test tools}): ${missing[*]}" \
    apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${missing[@]}"
fi

if [ ! -x "$venv/bin/python" ]; then
  step "creating the Python environment $venv" /usr/bin/python3 -m venv "$venv"
fi
if [ ! -f "$stamp" ] || [ "$here/pyproject.toml" -nt "$stamp" ]; then
  deps=$("$venv/bin/python" - "$here/pyproject.toml" "${extra:+dev}" <<'EOF'
import sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
dev = project.get("optional-dependencies", {}).get("dev", []) if sys.argv[2] else []
print(len(project.get("dependencies", [])) + len(dev))
EOF
)
  step "upgrading pip in $venv" \
    "$venv/bin/python" -m pip install --disable-pip-version-check --upgrade pip
  step "installing fsarena and its $deps Python dependencies${extra:+ (with the test tools)} into $venv" \
    "$venv/bin/python" -m pip install --disable-pip-version-check -e "$here$extra"
  touch "$stamp"
  # A dev install holds everything a runtime install does.
  [ -z "$extra" ] || touch "$venv/.setup-runtime"
fi
# Native helpers (native/*.c) into the venv's bin; make rebuilds only what changed.
if ! make -q -s -C "$here/native" BINDIR="$venv/bin" 2>/dev/null; then
  step "building fsarena's native helpers (native/*.c: the file generator, the copy verifier, the timing launcher, the power-loss test's logger)" \
    make -s -C "$here/native" BINDIR="$venv/bin"
fi
touch "$venv/.setup-native"
# The man page, from the CLI of this tree: a build writes it (scripts/hatch_build.py), but an
# editable install's copy would go stale when the CLI changes without a reinstall.
page="$venv/share/man/man1/fsarena.1"
if [ ! -f "$page" ] || [ -n "$(find "$here/src/fsarena/cli" -newer "$page" -name '*.py' 2>/dev/null | head -n 1)" ]; then
  mkdir -p "$(dirname "$page")"
  step "writing the man page from the CLI ($page: man fsarena)" \
    "$venv/bin/python" -c 'import sys; from fsarena.cli.commands import main; from fsarena.cli.manpage import render; open(sys.argv[1], "w").write(render(main))' "$page"
fi
