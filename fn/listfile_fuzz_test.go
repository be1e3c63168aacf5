package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
)

// FuzzListFileAsStdin (issue 19, class 6): any input whose first document
// is a ResourceList is answered from a file exactly as from stdin: exit
// code, stdout and stderr.
func FuzzListFileAsStdin(f *testing.F) {
	for _, in := range listCases() {
		f.Add(in)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) > 1<<16 || !resourcelist.IsResourceList([]byte(in)) {
			return
		}
		file := filepath.Join(dir, "list.yaml")
		if err := os.WriteFile(file, []byte(in), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errs := runFn(t, nil, in)
		fcode, fout, ferrs := runFn(t, []string{file}, "")
		if fcode != code || fout != out || ferrs != errs {
			t.Fatalf("from the file: exit %d, stdout %q, stderr %q\nfrom stdin: exit %d, stdout %q, stderr %q", fcode, fout, ferrs, code, out, errs)
		}
	})
}
