#!/usr/bin/env bash
# Issue 28: what a user's install costs (not the test install). Builds the wheel, installs
# it with its three dependencies into a new virtual environment without the system's site
# packages, and prints the wheel's size, the install's wall and CPU time and the size on disk
# of ptxgen alone and of everything installed (not what venv itself puts there). Run from anywhere;
# pip's cache (a second run) makes the install time mostly unpacking.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
python3 -m pip wheel -q --no-deps -w "$tmp/dist" "$repo" 2>/dev/null
wheel="$(ls "$tmp"/dist/ptxgen-*.whl)"
python3 -m venv "$tmp/venv"
TIMEFORMAT='install time     %R s wall, %U + %S s CPU (pip install the wheel and pyyaml, jinja2, jsonschema)'
time "$tmp/venv/bin/pip" install -q --disable-pip-version-check "$wheel" 2>/dev/null
site="$("$tmp/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
printf 'wheel            %s bytes (%s)\n' "$(stat -c %s "$wheel")" "$(basename "$wheel")"
printf 'ptxgen on disk   %s\n' "$(du -sh "$site/ptxgen" | cut -f1)"
printf 'all installed    %s (site-packages without what venv puts there: pip, setuptools)\n' \
  "$(du -sh --exclude='pip' --exclude='pip-*' --exclude='setuptools*' --exclude=pkg_resources \
     --exclude=_distutils_hack --exclude=distutils-precedence.pth "$site" | cut -f1)"
"$tmp/venv/bin/ptxgen" --version
rm -rf "$tmp"
