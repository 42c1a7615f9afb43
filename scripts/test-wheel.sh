#!/usr/bin/env bash
# The Python package as it ships. `python -m build --sdist --wheel ./bindings/python` makes
# the sdist (the sources, no library) and the wheel (the library built from the repository);
# `twine check --strict` passes both, which carry LICENSE and the project's URLs; the sdist
# alone makes a py3-none-any wheel for the system's library; auditwheel
# (PyPI) finds the wheel consistent with its tag, py3-none-manylinux_<glibc>_<machine>, which
# other Python 3 versions accept; the wheel carries the library stripped, under its soname.
# Neither carries the emulator: that is a package of its own, `python -m build ./emulator`,
# whose wheel carries the header's version too. Installed into a fresh virtual environment
# with the emulator's wheel, with the Swift toolchain hidden (off PATH, its folder masked in a
# private mount namespace), the wheel signs a user in against that emulator, inside a private
# keyring. Ends with a count line.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${PORTAL_AUTH_PRIVATE_KEYRING:-}" ] || exec scripts/private-keyring.sh run "$0" "$@"
source scripts/stage.sh wheel

python3 -m venv "$work/tools"
pip=("$work/tools/bin/pip" install --quiet --disable-pip-version-check)
read -r -a tools <<< "$(grep -E '^(build|auditwheel|twine)==' bindings/python/tests/requirements.txt | tr '\n' ' ')"
"${pip[@]}" "${tools[@]}"

# The library is the repository's, built and installed by setup.py: not one named at install time.
env -u PORTAL_AUTH_LIBRARY "$work/tools/bin/python" -m build --sdist --wheel --outdir "$work/dist" ./bindings/python > "$work/build.log" 2>&1 \
    || { tail -n 40 "$work/build.log"; fail "python -m build --sdist --wheel ./bindings/python"; }
