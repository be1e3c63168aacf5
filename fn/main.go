// Command jobset-flux is the jobset-flux KRM function.
//
//	jobset-flux                          KRM function: ResourceList on stdin and stdout
//	jobset-flux [--config F] FILE|DIR... standalone: plain YAML in, rendered YAML out
//	jobset-flux [--config F] -           the same for the plain YAML on stdin (Helm)
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
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/jobsetrender"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
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
	return runWith(resourcelist.DefaultPolicy(settings.EnabledAnnotation), args, stdin, stdout, stderr)
}

// runWith is run with the memory policy mem (the tests give their own).
func runWith(mem resourcelist.Policy, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "version", "--version":
			printVersion(stdout)
			return exitOK
		case "keygen":
			return keygen(args[1:], stdout, stderr)
		}
	}
	opts, code := parseFlags(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	opts.memory = mem
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
	if namesStdin(opts.paths) {
		return runStdinPath(proc, opts, stdin, stdout, stderr)
	}
	if len(opts.paths) > 0 {
		return runFiles(proc, opts, stdout, stderr)
	}
	in, code := readStdin(stdin, opts, stderr)
	if code >= 0 {
		return code
	}
	if stdinIsPlainYAML(opts, in) {
		return runStandalone(proc, opts, in, stdout, stderr)
	}
	return runList(proc, opts, "on stdin", in, stdout, stderr)
}

// stdinIsPlainYAML reports whether stdin, given without "-" or files,
// is rendered as plain YAML. kustomize and kpt send a ResourceList there,
// with whatever flags their users pass (kpt fn eval --exec "jobset-flux
// --key-seed-file F"): a ResourceList is answered as one whatever the
// flags, and anything else is refused as not one, unless --config, the
// one flag that belongs to plain YAML only, says it is plain YAML. -v and
// --key-seed-file belong to every mode and say nothing of the input.
func stdinIsPlainYAML(opts options, in []byte) bool {
	return opts.configFile != "" && !resourcelist.IsResourceList(in)
}

// runList answers a ResourceList, from stdin or from the one file given,
// the same way: its functionConfig is the config, its results are kept,
// the output is a ResourceList.
func runList(proc *transform.Processor, opts options, where string, in []byte, stdout, stderr io.Writer) int {
	if opts.configFile != "" {
		fmt.Fprintf(stderr, "jobset-flux: --config is for plain YAML; a ResourceList %s carries its own functionConfig\n", where)
		return exitUsage
	}
	return runKRM(proc, opts.memory, in, opts.verbose, stdout, stderr)
}

// options are the command line of a render.
type options struct {
	configFile, seedFile string
	verbose              bool
	// maxInput bounds stdin and each input file, in bytes.
	maxInput int64
	// paths are the files and directories to render; none: stdin.
	paths []string
	// memory is how a list is read and written, by its size.
	memory resourcelist.Policy
}

// parseFlags reads the command line of a render. The exit code is -1
// when the render should go on.
func parseFlags(args []string, stdout, stderr io.Writer) (options, int) {
	var opts options
	flags := flag.NewFlagSet("jobset-flux", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.StringVar(&opts.configFile, "config", "", "function config file (a ConfigMap or a JobSetFlux) for standalone mode")
	flags.StringVar(&opts.seedFile, "key-seed-file", "", "file holding the secret seed for reproducible CURVE keys (overrides "+jobsetrender.SeedFileEnv+")")
	flags.BoolVar(&opts.verbose, "v", false, "also print info results (fields set on your behalf) on stderr")
	maxInput := flags.String("max-input", "", "bytes read at most from stdin and from each input file, e.g. 512Mi (default 256Mi, or "+MaxInputEnv+")")
	// Help goes to stdout (kpt fn doc shows only that), the usage after
	// an error to stderr.
	flags.Usage = func() {}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout, flags)
			return opts, exitOK
		}
		printUsage(stderr, flags)
		return opts, exitUsage
	}
	opts.paths = flags.Args()
	if misplaced := flagAmong(flags, args, opts.paths); misplaced != "" {
		fmt.Fprintf(stderr, "jobset-flux: %s is after an input: flags go before \"-\" and the files (the flags end at the first argument that is not a flag, so %s was taken for a file name)\n", misplaced, misplaced)
		return opts, exitUsage
	}
	limit, err := inputLimit(*maxInput)
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
		return opts, exitUsage
	}
	opts.maxInput = limit
	return opts, -1
}

