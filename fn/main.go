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
	"sort"
	"strconv"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/jobset-flux/jobset-flux/pkg/curve"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/transform"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
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
	if flags.NArg() > 0 {
		return runStandalone(proc, *configFile, flags.Args(), nil, *verbose, stdout, stderr)
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
	if *configFile == "" && !*verbose || isResourceList(in) {
		if *configFile != "" {
			fmt.Fprintf(stderr, "jobset-flux: --config is for plain YAML; a ResourceList on stdin carries its own functionConfig\n")
			return exitUsage
		}
		return runKRM(proc, in, *verbose, stdout, stderr)
	}
	return runStandalone(proc, *configFile, nil, in, *verbose, stdout, stderr)
}

// isResourceList reports whether the first YAML document of in is a map
// whose kind is ResourceList (whatever else is wrong with it: the KRM path
// says what).
func isResourceList(in []byte) bool {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(in)).Decode(&doc); err != nil || len(doc.Content) == 0 {
		return false
	}
	root := doc.Content[0]
	for i := 0; root.Kind == yaml.MappingNode && i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "kind" && root.Content[i+1].Value == kio.ResourceListKind {
			return true
		}
	}
	return false
}

// runKRM is the KRM function protocol: the ResourceList, with results, is
// always written; the exit code says whether there were errors; errors and
// warnings also go to stderr, because kustomize shows only stderr.
func runKRM(proc *transform.Processor, in []byte, verbose bool, stdout, stderr io.Writer) int {
	rl, err := resourcelist.Parse(in)
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux: %s; run without arguments only from kustomize or kpt (a ResourceList with kind: ResourceList, items: [...]), or pass files to render plain YAML\n", oneLine(clip(err.Error(), maxLine)))
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
	printResults(stderr, results, verbose)
	switch {
	case procErr != nil:
		fmt.Fprintf(stderr, "jobset-flux: %v\n", procErr)
		return exitProblem
	case !ok:
		return exitFailed
	}
	return exitOK
}

// runStandalone renders plain YAML files (or stdin, when paths is empty)
// and prints the result in input order, generated objects last.
func runStandalone(proc *transform.Processor, configFile string, paths []string, stdin []byte, verbose bool, stdout, stderr io.Writer) int {
	rl := &fn.ResourceList{FunctionConfig: fn.NewEmptyKubeObject()}
	if configFile != "" {
		data, err := readFile(configFile, maxConfigFile)
		if err != nil {
			fmt.Fprintf(stderr, "jobset-flux: --config: %v\n", err)
			return exitUsage
		}
		items, err := readYAML(configFile, data)
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
			data, err := readFile(f, maxInputFile)
			if err != nil {
				fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
				return exitUsage
			}
			items, err := readYAML(f, data)
			if err != nil {
				fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
				return exitFailed
			}
			rl.Items = append(rl.Items, items...)
		}
	}
	ok, err := proc.Process(rl)
	if code := reportOutcome(stderr, rl.Results, verbose, ok, err); code != exitOK {
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

// readYAML reads the objects of a multi-document YAML file.
func readYAML(name string, data []byte) (fn.KubeObjects, error) {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, n := range nodes {
		// As resourcelist.Parse does: {a} must not come out as an empty string.
		yamltree.SpellEmptyNulls(n.YNode())
	}
	return fn.MoveToKubeObjects(nodes), nil
}

// Bounds of the files the command reads. A seed is a few dozen bytes, a
// function config a few hundred; an input file may be a whole package.
const (
	maxSeedFile   = 4 << 10
	maxConfigFile = 1 << 20
	maxInputFile  = 256 << 20
)

// readFile reads a regular file of at most limit bytes. Anything else is
// refused before it is read: /dev/zero or /dev/urandom would be read until
// memory runs out, and a FIFO with no writer would block forever (it is
// opened without blocking, and refused once fstat shows what it is).
func readFile(name string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (it is a %s); give the path of a file", name, fileType(info.Mode()))
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes; at most %d are read", name, info.Size(), limit)
	}
	// The size can change between fstat and read: read one byte more than
	// allowed to tell.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is more than %d bytes; at most %d are read", name, limit, limit)
	}
	return data, nil
}

func fileType(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "FIFO"
	case m&os.ModeCharDevice != 0:
		return "character device"
	case m&os.ModeDevice != 0:
		return "device"
	case m&os.ModeSocket != 0:
		return "socket"
	case m.IsDir():
		return "directory"
	}
	return "special file"
}

// printResults writes errors and warnings (and infos when verbose) the way
// kpt prints them: [severity] apiVersion/Kind/[namespace/]name field: message.
// Every part that comes from the input is cut short: a name or an
// annotation key may be a megabyte long.
func printResults(w io.Writer, results fn.Results, verbose bool) {
	for _, r := range results {
		if r.Severity == fn.Info && !verbose {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "[%s]", r.Severity)
		if ref := r.ResourceRef; ref != nil {
			b.WriteString(" " + clip(ref.APIVersion, maxPart) + "/" + clip(ref.Kind, maxPart) + "/")
			if ref.Namespace != "" {
				b.WriteString(clip(ref.Namespace, maxPart) + "/")
			}
			b.WriteString(clip(ref.Name, maxPart))
		}
		if r.Field != nil && r.Field.Path != "" {
			b.WriteString(" " + clip(r.Field.Path, maxPart))
		}
		fmt.Fprintf(w, "%s\n", oneLine(b.String()+": "+clip(r.Message, maxLine)))
	}
}

// Lengths of what printResults shows of one part of a result, and of a
// message, in bytes.
const (
	maxPart = 256
	maxLine = 4096
)

// clip cuts s to at most n bytes (on a rune boundary), saying how long it was.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s...(%d bytes)", s[:cut], len(s))
}

// oneLine keeps a result on one line that reads as it is stored: user
// text in a name, a path (an annotation key) or a message must not be able
// to start a line of its own, which could pass for another result, nor
// reorder what a terminal shows. Every rune that is not printable (C0 and
// C1 controls, the line and paragraph separators U+2028 and U+2029, bidi
// controls such as U+202E, zero-width and other format characters, and
// invalid UTF-8) is written as a Go escape.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, hidden) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case hidden(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func hidden(r rune) bool { return r != ' ' && !unicode.IsPrint(r) }

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
		data, err := readFile(file, maxSeedFile)
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
