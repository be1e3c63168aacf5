package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// The block of a Markdown file that the benchmark rewrites.
const (
	docBegin = "<!-- startbench:begin -->"
	docEnd   = "<!-- startbench:end -->"
)

// header says what was measured: the command, the commit, the time.
func header(o *options, started time.Time) string {
	commit := "unknown"
	if out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
	}
	sizes := make([]string, len(o.sizes))
	for i, n := range o.sizes {
		sizes[i] = fmt.Sprint(n)
	}
	kept := ""
	if o.keep != "" {
		kept = " The other pod counts were measured by an earlier run of the same command and kept (`-keep`); each table says how many runs it has."
	}
	return fmt.Sprintf("Measured at commit `%s`, %s UTC, with `make bench-kube` (`startbench -sizes %s -runs %d`).%s "+
		"Times are seconds from the start of `kubectl apply`: median (min-max).\n\n",
		commit, started.UTC().Format("2006-01-02 15:04"), strings.Join(sizes, ","), o.runs, kept)
}

// replaceBlock puts body between the begin and end markers of doc.
func replaceBlock(doc []byte, body string) ([]byte, error) {
	i := bytes.Index(doc, []byte(docBegin))
	j := bytes.Index(doc, []byte(docEnd))
	if i < 0 || j < i {
		return nil, fmt.Errorf("no %s ... %s block", docBegin, docEnd)
	}
	var out bytes.Buffer
	out.Write(doc[:i+len(docBegin)])
	out.WriteString("\n" + body)
	out.Write(doc[j:])
	return out.Bytes(), nil
}

// updateDoc rewrites the startbench block of a Markdown file.
func updateDoc(path, body string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	out, err := replaceBlock(doc, body)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Fprintf(os.Stderr, "startbench: wrote the tables into %s\n", path)
	return nil
}
