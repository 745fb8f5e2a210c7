package engine

import (
	"context"

	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// The engine logs each decision at DEBUG through tflog, so `TF_LOG=DEBUG
// terraform apply` shows, per cluster and object, what was written,
// pruned, kept or refused and why. Only identities and decisions are
// logged: never manifests, annotations, connection settings or
// credentials.

func logEntry(ctx context.Context, msg string, owner Owner, e Entry, extra ...any) {
	fields := map[string]any{"owner": owner.String(), "cluster": e.Cluster, "object": e.Key().Kind + " " + e.Namespace + "/" + e.Name}
	for i := 0; i+1 < len(extra); i += 2 {
		if k, ok := extra[i].(string); ok {
			fields[k] = extra[i+1]
		}
	}
	tflog.Debug(ctx, "engine: "+msg, fields)
}

func logCluster(ctx context.Context, msg string, owner Owner, cluster string, extra ...any) {
	fields := map[string]any{"owner": owner.String(), "cluster": cluster}
	for i := 0; i+1 < len(extra); i += 2 {
		if k, ok := extra[i].(string); ok {
			fields[k] = extra[i+1]
		}
	}
	tflog.Debug(ctx, "engine: "+msg, fields)
}

// logProgress reports at INFO what an apply does in one cluster, when it
// starts there and when it is done, so that `TF_LOG=INFO` shows a long
// apply's progress cluster by cluster (a cluster that is slow or down is
// the one with a start and no end yet).
func logProgress(ctx context.Context, msg string, owner Owner, cluster string, extra ...any) {
	fields := map[string]any{"owner": owner.String(), "cluster": cluster}
	for i := 0; i+1 < len(extra); i += 2 {
		if k, ok := extra[i].(string); ok {
			fields[k] = extra[i+1]
		}
	}
	tflog.Info(ctx, "engine: "+msg, fields)
}
