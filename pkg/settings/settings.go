// Package settings defines jobset-flux's settings, their defaults, how each
// raw value is validated, and how the sources are layered: built-in
// defaults, then the function config, then the reference plugin's
// environment variables on the wrapped container, then the JobSet's own
// annotations. No value reaches a generated file without passing here.
package settings

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
)

// AnnotationPrefix prefixes every per-JobSet setting annotation.
const AnnotationPrefix = "flux-framework.org/"

// EnabledAnnotation selects a JobSet for the transform when "true".
const EnabledAnnotation = AnnotationPrefix + "enabled"

// Settings are the resolved values for one JobSet. Zero values of the
// fields documented as "derived" mean the plan derives them from the pod.
type Settings struct {
	ViewImage string
	// TasksPerNode: 0 means derived (GPUs per node when more than one, else 1).
	TasksPerNode int
	// CoresPerNode: 0 means derived per replicatedJob (the wrapped
	// container's CPU limit, else request, else tasks per node).
	CoresPerNode int
	// GPUsPerNode: nil means derived per replicatedJob from the wrapped
	// container's resources.
	GPUsPerNode    *int
	NetworkDevice  string
	Port           int
	QueuePolicy    string
	ConnectTimeout string
	Topology       string
	// ReplicatedJobs: nil means all, in spec order.
	ReplicatedJobs []string
	// Container: "" means the first container.
	Container string
	// Interactive: nil means derived (no command and no args).
	Interactive *bool
	// Launcher makes the container's command the instance's initial
	// program on rank 0, instead of a flux run over the nodes.
	Launcher   bool
	RunOptions []string
	// BrokerAttributes are extra flux start -Sname=value words.
	BrokerAttributes []string
	// BrokerConfig is extra broker TOML, parsed: tables of the user's keys,
	// none of which the function writes itself.
	BrokerConfig map[string]any
	// LogLevel is the broker's log-stderr-level; nil leaves Flux's default.
	LogLevel *int
	// FluxPath is the prefix of the image's own Flux ("" for none, or for
	// the first flux on PATH when ViewImage is NoView).
	FluxPath string
	// Setup is shell text sourced on every pod before Flux starts.
	Setup       string
	CurveSecret string
	ShmSize     string

	// origins maps a setting name to the field path of the value in force.
	origins map[string]string
}

// Origin returns the field path the named setting was read from, or ""
// when it has its default value.
func (s *Settings) Origin(name string) string { return s.origins[name] }

// Defaults returns the built-in defaults.
func Defaults() Settings {
	return Settings{
		// Ubuntu 22.04's view (glibc 2.35): a view's binaries run only in
		// images whose glibc is as new or newer, and this one runs in the
		// 22.04 images GPU stacks still build on (NGC's, for one) as well
		// as in 24.04 ones; the 24.04 view would fail in the former.
		ViewImage:      "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy",
		NetworkDevice:  "eth0",
		Port:           8050,
		QueuePolicy:    "fcfs",
		ConnectTimeout: "5s",
		Topology:       "kary:256",
	}
}

// Kind says where a raw value came from.
type Kind int

// Sources of raw values, lowest precedence first.
const (
	FromConfig Kind = iota
	FromEnv
	FromAnnotation
)

func (k Kind) String() string {
	switch k {
	case FromConfig:
		return "function config"
	case FromEnv:
		return "container environment"
	default:
		return "annotation"
	}
}

// Raw is one unparsed value and the field path it was read from.
type Raw struct {
	Value string
	Path  string
}

// Layer is one source of raw values, keyed by setting name.
type Layer struct {
	Kind   Kind
	Values map[string]Raw
}

// Resolve applies the layers, in order, over the defaults. Invalid values
// become errors at the path they were read from; the setting keeps the
// value of the layer below.
func Resolve(layers ...Layer) (Settings, finding.List) {
	s := Defaults()
	s.origins = map[string]string{}
	var found finding.List
	for _, layer := range layers {
		for _, name := range slices.Sorted(maps.Keys(layer.Values)) {
			raw := layer.Values[name]
			def, ok := byName(name)
			if !ok {
				found.Errorf(raw.Path, "unknown setting %s%s", quote(name), suggest(name))
				continue
			}
			if err := def.apply(&s, raw.Value); err != nil {
				found = append(found, finding.Finding{
					Severity: finding.Error,
					Path:     raw.Path,
					Current:  raw.Value,
					Message:  fmt.Sprintf("invalid %s from the %s: %v", name, layer.Kind, err),
				})
				continue
			}
			s.origins[name] = raw.Path
		}
	}
	return s, found
}

// Check validates one raw value of the named setting without applying it.
func Check(name, value string) error {
	def, ok := byName(name)
	if !ok {
		return fmt.Errorf("unknown setting %s%s", quote(name), suggest(name))
	}
	var s Settings
	return def.apply(&s, value)
}

// Names returns every setting name, in documentation order.
func Names() []string {
	names := make([]string, len(definitions))
	for i, d := range definitions {
		names[i] = d.name
	}
	return names
}

// FieldName returns the JobSetFlux spec field of a setting name.
func FieldName(name string) string {
	d, _ := byName(name)
	return d.field
}

// Fields returns every JobSetFlux spec field, in documentation order.
func Fields() []string {
	fields := make([]string, len(definitions))
	for i, d := range definitions {
		fields[i] = d.field
	}
	return fields
}

// OfField returns the setting name of a JobSetFlux spec field and the
// field's type.
func OfField(field string) (name string, typ Type, ok bool) {
	for _, d := range definitions {
		if d.field == field {
			return d.name, d.typ, true
		}
	}
	return "", Type{}, false
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
			found.Errorf(path, "unknown setting annotation %s%s", quote(key), suggest(name))
			continue
		}
		layer.Values[name] = Raw{Value: annotations[key], Path: path}
	}
	return layer, found
}

// EnvNames maps the reference plugin's environment variables to settings.
var EnvNames = map[string]string{
	"FLUX_VIEW_IMAGE":     "view-image",
	"FLUX_NETWORK_DEVICE": "network-device",
	"FLUX_QUEUE_POLICY":   "queue-policy",
}

// suggest returns ` (did you mean "x"?)` for the closest known name, if close.
func suggest(name string) string {
	best, bestDist := "", 4
	for _, d := range definitions {
		if dist := editDistance(name, d.name); dist < bestDist {
			best, bestDist = d.name, dist
		}
	}
	if best == "" {
		return "; known settings: " + strings.Join(Names(), ", ")
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Verbatim reports whether a setting's value is shell text shipped as a
// file of its own (setup.sh), never spliced into a generated script: any
// character is fine in it, so the checks that every other accepted value
// is free of shell, TOML and URI syntax do not apply to it.
func Verbatim(name string) bool { return name == "setup" }
