package kube

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// Images the tests use (hack/kube/images builds them): a Debian userland
// with bash, coreutils, python3 and the view's libraries; the view images;
// an image with its own Flux on PATH.
const (
	appImage     = "jobset-flux.test/debian:bookworm"
	coreOnlyView = "jobset-flux.test/flux-view-core-only:1"
	fluxSched    = "ghcr.io/flux-framework/flux-sched:noble"
	fluxBin      = "/mnt/flux/install/view/bin/flux"
	fluxURI      = "local:///mnt/flux/install/run/local"
)

// group is one replicatedJob of a test JobSet.
type group struct {
	name                  string
	replicas, completions int
	container             map[string]any // nil: an "app" container of appImage running the JobSet's command
	pod                   map[string]any // extra pod spec fields
	job                   map[string]any // extra Job spec fields
	extra                 map[string]any // extra replicatedJob fields (dependsOn)
	podAnnotations        map[string]any // the pod template's annotations
}

// jobSet writes a Flux-annotated JobSet.
func jobSet(t *testing.T, name string, annotations map[string]string, command []string, groups ...group) string {
	t.Helper()
	ann := map[string]string{"flux-framework.org/enabled": "true"}
	// On an IPv6 cluster every instance needs ip-family (TestClusterFamily
	// shows what happens without it: an empty value leaves it out).
	if env.ipFamily == ipv6 {
		ann[ipFamilyAnnotation] = ipv6
	}
	for k, v := range annotations {
		ann[k] = v
	}
	if ann[ipFamilyAnnotation] == "" {
		delete(ann, ipFamilyAnnotation)
	}
	var rjs []any
	for _, g := range groups {
		rjs = append(rjs, replicatedJob(g, command))
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

func replicatedJob(g group, command []string) map[string]any {
	c := g.container
	if c == nil {
		c = map[string]any{"name": "app", "image": appImage}
		if command != nil {
			c["command"] = command
		}
	}
	pod := map[string]any{"containers": []any{c}}
	for k, v := range g.pod {
		pod[k] = v
	}
	template := map[string]any{"spec": pod}
	if g.podAnnotations != nil {
		template["metadata"] = map[string]any{"annotations": g.podAnnotations}
	}
	job := map[string]any{
		"completions": g.completions, "parallelism": g.completions,
		"template": template,
	}
	for k, v := range g.job {
		job[k] = v
	}
	rj := map[string]any{"name": g.name, "replicas": g.replicas, "template": map[string]any{"spec": job}}
	for k, v := range g.extra {
		rj[k] = v
	}
	return rj
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

// docs are rendered YAML documents, decoded to be changed by a test.
type docs []map[string]any

func decode(t *testing.T, rendered []byte) docs {
	t.Helper()
	var out docs
	for _, doc := range bytes.Split(rendered, []byte("\n---\n")) {
		doc = bytes.TrimPrefix(doc, []byte("---\n"))
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			t.Fatalf("decode the render: %v", err)
		}
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}

func (d docs) encode(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, m := range d {
		out, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(out)
	}
	return b.Bytes()
}

// find returns the object of that kind and name.
func (d docs) find(t *testing.T, kind, name string) map[string]any {
	t.Helper()
	for _, m := range d {
		if md, _ := m["metadata"].(map[string]any); m["kind"] == kind && md["name"] == name {
			return m
		}
	}
	t.Fatalf("the render has no %s %s", kind, name)
	return nil
}

// at walks a path of map keys (string) and list indexes (int) from v.
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for i, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%v: not a map at %v", path, path[:i])
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("%v: no item %d at %v", path, k, path[:i])
			}
			v = l[k]
		}
	}
	return v
}

// set sets the last key of path in the map the rest of it leads to,
// creating maps on the way.
func set(t *testing.T, v any, value any, path ...any) {
	t.Helper()
	for i, p := range path[:len(path)-1] {
		next := at(t, v, p)
		if next == nil {
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%v: not a map at %v", path, path[:i])
			}
			next = map[string]any{}
			m[p.(string)] = next
		}
		v = next
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v: not a map", path)
	}
	m[path[len(path)-1].(string)] = value
}

// jobPath is the path of a replicatedJob's Job spec in a JobSet.
func jobPath(rj int, rest ...any) []any {
	return append([]any{"spec", "replicatedJobs", rj, "template", "spec"}, rest...)
}

// podPath is the path of a replicatedJob's pod spec in a JobSet.
func podPath(rj int, rest ...any) []any {
	return jobPath(rj, append([]any{"template", "spec"}, rest...)...)
}

// countLines counts the lines of out equal to line.
func countLines(out, line string) int {
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if l == line {
			n++
		}
	}
	return n
}
