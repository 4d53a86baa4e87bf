//go:build race

package grpcserve

// raceDetector: the race detector's sync.Pool drops a quarter of what is put back, so
// encoding/json's buffers are allocated again at random and allocation counts are not the code's.
const raceDetector = true
