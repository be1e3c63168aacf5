// Package jobset reads the parts of a JobSet (jobset.x-k8s.io/v1alpha2)
// that the Flux transform depends on, straight from its YAML nodes, and
// reports every value of the wrong type with its field path, and names
// the JobSet's shape (shape.go) for the editor, so that reader and editor
// walk the same keys. It knows nothing of Flux: it reads what is written.
package jobset

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// APIVersion and Kind of the JobSets this package reads.
const (
	APIVersion = "jobset.x-k8s.io/v1alpha2"
	Kind       = "JobSet"
)

// Values of Job and pod fields that Flux depends on, spelled as in
// k8s.io/api. The binary does not import k8s.io/api or the JobSet API for
// these few strings: initialising those packages would be a large share of
// the function's start-up (docs/contributing/performance.md). TestAPIConstants compares
// each with its typed original.
const (
	IndexedCompletion      = "Indexed"        // batchv1.IndexedCompletion
	RestartPolicyNever     = "Never"          // corev1.RestartPolicyNever
	RestartPolicyOnFailure = "OnFailure"      // corev1.RestartPolicyOnFailure
	StorageMediumMemory    = "Memory"         // corev1.StorageMediumMemory
	SeccompRuntimeDefault  = "RuntimeDefault" // corev1.SeccompProfileTypeRuntimeDefault
)

// JobSet is what the transform needs to know about one JobSet.
type JobSet struct {
	Name, Namespace string
	Annotations     map[string]string
	// Subdomain is spec.network.subdomain as written ("" when unset).
	Subdomain                                    string
	EnableDNSHostnames, PublishNotReadyAddresses *bool
	ReplicatedJobs                               []ReplicatedJob
	// Policies are spec.failurePolicy and spec.startupPolicy.
	Policies Policies
	// Queueing is what decides who starts the JobSet (queue.go).
	Queueing Queueing
	// ClaimTemplates are the templates of spec.volumeClaimPolicies, in
	// order (claims.go).
	ClaimTemplates []ClaimTemplate
}

// ReplicatedJob is one entry of spec.replicatedJobs.
type ReplicatedJob struct {
	Index int
	Name  string
	// Path is the field path of the entry, e.g. spec.replicatedJobs[1].
	Path string
	// Replicas defaults to 1 when unset.
	Replicas                 int
	Completions, Parallelism *int
	CompletionMode           string
	BackoffLimit             *int
	// ActiveDeadlineSeconds is the Job's, as written.
	ActiveDeadlineSeconds *int64
	// Retries are the Job's other retry fields.
	Retries Retries
	// DependsOn is the replicatedJob's dependsOn, in order.
	DependsOn []Dependency
	Pod       Pod
	// Templates are the metadata of its Job template and of its pod
	// template, in that order (each only when written).
	Templates []TemplateMeta
}

// TemplateMeta is the label and annotation keys of a template's metadata,
// in the order written: the render writes nothing there, and checks that
// nothing meant for the JobSet was written there instead, and that
// Kueue's topology requests agree with the instance.
type TemplateMeta struct {
	// Path is the field path of the metadata.
	Path                string
	Labels, Annotations []string
	// Pod is true for the pod template's metadata, false for the Job
	// template's.
	Pod bool
	// Topology is the values of its Kueue topology annotations
	// (TopologyAnnotationPrefix), by key.
	Topology map[string]string
}

// TopologyAnnotationPrefix starts the keys of the annotations by which a
// pod template asks Kueue's topology-aware scheduling for a placement
// (kueue.x-k8s.io/podset-required-topology and its siblings).
const TopologyAnnotationPrefix = "kueue.x-k8s.io/podset-"

// JobPath is the path of the replicatedJob's Job spec.
func (r *ReplicatedJob) JobPath() string { return keysPath(r.Path, jobKeys) }

// Pod is a replicatedJob's pod template spec.
type Pod struct {
	// Path is the field path of the pod spec.
	Path              string
	RestartPolicy     string
	HostNetwork       bool
	SetHostnameAsFQDN bool
	Containers        []Container
	// InitContainers are read as containers: a native sidecar among them
	// (RestartPolicy Always) runs beside the broker.
	InitContainers []Container
	Volumes        []string
	// OS is the node OS the pod asks for.
	OS OS
	// SeccompProfile is true when the pod's securityContext sets a
	// seccompProfile, which every container without its own then inherits.
	SeccompProfile bool
	// DNS is the pod's dnsPolicy and dnsConfig.searches.
	DNS DNS
	// Identity is the pod securityContext's runAsNonRoot and runAsUser.
	Identity Identity
	// ServiceAccount is serviceAccountName ("" when unset: "default").
	ServiceAccount string
}

