# Start-up benchmark on the real cluster (not part of `make test`): Flux
# JobSets of 3 to 64 pods rendered by jobset-flux, in each view-mount mode
# (copy: the flux-installer copies the view; image: an image volume),
# side by side with the same pods without Flux, Flux's own start (flux
# start --test-size=N in one pod) and the two anchors (the Flux Operator
# and the Kubeflow Trainer's Flux plugin, built from ../shared/anchors-src
# and run out of cluster by hack/anchors/anchors.sh), plus one run each
# whose command exits 3. docs/contributing/startup.md has the method;
# docs/contributing/startup-figures.md the figures, whose block this target rewrites.
#
#   make kube-up                                   once: the cluster must be running
#   make bench-kube                                everything (docs/contributing/startup.md says how long)
#   make bench-kube BENCH_KUBE_SIZES=3 BENCH_KUBE_RUNS=1 BENCH_KUBE_DOC=   a quick try, docs untouched
#   make bench-kube BENCH_KUBE_ANCHORS=            without the anchors (no build, no managers)

BENCH_KUBE_DIR ?= $(CURDIR)/_out/bench-kube
BENCH_KUBE_SIZES ?= 3,8,16,32,64
BENCH_KUBE_RUNS ?= 3
BENCH_KUBE_ANCHORS ?= operator,trainer
BENCH_KUBE_DOC ?= docs/contributing/startup-figures.md
BENCH_KUBE_FLAGS ?=
BENCH_KUBE_CLUSTER := bash hack/kube/cluster.sh
BENCH_KUBE_ANCHORS_SH := bash hack/anchors/anchors.sh

.PHONY: bench-kube

## bench-kube: time Flux start-up on the running test cluster beside its floors and the anchors; writes docs/contributing/startup-figures.md.
# The cluster is used, never started or stopped here: other work may share
# it. The anchors' managers are started for the run and stopped after it.
bench-kube: build
	$(BENCH_KUBE_CLUSTER) status || { echo 'bench-kube: no running cluster (make kube-up)' >&2; exit 1; }
	cd test/kube && go build -o $(BENCH_KUBE_DIR)/startbench ./cmd/startbench
	$(if $(BENCH_KUBE_ANCHORS),$(BENCH_KUBE_ANCHORS_SH) up)
	eval "$$($(BENCH_KUBE_CLUSTER) env)"; status=0; \
	$(BENCH_KUBE_DIR)/startbench -fn $(BIN)/jobset-flux -kubectl "$$KUBECTL" -kubeconfig "$$KUBECONFIG" \
		-dir $(BENCH_KUBE_DIR) -sizes $(BENCH_KUBE_SIZES) -runs $(BENCH_KUBE_RUNS) -anchors "$(BENCH_KUBE_ANCHORS)" \
		$(if $(BENCH_KUBE_DOC),-doc $(BENCH_KUBE_DOC)) $(BENCH_KUBE_FLAGS) || status=$$?; \
	$(if $(BENCH_KUBE_ANCHORS),$(BENCH_KUBE_ANCHORS_SH) down || status=1;) \
	exit $$status