// flagAmong returns the first of paths, what is left of args once flags
// parsed them, that names a flag of flags (-v, --config, --max-input=1Mi),
// one the flag package reads without its being defined (-h, -help), or
// --version, which run reads as a command before the flags; "" when none
// does, or when args ended the flags with "--": the paths are then file
// names on purpose.
func flagAmong(flags *flag.FlagSet, args, paths []string) string {
	if rest := len(args) - len(paths); rest > 0 && args[rest-1] == "--" {
		return ""
	}
	for _, p := range paths {
		name, ok := strings.CutPrefix(p, "-")
		if !ok || name == "" {
			continue
		}
		name, _, _ = strings.Cut(strings.TrimPrefix(name, "-"), "=")
		if flags.Lookup(name) != nil || name == "h" || name == "help" || p == "--version" {
			return p
		}
	}
	return ""
}

// runKRM is the KRM function protocol: the ResourceList, with results, is
// always written; the exit code says whether there were errors; errors and
// warnings also go to stderr, because kustomize shows only stderr. mem
// picks the Source and the Sink (resourcelist.Policy): the items are rendered the
// same way whichever reads and writes them.
func runKRM(proc *transform.Processor, mem resourcelist.Policy, in []byte, verbose bool, stdout, stderr io.Writer) int {
	var out rendered
	sink, err := mem.Render(in, transform.Keeps, stderr, func(src resourcelist.Source, sink resourcelist.Sink) (err error) {
		out, err = render(proc, src, sink)
		return err
	})
	var notList *resourcelist.NotAList
	switch {
	case errors.As(err, &notList):
		fmt.Fprintf(stderr, "jobset-flux: %s; run without arguments only from kustomize or kpt (a ResourceList with kind: ResourceList, items: [...]), or pass files to render plain YAML\n", resourcelist.OneLine(resourcelist.Clip(err.Error(), resourcelist.MaxLine)))
		return exitFailed
	case err != nil:
		return writeFailed(stdout, stderr, out, err)
	}
	if code, written := writeList(stdout, stderr, sink, out); !written {
		return code
	}
	return reportOutcome(stderr, out.results, out.inherited, verbose, out.ok, nil)
}

// reportOutcome prints the results and returns the exit code a run of
// Process ends with: a problem of the function's own, failed checks, or
// success. The first inherited results were in the input (an earlier
// function's): they are printed apart, so that they do not pass for this
// function's, and an error among them fails the run as the function's
// own would. The output list keeps them, and a pipeline that goes on past
// a failed function (a shell pipe without pipefail) must not end in
// success because the last function had nothing to add.
func reportOutcome(stderr io.Writer, results fn.Results, inherited int, verbose, ok bool, procErr error) int {
	earlier := results[:inherited]
	if shown := visible(earlier, verbose); shown > 0 {
		fmt.Fprintf(stderr, "jobset-flux: the input already holds %d result(s) of an earlier function (kept in the output):\n", shown)
		resourcelist.PrintResults(stderr, earlier, verbose)
		fmt.Fprintf(stderr, "jobset-flux: this function's results:\n")
	}
	resourcelist.PrintResults(stderr, results[inherited:], verbose)
	switch {
	case procErr != nil:
		fmt.Fprintf(stderr, "jobset-flux: %v\n", procErr)
		return exitProblem
	case !ok:
		return exitFailed
	case earlier.ExitCode() != 0:
		fmt.Fprintf(stderr, "jobset-flux: exit 1: the input already holds an error result (above), which an earlier function reported; fix what it says and render again\n")
		return exitFailed
	}
	return exitOK
}

// visible is how many of results PrintResults shows.
func visible(results fn.Results, verbose bool) int {
	n := 0
	for _, r := range results {
		if verbose || r.Severity != fn.Info {
			n++
		}
	}
	return n
}

