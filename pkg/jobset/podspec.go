package jobset

import (
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Pod spec fields the render never edits, read only so that package plan
// can judge them: what listens in the pod's network, what keeps a pod
// running, which node OS it asks for, where the kubelet reads the
// termination message, and which objects fill the environment.

// Values of pod spec fields read here, spelled as in k8s.io/api.
const (
	// ContainerRestartAlways is an init container's restartPolicy that
	// makes it a native sidecar (corev1.ContainerRestartPolicyAlways).
	ContainerRestartAlways = "Always"
	// ProtocolTCP is a port's default protocol (corev1.ProtocolTCP).
	ProtocolTCP = "TCP"
	// OSWindows is spec.os.name of a Windows pod (corev1.Windows).
	OSWindows = "windows"
	// OSLabel is the node label nodeSelector picks a node's OS by
	// (corev1.LabelOSStable).
	OSLabel = "kubernetes.io/os"
	// DefaultTerminationMessagePath is where the kubelet reads a
	// container's termination message unless it says otherwise
	// (corev1.TerminationMessagePathDefault).
	DefaultTerminationMessagePath = "/dev/termination-log"
)

// Port is one entry of a container's ports.
type Port struct {
	// ContainerPort and HostPort are 0 when unset.
	ContainerPort, HostPort int
	// Protocol is as written ("" for the default, TCP).
	Protocol string
	// Path is the entry's field path.
	Path string
}

// TCP reports whether the port is a TCP one, as the broker's is.
func (p Port) TCP() bool { return p.Protocol == "" || p.Protocol == ProtocolTCP }

// EnvSource is one entry of a container's envFrom: every key of a
// ConfigMap or a Secret becomes a variable, its name the key after
// Prefix.
type EnvSource struct {
	Prefix string
	// Kind is "ConfigMap" or "Secret", Name the object's ("" for neither).
	Kind, Name string
	// Path is the entry's field path.
	Path string
}

// OS is what a pod says of the node OS it needs.
type OS struct {
	// Name is spec.os.name ("" when unset).
	Name string
	// Selected is the nodeSelector's kubernetes.io/os ("" when unset).
	Selected string
}

// readPorts reads a container's ports.
func (r *reader) readPorts(c *yaml.Node, path string) []Port {
	var ports []Port
	list := yamltree.Key(path, "ports")
	for i, p := range r.list(c, path, "ports") {
		pp := yamltree.Index(list, i)
		port := Port{Protocol: r.str(p, pp, "protocol"), Path: pp}
		if n := r.integer(p, pp, "containerPort"); n != nil {
			port.ContainerPort = *n
		}
		if n := r.integer(p, pp, "hostPort"); n != nil {
			port.HostPort = *n
		}
		ports = append(ports, port)
	}
	return ports
}

// readEnvFrom reads a container's envFrom.
func (r *reader) readEnvFrom(c *yaml.Node, path string) []EnvSource {
	var sources []EnvSource
	list := yamltree.Key(path, "envFrom")
	for i, e := range r.list(c, path, "envFrom") {
		ep := yamltree.Index(list, i)
		src := EnvSource{Prefix: r.str(e, ep, "prefix"), Path: ep}
		for _, ref := range []struct{ key, kind string }{{"configMapRef", "ConfigMap"}, {"secretRef", "Secret"}} {
			if m := r.mapping(e, ep, ref.key); m != nil {
				src.Kind, src.Name = ref.kind, r.str(m, yamltree.Key(ep, ref.key), "name")
			}
		}
		sources = append(sources, src)
	}
	return sources
}

// readOS reads the node OS a pod spec asks for.
func (r *reader) readOS(pod *yaml.Node, path string) OS {
	return OS{
		Name:     r.str(r.mapping(pod, path, "os"), yamltree.Key(path, "os"), "name"),
		Selected: r.str(r.mapping(pod, path, "nodeSelector"), yamltree.Key(path, "nodeSelector"), OSLabel),
	}
}