// Container is one container of a pod template.
type Container struct {
	Index int
	Name  string
	// Path is the field path of the container.
	Path string
	// Command and Args are as written.
	Command, Args []string
	Env           []EnvVar
	// GPUs is the sum, over GPUResources, of the container's limit (else
	// request) of each; GPUPath names the first field counted ("" when
	// none). Counts beyond 32 bits read as math.MaxInt32.
	GPUs    int
	GPUPath string
	// CPUs is the whole cores of the container's cpu limit (else request):
	// a fraction counts down, but at least 1; 0 when neither is set (or
	// both are zero). CPUPath names the field it came from.
	CPUs    int
	CPUPath string
	// CPULimit is true when CPUs come from the limit (a ceiling), false
	// when from the request (a floor the container may exceed).
	CPULimit bool
	// Accelerators are the field paths of the container's other extended
	// resources whose names look like accelerators (not counted as GPUs),
	// one per resource name.
	Accelerators []string
	Mounts       []Mount
	// ReadinessProbe is true when the container has a readinessProbe.
	ReadinessProbe bool
	// StartupProbe is true when the container has a startupProbe.
	StartupProbe bool
	// LivenessProbe is true when the container has a livenessProbe.
	LivenessProbe bool
	// RestartPolicy is the container's own restartPolicy ("" when unset;
	// Always makes an init container a native sidecar).
	RestartPolicy string
	// TerminationMessagePath is as written ("" when unset).
	TerminationMessagePath string
	// Ports are its ports, EnvFrom its envFrom, in order.
	Ports   []Port
	EnvFrom []EnvSource
	// Compute is its cpu, memory and ephemeral-storage requests and limits.
	Compute Compute
	// EphemeralLimit is the ephemeral-storage limit as written, at
	// EphemeralPath ("" for none).
	EphemeralLimit, EphemeralPath string
	// Identity is the container securityContext's runAsNonRoot and runAsUser.
	Identity Identity
}

// EnvVar is one literal or referenced environment variable.
type EnvVar struct {
	Name, Value string
	// FromRef is true for valueFrom variables, whose value is unknown here.
	FromRef bool
	Path    string
}

// Mount is one volumeMount.
type Mount struct {
	Name, MountPath string
	// ReadOnly is readOnly: true; Path is the mount's field path.
	ReadOnly bool
	Path     string
}

// GPUResources are the extended resources counted as GPUs: one unit is one
// whole GPU device in the container. nvidia.com/gpu (NVIDIA's device
// plugin and GPU operator), amd.com/gpu (ROCm's device plugin),
// gpu.intel.com/i915 and gpu.intel.com/xe (Intel's GPU plugin, for the
// i915 and the newer xe kernel drivers). Resources that name a share of a
// device (nvidia.com/gpu.shared, gpu.intel.com/millicores, MIG profiles)
// are not whole GPUs; they are reported by looksLikeAccelerator instead.
var GPUResources = []string{"nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915", "gpu.intel.com/xe"}

// acceleratorWords are parts of extended resource names that suggest an
// accelerator: GPUs and their shares (nvidia.com/gpu.shared,
// gpu.intel.com/millicores, nvidia.com/mig-1g.5gb), TPUs (google.com/tpu),
// AWS Neuron, Habana Gaudi, FPGAs, NPUs and XPUs.
var acceleratorWords = []string{"gpu", "tpu", "npu", "xpu", "mig-", "neuron", "gaudi", "fpga", "accelerator"}

// looksLikeAccelerator reports whether an extended resource's name
// suggests an accelerator that is not counted as GPUs.
func looksLikeAccelerator(name string) bool {
	if slices.Contains(GPUResources, name) {
		return false
	}
	lower := strings.ToLower(name)
	return slices.ContainsFunc(acceleratorWords, func(w string) bool { return strings.Contains(lower, w) })
}

