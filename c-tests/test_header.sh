#!/usr/bin/env bash
# The header as users meet it (STYLE "The header", SPEC §0):
#  - it compiles cleanly with -std=c99 -Wall -Wextra -Wpedantic -Werror, as C++11 with the same
#    warnings, and when included twice (in two translation units linked together), with and
#    without BIREN_NO_INLINE_BUILTINS; the result runs (a BIREN_LAUNCH kernel included);
#  - the seed's CHECK_BIREN macro pasted after the include compiles without a warning (C and C++),
#    the seed's two lines run as written, and the macro catches a copy past the end;
#  - every function the library exports is declared, and every function the header declares
#    (static inline helpers aside) is exported: `nm -D` against the compiler's own list of the
#    header's declarations (gcc -aux-info), taken with and without BIREN_NO_INLINE_BUILTINS.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

CC=${CC:-cc}
CXX=${CXX:-g++}
LIB=$ROOT/target/release/libbiren_runtime.so
CFLAGS=(-std=c99 -Wall -Wextra -Wpedantic -Werror -O2 -Iinclude -pthread)
CXXFLAGS=(-std=c++11 -Wall -Wextra -Wpedantic -Werror -O2 -Iinclude -pthread)
LDLIBS=(-L"$ROOT/target/release" -Wl,-rpath,"$ROOT/target/release" -lbiren_runtime -pthread)
P=c-tests/progs

passed=0
failed=0
current=""
problems=""
note() { problems+="    $current: $*"$'\n'; }
start() { current=$1; problems=""; }
finish() {
  if [ -z "$problems" ]; then
    passed=$((passed + 1)); echo "  ok    $current"
  else
    failed=$((failed + 1)); echo "  FAIL  $current"; printf '%s' "$problems" >&2
  fi
}
# build OUT COMPILER FLAGS... : compiles; any diagnostic (even a warning) is a failure.
build() {
  local out=$1; shift
  if ! "$@" -o "$out" >"$TMP/diag" 2>&1 || [ -s "$TMP/diag" ]; then
    note "$(printf '%q ' "$@")"$'\n'"$(sed 's/^/      /' "$TMP/diag")"
    return 1
  fi
}
# runs BIN: it must exit 0.
runs() {
  "$@" >"$TMP/run.out" 2>"$TMP/run.err"
  local rc=$?
  [ $rc -eq 0 ] || note "$* exited $rc: $(cat "$TMP/run.err")"
}

echo "header"

start c99_strict_included_twice
for mode in "" -DBIREN_NO_INLINE_BUILTINS; do
  build "$TMP/twice_c$mode" "$CC" "${CFLAGS[@]}" $mode $P/header_twice.c $P/header_twice_other.c "${LDLIBS[@]}" &&
    runs "$TMP/twice_c$mode"
done
finish

start cxx11_strict_included_twice
for mode in "" -DBIREN_NO_INLINE_BUILTINS; do
  build "$TMP/twice_cxx$mode" "$CXX" "${CXXFLAGS[@]}" $mode -x c++ $P/header_twice.c $P/header_twice_other.c -x none "${LDLIBS[@]}" &&
    runs "$TMP/twice_cxx$mode"
done
finish

start seed_check_biren_macro_and_snippet
build "$TMP/seed_c" "$CC" "${CFLAGS[@]}" $P/seed_snippet.c "${LDLIBS[@]}" && {
  runs "$TMP/seed_c"
  grep -qx "seed snippet ok" "$TMP/run.out" || note "the snippet did not run to its end"
  # The macro turns a failing call into a message and exit(EXIT_FAILURE); nothing else.
  "$TMP/seed_c" x >"$TMP/x.out" 2>"$TMP/x.err"
  rc=$?
  [ $rc -eq 1 ] || note "a copy past the end: CHECK_BIREN exit status $rc, expected 1"
  grep -q "^BIREN error 7 at $P/seed_snippet.c:[0-9]*$" "$TMP/x.err" ||
    note "a copy past the end: expected 'BIREN error 7 at ...' (OUT_OF_BOUNDS) on stderr, got: $(cat "$TMP/x.err")"
}
build "$TMP/seed_cxx" "$CXX" "${CXXFLAGS[@]}" -x c++ $P/seed_snippet.c -x none "${LDLIBS[@]}" && runs "$TMP/seed_cxx"
finish

start exports_match_declarations
# Every function the header declares: extern prototypes in either mode. Static inline helpers
# (birenDim3, and the built-ins by default) are not exports unless also declared extern.
declared() {
  gcc -std=c99 -Iinclude "$@" -fsyntax-only -aux-info "$TMP/aux" $P/list_decls.c || note "gcc -aux-info failed"
  grep -F "include/biren_runtime.h:" "$TMP/aux" | grep -v '\*/ static ' |
    sed -E 's|^/\*[^*]*\*/ *||; s/\(.*$//; s/ *$//; s/.*[ *]//'
}
# Exported variables the header declares (`extern T name;`, arrays too): -aux-info lists only functions.
declared_variables() {
  grep -E '^extern [^(]*;$' include/biren_runtime.h | sed -E 's/\[[^]]*\]//; s/;$//; s/.*[ *]//'
}
{ declared; declared -DBIREN_NO_INLINE_BUILTINS; declared_variables; } | sort -u >"$TMP/declared"
# Every defined dynamic symbol of the library (version suffixes dropped, version nodes aside).
nm -D --defined-only "$LIB" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u >"$TMP/exported"
[ -s "$TMP/exported" ] || note "nm -D found no exports in $LIB"
n_declared=$(wc -l <"$TMP/declared")
[ "$n_declared" -ge 50 ] || note "only $n_declared declarations found: is the -aux-info parse broken?"
grep -qx birenInit "$TMP/declared" || note "birenInit not among the declarations found"
grep -qx birenThreadIdx "$TMP/declared" || note "birenThreadIdx (BIREN_NO_INLINE_BUILTINS) not among the declarations"
missing=$(comm -23 "$TMP/declared" "$TMP/exported" | tr '\n' ' ')
undeclared=$(comm -13 "$TMP/declared" "$TMP/exported" | tr '\n' ' ')
[ -z "$missing" ] || note "declared in include/biren_runtime.h but not exported by the library: $missing"
[ -z "$undeclared" ] || note "exported by the library but not declared in include/biren_runtime.h: $undeclared"
finish

# The header takes no name from its users: every macro of include/*.h is BIREN_/biren-prefixed
# (an unprefixed WARP_SIZE or PARAM_END broke a program's own `static const int WARP_SIZE = 32;`).
start "every macro the headers define is prefixed (BIREN_, biren)"
for f in include/*.h; do
  bad=$(grep -oE '^[[:space:]]*#[[:space:]]*define[[:space:]]+[A-Za-z_][A-Za-z0-9_]*' "$f" |
    awk '{print $NF}' | grep -viE '^_*biren' | sort -u | tr '\n' ' ')
  [ -z "$bad" ] || note "$f defines unprefixed macros: $bad"
done
cat >"$TMP/names.cpp" <<'CPP'
#include "biren_runtime.h"
static const int WARP_SIZE = 32, PARAM_END = 0, PARAM_BUFFER_POINTER = 1, PARAM_BUFFER_SIZE = 2;
int main() { return WARP_SIZE - 32 + PARAM_END + PARAM_BUFFER_POINTER + PARAM_BUFFER_SIZE - 3; }
CPP
build "$TMP/names" "$CXX" "${CXXFLAGS[@]}" "$TMP/names.cpp" "${LDLIBS[@]}"
finish

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
