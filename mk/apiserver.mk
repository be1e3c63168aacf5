# Real Kubernetes API server integration test: every rendered object is
# dry-run-created against kube-apiserver + etcd built from test/apiserver
# (its own Go module, pinned there: k8s.io/kubernetes v1.35.4, etcd v3.6.x).

APISERVER_MOD := test/apiserver
KUBE_VERSION := v1.35.4
# kubectl and clients parse the version: set it, the module build leaves it empty.
KUBE_APISERVER_LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=35

INTEGRATION_TESTS += test-apiserver

# Rebuilt only when missing or when the module's go.mod (or the wrapper) changes.
$(BIN)/kube-apiserver: $(APISERVER_MOD)/go.mod $(APISERVER_MOD)/cmd/kube-apiserver/main.go
	cd $(APISERVER_MOD) && go build -ldflags '$(KUBE_APISERVER_LDFLAGS)' -o $@ ./cmd/kube-apiserver

$(BIN)/etcd: $(APISERVER_MOD)/go.mod $(APISERVER_MOD)/cmd/etcd/main.go
	cd $(APISERVER_MOD) && go build -o $@ ./cmd/etcd

# -v shows the start-up and run times; add e.g. -run TestGrid here.
APISERVER_TEST_FLAGS ?= -v

.PHONY: apiserver-bins test-apiserver
apiserver-bins: $(BIN)/kube-apiserver $(BIN)/etcd

## test-apiserver: dry-run every rendered artifact against a real kube-apiserver.
test-apiserver: build $(BIN)/kube-apiserver $(BIN)/etcd
	cd $(APISERVER_MOD) && KUBE_APISERVER_BIN=$(BIN)/kube-apiserver ETCD_BIN=$(BIN)/etcd \
		JOBSET_FLUX_BIN=$(BIN)/jobset-flux JOBSET_FLUX_EXAMPLES=$(CURDIR)/examples \
		go test -count=1 -timeout 20m $(APISERVER_TEST_FLAGS) ./...
