# Container image: build it, run it for real (kpt, kustomize, docker), check
# its metadata. Release metadata (VERSION, IMAGE, COMMIT) comes from the
# Makefile; nothing here repeats it.
#
# No registry is needed: by default the image is built FROM local stand-ins of
# the Dockerfile's public base images (hack/image/base-images.sh makes them from
# the host's Go toolchain and a few files), Go modules come from a vendor tree
# made on the host, and the build runs with --network none.
#
#   make image                 build $(IMAGE)
#   make image IMAGE_BASES=public   build FROM the Dockerfile's pinned public images
#   make image-test            build, then run test/image against the image
#
# The engine: $(DOCKER_HOST) when set, else a private dockerd in
# $(IMAGE_ENGINE_DIR), started when it is not running and stopped (by PID)
# afterwards by the target that started it (hack/image/engine.sh run). Its
# data lives outside the clone, like every other cache: the layers that
# compile the dependencies are reused by the next clone's build (docker keys
# them by content), so a fresh CI clone compiles only this module.

IMAGE_BASES ?= local
IMAGE_ENGINE_DIR ?= $(or $(JOBSET_FLUX_CACHE),$(HOME)/.cache/jobset-flux)/engine
IMAGE_GOMOD := _out/image/gomod
IMAGE_BUILD_FLAGS ?=
IMAGE_TEST_FLAGS ?=
KPT ?= $(BIN)/kpt

INTEGRATION_TESTS += image-test

IMAGE_ENGINE := ENGINE_DIR=$(IMAGE_ENGINE_DIR) hack/image/engine.sh
# The sub-make builds and tests with the metadata read once here: COMMIT
# follows HEAD, which may move while a build runs.
IMAGE_PIN = VERSION='$(VERSION)' COMMIT='$(COMMIT)' IMAGE='$(IMAGE)'

.PHONY: image image-build image-vendor image-test image-test-run print-image print-image-vars engine-start engine-stop

## print-image: the image reference (krmfunction.yaml's runtime.container.image must equal it).
print-image:
	@echo '$(IMAGE)'

# print-image-vars: what test/image reads when run by hand.
print-image-vars:
	@printf 'IMAGE=%s\nVERSION=%s\nCOMMIT=%s\n' '$(IMAGE)' '$(VERSION)' '$(COMMIT)'

## image: build the function image $(IMAGE) (starts and stops a private engine if needed).
image:
	$(IMAGE_ENGINE) run -- $(MAKE) --no-print-directory $(IMAGE_PIN) image-build

# image-vendor: the module sources the Dockerfile builds from without network,
# and the list of dependencies it compiles in a layer of their own. Made
# fresh each time (~5 s): a new import of an already required module changes
# both without touching go.mod.
image-vendor:
	hack/image/vendor.sh $(IMAGE_GOMOD)

# image-build: needs a reachable engine (use "make image" otherwise).
image-build: image-vendor
	bases=(); \
	if [[ '$(IMAGE_BASES)' == local ]]; then \
	  out=$$(hack/image/base-images.sh); \
	  for kv in $$out; do bases+=(--build-arg "$$kv"); done; \
	fi; \
	docker build --network none \
	  "$${bases[@]}" \
	  --build-arg GOPROXY=off \
	  --build-arg VERSION='$(VERSION)' \
	  --build-arg COMMIT='$(COMMIT)' \
	  $(IMAGE_BUILD_FLAGS) -t '$(IMAGE)' .
	@docker image inspect --format 'image: {{index .RepoTags 0}} {{.Size}} bytes, user {{.Config.User}}' '$(IMAGE)'

## image-test: build the image, then test it with docker, kpt and kustomize (test/image).
image-test: build $(BIN)/kustomize $(BIN)/kpt
	$(IMAGE_ENGINE) run -- $(MAKE) --no-print-directory $(IMAGE_PIN) image-build image-test-run

image-test-run:
	cd test/image && \
	  IMAGE='$(IMAGE)' IMAGE_VERSION='$(VERSION)' IMAGE_COMMIT='$(COMMIT)' \
	  IMAGE_BASE="$$( [[ '$(IMAGE_BASES)' == local ]] && echo local/static:nobody || echo public )" \
	  JOBSET_FLUX_BIN='$(BIN)/jobset-flux' KUSTOMIZE_BIN='$(BIN)/kustomize' KPT_BIN='$(KPT)' \
	  EXAMPLE_SEED='$(EXAMPLE_SEED)' REPO_ROOT='$(CURDIR)' \
	  go test -count=1 -timeout 20m $(IMAGE_TEST_FLAGS) ./...

## engine-start / engine-stop: the private dockerd, for working by hand
## (eval "$$(hack/image/engine.sh env)" points the docker CLI at it).
engine-start:
	$(IMAGE_ENGINE) start
engine-stop:
	$(IMAGE_ENGINE) stop