version=$(sed -n 's/^#define PORTAL_AUTH_VERSION_STRING "\(.*\)"$/\1/p' include/portal_auth.h)
sdist=$work/dist/portal_auth-$version.tar.gz
wheels=("$work/dist"/portal_auth-"$version"-*.whl)
[ -f "$sdist" ] && [ ${#wheels[@]} -eq 1 ] && [ -f "${wheels[0]}" ] || fail "the build made no sdist and one wheel: $(ls "$work/dist")"
pass "python -m build makes the sdist and the wheel"

# Publishable: twine's strict check passes both; each carries LICENSE and the project's URLs.
"$work/tools/bin/twine" check --strict "$sdist" "${wheels[0]}" > "$work/twine.log" 2>&1 || { cat "$work/twine.log"; fail "twine check --strict"; }
listing=$(tar -tzf "$sdist")
grep -qx "portal_auth-$version/LICENSE" <<< "$listing" || fail "the sdist carries no LICENSE"
grep -q '/licenses/LICENSE$' <<< "$("$work/tools/bin/python" -m zipfile -l "${wheels[0]}" | awk '{ print $1 }')" || fail "the wheel carries no LICENSE"
metadata=$(tar -xOzf "$sdist" "portal_auth-$version/PKG-INFO")
wheel_metadata=$("$work/tools/bin/python" -c 'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())' \
    "${wheels[0]}" "portal_auth-$version.dist-info/METADATA")
for url in Homepage Documentation Repository Issues; do
    grep -q "^Project-URL: $url, https://" <<< "$metadata" || fail "the sdist's metadata has no $url URL"
    grep -q "^Project-URL: $url, https://" <<< "$wheel_metadata" || fail "the wheel's metadata has no $url URL"
done
pass "twine check --strict passes the sdist and the wheel; both carry LICENSE and the project's URLs"

! grep -q 'libportalauth' <<< "$listing" || fail "the sdist carries the library"
grep -qx "Version: $version" <<< "$metadata" || fail "the sdist's version is not $version"
pass "the sdist carries the sources and the header's version, $version, and no library"
# A wheel from the sdist alone, with no library named: pure, loading the system's by its soname.
env -u PORTAL_AUTH_LIBRARY "$work/tools/bin/python" -m build --wheel --outdir "$work/from-sdist" "$sdist" > "$work/from-sdist.log" 2>&1 \
    || { tail -n 40 "$work/from-sdist.log"; fail "python -m build --wheel from the sdist"; }
pure=$work/from-sdist/portal_auth-$version-py3-none-any.whl
[ -f "$pure" ] || fail "the sdist's wheel is not py3-none-any: $(ls "$work/from-sdist")"
! grep -q libportalauth <<< "$("$work/tools/bin/python" -m zipfile -l "$pure")" || fail "the sdist's wheel carries a library"
pass "the sdist alone makes a py3-none-any wheel with no library, for the system's"

wheel=${wheels[0]}
tag=${wheel##*/portal_auth-"$version"-}
tag=${tag%.whl}
glibc_floor
[ "$tag" = "py3-none-manylinux_${floor/./_}_x86_64" ] || fail "the wheel is tagged $tag, not for the library's glibc floor $floor"
shown=$("$work/tools/bin/auditwheel" show "$wheel") || fail "auditwheel show: $shown"
platform=${tag#py3-none-}
grep -q "consistent with the following platform tag: \"$platform\"" <<< "$(tr '\n' ' ' <<< "$shown" | tr -s ' ')" \
    || fail "auditwheel does not find the wheel consistent with $platform: $shown"
pass "auditwheel finds the wheel consistent with its tag, $tag"

for python in 3.11 3.12 3.13; do
    "$work/tools/bin/pip" download --quiet --disable-pip-version-check --no-index --no-deps --only-binary=:all: \
        --python-version "$python" --implementation cp --platform "$platform" --find-links "$work/dist" \
        --dest "$work/downloads-$python" "portal-auth==$version" || fail "pip refuses the wheel for Python $python"
done
pass "pip takes the wheel for Python 3.11, 3.12 and 3.13"

mkdir "$work/unpacked"
(cd "$work/unpacked" && "$work/tools/bin/python" -m zipfile -e "$wheel" .)
library=$work/unpacked/portal_auth/libportalauth.so.0
sections=$(readelf -S --wide "$library")
grep -q "Library soname: \[libportalauth.so.0\]" <<< "$(readelf -d "$library")" || fail "the wheel's library has not the soname libportalauth.so.0"
! grep -q -e '\.symtab' -e '\.debug_info' <<< "$sections" || fail "the wheel's library is not stripped"
pass "the wheel carries the library stripped, under its soname"

carried=$(grep -i emulator <<< "$listing"$'\n'"$("$work/tools/bin/python" -m zipfile -l "$wheel")") \
    && fail "the binding's sdist or wheel carries the emulator: $carried"
pass "neither the binding's sdist nor its wheel carries the emulator"

env -u PORTAL_AUTH_LIBRARY "$work/tools/bin/python" -m build --outdir "$work/emulator-dist" ./emulator > "$work/emulator-build.log" 2>&1 \
    || { tail -n 40 "$work/emulator-build.log"; fail "python -m build ./emulator"; }
emulator_wheel=$work/emulator-dist/portal_auth_emulator-$version-py3-none-any.whl
[ -f "$emulator_wheel" ] || fail "the emulator's build made no wheel of version $version: $(ls "$work/emulator-dist")"
"$work/tools/bin/twine" check --strict "$emulator_wheel" > "$work/twine-emulator.log" 2>&1 || { cat "$work/twine-emulator.log"; fail "twine check --strict of the emulator's wheel"; }
grep -q '/licenses/LICENSE$' <<< "$("$work/tools/bin/python" -m zipfile -l "$emulator_wheel" | awk '{ print $1 }')" \
    || fail "the emulator's wheel carries no LICENSE"
pass "python -m build ./emulator makes the emulator's wheel, of the header's version, for any platform; twine check --strict passes it, with its LICENSE"

# A new user's machine: a fresh virtual environment, the wheel alone, no toolchain.
python3 -m venv "$work/user"
"$work/user/bin/pip" install --quiet --disable-pip-version-check --no-index --no-deps "$wheel" || fail "the wheel does not install"
[ ! -e "$work/user/bin/portal-auth-emulator" ] || fail "the binding's wheel installs a portal-auth-emulator command"
"$work/user/bin/pip" install --quiet --disable-pip-version-check --no-index --no-deps "$emulator_wheel" \
    || fail "the emulator's wheel does not install"
usage=$(env -u PYTHONPATH "$work/user/bin/portal-auth-emulator" --help) && grep -q "^usage: portal-auth-emulator " <<< "$usage" \
    || fail "portal-auth-emulator --help, from the emulator's wheel: $usage"
pass "the emulator's wheel installs beside it, and its portal-auth-emulator --help runs"
source scripts/emulator.sh
start_emulator "$work/emulator.log" "$work/user/bin/portal-auth-emulator" || fail "the emulator's wheel did not start"
trap 'stop_emulator; rm -rf "$work"' EXIT
toolchain=$(swift_toolchain)
path=$(tr ':' '\n' <<< "$PATH" | grep -v -x -F "$toolchain/usr/bin" | paste -sd:)
cp bindings/python/tests/installed_sign_in.py "$work/sign_in.py"
hiding "$toolchain" sh -c '[ -z "$(ls "$0")" ] && ! command -v swift >/dev/null && exec "$@"' "$toolchain" \
    env -u PORTAL_AUTH_LIBRARY -u PYTHONPATH PATH="$path" "$work/user/bin/python" "$work/sign_in.py" "$PORTAL_AUTH_TEST_API_HOST" \
    > "$work/sign-in.out" 2>&1 || { cat "$work/sign-in.out"; fail "the installed wheel does not sign in with the toolchain hidden"; }
cat "$work/sign-in.out"
grep -qx "portal_auth $version from $work/user/lib/python3.*/site-packages/portal_auth/libportalauth.so.0" <<< "$(cat "$work/sign-in.out")" \
    || fail "the sign-in did not load the wheel's library"
grep -q "^signed in as eu_.*, restored from the keyring$" "$work/sign-in.out" || fail "the sign-in printed no user"
pass "installed in a fresh virtual environment, with the toolchain ($toolchain) hidden, it signs in against the emulator's wheel"

finish
