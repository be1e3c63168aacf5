package yamltree

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// yaml11Seeds are values around the edges of the YAML 1.1 rules: every
// boolean and null word, near misses, numbers, timestamps, and strings
// with indicators that make them more than one plain scalar.
var yaml11Seeds = []string{
	"", "y", "Y", "yes", "Yes", "YES", "yES", "n", "N", "no", "No", "NO", "nO",
	"true", "True", "TRUE", "tRUE", "false", "False", "FALSE", "on", "On", "ON", "oN",
	"off", "Off", "OFF", "null", "Null", "NULL", "nULL", "~", "<<",
	"yes-please", "no_way", "on.off", "nope", "o", "t", "f", "yy", "y/n", "Yes.",
	"0", "1", "-1", "+1", "0x1f", "0o17", "017", "0b101", "1_000", "1:30", "190:20:30",
	"1e3", ".5", ".inf", "-.Inf", ".NaN", "2001-12-14", "2001-12-14t21:59:43.10-05:00",
	"4Gi", "0-3", "8050", "n: 1", "y #c", "t[1]", "f{a}", "o, p", "no\n", "n\tx",
	"né", "nö", "yes ", " yes", "Never", "Indexed", "flux-install", "/mnt/flux",
}

// TestYAML11Quoting checks the cheap first look against the full YAML 1.1
// check it guards: a value it lets pass without the full check must be one
// the full check calls a string, and the words it names must be non-strings.
func TestYAML11Quoting(t *testing.T) {
	for _, v := range yaml11Seeds {
		checkFirstLook(t, v)
	}
	for w := range yaml11Words {
		if !yaml.IsValueNonString(w) {
			t.Errorf("%q is listed as a YAML 1.1 word, but YAML 1.1 reads it as a string", w)
		}
	}
	// One YAML 1.1 non-string for each byte of yaml11FirstBytes, written
	// out here rather than derived from it: a byte dropped from the set
	// (".5" and ".inf" unquoted) or added without a reason fails.
	firsts := map[byte]bool{}
	for _, v := range []string{
		"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "+1", "-1", ".5", ".inf", "~",
		"y", "Y", "n", "N", "true", "True", "false", "False", "on", "On", "off", "Off",
	} {
		firsts[v[0]] = true
		if !yaml.IsValueNonString(v) || !mayBeYAML11NonString(v) {
			t.Errorf("%q: YAML 1.1 non-string %v, first look %v; want both true", v, yaml.IsValueNonString(v), mayBeYAML11NonString(v))
		}
	}
	if len(firsts) != len(yaml11FirstBytes) {
		t.Errorf("yaml11FirstBytes is %q; the values above start with %d distinct bytes", yaml11FirstBytes, len(firsts))
	}
	quoted := map[string]bool{"y": true, "on": true, "0x1f": true, "1_000": true, "~": true}
	for v, want := range quoted {
		n := yaml.NewStringRNode(v).YNode()
		QuoteAmbiguous(n)
		if got := n.Style == yaml.DoubleQuotedStyle; got != want {
			t.Errorf("QuoteAmbiguous(%q): double-quoted = %v, want %v", v, got, want)
		}
	}
	for _, v := range []string{"yes-please", "Never", "flux-install", "nope", "4Gi"} {
		n := yaml.NewStringRNode(v).YNode()
		QuoteAmbiguous(n)
		if n.Style != 0 {
			t.Errorf("QuoteAmbiguous(%q) changed the style to %v; it is a plain string in YAML 1.1", v, n.Style)
		}
	}
}

func FuzzYAML11Quoting(f *testing.F) {
	for _, v := range yaml11Seeds {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if len(v) > 64 {
			return
		}
		checkFirstLook(t, v)
	})
}

func checkFirstLook(t *testing.T, v string) {
	t.Helper()
	full := yaml.IsValueNonString(v)
	// The first look may only skip values whose first byte cannot start a
	// YAML 1.1 non-string, or that are single plain words.
	if full && !mayBeYAML11NonString(v) && strings.IndexByte(yaml11FirstBytes, v[0]) >= 0 {
		t.Errorf("mayBeYAML11NonString(%q) = false, but YAML 1.1 reads it as a non-string", v)
	}
}
