// Command kubectl is the real Kubernetes command-line client, built from
// k8s.io/kubectl at the version this module's go.mod pins, so the cluster
// scripts and tests use a client of the same version as the server.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
