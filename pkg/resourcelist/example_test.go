package resourcelist_test

import (
	"fmt"
	"os"

	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
)

// Parse refuses what the SDK's parser would silently read otherwise: a
// second items list, which it drops.
func ExampleParse() {
	in := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}
`
	_, err := resourcelist.Parse([]byte(in))
	fmt.Println(err)
	// Output:
	// the input is not a ResourceList: the key "items" appears twice at the top of the ResourceList; keep one (one of them would be ignored)
}

// Sort and Encode write a list as the SDK's ToYAML does: items by
// apiVersion, kind, namespace and name.
func ExampleEncode() {
	in := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- {apiVersion: v1, kind: Service, metadata: {name: z}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}
`
	rl, err := resourcelist.Parse([]byte(in))
	if err != nil {
		panic(err)
	}
	out, err := resourcelist.Encode(rl)
	if err != nil {
		panic(err)
	}
	os.Stdout.Write(out)
	// Output:
	// apiVersion: config.kubernetes.io/v1
	// kind: ResourceList
	// items:
	// - {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}
	// - {apiVersion: v1, kind: Service, metadata: {name: z}}
}
