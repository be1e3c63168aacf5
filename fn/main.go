// Command jobset-flux is the jobset-flux KRM function.
//
//	jobset-flux                          KRM function: ResourceList on stdin and stdout
//	jobset-flux [--config F] FILE|DIR... standalone: plain YAML in, rendered YAML out
//	jobset-flux keygen [flags]           write a CURVE certificate or a Secret manifest
//	jobset-flux version                  print version information
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/jobset-flux/jobset-flux/pkg/curve"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/transform"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
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
	flags := flag.NewFlagSet("jobset-flux", flag.ContinueOnError)
	flags.SetOutput(stderr)
	configFile := flags.String("config", "", "function config file (a ConfigMap or a JobSetFlux) for standalone mode")
	seedFile := flags.String("key-seed-file", "", "file holding the secret seed for reproducible CURVE keys (overrides "+transform.SeedFileEnv+")")
	verbose := flags.Bool("v", false, "also print info results (fields set on your behalf) on stderr")
	flags.Usage = func() {
		fmt.Fprintf(stderr, "Usage:\n  jobset-flux                           run as a KRM function (ResourceList on stdin)\n  jobset-flux [flags] [FILE|DIR ...]    render plain YAML files (stdin when none)\n  jobset-flux keygen [flags]            write a CURVE certificate or Secret\n  jobset-flux version\n\nFlags:\n")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	seed, err := loadSeed(*seedFile)
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
		return exitProblem
	}
	proc, err := transform.New(transform.Options{Seed: seed})
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
		return exitProblem
	}
	if len(args) == 0 {
		return runKRM(proc, stdin, stdout, stderr)
	}
	return runStandalone(proc, *configFile, flags.Args(), *verbose, stdin, stdout, stderr)
}

// runKRM is the KRM function protocol: the ResourceList, with results, is
// always written; the exit code says whether there were errors; errors and
// warnings also go to stderr, because kustomize shows only stderr.
func runKRM(proc *transform.Processor, stdin io.Reader, stdout, stderr io.Writer) int {
	in, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux: reading stdin: %v\n", err)
		return exitProblem
	}
	rl, err := fn.ParseResourceList(in)
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux: the input is not a ResourceList (kind: ResourceList, items: [...]); run without arguments only from kustomize or kpt, or pass files to render plain YAML: %v\n", err)
		return exitFailed
	}
	if v := resourceListVersion(in); !slices.Contains(resourceListVersions, v) {
		fmt.Fprintf(stderr, "jobset-flux: the input ResourceList has apiVersion %s; the KRM function protocol needs apiVersion: %s\n", strconv.Quote(v), kio.ResourceListAPIVersion)
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
	printResults(stderr, rl.Results, false)
	if procErr != nil {
		fmt.Fprintf(stderr, "jobset-flux: %v\n", procErr)
		return exitProblem
	}
	if !ok {
		return exitFailed
	}
	return exitOK
}

// resourceListVersions are the ResourceList versions of the KRM function
// protocol: v1, and v1alpha1 from older kpt and kustomize.
var resourceListVersions = []string{kio.ResourceListAPIVersion, "config.kubernetes.io/v1alpha1"}

// resourceListVersion returns the apiVersion of a ResourceList that
// fn.ParseResourceList accepted (the SDK checks only its kind). Decoding
// the input again costs as much as the SDK's parse (seconds for 100 MB),
// so the block-style YAML that kpt and kustomize write takes a fast path:
// one top-level line "apiVersion: <a known version>" in column 0 is
// enough. Anything else (JSON, flow style, another value) is decoded.
func resourceListVersion(in []byte) string {
	var found []string
	for line := range bytes.Lines(in) {
		if v, ok := bytes.CutPrefix(line, []byte("apiVersion:")); ok {
			found = append(found, strings.Trim(strings.TrimSpace(string(v)), `"'`))
		}
	}
	if len(found) == 1 && slices.Contains(resourceListVersions, found[0]) {
		return found[0]
	}
	var header struct {
		APIVersion string `yaml:"apiVersion"`
	}
	if err := yaml.Unmarshal(in, &header); err != nil {
		return ""
	}
	return header.APIVersion
}

