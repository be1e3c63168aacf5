package yamltree

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// QuoteAmbiguous double-quotes plain string scalars that YAML 1.1 reads as
// something else (y, n, yes, on, 0x1f, ...). kubectl and the API server
// read YAML 1.1, so `command: [lmp, -v, y]` would reach them as a boolean;
// everything the function writes must mean the same to both readers.
func QuoteAmbiguous(n *yaml.Node) {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == yaml.NodeTagString && n.Style == 0 && mayBeYAML11NonString(n.Value) && yaml.IsYaml1_1NonString(n) {
			n.Style = yaml.DoubleQuotedStyle
		}
	case yaml.MappingNode:
		// Keys are field names and stay as written; values are checked.
		for i := 1; i < len(n.Content); i += 2 {
			QuoteAmbiguous(n.Content[i])
		}
	default:
		for _, c := range n.Content {
			QuoteAmbiguous(c)
		}
	}
}

// mayBeYAML11NonString is a cheap first look, because the full check
// parses the value with a YAML 1.1 decoder, which is costly to run on every
// string of every JobSet. Every YAML 1.1 boolean, null, number and
// timestamp starts with one of yaml11FirstBytes; a value that
// starts with a letter and holds only letters, digits and "-_./" is one
// plain scalar, which YAML 1.1 reads as a string unless it is one of its
// boolean or null words.
func mayBeYAML11NonString(v string) bool {
	switch {
	case v == "":
		return true
	case strings.IndexByte(yaml11FirstBytes, v[0]) < 0:
		return false
	case isLetter(v[0]) && strings.IndexFunc(v, notWordRune) < 0:
		return yaml11Words[v]
	}
	return true
}

// yaml11FirstBytes are the bytes a YAML 1.1 boolean, null, number or
// timestamp can start with.
const yaml11FirstBytes = "0123456789+-.~yYnNtTfFoO"

// yaml11Words are the plain scalars starting with a letter that YAML 1.1
// reads as a boolean or null.
var yaml11Words = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true,
	"true": true, "True": true, "TRUE": true, "false": true, "False": true, "FALSE": true,
	"on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true,
	"null": true, "Null": true, "NULL": true,
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func notWordRune(r rune) bool {
	return !(r < 0x80 && (isLetter(byte(r)) || '0' <= r && r <= '9' || strings.ContainsRune("-_./", r)))
}
