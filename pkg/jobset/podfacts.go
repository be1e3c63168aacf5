package jobset

import (
	"strconv"

	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// QoS is what a container adds to its pod's QoS class: a pod is
// Guaranteed only when every container, init containers too, has cpu and
// memory limits and requests equal to them (a request left out is the
// limit).
type QoS struct {
	// Guaranteed is true when this container's cpu and memory are so.
	Guaranteed bool
	// CPU and Memory are its limits as written, when Guaranteed.
	CPU, Memory string
}

// Identity is the user and root policy a securityContext asks for.
type Identity struct {
	// RunAsNonRoot is runAsNonRoot (nil when unset).
	RunAsNonRoot *bool
	// RunAsUser is runAsUser (nil when unset or not a number).
	RunAsUser *int64
}

// readQoS reads a container's contribution to the pod's QoS class.
// Values of the wrong type count as not Guaranteed: reading the GPUs and
// cores reports them.
func readQoS(c *yaml.Node) QoS {
	res := yamltree.Get(c, "resources")
	limits, requests := yamltree.Get(res, "limits"), yamltree.Get(res, "requests")
	q := QoS{Guaranteed: true}
	for _, name := range []string{"cpu", "memory"} {
		limit, ok := scalarQuantity(yamltree.Get(limits, name))
		if !ok || limit.IsZero() {
			return QoS{}
		}
		if req := yamltree.Get(requests, name); req != nil {
			if r, ok := scalarQuantity(req); !ok || r.Cmp(limit) != 0 {
				return QoS{}
			}
		}
		if name == "cpu" {
			q.CPU = yamltree.Get(limits, name).Value
		} else {
			q.Memory = yamltree.Get(limits, name).Value
		}
	}
	return q
}

// scalarQuantity parses a quantity scalar.
func scalarQuantity(n *yaml.Node) (resource.Quantity, bool) {
	if n == nil || n.Kind != yaml.ScalarNode {
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(n.Value)
	return q, err == nil
}

// ephemeralLimit is a container's ephemeral-storage limit as written and
// its field path ("" when it has none).
func ephemeralLimit(c *yaml.Node, path string) (string, string) {
	n := yamltree.Get(yamltree.Get(yamltree.Get(c, "resources"), "limits"), "ephemeral-storage")
	if _, ok := scalarQuantity(n); !ok {
		return "", ""
	}
	return n.Value, path + ".resources.limits[ephemeral-storage]"
}

// readIdentity reads runAsNonRoot and runAsUser from a securityContext.
func readIdentity(sc *yaml.Node) Identity {
	var id Identity
	if n := yamltree.Get(sc, "runAsNonRoot"); n != nil && n.Kind == yaml.ScalarNode && (n.Value == "true" || n.Value == "false") {
		b := n.Value == "true"
		id.RunAsNonRoot = &b
	}
	if n := yamltree.Get(sc, "runAsUser"); n != nil && n.Kind == yaml.ScalarNode {
		if u, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			id.RunAsUser = &u
		}
	}
	return id
}

// initQoS reports whether every init container of a pod spec is
// Guaranteed (true when it has none).
func initQoS(pod *yaml.Node) bool {
	inits := yamltree.Get(pod, InitContainersKey)
	if inits == nil || inits.Kind != yaml.SequenceNode {
		return true
	}
	for _, c := range inits.Content {
		if !readQoS(c).Guaranteed {
			return false
		}
	}
	return true
}
