package translate

import (
	"fmt"
	"strconv"
	"strings"
)

// Path is an attribute path inside one intent, built with Attr, Index and
// Key: Root("backends").Index(1).Attr("cluster") reads backends[1].cluster.
// The provider turns it into a Terraform attribute path.
type Path []PathStep

// PathStep is one step of a Path: exactly one of its fields is set.
type PathStep struct {
	Attr  string
	Index *int
	Key   *string
}

// Root starts a path at a top-level attribute.
func Root(attr string) Path { return Path{{Attr: attr}} }

// Attr appends a nested attribute.
func (p Path) Attr(name string) Path { return append(p[:len(p):len(p)], PathStep{Attr: name}) }

// Index appends a list index.
func (p Path) Index(i int) Path { return append(p[:len(p):len(p)], PathStep{Index: &i}) }

// Key appends a map key.
func (p Path) Key(k string) Path { return append(p[:len(p):len(p)], PathStep{Key: &k}) }

func (p Path) String() string {
	var b strings.Builder
	for _, s := range p {
		switch {
		case s.Index != nil:
			b.WriteString("[" + strconv.Itoa(*s.Index) + "]")
		case s.Key != nil:
			b.WriteString("[" + strconv.Quote(*s.Key) + "]")
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Attr)
		}
	}
	return b.String()
}

// Error is a translation error tied to the attribute that caused it.
type Error struct {
	Path    Path
	Summary string
	Detail  string
}

func (e *Error) Error() string {
	if len(e.Path) == 0 {
		return e.Summary + ": " + e.Detail
	}
	return e.Path.String() + ": " + e.Summary + ": " + e.Detail
}

// Errorf builds an Error whose detail is formatted.
func Errorf(at Path, summary, format string, args ...any) *Error {
	return &Error{Path: at, Summary: summary, Detail: fmt.Sprintf(format, args...)}
}

// Errors collects every problem found in one intent, so a user sees all of
// them in one plan rather than one per run.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// Err returns nil when there are no errors.
func (es Errors) Err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// Add appends err when it is not nil; an Errors value is flattened.
func (es *Errors) Add(err error) {
	switch e := err.(type) {
	case nil:
	case *Error:
		*es = append(*es, e)
	case Errors:
		*es = append(*es, e...)
	default:
		*es = append(*es, &Error{Summary: "Translation failed", Detail: err.Error()})
	}
}
