// Command kubelet is the real Kubernetes node agent, built from
// k8s.io/kubernetes at the version pinned in this module's go.mod, so
// hack/kube/cluster.sh can run a whole cluster from one build cache.
package main

import (
	"context"
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	os.Exit(cli.Run(app.NewKubeletCommand(context.Background())))
}
