// Command jobset-flux is the jobset-flux KRM function.
//
//	jobset-flux                          KRM function: ResourceList on stdin and stdout
//	jobset-flux [--config F] FILE|DIR... standalone: plain YAML in, rendered YAML out
//	jobset-flux keygen [flags]           write a CURVE certificate or a Secret manifest
//	jobset-flux version                  print version information
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/transform"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Set by the build (-ldflags -X).
var (
	version = "dev"
	commit  = "unknown"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailed  = 1 // the input has errors (results say which)
	exitUsage   = 2 // bad flags or arguments
	exitProblem = 3 // the function could not run (I/O, bad environment)
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "version", "--version":
			printVersion(stdout)
			return exitOK
		case "keygen":
			return keygen(args[1:], stdout, stderr)
		}
	}
	opts, code := parseFlags(args, stderr)
	if code >= 0 {
		return code
	}
	seed, err := loadSeed(opts.seedFile)
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
		return exitProblem
	}
	proc, err := transform.New(transform.Options{Seed: seed})
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
		return exitProblem
	}
	if len(opts.paths) > 0 {
		return runStandalone(proc, opts, nil, stdout, stderr)
	}
	// No files: the input is on stdin. Only what it holds decides the
	// mode: a flag such as --key-seed-file (kpt fn eval --exec "jobset-flux
	// --key-seed-file F") must not turn a ResourceList into plain YAML
	// whose functionConfig is ignored and whose results are lost.
	in, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux: reading stdin: %v\n", err)
		return exitProblem
	}
	if opts.configFile == "" && !opts.verbose || resourcelist.IsResourceList(in) {
		if opts.configFile != "" {
			fmt.Fprintf(stderr, "jobset-flux: --config is for plain YAML; a ResourceList on stdin carries its own functionConfig\n")
			return exitUsage
		}
		return runKRM(proc, in, opts.verbose, stdout, stderr)
	}
	return runStandalone(proc, opts, in, stdout, stderr)
}

// options are the command line of a render.
type options struct {
	configFile, seedFile string
	verbose              bool
	// paths are the files and directories to render; none: stdin.
	paths []string
}

// parseFlags reads the command line of a render. The exit code is -1
// when the render should go on.
func parseFlags(args []string, stderr io.Writer) (options, int) {
	var opts options
	flags := flag.NewFlagSet("jobset-flux", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.StringVar(&opts.configFile, "config", "", "function config file (a ConfigMap or a JobSetFlux) for standalone mode")
	flags.StringVar(&opts.seedFile, "key-seed-file", "", "file holding the secret seed for reproducible CURVE keys (overrides "+transform.SeedFileEnv+")")
	flags.BoolVar(&opts.verbose, "v", false, "also print info results (fields set on your behalf) on stderr")
	flags.Usage = func() {
		fmt.Fprintf(stderr, "Usage:\n  jobset-flux                           run as a KRM function (ResourceList on stdin)\n  jobset-flux [flags] [FILE|DIR ...]    render plain YAML files (stdin when none)\n  jobset-flux keygen [flags]            write a CURVE certificate or Secret\n  jobset-flux version\n\nFlags:\n")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return opts, exitOK
		}
		return opts, exitUsage
	}
	opts.paths = flags.Args()
	return opts, -1
}

// runKRM is the KRM function protocol: the ResourceList, with results, is
// always written; the exit code says whether there were errors; errors and
// warnings also go to stderr, because kustomize shows only stderr.
func runKRM(proc *transform.Processor, in []byte, verbose bool, stdout, stderr io.Writer) int {
	rl, err := resourcelist.Parse(in)
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux: %s; run without arguments only from kustomize or kpt (a ResourceList with kind: ResourceList, items: [...]), or pass files to render plain YAML\n", resourcelist.OneLine(resourcelist.Clip(err.Error(), resourcelist.MaxLine)))
		return exitFailed
	}
	ok, procErr := proc.Process(rl)
	resourcelist.Sort(rl.Items)
	out, err := resourcelist.Encode(rl)
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux: writing the ResourceList: %v\n", err)
		return exitProblem
	}
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintf(stderr, "jobset-flux: writing stdout: %v\n", err)
		return exitProblem
	}
	return reportOutcome(stderr, rl.Results, verbose, ok, procErr)
}

