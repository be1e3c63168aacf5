package settings

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/pelletier/go-toml/v2"
)

// Broker attributes are passed to flux start as -Sname=value words. Names
// are Flux's dotted attribute names; values are kept to characters that
// mean nothing to a shell or a URI template, although the entrypoint
// quotes every word anyway.
var (
	brokerAttrName  = lazyRegexp(`^[a-z][a-z0-9_-]*(?:\.[a-z0-9_-]+)*$`)
	brokerAttrValue = lazyRegexp(`^[A-Za-z0-9_./:,+@=-]{0,256}$`)
)

func parseBrokerAttributes(raw string) ([]string, error) {
	// Only spaces separate words, as for run-options.
	words := strings.FieldsFunc(raw, func(r rune) bool { return r == ' ' })
	if len(words) > 64 {
		return nil, fmt.Errorf("has %d words; at most 64 are allowed", len(words))
	}
	seen := map[string]bool{}
	for _, w := range words {
		name, value, ok := strings.Cut(w, "=")
		if !ok || !brokerAttrName().MatchString(name) || len(name) > 128 {
			return nil, fmt.Errorf("word %s must be name=value with a Flux attribute name like broker.quorum or log-filename", finding.Quote(w))
		}
		if !brokerAttrValue().MatchString(value) {
			return nil, fmt.Errorf("the value of %s may only contain letters, digits and _ . / : , + @ = - (at most 256)", finding.Quote(w))
		}
		if err := checkBrokerAttribute(name); err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, fmt.Errorf("sets %s twice", name)
		}
		seen[name] = true
	}
	return words, nil
}

// OwnedBrokerConfig lists the broker.toml keys the function writes (a
// table name means every key in it), with what to do instead. The user's
// TOML may add to the tables jobset-flux writes, never change its keys.
var OwnedBrokerConfig = map[string]string{
	"bootstrap":                           "the hosts, ports, address family and certificate come from the JobSet; use network-device, port, ip-family, curve-secret",
	"resource.config":                     "each replicatedJob's cores and GPUs come from its pods; use cores-per-node, gpus-per-node",
	"resource.path":                       "the resources are written inline from the pods",
	"resource.noverify":                   "pods' hwloc views are not reliable, so jobset-flux always sets it",
	"sched-fluxion-qmanager.queue-policy": "use queue-policy",
	"access.allow-root-owner":             "kubectl exec as root relies on it",
	"tbon.topo":                           "use topology",
	"tbon.connect_timeout":                "use connect-timeout",
}

// maxBrokerConfig bounds the TOML text: it is shipped in the ConfigMap,
// which Kubernetes caps at 1 MiB with everything else in it.
const maxBrokerConfig = 16 << 10

// parseBrokerConfig parses extra broker TOML and refuses keys the
// function owns. Every top-level value must be a table: Flux has no
// top-level keys, and the merge puts the user's keys into tables.
func parseBrokerConfig(raw string) (map[string]any, error) {
	if len(raw) > maxBrokerConfig {
		return nil, fmt.Errorf("is %d bytes; at most %d are allowed", len(raw), maxBrokerConfig)
	}
	doc := map[string]any{}
	if err := toml.Unmarshal([]byte(raw), &doc); err != nil {
		return nil, fmt.Errorf("is not valid TOML: %w", err)
	}
	for _, table := range slices.Sorted(maps.Keys(doc)) {
		sub, ok := doc[table].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("has a top-level key %s; Flux's settings live in tables, like [resource] exclude = \"0\"", finding.Quote(table))
		}
		if why, owned := OwnedBrokerConfig[table]; owned {
			return nil, fmt.Errorf("sets [%s], which jobset-flux writes (%s); remove it", table, why)
		}
		for _, key := range slices.Sorted(maps.Keys(sub)) {
			if why, owned := OwnedBrokerConfig[table+"."+key]; owned {
				return nil, fmt.Errorf("sets %s.%s, which jobset-flux writes (%s); remove it", table, key, why)
			}
		}
	}
	if len(doc) == 0 {
		return nil, nil
	}
	return doc, nil
}
