# Sourced (not run: make test runs c-tests/*.sh) by the c-tests scripts that count checks one
# by one: runs from the repository's top (ROOT), with a temporary folder (TMP, removed at exit),
# the C compiler (CC), no BIREN_* variable from the caller's environment, two compute units, and
# the counters with pass/fail.
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
ROOT=$PWD
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
CC=${CC:-cc}
for v in $(compgen -e); do
  case $v in BIREN_*) unset "$v" ;; esac
done
export BIREN_COMPUTE_UNITS=2

passed=0
failed=0
fail() { echo "FAIL  $1"; failed=$((failed + 1)); }
pass() { passed=$((passed + 1)); }
