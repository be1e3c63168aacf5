# Argo CD config management plugin (deploy/argocd), tested against the real
# argocd-cmp-server. The server is built from the wrapper module test/argocd,
# which pins github.com/argoproj/argo-cd/v3 and repeats its replace directives.
# A cold build downloads a large module graph and needs much memory
# (docs/contributing/measurements.md).

ARGOCD_MODULE := test/argocd

# CI runs the suite against the sidecar image's binaries (test-argocd-image);
# test-argocd runs it against bin/ and needs neither root nor an engine.
INTEGRATION_TESTS += test-argocd-image

SIDECAR_IMAGE ?= $(IMAGE_REPO)-argocd-cmp:v$(VERSION)
SIDECAR_OUT := $(CURDIR)/_out/sidecar/image
# The image's files the tests use, copied out of it (docker cp).
SIDECAR_ROOT := $(CURDIR)/_out/sidecar/root
# The size test/argocd's TestSidecarImage allows (docker's Size, bytes).
SIDECAR_MAX_BYTES ?= 40000000

$(BIN)/argocd-cmp-server: $(ARGOCD_MODULE)/go.mod $(ARGOCD_MODULE)/go.sum $(ARGOCD_MODULE)/cmd/argocd-cmp-server/main.go
	cd $(ARGOCD_MODULE) && go build -o $@ ./cmd/argocd-cmp-server

## test-argocd: the plugin (plugin.yaml + jobset-flux-cmp) served by the real
## argocd-cmp-server, rendering every example through kustomize and jobset-flux (from bin/).
.PHONY: test-argocd test-argocd-image test-argocd-image-run sidecar-image
test-argocd: build $(BIN)/kustomize $(BIN)/argocd-cmp-server
	cd $(ARGOCD_MODULE) && go test -count=1 -timeout 20m -skip 'TestSidecarImage|^TestCluster' ./...

## sidecar-image: build the Argo CD plugin sidecar $(SIDECAR_IMAGE) into _out/sidecar/image (hack/image/build.sh; no engine).
sidecar-image:
	VERSION='$(VERSION)' COMMIT='$(COMMIT)' IMAGE='$(SIDECAR_IMAGE)' KUSTOMIZE_VERSION='$(KUSTOMIZE_VERSION)' \
	  hack/image/build.sh sidecar '$(SIDECAR_OUT)'

## test-argocd-image: build the sidecar image, load it into a docker engine, then run test/argocd against the binaries, script and plugin.yaml in it.
test-argocd-image: sidecar-image build $(BIN)/kustomize $(BIN)/argocd-cmp-server
	$(IMAGE_ENGINE) run -- $(MAKE) --no-print-directory $(IMAGE_PIN) SIDECAR_IMAGE='$(SIDECAR_IMAGE)' test-argocd-image-run

# argocd-cmp-server itself is not in the image (the repo-server's init
# container copies it in a cluster): bin/argocd-cmp-server serves the
# image's plugin.yaml, with the image's usr/local/bin first on PATH.
test-argocd-image-run:
	docker load -i '$(SIDECAR_OUT)/image.tar'
	rm -rf '$(SIDECAR_ROOT)'
	mkdir -p '$(SIDECAR_ROOT)/usr/local' '$(SIDECAR_ROOT)/home/argocd/cmp-server'
	id=$$(docker create '$(SIDECAR_IMAGE)'); \
	trap 'docker rm "$$id" >/dev/null' EXIT; \
	docker cp "$$id:/usr/local/bin" '$(SIDECAR_ROOT)/usr/local/'; \
	docker cp "$$id:/home/argocd/cmp-server/config" '$(SIDECAR_ROOT)/home/argocd/cmp-server/'
	cd $(ARGOCD_MODULE) && SIDECAR_IMAGE='$(SIDECAR_IMAGE)' SIDECAR_ROOT='$(SIDECAR_ROOT)' \
	  SIDECAR_VERSION='$(VERSION)' SIDECAR_MAX_BYTES='$(SIDECAR_MAX_BYTES)' \
	  go test -count=1 -timeout 20m -skip '^TestCluster' ./...

# The cluster half (Argo CD's sync engine applying rendered JobSets with
# sync waves and hooks) runs inside make test-kube's session, while its
# cluster is up (mk/kube.mk runs KUBE_SESSION_SUITES with KUBECONFIG and
# KUBECTL exported); test-argocd-cluster runs it against a cluster already
# running: eval "$$(bash hack/kube/cluster.sh env)"; make test-argocd-cluster
ARGOCD_CLUSTER_TEST = cd $(CURDIR)/$(ARGOCD_MODULE) && \
	go test -count=1 -timeout 15m -run '^TestCluster' ./...
KUBE_SESSION_SUITES += ARGOCD_CLUSTER_TEST

.PHONY: test-argocd-cluster
## test-argocd-cluster: Argo CD's sync engine (gitops-engine) applies Flux JobSets in sync waves and PreSync hooks on the running test cluster (KUBECONFIG, KUBECTL).
test-argocd-cluster: build $(BIN)/kustomize
	$(ARGOCD_CLUSTER_TEST)
