# Real libzmq integration test: every CURVE certificate jobset-flux produces
# (function output for each example, seeded and random; pkg/curve Generate and
# Derive; `keygen`) is checked with libzmq through cgo and used for CURVE
# handshakes on 127.0.0.1. test/zmq is its own Go module so cgo stays out of
# the function's CGO_ENABLED=0 build. Needs .ci/apt/zmq.txt (libzmq3-dev).

INTEGRATION_TESTS += test-zmq

.PHONY: test-zmq
## test-zmq: prove with the real libzmq that every generated certificate is accepted.
test-zmq: build
	cd test/zmq && JOBSET_FLUX_BIN=$(BIN)/jobset-flux JOBSET_FLUX_EXAMPLES=$(CURDIR)/examples \
		CGO_ENABLED=1 go test -count=1 -timeout 5m ./...
