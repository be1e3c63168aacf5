package jobsetrender

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// checkEnvFromObjects refuses an envFrom of a wrapped container that
// takes a setting's variable from a ConfigMap or Secret of the input:
// the kubelet would set it in every pod while the render, which reads the
// setting from the container's literal env, never saw it. A literal env
// variable of the same name wins over envFrom, so it is no conflict. An
// object the input does not hold (already in the cluster) cannot be seen.
func checkEnvFromObjects(js *jobset.JobSet, s *settings.Settings, nb Neighbours) finding.List {
	var found finding.List
	for _, w := range s.Wrapped {
		c := &js.ReplicatedJobs[w.Job].Pod.Containers[w.Container]
		for _, src := range c.EnvFrom {
			keys, ok := nb.EnvKeys(src.Kind, js.Namespace, src.Name)
			if !ok {
				continue
			}
			for _, name := range settings.EnvFromSets(src.Prefix, keys) {
				if slices.ContainsFunc(c.Env, func(e jobset.EnvVar) bool { return e.Name == name }) {
					continue
				}
				key := strings.TrimPrefix(name, src.Prefix)
				found.Errorf(src.Path, "takes %s from the key %q of the %s %q in the input%s: %s; write it as a literal env value of the container (or its annotation), and remove the key", name, key, src.Kind, src.Name, prefixed(src.Prefix), settings.NotLiteral(name, "envFrom"))
			}
		}
	}
	return found
}

// prefixed says which prefix envFrom puts before the keys, "" for none.
func prefixed(prefix string) string {
	if prefix == "" {
		return ""
	}
	return fmt.Sprintf(" (prefix %q)", prefix)
}