// Read reads a JobSet. Wrong types and missing required parts are errors
// in the returned list; the JobSet is still returned as far as it could be
// read, so that all problems can be reported in one run. It reads the
// first of a key written twice: the caller refuses such an object before
// (pkg/transform reports the duplicate keys of every item it is given).
func Read(rn *yaml.RNode) (*JobSet, finding.List) {
	r := &reader{}
	root := rn.YNode()
	meta := r.mapping(root, "", "metadata")
	js := &JobSet{
		Name:      r.str(meta, "metadata", "name"),
		Namespace: r.str(meta, "metadata", "namespace"),
	}
	js.Annotations = r.annotations(meta)
	if js.Name == "" {
		r.found.Errorf("metadata.name", "the JobSet has no name")
	}
	spec := r.mapping(root, "", SpecKey)
	if spec == nil {
		r.found.Errorf(SpecKey, "the JobSet has no spec")
		return js, r.found
	}
	if network := r.mapping(spec, SpecKey, NetworkKey); network != nil {
		js.Subdomain = r.str(network, NetworkPath, "subdomain")
		js.EnableDNSHostnames = r.boolean(network, NetworkPath, EnableDNSHostnamesField)
		js.PublishNotReadyAddresses = r.boolean(network, NetworkPath, PublishNotReadyAddressesField)
	}
	js.ReplicatedJobs = r.replicatedJobs(spec)
	js.Policies = r.policies(spec)
	js.Queueing = r.queueing(meta, spec)
	js.ClaimTemplates = r.claimTemplates(spec)
	return js, r.found
}

// annotations reads metadata.annotations, nil when there are none.
func (r *reader) annotations(meta *yaml.Node) map[string]string {
	ann := r.mapping(meta, "metadata", "annotations")
	if ann == nil {
		return nil
	}
	annotations := map[string]string{}
	for i := 0; i+1 < len(ann.Content); i += 2 {
		k, v := ann.Content[i].Value, yamltree.NonNull(ann.Content[i+1])
		if v == nil || v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" {
			r.found.Errorf(fmt.Sprintf("metadata.annotations[%s]", k), "annotation values must be strings (quote it), got %s", yamltree.DescribeValue(v))
			continue
		}
		annotations[k] = v.Value
	}
	return annotations
}

// replicatedJobs reads spec.replicatedJobs, which must not be empty.
func (r *reader) replicatedJobs(spec *yaml.Node) []ReplicatedJob {
	var rjs []ReplicatedJob
	items := r.list(spec, SpecKey, ReplicatedJobsKey)
	// An empty list is as useless as none (and leaves no pod to be rank 0).
	if n := yamltree.Get(spec, ReplicatedJobsKey); n == nil || n.Kind == yaml.SequenceNode && len(n.Content) == 0 {
		r.found.Errorf(ReplicatedJobsPath, "the JobSet has no replicatedJobs")
	}
	for i, item := range items {
		path := yamltree.Index(ReplicatedJobsPath, i)
		if item == nil || item.Kind != yaml.MappingNode {
			r.found.Errorf(path, "must be a map with name, replicas and template")
			continue
		}
		rjs = append(rjs, r.replicatedJob(item, i, path))
	}
	return rjs
}

func (r *reader) replicatedJob(item *yaml.Node, index int, path string) ReplicatedJob {
	rj := ReplicatedJob{Index: index, Path: path, Replicas: 1}
	rj.Name = r.str(item, path, "name")
	if rj.Name == "" && yamltree.Get(item, "name") == nil {
		r.found.Errorf(path+".name", "the replicatedJob has no name")
	}
	if n := r.integer(item, path, "replicas"); n != nil {
		rj.Replicas = *n
	}
	rj.DependsOn = r.dependsOn(item, path)
	rj.Templates = appendTemplateMeta(rj.Templates, yamltree.Get(item, TemplateKey), yamltree.Key(path, TemplateKey), false)
	job, jobPath := r.follow(item, path, jobKeys)
	if job == nil {
		r.found.Errorf(jobPath, "the replicatedJob has no Job template spec")
		return rj
	}
	rj.Completions = r.integer(job, jobPath, CompletionsField)
	rj.Parallelism = r.integer(job, jobPath, ParallelismField)
	rj.CompletionMode = r.str(job, jobPath, CompletionModeField)
	rj.BackoffLimit = r.integer(job, jobPath, BackoffLimitField)
	rj.ActiveDeadlineSeconds = r.integer64(job, jobPath, ActiveDeadlineSecondsField)
	rj.Retries = r.retries(job, jobPath)
	rj.Templates = appendTemplateMeta(rj.Templates, yamltree.Get(job, TemplateKey), yamltree.Key(jobPath, TemplateKey), true)
	pod, podPath := r.follow(job, jobPath, podKeys)
	if pod == nil {
		r.found.Errorf(podPath, "the replicatedJob has no pod template spec")
		return rj
	}
	rj.Pod = r.pod(pod, podPath)
	return rj
}

