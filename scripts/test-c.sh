#!/usr/bin/env bash
# The C tests of Tests/c, built as a C11 program each against one libportalauth and run
# each against a Portal emulator of its own (the keyring's inside private keyrings), as many
# at once as the machine has cores:
#   scripts/test-c.sh [--valgrind] [--library DIR] [TEST [CASE]]
# --library DIR: the folder of a libportalauth.so to test, with the header of include/ (make
# check gives .build/debug); by default the library as `make install` lays it out.
# --valgrind: each runs under memcheck, where an invalid access or a definite leak fails it
# (but glibc's own, in Tests/c/valgrind.supp); wipe_test runs without it, since it defines
# free() to watch the library's, which valgrind's allocator would replace.
# TEST [CASE]: only that test, or only its case CASE (Tests/c/test_support.h's run_cases); by
# default every test, and then the cases that run only when named, each in its setting (the
# keyring test's with a bus that refuses deletes, the transport test's with a libcurl that
# refuses each protection, the lazy-loading test's with each system library hidden), the
# setting a case named in TEST CASE gets too (the opener swap of browser_test built with
# AddressSanitizer). providers_test and
# old_glibc_test run in their own stages (scripts/test-providers.sh, test-old-glibc.sh).
# Ends with a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stage.sh c-tests

valgrind=false library_dir=
while [ $# -gt 0 ]; do
    case "$1" in
        --valgrind) valgrind=true; shift ;;
        --library) library_dir=$(readlink -f "$2"); shift 2 ;;
        *) break ;;
    esac
done
only=${1:-} only_argument=${2:-}
if [ -n "$library_dir" ]; then
    compile_flags=(-Iinclude "-L$library_dir" -lportalauth)
else
    install_prefix
    library_dir="$prefix/lib"
    read -r -a compile_flags <<< "$(pkg-config --cflags --libs portal-auth)"
fi
[ -z "$only" ] || [ -f "Tests/c/$only.c" ] || fail "no C test named $only (Tests/c/$only.c)"

flags=(-Wall -Wextra -Wpedantic -Werror)
# Starts a built test as a job against an emulator of its own, for judge_tests. LABEL
# names the run; WRAPPER... (maybe none) runs around it.
#   start_c_test LABEL NAME [ARGUMENT...] [-- WRAPPER...]
start_c_test() {
    local label=$1 name=$2 arguments=() wrapper=() memcheck=()
    shift 2
    while [ $# -gt 0 ] && [ "$1" != -- ]; do arguments+=("$1"); shift; done
    [ $# -gt 0 ] && { shift; wrapper=("$@"); }
    if $valgrind && [ "$name" != wipe_test ] && [[ "$name" != *-asan ]]; then
        memcheck=(valgrind -q --error-exitcode=3 --leak-check=full --show-leak-kinds=definite
                  --errors-for-leak-kinds=definite --suppressions=Tests/c/valgrind.supp)
        label+=" under valgrind"
    fi
    start_test "$label" "${name%-asan}" with_emulator "${wrapper[@]}" \
        env LD_LIBRARY_PATH="${library_path:-$library_dir}" "${memcheck[@]}" "$work/$name" "${arguments[@]}"
}

# --as-needed: only the tests that call libcurl themselves link it, so lazy_load_test sees
# what the library alone loads. SUFFIX and FLAGS: a variant, $work/NAME-SUFFIX, built with them.
#   build_c_test NAME [SUFFIX FLAG...]
build_c_test() {
    local output="$work/$1${2:+-$2}"
    gcc -std=c11 "${flags[@]}" -g -pthread "${@:3}" -ITests/c "Tests/c/$1.c" -Wl,--as-needed "${compile_flags[@]}" \
        $(pkg-config --libs libcurl) -o "$output" || fail "$1 does not build"
}

# A libcurl that cannot honour one of the transport's protections (as an older one), in
# $work/refusing: its symbols carry the real library's version node, as the programs linked
# to it expect.
refusing_libcurl() {
    local real_curl node
    real_curl=$(readlink -f "$(gcc -print-file-name=libcurl.so.4)")
    node=$(objdump -T "$real_curl" | awk '$NF == "curl_easy_init" { print $(NF - 1) }')
    mkdir -p "$work/refusing"
    echo "$node { global: curl_*; local: *; };" > "$work/refusing/libcurl.map"
    gcc -std=c11 "${flags[@]}" -shared -fPIC -DREAL_LIBCURL="\"$real_curl\"" -Wl,-soname,libcurl.so.4 \
        -Wl,--version-script="$work/refusing/libcurl.map" Tests/c/support/refusing_libcurl.c -ldl \
        -o "$work/refusing/libcurl.so.4" || fail "the refusing libcurl does not build"
}

# Starts a built test, or one case of it, in the setting it needs: the keyring's tests in a
# private keyring; the cases that run only when named each in their own (a keyring whose bus
# refuses deletes, a libcurl that refuses each protection, a system library hidden).
#   start_case NAME [CASE]
start_case() {
    local name=$1 case=${2:-} soname file
    case "$name:$case" in
        keyring_test:refused_delete_keeps_undecodable_entry)
            start_c_test "$name with the keyring refusing deletes" "$name" "$case" -- \
                scripts/private-keyring.sh run --deny-item-delete ;;
        keyring_test:*|fork_test:*)
            start_c_test "$name${case:+ $case}" "$name" ${case:+"$case"} -- scripts/private-keyring.sh run ;;
        browser_test:replaced_opener_is_never_called)
            # The host frees the opener it replaced: AddressSanitizer names any use of it.
            build_c_test "$name" asan -fsanitize=address -fno-omit-frame-pointer
            start_c_test "$name $case under AddressSanitizer" "$name-asan" "$case" -- env ASAN_OPTIONS=detect_leaks=0 ;;
        curl_options_test:each_refused_protection_fails_the_call)
            refusing_libcurl
            library_path="$work/refusing:$library_dir" start_c_test "$name with each protection refused" "$name" "$case" ;;
        lazy_load_test:*_missing)
            case "$case" in
                libcurl_missing) soname=libcurl.so.4 ;;
                libsecret_missing) soname=libsecret-1.so.0 ;;
                libqrencode_missing) soname=libqrencode.so.4 ;;
                libpng_missing) soname=libpng16.so.16 ;;
                *) fail "no case named $case in $name" ;;
            esac
            file=$(readlink -f "$(gcc -print-file-name="$soname")")
            start_c_test "$name with $soname hidden" "$name" "$case" -- hiding "$file" ;;
        *) start_c_test "$name${case:+ $case}" "$name" ${case:+"$case"} ;;
    esac
}

if [ -n "$only" ]; then
    build_c_test "$only"
    start_case "$only" "$only_argument"
    judge_tests
    finish
    exit 0
fi

for source in Tests/c/*_test.c; do
    name=$(basename "$source" .c)
    [ "$name" = providers_test ] || [ "$name" = old_glibc_test ] && continue
    build_c_test "$name"
    start_case "$name"
done
start_case keyring_test refused_delete_keeps_undecodable_entry
start_case browser_test replaced_opener_is_never_called
start_case curl_options_test each_refused_protection_fails_the_call
# With each system library unloadable, only the calls that need it fail, with its name.
if hiding "$work" true 2>/dev/null; then
    for library in libcurl libsecret libqrencode libpng; do start_case lazy_load_test "${library}_missing"; done
else
    echo "skipped: lazy_load_test with each library hidden (no private mount namespace: unshare)"
fi
judge_tests

finish
