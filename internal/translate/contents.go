package translate

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Contents numbers translated objects by content, their cluster aside:
// two objects get the same number when they render to the same manifest
// (Object.Manifest), and objects with different numbers may still render
// alike (the number is exact for equal content, never shared by different
// content). engine.Plan renders, canonicalises and digests each number
// once: the translator gives client clusters that see the same backends
// objects equal in all but their cluster, often sharing their protobuf
// parts (docs/performance.md).
//
// A protobuf message is numbered by its type and fields, each field by
// its value (a message field by the message's number), so content shared
// by pointer is read once: a message already numbered is found by its
// address. That is sound because translated objects are never changed
// after translation, and a Contents lives for one plan. The zero value is
// ready to use; a Contents is not safe for concurrent use.
type Contents struct {
	// byMessage numbers the messages read, by address.
	byMessage map[protoreflect.ProtoMessage]uint64
	// byKey numbers the contents seen: a message's or an object's
	// encoding (see ID).
	byKey map[string]uint64
	buf   []byte
}

// ID returns the number of o's content, and false when o is not numbered
// (content this does not read: an extension field, a spec that renders
// itself but is not a protobuf message, an object that does not encode);
// the caller then renders o on its own.
//
// An object's key is its type (apiVersion, kind), name, namespace, labels
// and annotations, and its spec's type and number: what Object.manifest
// reads. An object without a spec (a record's ConfigMap) is keyed by its
// JSON, from which manifestByJSON renders it.
func (c *Contents) ID(o Object) (uint64, bool) {
	if c.byKey == nil {
		c.byKey = map[string]uint64{}
		c.byMessage = map[protoreflect.ProtoMessage]uint64{}
	}
	b := c.buf[:0]
	spec, hasSpec := specOf(o.Resource)
	tm, typed := o.Resource.GetObjectKind().(*metav1.TypeMeta)
	pm, isProto := spec.(proto.Message)
	if hasSpec && typed && !isProto {
		return 0, false // a spec rendered by its own MarshalJSON: not read here
	}
	if !hasSpec || !typed {
		raw, err := json.Marshal(o.Resource)
		if err != nil {
			return 0, false
		}
		b = append(b, 'j')
		b = append(b, raw...)
		return c.intern(b), true
	}
	b = append(b, 'o')
	b = appendStrings(b, tm.APIVersion, tm.Kind, o.Resource.GetName(), o.Resource.GetNamespace())
	b = appendStringMap(b, o.Resource.GetLabels())
	b = appendStringMap(b, o.Resource.GetAnnotations())
	// The spec is numbered after the buffer holding this object's key:
	// messages append their own encodings to it and truncate it back.
	c.buf = b
	id, ok := c.message(pm.ProtoReflect())
	b = c.buf
	if !ok {
		return 0, false
	}
	b = binary.AppendUvarint(b, id)
	return c.intern(b), true
}

// intern numbers the key b (and keeps b's storage as the scratch buffer).
func (c *Contents) intern(b []byte) uint64 {
	c.buf = b[:0]
	if id, ok := c.byKey[string(b)]; ok {
		return id
	}
	id := uint64(len(c.byKey) + 1)
	c.byKey[string(b)] = id
	return id
}

// message numbers m. Its encoding is its full name, then each populated
// field's number and value, appended at the end of c.buf and removed once
// numbered; fields are encoded in the order Range gives them, so equal
// contents may encode differently only if that order changed between two
// messages of one type (then they are numbered apart: shared less, never
// wrongly).
func (c *Contents) message(m protoreflect.Message) (uint64, bool) {
	if !m.IsValid() {
		// A nil message renders as an absent field; it has no fields.
		return 0, true
	}
	addr := m.Interface()
	byAddress := reflect.TypeOf(addr).Kind() == reflect.Pointer
	if byAddress {
		if id, ok := c.byMessage[addr]; ok {
			return id, true
		}
	}
	start := len(c.buf)
	c.buf = append(c.buf, 'm')
	c.buf = appendStrings(c.buf, string(m.Descriptor().FullName()))
	ok := true
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.IsExtension() {
			ok = false
			return false
		}
		c.buf = binary.AppendUvarint(c.buf, uint64(fd.Number()))
		ok = c.field(fd, v)
		return ok
	})
	if !ok {
		c.buf = c.buf[:start]
		return 0, false
	}
	key := c.buf[start:]
	id, found := c.byKey[string(key)]
	if !found {
		id = uint64(len(c.byKey) + 1)
		c.byKey[string(key)] = id
	}
	c.buf = c.buf[:start]
	if byAddress {
		c.byMessage[addr] = id
	}
	return id, true
}

