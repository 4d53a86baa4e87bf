//go:build !race

package grpcserve

const raceDetector = false
