package main

import (
	"strings"
	"testing"
)

func TestConfigDefaults(t *testing.T) {
	cfg, err := LoadConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != ":8080" || cfg.BatchMaxQueueSize != 256 || cfg.AnalyzeModel != "clinical-ner" || cfg.PIIModel != "pii" {
		t.Fatalf("unexpected defaults: %+v", cfg)
	}
	if cfg.ModelAliases["disease_detection_superclinical"] != "clinical-ner" {
		t.Fatalf("OpenMed default model alias missing: %v", cfg.ModelAliases)
	}
}

func TestConfigOpenMedAliasesApplyOnlyWhenOursIsUnset(t *testing.T) {
	cfg, err := LoadConfig([]string{"OPENMED_SERVICE_BATCH_MAX_SIZE=12", "OPENMED_SERVICE_BATCH_MAX_QUEUE_SIZE=99", "SLUICE_BATCH_MAX_QUEUE_SIZE=7"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BatchMaxSize != 12 {
		t.Fatalf("OpenMed alias ignored: BatchMaxSize = %d", cfg.BatchMaxSize)
	}
	if cfg.BatchMaxQueueSize != 7 {
		t.Fatalf("SLUICE_ value must win over the alias: %d", cfg.BatchMaxQueueSize)
	}
}

func TestConfigNamesEveryBadVariable(t *testing.T) {
	_, err := LoadConfig([]string{"SLUICE_BATCH_MAX_SIZE=zero", "SLUICE_DEVICE=tpu", "SLUICE_BATCH_WORKERS=0", "SLUICE_LOG_LEVEL=loud",
		"SLUICE_RETRY_RESERVE=1.5"})
	if err == nil {
		t.Fatal("bad configuration accepted")
	}
	for _, name := range []string{"SLUICE_BATCH_MAX_SIZE", "SLUICE_DEVICE", "SLUICE_BATCH_WORKERS", "SLUICE_LOG_LEVEL", "SLUICE_RETRY_RESERVE"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s:\n%v", name, err)
		}
	}
}
