#!/usr/bin/env bash
# Python virtual environments for `make test`, made with what a fresh machine has.
#
#   tools/python-venv.sh create DIR              a new, empty venv in DIR (replacing DIR)
#   tools/python-venv.sh tools DIR REQS STAMP    the project's venv: created if missing or
#                                                broken, REQS installed, then STAMP touched
#
# A venv needs the interpreter's ensurepip, which Debian and Ubuntu split into the python3-venv
# package. Without it: as root with apt-get, python3-venv is installed; else, if the
# interpreter has pip, the venv is made --without-pip and that pip installs pip into it;
# else this fails saying what to install. PYTHON (default python3) is the interpreter.
set -euo pipefail

PYTHON="${PYTHON:-python3}"

say() { echo "python-venv: $*" >&2; }

as_root_with_apt() { [ "$(id -u)" -eq 0 ] && command -v apt-get > /dev/null; }

apt_install() {
  say "installing $* with apt-get"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" > /dev/null
}

need_python() {
  command -v "$PYTHON" > /dev/null && return
  if as_root_with_apt; then
    apt_install python3 python3-venv
  else
    say "$PYTHON not found: install Python 3 (e.g. sudo apt-get install python3 python3-venv)"
    exit 1
  fi
}

has_ensurepip() { "$PYTHON" -c 'import ensurepip, venv' > /dev/null 2>&1; }

create() {
  local dir="$1"
  need_python
  rm -rf "$dir"
  if ! has_ensurepip && as_root_with_apt; then
    local version
    version="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    # python3-venv follows the distribution's default python3; python3.X-venv names this one.
    apt_install "python$version-venv" || apt_install python3-venv || true
  fi
  if has_ensurepip; then
    "$PYTHON" -m venv "$dir"
  elif "$PYTHON" -m pip --version > /dev/null 2>&1; then
    say "$PYTHON has no ensurepip: making the venv without pip and installing pip into it"
    "$PYTHON" -m venv --without-pip "$dir"
    "$PYTHON" -m pip --python "$dir/bin/python" install --quiet pip
  else
    say "$PYTHON can make no virtual environment: it has neither ensurepip nor pip."
    say "Install python3-venv (Debian, Ubuntu: sudo apt-get install python3-venv) and rerun."
    exit 1
  fi
  "$dir/bin/python" -m pip --version > /dev/null
}

case "${1:-}" in
  create)
    [ $# -eq 2 ] || { say "usage: $0 create DIR"; exit 2; }
    create "$2"
    ;;
  tools)
    [ $# -eq 4 ] || { say "usage: $0 tools DIR REQS STAMP"; exit 2; }
    dir="$2" reqs="$3" stamp="$4"
    if ! "$dir/bin/python" -m pip --version > /dev/null 2>&1; then
      say "creating $dir"
      create "$dir"
    fi
    say "installing $reqs into $dir (once; pip needs the network or its cache)"
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check -r "$reqs"
    rm -f "$dir"/.requirements-*
    touch "$stamp"
    ;;
  *)
    say "usage: $0 create DIR | tools DIR REQS STAMP"
    exit 2
    ;;
esac
