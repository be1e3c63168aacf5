# Argo CD config management plugin (deploy/argocd), tested against the real
# argocd-cmp-server. The server is built from the wrapper module test/argocd,
# which pins github.com/argoproj/argo-cd/v3 and repeats its replace directives.
# A cold build downloads ~850 MB of modules and needs ~1.3 GB of memory.

ARGOCD_MODULE := test/argocd

# CI runs the suite against the sidecar image's binaries (test-argocd-image);
# test-argocd runs it against bin/ and needs neither root nor an engine.
INTEGRATION_TESTS += test-argocd-image

SIDECAR_IMAGE ?= $(IMAGE_REPO)-argocd-cmp:v$(VERSION)
SIDECAR_GOMOD := _out/sidecar/gomod
# The image's files the tests use, copied out of it (docker cp).
SIDECAR_ROOT := $(CURDIR)/_out/sidecar/root
# The size test/argocd's TestSidecarImage allows (docker's Size, bytes) for the
# image FROM the local busybox bases: 29,095,231 at 3903b5f. A public
# debian:bookworm-slim base adds ~75 MB: raise it for IMAGE_BASES=public.
SIDECAR_MAX_BYTES ?= 40000000

$(BIN)/argocd-cmp-server: $(ARGOCD_MODULE)/go.mod $(ARGOCD_MODULE)/go.sum $(ARGOCD_MODULE)/cmd/argocd-cmp-server/main.go
	cd $(ARGOCD_MODULE) && go build -o $@ ./cmd/argocd-cmp-server

## test-argocd: the plugin (plugin.yaml + jobset-flux-cmp) served by the real
## argocd-cmp-server, rendering every example through kustomize and jobset-flux (from bin/).
.PHONY: test-argocd test-argocd-image test-argocd-image-run sidecar-image sidecar-image-build
test-argocd: build $(BIN)/kustomize $(BIN)/argocd-cmp-server
	cd $(ARGOCD_MODULE) && go test -count=1 -timeout 20m -skip TestSidecarImage ./...

# The Go modules the sidecar's build stage needs, as a file proxy (see
# hack/image/sidecar-goproxy.sh); rewritten when go.mod or go.sum change.
$(SIDECAR_GOMOD)/goproxy: go.mod go.sum hack/image/sidecar-goproxy.sh hack/image/imagedeps.sh
	hack/image/sidecar-goproxy.sh $(SIDECAR_GOMOD) $(KUSTOMIZE_VERSION)
	touch $@

## sidecar-image: build deploy/argocd/Dockerfile.sidecar as $(SIDECAR_IMAGE) (starts and stops a private engine if needed).
sidecar-image:
	$(IMAGE_ENGINE) run -- $(MAKE) --no-print-directory $(IMAGE_PIN) SIDECAR_IMAGE='$(SIDECAR_IMAGE)' sidecar-image-build

# sidecar-image-build: needs a reachable engine. The classic builder
# (DOCKER_BUILDKIT=0): the one every docker CLI has without the buildx plugin.
sidecar-image-build: $(SIDECAR_GOMOD)/goproxy
	bases=(); \
	if [[ '$(IMAGE_BASES)' == local ]]; then \
	  out=$$(hack/image/base-images.sh sidecar); \
	  for kv in $$out; do bases+=(--build-arg "$$kv"); done; \
	fi; \
	DOCKER_BUILDKIT=0 docker build --network none -f deploy/argocd/Dockerfile.sidecar \
	  "$${bases[@]}" \
	  --build-arg GOPROXY=file:///src/goproxy --build-arg GOSUMDB=off \
	  --build-arg VERSION='$(VERSION)' --build-arg COMMIT='$(COMMIT)' \
	  --build-arg KUSTOMIZE_VERSION='$(KUSTOMIZE_VERSION)' \
	  $(IMAGE_BUILD_FLAGS) -t '$(SIDECAR_IMAGE)' .
	@docker image inspect --format 'image: {{index .RepoTags 0}} {{.Size}} bytes, user {{.Config.User}}' '$(SIDECAR_IMAGE)'

## test-argocd-image: build the sidecar image, then run test/argocd against the binaries, script and plugin.yaml in it.
test-argocd-image: build $(BIN)/kustomize $(BIN)/argocd-cmp-server
	$(IMAGE_ENGINE) run -- $(MAKE) --no-print-directory $(IMAGE_PIN) SIDECAR_IMAGE='$(SIDECAR_IMAGE)' sidecar-image-build test-argocd-image-run

# argocd-cmp-server itself is not in the image (the repo-server's init
# container copies it in a cluster): bin/argocd-cmp-server serves the
# image's plugin.yaml, with the image's usr/local/bin first on PATH.
test-argocd-image-run:
	rm -rf '$(SIDECAR_ROOT)'
	mkdir -p '$(SIDECAR_ROOT)/usr/local' '$(SIDECAR_ROOT)/home/argocd/cmp-server'
	id=$$(docker create '$(SIDECAR_IMAGE)'); \
	trap 'docker rm "$$id" >/dev/null' EXIT; \
	docker cp "$$id:/usr/local/bin" '$(SIDECAR_ROOT)/usr/local/'; \
	docker cp "$$id:/home/argocd/cmp-server/config" '$(SIDECAR_ROOT)/home/argocd/cmp-server/'
	cd $(ARGOCD_MODULE) && SIDECAR_IMAGE='$(SIDECAR_IMAGE)' SIDECAR_ROOT='$(SIDECAR_ROOT)' \
	  SIDECAR_VERSION='$(VERSION)' SIDECAR_MAX_BYTES='$(SIDECAR_MAX_BYTES)' \
	  go test -count=1 -timeout 20m ./...
