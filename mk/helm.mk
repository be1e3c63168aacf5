# Helm as the user's packager (docs/user/helm.md): jobset-flux as the post-
# renderer of real Helm 3 (--post-renderer PATH) and Helm 4 (the
# postrenderer/v1 plugin in deploy/helm/jobset-flux). Both are built from
# their Go modules at the versions test/helm/tools/helm{3,4}/go.mod pin
# (hack/helm/build.sh), cached by content under
# ~/.cache/jobset-flux/helm/<key>/ and copied into bin/helm3 and bin/helm4.
# A cold build is heavy (two large Go programs): build.sh takes the
# machine's heavy-build lock for it.

HELM_MOD := test/helm
HELM_TOOLS := $(HELM_MOD)/tools
HEAVY_LOCK ?= /var/tmp/jf-heavy.lock
HELM_TEST_FLAGS ?= -v

INTEGRATION_TESTS += test-helm

.PHONY: test-helm test-helm-cluster helm-bins

# Both binaries come from one cached build: either target runs it.
$(BIN)/helm3 $(BIN)/helm4 &: $(HELM_TOOLS)/helm3/go.mod $(HELM_TOOLS)/helm3/go.sum $(HELM_TOOLS)/helm4/go.mod $(HELM_TOOLS)/helm4/go.sum hack/helm/build.sh
	mkdir -p $(BIN)
	dir=$$(HEAVY_LOCK=$(HEAVY_LOCK) bash hack/helm/build.sh | tail -n 1) && \
	  cp "$$dir/helm3" $(BIN)/helm3 && cp "$$dir/helm4" $(BIN)/helm4

## helm-bins: build (or take from the cache) the pinned bin/helm3 and bin/helm4.
helm-bins: $(BIN)/helm3 $(BIN)/helm4

HELM_TEST_ENV = JOBSET_FLUX_BIN=$(BIN)/jobset-flux KUSTOMIZE_BIN=$(BIN)/kustomize \
	HELM3_BIN=$(BIN)/helm3 HELM4_BIN=$(BIN)/helm4

## test-helm: helm template through jobset-flux with real Helm 3 and 4 equals kustomize's render; refusals fail helm; the key seed keeps renders equal.
test-helm: build $(BIN)/kustomize $(BIN)/helm3 $(BIN)/helm4
	cd $(HELM_MOD) && $(HELM_TEST_ENV) go test -count=1 -timeout 10m -skip '^TestCluster' $(HELM_TEST_FLAGS) ./...

# The cluster half runs inside make test-kube's session, while its cluster
# is up (mk/kube.mk runs KUBE_SESSION_SUITES with KUBECONFIG and KUBECTL
# exported); test-helm-cluster runs it against a cluster already running:
#   eval "$$(bash hack/kube/cluster.sh env)"; make test-helm-cluster
HELM_CLUSTER_TEST = cd $(CURDIR)/$(HELM_MOD) && $(HELM_TEST_ENV) \
	go test -count=1 -timeout 15m -run '^TestCluster' $(HELM_TEST_FLAGS) ./...
KUBE_SESSION_SUITES += HELM_CLUSTER_TEST
test-kube: $(BIN)/helm3 $(BIN)/helm4

## test-helm-cluster: helm install, upgrade and uninstall of a Flux JobSet chart (Helm 3 and 4) on the running test cluster (KUBECONFIG, KUBECTL).
test-helm-cluster: build $(BIN)/kustomize $(BIN)/helm3 $(BIN)/helm4
	$(HELM_CLUSTER_TEST)