// reportOutcome prints the results and returns the exit code a run of
// Process ends with: a problem of the function's own, failed checks, or
// success.
func reportOutcome(stderr io.Writer, results fn.Results, verbose, ok bool, procErr error) int {
	resourcelist.PrintResults(stderr, results, verbose)
	switch {
	case procErr != nil:
		fmt.Fprintf(stderr, "jobset-flux: %v\n", procErr)
		return exitProblem
	case !ok:
		return exitFailed
	}
	return exitOK
}

// runStandalone renders plain YAML files (or stdin, when there are no
// paths) and prints the result in input order, generated objects last.
func runStandalone(proc *transform.Processor, opts options, stdin []byte, stdout, stderr io.Writer) int {
	rl, code := readStandalone(opts, stdin, stderr)
	if code != exitOK {
		return code
	}
	ok, err := proc.Process(rl)
	if code := reportOutcome(stderr, rl.Results, opts.verbose, ok, err); code != exitOK {
		return code
	}
	for i, item := range rl.Items {
		if i > 0 {
			io.WriteString(stdout, "---\n")
		}
		if _, err := stdout.Write(item.Bytes()); err != nil {
			fmt.Fprintf(stderr, "jobset-flux: writing stdout: %v\n", err)
			return exitProblem
		}
	}
	return exitOK
}

// readStandalone builds the ResourceList of a standalone render: a file
// that cannot be read is a usage error, one that is not YAML a failed
// input.
func readStandalone(opts options, stdin []byte, stderr io.Writer) (*fn.ResourceList, int) {
	rl := &fn.ResourceList{FunctionConfig: fn.NewEmptyKubeObject()}
	if opts.configFile != "" {
		config, err := readConfig(opts.configFile)
		if err != nil {
			fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
			return nil, exitUsage
		}
		rl.FunctionConfig = config
	}
	if len(opts.paths) == 0 {
		items, err := resourcelist.Objects("<stdin>", stdin)
		if err != nil {
			fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
			return nil, exitFailed
		}
		rl.Items = items
	}
	for _, p := range opts.paths {
		files, err := resourcelist.YAMLFiles(p)
		if err != nil {
			fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
			return nil, exitUsage
		}
		for _, f := range files {
			data, err := resourcelist.ReadFile(f, maxInputFile)
			if err != nil {
				fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
				return nil, exitUsage
			}
			items, err := resourcelist.Objects(f, data)
			if err != nil {
				fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
				return nil, exitFailed
			}
			rl.Items = append(rl.Items, items...)
		}
	}
	return rl, exitOK
}

// readConfig reads the one object of the --config file.
func readConfig(name string) (*fn.KubeObject, error) {
	data, err := resourcelist.ReadFile(name, maxConfigFile)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	items, err := resourcelist.Objects(name, data)
	if err == nil && len(items) != 1 {
		err = fmt.Errorf("holds %d objects, want exactly one", len(items))
	}
	if err != nil {
		return nil, fmt.Errorf("--config %s: %w", name, err)
	}
	return items[0], nil
}

// Bounds of the files the command reads. A seed is a few dozen bytes, a
// function config a few hundred; an input file may be a whole package.
const (
	maxSeedFile   = 4 << 10
	maxConfigFile = 1 << 20
	maxInputFile  = 256 << 20
)

// loadSeed reads the key seed from --key-seed-file, JOBSET_FLUX_KEY_SEED_FILE
// or JOBSET_FLUX_KEY_SEED. It is never a field of the committed config.
func loadSeed(flagFile string) ([]byte, error) {
	file := flagFile
	if file == "" {
		file = os.Getenv(transform.SeedFileEnv)
	}
	value, inEnv := os.LookupEnv(transform.SeedEnv)
	switch {
	case file != "" && inEnv && flagFile == "":
		return nil, fmt.Errorf("both %s and %s are set; set one", transform.SeedEnv, transform.SeedFileEnv)
	case file != "":
		data, err := resourcelist.ReadFile(file, maxSeedFile)
		if err != nil {
			return nil, fmt.Errorf("reading the key seed: %w", err)
		}
		return bytes.TrimRight(data, "\r\n"), nil
	case inEnv:
		return []byte(value), nil
	}
	return nil, nil
}

func printVersion(w io.Writer) {
	fmt.Fprintf(w, "jobset-flux %s (commit %s)\n", version, commit)
	if info, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(w, "go: %s\n", info.GoVersion)
		for _, dep := range info.Deps {
			switch dep.Path {
			case "github.com/kptdev/krm-functions-sdk/go/fn", "sigs.k8s.io/kustomize/kyaml", "sigs.k8s.io/jobset":
				fmt.Fprintf(w, "%s: %s\n", dep.Path, dep.Version)
			}
		}
	}
}
