// Package itemscan finds the items of a ResourceList by byte offsets,
// without building a YAML tree of the whole list (issue 19, class 8).
//
// A ResourceList is one YAML document, and a YAML parser builds a tree of
// the whole document, several times the size of its text, before the
// first item can be read. The lists kustomize, kpt and Argo CD hand to a
// function are block-style YAML written by kyaml: top-level keys in
// column 0, and under items: a block sequence whose entries all start
// with "- " in one column. Scan recognises that shape line by line and
// returns where each item's text starts and ends, and the text of the
// rest of the list (the list without its items), so that each item can
// be parsed on its own.
//
// Scan proves the split safe or refuses it (ErrUnsafe, with the reason):
// it accepts only what it understands, and a caller that gets ErrUnsafe
// parses the whole list as before. It refuses, among others: flow style
// or JSON at the top, directives and document markers, comment lines
// where YAML attaches them across items (between or after items, at the
// top, at the end of an item or of the key before items), tabs or odd
// indentation at the start of a line, carriage returns, a key written
// twice at the top, and an items value that is not a block sequence.
// What the lines cannot show (anchors and aliases that cross items, tags,
// scalars spanning items) is for the caller to check on each item's tree:
// an item that does not parse alone, or parses to anything but one map,
// is not split.
package itemscan

import (
	"bytes"
	"errors"
	"fmt"
)

// ErrUnsafe is wrapped by every error of Scan: the list may be valid,
// but splitting it is not proven to read the same.
var ErrUnsafe = errors.New("the list cannot be split into items safely")

// Range is the byte range [Start, End) of one item's text in the input:
// from its "- " line to the next item's (blank lines at the end
// included).
type Range struct{ Start, End int }

// Split is where Scan found the items.
type Split struct {
	// Items are the items' ranges, in order.
	Items []Range
	// Column is where each item's "- " starts (0-based).
	Column int
	// Rest is the list without the items key and its value.
	Rest []byte
	// Tail is the text after the items (what follows the last one).
	Tail []byte
	// Keys are the top-level keys of Rest as the lines show them, in
	// order. A caller checks that a parser reads the same keys: a quoted
	// scalar that spans lines can hold a line that looks like a key.
	Keys []string
}

// line is one line of the input: [start, end) without its newline.
type line struct{ start, end int }

// Scan splits in (see the package comment).
func Scan(in []byte) (*Split, error) {
	s, err := scan(in)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsafe, err)
	}
	return s, nil
}

func scan(in []byte) (*Split, error) {
	if i := bytes.IndexByte(in, '\r'); i >= 0 {
		return nil, errors.New("it holds a carriage return")
	}
	lines := splitLines(in)
	seen := map[string]bool{}
	itemsAt, lastTop := -1, -1
	var split *Split
	var keys []string
	// inSequence: the key above has a block sequence in column 0 as its
	// value (kyaml writes results so), whose entries are no keys.
	inSequence := false
	for i := 0; i < len(lines); i++ {
		l := in[lines[i].start:lines[i].end]
		if isBlank(l) || l[0] == ' ' || inSequence && isEntry(l, 0) {
			continue
		}
		key, value, ok := topKey(l)
		if !ok {
			return nil, fmt.Errorf("line %d is not a top-level key of a block map", i+1)
		}
		if seen[key] {
			return nil, fmt.Errorf("the top-level key %q appears twice", key)
		}
		seen[key] = true
		inSequence = isBlank(value)
		if key != "items" {
			keys = append(keys, key)
			lastTop = i
			continue
		}
		if !isBlank(value) {
			return nil, fmt.Errorf("items is not followed by a block sequence on the next lines (line %d)", i+1)
		}
		if lastTop >= 0 && endsInComment(in, lines[lastTop+1:i]) {
			return nil, errors.New("a comment ends the key before items")
		}
		next, s, err := scanItems(in, lines, i+1)
		if err != nil {
			return nil, err
		}
		itemsAt, split = i, s
		split.Rest = rest(in, lines, itemsAt, next)
		i = next - 1
		inSequence = false
	}
	if split == nil {
		return nil, errors.New("it has no items key with a block sequence")
	}
	split.Keys = keys
	return split, nil
}

// rest is in without the lines [from, to).
func rest(in []byte, lines []line, from, to int) []byte {
	start := lines[from].start
	end := len(in)
	if to < len(lines) {
		end = lines[to].start
	}
	out := make([]byte, 0, len(in)-(end-start))
	out = append(out, in[:start]...)
	return append(out, in[end:]...)
}