func (r *reader) pod(pod *yaml.Node, path string) Pod {
	p := Pod{Path: path}
	p.RestartPolicy = r.str(pod, path, RestartPolicyField)
	if b := r.boolean(pod, path, "hostNetwork"); b != nil {
		p.HostNetwork = *b
	}
	if b := r.boolean(pod, path, "setHostnameAsFQDN"); b != nil {
		p.SetHostnameAsFQDN = *b
	}
	containers := yamltree.Key(path, ContainersKey)
	for i, c := range r.list(pod, path, ContainersKey) {
		p.Containers = append(p.Containers, r.container(c, i, yamltree.Index(containers, i)))
	}
	if len(p.Containers) == 0 {
		r.found.Errorf(containers, "the pod template has no containers")
	}
	inits := yamltree.Key(path, InitContainersKey)
	for i, c := range r.list(pod, path, InitContainersKey) {
		p.InitContainers = append(p.InitContainers, r.container(c, i, yamltree.Index(inits, i)))
	}
	p.Volumes = r.names(pod, path, VolumesKey)
	sc := r.mapping(pod, path, "securityContext")
	p.SeccompProfile = r.mapping(sc, yamltree.Key(path, "securityContext"), "seccompProfile") != nil
	p.Identity = readIdentity(sc)
	p.DNS = r.dns(pod, path)
	p.OS = r.readOS(pod, path)
	p.ServiceAccount = r.str(pod, path, "serviceAccountName")
	return p
}

// names reads the name of each item of the list at key in the pod spec
// at path at (the pod's volumes).
func (r *reader) names(pod *yaml.Node, at, key string) []string {
	list := yamltree.Key(at, key)
	var names []string
	for i, item := range r.list(pod, at, key) {
		names = append(names, r.str(item, yamltree.Index(list, i), "name"))
	}
	return names
}

func (r *reader) container(n *yaml.Node, index int, path string) Container {
	c := Container{Index: index, Path: path}
	if n == nil || n.Kind != yaml.MappingNode {
		r.found.Errorf(path, "must be a map describing a container")
		return c
	}
	c.Name = r.str(n, path, "name")
	c.Command = r.strings(n, path, CommandKey)
	c.Args = r.strings(n, path, ArgsKey)
	for i, e := range r.list(n, path, "env") {
		ep := fmt.Sprintf("%s.env[%d]", path, i)
		v := EnvVar{Name: r.str(e, ep, "name"), Path: ep + ".value"}
		v.Value = r.str(e, ep, "value")
		if v.FromRef = yamltree.Get(e, "valueFrom") != nil; v.FromRef {
			// An error about it must point at what is written.
			v.Path = ep + ".valueFrom"
		}
		c.Env = append(c.Env, v)
	}
	mounts := yamltree.Key(path, VolumeMountsKey)
	for i, m := range r.list(n, path, VolumeMountsKey) {
		mp := yamltree.Index(mounts, i)
		ro := yamltree.Get(m, "readOnly")
		c.Mounts = append(c.Mounts, Mount{Name: r.str(m, mp, "name"), MountPath: r.str(m, mp, "mountPath"), ReadOnly: ro != nil && ro.Value == "true", Path: mp})
	}
	r.resources(&c, r.mapping(n, path, "resources"), yamltree.Key(path, "resources"))
	c.ReadinessProbe = yamltree.NonNull(yamltree.Get(n, "readinessProbe")) != nil
	c.StartupProbe = yamltree.NonNull(yamltree.Get(n, "startupProbe")) != nil
	c.LivenessProbe = yamltree.NonNull(yamltree.Get(n, "livenessProbe")) != nil
	c.RestartPolicy = r.str(n, path, RestartPolicyField)
	c.TerminationMessagePath = r.str(n, path, "terminationMessagePath")
	c.Ports = r.readPorts(n, path)
	c.EnvFrom = r.readEnvFrom(n, path)
	c.Compute = readCompute(n)
	c.EphemeralLimit, c.EphemeralPath = ephemeralLimit(n, path)
	c.Identity = readIdentity(yamltree.Get(n, "securityContext"))
	return c
}