// runStandalone renders plain YAML files (or stdin) and prints the result
// in input order, generated objects last.
func runStandalone(proc *transform.Processor, configFile string, paths []string, verbose bool, stdin io.Reader, stdout, stderr io.Writer) int {
	rl := &fn.ResourceList{FunctionConfig: fn.NewEmptyKubeObject()}
	if configFile != "" {
		items, err := readYAML(configFile, nil)
		if err != nil || len(items) != 1 {
			if err == nil {
				err = fmt.Errorf("holds %d objects, want exactly one", len(items))
			}
			fmt.Fprintf(stderr, "jobset-flux: --config %s: %v\n", configFile, err)
			return exitUsage
		}
		rl.FunctionConfig = items[0]
	}
	if len(paths) == 0 {
		items, err := readYAML("<stdin>", stdin)
		if err != nil {
			fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
			return exitFailed
		}
		rl.Items = items
	}
	for _, p := range paths {
		files, err := yamlFiles(p)
		if err != nil {
			fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
			return exitUsage
		}
		for _, f := range files {
			items, err := readYAML(f, nil)
			if err != nil {
				fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
				return exitFailed
			}
			rl.Items = append(rl.Items, items...)
		}
	}
	ok, err := proc.Process(rl)
	printResults(stderr, rl.Results, verbose)
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
		return exitProblem
	}
	if !ok {
		return exitFailed
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

func yamlFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	var files []string
	for _, pattern := range []string{"*.yaml", "*.yml"} {
		m, err := filepath.Glob(filepath.Join(path, pattern))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	return files, nil
}

// readYAML reads the objects of a multi-document YAML file (or r when not nil).
func readYAML(name string, r io.Reader) (fn.KubeObjects, error) {
	if r == nil {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(data)
	}
	nodes, err := (&kio.ByteReader{Reader: r, OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return fn.MoveToKubeObjects(nodes), nil
}

// printResults writes errors and warnings (and infos when verbose) the way
// kpt prints them: [severity] apiVersion/Kind/[namespace/]name field: message.
func printResults(w io.Writer, results fn.Results, verbose bool) {
	for _, r := range results {
		if r.Severity == fn.Info && !verbose {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "[%s]", r.Severity)
		if ref := r.ResourceRef; ref != nil {
			b.WriteString(" " + ref.APIVersion + "/" + ref.Kind + "/")
			if ref.Namespace != "" {
				b.WriteString(ref.Namespace + "/")
			}
			b.WriteString(ref.Name)
		}
		if r.Field != nil && r.Field.Path != "" {
			b.WriteString(" " + r.Field.Path)
		}
		fmt.Fprintf(w, "%s\n", oneLine(b.String()+": "+r.Message))
	}
}

// oneLine keeps a result on one line: user text in a name, a path (an
// annotation key) or a message must not be able to start a line of its
// own, which could pass for another result. Control characters are
// written as Go escapes.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

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
		data, err := os.ReadFile(file)
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

// keygen writes a new CURVE certificate, or a Secret manifest holding one,
// for users who keep keys in SOPS, sealed secrets or an external store.
func keygen(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("jobset-flux keygen", flag.ContinueOnError)
	flags.SetOutput(stderr)
	name := flags.String("name", "jobset-flux", "metadata name written in the certificate")
	secretName := flags.String("secret", "", "write a Secret manifest of this name (e.g. <jobset>"+plan.SecretSuffix+") instead of the bare certificate")
	namespace := flags.String("namespace", "", "namespace of the Secret manifest")
	output := flags.String("o", "", "write to this file (created with mode 0600) instead of stdout")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "jobset-flux keygen: unexpected arguments %q\n", flags.Args())
		return exitUsage
	}
	for _, check := range []struct{ flag, value string }{{"--secret", *secretName}, {"--namespace", *namespace}} {
		if errs := validation.IsDNS1123Subdomain(check.value); check.value != "" && len(errs) > 0 {
			fmt.Fprintf(stderr, "jobset-flux keygen: %s %q is not a valid name: %s\n", check.flag, check.value, errs[0])
			return exitUsage
		}
	}
	keys, err := curve.Generate(rand.Reader)
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux keygen: %v\n", err)
		return exitProblem
	}
	cert, err := keys.Certificate(*name)
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux keygen: --name: %v\n", err)
		return exitUsage
	}
	out := cert
	if *secretName != "" {
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n", *secretName)
		if *namespace != "" {
			fmt.Fprintf(&b, "  namespace: %s\n", *namespace)
		}
		fmt.Fprintf(&b, "type: Opaque\ndata:\n  %s: %s\n", plan.CertKey, base64.StdEncoding.EncodeToString(cert))
		out = []byte(b.String())
	}
	if *output == "" {
		_, err = stdout.Write(out)
	} else {
		err = os.WriteFile(*output, out, 0o600)
	}
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux keygen: %v\n", err)
		return exitProblem
	}
	return exitOK
}
