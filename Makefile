# jobset-flux build, test and tool installation.
# Every tool a test needs is installed into ./bin by a target here, pinned.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

BIN := $(CURDIR)/bin
export PATH := $(BIN):$(PATH)
export GOFLAGS := -buildvcs=false
# Each module resolves its own go.mod: no go.work, neither one of ours
# (docs/contributing/development.md says why there is none) nor one above the clone.
export GOWORK := off

# Release metadata: the one place the version and image name live.
VERSION ?= 0.1.0
IMAGE_REPO ?= ghcr.io/jobset-flux/jobset-flux
IMAGE ?= $(IMAGE_REPO):v$(VERSION)
# Read once: a recursively expanded COMMIT would follow HEAD while a build
# runs, and an image would be tested against another commit than its own.
ifeq ($(origin COMMIT),undefined)
COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
endif

KUSTOMIZE_VERSION := v5.8.2
STATICCHECK_VERSION := v0.8.2

GO_LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)

# Integration test targets add themselves here from mk/*.mk.
INTEGRATION_TESTS :=

.PHONY: all build help quickstart test unit lint example expected clean system-deps
all: build

## quickstart: from a fresh Debian machine (as root, Go 1.26): build, start the single-node cluster, run
## examples/broker-tuning on it, print the leader's output and the JobSet's end, then how to look around
## (hack/quickstart.sh). Re-run at will; the cluster stays up until make kube-down.
quickstart:
	bash hack/quickstart.sh

## help: list the targets below with what they do (from their ## comments, here and in mk/*.mk).
help:
	@awk 'function out() { if (t != "") { gsub(/\$$\$$/, "$$", d); printf "  %-28s %s\n", t, d }; t = "" } \
	  /^## [A-Za-z0-9_.\/-]+( \/ [A-Za-z0-9_.\/-]+)*: / { \
	    out(); i = index($$0, ": "); t = substr($$0, 4, i - 4); d = substr($$0, i + 2); next } \
	  /^## / && t != "" { d = d " " substr($$0, 4); next } \
	  { out() } \
	  END { out() }' Makefile mk/*.mk

build: $(BIN)/jobset-flux
$(BIN)/jobset-flux: $(shell find fn pkg -name '*.go' -o -name '*.tmpl' -o -name '*.yaml' 2>/dev/null) go.mod go.sum krmfunction.yaml
	CGO_ENABLED=0 go build -trimpath -ldflags '$(GO_LDFLAGS)' -o $@ ./fn

-include mk/*.mk

## unit: the function's own Go tests (golden files, packages, fuzz seed corpora).
unit: build
	go test -count=1 ./...

## lint: gofmt, go vet and staticcheck in every Go module (each named as it goes; hack/lint.sh); no tracked file over 1 MiB.
lint: $(BIN)/staticcheck
	hack/check-large-files.sh
	hack/lint.sh $(BIN)/staticcheck

$(BIN)/staticcheck:
	GOBIN=$(BIN) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

## system-deps: install the Debian packages the tests use (.ci/apt/*.txt; as root). Quick when they are there.
system-deps:
	bash .ci/install-system-deps

## test: everything CI runs, from a fresh Debian machine (as root) on: two lanes at once, then test-flux, test-kube and test-kube-ipv6 alone.
# One after the other the targets left a 2-CPU machine idle for a good part
# of the time (hack/cold-run.sh SERIAL=1: the image tests wait on the Docker
# engine), so make test runs two lanes side by side: lint, unit, test-kpt
# and test-apiserver (no Docker), and every other target but three. Then
# test-flux, test-kube and test-kube-ipv6 run alone, one after the other: their brokers
# run under time limits, and a cluster's own CPU grows with its wall time
# (run beside the lanes, test-kube took much longer and its API server
# used more CPU; docs/contributing/measurements.md has the figures). Each
# lane runs its targets in order;
# each target prints its output in one piece when it ends (-Otarget) and
# a line "make test: TARGET ok in N s". Run one target alone: make TARGET.
TEST_TARGETS = system-deps lint unit $(INTEGRATION_TESTS)
TEST_LANE_go := lint unit test-kpt test-apiserver
TEST_LANE_alone := test-flux test-kube test-kube-ipv6
TEST_LANE_other = $(filter-out system-deps $(TEST_LANE_go) $(TEST_LANE_alone),$(TEST_TARGETS))
TEST_LANES := go other alone

# The binaries every lane uses are built once, before the lanes start.
test: system-deps build $(BIN)/kustomize
	$(MAKE) --no-print-directory -j2 -Otarget test-lane-go test-lane-other
	$(MAKE) --no-print-directory test-lane-alone

# Inside a lane everything runs one at a time, as in a plain make TARGET:
# targets such as image-test (its image built before it is loaded) rely on it. A
# lane's sub-make must not take the free job slot of the other lane.
ifneq ($(TEST_LANE),)
.NOTPARALLEL:
endif

.PHONY: $(TEST_LANES:%=test-lane-%)
$(TEST_LANES:%=test-lane-%): test-lane-%:
	@for t in $(TEST_LANE_$*); do \
	  s=$$SECONDS; \
	  if ! $(MAKE) --no-print-directory TEST_LANE=$* "$$t"; then \
	    echo "make test: $$t FAILED after $$((SECONDS - s)) s (lane $*)"; exit 1; \
	  fi; \
	  echo "make test: $$t ok in $$((SECONDS - s)) s (lane $*)"; \
	done

# print-test-targets: every target make test runs, in its serial order
# (SERIAL=1 hack/cold-run.sh times each alone).
.PHONY: print-test-targets
print-test-targets:
	@echo system-deps $(foreach l,$(TEST_LANES),$(TEST_LANE_$(l)))

# Every integration test (mk/*.mk adds itself to INTEGRATION_TESTS) runs
# after the system packages are in place, also when run on its own.
$(INTEGRATION_TESTS): | system-deps

## clean: remove ./bin and ./_out (the caches under ~/.cache/jobset-flux stay).
clean:
	rm -rf bin _out

## example: render the LAMMPS example with standalone kustomize (installed into ./bin).
example: build $(BIN)/kustomize
	kustomize build --enable-alpha-plugins --enable-exec examples/lammps

# The seed the examples' expected output is rendered with. It is public, so
# never use it for a real cluster.
EXAMPLE_SEED := jobset-flux-example-seed-0123456789abcdef

## expected: rewrite examples/*/expected.yaml (read the diff before committing).
expected: build $(BIN)/kustomize
	for d in examples/*/; do [ -f "$$d/kustomization.yaml" ] || continue; \
	  JOBSET_FLUX_KEY_SEED=$(EXAMPLE_SEED) kustomize build --enable-alpha-plugins --enable-exec "$$d" > "$$d/expected.yaml"; done
