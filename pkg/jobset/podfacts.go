package jobset

import (
	"strconv"

	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Quantities are a container's requests or limits of the resources a
// ResourceQuota or a LimitRange asks every container to state, as written
// ("" for unset or not a quantity).
type Quantities struct {
	CPU, Memory, EphemeralStorage string
}

// Or is q with each resource it leaves unset taken from other.
func (q Quantities) Or(other Quantities) Quantities {
	pick := func(a, b string) string {
		if a != "" {
			return a
		}
		return b
	}
	return Quantities{pick(q.CPU, other.CPU), pick(q.Memory, other.Memory), pick(q.EphemeralStorage, other.EphemeralStorage)}
}

// Compute is a container's requests and limits of cpu, memory and
// ephemeral storage.
type Compute struct {
	Requests, Limits Quantities
}

// readCompute reads a container's Compute.
func readCompute(c *yaml.Node) Compute {
	res := yamltree.Get(c, "resources")
	read := func(m *yaml.Node) Quantities {
		get := func(name string) string {
			n := yamltree.Get(m, name)
			if _, ok := scalarQuantity(n); !ok {
				return ""
			}
			return n.Value
		}
		return Quantities{get("cpu"), get("memory"), get("ephemeral-storage")}
	}
	return Compute{Requests: read(yamltree.Get(res, "requests")), Limits: read(yamltree.Get(res, "limits"))}
}

// Identity is the user and root policy a securityContext asks for.
type Identity struct {
	// RunAsNonRoot is runAsNonRoot (nil when unset).
	RunAsNonRoot *bool
	// RunAsUser is runAsUser (nil when unset or not a number).
	RunAsUser *int64
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
