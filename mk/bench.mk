# Performance benchmark at monorepo scale (not part of `make test`):
# jobset-flux against its floor, krm-identity, a KRM function from the same
# SDK that parses the ResourceList and writes it back unchanged. See
# docs/contributing/performance.md for the targets and how to read the table.
#
#   make bench                          full run (sizes 1k, 10k, 50k; memory lists); exits 1 when a target is missed
#   make bench BENCH_SIZES=1000,10000   fewer sizes
#   make bench BENCH_FLAGS='-only startup,jobset'
#   make bench BENCH_FLAGS='-only memory'   peak RSS only (its 50k JobSets need several GB and minutes)
#   make bench-go                       the in-process Go benchmarks

BENCH_DIR ?= $(CURDIR)/_out/bench
BENCH_SIZES ?= 1000,10000,50000
BENCH_SEED ?= 1
BENCH_FLAGS ?=
# The memory part's lists (issue 19): Flux JobSets only, ConfigMaps only.
BENCH_MEMORY_JOBSETS ?= 1000,10000,50000
BENCH_MEMORY_CONFIGMAPS ?= 10000,50000,200000

BENCH_SRC := $(shell find test/bench -name '*.go' 2>/dev/null)

.PHONY: bench bench-inputs bench-go

## bench: time jobset-flux against krm-identity on 1k/10k/50k-resource ResourceLists, and its peak RSS on large lists; fails on a missed target.
bench: $(BIN)/jobset-flux $(BIN)/krm-identity $(BENCH_DIR)/benchrun bench-inputs
	$(BENCH_DIR)/benchrun -fn $(BIN)/jobset-flux -floor $(BIN)/krm-identity \
		-dir $(BENCH_DIR) -sizes $(BENCH_SIZES) -seed $(BENCH_SEED) \
		-memory-jobsets $(BENCH_MEMORY_JOBSETS) -memory-configmaps $(BENCH_MEMORY_CONFIGMAPS) $(BENCH_FLAGS)

# The floor is built exactly like the function: same flags, same SDK version (go.mod).
$(BIN)/krm-identity: $(BENCH_SRC) go.mod go.sum
	CGO_ENABLED=0 go build -trimpath -ldflags '$(GO_LDFLAGS)' -o $@ ./test/bench/identity

$(BENCH_DIR)/benchgen $(BENCH_DIR)/benchrun: $(BENCH_DIR)/%: $(BENCH_SRC) go.mod go.sum
	go build -o $@ ./test/bench/cmd/$*

## bench-inputs: write the benchmark's ResourceLists into $(BENCH_DIR) (kept between runs; rewritten when stale).
bench-inputs: $(BENCH_DIR)/benchgen
	$(BENCH_DIR)/benchgen -dir $(BENCH_DIR) -sizes $(BENCH_SIZES) -seed $(BENCH_SEED)

## bench-go: in-process Go benchmarks of the transform and the hostlist.
bench-go:
	go test -run '^$$' -bench . -benchmem ./pkg/transform ./pkg/jobsetrender ./pkg/hostlist ./pkg/resourcelist
