// Package plan is where JobSet facts and Flux facts meet. Validate checks a
// JobSet and its resolved settings against what Flux and the JobSet
// controller need, and only reports; Derive computes, as plain data,
// everything the generated files and the pod-template edits need (hosts
// in rank order, node and task counts, per-task resources, names and
// paths), and checks nothing.
package plan

import (
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
)

// Paths inside every Flux pod. The init container fills the install and
// software volumes; the entrypoint keeps its private state under RunDir.
const (
	// InstallDir is where the flux-install emptyDir is mounted (init and app).
	InstallDir = "/mnt/flux/install"
	// ViewDir is the copy of the resolved Flux view inside InstallDir.
	ViewDir = InstallDir + "/view"
	// RunDir holds the broker's private state, created by the broker's own user.
	RunDir = InstallDir + "/run"
	// CertPath is the private (mode 0400) copy of the CURVE certificate.
	CertPath = RunDir + "/curve.cert"
	// JoinedPath is created by the entrypoint once its broker is part of
	// the whole instance: the wrapped container's startup probe waits for it.
	JoinedPath = RunDir + "/joined"
	// SetupStatePath is where the setup script's shell leaves what it set
	// (exported variables, directory, umask, limits) for the entrypoint.
	SetupStatePath = InstallDir + "/setup.state"
	// SoftwareDir is where the view's Spack tree lives; its RPATHs are absolute,
	// so the app container mounts the copy back at the same path.
	SoftwareDir = "/opt/software"
	// SoftwareStagingDir is where the init container mounts the software volume
	// (its own /opt/software is the source of the copy).
	SoftwareStagingDir = "/mnt/flux/software"
	// ConfigDir is where the generated ConfigMap is mounted; the broker loads
	// every *.toml in it.
	ConfigDir = "/mnt/flux/config"
	// CurveDir is where the CURVE Secret is mounted (read-only, shared mode).
	CurveDir = "/mnt/flux/curve"
	// CertSourcePath is the mounted certificate the entrypoint copies from.
	CertSourcePath = CurveDir + "/" + CertKey
	// ShmDir is the memory-backed shared memory mount.
	ShmDir = "/dev/shm"
	// ViewSource is the view's entry point inside a flux-view image.
	ViewSource = "/opt/view"

	// InitScript, EntrypointScript and BrokerConfig are the ConfigMap keys.
	InitScript       = "init.sh"
	EntrypointScript = "entrypoint.sh"
	BrokerConfig     = "broker.toml"
	// SetupScript is the ConfigMap key of the setup setting's script,
	// present only when it is set.
	SetupScript = "setup.sh"
	// CertKey is the key of the certificate in the Secret.
	CertKey = "curve.cert"

	// EntrypointPath is the wrapped container's command[0]; seeing it marks a
	// JobSet this function already rendered.
	EntrypointPath = ConfigDir + "/" + EntrypointScript
	// InitPath is the init container's command.
	InitPath = ConfigDir + "/" + InitScript
)

// Names of everything the function adds to a pod template.
const (
	InitContainerName = "flux-installer"
	InstallVolume     = "flux-install"
	SoftwareVolume    = "flux-software"
	ConfigVolume      = "flux-config"
	CurveVolume       = "flux-curve"
	ShmVolume         = "flux-shm"
	ConfigMapSuffix   = "-flux-entrypoint"
	SecretSuffix      = "-flux-curve"
	ManagedByLabel    = "app.kubernetes.io/managed-by"
	ManagedByValue    = "jobset-flux"
	JobSetLabel       = "flux-framework.org/jobset"
	// DigestAnnotation is recorded on every generated object: the
	// digest of the object as the function wrote it. Only an object
	// whose digest still matches is ever removed.
	DigestAnnotation = "jobset-flux.flux-framework.org/digest"
)

// NetworkPolicySuffix names the NetworkPolicy the network-policy setting
// generates. Not the ConfigMap's name, though the kinds differ: prune
// keeps an object while any value of the output equals its name, and the
// JobSet's volume names the ConfigMap, so a policy of that name would
// outlive the setting that asked for it.
const NetworkPolicySuffix = "-flux-network"

// ReservedVolumes are the volume names the function owns in a pod template.
var ReservedVolumes = []string{InstallVolume, SoftwareVolume, ViewVolume, ConfigVolume, CurveVolume, ShmVolume}