// runFiles renders the files given. A ResourceList file is answered as
// that list on stdin would be (a file must not lose its functionConfig
// and results); it must then be the only input, since a list cannot be
// merged with plain objects without choosing whose config wins.
func runFiles(proc *transform.Processor, opts options, stdout, stderr io.Writer) int {
	files, code := inputFiles(opts, stderr)
	if code != exitOK {
		return code
	}
	lists, size := 0, 0
	for _, f := range files {
		size += len(f.data)
		if resourcelist.IsResourceList(f.data) {
			lists++
		}
	}
	resourcelist.TuneGC(size, false)
	switch {
	case lists == 1 && len(files) == 1:
		return runList(proc, opts, "in "+files[0].name, files[0].data, stdout, stderr)
	case lists > 0:
		for _, f := range files {
			if resourcelist.IsResourceList(f.data) {
				fmt.Fprintf(stderr, "jobset-flux: %s is a ResourceList (kind: ResourceList); give it alone (as the only file, or on stdin), not with other inputs\n", f.name)
				break
			}
		}
		return exitUsage
	}
	rl, code := standaloneList(opts, stderr)
	if code != exitOK {
		return code
	}
	for _, f := range files {
		items, err := resourcelist.Objects(f.name, f.data)
		if err != nil {
			fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
			return exitFailed
		}
		rl.Items = append(rl.Items, items...)
	}
	return renderStandalone(proc, rl, opts.verbose, stdout, stderr)
}

// inputFile is one file given on the command line, read.
type inputFile struct {
	name string
	data []byte
}

// inputFiles reads every file the paths name (a directory's *.yaml and
// *.yml); a file that cannot be read is a usage error.
func inputFiles(opts options, stderr io.Writer) ([]inputFile, int) {
	var out []inputFile
	for _, p := range opts.paths {
		files, err := resourcelist.YAMLFiles(p)
		if err != nil {
			fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
			return nil, exitUsage
		}
		for _, f := range files {
			data, err := resourcelist.ReadFileHint(f, opts.maxInput, maxInputHint)
			if err != nil {
				fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
				return nil, exitUsage
			}
			out = append(out, inputFile{f, data})
		}
	}
	return out, exitOK
}

// runStandalone renders plain YAML read from stdin.
func runStandalone(proc *transform.Processor, opts options, stdin []byte, stdout, stderr io.Writer) int {
	rl, code := standaloneList(opts, stderr)
	if code != exitOK {
		return code
	}
	items, err := resourcelist.Objects("<stdin>", stdin)
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
		return exitFailed
	}
	rl.Items = items
	return renderStandalone(proc, rl, opts.verbose, stdout, stderr)
}

// renderStandalone processes a standalone list and prints the result in
// input order, generated objects last.
func renderStandalone(proc *transform.Processor, rl *fn.ResourceList, verbose bool, stdout, stderr io.Writer) int {
	ok, err := proc.Process(rl)
	if code := reportOutcome(stderr, rl.Results, 0, verbose, ok, err); code != exitOK {
		return code
	}
	return writeStream(stdout, stderr, rl.Items)
}

// standaloneList is the empty list of a standalone render, with the
// --config file as its functionConfig.
func standaloneList(opts options, stderr io.Writer) (*fn.ResourceList, int) {
	rl := &fn.ResourceList{FunctionConfig: fn.NewEmptyKubeObject()}
	if opts.configFile != "" {
		config, err := readConfig(opts.configFile)
		if err != nil {
			fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
			return nil, exitUsage
		}
		rl.FunctionConfig = config
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
)

// loadSeed reads the key seed from --key-seed-file, JOBSET_FLUX_KEY_SEED_FILE
// or JOBSET_FLUX_KEY_SEED. It is never a field of the committed config.
func loadSeed(flagFile string) ([]byte, error) {
	file := flagFile
	if file == "" {
		file = os.Getenv(jobsetrender.SeedFileEnv)
	}
	value, inEnv := os.LookupEnv(jobsetrender.SeedEnv)
	switch {
	case file != "" && inEnv && flagFile == "":
		return nil, fmt.Errorf("both %s and %s are set; set one", jobsetrender.SeedEnv, jobsetrender.SeedFileEnv)
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
