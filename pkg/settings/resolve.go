package settings

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
)

// Resolve resolves the settings of one JobSet over config (the defaults
// with the function config applied, see Config): the JobSet's annotations,
// then the environment of the containers it wraps, each value parsed
// once; a higher layer wins whatever the order (Apply). Which containers
// are wrapped is known from the annotations and the config before the
// environment is read, since the environment lives on those containers
// (no setting that chooses them has an environment variable). Every
// problem found is reported, not only the first.
func Resolve(config Settings, js *jobset.JobSet) (Settings, finding.List) {
	s := config
	annotations, found := AnnotationLayer(js.Annotations)
	found.Add(s.Apply(annotations))
	wrapped, f := wrapJobs(js, &s)
	found.Add(f)
	if len(wrapped) == 0 && !found.HasErrors() {
		// Never reached through jobset.Read, which reports the cause; the
		// plan needs a rank 0 all the same.
		found.Errorf("spec.replicatedJobs", "no replicatedJob joins the Flux instance; add one with a container")
	}
	env, f := envLayer(js, wrapped)
	found.Add(f)
	found.Add(s.Apply(env))
	found.Add(checkPMI(&s))
	found.Add(checkQueueKeys(&s))
	found.Add(checkTorpid(&s))
	s.Wrapped = wrapped
	return s, found
}

// AnnotationLayer reads the flux-framework.org/<setting> annotations of a
// JobSet. Unknown names under the prefix are errors (a typo must not be
// silently ignored).
func AnnotationLayer(annotations map[string]string) (Layer, finding.List) {
	layer := Layer{Kind: FromAnnotation, Values: map[string]Raw{}}
	var found finding.List
	for _, key := range slices.Sorted(maps.Keys(annotations)) {
		name, ok := strings.CutPrefix(key, AnnotationPrefix)
		if !ok || key == EnabledAnnotation {
			continue
		}
		path := fmt.Sprintf("metadata.annotations[%s]", key)
		if _, known := byName(name); !known {
			found.Errorf(path, "unknown setting annotation %s%s", finding.Quote(key), suggest(name))
			continue
		}
		layer.Values[name] = Raw{Value: annotations[key], Path: path}
	}
	return layer, found
}

// EnvNames maps the reference plugin's environment variables to settings
// (the rows' Env).
var EnvNames = func() map[string]string {
	names := map[string]string{}
	for _, d := range table {
		if d.Env != "" {
			names[d.Env] = d.Name
		}
	}
	return names
}()

// wrapJobs picks the replicatedJobs that join the instance, in rank order
// (replicated-jobs), and the container to wrap in each (container).
func wrapJobs(js *jobset.JobSet, s *Settings) ([]Wrapped, finding.List) {
	chosen, found := chooseJobs(js, s)
	var wrapped []Wrapped
	for _, rj := range chosen {
		w := Wrapped{Job: rj.Index, Container: -1}
		var names []string
		for _, c := range rj.Pod.Containers {
			names = append(names, c.Name)
			if w.Container < 0 && (s.Container == "" || c.Name == s.Container) {
				w.Container = c.Index
			}
		}
		if w.Container < 0 {
			if len(rj.Pod.Containers) > 0 {
				found.Errorf(rj.Pod.Path+".containers", "container %q is not in replicatedJob %q, whose containers are %s; set flux-framework.org/container to one of them", s.Container, rj.Name, quoteList(names))
			}
			continue
		}
		wrapped = append(wrapped, w)
	}
	return wrapped, found
}

// chooseJobs returns the replicatedJobs replicated-jobs names, in its
// order, or all of them in spec order.
func chooseJobs(js *jobset.JobSet, s *Settings) ([]*jobset.ReplicatedJob, finding.List) {
	var found finding.List
	var chosen []*jobset.ReplicatedJob
	if s.ReplicatedJobs == nil {
		for i := range js.ReplicatedJobs {
			chosen = append(chosen, &js.ReplicatedJobs[i])
		}
		return chosen, found
	}
	var names []string
	for i := range js.ReplicatedJobs {
		names = append(names, js.ReplicatedJobs[i].Name)
	}
	for _, want := range s.ReplicatedJobs {
		i := slices.Index(names, want)
		if i < 0 {
			found.Errorf(s.Origin("replicated-jobs"), "replicated-jobs names %q, but the JobSet's replicatedJobs are %s; list only those", want, quoteList(names))
			continue
		}
		chosen = append(chosen, &js.ReplicatedJobs[i])
	}
	return chosen, found
}

// envLayer reads the reference plugin's environment variables from the
// wrapped containers; they must agree across replicatedJobs.
func envLayer(js *jobset.JobSet, wrapped []Wrapped) (Layer, finding.List) {
	var found finding.List
	layer := Layer{Kind: FromEnv, Values: map[string]Raw{}}
	for _, w := range wrapped {
		c := js.ReplicatedJobs[w.Job].Pod.Containers[w.Container]
		found.Add(checkEnvFromPrefix(&c))
		for _, e := range c.Env {
			name, ok := EnvNames[e.Name]
			if !ok {
				continue
			}
			if e.FromRef {
				found.Errorf(e.Path, "%s", NotLiteral(e.Name, "valueFrom"))
				continue
			}
			if prev, seen := layer.Values[name]; seen && prev.Value != e.Value {
				found.Errorf(e.Path, "%s is %q here but %q at %s; the whole instance needs one value", e.Name, e.Value, prev.Value, prev.Path)
				continue
			}
			layer.Values[name] = Raw{Value: e.Value, Path: e.Path}
		}
	}
	return layer, found
}

// quoteList is names, each Go-quoted, comma-separated.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
