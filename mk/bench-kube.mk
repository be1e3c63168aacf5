# Start-up benchmark on the real cluster (not part of `make test`): a Flux
# JobSet of 3 and 8 pods rendered by jobset-flux, in each view-mount mode
# (copy: the flux-installer copies the view; image: an image volume),
# against the same pods without Flux, from kubectl apply to Running, every
# broker joined, the first output line and Completed, and what each pod
# writes to the node's disk. docs/contributing/startup.md has the method and the
# figures; this target rewrites its table block. One mode only:
# BENCH_KUBE_FLAGS=-view-mounts=image.
#
#   make kube-up                                   once: the cluster must be running
#   make bench-kube                                3 and 8 pods, 3 runs each (13.5 min at load 10-24)
#   make bench-kube BENCH_KUBE_SIZES=3 BENCH_KUBE_RUNS=1 BENCH_KUBE_DOC=

BENCH_KUBE_DIR ?= $(CURDIR)/_out/bench-kube
BENCH_KUBE_SIZES ?= 3,8
BENCH_KUBE_RUNS ?= 3
BENCH_KUBE_DOC ?= docs/contributing/startup.md
BENCH_KUBE_FLAGS ?=
BENCH_KUBE_CLUSTER := bash hack/kube/cluster.sh

.PHONY: bench-kube

## bench-kube: time Flux JobSet start-up on the running test cluster against the same pods without Flux; writes docs/contributing/startup.md.
# The cluster is used, never started or stopped here: other work may share it.
bench-kube: build
	$(BENCH_KUBE_CLUSTER) status || { echo 'bench-kube: no running cluster (make kube-up)' >&2; exit 1; }
	cd test/kube && go build -o $(BENCH_KUBE_DIR)/startbench ./cmd/startbench
	eval "$$($(BENCH_KUBE_CLUSTER) env)"; \
	$(BENCH_KUBE_DIR)/startbench -fn $(BIN)/jobset-flux -kubectl "$$KUBECTL" -kubeconfig "$$KUBECONFIG" \
		-dir $(BENCH_KUBE_DIR) -sizes $(BENCH_KUBE_SIZES) -runs $(BENCH_KUBE_RUNS) \
		$(if $(BENCH_KUBE_DOC),-doc $(BENCH_KUBE_DOC)) $(BENCH_KUBE_FLAGS)
