// Package settings defines jobset-flux's settings, their defaults, how each
// raw value is validated, and how the sources are layered: built-in
// defaults, then the function config (Config), then the reference plugin's
// environment variables on the wrapped container, then the JobSet's own
// annotations (Resolve). It resolves every setting of a JobSet once, and
// no value reaches a generated file without passing here.
package settings

// AnnotationPrefix prefixes every per-JobSet setting annotation.
const AnnotationPrefix = "flux-framework.org/"

// EnabledAnnotation selects a JobSet for the transform when "true".
const EnabledAnnotation = AnnotationPrefix + "enabled"

// OwnerReferencesAnnotation is the owner-references setting's
// annotation: whether a JobSet still wants its Role and RoleBinding is
// read from its metadata alone, before any JobSet is rendered (prune).
const OwnerReferencesAnnotation = AnnotationPrefix + "owner-references"

// NetworkPolicyAnnotation is the network-policy setting's annotation.
// Whether a JobSet still wants the NetworkPolicy generated for it is read
// from its metadata alone, before any JobSet is rendered (prune).
const NetworkPolicyAnnotation = AnnotationPrefix + "network-policy"

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
	GPUsPerNode   *int
	NetworkDevice string
	// IPFamily is the address family the brokers bind and connect with:
	// IPv4 or IPv6.
	IPFamily string
	Port     int
	// NetworkPolicy generates a NetworkPolicy that lets the instance's
	// pods, and only them, talk to each other.
	NetworkPolicy bool
	QueuePolicy   string
	// Queues makes every group a Flux queue of its name, whose jobs run
	// only on its pods.
	Queues         bool
	ConnectTimeout string
	// StartTimeout is how long, in seconds, the brokers wait for the
	// instance to form before giving up (0: forever).
	StartTimeout int
	// Deadline bounds the whole instance, in seconds (0: none): each Job's
	// activeDeadlineSeconds.
	Deadline int
	Topology string
	// ReplicatedJobs: nil means all, in spec order.
	ReplicatedJobs []string
	// MinSize and MaxSize bound the pods per Job of the replicatedJobs
	// they name while the instance runs; nil means each replicatedJob's
	// size as rendered.
	MinSize, MaxSize []GroupSize
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
	// StateClaim is the PersistentVolumeClaim that keeps rank 0's Flux
	// state across instances ("" for none): a volumeClaimPolicies
	// template's name or an existing claim's.
	StateClaim string
	// InfraRestarts is how many times the JobSet restarts the instance
	// after an infrastructure failure (0: never; every failure fails it).
	InfraRestarts int
	// OwnerReferences makes rank 0 set the generated objects' owner to
	// their JobSet, so that they are deleted with it.
	OwnerReferences bool

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

// Wrapped is a container the function wraps: the index of its
// replicatedJob in spec.replicatedJobs and its index in the pod template.
type Wrapped struct {
	Job, Container int
}

// Type is the type of a setting's field in a JobSetFlux spec, as the
// schema in krmfunction.yaml declares it. The typed config is read by these
// types at run time instead of by the schema: a schema validator costs the
// function milliseconds of start-up on every render (see
// config_schema_test.go, which proves the two agree).
type Type struct {
	// JSON is the schema type: "string", "integer", "boolean" or "array"
	// (of strings).
	JSON string
	// Sep joins the items of an array into the one value the setting's
	// parser reads, as an annotation or ConfigMap would write it.
	Sep string
}

// The types of the settings' fields.
var (
	String    = Type{JSON: "string"}
	Integer   = Type{JSON: "integer"}
	Boolean   = Type{JSON: "boolean"}
	CommaList = Type{JSON: "array", Sep: ","}
	WordList  = Type{JSON: "array", Sep: " "}
)
