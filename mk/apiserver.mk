# Real Kubernetes API server integration test: every rendered object is
# dry-run-created against kube-apiserver + etcd. The binaries are the real
# cluster's (hack/kube/build.sh: built from test/apiserver's module, pinned
# there: k8s.io/kubernetes v1.35.4, etcd v3.6.x, and cached by content under
# ~/.cache/jobset-flux/kube/<key>), so they are built once for both suites.

APISERVER_MOD := test/apiserver

INTEGRATION_TESTS += test-apiserver

# -v shows the start-up and run times; add e.g. -run TestGrid here.
APISERVER_TEST_FLAGS ?= -v

.PHONY: test-apiserver

## test-apiserver: dry-run every rendered artifact against a real kube-apiserver.
test-apiserver: build
	kube=$$(bash hack/kube/build.sh | tail -n 1) && \
	cd $(APISERVER_MOD) && KUBE_APISERVER_BIN=$$kube/bin/kube-apiserver ETCD_BIN=$$kube/bin/etcd \
		JOBSET_FLUX_BIN=$(BIN)/jobset-flux JOBSET_FLUX_EXAMPLES=$(CURDIR)/examples \
		go test -count=1 -timeout 20m $(APISERVER_TEST_FLAGS) ./...
