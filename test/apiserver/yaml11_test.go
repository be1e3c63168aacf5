package apiserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"

	yamlv3 "go.yaml.in/yaml/v3"
)

// yamlReadingDiffs decodes data twice, as kubectl does (YAML 1.1, through
// sigs.k8s.io/yaml: y/n/yes/no/on/off are booleans) and as kyaml-based tools
// do (YAML 1.2: they are strings), and returns every place where the two
// readings differ. Output that kpt and kustomize read one way and kubectl
// apply another is a defect even when one of the readings is valid.
func yamlReadingDiffs(data []byte) ([]string, error) {
	k11, err := decodeObjects(data)
	if err != nil {
		return nil, err
	}
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	var diffs []string
	i := 0
	for {
		var doc any
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("YAML 1.2 decode: %w", err)
		}
		m, ok := doc.(map[string]any)
		if !ok || len(m) == 0 {
			continue
		}
		if i >= len(k11) {
			return nil, fmt.Errorf("YAML 1.2 sees more documents than kubectl's decoder")
		}
		a, b := normalizeJSON(k11[i].Object), normalizeJSON(m)
		where := k11[i].GetKind() + "/" + k11[i].GetName()
		compareReadings(where, "", a, b, &diffs)
		i++
	}
	if i != len(k11) {
		return nil, fmt.Errorf("kubectl's decoder sees %d documents, YAML 1.2 sees %d", len(k11), i)
	}
	return diffs, nil
}

// normalizeJSON round-trips v through JSON so both readings use the same
// Go types (float64 numbers, map[string]any).
func normalizeJSON(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("unmarshalable: %v", err)
	}
	var out any
	_ = json.Unmarshal(data, &out)
	return out
}

func compareReadings(where, path string, kubectl, yaml12 any, diffs *[]string) {
	switch a := kubectl.(type) {
	case map[string]any:
		if b, ok := yaml12.(map[string]any); ok {
			keys := make([]string, 0, len(a))
			for k := range a {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				compareReadings(where, path+"."+k, a[k], b[k], diffs)
			}
			for k := range b {
				if _, ok := a[k]; !ok {
					compareReadings(where, path+"."+k, nil, b[k], diffs)
				}
			}
			return
		}
	case []any:
		if b, ok := yaml12.([]any); ok && len(a) == len(b) {
			for i := range a {
				compareReadings(where, fmt.Sprintf("%s[%d]", path, i), a[i], b[i], diffs)
			}
			return
		}
	}
	if !reflect.DeepEqual(kubectl, yaml12) {
		*diffs = append(*diffs, fmt.Sprintf("%s %s: kubectl (YAML 1.1) reads %#v, kyaml/kpt/kustomize (YAML 1.2) read %#v: the value needs quotes", where, path, kubectl, yaml12))
	}
}
