# The two commands of README.md: `make demo` (the main job) and `make test` (every test).
# Each installs the Debian packages it needs when missing, builds, and runs.

PREFIX ?= /usr/local

# The tiers of make test, each runnable alone (docs/testing.md): make test-c, make test-qt...
TIERS := swift python c rust cpp glib qt providers network chaos docs hardening packages
TIER_TARGETS := $(addprefix test-,$(TIERS))

.PHONY: all deps build build-tests demo test check $(TIER_TARGETS) library header install dist deb docs clean fuzz \
	sanitize bench chaos

all: build

deps:
	@scripts/install-deps.sh

build: deps
	swift build

demo: build
	scripts/demo.sh

build-tests: deps
	swift build --build-tests

test: build-tests
	scripts/test.sh

# The fast tier: the Swift suite, pytest and the C tests without valgrind, on one build.
check: build-tests
	scripts/check.sh

# One tier of make test; ONLY= picks one test in it: a Swift test filter (test-swift),
# pytest's arguments (test-python), "TEST [CASE]" of Tests/c (test-c), Tests/chaos/chaos.py's
# arguments (test-chaos, which also takes the CHAOS_ variables of make chaos).
$(TIER_TARGETS): test-%: build-tests
	PORTAL_AUTH_TEST_ONLY='$(ONLY)' scripts/test.sh $*

# The fault-injection stage for longer: CHAOS_TRIALS= trials (default 100; make test runs 10)
# from CHAOS_SEED= (default a random one, printed); CHAOS_TRIAL= runs that one trial alone,
# CHAOS_REPEAT= times (default 1).
chaos: build-tests
	CHAOS_TRIALS='$(or $(CHAOS_TRIALS),100)' scripts/test.sh chaos

# libFuzzer over the parsers, 60 s per target (make test runs them for 10 s each).
fuzz: deps
	scripts/fuzz.sh 60

# The Swift tests under ThreadSanitizer and AddressSanitizer (also part of make test).
sanitize: deps
	scripts/sanitize.sh

# The benchmarks side by side (nginx on loopback); prints the table, writes bench/RESULTS.md.
bench: deps
	bench/run.sh

# libportalauth.so.0, self-contained (static Swift runtime, only versioned portal_auth_* exported).
# Like install, it builds only: the Debian packages and glibc 2.31's libraries it needs come
# from make deps, run once before.
library:
	scripts/build-library.sh

# The library (stripped, its debug information apart; KEEP_DEBUG=1: unstripped), the headers,
# the .pc files and CMake packages, portal-auth-glib and portal-auth-qt under
# $(DESTDIR)$(PREFIX), the libraries in $(PREFIX)/$(LIBDIR) (default lib). docs/packaging.md.
install:
	DESTDIR='$(DESTDIR)' LIBDIR='$(LIBDIR)' KEEP_DEBUG='$(KEEP_DEBUG)' scripts/install.sh "$(PREFIX)"

# The release archive: .build/dist/portal-auth-VERSION-x86_64-linux-gnu.tar.xz and its SHA-256,
# the install tree, relocatable (unpack it anywhere). README.md, "Install".
dist:
	scripts/dist.sh

# The Debian packages of debian/, built with dpkg-buildpackage -b into .build/debian/
# (docs/packaging.md).
deb:
	scripts/build-debs.sh .build/debian

# What swiftc declares for the @c exports (.build/portal_auth.generated.h), compared with
# the hand-written include/portal_auth.h.
header: build
	scripts/compare-header.py "$$(scripts/generate-header.sh)"

# The HTML reference of include/portal_auth.h (Doxygen), in .build/docs/html; fails on a warning.
docs: deps
	scripts/docs.sh

clean:
	rm -rf .build
