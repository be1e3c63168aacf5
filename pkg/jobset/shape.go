package jobset

import (
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The JobSet's shape: the keys on the way from a JobSet to its pods'
// containers, and where a field added to one of its maps goes. Read walks
// it to report each value of a wrong type at its path, pkg/transform to
// edit the nodes Read read; both through the names below, so that the
// shape is written once.

// Keys of the maps and lists of a JobSet that are read and edited.
const (
	SpecKey           = "spec"
	NetworkKey        = "network"
	ReplicatedJobsKey = "replicatedJobs"
	TemplateKey       = "template"
	ContainersKey     = "containers"
	InitContainersKey = "initContainers"
	VolumesKey        = "volumes"
	VolumeMountsKey   = "volumeMounts"
	CommandKey        = "command"
	ArgsKey           = "args"
)

// Fields of spec.network, a Job spec and a pod spec that the function
// reads and may set.
const (
	EnableDNSHostnamesField       = "enableDNSHostnames"
	PublishNotReadyAddressesField = "publishNotReadyAddresses"
	CompletionModeField           = "completionMode"
	CompletionsField              = "completions"
	ParallelismField              = "parallelism"
	BackoffLimitField             = "backoffLimit"
	ActiveDeadlineSecondsField    = "activeDeadlineSeconds"
	RestartPolicyField            = "restartPolicy"
)

// Field paths of a JobSet's parts, as results name them.
var (
	// NetworkPath is spec.network.
	NetworkPath = yamltree.Key(SpecKey, NetworkKey)
	// ReplicatedJobsPath is spec.replicatedJobs.
	ReplicatedJobsPath = yamltree.Key(SpecKey, ReplicatedJobsKey)
)

// jobKeys lead from a replicatedJob to its Job spec; podKeys lead from a
// Job spec to its pod spec. Each step is a template holding a spec.
var (
	jobKeys = []string{TemplateKey, SpecKey}
	podKeys = []string{TemplateKey, SpecKey}
)

// keysPath is the field path of keys below path.
func keysPath(path string, keys []string) string {
	for _, k := range keys {
		path = yamltree.Key(path, k)
	}
	return path
}

// ReplicatedJobNodes returns the items of a JobSet's spec.replicatedJobs,
// and false when it is not a list.
func ReplicatedJobNodes(root *yaml.Node) ([]*yaml.Node, bool) {
	list := yamltree.GetPath(root, SpecKey, ReplicatedJobsKey)
	if list == nil || list.Kind != yaml.SequenceNode {
		return nil, false
	}
	return list.Content, true
}

// JobSpec returns a replicatedJob's Job spec (template.spec), nil when
// it has none.
func JobSpec(rj *yaml.Node) *yaml.Node { return yamltree.GetPath(rj, jobKeys...) }

// PodSpec returns a Job spec's pod spec (template.spec), nil when it has
// none.
func PodSpec(job *yaml.Node) *yaml.Node { return yamltree.GetPath(job, podKeys...) }

// Place is a map of a JobSet that holds fields the function may set.
type Place int

// The places of the fields the function sets.
const (
	// InNetwork is spec.network.
	InNetwork Place = iota
	// InJob is a replicatedJob's Job spec.
	InJob
	// InPod is a replicatedJob's pod spec.
	InPod
)

// Before is the key a new field of the map at p goes before: a Job's
// fields above its pod template and a pod's above its containers, where
// a person writes them; spec.network's at its end.
func (p Place) Before() string {
	switch p {
	case InJob:
		return TemplateKey
	case InPod:
		return ContainersKey
	}
	return ""
}
