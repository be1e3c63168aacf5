// Command kpt is the kpt the tests run: kpt's own main (github.com/kptdev/kpt
// main.go and run.GetMain, version pinned by this module's go.mod) with its
// pkg and fn command groups, built into bin/kpt by `make bin/kpt`.
//
// It is not `go install github.com/kptdev/kpt@v1.0.0-beta.61`: kpt's main
// package links the `alpha rollouts` commands, which import
// github.com/kptdev/kpt/rollouts at a pseudo-version the Go module proxy does
// not serve (403), and no other version of kpt is served. Only `alpha` (and
// `live`, which needs a cluster) are left out; the tests use `fn`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"

	"github.com/kptdev/kpt/commands/fn"
	"github.com/kptdev/kpt/commands/pkg"
	"github.com/kptdev/kpt/pkg/lib/errors"
	"github.com/kptdev/kpt/pkg/lib/errors/resolver"
	"github.com/kptdev/kpt/pkg/lib/util/cmdutil"
	"github.com/kptdev/kpt/pkg/printer"
	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	"k8s.io/klog/v2"
	k8scmdutil "k8s.io/kubectl/pkg/cmd/util"
	"sigs.k8s.io/kustomize/kyaml/commandutil"
)

const module = "github.com/kptdev/kpt"

func main() {
	klog.InitFlags(nil)
	cmd := root(context.Background())
	if err := cli.RunNoErrOutput(cmd); err != nil {
		os.Exit(handleErr(cmd, err))
	}
}

// root is run.GetMain without alpha, live, the pager and the hidden flags.
func root(ctx context.Context) *cobra.Command {
	os.Setenv(commandutil.EnableAlphaCommmandsEnvName, "true")
	cmd := &cobra.Command{
		Use:           "kpt",
		Short:         "kpt " + version() + " (pkg and fn commands; built for the jobset-flux tests)",
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Usage() },
	}
	cmd.PersistentFlags().AddGoFlagSet(flag.CommandLine)
	cmd.PersistentFlags().BoolVar(&printer.TruncateOutput, "truncate-output", true, "Enable the truncation for output")
	ctx = printer.WithContext(ctx, printer.New(cmd.OutOrStdout(), cmd.ErrOrStderr()))
	cmd.InitDefaultHelpCmd()
	for _, c := range []*cobra.Command{pkg.GetCommand(ctx, "kpt"), fn.GetCommand(ctx, "kpt")} {
		normalize(c)
		cmd.AddCommand(c)
	}
	cmd.PersistentFlags().BoolVar(&cmdutil.StackOnError, "stack-trace", false, "Print a stack-trace on failure")
	if _, err := exec.LookPath("git"); err != nil {
		fmt.Fprintf(os.Stderr, "kpt requires that `git` is installed and on the PATH")
		os.Exit(1)
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the version number of kpt",
		Run:   func(*cobra.Command, []string) { fmt.Println(version()) },
	})
	return cmd
}

// normalize is commands.NormalizeCommand (that package imports alpha).
func normalize(c *cobra.Command) {
	c.Short = strings.TrimPrefix(c.Short, "[Alpha] ")
	for _, sub := range c.Commands() {
		normalize(sub)
	}
}

// version is the kpt module version this binary was built from, without
// the leading v (as kpt prints it).
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == module {
				return strings.TrimPrefix(d.Version, "v")
			}
		}
	}
	return "unknown"
}

// handleErr is kpt's main.handleErr.
func handleErr(cmd *cobra.Command, err error) int {
	if re, resolved := resolver.ResolveError(err); resolved {
		if re.Message != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s \n", re.Message)
		}
		return re.ExitCode
	}
	var kptErr *errors.Error
	if errors.As(err, &kptErr) {
		unwrapped, ok := errors.UnwrapErrors(kptErr)
		if ok && !cmdutil.PrintErrorStacktrace() {
			fmt.Fprintf(cmd.ErrOrStderr(), "Error: %s \n", unwrapped.Error())
			return 1
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "%s \n", kptErr.Error())
		return 1
	}
	k8scmdutil.CheckErr(err)
	return 1
}
