package main

import (
	"fmt"
	"strings"
)

// The kinds of run the benchmark knows.
const (
	kindFloor    = "floor"    // the same pods without Flux
	kindCopy     = "copy"     // jobset-flux, view-mount copy (the default)
	kindImage    = "image"    // jobset-flux, view-mount image
	kindFluxOwn  = "flux-own" // flux start --test-size=N in one pod: Flux's own start
	kindOperator = "operator" // the Flux Operator's MiniCluster
	kindTrainer  = "trainer"  // a Kubeflow Trainer TrainJob on a flux runtime
)

// variant is what one run applies, and whether its command fails (exits
// 3 in every task) instead of printing its line.
type variant struct {
	kind string
	fail bool
}

// String names the variant in logs and tables.
func (v variant) String() string {
	if v.fail {
		return v.kind + " (exit 3)"
	}
	return v.kind
}

// rendered reports whether jobset-flux renders the run (copy or image).
func (v variant) rendered() bool { return v.kind == kindCopy || v.kind == kindImage }

// copies reports whether a flux-installer copies the view (copy mode).
func (v variant) copies() bool { return v.kind == kindCopy }

// anchor reports whether the run is one of the other tools'.
func (v variant) anchor() bool { return v.kind == kindOperator || v.kind == kindTrainer }

// title is the variant's column heading.
func (v variant) title() string {
	switch v.kind {
	case kindFloor:
		return "no-Flux floor"
	case kindCopy:
		return "jobset-flux, copy"
	case kindImage:
		return "jobset-flux, image"
	case kindFluxOwn:
		return "Flux's own start (`--test-size`)"
	case kindOperator:
		return "Flux Operator"
	case kindTrainer:
		return "Trainer Flux plugin"
	}
	return v.kind
}

// parseKinds reads a comma-separated list of kinds, each one of allowed;
// "" is none.
func parseKinds(flag, list string, allowed ...string) ([]string, error) {
	var kinds []string
	for _, k := range strings.Split(list, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			return nil, fmt.Errorf("-%s: %q is not one of %s", flag, k, strings.Join(allowed, ", "))
		}
		kinds = append(kinds, k)
	}
	return kinds, nil
}

// timedKinds are the kinds of one repetition: the floor, Flux's own start
// (ownStart), each view-mount mode and each anchor.
func timedKinds(mounts, anchors []string, ownStart bool) []string {
	kinds := []string{kindFloor}
	if ownStart {
		kinds = append(kinds, kindFluxOwn)
	}
	kinds = append(kinds, mounts...)
	return append(kinds, anchors...)
}

// order is the variants of one repetition, rotated by rep so that a trend
// in the machine's load falls on all alike.
func order(kinds []string, rep int) []variant {
	vs := make([]variant, 0, len(kinds))
	for _, k := range kinds {
		vs = append(vs, variant{kind: k})
	}
	k := rep % len(vs)
	return append(vs[k:], vs[:k]...)
}
