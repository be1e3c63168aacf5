// Package settings defines jobset-flux's settings, their defaults, how each
// raw value is validated, and how the sources are layered: built-in
// defaults, then the function config (Config), then the reference plugin's
// environment variables on the wrapped container, then the JobSet's own
// annotations (Resolve). It resolves every setting of a JobSet once, and
// no value reaches a generated file without passing here.
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
	// ViewMount is how the view reaches the pods: ViewMountCopy (the
	// flux-installer copies it) or ViewMountImage (an image volume).
	ViewMount string
	// ViewCopyMedium is where view-mount: copy puts the copy of the view's
	// software tree: ViewCopyMemory (a memory-backed emptyDir) or
	// ViewCopyDisk (the node's disk).
	ViewCopyMedium string
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
	// StartTimeout is how long, in seconds, the brokers wait for the
	// instance to form before giving up (0: forever).
	StartTimeout int
	Topology     string
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
	// TimeLimit is the command's flux run -t, a Flux duration ("" for none).
	TimeLimit string
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

	// Wrapped are the containers the function wraps, in rank order:
	// replicated-jobs and container resolved against the JobSet (set by
	// Resolve; nil for the function config alone).
	Wrapped []Wrapped

	// origins says, for each setting not at its default, where the value
	// in force was read.
	origins map[string]origin
	// resolved is true for Settings that started from Defaults.
	resolved bool
}

// Resolved reports whether s started from Defaults, so that every value
// in it is a default or passed its setting's checks (unless a test set a
// field by hand): the generated files trust such values and check no
// setting again.
func (s *Settings) Resolved() bool { return s.resolved }

// origin is where a setting's value was read: its field path and layer.
type origin struct {
	path string
	kind Kind
}

// Origin returns the field path the named setting was read from, or ""
// when it has its default value.
func (s *Settings) Origin(name string) string { return s.origins[name].path }

// Defaults returns the built-in defaults: each row's Default, stored
// unchecked (TestDefaultsValid checks them).
func Defaults() Settings {
	s := Settings{resolved: true}
	for i := range table {
		if d := &table[i]; d.Default != "" {
			d.value.set(&s, d.Default)
		}
	}
	return s
}

// Config returns the settings every JobSet starts from: the defaults with
// the function config's layer applied, and the errors of its values.
func Config(layer Layer) (Settings, finding.List) {
	s := Defaults()
	found := s.Apply(layer)
	return s, found
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

// Apply parses each value of layer, once, and keeps it unless a layer of
// higher precedence set the setting already: the result does not depend
// on the order layers are applied in (Resolve applies the annotations
// before the environment, which lives on the containers they choose). An
// invalid value is an error at the path it was read from, naming its
// layer (the config's errors are reported against the config object,
// which names it), and the setting keeps the value it had. s's origins
// are copied before they change, so a copy of s shares nothing with it.
func (s *Settings) Apply(layer Layer) finding.List {
	var found finding.List
	if len(layer.Values) == 0 {
		return found
	}
	origins := make(map[string]origin, len(s.origins)+len(layer.Values))
	maps.Copy(origins, s.origins)
	s.origins = origins
	for _, name := range slices.Sorted(maps.Keys(layer.Values)) {
		raw := layer.Values[name]
		d, ok := byName(name)
		if !ok {
			found.Errorf(raw.Path, "unknown setting %s%s", finding.Quote(name), suggest(name))
			continue
		}
		target := s
		if o, set := s.origins[name]; set && o.kind > layer.Kind {
			// Checked all the same, so that every bad value is reported.
			target = &Settings{}
		}
		if raw.Value == "" && d.Default == "" && d.value.clear != nil {
			// An empty value puts a setting that has no default back to
			// none (or derived), over what a lower layer set: a JobSet
			// must be able to opt out of a site-wide value, such as the
			// function config's run-options, which a launcher JobSet
			// cannot have. The setting is at its default, so it has no
			// origin to report, but the layer is kept: a lower one applied
			// later (the environment) does not bring the value back.
			d.value.clear(target)
			if target == s {
				s.origins[name] = origin{kind: layer.Kind}
			}
			continue
		}
		if err := d.value.parse(target, raw.Value); err != nil {
			from := ""
			if layer.Kind != FromConfig {
				from = " from the " + layer.Kind.String()
			}
			found = append(found, finding.Finding{
				Severity: finding.Error,
				Path:     raw.Path,
				Current:  raw.Value,
				Message:  fmt.Sprintf("invalid %s%s: %v", name, from, err),
			})
			continue
		}
		if target == s {
			s.origins[name] = origin{path: raw.Path, kind: layer.Kind}
		}
	}
	return found
}

// Check validates one raw value of the named setting without applying it.
func Check(name, value string) error {
	d, ok := byName(name)
	if !ok {
		return fmt.Errorf("unknown setting %s%s", finding.Quote(name), suggest(name))
	}
	var s Settings
	return d.value.parse(&s, value)
}

// Names returns every setting name, in documentation order.
func Names() []string {
	names := make([]string, len(table))
	for i, d := range table {
		names[i] = d.Name
	}
	return names
}

// Fields returns every JobSetFlux spec field, in documentation order.
func Fields() []string {
	fields := make([]string, len(table))
	for i, d := range table {
		fields[i] = d.Field
	}
	return fields
}

// OfField returns the setting name of a JobSetFlux spec field and the
// field's type.
func OfField(field string) (name string, typ Type, ok bool) {
	for _, d := range table {
		if d.Field == field {
			return d.Name, d.Type, true
		}
	}
	return "", Type{}, false
}

// LooksLikeEnabled reports whether an annotation name under the prefix
// is a misspelling of enabled: another case, a plural or tense, or one
// or two letters off a name that is no setting.
func LooksLikeEnabled(name string) bool {
	const want = "enabled"
	n := strings.ToLower(strings.TrimSpace(name))
	return n == want || n == "enable" || n == "enables" || n == "enabling" || !slices.Contains(Names(), name) && editDistance(n, want) <= 2
}

// suggest returns ` (did you mean "x"?)` for the closest known name, if close.
func suggest(name string) string {
	// The selector is no setting, but the likeliest misspelling of all.
	if editDistance(strings.ToLower(name), "enabled") <= 2 {
		return fmt.Sprintf(" (did you mean %q?)", EnabledAnnotation)
	}
	best, bestDist := "", 4
	for _, d := range table {
		if dist := editDistance(name, d.Name); dist < bestDist {
			best, bestDist = d.Name, dist
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