// field appends a populated field's value: a list's length and elements,
// a map's length and entries in key order, or one value.
func (c *Contents) field(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
	switch {
	case fd.IsList():
		l := v.List()
		c.buf = binary.AppendUvarint(c.buf, uint64(l.Len()))
		for i := range l.Len() {
			if !c.singular(fd, l.Get(i)) {
				return false
			}
		}
		return true
	case fd.IsMap():
		mp := v.Map()
		keys := make([]protoreflect.MapKey, 0, mp.Len())
		mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
			keys = append(keys, k)
			return true
		})
		kind := fd.MapKey().Kind()
		slices.SortFunc(keys, func(a, b protoreflect.MapKey) int { return compareMapKeys(kind, a, b) })
		c.buf = binary.AppendUvarint(c.buf, uint64(len(keys)))
		for _, k := range keys {
			if !c.singular(fd.MapKey(), k.Value()) || !c.singular(fd.MapValue(), mp.Get(k)) {
				return false
			}
		}
		return true
	}
	return c.singular(fd, v)
}

// compareMapKeys orders map keys of one kind (kind: strings, booleans,
// signed or unsigned integers).
func compareMapKeys(kind protoreflect.Kind, a, b protoreflect.MapKey) int {
	switch kind {
	case protoreflect.StringKind:
		return strings.Compare(a.String(), b.String())
	case protoreflect.BoolKind:
		x, y := a.Bool(), b.Bool()
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return cmp.Compare(a.Int(), b.Int())
	}
	return cmp.Compare(a.Uint(), b.Uint())
}

// singular appends one value of fd's kind: fixed-size numbers and
// booleans, length-prefixed strings and bytes, a message's number.
func (c *Contents) singular(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		if v.Bool() {
			c.buf = append(c.buf, 1)
		} else {
			c.buf = append(c.buf, 0)
		}
	case protoreflect.StringKind:
		c.buf = appendStrings(c.buf, v.String())
	case protoreflect.BytesKind:
		c.buf = binary.AppendUvarint(c.buf, uint64(len(v.Bytes())))
		c.buf = append(c.buf, v.Bytes()...)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		c.buf = binary.LittleEndian.AppendUint64(c.buf, uint64(v.Int()))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		c.buf = binary.LittleEndian.AppendUint64(c.buf, v.Uint())
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		c.buf = binary.LittleEndian.AppendUint64(c.buf, math.Float64bits(v.Float()))
	case protoreflect.EnumKind:
		c.buf = binary.LittleEndian.AppendUint64(c.buf, uint64(v.Enum()))
	case protoreflect.MessageKind, protoreflect.GroupKind:
		id, ok := c.message(v.Message())
		if !ok {
			return false
		}
		c.buf = binary.AppendUvarint(c.buf, id)
	default:
		return false
	}
	return true
}

// appendStrings appends each string with its length.
func appendStrings(b []byte, ss ...string) []byte {
	for _, s := range ss {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// appendStringMap appends m's size and its entries in key order.
func appendStringMap(b []byte, m map[string]string) []byte {
	b = binary.AppendUvarint(b, uint64(len(m)))
	if len(m) == 0 {
		return b
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = appendStrings(b, k, m[k])
	}
	return b
}
