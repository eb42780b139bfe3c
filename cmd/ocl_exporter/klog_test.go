package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/prometheus/common/promslog"
	"k8s.io/klog/v2"
)

func TestKlogFollowsLogFlags(t *testing.T) {
	o, err := parseFlags([]string{"--example", "--log.format=json", "--log.level=warn"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	o.log.Writer = &out
	routeKlog(promslog.New(o.log))
	defer klog.ClearLogger()

	klog.InfoS("below the level")
	klog.ErrorS(nil, "Failed to watch", "reflector", "k8s.io/client-go/informers")
	klog.Flush()

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("want only the error, as one JSON line; got\n%s", out.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatalf("not JSON (--log.format=json): %v: %s", err, lines[0])
	}
	if rec["msg"] != "Failed to watch" || rec["level"] != "ERROR" || rec["logger"] != "client-go" {
		t.Errorf("record %v", rec)
	}
}
