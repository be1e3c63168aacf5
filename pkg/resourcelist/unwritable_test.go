package resourcelist

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Issue 19, class 3: a string whose first line starts with a tab and that
// holds a line break, anywhere in the list, is written so that it reads
// back. In an item or the functionConfig (a block scalar the user wrote
// with an indentation indicator) the SDK wrote it as a literal block
// without one, which no reader accepts; in a result (the value of a
// refused annotation, or a result an earlier function left) the SDK
// failed, and the function wrote nothing and exited 3.
func TestEncodeUnwritableStrings(t *testing.T) {
	const tab = "\techo hi\n\tthere"
	in := []byte(`apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: a}
  data:
    literal: |2-
      	echo hi
      	there
    folded: >2-
      	echo hi
      	there
functionConfig:
  apiVersion: v1
  kind: ConfigMap
  metadata: {name: f}
  data:
    k: |2-
      	echo hi
      	there
`)
	rl, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	rl.Results = fn.Results{
		{Message: tab, Severity: fn.Error, ResourceRef: &fn.ResourceRef{APIVersion: "v1", Kind: "ConfigMap", Name: tab},
			Field: &fn.Field{Path: tab, CurrentValue: tab, ProposedValue: map[string]any{"k": []any{tab, 1, "jobset-flux-placeholder-0"}}},
			File:  &fn.File{Path: tab, Index: 2}, Tags: map[string]string{"t": tab}},
		{Message: "plain", Severity: fn.Info},
	}
	out, err := Encode(rl)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	back, err := Parse(out)
	if err != nil {
		t.Fatalf("the output does not read back: %v\n%s", err, out)
	}
	data := back.Items[0].GetMap("data")
	for _, k := range []string{"literal", "folded"} {
		if v, _, _ := data.NestedString(k); v != "\techo hi\n\tthere" {
			t.Errorf("data.%s reads back as %q", k, v)
		}
	}
	if v, _, _ := back.FunctionConfig.NestedString("data", "k"); v != "\techo hi\n\tthere" {
		t.Errorf("the functionConfig's value reads back as %q", v)
	}
	if !reflect.DeepEqual(back.Results, rl.Results) {
		t.Errorf("the results read back differently:\n%s", out)
	}
	if strings.Contains(string(out), "placeholder-1") {
		t.Errorf("a placeholder was left in the output:\n%s", out)
	}
}

// Results that can be written as the SDK writes them are: the same bytes.
func TestEncodeResultsAsSDK(t *testing.T) {
	res := fn.Results{{Message: "a\nb", Severity: fn.Warning, Field: &fn.Field{Path: "x", CurrentValue: " lead\nx"}}}
	rl := &fn.ResourceList{FunctionConfig: fn.NewEmptyKubeObject(), Results: res}
	got, err := Encode(rl)
	if err != nil {
		t.Fatal(err)
	}
	want, err := (&fn.ResourceList{FunctionConfig: fn.NewEmptyKubeObject(), Results: res}).ToYAML()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestWriteUnwritableStrings: Write, the KRM path's writer, writes the
// list of TestEncodeUnwritableStrings as Encode does; it encodes results
// one at a time, and each needs Encode's placeholders too.
func TestWriteUnwritableStrings(t *testing.T) {
	const tab = "\techo hi\n\tthere"
	list := func() *fn.ResourceList {
		rl, err := Parse([]byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"))
		if err != nil {
			t.Fatal(err)
		}
		rl.Results = fn.Results{
			{Message: "plain", Severity: fn.Info},
			{Message: tab, Severity: fn.Error, Field: &fn.Field{Path: tab, CurrentValue: tab}, Tags: map[string]string{"t": tab}},
		}
		return rl
	}
	want, err := Encode(list())
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	var got bytes.Buffer
	if err := Write(&got, list()); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("Write wrote\n%s\nEncode wrote\n%s", got.Bytes(), want)
	}
	back, err := Parse(got.Bytes())
	if err != nil {
		t.Fatalf("Write's output does not read back: %v\n%s", err, got.Bytes())
	}
	if !reflect.DeepEqual(back.Results, list().Results) {
		t.Errorf("the results read back differently:\n%s", got.Bytes())
	}
}

// TestEveryOutputIsSafe: the writer alone makes every output readable.
// An item and a functionConfig holding block scalars that no reader can
// read as they are (a tab first, written with an indentation
// indicator), handed straight to each path that writes a list or a
// stream, with nothing done to them before, read back as the same text:
// Encode, Write, a MemorySink, a SpoolSink with and without its file,
// and a plain YAML stream.
func TestEveryOutputIsSafe(t *testing.T) {
	const tab = "\techo hi\n\tthere"
	const in = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: b}
  data:
    literal: |2-
      	echo hi
      	there
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: a}
  data:
    folded: >2-
      	echo hi
      	there
functionConfig:
  apiVersion: v1
  kind: ConfigMap
  metadata: {name: f}
  data:
    literal: |2-
      	echo hi
      	there
`
	parse := func(t *testing.T) *fn.ResourceList {
		t.Helper()
		rl, err := Parse([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		return rl
	}
	viaSink := func(s Sink) func(*testing.T) []byte {
		return func(t *testing.T) []byte {
			rl := parse(t)
			rc := NewMetaReader(nil)
			for i, it := range rl.Items {
				s.Put(i, rc.Read(it), it)
			}
			var out bytes.Buffer
			if err := s.Write(&out, rl.FunctionConfig, nil); err != nil {
				t.Fatal(err)
			}
			return out.Bytes()
		}
	}
	spool, err := NewSpool()
	if err != nil {
		t.Fatal(err)
	}
	lists := map[string]func(*testing.T) []byte{
		"Encode": func(t *testing.T) []byte {
			out, err := Encode(parse(t))
			if err != nil {
				t.Fatal(err)
			}
			return out
		},
		"Write": func(t *testing.T) []byte {
			var out bytes.Buffer
			if err := Write(&out, parse(t)); err != nil {
				t.Fatal(err)
			}
			return out.Bytes()
		},
		"MemorySink":           viaSink(NewMemorySink()),
		"SpoolSink in memory":  viaSink(NewSpoolSink(nil)),
		"SpoolSink with spool": viaSink(NewSpoolSink(spool)),
	}
	check := func(t *testing.T, items fn.KubeObjects) {
		t.Helper()
		if len(items) != 2 {
			t.Fatalf("%d items read back, want 2", len(items))
		}
		for _, it := range items {
			for _, k := range []string{"literal", "folded"} {
				if v, found, _ := it.NestedString("data", k); found && v != tab {
					t.Errorf("%s data.%s reads back as %q, want %q", it.GetName(), k, v, tab)
				}
			}
		}
	}
	for name, write := range lists {
		t.Run(name, func(t *testing.T) {
			out := write(t)
			back, err := Parse(out)
			if err != nil {
				t.Fatalf("the output does not read back: %v\n%s", err, out)
			}
			check(t, back.Items)
			if v, _, _ := back.FunctionConfig.NestedString("data", "literal"); v != tab {
				t.Errorf("the functionConfig's value reads back as %q\n%s", v, out)
			}
		})
	}
	t.Run("WriteStream", func(t *testing.T) {
		var out bytes.Buffer
		if err := WriteStream(&out, parse(t).Items); err != nil {
			t.Fatal(err)
		}
		back, err := Objects("stream", out.Bytes())
		if err != nil {
			t.Fatalf("the stream does not read back: %v\n%s", err, out.Bytes())
		}
		check(t, back)
	})
}
