package jobsetrender

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// DefaultsAnnotation records, on a rendered JobSet, the Job, pod and
// spec.network fields the function set because the user left them
// unset, with the values it set. Those fields look like the user's once
// written, so without the record a JobSet set to enabled: "false", or a
// replicatedJob taken out of replicated-jobs, would keep backoffLimit 0,
// restartPolicy Never, completionMode Indexed, completions, parallelism
// and spec.network: the next render could not give the user's spec back.
// The strip removes each recorded field whose value is still the one
// recorded (a field changed since is the user's), and the render sets
// and records again what the plan sets, so a re-render writes what a
// fresh render of the same input writes.
const DefaultsAnnotation = "jobset-flux.flux-framework.org/defaults"

// defaultsRecord is the annotation's value, as JSON (keys sorted, so the
// text depends on nothing but what was set).
type defaultsRecord struct {
	Network map[string]string            `json:"network,omitempty"`
	Jobs    map[string]map[string]string `json:"replicatedJobs,omitempty"`
}

// Keys of a replicatedJob's record for the pod spec's fields: the Job
// spec's are recorded by their own key.
const podFieldPrefix = "template.spec."

// recordDefaults writes the annotation for what the plan set (nothing
// when it set nothing).
func recordDefaults(root *yaml.Node, pl *plan.Plan) {
	rec := defaultsRecord{}
	for _, d := range pl.SetNetwork {
		if rec.Network == nil {
			rec.Network = map[string]string{}
		}
		rec.Network[d.Field] = d.Value.String()
	}
	for _, g := range pl.Groups {
		for _, d := range g.Set {
			if rec.Jobs == nil {
				rec.Jobs = map[string]map[string]string{}
			}
			if rec.Jobs[g.Name] == nil {
				rec.Jobs[g.Name] = map[string]string{}
			}
			key := d.Field
			if d.In == jobset.InPod {
				key = podFieldPrefix + d.Field
			}
			rec.Jobs[g.Name][key] = d.Value.String()
		}
	}
	if rec.Network == nil && rec.Jobs == nil {
		return
	}
	text, err := json.Marshal(rec)
	if err != nil {
		return // maps of strings always marshal
	}
	meta := yamltree.EnsureMap(root, "metadata", "")
	annotations := yamltree.EnsureMap(meta, "annotations", "")
	yamltree.Set(annotations, DefaultsAnnotation, yamltree.String(string(text)), "")
}

// stripDefaults removes the recorded fields that still hold their
// recorded values, and the record, and reports whether there was one. A
// spec.network the removal empties, in block style (the function's: no
// text holds an empty block map), goes too.
func stripDefaults(root *yaml.Node) bool {
	annotations := yamltree.GetPath(root, "metadata", "annotations")
	if annotations == nil || annotations.Kind != yaml.MappingNode {
		return false
	}
	v := yamltree.Get(annotations, DefaultsAnnotation)
	if v == nil {
		return false
	}
	removeKey(annotations, DefaultsAnnotation)
	var rec defaultsRecord
	if v.Kind != yaml.ScalarNode || json.Unmarshal([]byte(v.Value), &rec) != nil {
		return true // not the function's record: nothing is removed on its word
	}
	spec := yamltree.Get(root, jobset.SpecKey)
	if network := yamltree.Get(spec, jobset.NetworkKey); network != nil && network.Kind == yaml.MappingNode {
		removeRecorded(network, rec.Network)
		if len(network.Content) == 0 && network.Style&yaml.FlowStyle == 0 {
			removeKey(spec, jobset.NetworkKey)
		}
	}
	rjs, _ := jobset.ReplicatedJobNodes(root)
	for _, rj := range rjs {
		stripJobDefaults(rj, rec.Jobs[yamltree.ScalarText(yamltree.Get(rj, "name"))])
	}
	return true
}

// stripJobDefaults removes from a replicatedJob's Job and pod specs the
// recorded fields (pod fields carry podFieldPrefix) that still hold
// their recorded values.
func stripJobDefaults(rj *yaml.Node, fields map[string]string) {
	job := jobset.JobSpec(rj)
	if len(fields) == 0 || job == nil || job.Kind != yaml.MappingNode {
		return
	}
	jobFields, podFields := map[string]string{}, map[string]string{}
	for k, val := range fields {
		if f, ok := strings.CutPrefix(k, podFieldPrefix); ok {
			podFields[f] = val
		} else {
			jobFields[k] = val
		}
	}
	removeRecorded(job, jobFields)
	if pod := jobset.PodSpec(job); pod != nil && pod.Kind == yaml.MappingNode {
		removeRecorded(pod, podFields)
	}
}

// removeRecorded removes from the map m each of fields whose value is
// still the scalar recorded.
func removeRecorded(m *yaml.Node, fields map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if v := yamltree.Get(m, k); v != nil && v.Kind == yaml.ScalarNode && v.Value == fields[k] {
			removeKey(m, k)
		}
	}
}

// unreportRecorded drops from the plan's lists of what was set (which
// only summarize reads after the render) each field the input's record
// says an earlier render set to the same value: re-rendering the
// function's own output sets them again, but on the user's behalf
// nothing changed, and kpt's rule is that a re-render adds no result.
func unreportRecorded(pl *plan.Plan, recorded string) {
	var rec defaultsRecord
	if recorded == "" || json.Unmarshal([]byte(recorded), &rec) != nil {
		return
	}
	known := func(fields map[string]string, key string, d plan.Default) bool {
		v, ok := fields[key]
		return ok && v == d.Value.String()
	}
	pl.SetNetwork = slices.DeleteFunc(slices.Clone(pl.SetNetwork), func(d plan.Default) bool { return known(rec.Network, d.Field, d) })
	for i := range pl.Groups {
		g := &pl.Groups[i]
		g.Set = slices.DeleteFunc(slices.Clone(g.Set), func(d plan.Default) bool {
			key := d.Field
			if d.In == jobset.InPod {
				key = podFieldPrefix + d.Field
			}
			return known(rec.Jobs[g.Name], key, d)
		})
	}
}
