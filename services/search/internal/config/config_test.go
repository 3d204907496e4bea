package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/envconf"
	"github.com/kgsearch/kgsearch/services/search/internal/pipeline"
)

func fromEnv(t *testing.T, env map[string]string) (Config, error) {
	t.Helper()
	base := map[string]string{"KGS_EMBED_MODEL_DIR": "/models/x", "KGS_ORT_LIB": "/lib/ort.so"}
	for k, v := range env {
		base[k] = v
	}
	return FromEnv(envconf.FromMap(base))
}

func TestDefaultsAreValid(t *testing.T) {
	c, err := fromEnv(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if c.Addr != "127.0.0.1:8080" || c.Deadline != 3*time.Second || c.SyncInterval != time.Second ||
		c.IndexDir != ".state/search/bleve" || c.Candidates != 100 {
		t.Errorf("defaults: got %+v", c)
	}
}

func TestEnvOverrides(t *testing.T) {
	c, err := fromEnv(t, map[string]string{"SEARCH_ADDR": "0.0.0.0:9000", "SEARCH_DEADLINE": "2s",
		"SEARCH_CANDIDATES": "60", "SEARCH_INDEX_DIR": "/tmp/ix", "KGS_API_KEYS": "0123456789abcdef0123"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "0.0.0.0:9000" || c.Deadline != 2*time.Second || c.Candidates != 60 || c.IndexDir != "/tmp/ix" || len(c.APIKeys) != 1 {
		t.Errorf("got %+v", c)
	}
}

func TestValidateNamesTheField(t *testing.T) {
	tests := []struct {
		env   map[string]string
		field string
	}{
		{map[string]string{"SEARCH_ADDR": "8080"}, "SEARCH_ADDR"},
		{map[string]string{"KGS_KG_URL": "ftp://x"}, "KGS_KG_URL"},
		{map[string]string{"SEARCH_DEADLINE": "1ms"}, "SEARCH_DEADLINE"},
		{map[string]string{"SEARCH_GRAPH_TIMEOUT": "4s"}, "SEARCH_GRAPH_TIMEOUT"},
		{map[string]string{"SEARCH_MAX_INFLIGHT": "0"}, "SEARCH_MAX_INFLIGHT"},
		{map[string]string{"SEARCH_QUERY_CACHE": "-5"}, "SEARCH_QUERY_CACHE"},
		{map[string]string{"SEARCH_QUEUE": "-1"}, "SEARCH_QUEUE"},
		{map[string]string{"SEARCH_QUEUE_WAIT": "0s"}, "SEARCH_QUEUE_WAIT"},
		{map[string]string{"SEARCH_CANDIDATES": "5"}, "SEARCH_CANDIDATES"},
		{map[string]string{"SEARCH_SYNC_INTERVAL": "1ms"}, "SEARCH_SYNC_INTERVAL"},
		{map[string]string{"SEARCH_EXPAND_MIN_CONFIDENCE": "1.5"}, "SEARCH_EXPAND_MIN_CONFIDENCE"},
		{map[string]string{"SEARCH_RELATED_MIN_CONFIDENCE": "1"}, "SEARCH_RELATED_MIN_CONFIDENCE"},
		{map[string]string{"SEARCH_RELATED_MIN_CONFIDENCE": "-0.5"}, "SEARCH_RELATED_MIN_CONFIDENCE"},
		{map[string]string{"SEARCH_SUGGEST_MIN_CONFIDENCE": "2"}, "SEARCH_SUGGEST_MIN_CONFIDENCE"},
		{map[string]string{"SEARCH_PREVIEW_CHARS": "10"}, "SEARCH_PREVIEW_CHARS"},
		{map[string]string{"KGS_API_KEYS": "short"}, "KGS_API_KEYS"},
		{map[string]string{"SEARCH_GAZETTEER_REFRESH": "10ms"}, "SEARCH_GAZETTEER_REFRESH"},
		// kg lists at most 1000 entities per request and refuses more with 400.
		{map[string]string{"SEARCH_GAZETTEER_LIMIT": "5000"}, "SEARCH_GAZETTEER_LIMIT"},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			c, err := fromEnv(t, tt.env)
			if err == nil {
				err = c.Validate()
			}
			if err == nil || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("got %v, want an error naming %s", err, tt.field)
			}
		})
	}
	// Empty variables mean the default, so empty fields can only come from code.
	c, _ := fromEnv(t, nil)
	c.MariaDBDSN, c.IndexDir = "", ""
	err := c.Validate()
	for _, f := range []string{"KGS_MARIADB_DSN", "SEARCH_INDEX_DIR"} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("empty field: got %v, want an error naming %s", err, f)
		}
	}
	// Malformed values are reported by FromEnv.
	if _, err := fromEnv(t, map[string]string{"SEARCH_DEADLINE": "soon"}); err == nil || !strings.Contains(err.Error(), "SEARCH_DEADLINE") {
		t.Errorf("malformed duration: got %v", err)
	}
}

func TestDefaultPipelineOptionsAreThePipelines(t *testing.T) {
	got := Default().PipelineOptions()
	want := pipeline.DefaultOptions()
	// not configurable: the pipeline's defaults apply
	want.ExpandHops, want.BreakerFailures, want.BreakerCooldown = 0, 0, 0
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Default().PipelineOptions() differs from the pipeline's defaults (-want +got):\n%s", diff)
	}
}

func TestConfidenceCuts(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want float64
	}{{"0", -1}, {"0.5", 0.5}} {
		c, err := fromEnv(t, map[string]string{"SEARCH_RELATED_MIN_CONFIDENCE": tc.env})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.PipelineOptions().RelatedMinConfidence; got != tc.want {
			t.Errorf("SEARCH_RELATED_MIN_CONFIDENCE=%s: the pipeline's option is %g, want %g (0 shows every entity the rules keep)", tc.env, got, tc.want)
		}
		c, err = fromEnv(t, map[string]string{"SEARCH_SUGGEST_MIN_CONFIDENCE": tc.env})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.PipelineOptions().SuggestMinConfidence; got != tc.want {
			t.Errorf("SEARCH_SUGGEST_MIN_CONFIDENCE=%s: the pipeline's option is %g, want %g", tc.env, got, tc.want)
		}
	}
}
