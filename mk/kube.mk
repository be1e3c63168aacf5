# A real single-node Kubernetes cluster (hack/kube/cluster.sh, docs/contributing/kubernetes.md):
# kube-apiserver, etcd, kube-controller-manager, kube-scheduler, kubelet and
# kubectl v1.35.4, containerd + runc, CNI bridge, CoreDNS and the JobSet
# controller with live webhooks, every binary cached by content under
# ~/.cache/jobset-flux/kube/<key>/. test/kube runs the examples on it.

KUBE_CLUSTER := bash $(CURDIR)/hack/kube/cluster.sh
# There is one cluster per machine (one state directory, one bridge, fixed
# ports): a whole test-kube session, from up to down, holds this lock, so a
# second clone's run (or a cold CI run with its own HOME) waits instead of
# tearing down the cluster under the first one's tests. flock -o keeps the
# lock's descriptor out of the daemons that up starts.
KUBE_STATE_DIR ?= /var/lib/jobset-flux-kube
export KUBE_STATE_DIR
KUBE_SESSION_LOCK := $(KUBE_STATE_DIR).session.lock
# -v shows each case's timings; add e.g. -run TestExamples here.
KUBE_TEST_FLAGS ?= -v

INTEGRATION_TESTS += test-kube

.PHONY: kube-bins kube-up kube-down kube-status test-kube

## kube-bins: build (or reuse) the cluster's binaries; prints their directory.
kube-bins:
	@bash hack/kube/build.sh | tail -n1

## kube-up: start the cluster (a healthy one is kept; FRESH=1 restarts it; KUBE_IP_FAMILY=ipv6 starts it single-stack IPv6).
kube-up:
	FRESH=$(FRESH) $(KUBE_CLUSTER) up

## kube-down: stop the cluster and restore what it changed on the machine.
kube-down:
	$(KUBE_CLUSTER) down

## kube-status: exit 0 if the cluster runs and its node is Ready.
kube-status:
	$(KUBE_CLUSTER) status

## test-kube: bring the cluster up, run test/kube against it, always take it down (one session per machine at a time).
test-kube: build $(BIN)/kustomize
	@mkdir -p $(dir $(KUBE_SESSION_LOCK)); \
	flock -n $(KUBE_SESSION_LOCK) true || echo "test-kube: another test-kube holds $(KUBE_SESSION_LOCK); waiting"
	flock -o $(KUBE_SESSION_LOCK) $(MAKE) --no-print-directory kube-session

# kube-session is test-kube's body, run under its lock. Other suites that
# need the cluster add the name of a variable holding a shell command to
# KUBE_SESSION_SUITES (mk/helm.mk): each runs after test/kube, in a
# subshell, with KUBECONFIG and KUBECTL exported. KUBE_SESSION_LOCK_HELD
# tells hack/quickstart.sh (TestQuickstart) that its session lock is held
# already, by this session. A command, not a
# $(MAKE) call: make -n runs recipe lines that hold $(MAKE), and this
# one starts the cluster.
.PHONY: kube-session
kube-session:
	trap 'rc=$$?; $(KUBE_CLUSTER) down; exit $$rc' EXIT; \
	$(KUBE_CLUSTER) up; \
	eval "$$($(KUBE_CLUSTER) env)"; \
	cd test/kube && \
	  KUBE_SESSION_LOCK_HELD=$(KUBE_SESSION_LOCK) \
	  KUBECONFIG=$$KUBECONFIG KUBECTL=$$KUBECTL JOBSET_FLUX_BIN=$(BIN)/jobset-flux \
	  JOBSET_FLUX_KUSTOMIZE=$(BIN)/kustomize go test -count=1 -timeout 40m $(KUBE_TEST_FLAGS) ./... \
	  $(foreach suite,$(KUBE_SESSION_SUITES),&& ($($(suite))))

INTEGRATION_TESTS += test-kube-ipv6

# What runs on the single-stack IPv6 cluster: the address family's own
# checks (test/kube/family_test.go), every example in copy mode and an
# instance across the worker nodes in image mode. The rest of test/kube is
# about Kubernetes and Flux, not the address family, and runs on IPv4
# only: the second cluster session must earn its minutes. The three
# workers are all TestAcrossNodes needs.
KUBE_IPV6_TESTS ?= ^(TestClusterFamily|TestExamples|TestAcrossNodes)/^(ipv6|copy|three-jobs-image)

.PHONY: test-kube-ipv6
## test-kube-ipv6: the cluster started single-stack IPv6 (KUBE_IP_FAMILY=ipv6), KUBE_IPV6_TESTS of test/kube on it; always taken down.
test-kube-ipv6: build $(BIN)/kustomize
	@mkdir -p $(dir $(KUBE_SESSION_LOCK)); \
	flock -n $(KUBE_SESSION_LOCK) true || echo "test-kube-ipv6: another test-kube holds $(KUBE_SESSION_LOCK); waiting"
	KUBE_IP_FAMILY=ipv6 KUBE_WORKERS=3 flock -o $(KUBE_SESSION_LOCK) $(MAKE) --no-print-directory kube-session \
	  KUBE_TEST_FLAGS="-v -run '$(KUBE_IPV6_TESTS)'" KUBE_SESSION_SUITES=

# Out of make test: it would add to a warm make test's time budget, and
# test-kube runs the same image-volume pods on this containerd through the
# kubelet, in both view-mount modes. Run it when the containerd build or
# its config changes. It once failed without a reproduction
# (docs/contributing/measurements.md).

.PHONY: test-kube-containerd
## test-kube-containerd: the cluster's containerd 2 runs Flux from a view image mounted as read-only image volume subPaths (its CRI, no Kubernetes).
test-kube-containerd:
	bash hack/kube/containerd/smoke.sh

INTEGRATION_TESTS += test-kube-images

.PHONY: test-kube-images
## test-kube-images: build the cluster's images and registry; test the registry with a real containerd.
test-kube-images:
	bash hack/kube/images/check.sh $(FLUX_SRC)

.PHONY: test-kube-all-modes
## test-kube-all-modes: test-kube with every case in both view-mount modes (make test runs image mode on a few, test/kube/viewmount_test.go).
test-kube-all-modes:
	JOBSET_FLUX_KUBE_ALL_VIEW_MOUNTS=1 $(MAKE) --no-print-directory test-kube
