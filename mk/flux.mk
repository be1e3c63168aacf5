# Real Flux in the loop (docs/contributing/runtime-tests.md): every example and a grid of
# JobSet shapes rendered by bin/jobset-flux and run on real flux-core and
# flux-sched brokers, one simulated pod per network namespace
# (test/flux/internal/kubelet). The Flux view comes from
# hack/flux-view/build.sh: built from the source tarballs in FLUX_SRC (the
# longest cold build of make test), then reused from ~/.cache/jobset-flux
# until the tarballs or the script change; hack/flux-view/pmix.sh adds
# flux-pmix to its full/ root as a layer cached on its own. Needs root.

# The sources sit beside the repository (../shared/flux-src); a clone made
# elsewhere on the project's machines finds them at /work/shared/flux-src.
FLUX_SRC ?= $(firstword $(wildcard $(abspath $(CURDIR)/../shared/flux-src) /work/shared/flux-src) $(abspath $(CURDIR)/../shared/flux-src))

INTEGRATION_TESTS += test-flux

# TestExamples runs every example on stand-in images here; test/kube's
# TestExamples runs each on the real cluster with the same checks, so make
# test leaves this copy out. Run it with
# `make test-flux FLUX_TEST_FLAGS=-v`. -v: each test's time is in the log.
FLUX_TEST_FLAGS ?= -v -skip '^TestExamples$$'

.PHONY: test-flux flux-view

## flux-view: build (or find in the cache) the Flux view roots; prints their directory.
flux-view:
	bash hack/flux-view/pmix.sh $(FLUX_SRC)

## test-flux: run rendered JobSets on real Flux brokers (test/flux).
test-flux: build $(BIN)/kustomize
	cd test/testsupport && go test -count=1 ./mpiprog/
	view=$$(bash hack/flux-view/pmix.sh $(FLUX_SRC) | tail -n 1) && \
	cd test/flux && \
	JOBSET_FLUX_VIEW=$$view JOBSET_FLUX_BIN=$(BIN)/jobset-flux JOBSET_FLUX_KUSTOMIZE=$(BIN)/kustomize \
		go test -count=1 -timeout 45m $(FLUX_TEST_FLAGS) ./...
