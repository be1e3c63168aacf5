package flux

import (
	"fmt"
	"testing"

	"sigs.k8s.io/yaml"
)

// group is one replicatedJob of a test JobSet.
type group struct {
	name                  string
	replicas, completions int
	// container is the wrapped container; nil means the shape's default
	// (hostImage, the JobSet's command).
	container map[string]any
	pod       map[string]any // extra pod spec fields (securityContext, ...)
}

// jobSet builds a Flux-annotated JobSet. Every group runs command unless it
// sets its own container.
func jobSet(t *testing.T, name string, annotations map[string]string, command []string, groups ...group) string {
	t.Helper()
	ann := map[string]string{"flux-framework.org/enabled": "true"}
	for k, v := range annotations {
		ann[k] = v
	}
	var rjs []any
	for _, g := range groups {
		c := g.container
		if c == nil {
			c = map[string]any{"name": "app", "image": hostImage}
			if command != nil {
				c["command"] = command
			}
		}
		pod := map[string]any{"containers": []any{c}}
		for k, v := range g.pod {
			pod[k] = v
		}
		rjs = append(rjs, map[string]any{
			"name":     g.name,
			"replicas": g.replicas,
			"template": map[string]any{"spec": map[string]any{
				"completions": g.completions, "parallelism": g.completions,
				"template": map[string]any{"spec": pod},
			}},
		})
	}
	b, err := yaml.Marshal(map[string]any{
		"apiVersion": "jobset.x-k8s.io/v1alpha2",
		"kind":       "JobSet",
		"metadata":   map[string]any{"name": name, "annotations": ann},
		"spec":       map[string]any{"replicatedJobs": rjs},
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// hostnames lists a shape's pod hostnames in rank order.
func hostnames(name string, groups ...group) []string {
	var out []string
	for _, g := range groups {
		for j := range g.replicas {
			for i := range g.completions {
				out = append(out, fmt.Sprintf("%s-%s-%d-%d", name, g.name, j, i))
			}
		}
	}
	return out
}
