// Command krm-identity is the floor of the jobset-flux benchmark: a KRM
// function built from the same SDK (github.com/kptdev/krm-functions-sdk/go/fn)
// that reads the ResourceList on stdin and writes it back unchanged, exactly
// as jobset-flux's KRM path does (io.ReadAll, fn.ParseResourceList,
// rl.ToYAML, one write), but without processing anything. Whatever
// jobset-flux costs above this binary is the cost of its own work.
//
// With KRM_IDENTITY_WRITER=items it writes the list the way jobset-flux
// does (pkg/resourcelist, item by item): not the floor the targets use,
// but the reference for what the function's own work costs beyond a
// cheaper writer (docs/contributing/performance.md).
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

func main() {
	os.Exit(run(os.Stdin, os.Stdout, os.Stderr))
}

func run(stdin io.Reader, stdout, stderr io.Writer) int {
	in, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "krm-identity: reading stdin: %v\n", err)
		return 3
	}
	rl, err := fn.ParseResourceList(in)
	if err != nil {
		fmt.Fprintf(stderr, "krm-identity: the input is not a ResourceList: %v\n", err)
		return 1
	}
	var out []byte
	if os.Getenv("KRM_IDENTITY_WRITER") == "items" {
		out, err = resourcelist.Encode(rl)
	} else {
		out, err = rl.ToYAML()
	}
	if err != nil {
		fmt.Fprintf(stderr, "krm-identity: writing the ResourceList: %v\n", err)
		return 3
	}
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintf(stderr, "krm-identity: writing stdout: %v\n", err)
		return 3
	}
	return 0
}
