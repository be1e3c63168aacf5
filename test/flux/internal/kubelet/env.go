package kubelet

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// podFacts are the downward-API values a container's env can refer to.
type podFacts struct {
	name, namespace, ip, hostname string
	labels, annotations           map[string]string
}

// containerEnv builds a container's environment in kubelet's order: the
// image's ENV, the runtime's HOSTNAME and service variables, then the
// container's env list, each value expanded with $(VAR) from the entries
// before it.
func containerEnv(img Image, c *corev1.Container, pod podFacts, objs Objects) ([]string, error) {
	env := newEnvList(img.Env)
	env.set("HOSTNAME", pod.hostname)
	env.set("KUBERNETES_SERVICE_HOST", "10.96.0.1")
	env.set("KUBERNETES_SERVICE_PORT", "443")
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env.set(e.Name, expand(e.Value, env.lookup))
		case e.ValueFrom.FieldRef != nil:
			v, err := fieldRef(e.ValueFrom.FieldRef.FieldPath, pod)
			if err != nil {
				return nil, fmt.Errorf("env %s: %w", e.Name, err)
			}
			env.set(e.Name, v)
		case e.ValueFrom.ConfigMapKeyRef != nil:
			ref := e.ValueFrom.ConfigMapKeyRef
			cm := objs.configMap(pod.namespace, ref.Name)
			var v string
			found := cm != nil
			if found {
				v, found = cm.Data[ref.Key]
			}
			if !found {
				if ref.Optional != nil && *ref.Optional {
					continue
				}
				return nil, fmt.Errorf("env %s: ConfigMap %s has no key %q", e.Name, ref.Name, ref.Key)
			}
			env.set(e.Name, v)
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			s := objs.secret(pod.namespace, ref.Name)
			if s == nil {
				if ref.Optional != nil && *ref.Optional {
					continue
				}
				return nil, fmt.Errorf("env %s: Secret %s not found", e.Name, ref.Name)
			}
			env.set(e.Name, string(s.Data[ref.Key]))
		default:
			return nil, fmt.Errorf("env %s: unsupported valueFrom", e.Name)
		}
	}
	return env.list(), nil
}

func fieldRef(path string, pod podFacts) (string, error) {
	switch path {
	case "metadata.name":
		return pod.name, nil
	case "metadata.namespace":
		return pod.namespace, nil
	case "status.podIP":
		return pod.ip, nil
	case "spec.nodeName":
		return "test-node", nil
	}
	if k, ok := strings.CutPrefix(path, "metadata.labels['"); ok {
		return pod.labels[strings.TrimSuffix(k, "']")], nil
	}
	if k, ok := strings.CutPrefix(path, "metadata.annotations['"); ok {
		return pod.annotations[strings.TrimSuffix(k, "']")], nil
	}
	return "", fmt.Errorf("unsupported fieldRef %q", path)
}

// command returns the argv kubelet runs: command replaces the image's
// entrypoint and args its cmd; $(VAR) expands from the container's env.
func command(img Image, c *corev1.Container, env []string) ([]string, error) {
	lookup := newEnvList(env).lookup
	var argv []string
	switch {
	case len(c.Command) > 0:
		argv = append(argv, c.Command...)
		argv = append(argv, c.Args...)
	case len(c.Args) > 0:
		argv = append(append(argv, img.Entrypoint...), c.Args...)
	default:
		argv = append(append(argv, img.Entrypoint...), img.Cmd...)
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("container %s: no command, no args, and the image has no entrypoint or cmd", c.Name)
	}
	for i, a := range argv {
		argv[i] = expand(a, lookup)
	}
	return argv, nil
}

// expand implements Kubernetes' $(VAR) syntax: a defined VAR is replaced,
// an undefined one stays as written, and $$ is a literal $.
func expand(s string, lookup func(string) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// envList is an ordered environment where a later set replaces the value
// in place.
type envList struct {
	names  []string
	values map[string]string
}

func newEnvList(kvs []string) *envList {
	e := &envList{values: map[string]string{}}
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		e.set(k, v)
	}
	return e
}

func (e *envList) set(k, v string) {
	if _, ok := e.values[k]; !ok {
		e.names = append(e.names, k)
	}
	e.values[k] = v
}

func (e *envList) lookup(k string) (string, bool) {
	v, ok := e.values[k]
	return v, ok
}

func (e *envList) list() []string {
	out := make([]string, len(e.names))
	for i, k := range e.names {
		out[i] = k + "=" + e.values[k]
	}
	return out
}
