package translate

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// protoMap renders a protobuf message as the value encoding/json gives
// when it decodes protojson's rendering of it (numbers float64, 64-bit
// integers strings, enums by name, well-known types in their JSON form),
// without the text in between: walking the message once instead of
// writing JSON in protobuf's field order and parsing it back was most of
// engine.Plan's cost (docs/performance.md). TestProtoMapIsProtojson
// compares the two on every object of a generated fleet.
//
// A message it does not render as protojson would (google.protobuf.Any,
// Timestamp, FieldMask and other well-known types the Istio kinds this
// provider writes do not use, or a value protojson refuses) is
// errProtoFallback: the caller renders that object through protojson.
func protoMap(m protoreflect.Message) (map[string]any, error) {
	if wkt, ok := wellKnown(m); ok {
		return nil, fmt.Errorf("%w: %s at the top", errProtoFallback, wkt)
	}
	return messageMap(m)
}

var errProtoFallback = errors.New("not rendered without protojson")

// wellKnown names a message protojson renders other than as an object of
// its fields.
func wellKnown(m protoreflect.Message) (protoreflect.FullName, bool) {
	name := m.Descriptor().FullName()
	return name, name.Parent() == "google.protobuf" && name.Name() != "Empty"
}

func messageMap(m protoreflect.Message) (map[string]any, error) {
	out := map[string]any{}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.IsExtension() {
			err = fmt.Errorf("%w: extension %s", errProtoFallback, fd.FullName())
			return false
		}
		var x any
		x, err = fieldValue(fd, v)
		if err != nil {
			return false
		}
		out[fd.JSONName()] = x
		return true
	})
	return out, err
}

func fieldValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) (any, error) {
	switch {
	case fd.IsList():
		l := v.List()
		out := make([]any, l.Len())
		for i := range l.Len() {
			x, err := singular(fd, l.Get(i))
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case fd.IsMap():
		out := map[string]any{}
		var err error
		v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
			var x any
			if x, err = singular(fd.MapValue(), mv); err != nil {
				return false
			}
			out[k.String()] = x
			return true
		})
		return out, err
	}
	return singular(fd, v)
}

// singular is one value of a field (an element of a list, a map's value).
func singular(fd protoreflect.FieldDescriptor, v protoreflect.Value) (any, error) {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return v.Bool(), nil
	case protoreflect.StringKind:
		return v.String(), nil
	case protoreflect.BytesKind:
		return base64.StdEncoding.EncodeToString(v.Bytes()), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return float64(v.Int()), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return float64(v.Uint()), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return strconv.FormatInt(v.Int(), 10), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return strconv.FormatUint(v.Uint(), 10), nil
	case protoreflect.FloatKind:
		return floatValue(v.Float(), 32)
	case protoreflect.DoubleKind:
		return floatValue(v.Float(), 64)
	case protoreflect.EnumKind:
		if fd.Enum().FullName() == "google.protobuf.NullValue" {
			return nil, nil
		}
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name()), nil
		}
		return float64(v.Enum()), nil
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return messageValue(v.Message())
	}
	return nil, fmt.Errorf("%w: field %s of kind %s", errProtoFallback, fd.FullName(), fd.Kind())
}

// floatValue is a float as protojson writes it (with the precision of
// its bit size) and encoding/json reads it back.
func floatValue(f float64, bits int) (any, error) {
	switch {
	case math.IsNaN(f):
		return "NaN", nil
	case math.IsInf(f, 1):
		return "Infinity", nil
	case math.IsInf(f, -1):
		return "-Infinity", nil
	}
	if bits == 64 {
		return f, nil
	}
	return strconv.ParseFloat(strconv.FormatFloat(f, 'g', -1, 32), 64)
}

// messageValue is a message field's value: the well-known types protojson
// writes in their JSON form, any other message as an object.
func messageValue(m protoreflect.Message) (any, error) {
	name, ok := wellKnown(m)
	if !ok {
		return messageMap(m)
	}
	fields := m.Descriptor().Fields()
	switch name.Name() {
	case "DoubleValue", "FloatValue", "Int64Value", "UInt64Value", "Int32Value", "UInt32Value", "BoolValue", "StringValue", "BytesValue":
		fd := fields.ByName("value")
		return singular(fd, m.Get(fd))
	case "Duration":
		return durationValue(m.Get(fields.ByName("seconds")).Int(), m.Get(fields.ByName("nanos")).Int())
	case "Struct":
		return fieldValue(fields.ByName("fields"), m.Get(fields.ByName("fields")))
	case "ListValue":
		return fieldValue(fields.ByName("values"), m.Get(fields.ByName("values")))
	case "Value":
		od := m.WhichOneof(m.Descriptor().Oneofs().ByName("kind"))
		if od == nil {
			return nil, fmt.Errorf("%w: a google.protobuf.Value with no kind set (protojson refuses it)", errProtoFallback)
		}
		if od.Kind() == protoreflect.DoubleKind {
			if f := m.Get(od).Float(); math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("%w: a google.protobuf.Value of %v (protojson refuses it)", errProtoFallback, f)
			}
		}
		return singular(od, m.Get(od))
	}
	return nil, fmt.Errorf("%w: %s", errProtoFallback, name)
}

// durationValue is a google.protobuf.Duration as protojson writes it:
// seconds with 0, 3, 6 or 9 fractional digits, and "s".
func durationValue(secs, nanos int64) (any, error) {
	const maxSecs = 315576000000
	if secs < -maxSecs || secs > maxSecs || nanos <= -1e9 || nanos >= 1e9 || (secs > 0 && nanos < 0) || (secs < 0 && nanos > 0) {
		return nil, fmt.Errorf("%w: a duration out of range (protojson refuses it)", errProtoFallback)
	}
	sign := ""
	if secs < 0 || nanos < 0 {
		sign, secs, nanos = "-", -secs, -nanos
	}
	x := fmt.Sprintf("%s%d.%09d", sign, secs, nanos)
	x = strings.TrimSuffix(x, "000")
	x = strings.TrimSuffix(x, "000")
	x = strings.TrimSuffix(x, ".000")
	return x + "s", nil
}
