// Command podshim is the part of the test kubelet that runs inside a pod's
// namespaces. It has two roles:
//
//	podshim container SPEC.json   set up one container's root file system,
//	                              hostname and credentials, then exec its
//	                              command (the process becomes the
//	                              container's PID 1, as in Kubernetes)
//	podshim dns ADDR RECORDS.json answer A queries for the cluster's pod
//	                              names, as cluster DNS does for a headless
//	                              Service
//
// The kubelet package starts "container" under `unshare` with fresh mount,
// UTS, IPC and PID namespaces, inside the pod's network namespace. podshim
// is built by the tests; it is not part of jobset-flux.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/jobset-flux/jobset-flux/test/flux/internal/shim"
)

func main() {
	if len(os.Args) != 3 && !(len(os.Args) == 4 && os.Args[1] == "dns") {
		fmt.Fprintln(os.Stderr, "usage: podshim container SPEC.json | podshim dns ADDR RECORDS.json")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "container":
		var spec shim.ContainerSpec
		if err = readJSON(os.Args[2], &spec); err == nil {
			err = shim.RunContainer(spec) // returns only on failure: success execs
		}
	case "dns":
		var records map[string]string
		if err = readJSON(os.Args[3], &records); err == nil {
			err = shim.ServeDNS(os.Args[2], records)
		}
	default:
		err = fmt.Errorf("unknown role %q", os.Args[1])
	}
	fmt.Fprintf(os.Stderr, "podshim %s: %v\n", os.Args[1], err)
	// 128 is outside what the tests' commands exit with, so a setup failure
	// is never mistaken for the command's own exit code.
	os.Exit(128)
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
