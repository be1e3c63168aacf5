package transform_test

import (
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// TestIPFamily: ip-family ipv6 turns on Flux's enable_ipv6 in broker.toml
// and changes nothing else; ipv4, the default, writes nothing; any other
// value, and an enable_ipv6 of the user's in broker-config, is refused at
// its field, naming the setting.
func TestIPFamily(t *testing.T) {
	render := func(t *testing.T, annotations string) (*fn.ResourceList, bool) {
		t.Helper()
		rl, ok, _, err := hKRM(t, hProcessor(t), []byte(elasticJobSet(annotations, "", "")))
		if err != nil {
			t.Fatal(err)
		}
		return rl, ok
	}
	base, ok := render(t, "")
	if !ok {
		t.Fatalf("refused: %s", hDump(base))
	}
	plain := generatedFile(t, base, "broker.toml")
	if strings.Contains(plain, "enable_ipv6") {
		t.Errorf("the default writes enable_ipv6:\n%s", plain)
	}
	for _, c := range []struct{ value, want string }{{"ipv4", plain}, {"ipv6", ""}} {
		rl, ok := render(t, `, flux-framework.org/ip-family: `+c.value)
		if !ok {
			t.Fatalf("%s refused: %s", c.value, hDump(rl))
		}
		got := generatedFile(t, rl, "broker.toml")
		if c.want != "" {
			if got != c.want {
				t.Errorf("ip-family %s changed broker.toml:\n%s", c.value, got)
			}
			continue
		}
		if strings.Count(got, "enable_ipv6 = true") != 1 {
			t.Errorf("ip-family ipv6: broker.toml lacks enable_ipv6 = true once:\n%s", got)
		}
		// Nothing else changes: the line and its comment removed, it is
		// the default render.
		var kept []string
		for _, line := range strings.Split(got, "\n") {
			if !strings.Contains(line, "enable_ipv6") && !strings.Contains(line, "ip-family ipv6") && !strings.HasPrefix(line, "# their names' IPv6") {
				kept = append(kept, line)
			}
		}
		if strings.Join(kept, "\n") != plain {
			t.Errorf("ip-family ipv6 changed more than enable_ipv6:\n%s", got)
		}
	}
	for _, c := range []struct{ name, annotations, path string }{
		{"unknown family", `, flux-framework.org/ip-family: IPv6`, "metadata.annotations[flux-framework.org/ip-family]"},
		{"dual", `, flux-framework.org/ip-family: dual`, "metadata.annotations[flux-framework.org/ip-family]"},
		{"enable_ipv6 in broker-config", `, flux-framework.org/broker-config: "[bootstrap]\nenable_ipv6 = true"`, "metadata.annotations[flux-framework.org/broker-config]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rl, ok := render(t, c.annotations)
			if ok {
				t.Fatalf("rendered: %s", hDump(rl))
			}
			var found bool
			for _, r := range rl.Results {
				if r.Severity == fn.Error && r.Field != nil && r.Field.Path == c.path {
					found = true
					if !strings.Contains(r.Message, "ip-family") {
						t.Errorf("the error does not name ip-family: %s", r.Message)
					}
				}
			}
			if !found {
				t.Errorf("no error at %s: %s", c.path, hDump(rl))
			}
		})
	}
}
