// Package metricscompat exports Sluice's metrics under OpenMed's family names and labels too,
// so that dashboards and alerts written for OpenMed's service keep working after the switch.
// The families are computed at each scrape from Sluice's own (the same observations, not a
// second count), so the two never disagree.
//
// # How to use it
//
//	compat := prometheus.NewRegistry()
//	compat.MustRegister(metricscompat.OpenMed(reg, resident)) // reg: where Sluice's metrics are
//	gatherer := prometheus.Gatherers{reg, compat}    // serve this on /metrics
//
// The collector reads reg when scraped, so it must not be registered on reg itself.
//
// # The families
//
//	openmed_service_request_total{route,status_code}       sluice_http_requests_total, every outcome
//	openmed_service_request_duration_seconds{route}        sluice_http_request_duration_seconds at OpenMed's bounds
//	openmed_service_inflight_requests                      sluice_http_inflight_requests
//	openmed_service_batch_queue_depth{priority}            sluice_batcher_queue_depth, every queue
//	openmed_service_batch_queue_wait_seconds{priority}     sluice_batcher_queue_wait_seconds, every queue (Sluice's bounds)
//	openmed_service_batch_shed_total{priority}             sluice_admission_shed_total{reason="saturated"}
//	openmed_service_admission_queue_depth{queue}           sluice_admission_queue_depth
//	openmed_service_admission_queue_shedding{queue}        sluice_admission_shedding
//	openmed_service_admission_queue_wait_seconds{queue}    mean of sluice_batcher_queue_wait_seconds (OpenMed: the latest wait)
//	openmed_service_admission_shed_total{queue}            sluice_admission_shed_total{reason=~"high_watermark|max_wait"}
//	openmed_service_model_resident_total, _resident_bytes  models resident and their footprints
//	openmed_service_model_load_total, _eviction_total      models loaded on demand, and unloaded
//	openmed_service_circuit_breaker_closed, _open, _half_open   sluice_circuit_breakers by state
//
// Routes that matched nothing ("unmatched", "unrouted" in Sluice) are OpenMed's "unknown".
package metricscompat
