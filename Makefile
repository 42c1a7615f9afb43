# The two commands of README.md: `make demo` (the main job) and `make test` (every test).
# Each installs the Debian packages it needs when missing, builds, and runs.

.PHONY: all deps build demo test clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	swift build

demo: build
	scripts/demo.sh

test: deps
	swift build --build-tests
	scripts/test.sh

clean:
	rm -rf .build