// resources reads the GPUs and cores of a container's resources: per
// resource, the limit counts, else the request (the scheduler gives a
// container at most its limit, and a request alone is what it asked for).
func (r *reader) resources(c *Container, res *yaml.Node, path string) {
	limits := r.mapping(res, path, "limits")
	requests := r.mapping(res, path, "requests")
	for _, name := range GPUResources {
		n, fp, ok := r.quantity(limits, requests, name, path, gpuQuantity, wholeGPUs)
		if !ok {
			continue
		}
		c.GPUs = int(min(int64(c.GPUs)+n, math.MaxInt32))
		if c.GPUPath == "" {
			c.GPUPath = fp
		}
	}
	if n, fp, ok := r.quantity(limits, requests, "cpu", path, cpuQuantity, wholeCores); ok && n > 0 {
		c.CPUs, c.CPUPath, c.CPULimit = int(n), fp, strings.Contains(fp, ".limits[")
	}
	seen := map[string]bool{}
	for _, m := range []struct {
		node    *yaml.Node
		section string
	}{{limits, "limits"}, {requests, "requests"}} {
		if m.node == nil {
			continue
		}
		for i := 0; i+1 < len(m.node.Content); i += 2 {
			name := m.node.Content[i].Value
			if !seen[name] && looksLikeAccelerator(name) {
				seen[name] = true
				c.Accelerators = append(c.Accelerators, fmt.Sprintf("%s.%s[%s]", path, m.section, name))
			}
		}
	}
}

// What a GPU and a CPU quantity must be, as error messages say it.
const (
	gpuQuantity = "must be a whole number of GPUs"
	cpuQuantity = "must be a CPU quantity like 4 or 500m"
)

// quantity reads resource name from limits, else requests, converted by
// count; ok is false when neither is set or the value is invalid (an
// error is recorded, with the field path, saying what it must be).
func (r *reader) quantity(limits, requests *yaml.Node, name, path, must string, count func(resource.Quantity) (int64, error)) (n int64, field string, ok bool) {
	for _, m := range []struct {
		node    *yaml.Node
		section string
	}{{limits, "limits"}, {requests, "requests"}} {
		q := yamltree.Get(m.node, name)
		if q == nil {
			continue
		}
		fp := fmt.Sprintf("%s.%s[%s]", path, m.section, name)
		if q.Kind != yaml.ScalarNode {
			r.found.Errorf(fp, "%s, got %s", must, yamltree.DescribeValue(q))
			return 0, "", false
		}
		qty, err := resource.ParseQuantity(q.Value)
		if err == nil {
			n, err = count(qty)
		}
		if err != nil {
			r.found.Errorf(fp, "%s, got %q", must, q.Value)
			return 0, "", false
		}
		if n == 0 && m.section == "limits" {
			continue // a zero limit says nothing; the request may
		}
		return n, fp, true
	}
	return 0, "", false
}

// wholeGPUs counts whole GPUs, which is all a device plugin hands out.
func wholeGPUs(q resource.Quantity) (int64, error) {
	if q.Sign() < 0 || q.CmpInt64(math.MaxInt32) <= 0 && q.MilliValue()%1000 != 0 {
		return 0, errors.New("not a whole number")
	}
	return min(q.Value(), math.MaxInt32), nil
}

// wholeCores counts the whole cores in a CPU quantity: Flux schedules
// whole cores, so 1.5 CPUs are 1 core, and any CPU at all is at least one
// (every broker has a core); zero stays zero, which means unset.
func wholeCores(q resource.Quantity) (int64, error) {
	switch {
	case q.Sign() < 0:
		return 0, errors.New("negative")
	case q.IsZero():
		return 0, nil
	case q.CmpInt64(math.MaxInt32) > 0:
		return math.MaxInt32, nil
	}
	return max(1, q.MilliValue()/1000), nil
}

// appendTemplateMeta appends the TemplateMeta of the template at path,
// when it has metadata with labels or annotations.
func appendTemplateMeta(metas []TemplateMeta, template *yaml.Node, path string, pod bool) []TemplateMeta {
	meta := yamltree.Get(template, "metadata")
	if meta == nil || meta.Kind != yaml.MappingNode {
		return metas
	}
	tm := TemplateMeta{Path: yamltree.Key(path, "metadata"), Pod: pod}
	keys := func(field string) []string {
		m := yamltree.Get(meta, field)
		if m == nil || m.Kind != yaml.MappingNode {
			return nil
		}
		var out []string
		for i := 0; i+1 < len(m.Content); i += 2 {
			key, value := m.Content[i].Value, m.Content[i+1]
			out = append(out, key)
			if field == "annotations" && strings.HasPrefix(key, TopologyAnnotationPrefix) && value.Kind == yaml.ScalarNode {
				if tm.Topology == nil {
					tm.Topology = map[string]string{}
				}
				tm.Topology[key] = value.Value
			}
		}
		return out
	}
	tm.Labels, tm.Annotations = keys("labels"), keys("annotations")
	if len(tm.Labels)+len(tm.Annotations) == 0 {
		return metas
	}
	return append(metas, tm)
}
