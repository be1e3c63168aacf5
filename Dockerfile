# The jobset-flux KRM function image, for any OCI image builder: docker,
# podman, buildah, kaniko. `make image` builds the same image without one
# (hack/image/build.sh, reproducible to the digest); test/image's
# TestDockerfile builds this file and checks that its image matches that one
# and renders every example to the same bytes.
#
#   docker build --build-arg VERSION=0.1.0 --build-arg COMMIT="$(git rev-parse --short=12 HEAD)" \
#     -t ghcr.io/jobset-flux/jobset-flux:v0.1.0 .
#
# The bases are public images pinned by tag. To pin one by digest, or to use
# a mirror, pass the whole reference: --build-arg GO_IMAGE=golang:1.26-bookworm@sha256:...
# Any GO_IMAGE with a Go toolchain of go.mod's version or newer and a POSIX
# shell will do. BASE_IMAGE needs only /etc/passwd and /etc/group with nobody
# (65534), a CA bundle and /tmp: the binary is static and needs no libc.
ARG GO_IMAGE=golang:1.26-bookworm
ARG BASE_IMAGE=gcr.io/distroless/static-debian12:nonroot

FROM ${GO_IMAGE} AS build
# A module proxy to download through, for builds behind one; unset, the go
# command's default.
ARG GOPROXY
# The same for every go command below, so that the final build finds the
# dependencies compiled by the earlier one in the build cache.
ENV CGO_ENABLED=0 \
    GOFLAGS="-trimpath -buildvcs=false"
WORKDIR /src
# The modules in a layer of their own, which only go.mod and go.sum change;
# by default they are downloaded. A build without network (CI:
# --network none) prepares them on the host and names the directory in
# OFFLINE_MODULES: hack/image/dockerfile.sh writes _out/dockerfile/gomod/
# with vendor/ (`go mod vendor`) and imports.txt (the packages outside this
# module that ./fn imports) and passes
# --build-arg OFFLINE_MODULES=_out/dockerfile/gomod/. Its content lands in
# the module root, the go command uses vendor/ instead of downloading, and
# the dependencies are compiled here, so that a change to the sources or to
# the release metadata only compiles this module. (Not an optional glob:
# podman and buildah fail on a COPY glob that matches nothing.)
ARG OFFLINE_MODULES
COPY go.mod go.sum ${OFFLINE_MODULES} ./
RUN if [ -f imports.txt ]; then go build $(cat imports.txt); else go mod download; fi
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
# Linked as make build and hack/image/build.sh link it: static (the image has
# no libc), no local paths, and the release metadata `jobset-flux version`
# prints.
RUN go build -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
      -o /out/jobset-flux ./fn

FROM ${BASE_IMAGE}
ARG VERSION=dev
ARG COMMIT=unknown
# The config of hack/image/function.json, which test/image compares it with.
LABEL org.opencontainers.image.title="jobset-flux" \
      org.opencontainers.image.description="KRM function (kpt, kustomize) that runs JobSets as Flux Framework instances" \
      org.opencontainers.image.source="https://github.com/jobset-flux/jobset-flux" \
      org.opencontainers.image.url="https://github.com/jobset-flux/jobset-flux" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}"
ENV PATH=/usr/local/bin:/usr/bin:/bin \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/jobset-flux /usr/local/bin/jobset-flux
# nobody, whatever user the base names: what kustomize and kpt pass with
# --user anyway.
USER 65534:65534
ENTRYPOINT ["/usr/local/bin/jobset-flux"]
