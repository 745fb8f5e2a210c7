package virtualdestination

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// Keys of a virtual destination's record.
const (
	RecordHostnameKey = "hostname"
	RecordIntentKey   = "intent"
	RecordFormatKey   = "format"
)

// RecordFormat is the format version of the records this build writes,
// and the newest it reads. Version 1 is the intent as JSON under
// RecordIntentKey, without RecordFormatKey (records of earlier builds are
// the same: a record without the key is version 1). A build that changes what
// a record holds in a way older builds would misread (a new field that
// changes where traffic goes) bumps it, so that older builds refuse the
// record instead of resolving the hostname without that field.
const RecordFormat = 1

// recordData is a record's data. Version 1 is written without
// RecordFormatKey, as every earlier build wrote it, so that records (and
// their digests in state) do not change for it; later versions name
// themselves.
func recordData(hostname, intent string) map[string]string {
	data := map[string]string{RecordHostnameKey: hostname, RecordIntentKey: intent}
	if RecordFormat > 1 {
		data[RecordFormatKey] = strconv.Itoa(RecordFormat)
	}
	return data
}

// RecordFormatError is DecodeRecord's error for a record this build does
// not read: a newer format version, or a field it does not know (written
// by a newer build). Such a record is not resolved, nor ignored: the
// policy that needs it fails naming the upgrade.
type RecordFormatError struct {
	Version int
	// Unknown is the unknown field found, if that is the reason.
	Unknown string
}

func (e *RecordFormatError) Error() string {
	if e.Unknown != "" {
		return fmt.Sprintf("it is in record format version %d and has a field this provider does not know (%s): it was written by a newer terraform-provider-mesh; upgrade this provider to read it", e.Version, e.Unknown)
	}
	return fmt.Sprintf("it is in record format version %d, and this provider reads versions up to %d: it was written by a newer terraform-provider-mesh; upgrade this provider to read it", e.Version, RecordFormat)
}

// DecodeRecord reads a record's intent (RecordIntentKey) in format
// version format (RecordFormatKey, "" for records of builds before it),
// strictly: known fields only, one JSON object, and no data keys besides
// hostname, intent and format (extra: the others the record has, which
// only a newer build writes). (Its values are not
// checked again: a later build that tightens validation must not stop
// resolving the records an earlier one wrote.) A newer version or an unknown field is a
// *RecordFormatError; anything else that does not decode is an error
// saying what is wrong.
func DecodeRecord(format, raw string, extra []string) (Intent, error) {
	var in Intent
	version := 1
	if format != "" {
		v, err := strconv.Atoi(format)
		if err != nil || v < 1 {
			return in, fmt.Errorf("its format %q is not a record format version", format)
		}
		version = v
	}
	if version > RecordFormat {
		return in, &RecordFormatError{Version: version}
	}
	if len(extra) > 0 {
		return in, &RecordFormatError{Version: version, Unknown: fmt.Sprintf("data key %q", extra[0])}
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return Intent{}, &RecordFormatError{Version: version, Unknown: "unknown field " + field}
		}
		return Intent{}, fmt.Errorf("it is not a virtual destination's record: %v", err)
	}
	if dec.More() {
		return Intent{}, errors.New("it has content after the virtual destination's intent")
	}
	return in, nil
}

// DefaultRecordsNamespace is where records live unless the provider's
// records_namespace says otherwise: a namespace of their own, so that the
// provider needs ConfigMap access there only.
const DefaultRecordsNamespace = "mesh-intent-records"

// WithRecords adds to a virtual destination's objects its record: a
// ConfigMap named like its other objects, in the records namespace of every
// cluster where it has objects, holding the intent. Traffic and access
// policies planned when the virtual destination is not (Terraform re-plans
// only changed resources during apply, and another state may own it) read
// it there, and only there.
func WithRecords(in Intent, objs []translate.Object, recordsNamespace string) ([]translate.Object, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	ns := recordsNamespace
	if ns == "" {
		ns = DefaultRecordsNamespace
	}
	seen := map[string]bool{}
	out := append([]translate.Object(nil), objs...)
	for _, o := range objs {
		if seen[o.Cluster] {
			continue
		}
		seen[o.Cluster] = true
		out = append(out, translate.Object{Cluster: o.Cluster, Resource: &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: ObjectName(in.Name), Namespace: ns},
			Data:       recordData(in.Hostname, string(raw)),
		}})
	}
	translate.Sort(out)
	return out, nil
}