// Group is one replicatedJob that joins the instance, in rank order.
type Group struct {
	// Index is the replicatedJob's position in spec.replicatedJobs.
	Index int
	// Name is the replicatedJob's name.
	Name string
	// Replicas is the number of Jobs, Completions the pods per Job as
	// rendered (the Job's completions).
	Replicas, Completions int
	// PodsPerJob is the ranks the instance has for each of the group's
	// Jobs: its max-size when the group is elastic, else Completions.
	// MinPods is the fewest pods per Job it may shrink to (min-size),
	// Completions when it is not elastic.
	PodsPerJob, MinPods int
	// Elastic is true when min-size or max-size names the group: JobSet's
	// elastic update may resize its Jobs while the instance runs.
	Elastic bool
	// FirstRank is the rank of this group's pod 0 of job 0.
	FirstRank int
	// Hosts is the group's hostnames as a compact RFC 29 hostlist, in rank order.
	Hosts string
	// Container is the index of the wrapped container in the pod template,
	// ContainerName its name.
	Container     int
	ContainerName string
	// Command is the wrapped container's own command (unwrapped); the
	// entrypoint goes in front of it and args stay as they are.
	Command []string
	// OwnShm is true when the wrapped container mounts its own /dev/shm.
	OwnShm bool
	// PodSeccomp is true when the pod sets a seccompProfile, which the init
	// container then inherits instead of getting RuntimeDefault.
	PodSeccomp bool
	// Cores and GPUs are what each pod of the group has, as its own entry
	// of the broker's resource config describes it.
	Cores, GPUs int
	// RunsJob is true when the leader's flux run places tasks on this
	// group's nodes (-N counts them).
	RunsJob bool
	// Set lists the fields of the group's Job and pod spec to set on the
	// user's behalf, in the order they are reported.
	Set []Default
	// StartupProbe is true when the wrapped container gets the startup
	// probe that waits for its broker to join (it has none of its own).
	StartupProbe bool
	// Installer is the group's flux-installer's resources and user.
	Installer Installer
	// TerminationLog is the wrapped container's terminationMessagePath,
	// where the entrypoint writes why it failed, when it is not the
	// kubelet's default ("" then).
	TerminationLog string
}

// Default is a field the render sets on the user's behalf, because it was
// unset and Flux depends on it: stable hostnames (completionMode
// Indexed), every broker running at once (parallelism = completions), a
// failed broker failing the Job (backoffLimit 0; the JobSet
// failurePolicy decides what happens next), no restarted leader that
// could never rejoin (restartPolicy Never), and brokers finding each
// other by hostname before they are ready (spec.network). Derive lists
// them; the render sets each and its result message names each, from the
// same list, so that what is set and what is said cannot drift.
type Default struct {
	// In is the map that holds the field.
	In jobset.Place
	// Field is the field's key there.
	Field string
	// Value is what it is set to.
	Value yamltree.Scalar
}

// String is field=value, as the result message names it.
func (d Default) String() string { return d.Field + "=" + d.Value.String() }

