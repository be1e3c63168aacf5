package main

import (
	"fmt"
	"strings"
)

// variant is what one run applies: the floor (no Flux), or a Flux JobSet
// whose view reaches the pods by mount (view-mount: copy or image).
type variant struct {
	flux  bool
	mount string
}

var floorVariant = variant{}

// fluxVariant is the Flux JobSet of one view-mount mode.
func fluxVariant(mount string) variant { return variant{flux: true, mount: mount} }

// String names the variant in logs and tables: "floor", "copy", "image".
func (v variant) String() string {
	if !v.flux {
		return "floor"
	}
	return v.mount
}

// copies reports whether the flux-installer copies the view (copy mode).
func (v variant) copies() bool { return v.flux && v.mount == "copy" }

// parseMounts reads -view-mounts: copy, image or both, in order.
func parseMounts(list string) ([]string, error) {
	var mounts []string
	for _, m := range strings.Split(list, ",") {
		m = strings.TrimSpace(m)
		if m != "copy" && m != "image" {
			return nil, fmt.Errorf("-view-mounts: %q is not copy or image", m)
		}
		mounts = append(mounts, m)
	}
	return mounts, nil
}

// order is the variants of one repetition: the floor and each Flux mode,
// rotated by rep so that a trend in the machine's load falls on all alike.
func order(mounts []string, rep int) []variant {
	vs := []variant{floorVariant}
	for _, m := range mounts {
		vs = append(vs, fluxVariant(m))
	}
	k := rep % len(vs)
	return append(vs[k:], vs[:k]...)
}
