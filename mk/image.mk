# Container images: the function's and the Argo CD sidecar's (mk/argocd.mk),
# built like the test cluster's with the one image toolchain: ocibuild
# (hack/kube/registry, go-containerregistry) assembles them from static
# binaries built on the host and a few host files (hack/image/build.sh). No
# Docker, no registry, no network; the same inputs give the same digest.
# Release metadata (VERSION, IMAGE, COMMIT) comes from the Makefile.
#
#   make image        $(IMAGE_OUT)/oci (OCI layout) and image.tar (docker load)
#   make image-test   build, then run test/image against the image
#   make crane        the library's CLI, to push: bin/crane push _out/image/image.tar $(IMAGE)
#
# Docker is the runtime the tests run the image with: kustomize runs
# container functions with `docker run` (kyaml's container runtime names
# no other) and kpt with docker, podman or nerdctl. image-test loads the
# archive into $(DOCKER_HOST) when set, else into a private dockerd in
# $(IMAGE_ENGINE_DIR), started when it is not running and stopped (by PID)
# afterwards by the target that started it (hack/image/engine.sh run).
# There test/image's TestDockerfile also builds the top-level Dockerfile,
# the way to build the image with docker, podman, buildah or kaniko, offline
# (hack/image/dockerfile.sh), and checks it against this image.

IMAGE_ENGINE_DIR ?= $(or $(JOBSET_FLUX_CACHE),$(HOME)/.cache/jobset-flux)/engine
IMAGE_OUT := $(CURDIR)/_out/image
IMAGE_TEST_FLAGS ?=
KPT ?= $(BIN)/kpt
# The crane of the go-containerregistry version hack/kube/registry builds with.
CRANE_VERSION := $(shell awk '$$1 == "github.com/google/go-containerregistry" { print $$2 }' hack/kube/registry/go.mod)

INTEGRATION_TESTS += image-test

IMAGE_ENGINE := ENGINE_DIR=$(IMAGE_ENGINE_DIR) hack/image/engine.sh
# The sub-make tests with the metadata read once here: COMMIT follows HEAD,
# which may move while a build runs.
IMAGE_PIN = VERSION='$(VERSION)' COMMIT='$(COMMIT)' IMAGE='$(IMAGE)'

.PHONY: image image-test image-test-run print-image print-image-vars engine-start engine-stop

## print-image: the image reference (krmfunction.yaml's runtime.container.image must equal it).
print-image:
	@echo '$(IMAGE)'

# print-image-vars: what test/image reads when run by hand.
print-image-vars:
	@printf 'IMAGE=%s\nVERSION=%s\nCOMMIT=%s\nIMAGE_OUT=%s\n' '$(IMAGE)' '$(VERSION)' '$(COMMIT)' '$(IMAGE_OUT)'

## image: build the function image $(IMAGE) into _out/image (OCI layout and docker load archive; no engine).
image:
	$(IMAGE_PIN) hack/image/build.sh function '$(IMAGE_OUT)'

## image-test: build the image, load it into a docker engine, test it with docker, kpt and kustomize (test/image).
image-test: image build $(BIN)/kustomize $(BIN)/kpt
	$(IMAGE_ENGINE) run -- $(MAKE) --no-print-directory $(IMAGE_PIN) image-test-run

image-test-run:
	docker load -i '$(IMAGE_OUT)/image.tar'
	cd test/image && \
	  IMAGE='$(IMAGE)' IMAGE_VERSION='$(VERSION)' IMAGE_COMMIT='$(COMMIT)' IMAGE_OUT='$(IMAGE_OUT)' \
	  JOBSET_FLUX_BIN='$(BIN)/jobset-flux' KUSTOMIZE_BIN='$(BIN)/kustomize' KPT_BIN='$(KPT)' \
	  EXAMPLE_SEED='$(EXAMPLE_SEED)' REPO_ROOT='$(CURDIR)' \
	  go test -count=1 -timeout 30m $(IMAGE_TEST_FLAGS) ./...

$(BIN)/crane:
	GOBIN=$(BIN) CGO_ENABLED=0 go install github.com/google/go-containerregistry/cmd/crane@$(CRANE_VERSION)

## engine-start / engine-stop: the private dockerd, for working by hand
## (eval "$$(hack/image/engine.sh env)" points the docker CLI at it).
engine-start:
	$(IMAGE_ENGINE) start
engine-stop:
	$(IMAGE_ENGINE) stop
