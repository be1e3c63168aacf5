// Package kustomize proves jobset-flux where kustomize users run it: every
// example and a set of kustomization layouts are built with the real
// standalone kustomize binary (bin/kustomize) and, in-process, with krusty,
// the library kustomize is built on, both running the real bin/jobset-flux.
//
// The tests build nothing: `make unit` builds bin/jobset-flux and installs
// bin/kustomize first. Outside CI a missing binary skips the tests; with
// CI=true it fails them.
package kustomize