// scanItems reads the block sequence that starts at line first and
// returns the index of the first line after it. Comment lines in the
// items' column or left of it right above an entry belong to that item
// (yaml.v3 reads them as its head comment; the first item also takes
// everything above it); other comment lines belong to the item they
// follow. The caller checks, by parsing each item between entries of its
// own, that yaml.v3 gave none of them to a neighbour.
func scanItems(in []byte, lines []line, first int) (int, *Split, error) {
	col := -1
	s := &Split{}
	i := first
	for ; i < len(lines); i++ {
		l := in[lines[i].start:lines[i].end]
		if isBlank(l) {
			continue
		}
		ind := indent(l)
		if l[ind] == '#' {
			continue
		}
		if col < 0 {
			if !isEntry(l, ind) {
				return 0, nil, fmt.Errorf("line %d: the first line of items is not an entry \"- \"", i+1)
			}
			col = ind
		}
		switch {
		case ind == 0 && !(col == 0 && isEntry(l, 0)):
			return finish(in, lines, s, col, first, i)
		case ind == col && isEntry(l, ind):
			s.Items = append(s.Items, Range{Start: lines[headStart(in, lines, first, i, col)].start})
		case ind <= col:
			return 0, nil, fmt.Errorf("line %d is indented %d, at or left of the items' column %d, and is not an entry", i+1, ind, col)
		}
	}
	return finish(in, lines, s, col, first, i)
}

// headStart is the first line of the item whose entry is line at: the
// comments right above it, in its column or left of it, which yaml.v3
// reads as its head comment (blank lines above them stay with the item
// before).
func headStart(in []byte, lines []line, first, at, col int) int {
	j := at
	for k := at - 1; k >= first; k-- {
		l := in[lines[k].start:lines[k].end]
		if isBlank(l) {
			continue
		}
		if ind := indent(l); l[ind] != '#' || ind > col {
			break
		}
		j = k
	}
	return j
}

// finish closes the items that end before line next; the first starts
// at line first.
func finish(in []byte, lines []line, s *Split, col, first, next int) (int, *Split, error) {
	if len(s.Items) == 0 {
		return 0, nil, errors.New("items has no entries")
	}
	end := len(in)
	if next < len(lines) {
		end = lines[next].start
	}
	s.Items[0].Start = lines[first].start
	for k := range s.Items {
		if k+1 < len(s.Items) {
			s.Items[k].End = s.Items[k+1].Start
		} else {
			s.Items[k].End = end
		}
	}
	s.Column = col
	s.Tail = in[end:]
	return next, s, nil
}

// endsInComment reports whether the last non-blank of lines is a
// comment: YAML attaches such a comment by what follows it, which a
// split changes.
func endsInComment(in []byte, lines []line) bool {
	for k := len(lines) - 1; k >= 0; k-- {
		l := in[lines[k].start:lines[k].end]
		if isBlank(l) {
			continue
		}
		return l[indent(l)] == '#'
	}
	return false
}

// splitLines returns the lines of in; a last line without a newline
// counts.
func splitLines(in []byte) []line {
	var out []line
	start := 0
	for start < len(in) {
		end := bytes.IndexByte(in[start:], '\n')
		if end < 0 {
			out = append(out, line{start, len(in)})
			break
		}
		out = append(out, line{start, start + end})
		start += end + 1
	}
	return out
}

// isBlank reports whether l holds only spaces.
func isBlank(l []byte) bool {
	return len(bytes.TrimLeft(l, " ")) == 0
}

// indent is the number of spaces l starts with.
func indent(l []byte) int {
	return len(l) - len(bytes.TrimLeft(l, " "))
}

// isEntry reports whether l is a sequence entry "- x" at column ind whose
// content does not start another sequence on that line. The content may
// be a comment: kyaml writes the head comment of an item (a package
// file's first lines) after its "- ".
func isEntry(l []byte, ind int) bool {
	r := l[ind:]
	if len(r) < 3 || r[0] != '-' || r[1] != ' ' {
		return false
	}
	c := bytes.TrimLeft(r[2:], " ")
	return len(c) > 0 && c[0] != '-' && len(r)-len(c) == 2
}

// topKey reads a top-level line "key:" or "key: value" whose key is a
// plain word; ok is false for anything else (comments, markers,
// directives, flow style, quoted or complex keys, tabs).
func topKey(l []byte) (key string, value []byte, ok bool) {
	i := 0
	for i < len(l) && isWordByte(l[i], i == 0) {
		i++
	}
	if i == 0 || i >= len(l) || l[i] != ':' {
		return "", nil, false
	}
	value = l[i+1:]
	if len(value) > 0 && value[0] != ' ' {
		return "", nil, false
	}
	return string(l[:i]), value, true
}

func isWordByte(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		return true
	case c >= '0' && c <= '9', c == '_':
		return !first
	}
	return false
}
