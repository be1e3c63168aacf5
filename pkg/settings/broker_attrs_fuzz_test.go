package settings

import (
	"slices"
	"strings"
	"testing"
)

// FuzzBrokerAttributes (issue 19, class 7): whatever broker-attributes
// text is accepted names only attributes flux-core's broker knows, none
// that the entrypoint sets and none that bootstrap, ranks or the
// instance's paths depend on; every refusal is an error, never a panic.
func FuzzBrokerAttributes(f *testing.F) {
	for _, seed := range []string{"broker.quorum=2", "hostname=a", "broker.boot-method=single", "test-ro.x=1",
		"vendor.a=1 log-level=3", "tbon.interface-hint=eth0", "x.y=1", "broker.quorum=1 broker.quorum=2"} {
		f.Add(seed)
	}
	for _, known := range knownBrokerAttributes {
		f.Add(strings.Replace(known, "*", "a", 1) + "=1")
	}
	f.Fuzz(func(t *testing.T, raw string) {
		words, err := parseBrokerAttributes(raw)
		if err != nil {
			return
		}
		for _, w := range words {
			name, _, _ := strings.Cut(w, "=")
			if _, computed := ComputedBrokerAttributes[name]; computed {
				t.Fatalf("%q: accepted %s, which the entrypoint sets", raw, name)
			}
			for pattern := range RefusedBrokerAttributes {
				if matchAttr(pattern, name) {
					t.Fatalf("%q: accepted %s, which is refused (%s)", raw, name, pattern)
				}
			}
			if !slices.ContainsFunc(knownBrokerAttributes, func(k string) bool { return matchAttr(k, name) }) {
				t.Fatalf("%q: accepted %s, which the broker does not know", raw, name)
			}
		}
	})
}
