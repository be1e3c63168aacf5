package settings_test

import (
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// With queues on, broker-config may set none of the keys the setting
// writes, however they are written, and the error names the key, both
// settings' fields and the way out; with queues off the same TOML is the
// user's, as it was before the setting existed.
func TestQueuesRefuseOwnedBrokerConfig(t *testing.T) {
	const brokerPath = "metadata.annotations[flux-framework.org/broker-config]"
	refused := map[string]string{ // broker-config -> what the error names
		"[queues.debug]\nrequires = [\"debug\"]": "sets queues,",
		"[queues]":                               "sets queues,",
		"[policy.jobspec.defaults.system]\nqueue = \"batch\"":         "sets policy.jobspec.defaults.system.queue,",
		"[policy]\njobspec = {defaults = {system = {queue = \"x\"}}}": "sets policy.jobspec.defaults.system.queue,",
		"[policy]\njobspec = \"x\"":                                   "sets policy.jobspec to a value that is not a table, where jobset-flux writes policy.jobspec.defaults.system.queue",
		"[policy.jobspec.defaults]\nsystem = 1":                       "sets policy.jobspec.defaults.system to a value that is not a table",
	}
	for toml, names := range refused {
		js := jobsettest.New("q").Jobs(jobsettest.Job("w")).
			Annotation("flux-framework.org/queues", "true").
			Annotation("flux-framework.org/broker-config", toml)
		found := resolveJobSet(t, settings.Defaults(), js)
		if len(found) != 1 || !found.HasErrors() || found[0].Path != brokerPath {
			t.Errorf("broker-config %q with queues: want one error at %s, got %v", toml, brokerPath, found)
			continue
		}
		msg := found[0].Message
		for _, want := range []string{names, "flux-framework.org/queues", `set queues to "false"`} {
			if !strings.Contains(msg, want) {
				t.Errorf("broker-config %q with queues: error %q does not name %q", toml, msg, want)
			}
		}

		off := jobsettest.New("q").Jobs(jobsettest.Job("w")).Annotation("flux-framework.org/broker-config", toml)
		if found := resolveJobSet(t, settings.Defaults(), off); found.HasErrors() {
			t.Errorf("broker-config %q without queues: want it accepted, got %v", toml, found)
		}
	}

	// The policy the setting does not write stays the user's.
	kept := "[policy.jobspec.defaults.system]\nduration = \"1h\"\n[policy.limits]\nduration = \"4h\""
	js := jobsettest.New("q").Jobs(jobsettest.Job("w")).
		Annotation("flux-framework.org/queues", "true").
		Annotation("flux-framework.org/broker-config", kept)
	if found := resolveJobSet(t, settings.Defaults(), js); found.HasErrors() {
		t.Errorf("broker-config %q with queues: want it accepted, got %v", kept, found)
	}
}

// The function config's queues reaches every JobSet, and a JobSet's own
// broker-config is checked against it: the error names where each was set.
func TestQueuesFromConfigCheckAnnotation(t *testing.T) {
	config, found := settings.Config(settings.Layer{Kind: settings.FromConfig, Values: map[string]settings.Raw{
		"queues": {Value: "true", Path: "spec.queues"},
	}})
	if found.HasErrors() || !config.Queues {
		t.Fatalf("config: queues %v, %v", config.Queues, found)
	}
	js := jobsettest.New("q").Jobs(jobsettest.Job("w")).
		Annotation("flux-framework.org/broker-config", "[queues.x]")
	found = resolveJobSet(t, config, js)
	if len(found) != 1 || !strings.Contains(found[0].Message, "(spec.queues;") {
		t.Errorf("want one error naming spec.queues, got %v", found)
	}
	// A JobSet turns it off for itself, and its [queues] is its own again.
	found = resolveJobSet(t, config, js.Annotation("flux-framework.org/queues", "false"))
	if found.HasErrors() {
		t.Errorf("queues off by annotation: want no error, got %v", found)
	}
}

// Properties in resource.config are refused with queues on as without:
// the function writes every resource.config entry.
func TestQueuesResourceConfigProperties(t *testing.T) {
	js := jobsettest.New("q").Jobs(jobsettest.Job("w")).
		Annotation("flux-framework.org/queues", "true").
		Annotation("flux-framework.org/broker-config", "[[resource.config]]\nhosts = \"q-w-0-0\"\nproperties = [\"w\"]")
	found := resolveJobSet(t, settings.Defaults(), js)
	if len(found) != 1 || !strings.Contains(found[0].Message, "sets resource.config, which jobset-flux writes") {
		t.Errorf("want one error naming resource.config, got %v", found)
	}
}
