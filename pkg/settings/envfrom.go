package settings

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
)

// A setting's environment variable on a wrapped container is read at
// render time, from the literal value written there. One that only the
// kubelet fills in (valueFrom, or envFrom from a ConfigMap or a Secret)
// would configure the pod's environment without the render ever seeing
// it, so each of those is refused with the same words.

// NotLiteral is the reason a setting's variable filled in by the kubelet
// (how: valueFrom, envFrom) is refused.
func NotLiteral(name, how string) string {
	return fmt.Sprintf("%s must be a literal value: jobset-flux reads it at render time, so %s cannot be resolved", name, how)
}

// envFromPrefix is the prefix every setting's variable starts with.
const envFromPrefix = "FLUX_"

// EnvFromSets is the setting variables an envFrom entry with prefix sets
// from keys, in the order of keys, each once.
func EnvFromSets(prefix string, keys []string) []string {
	var names []string
	for _, k := range keys {
		if _, ok := EnvNames[prefix+k]; ok && !slices.Contains(names, prefix+k) {
			names = append(names, prefix+k)
		}
	}
	return names
}

// checkEnvFromPrefix refuses an envFrom of a wrapped container whose
// prefix can make one of its object's keys a setting's variable: the
// keys are not known at render time.
func checkEnvFromPrefix(c *jobset.Container) finding.List {
	var found finding.List
	for _, src := range c.EnvFrom {
		if !strings.HasPrefix(src.Prefix, envFromPrefix) {
			continue
		}
		var names []string
		for _, name := range slices.Sorted(maps.Keys(EnvNames)) {
			if strings.HasPrefix(name, src.Prefix) {
				names = append(names, name)
			}
		}
		if len(names) == 0 {
			continue
		}
		from := "its object"
		if src.Kind != "" {
			from = fmt.Sprintf("%s %q", src.Kind, src.Name)
		}
		found.Errorf(src.Path+".prefix", "is %q, so a key of %s can set %s: %s; write the setting as a literal env value (or its annotation) and give envFrom a prefix no setting's variable starts with", src.Prefix, from, strings.Join(names, " or "), NotLiteral("each", "envFrom"))
	}
	return found
}
