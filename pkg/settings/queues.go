package settings

import (
	"fmt"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
)

// QueueBrokerConfig lists the broker.toml keys the queues setting writes
// besides each [[resource.config]] entry's properties (resource.config is
// the function's whatever the setting), with why. With queues on, the
// user's TOML may set none of them; with it off they are the user's.
var QueueBrokerConfig = []struct{ Key, Why string }{
	{"queues", "one queue per replicatedJob, each requiring the property its pods have"},
	{"policy.jobspec.defaults.system.queue", "a job submitted without -q goes to the replicatedJob the command runs on, or rank 0's"},
}

// checkQueueKeys refuses, with queues on, broker-config keys the setting
// writes: Flux would take one of the two values, and the queues the pods
// are described with would not be the ones jobs are sent to. The keys
// are found by walking the tables, so that [policy.jobspec] written as a
// table or inline reads the same; a value that is not a table where the
// setting needs one is refused too, since the setting could not add to it.
func checkQueueKeys(s *Settings) finding.List {
	var found finding.List
	if !s.Queues || s.BrokerConfig == nil {
		return found
	}
	for _, owned := range QueueBrokerConfig {
		at, set := findKey(s.BrokerConfig, owned.Key)
		if !set {
			continue
		}
		what := "sets " + at
		if at != owned.Key {
			what = fmt.Sprintf("sets %s to a value that is not a table, where jobset-flux writes %s", at, owned.Key)
		}
		found.Errorf(s.Origin("broker-config"), "broker-config %s, which jobset-flux writes when queues is \"true\" (%s; %s): remove it, or set queues to \"false\" and configure queues yourself", what, s.Origin("queues"), owned.Why)
	}
	return found
}

// findKey reports whether the dotted key is set in doc, and the key at
// which it is: the key itself, or the first of its tables that holds a
// value other than a table.
func findKey(doc map[string]any, key string) (string, bool) {
	parts := strings.Split(key, ".")
	table := doc
	for i, part := range parts {
		v, ok := table[part]
		if !ok {
			return "", false
		}
		if i == len(parts)-1 {
			return key, true
		}
		sub, isTable := v.(map[string]any)
		if !isTable {
			return strings.Join(parts[:i+1], "."), true
		}
		table = sub
	}
	return "", false
}
