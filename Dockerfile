# jobset-flux KRM function image.
#
# Public defaults below (tag kept next to the digest: the tag says what the
# image is, the digest decides which one). CI has no registry and builds
# with local stand-ins from hack/image/base-images.sh:
#   make image   (passes --build-arg GO_IMAGE=local/go:... BASE_IMAGE=local/static:nobody)
#
# Go modules: when _out/image/gomod/vendor exists (make image writes it with
# `go mod vendor` on the host, hack/image/vendor.sh), the build uses it and
# needs no network; CI also passes GOPROXY=off and builds with --network
# none. A plain `docker build .` has no vendor tree and downloads modules
# through GOPROXY.
#
# The build stage uses exec-form RUN only, so the build image needs no shell.
ARG GO_IMAGE=golang:1.26.8-bookworm@sha256:a688600ca24f8a4d3ca77f95b0dd40704a9fc787c826660eb7ba0b641b8b175d
ARG BASE_IMAGE=gcr.io/distroless/static-debian12:nonroot@sha256:d093aa3e30dbadd3efe1310db061a14da60299baff8450a17fe0ccc514a16639

FROM ${GO_IMAGE} AS build
ARG GOPROXY=
ENV CGO_ENABLED=0 \
    GOTOOLCHAIN=local \
    GOCACHE=/tmp/go-build \
    GOFLAGS="-trimpath -buildvcs=false"
WORKDIR /src
# The glob matches nothing outside CI: only go.mod and go.sum are copied
# then. In CI it copies the gomod directory's content (hack/image/vendor.sh)
# to the module root: vendor/, which the go command then uses on its own
# (-mod=vendor is the default when vendor/ exists), and imagedeps/, a main
# package importing ./fn's dependencies, compiled here so that the build
# cache in this layer holds them until they change. Outside CI "./..."
# matches nothing and this step does nothing.
COPY go.mod go.sum _out/image/gomo[d] ./
RUN ["go", "build", "-o", "/dev/null", "./..."]
COPY krmfunction.go krmfunction.yaml ./
COPY fn ./fn
COPY pkg ./pkg
# Compile first, link with the release metadata second: a new VERSION or
# COMMIT alone then only relinks (the compile layer keeps its build cache).
RUN ["go", "build", "-o", "/dev/null", "./fn"]
ARG VERSION=dev
ARG COMMIT=unknown
# GOFLAGS quotes the -ldflags value; the go command splits it like a shell.
ENV GOFLAGS="${GOFLAGS} '-ldflags=-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}'"
RUN ["go", "build", "-o", "/out/jobset-flux", "./fn"]
RUN ["/out/jobset-flux", "version"]

FROM ${BASE_IMAGE}
ARG VERSION=dev
ARG COMMIT=unknown
LABEL org.opencontainers.image.title="jobset-flux" \
      org.opencontainers.image.description="KRM function (kpt, kustomize) that runs JobSets as Flux Framework instances" \
      org.opencontainers.image.source="https://github.com/jobset-flux/jobset-flux" \
      org.opencontainers.image.url="https://github.com/jobset-flux/jobset-flux" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}"
COPY --from=build /out/jobset-flux /usr/local/bin/jobset-flux
# nobody: what kustomize and kpt pass with --user anyway.
USER 65534:65534
ENTRYPOINT ["/usr/local/bin/jobset-flux"]
