// Command argocd-cmp-server is Argo CD's config management plugin server,
// built unmodified from github.com/argoproj/argo-cd/v3 (version pinned in
// go.mod). The integration test runs it with deploy/argocd/plugin.yaml.
package main

import (
	"fmt"
	"os"

	"github.com/argoproj/argo-cd/v3/cmd/argocd-cmp-server/commands"
)

func main() {
	if err := commands.NewCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