// Plan is everything needed to render one JobSet for Flux: the JobSet's
// resolved settings, which the templates read as they are
// (p.Settings.Port, p.Settings.QueuePolicy, ...), and what Derive
// computes from them and the JobSet. Where a setting only seeds a derived
// value, the plan's own field is what the render uses: ViewImage,
// TasksPerNode and Interactive; the setting stays at p.Settings.
type Plan struct {
	// Settings are the JobSet's resolved settings (settings.Resolve).
	Settings settings.Settings

	// Namespace and Name identify the JobSet (Namespace may be empty).
	Namespace, Name string
	// Subdomain is the pods' DNS subdomain (spec.network.subdomain or Name).
	Subdomain string
	// ConfigMapName and SecretName are the generated (or referenced) objects.
	ConfigMapName, SecretName string
	// GenerateSecret is false when an external Secret (curve-secret) is used.
	GenerateSecret bool

	// ViewImage is the flux-view image of the init container, "" when
	// the app image carries Flux (ImageFlux).
	ViewImage string
	// ImageFlux: the app image carries Flux (view-image none, or
	// flux-path): no init container, no view volumes. FluxPath is its
	// prefix; "" means the first flux on the image's PATH.
	ImageFlux bool
	// Groups are the replicatedJobs of the instance, in rank order.
	Groups []Group
	// Brokers is the number of ranks in the instance: its pods, or the
	// most it may grow to when a group is elastic.
	Brokers int
	// Quorum is how many brokers must join before the instance starts
	// (broker.quorum): the fewest pods it may shrink to. 0 when no group
	// is elastic, and every broker must join.
	Quorum int

	// JobNodes is the number of nodes the leader's flux run uses (-N): the
	// pods of the groups that run the job, less the Excluded ones that
	// broker-config's [resource] exclude withholds from scheduling.
	// TasksPerNode is the tasks on each.
	JobNodes, TasksPerNode, Excluded int
	// Tasks is JobNodes*TasksPerNode (-n); CoresPerTask and GPUsPerTask
	// are the per-task shares passed to flux run (-c, -g), which fit every
	// node of every group that runs the job. With Launcher they are all
	// zero: the command is the instance's initial program, run once on
	// rank 0, not a flux run over the nodes.
	Tasks, CoresPerTask, GPUsPerTask int

	// Interactive keeps the instance up with no command (broker.rc2_none).
	Interactive bool

	// DefaultQueue is, with the queues setting, the group whose queue a
	// job submitted without one goes to; "" without the setting (each
	// group's queue is named after it).
	DefaultQueue string

	// SetNetwork lists the spec.network fields to set on the user's behalf.
	SetNetwork []Default

	// State is where rank 0 keeps Flux's state across instances
	// (state-claim), nil without.
	State *State
	// Owner is what rank 0 makes its JobSet the owner of
	// (owner-references), nil without.
	Owner *Owner

	// Ordering are the Argo CD and Helm annotations every generated object
	// carries, so that it is applied before the JobSet and lives as long
	// (ordering.go); nil when the JobSet has none.
	Ordering map[string]string
}

// InstallerUID is the flux-installer's runAsUser when the pod asks for
// runAsNonRoot without a runAsUser and the wrapped container names none
// either: the view image's default user is root, which the kubelet then
// refuses to start. 65534 (nobody) can read the view image and write the
// emptyDirs (mode 0777) it copies into.
const InstallerUID = 65534

// Installer is the flux-installer init container's resources and user.
//
// It passes every admission rule the wrapped container passes and charges
// no more than it: a ResourceQuota that tracks cpu or memory refuses a pod
// with any container that does not state them, a LimitRange checks each
// container's requests, limits and their ratio (and fills in its defaults
// where one is missing, which would make the installer the pod's largest
// request), and Pod Security "restricted" wants runAsNonRoot on every
// container. So it asks for what the wrapped container asks for, which
// keeps a Guaranteed pod Guaranteed and never raises what the pod requests
// (the largest init container, or the sum of the others, whichever is
// more), and runs as a user the kubelet accepts wherever the wrapped
// container must not run as root.
type Installer struct {
	// Requests and Limits are the wrapped container's (a resource it
	// requests nothing of but limits is requested at its limit, as the
	// API server defaults it).
	Requests, Limits jobset.Quantities
	// RunAsNonRoot is true when the wrapped container's own
	// securityContext asks for it (the pod's reaches the installer
	// anyway).
	RunAsNonRoot bool
	// RunAsUser is its runAsUser, nil to inherit the pod's.
	RunAsUser *int64
	// NonRootPath is the field that asks for a user that is not root,
	// "" when none does.
	NonRootPath string
}

// Paths and names of view-mount: image, where the view image is an image
// volume of the pod (read-only, pulled once per node) instead of a copy.
const (
	// ViewVolume is the image volume of the view image.
	ViewVolume = "flux-view"
	// ViewsDir is where the image's Spack views are mounted: at their own
	// path, so that the links in them (absolute in Spack's views, relative
	// in others) resolve as they do in the image.
	ViewsDir = "/opt/views"
	// MountedViewDir is the view in the mounted views (/opt/view links to
	// it in a flux-view image). The entrypoint links ViewDir to it, so
	// that the view is at the same path in both modes.
	MountedViewDir = ViewsDir + "/view"
	// ViewsSubPath and SoftwareSubPath are the image volume's subPaths
	// mounted at ViewsDir and SoftwareDir: real directories of the image,
	// never a symlink (the runtime resolves a subPath inside the image,
	// but the bind mount would follow an absolute link on the node).
	ViewsSubPath    = "opt/views"
	SoftwareSubPath = "opt/software"
)
