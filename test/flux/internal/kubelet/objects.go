// Package kubelet runs the pods of rendered JobSets on one machine the way a
// Kubernetes node would, for tests that need real programs (real Flux
// brokers) in real pods: one network, UTS and mount namespace per pod, the
// pod's hostname and DNS names, kubelet's ConfigMap, Secret and emptyDir
// volumes, persistentVolumeClaim volumes (host directories the test
// provides, which outlive the run), security contexts, init containers
// before app containers, and the JobSet and Job controllers' view of
// success and failure.
//
// It needs root, iproute2 and util-linux (nsenter, unshare), and the podshim
// program (test/flux/cmd/podshim), which does the part inside a container's
// namespaces.
package kubelet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/jobset/api/jobset/v1alpha2"

	yamlv3 "go.yaml.in/yaml/v3"
)

// Objects are what a render produced, as the API server would hold them.
type Objects struct {
	JobSets    []*v1alpha2.JobSet
	ConfigMaps []*corev1.ConfigMap
	Secrets    []*corev1.Secret
}

// Decode reads a stream of YAML documents (kustomize's output) or one
// ResourceList (a KRM function's output) into Objects. Kinds the runner does
// not use are skipped; a JobSet, ConfigMap or Secret that does not decode
// strictly into its API type is an error.
func Decode(data []byte) (Objects, error) {
	var docs [][]byte // JSON, one per object
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Objects{}, fmt.Errorf("decode YAML: %w", err)
		}
		if doc == nil {
			continue
		}
		items := []any{doc}
		if doc["kind"] == "ResourceList" {
			items, _ = doc["items"].([]any)
		}
		for _, item := range items {
			b, err := json.Marshal(item)
			if err != nil {
				return Objects{}, err
			}
			docs = append(docs, b)
		}
	}
	var objs Objects
	for _, doc := range docs {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := json.Unmarshal(doc, &head); err != nil {
			return Objects{}, err
		}
		var err error
		switch head.APIVersion + "/" + head.Kind {
		case "jobset.x-k8s.io/v1alpha2/JobSet":
			js := &v1alpha2.JobSet{}
			err = strict(doc, js)
			objs.JobSets = append(objs.JobSets, js)
		case "v1/ConfigMap":
			cm := &corev1.ConfigMap{}
			err = strict(doc, cm)
			objs.ConfigMaps = append(objs.ConfigMaps, cm)
		case "v1/Secret":
			s := &corev1.Secret{}
			err = strict(doc, s)
			// The API server moves stringData into data.
			for k, v := range s.StringData {
				if s.Data == nil {
					s.Data = map[string][]byte{}
				}
				s.Data[k] = []byte(v)
			}
			s.StringData = nil
			objs.Secrets = append(objs.Secrets, s)
		}
		if err != nil {
			return Objects{}, fmt.Errorf("%s: %w", head.Kind, err)
		}
	}
	return objs, nil
}

// strict decodes JSON into an API type, refusing fields the type lacks.
func strict(doc []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func (o Objects) configMap(namespace, name string) *corev1.ConfigMap {
	for _, cm := range o.ConfigMaps {
		if cm.Name == name && namespaceOr(cm.Namespace) == namespace {
			return cm
		}
	}
	return nil
}

func (o Objects) secret(namespace, name string) *corev1.Secret {
	for _, s := range o.Secrets {
		if s.Name == name && namespaceOr(s.Namespace) == namespace {
			return s
		}
	}
	return nil
}

func namespaceOr(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}
