package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/jobsetrender"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// usageLines are the command's forms, printed by --help and after a
// usage error.
const usageLines = `Usage:
  jobset-flux                          run as a KRM function (kpt, kustomize): ResourceList on stdin and stdout
  jobset-flux [flags] FILE|DIR ...     render plain YAML files; the rendered stream on stdout
  jobset-flux [flags] -                render the plain YAML stream on stdin (a Helm post-renderer)
  jobset-flux keygen [flags]           write a CURVE certificate or Secret
  jobset-flux version                  print version information
  jobset-flux --help                   this text: every setting and an example
`

// helpIntro says what the function does, above the usage.
const helpIntro = `jobset-flux renders JobSets (jobset.x-k8s.io/v1alpha2) annotated
flux-framework.org/enabled: "true" so that every pod runs a Flux Framework
broker (the HPC resource manager), and adds the ConfigMap and CURVE Secret
the brokers need.

`

// helpExample is the --help example: the same JobSet through each tool.
const helpExample = `Example:
  # A JobSet marked for Flux, with one setting of its own.
  metadata:
    annotations:
      flux-framework.org/enabled: "true"
      flux-framework.org/tasks-per-node: "4"

  kpt fn eval PKG --exec jobset-flux
  kustomize build --enable-alpha-plugins --enable-exec DIR   (jobset-flux under transformers:)
  jobset-flux --config flux.yaml jobset.yaml > rendered.yaml
  helm template REL CHART --post-renderer jobset-flux --post-renderer-args -    (Helm 3)
  helm template REL CHART --post-renderer jobset-flux                           (Helm 4 plugin)

Give the same secret key seed (--key-seed-file, ` + jobsetrender.SeedFileEnv + ` or
` + jobsetrender.SeedEnv + `) to every render of a JobSet, so the CURVE key, and
with it the pods, stay the same from one render to the next.
`

// printHelp writes --help: what the function does, its forms and flags,
// every setting (from the settings table, so it is never out of date)
// and an example. kpt fn doc shows it: it runs the image with --help and
// prints its stdout.
func printHelp(w io.Writer, flags *flag.FlagSet) {
	io.WriteString(w, helpIntro)
	printUsage(w, flags)
	fmt.Fprintf(w, "\nEnvironment:\n  %s, %s\n        the key seed, when --key-seed-file is not given\n  %s\n        the input limit, when --max-input is not given\n",
		jobsetrender.SeedEnv, jobsetrender.SeedFileEnv, MaxInputEnv)
	io.WriteString(w, "\n")
	printSettings(w)
	io.WriteString(w, "\n"+helpExample)
}

// printUsage writes the command's forms and flags.
func printUsage(w io.Writer, flags *flag.FlagSet) {
	io.WriteString(w, usageLines+"\nFlags:\n")
	flags.SetOutput(w)
	flags.PrintDefaults()
}

// printSettings writes every setting: its annotation, its JobSetFlux
// field and type, its default and its meaning.
func printSettings(w io.Writer) {
	fmt.Fprintf(w, "Settings: the annotation %sNAME on a JobSet, the key NAME of\na ConfigMap config, or the spec field FIELD of a JobSetFlux config\n(fn.flux-framework.org/v1alpha1):\n", settings.AnnotationPrefix)
	for _, row := range settings.Table() {
		fmt.Fprintf(w, "  %s (%s, %s; default: %s)\n", row.Name, row.Field, typeName(row.Type), plain(row.DefaultText()))
		for _, line := range wrap(plain(row.Doc), 72) {
			fmt.Fprintf(w, "        %s\n", line)
		}
	}
}

// typeName is a field's type as a config writes it.
func typeName(t settings.Type) string {
	if t.JSON == "array" {
		return "list of strings"
	}
	return t.JSON
}

// plain drops the Markdown code marks of a settings text: a terminal
// shows them as noise.
func plain(doc string) string {
	return strings.ReplaceAll(doc, "`", "")
}

// wrap splits text into lines of at most width bytes, at spaces; a word
// longer than width is a line of its own.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) > width:
			lines = append(lines, line)
			line = word
		default:
			line += " " + word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
