// Package helm runs jobset-flux as the post-renderer of real Helm: Helm 3
// (--post-renderer PATH) and Helm 4 (the postrenderer/v1 plugin in
// deploy/helm/jobset-flux), both built from their Go modules at the
// versions tools/helm3 and tools/helm4 pin (hack/helm/build.sh). See
// docs/user/helm.md. The tests named TestCluster* install the chart on the
// project's test cluster and run in make test-kube's session
// (mk/helm.mk); the others need no cluster.
package helm
