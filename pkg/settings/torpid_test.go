package settings_test

import (
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// The torpid settings the overlay module refuses at load (the broker
// would never start) are render errors naming the setting, the values
// and the fix; those it accepts pass, an attribute overriding the TOML as
// it does in the broker.
func TestTorpidSettingsTheBrokerRefuses(t *testing.T) {
	const (
		configPath = "metadata.annotations[flux-framework.org/broker-config]"
		attrsPath  = "metadata.annotations[flux-framework.org/broker-attributes]"
	)
	cases := []struct {
		name, config, attrs string
		path                string // "" when accepted
		says                []string
	}{
		{name: "max below the default min", config: "[tbon]\ntorpid_max = \"5s\"", path: configPath,
			says: []string{`tbon.torpid_max 5s (broker-config) is not longer than tbon.torpid_min 5s (Flux's default)`, "or 0 to turn the torpid check off"}},
		{name: "max in ms below min", config: "[tbon]\ntorpid_max = \"4000ms\"", path: configPath, says: []string{"torpid_max 4000ms"}},
		{name: "min above max", config: "[tbon]\ntorpid_min = \"1m\"\ntorpid_max = \"30s\"", path: configPath,
			says: []string{"torpid_max 30s (broker-config) is not longer than tbon.torpid_min 1m (broker-config)"}},
		{name: "min above the default max", attrs: "tbon.torpid_min=31s", path: attrsPath,
			says: []string{"torpid_max 30s (Flux's default) is not longer than tbon.torpid_min 31s (broker-attributes)"}},
		{name: "attribute max wins over config", config: "[tbon]\ntorpid_max = \"1m\"", attrs: "tbon.torpid_max=2s", path: attrsPath,
			says: []string{"torpid_max 2s (broker-attributes)"}},
		{name: "min zero", config: "[tbon]\ntorpid_min = \"0s\"", path: configPath, says: []string{"tbon.torpid_min is 0 (broker-config)"}},
		{name: "number, not string", config: "[tbon]\ntorpid_max = 30", path: configPath,
			says: []string{"tbon.torpid_max = 30 is not a Flux duration string", `torpid_max = "30s"`}},
		{name: "no duration", config: "[tbon]\ntorpid_max = \"soon\"", path: configPath, says: []string{`torpid_max = "soon"`}},
		{name: "unknown unit", attrs: "tbon.torpid_max=30sec", path: attrsPath, says: []string{`"tbon.torpid_max=30sec" is not a Flux duration`}},
		{name: "two points", attrs: "tbon.torpid_max=1.2.3s", path: attrsPath, says: []string{"not a Flux duration"}},

		{name: "defaults"},
		{name: "max off", config: "[tbon]\ntorpid_max = \"0\""},
		{name: "max off with a large min", config: "[tbon]\ntorpid_min = \"1h\"\ntorpid_max = \"0s\""},
		{name: "max longer", config: "[tbon]\ntorpid_max = \"10s\""},
		{name: "max infinite", attrs: "tbon.torpid_max=inf"},
		{name: "fractions", config: "[tbon]\ntorpid_min = \"0.5s\"\ntorpid_max = \"1.5\""},
		{name: "attribute max rescues config", config: "[tbon]\ntorpid_max = \"1s\"", attrs: "tbon.torpid_max=1m"},
		{name: "other tbon keys", config: "[tbon]\ntcp_user_timeout = \"1m\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := jobsettest.New("tp").Jobs(jobsettest.Job("w"))
			if c.config != "" {
				b = b.Annotation("flux-framework.org/broker-config", c.config)
			}
			if c.attrs != "" {
				b = b.Annotation("flux-framework.org/broker-attributes", c.attrs)
			}
			found := resolveJobSet(t, settings.Defaults(), b)
			if c.path == "" {
				if found.HasErrors() {
					t.Fatalf("want it accepted, got %v", found)
				}
				return
			}
			if len(found) != 1 || !found.HasErrors() || found[0].Path != c.path {
				t.Fatalf("want one error at %s, got %v", c.path, found)
			}
			for _, want := range append(c.says, "the broker would not start") {
				if !strings.Contains(found[0].Message, want) {
					t.Errorf("error %q does not say %q", found[0].Message, want)
				}
			}
		})
	}
}
